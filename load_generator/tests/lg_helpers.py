"""Helpers and fixtures for the load generator tests (conftest.py exports the
fixtures).

The binaries come from the build tree named by PANDA_BUILD_DIR (tests/run.sh
sets it); without it, from <repo>/_build.
Servers are started on loopback on free ports and
stopped by PID.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
LG_DIR = os.path.dirname(HERE)
TOP = os.path.dirname(LG_DIR)
CDF_DIR = os.path.join(LG_DIR, "cdf")
PROGRAMS = ("panda-fg-server", "panda-fg-client", "panda-mc-client")


def _find_build_dir():
    env = os.environ.get("PANDA_BUILD_DIR")
    if env:
        return env, True
    for d in (os.path.join(TOP, "_build"),):
        if os.path.exists(os.path.join(d, "load_generator", PROGRAMS[0])):
            return d, False
    return None, False


class Binaries:
    def __init__(self, build):
        self.build = build
        for p in PROGRAMS:
            setattr(self, p.replace("panda-", "").replace("-", "_"),
                    os.path.join(build, "load_generator", p))


@pytest.fixture(scope="session")
def lg_bin():
    build, explicit = _find_build_dir()
    if build is None:
        pytest.skip("load generator not built: set PANDA_BUILD_DIR to a "
                    "build tree or run ./build.sh")
    b = Binaries(build)
    missing = [p for p in PROGRAMS
               if not os.access(os.path.join(build, "load_generator", p),
                                os.X_OK)]
    if missing:
        msg = "%s: missing %s (run make)" % (build, ", ".join(missing))
        if explicit:
            pytest.fail(msg)
        pytest.skip(msg)
    return b


def cdf(name):
    return os.path.join(CDF_DIR, name)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port_file(path, proc, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                text = f.read().strip()
            if text:
                return int(text)
        if proc.poll() is not None:
            raise RuntimeError("server exited early with %s: %s"
                               % (proc.returncode, proc.stderr.read()))
        time.sleep(0.02)
    raise RuntimeError("server did not write %s" % path)


def wait_tcp(host, port, proc, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited early with %s"
                               % proc.returncode)
        try:
            socket.create_connection((host, port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nothing listening on %s:%d" % (host, port))


def stop(proc, sig=signal.SIGTERM, timeout=10):
    """Stops a process we started, by PID."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class FgServer:
    """A panda-fg-server on loopback with a free port."""

    def __init__(self, lg_bin, tmp_path, prefix=(), bind="127.0.0.1",
                 extra=()):
        self.tmp = tmp_path
        self.port_file = str(tmp_path / ("fgs-port-%d" % id(self)))
        self.json = str(tmp_path / ("fgs-%d.json" % id(self)))
        self.proc = subprocess.Popen(
            list(prefix) + [lg_bin.fg_server, "--bind", bind, "--port", "0",
                            "--port-file", self.port_file, "--json",
                            self.json, "--quiet"] + list(extra),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.port = wait_port_file(self.port_file, self.proc)

    def stop(self):
        stop(self.proc)
        with open(self.json) as f:
            return json.load(f)

    def kill(self):
        stop(self.proc, signal.SIGKILL)


@pytest.fixture
def fg_server(lg_bin, tmp_path):
    servers = []

    def start(**kw):
        s = FgServer(lg_bin, tmp_path, **kw)
        servers.append(s)
        return s

    yield start
    for s in servers:
        stop(s.proc, signal.SIGKILL)


def memcached_path():
    return shutil.which("memcached") or "/usr/bin/memcached"


@pytest.fixture
def memcached():
    """A memcached on 127.0.0.1 on a free port; yields (proc, port)."""
    path = memcached_path()
    if not os.access(path, os.X_OK):
        pytest.skip("memcached not installed (./install-deps.sh)")
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen([path, "-l", "127.0.0.1", "-p", str(port),
                                 "-U", "0", "-u", "nobody", "-m", "64"],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            wait_tcp("127.0.0.1", port, proc, timeout=5)
            break
        except RuntimeError:
            stop(proc, signal.SIGKILL)
    else:
        pytest.fail("could not start memcached")
    yield proc, port
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGCONT)
        except OSError:
            pass
    stop(proc, signal.SIGKILL)


def run(cmd, timeout=120, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, **kw)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def read_flows(path):
    """Parses a panda-fg-client --output file into dicts."""
    flows = []
    with open(path) as f:
        header = f.readline()
        assert header.startswith("# id size_bytes start_s end_s fct_us")
        for line in f:
            fid, size, start, end, fct, recv, done, note = line.split()
            flows.append({
                "id": int(fid), "size": int(size), "start": float(start),
                "end": None if end == "-" else float(end),
                "fct": None if fct == "-" else float(fct),
                "received": int(recv), "completed": done == "1",
                "note": note})
    return flows


def nearest_rank(values, p):
    """Reference percentile: the nearest-rank definition the tools use."""
    import math
    v = sorted(values)
    if not v:
        return None
    if p <= 0:
        return v[0]
    rank = max(1, math.ceil(p * len(v) / 100.0 - 1e-9))
    return v[min(rank, len(v)) - 1]


def wait_output(stream, text, timeout=30):
    """Reads from a subprocess pipe until 'text' appears (works with the
    '\\r'-terminated progress line); returns what was read."""
    import select
    fd = stream.fileno()
    got = b""
    deadline = time.time() + timeout
    while text.encode() not in got:
        left = deadline - time.time()
        if left <= 0:
            raise RuntimeError("no %r in %r" % (text, got))
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError("EOF before %r in %r" % (text, got))
            got += chunk
    return got.decode(errors="replace")

"""pytest bootstrap and fixtures shared by every test (tests/*/).

The one place that puts python/ on sys.path (everything else runs the
packages through their launchers or 'python3 -m pandaovs.X' / 'pandalab.X'
with PYTHONPATH), so the tests import pandaovs (the product) and pandalab
(the lab) as the code does.  The build tree is
pandaovs.paths' ($PANDA_BUILD_DIR, which tests/run.sh sets, else
<repo>/_build).

Fixtures: build (a paths.BuildTree), ovs_ready (skips a test that runs a
sandboxed OVS without root or without the built ovs-vswitchd), testbed_run (runs testbed/run.py,
skipped without root or a complete build), panda_sim (the ns-3 simulator's
program), lg_bin (the load generator's programs), fg_server (starts
panda-fg-servers on loopback), memcached (one
on a free loopback port), free_port; policy_vector (each block of
tests/vectors/policies.txt).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

TOP = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(TOP, "python"))

from pandaovs import paths  # noqa: E402
from pandalab.loadgen import FgServer  # noqa: E402
from pandalab.sandbox import end_process  # noqa: E402


@pytest.fixture(scope="session")
def build():
    b = paths.BuildTree()
    if not os.path.isdir(b.root):
        pytest.skip("build tree %s not found (run ./build.sh)" % b.root)
    return b


@pytest.fixture(scope="session")
def ovs_ready(build):
    """For tests that run a sandboxed OVS in a network namespace: skipped
    without root or without the built ovs-vswitchd.  Use as
    pytestmark = pytest.mark.usefixtures("ovs_ready")."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, OVS)")
    if not build.has("ovs/build/vswitchd/ovs-vswitchd"):
        pytest.skip("no OVS build at %s (set PANDA_BUILD_DIR or run "
                    "./build.sh)" % build.root)
    return build


TESTBED_NEEDS = ("ovs/build/vswitchd/ovs-vswitchd",
                 "load_generator/panda-mc-client",
                 "load_generator/panda-fg-client", "tools/panda-model")


@pytest.fixture(scope="session")
def testbed_run(build):
    """run(out_dir, run_id, *args, script="run.py"): testbed/run.py (the
    README's command; or testbed/'script') with 'args' on this build, results in out_dir/run_id; returns
    (CompletedProcess, result.json, run directory).  Skipped without root
    (namespaces, OVS) or without the programs the testbed needs."""
    if os.geteuid() != 0:
        pytest.skip("the testbed needs root (network namespaces and OVS); "
                    "run as root")
    missing = build.missing(TESTBED_NEEDS)
    if missing:
        pytest.skip("no complete build in %s (set PANDA_BUILD_DIR; missing "
                    "%s)" % (build.root, ", ".join(missing)))

    def run(out, run_id, *args, script="run.py"):
        res = subprocess.run(
            [paths.PY, os.path.join(paths.TOP, "testbed", script),
             "--out", str(out), "--run-id", run_id, "--build-dir",
             build.root, "--no-plots"] + list(args),
            capture_output=True, text=True, timeout=1800)
        sys.stdout.write(res.stdout[-4000:])
        path = os.path.join(str(out), run_id, "result.json")
        assert os.path.exists(path), \
            "no result.json; stderr: %s" % res.stderr[-2000:]
        with open(path) as f:
            return res, json.load(f), os.path.join(str(out), run_id)
    return run


@pytest.fixture(scope="session")
def panda_sim(build):
    """Path of sim/panda-sim.  Skipped with configure's reason when the
    build has no simulator (ns-3 absent); a failure when configure found
    ns-3 but the program is missing and the tree was named explicitly."""
    why, expected = build.sim_missing()
    if why:
        if expected and os.environ.get("PANDA_BUILD_DIR"):
            pytest.fail(why)
        pytest.skip(why)
    return build.path(build.SIM)


class LoadgenPrograms:
    """Paths of panda-fg-server, panda-fg-client, panda-mc-client."""

    def __init__(self, build):
        self.build = build
        self.fg_server = build.path("load_generator/panda-fg-server")
        self.fg_client = build.path("load_generator/panda-fg-client")
        self.mc_client = build.path("load_generator/panda-mc-client")


@pytest.fixture(scope="session")
def lg_bin():
    b = paths.BuildTree()
    missing = b.missing(["load_generator/" + p
                         for p in paths.BuildTree.LOADGEN])
    if missing:
        msg = "%s: missing %s (run ./build.sh)" % (b.root,
                                                    ", ".join(missing))
        # A build tree named explicitly must be complete.
        if os.environ.get("PANDA_BUILD_DIR"):
            pytest.fail(msg)
        pytest.skip(msg)
    return LoadgenPrograms(b)


@pytest.fixture
def fg_server(lg_bin, tmp_path):
    """fg_server(host=None, bind="127.0.0.1", **options) starts a
    panda-fg-server on a free port (pandalab.loadgen.FgServer); all are
    killed at the end of the test."""
    servers = []

    def start(host=None, bind="127.0.0.1", **opts):
        s = FgServer(lg_bin.build, str(tmp_path), host=host, bind=bind,
                     tag="fg-server-%d" % len(servers), quiet=True, **opts)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.kill()


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def free_port():
    """free_port() -> a TCP port nothing listens on (on loopback)."""
    return _free_port


def _wait_tcp(port, proc, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("memcached exited early with %s"
                               % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nothing listening on 127.0.0.1:%d" % port)


@pytest.fixture
def memcached():
    """A memcached on 127.0.0.1 on a free port; yields (proc, port)."""
    path = shutil.which("memcached") or "/usr/bin/memcached"
    if not os.access(path, os.X_OK):
        pytest.skip("memcached not installed (./install-deps.sh)")
    for _ in range(5):
        port = _free_port()
        proc = subprocess.Popen([path, "-l", "127.0.0.1", "-p", str(port),
                                 "-U", "0", "-u", "nobody", "-m", "64"],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            _wait_tcp(port, proc)
            break
        except RuntimeError:
            end_process(proc, signal.SIGKILL)
    else:
        pytest.fail("could not start memcached")
    yield proc, port
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGCONT)
        except OSError:
            pass
    end_process(proc, signal.SIGKILL)


# -- policy test vectors (tests/vectors/policies.txt) -------------------------
VECTORS = os.path.join(TOP, "tests", "vectors", "policies.txt")


def read_policy_vectors(path=VECTORS):
    """The blocks of the vectors file as dicts with some of text,
    canonical, wire (bytes), error; each with "line" (where it starts)."""
    blocks, cur = [], None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                cur = None
                continue
            key, sep, value = line.partition(":")
            if not sep or key not in ("text", "canonical", "wire", "error"):
                raise ValueError("%s:%d: not KEY: VALUE" % (path, n))
            if cur is None:
                cur = {"line": n}
                blocks.append(cur)
            value = value[1:] if value.startswith(" ") else value
            cur[key] = bytes.fromhex(value) if key == "wire" else value
    for b in blocks:
        keys = set(b) - {"line"}
        if keys not in ({"text", "canonical", "wire"}, {"text", "error"},
                        {"wire", "error"}):
            raise ValueError("%s:%d: a block has text+canonical+wire, "
                             "text+error or wire+error" % (path, b["line"]))
    return blocks


def pytest_generate_tests(metafunc):
    """A test taking 'policy_vector' runs once per block of the file."""
    if "policy_vector" in metafunc.fixturenames:
        blocks = read_policy_vectors()
        metafunc.parametrize("policy_vector", blocks,
                             ids=["line%d" % b["line"] for b in blocks])

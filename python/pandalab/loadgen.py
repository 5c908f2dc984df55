"""The load generator's programs (load_generator/, in C) from Python: the
only traffic source of the testbed, the QoS lab, the benchmarks and the
system tests.

    panda-fg-server   answers each flow request with N bytes
    panda-fg-client   web-search (or fixed-size) flows, FCT per flow and per
                      size bucket, closed or open loop
    panda-mc-client   GETs against a real memcached, latency percentiles

The programs compute every figure (FCT buckets and their limits,
percentiles, windows) and write it to their --json summary; Python only
starts them, stops them by pid and reads that JSON (load_generator/README.md
documents the keys).  Options are passed as keyword arguments:
connections=14 becomes --connections 14, quiet=True --quiet, None is left
out.

Each program runs locally or, given a 'host' (a sandbox.Netns), inside that
network namespace.
"""

import json
import os
import signal
import subprocess
import time

from pandaovs import paths
from .sandbox import end_process

WEB_SEARCH_CDF = paths.cdf("web-search.cdf")
MEMCACHED_CDF = paths.cdf("memcached-values.cdf")


class LoadgenError(RuntimeError):
    pass


def options(**opts):
    """--long-option arguments: key_name=v -> --key-name v; True -> flag;
    None and False -> nothing."""
    out = []
    for k, v in opts.items():
        if v is None or v is False:
            continue
        out.append("--" + k.replace("_", "-"))
        if v is not True:
            out.append(str(v))
    return out


def _argv(host, argv):
    return host.cmd(*argv) if host is not None else [str(a) for a in argv]


def read_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise LoadgenError("%s: no usable JSON summary in %s (%s)"
                           % (what, path, e))


def tail(path, n=400):
    """The end of a program's stderr file, for error messages."""
    try:
        with open(path) as f:
            return f.read()[-n:].strip()
    except OSError:
        return ""


class Client:
    """A started panda-fg-client or panda-mc-client writing --json to
    'json_path' and its stderr to 'err_path'."""

    def __init__(self, name, proc, json_path, err_path):
        self.name = name
        self.proc = proc
        self.json_path = json_path
        self.err_path = err_path

    def poll(self):
        return self.proc.poll()

    @property
    def returncode(self):
        return self.proc.returncode

    def error_tail(self):
        return tail(self.err_path)

    def wait(self, timeout=None):
        """Waits for the program to end; returns its exit status."""
        return self.proc.wait(timeout=timeout)

    def interrupt(self, timeout=30):
        """SIGINT (the programs then report what is in flight as
        'interrupted' and still write their outputs) and wait."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                end_process(self.proc, signal.SIGKILL)
                raise LoadgenError("%s ignored SIGINT" % self.name)
        return self.proc.returncode

    def result(self):
        """The --json summary (after the program ended)."""
        return read_json(self.json_path, self.name)

    def stop(self):
        end_process(self.proc, signal.SIGINT)


def _start_client(build, name, host, workdir, tag, server, port, opts):
    js = os.path.join(workdir, "%s.json" % tag)
    err = os.path.join(workdir, "%s.err" % tag)
    argv = [build.loadgen(name), "--server", server, "--port", port,
            "--json", js] + options(**opts)
    with open(err, "w") as errf:
        proc = subprocess.Popen(_argv(host, argv), stdout=subprocess.DEVNULL,
                                stderr=errf)
    return Client(name, proc, js, err)


def start_fg_client(build, server, port, workdir, host=None, tag="fg",
                    **opts):
    """Starts panda-fg-client towards server:port with 'opts' (cdf, size,
    concurrency, duration, output, fct_window, ...); summary in
    WORKDIR/TAG.json."""
    return _start_client(build, "panda-fg-client", host, workdir, tag,
                         server, port, opts)


def start_mc_client(build, server, port, workdir, host=None, tag="mc",
                    **opts):
    """Starts panda-mc-client against memcached at server:port."""
    return _start_client(build, "panda-mc-client", host, workdir, tag,
                         server, port, opts)


def run_mc_client(build, server, port, workdir, host=None, tag="mc",
                  timeout=None, **opts):
    """Runs panda-mc-client to its end; returns (exit status, summary)."""
    c = start_mc_client(build, server, port, workdir, host, tag, **opts)
    try:
        rc = c.wait(timeout)
    except subprocess.TimeoutExpired:
        c.stop()
        raise LoadgenError("panda-mc-client did not finish within %s s"
                           % timeout)
    if not os.path.exists(c.json_path):
        raise LoadgenError("panda-mc-client failed (status %d): %s"
                           % (rc, c.error_tail()))
    return rc, c.result()


class FgServer:
    """panda-fg-server, on a free port unless 'port' is given.  The port is
    known once the server has written its --port-file (so it listens)."""

    def __init__(self, build, workdir, host=None, bind="127.0.0.1", port=0,
                 tag="fg-server", timeout=30, **opts):
        self.port_file = os.path.join(workdir, "%s.port" % tag)
        self.json_path = os.path.join(workdir, "%s.json" % tag)
        for p in (self.port_file, self.json_path):
            if os.path.exists(p):
                os.unlink(p)
        argv = [build.loadgen("panda-fg-server"), "--bind", bind,
                "--port", port, "--port-file", self.port_file,
                "--json", self.json_path] + options(**opts)
        self.proc = subprocess.Popen(_argv(host, argv),
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        try:
            self.port = self._wait_port(timeout)
        except BaseException:
            end_process(self.proc, signal.SIGKILL)
            raise

    def _wait_port(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LoadgenError("panda-fg-server exited (status %d): %s"
                                   % (self.proc.returncode,
                                      self.proc.stderr.read().strip()))
            try:
                with open(self.port_file) as f:
                    text = f.read().strip()
                if text:
                    return int(text)
            except OSError:
                pass
            time.sleep(0.02)
        raise LoadgenError("panda-fg-server wrote no port file within %g s"
                           % timeout)

    def poll(self):
        return self.proc.poll()

    def stop(self):
        """Ends the server (SIGTERM) and returns its --json counters."""
        end_process(self.proc)
        return read_json(self.json_path, "panda-fg-server")

    def kill(self):
        end_process(self.proc, signal.SIGKILL)

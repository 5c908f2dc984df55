"""iperf3 (the Debian package iperf3) inside a lab's network namespaces:
long-lived TCP streams as background load, and the reference the load
generator's goodput is checked against.

iperf3 is what operators reach for first, which is why the testbed uses it
as the cross-check of its own generator: both move data from PM2 to PM1
through the same bottleneck, and each reports its goodput.  The streams
run in reverse mode (-R): the client in PM1 opens the connections, as
panda-fg-client does, and the server in PM2 sends the data, as
panda-fg-server does, so they take the flows' path and the same side
negotiates ECN.

Every process is started here and ended by its pid.  iperf3 is looked up
at run time (unavailable()); a missing one is reported, never faked."""

import json
import os
import shutil
import signal
import subprocess

from .lab import wait_until
from .sandbox import end_process

PORT = 5201
MISSING = ("iperf3 not found on PATH: install the Debian package iperf3 "
           "(./install-deps.sh does)")


class Iperf3Error(RuntimeError):
    pass


def unavailable():
    """None if iperf3 can run here, else why not (one sentence)."""
    return None if shutil.which("iperf3") else MISSING


def summary(doc):
    """An iperf3 client's --json output (reverse mode) -> {goodput_mbps,
    bytes, seconds, streams, retransmits, interrupted}: what the client
    received, i.e. the goodput of the streams.  An interrupted client
    (SIGINT: the background streams) still reports everything up to then
    ("error" says so)."""
    end = doc.get("end") or {}
    rx = end.get("sum_received") or {}
    tx = end.get("sum_sent") or {}
    err = doc.get("error")
    out = {"goodput_mbps": (rx["bits_per_second"] / 1e6
                            if rx.get("bits_per_second") is not None
                            else None),
           "bytes": rx.get("bytes"), "seconds": rx.get("seconds"),
           "streams": len(end.get("streams") or []),
           "retransmits": tx.get("retransmits"),
           "interrupted": bool(err and "interrupt" in err)}
    if err and not out["interrupted"]:
        out["error"] = err
    return out


class Streams:
    """N long-lived TCP streams from 'server_host' (which sends) to
    'client_host' (which opens them): an iperf3 server for one test in
    server_host, a client with -R -P N in client_host.  'seconds' None:
    until stop().  'spawn(name, host, *cmd, **kw)' starts a process (a
    Lab's, so that Lab.stop() ends whatever is left)."""

    def __init__(self, spawn, server_host, client_host, streams, workdir,
                 seconds=None, port=PORT, tag="iperf3", timeout=30):
        if streams < 1:
            raise Iperf3Error("iperf3: at least one stream")
        why = unavailable()
        if why:
            raise Iperf3Error(why)
        self.json_path = os.path.join(workdir, "%s.json" % tag)
        self.err_path = os.path.join(workdir, "%s.err" % tag)
        self.server = spawn("iperf3-server", server_host, "iperf3", "-s",
                            "-1", "-B", server_host.ip, "-p", str(port),
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
        self.client = None
        try:
            wait_until(lambda: self._listening(server_host, port), timeout,
                       "iperf3's server on port %d in %s"
                       % (port, server_host.name))
            with open(self.json_path, "w") as out, \
                    open(self.err_path, "w") as err:
                # -t 0 is "forever" only in newer iperf3s; a day is
                # longer than any trial, and stop() ends it sooner.
                self.client = spawn(
                    "iperf3-client", client_host, "iperf3", "-c",
                    server_host.ip, "-p", str(port), "-R", "-P",
                    str(streams), "-t", "%d" % (seconds or 86400), "-J",
                    stdout=out, stderr=err)
        except BaseException:
            self.kill()
            raise

    def _listening(self, host, port):
        if self.server.poll() is not None:
            raise Iperf3Error("iperf3 server exited (status %d): %s" % (
                self.server.returncode, self.server.stderr.read().strip()))
        return host.run("ss", "-Hltn", "sport", "= :%d" % port).strip()

    def poll(self):
        return self.client.poll()

    def wait(self, timeout):
        """Waits for a client with a duration to finish; its summary."""
        try:
            self.client.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Iperf3Error("iperf3 client did not finish within %g s"
                              % timeout)
        return self.result()

    def stop(self):
        """Interrupts the client (it still writes its JSON) and ends the
        server; returns the summary."""
        end_process(self.client, signal.SIGINT, timeout=15)
        end_process(self.server)
        return self.result()

    def kill(self):
        for p in (self.client, self.server):
            if p is not None:
                end_process(p, signal.SIGKILL)

    def result(self):
        end_process(self.server)
        try:
            with open(self.json_path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            with open(self.err_path) as f:
                err = f.read().strip()
            raise Iperf3Error("iperf3 client wrote no JSON (%s)%s" % (
                e, ": " + err[-300:] if err else ""))
        return summary(doc)

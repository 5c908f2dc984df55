"""The priority event loop (load_generator/lg-evloop.h) through
panda-adp-server, and quick versions of ADPS's experiments
(pandalab.adps; bench/adps-experiments.py runs the full ones).

The assertions are about order, never about how fast this machine is:
which responses come first when requests wait together, which mode's
latency-sensitive requests fare better (medians and p90s of a structural
gap of 10x or more, not thresholds), and the server's counters."""

import json
import os
import select
import socket
import struct
import subprocess
import tempfile
import time

import pytest

from pandalab import adps
from pandalab.sandbox import end_process

from lg_helpers import wait_output

MATCH_LATS = "id=1,kind=match,match=LATS:0,levels=2"


def req(kind, work_us, rid):
    return struct.pack("!4sIQ", kind.encode(), work_us, rid)


class Server:
    def __init__(self, lg_bin, *args):
        self.dir = tempfile.TemporaryDirectory(prefix="adp-test-")
        port_file = os.path.join(self.dir.name, "port")
        self.json = os.path.join(self.dir.name, "server.json")
        self.proc = subprocess.Popen(
            [lg_bin.build.path("load_generator/panda-adp-server"),
             "--port-file", port_file, "--json", self.json] + list(args),
            stderr=subprocess.PIPE)
        # It writes the port file, then says it is listening.
        try:
            wait_output(self.proc.stderr, "listening on")
        except BaseException:
            end_process(self.proc)
            raise
        with open(port_file) as f:
            self.port = int(f.read())

    def stop(self):
        """Stops the server; returns its JSON counters."""
        end_process(self.proc)
        with open(self.json) as f:
            return json.load(f)


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def answer_order(socks, timeout=60):
    """The ids of the responses on 'socks', in the order they arrive."""
    order, left = [], set(socks)
    deadline = time.monotonic() + timeout
    while left and time.monotonic() < deadline:
        ready, _, _ = select.select(list(left), [], [], 1)
        for s in ready:
            data = s.recv(16)
            assert len(data) == 16
            order.append(struct.unpack("!4sIQ", data)[2])
            left.discard(s)
    return order


@pytest.mark.parametrize("order", ["priority", "fifo"])
def test_waiting_requests_dispatched_by_level(lg_bin, order):
    """While the loop is held by a 1 s request, five requests wait on five
    connections: with --order priority the two LATS go first; with fifo
    they keep their place.  (Should the loop see all six at once, the
    order of the five is the same: the blocker is the oldest BULK.)"""
    srv = Server(lg_bin, "--policy", MATCH_LATS, "--order", order,
                 "--work", "sleep")
    try:
        blocker = connect(srv.port)
        waiting = [connect(srv.port) for _ in range(5)]
        blocker.sendall(req("BULK", 1000000, 100))
        kinds = ["BULK", "BULK", "LATS", "BULK", "LATS"]
        for i, (s, k) in enumerate(zip(waiting, kinds)):
            s.sendall(req(k, 1000, i))
        got = answer_order(waiting)
        blocker.settimeout(60)
        assert len(blocker.recv(16)) == 16
    finally:
        stats = srv.stop()
    if order == "priority":
        assert got[:2] == [2, 4], got
        assert sorted(got[2:]) == [0, 1, 3]
        assert stats["overtakes"] == 2
    else:
        assert got == [0, 1, 2, 3, 4]
        assert stats["overtakes"] == 0
    assert stats["dispatched"][:2] == [2, 4]    # The blocker is BULK.


def quick(exp, modes, client):
    e = dict(exp)
    e["modes"] = {m: exp["modes"][m] for m in modes}
    e["client"] = client
    return adps.run_experiment(e, reps=1)


def lat(res, mode, kind, stat):
    return res["runs"][mode][0]["client"]["types"][kind]["latency_us"][stat]


def test_queueing_quick(lg_bin):
    """Experiment 1, scaled down (2 ms requests, 10% sensitive): priority
    serves LATS ahead of queued BULK, the ideal drops all BULK."""
    exp = dict(adps.QUEUEING)
    res = quick(exp, ["fifo", "priority", "ideal"],
                ["--mix", "LATS:10:2000,BULK:90:2000", "--burst", "20",
                 "--interval", "60ms", "--requests", "200",
                 "--connections", "32"])
    runs = {m: r[0] for m, r in res["runs"].items()}
    for m, r in runs.items():
        assert r["client"]["types"]["LATS"]["answered"] == \
            r["client"]["types"]["LATS"]["sent"] > 0, m
    # The ideal answers no BULK: every one was dropped as it arrived.
    bulk = runs["ideal"]["client"]["types"]["BULK"]
    assert bulk["answered"] == 0
    assert runs["ideal"]["server"]["dropped"][1] == bulk["sent"]
    assert runs["priority"]["server"]["overtakes"] > 0
    assert runs["fifo"]["server"]["overtakes"] == 0
    # In a burst of 20 x 2 ms a LATS request waits for about half the
    # burst under fifo, for one request or two under priority.
    assert lat(res, "priority", "LATS", "p50") < lat(res, "fifo", "LATS",
                                                     "p50")


def test_blocking_quick(lg_bin):
    """Experiment 2, scaled down (20 ms LONG requests that sleep, so that
    the gap does not depend on CPU speed): with a worker of their own, LONG
    requests hold no SHRT request back."""
    exp = dict(adps.BLOCKING, work="sleep")
    res = quick(exp, ["fifo", "priority+core", "optimum"],
                ["--mix", "SHRT:95:1,LONG:5:20000", "--rate", "200",
                 "--requests", "400", "--connections", "32"])
    runs = {m: r[0] for m, r in res["runs"].items()}
    long_answered = runs["priority+core"]["client"]["types"]["LONG"]
    assert runs["priority+core"]["server"]["offloaded"] == \
        long_answered["answered"] == long_answered["sent"] > 0
    assert runs["fifo"]["server"]["offloaded"] == 0
    assert runs["optimum"]["client"]["types"]["LONG"]["answered"] == 0
    # Under fifo about a fifth of the SHRT requests arrive while a LONG
    # one (20 ms) holds the loop.
    assert lat(res, "priority+core", "SHRT", "p90") < \
        lat(res, "fifo", "SHRT", "p90")


@pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO needs root")
def test_rt_prefix_runs_under_sched_fifo():
    """--rt: what run_mode() starts runs under SCHED_FIFO at the priority
    given; --nice alone leaves the policy alone."""
    out = subprocess.run(adps.sched_prefix(rt=7) + ["chrt", "-p", "0"],
                         capture_output=True, text=True, check=True).stdout
    assert "SCHED_FIFO" in out and "priority: 7" in out
    out = subprocess.run(adps.sched_prefix(nice=5) + ["chrt", "-p", "0"],
                         capture_output=True, text=True, check=True).stdout
    assert "SCHED_OTHER" in out


@pytest.mark.parametrize("args,msg", [
    (["--rt", "100"], "--rt: 100 is not a SCHED_FIFO priority"),
    (["--rt", "5", "--nice", "-3"], "--rt and --nice: choose one"),
])
def test_bench_refuses_bad_scheduling(args, msg):
    bench = os.path.join(os.path.dirname(__file__), "..", "..", "bench",
                         "adps-experiments.py")
    res = subprocess.run(["/usr/bin/python3", bench] + args,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and msg in res.stderr

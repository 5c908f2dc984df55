"""The load generator across two network namespaces joined by a veth pair
(client side "a" at 10.77.0.1, server side "b" at 10.77.0.2).  Needs
root."""
import os
import shutil
import signal
import subprocess
import time

import pytest

from pandalab.sandbox import Netns, end_process, run as sh

from lg_helpers import cdf, load_json, read_flows, run, wait_output

A_IP, B_IP = "10.77.0.1", "10.77.0.2"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="needs root to create network namespaces"),
    pytest.mark.skipif(shutil.which("ip") is None,
                       reason="iproute2 'ip' not installed"),
]


class Pair:
    """Namespaces a (client) and b (server) joined by veth va -- vb."""

    def __init__(self):
        tag = "%d" % os.getpid()
        self.va, self.vb = "lgv%sa" % tag, "lgv%sb" % tag
        self.a = self.b = None
        try:
            self.a = Netns("lg%sa" % tag)
            self.b = Netns("lg%sb" % tag)
            sh("ip", "-n", self.a.name, "link", "add", self.va, "type",
               "veth", "peer", "name", self.vb, "netns", self.b.name)
            for ns, dev, ip in ((self.a, self.va, A_IP),
                                (self.b, self.vb, B_IP)):
                ns.run("ip", "addr", "add", ip + "/24", "dev", dev)
                ns.run("ip", "link", "set", dev, "up")
            self.a.run("ping", "-c", "1", "-W", "5", B_IP)
        except BaseException:
            self.delete()
            raise

    def delete(self):
        for ns in (self.a, self.b):
            if ns is not None:
                ns.delete()


@pytest.fixture(scope="module")
def pair():
    p = Pair()
    yield p
    p.delete()


@pytest.fixture
def server_b(fg_server, pair):
    return lambda **kw: fg_server(host=pair.b, bind=B_IP, **kw)


@pytest.fixture
def memcached_b(pair, lg_bin, tmp_path):
    path = shutil.which("memcached") or "/usr/bin/memcached"
    if not os.access(path, os.X_OK):
        pytest.skip("memcached not installed (./install-deps.sh)")
    proc = pair.b.popen(path, "-l", B_IP, "-p", "11211", "-U", "0", "-u",
                        "nobody", stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not pair.b.run("ss", "-Hltn", "sport", "= :11211").strip():
        if proc.poll() is not None:
            raise RuntimeError("memcached exited: %s" % proc.stderr.read())
        assert time.monotonic() < deadline, "memcached does not listen"
        time.sleep(0.05)
    yield proc
    end_process(proc, signal.SIGKILL)


def fg_client(pair, lg_bin, *args):
    """panda-fg-client in namespace a."""
    return pair.a.cmd(lg_bin.fg_client, "--server", B_IP, *args)


def test_flows_across_namespaces(lg_bin, pair, server_b, tmp_path):
    s = server_b()
    out, js = tmp_path / "flows.txt", tmp_path / "sum.json"
    r = run(fg_client(pair, lg_bin, "--port", s.port, "--bind", A_IP,
                      "--cdf", cdf("web-search.cdf"), "--connections", 6,
                      "--requests", 120, "--output", out, "--json", js))
    assert r.returncode == 0, r.stderr
    j = load_json(js)
    assert j["flows_completed"] == 120 and j["max_in_flight"] == 6
    flows = read_flows(out)
    assert all(f["completed"] and f["fct"] > 0 for f in flows)
    info = s.stop()
    assert info["responses_completed"] == 120


def tos_by_direction(pcap, port):
    """{"c2s": {tos...}, "s2c": {tos...}} of the TCP packets in 'pcap'."""
    lines = sh("tcpdump", "-r", pcap, "-nn", "-v").splitlines()
    tos = {"c2s": set(), "s2c": set()}
    for head, addr in zip(lines, lines[1:]):
        if "tos 0x" not in head:
            continue
        t = head.split("tos ")[1].split(",")[0]
        if addr.strip().startswith("%s.%d >" % (B_IP, port)):
            tos["s2c"].add(t)
        elif addr.strip().startswith(A_IP):
            tos["c2s"].add(t)
    return tos


def test_dscp_on_the_wire(lg_bin, pair, server_b, tmp_path):
    """--dscp marks the client's packets and, through the request, the
    server's data packets."""
    if shutil.which("tcpdump") is None:
        pytest.skip("tcpdump not installed")
    s = server_b()
    pcap = str(tmp_path / "dscp.pcap")
    dump = pair.a.popen("tcpdump", "-i", pair.va, "-w", pcap, "-U", "-nn",
                        "tcp port %d" % s.port, stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE, text=True)
    try:
        # tcpdump says "listening on ..." once it captures.
        seen = []
        while not seen or ("listening on" not in seen[-1] and seen[-1]):
            seen.append(dump.stderr.readline())
        assert "listening on" in seen[-1], seen
        r = run(fg_client(pair, lg_bin, "--port", s.port, "--size", "100K",
                          "--connections", 2, "--requests", 4, "--dscp", 10))
        assert r.returncode == 0, r.stderr
        # Every packet was received; wait until tcpdump has written both
        # directions' (-U: packet-buffered), however slow the machine.
        deadline = time.monotonic() + 60
        while True:
            tos = tos_by_direction(pcap, s.port)
            if "0x28" in tos["c2s"] and "0x28" in tos["s2c"]:
                break
            assert time.monotonic() < deadline, tos
            time.sleep(0.1)
    finally:
        end_process(dump, signal.SIGINT)


def test_kill_server_across_namespaces(lg_bin, pair, server_b, tmp_path):
    s = server_b()
    js = tmp_path / "sum.json"
    client = subprocess.Popen(
        fg_client(pair, lg_bin, "--port", s.port, "--size", "500M",
                  "--connections", 3, "--requests", 30, "--json", js,
                  "--max-failures", 5, "--quiet", "--progress"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Three flows are in flight (closed loop: there are three until the
    # server goes away, however fast they complete).
    wait_output(client.stderr, "in flight")
    s.kill()
    assert client.wait(timeout=120) == 3       # incomplete
    j = load_json(js)
    assert j["flows_unfinished"] >= 3
    assert j["flows_completed"] + j["flows_unfinished"] == j["flows_started"]


def test_memcached_under_load(lg_bin, pair, server_b, memcached_b, tmp_path):
    """The experiment's shape: web-search flows from b to a and memcached
    GETs on one persistent connection; the latency window lies inside the
    background load's run.  The load runs until the GETs are done (then
    SIGINT), so the windows nest however long the GETs take."""
    s = server_b()
    fg_json, mc_json = tmp_path / "fg.json", tmp_path / "mc.json"
    fg = subprocess.Popen(
        fg_client(pair, lg_bin, "--port", s.port, "--cdf",
                  cdf("web-search.cdf"), "--connections", 4, "--duration",
                  3600, "--json", fg_json, "--quiet", "--progress"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_output(fg.stderr, "in flight")
        r = run(pair.a.cmd(lg_bin.mc_client, "--server", B_IP, "--cdf",
                           cdf("memcached-values.cdf"), "--requests", 1000,
                           "--json", mc_json, "--samples", tmp_path / "s"))
        assert r.returncode == 0, r.stderr
        fg.send_signal(signal.SIGINT)
        assert fg.wait(timeout=60) == 3        # interrupted, as asked
    finally:
        end_process(fg, signal.SIGKILL)
    m, f = load_json(mc_json), load_json(fg_json)
    assert m["requests_ok"] == 1000
    assert m["latency_us"]["get"]["p99"] > 0
    assert f["start_realtime"] < m["window_start_realtime"]
    assert m["window_end_realtime"] < f["end_realtime"]
    assert f["flows_completed"] > 0
    # No flow failed: the only unfinished ones are those SIGINT stopped.
    assert set(f["unfinished_reasons"]) <= {"interrupted"}, f

"""The load generator across two network namespaces joined by a veth pair
(client side "a" at 10.77.0.1, server side "b" at 10.77.0.2).  Needs
root."""
import os
import shutil
import signal
import subprocess
import time

import pytest

from lg_helpers import (FgServer, cdf, load_json, memcached_path, read_flows,
                        run, stop, wait_output)

A_IP, B_IP = "10.77.0.1", "10.77.0.2"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="needs root to create network namespaces"),
    pytest.mark.skipif(shutil.which("ip") is None,
                       reason="iproute2 'ip' not installed"),
]


def sh(*cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=30)
    if r.returncode:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    return r.stdout


class Pair:
    def __init__(self):
        tag = "%d" % os.getpid()
        self.a, self.b = "lg%sa" % tag, "lg%sb" % tag
        self.va, self.vb = "lgv%sa" % tag, "lgv%sb" % tag

    def ex(self, ns):
        return ["ip", "netns", "exec", ns]


@pytest.fixture(scope="module")
def pair():
    p = Pair()
    try:
        sh("ip", "netns", "add", p.a)
        sh("ip", "netns", "add", p.b)
        sh("ip", "-n", p.a, "link", "add", p.va, "type", "veth", "peer",
           "name", p.vb, "netns", p.b)
        for ns, dev, ip in ((p.a, p.va, A_IP), (p.b, p.vb, B_IP)):
            sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "netns", "exec", p.a, "ping", "-c", "1", "-W", "2", B_IP)
        yield p
    finally:
        for ns in (p.a, p.b):
            subprocess.run(["ip", "netns", "del", ns],
                           stderr=subprocess.DEVNULL)


@pytest.fixture
def server_b(lg_bin, pair, tmp_path):
    servers = []

    def start(**kw):
        s = FgServer(lg_bin, tmp_path, prefix=pair.ex(pair.b), bind=B_IP,
                     **kw)
        servers.append(s)
        return s

    yield start
    for s in servers:
        stop(s.proc, signal.SIGKILL)


@pytest.fixture
def memcached_b(pair):
    path = memcached_path()
    if not os.access(path, os.X_OK):
        pytest.skip("memcached not installed (./install-deps.sh)")
    proc = subprocess.Popen(pair.ex(pair.b) + [path, "-l", B_IP, "-p",
                                               "11211", "-U", "0", "-u",
                                               "nobody"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_tcp_ns(pair, proc)
    yield proc
    stop(proc, signal.SIGKILL)


def wait_tcp_ns(pair, proc):
    deadline = time.time() + 10
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("memcached exited: %s" % proc.stderr.read())
        r = subprocess.run(pair.ex(pair.a) + ["bash", "-c",
                                              "exec 3<>/dev/tcp/%s/11211"
                                              % B_IP],
                           stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            return
        time.sleep(0.05)
    raise RuntimeError("memcached not reachable in %s" % pair.b)


def test_flows_across_namespaces(lg_bin, pair, server_b, tmp_path):
    s = server_b()
    out, js = tmp_path / "flows.txt", tmp_path / "sum.json"
    r = run(pair.ex(pair.a) + [lg_bin.fg_client, "--server", B_IP, "--port",
                               str(s.port), "--bind", A_IP, "--cdf",
                               cdf("web-search.cdf"), "--concurrency", "6",
                               "--flows", "120", "--output", str(out),
                               "--json", str(js)])
    assert r.returncode == 0, r.stderr
    j = load_json(js)
    assert j["flows_completed"] == 120 and j["max_in_flight"] == 6
    flows = read_flows(out)
    assert all(f["completed"] and f["fct"] > 0 for f in flows)
    info = s.stop()
    assert info["responses_completed"] == 120


def test_dscp_on_the_wire(lg_bin, pair, server_b, tmp_path):
    """--dscp marks the client's packets and, through the request, the
    server's data packets."""
    if shutil.which("tcpdump") is None:
        pytest.skip("tcpdump not installed")
    s = server_b()
    pcap = tmp_path / "dscp.pcap"
    dump = subprocess.Popen(pair.ex(pair.a) + ["tcpdump", "-i", pair.va,
                                               "-w", str(pcap), "-U", "-nn",
                                               "tcp port %d" % s.port],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        # tcpdump says "listening on ..." once it captures.
        seen = []
        while not seen or ("listening on" not in seen[-1] and seen[-1]):
            seen.append(dump.stderr.readline())
        assert "listening on" in seen[-1], seen
        r = run(pair.ex(pair.a) + [lg_bin.fg_client, "--server", B_IP,
                                   "--port", str(s.port), "--size", "100K",
                                   "--concurrency", "2", "--flows", "4",
                                   "--dscp", "10"])
        assert r.returncode == 0, r.stderr
        time.sleep(0.5)
    finally:
        stop(dump, signal.SIGINT)
    text = sh("tcpdump", "-r", str(pcap), "-nn", "-v")
    lines = text.splitlines()
    tos_by_dir = {"c2s": set(), "s2c": set()}
    for head, addr in zip(lines, lines[1:]):
        if "tos 0x" not in head:
            continue
        tos = head.split("tos ")[1].split(",")[0]
        if addr.strip().startswith("%s.%d >" % (B_IP, s.port)):
            tos_by_dir["s2c"].add(tos)
        elif addr.strip().startswith(A_IP):
            tos_by_dir["c2s"].add(tos)
    assert "0x28" in tos_by_dir["c2s"], tos_by_dir
    assert "0x28" in tos_by_dir["s2c"], tos_by_dir


def test_kill_server_across_namespaces(lg_bin, pair, server_b, tmp_path):
    s = server_b()
    js = tmp_path / "sum.json"
    client = subprocess.Popen(
        pair.ex(pair.a) + [lg_bin.fg_client, "--server", B_IP, "--port",
                           str(s.port), "--size", "500M", "--concurrency",
                           "3", "--flows", "30", "--json", str(js),
                           "--max-failures", "5", "--quiet", "--progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_output(client.stderr, "in flight")
    time.sleep(0.3)
    s.kill()
    assert client.wait(timeout=60) == 2
    j = load_json(js)
    assert j["flows_unfinished"] >= 3
    assert j["flows_completed"] + j["flows_unfinished"] == j["flows_started"]


def test_memcached_under_load(lg_bin, pair, server_b, memcached_b, tmp_path):
    """The experiment's shape: web-search flows from b to a and memcached
    GETs on one persistent connection; the latency window lies inside the
    background load's run."""
    s = server_b()
    fg_json, mc_json = tmp_path / "fg.json", tmp_path / "mc.json"
    fg = subprocess.Popen(
        pair.ex(pair.a) + [lg_bin.fg_client, "--server", B_IP, "--port",
                           str(s.port), "--cdf", cdf("web-search.cdf"),
                           "--concurrency", "4", "--duration", "8",
                           "--json", str(fg_json), "--quiet"])
    try:
        time.sleep(1)
        r = run(pair.ex(pair.a) + [lg_bin.mc_client, "--server", B_IP,
                                   "--cdf", cdf("memcached-values.cdf"),
                                   "--requests", "1000",
                                   "--json", str(mc_json),
                                   "--samples", str(tmp_path / "s")])
        assert r.returncode == 0, r.stderr
        assert fg.wait(timeout=120) == 0
    finally:
        stop(fg, signal.SIGKILL)
    m, f = load_json(mc_json), load_json(fg_json)
    assert m["requests_ok"] == 1000
    assert m["latency_us"]["get"]["p99"] > 0
    assert f["start_realtime"] < m["window_start_realtime"]
    assert m["window_end_realtime"] < f["end_realtime"]
    assert f["flows_completed"] > 0 and f["flows_unfinished"] == 0

"""QoS queues on the userspace datapath (ovs-patches/qos.series).

Runs the patched ovs-vswitchd (datapath_type=netdev) in network namespaces
(pandalab.lab: hosts cli 10.0.0.1, srv 10.0.0.2, blk 10.0.0.3; the switch
port towards srv shaped by panda-qos) and checks, with the kernel's own
counters, that:
  - OpenFlow set_queue:N puts packets into tc class 1:N+1 of the port's
    linux-htb QoS made by panda-qos, with the queue's DSCP;
  - a packet the qdisc refuses is counted in the port's tx_dropped and
    does not take the rest of its batch with it: with the lowest class
    flooded, every top-class packet arrives;
  - with 14 bulk TCP flows saturating the lowest class, a memcached
    request/response connection in the top class sees no retransmission.

Traffic: the load generator (panda-fg-*, panda-mc-client) for TCP, and
udp_probe.py for datagram counts per DSCP.  Every wait is for a condition
(datagrams received, a standing queue, a drained queue), never a guessed
time.  Build: $PANDA_BUILD_DIR (default <repo>/_build).  Needs root.
"""

import json
import os
import re
import signal
import subprocess

import pytest

from pandaovs import paths
from pandalab import loadgen
from pandalab.lab import FG_PORT, MEMCACHED_PORT, Lab, wait_until
from pandalab.sandbox import end_process

BUILD = paths.BuildTree()
PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "udp_probe.py")

pytestmark = [
    pytest.mark.usefixtures("ovs_ready"),
]

LEVELS = 4
RATE = 50e6
UDP_BASE = 6000


@pytest.fixture
def lab():
    with Lab(BUILD.root, [("cli", "10.0.0.1"), ("srv", "10.0.0.2"),
                          ("blk", "10.0.0.3")], static_arp=True) as lab:
        lab.shape(lab.srv.port, RATE, LEVELS, dscp="default")
        yield lab


def class_of(queue):
    return "1:%x" % (queue + 1)


def delta(after, before, queue, key="packets"):
    c = class_of(queue)
    return after.get(c, {}).get(key, 0) - before.get(c, {}).get(key, 0)


def udp_flows(lab, ports_queues):
    for port, q in ports_queues:
        lab.sb.ofctl("add-flow", "br0", "priority=100,udp,nw_dst=%s,"
                     "tp_dst=%d,actions=set_queue:%d,NORMAL"
                     % (lab.srv.ip, port, q))


def udp_receiver(lab, ports, expect):
    """udp_probe udprecv in srv; it exits once 'expect' datagrams came."""
    p = lab.spawn("udprecv", lab.srv, paths.PY, PROBE, "udprecv",
                  "--ports", ",".join(map(str, ports)), "--expect", expect,
                  "--duration", 120, stdout=subprocess.PIPE, text=True)
    assert "listening" in p.stdout.readline()
    return p


def udp_send(lab, host, port, *args, background=False):
    cmd = (paths.PY, PROBE, "udp", lab.srv.ip, port) + args
    if background:
        return lab.spawn("udp", host, *cmd, stdout=subprocess.PIPE,
                         text=True)
    return host.run(*cmd, timeout=300)


def received(proc, timeout=120):
    """The receiver's counts, once it has exited by itself."""
    out, _ = proc.communicate(timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])["dscp_counts"]


def test_helper_makes_k_queues(lab):
    out = lab.panda_qos("show", lab.srv.port)
    assert "linux-htb" in out
    for q in range(LEVELS):
        assert "queue %d (tc class 1:%d)" % (q, q + 1) in out
    classes = lab.tc_classes(lab.srv.port)
    for q in range(LEVELS):
        assert class_of(q) in classes, classes
    # Removing and re-adding works and leaves no stray records.
    assert "removed QoS" in lab.panda_qos("del", lab.srv.port)
    assert lab.sb.vsctl("list", "Queue").strip() == ""
    assert lab.sb.vsctl("list", "QoS").strip() == ""


def test_set_queue_selects_tc_class(lab):
    """Each queue's packets are counted in its own class, with its DSCP."""
    ports = [UDP_BASE + q for q in range(LEVELS)]
    udp_flows(lab, [(p, q) for q, p in enumerate(ports)])
    counts = {q: 40 + 25 * q for q in range(LEVELS)}
    recv = udp_receiver(lab, ports, sum(counts.values()))
    before = lab.tc_classes(lab.srv.port)
    for q, port in enumerate(ports):
        udp_send(lab, lab.cli, port, "--count", counts[q], "--pps", 1000)
    got = received(recv)        # every datagram went through its class
    after = lab.tc_classes(lab.srv.port)
    for q in range(LEVELS):
        d = delta(after, before, q)
        if q == 0:
            # Queue 0 is also the default class: allow a few stray packets
            # (e.g. IPv6 neighbour discovery) besides ours.
            assert counts[q] <= d <= counts[q] + 10, (q, d, after)
        else:
            assert d == counts[q], (q, d, after)
        # panda-qos --dscp default: level/queue q has DSCP q + 1.
        assert got[str(ports[q])] == {str(q + 1): counts[q]}, got
    # OVS reports the same per-queue counters (ovs-ofctl queue-stats).
    stats = lab.sb.ofctl("queue-stats", "br0", lab.srv.port)
    pkts = {int(m.group(1)): int(m.group(2)) for m in re.finditer(
        r"queue (\d+): bytes=\d+, pkts=(\d+)", stats)}
    for q in range(1, LEVELS):
        assert pkts.get(q) == counts[q], stats


def test_refused_packet_counted_rest_of_batch_sent(lab):
    """Flood the lowest class far beyond the link rate: the qdisc refuses
    many of its packets (ENOBUFS), each is counted in tx_dropped, and none
    of the top-class packets sent meanwhile is lost."""
    low, top = LEVELS - 1, 0
    flood_port, top_port = UDP_BASE + low, UDP_BASE + top
    udp_flows(lab, [(flood_port, low), (top_port, top)])
    n_top = 1000
    recv = udp_receiver(lab, [top_port], n_top)
    port = lab.srv.port
    before = lab.tc_classes(port)
    drops_before = lab.tx_dropped(port)
    # Two unpaced floods of 1400-byte datagrams, until stopped.
    flood = [udp_send(lab, lab.blk, flood_port, "--size", 1400,
                      background=True) for _ in range(2)]
    # The flood overflows the class before the top-class packets go.
    wait_until(lambda: delta(lab.tc_classes(port), before, low,
                             "dropped") > 1000, 60,
               "the flood to overflow the lowest class")
    udp_send(lab, lab.cli, top_port, "--count", n_top, "--pps", 2000)
    got = received(recv)[str(top_port)]
    for p in flood:
        end_process(p, signal.SIGINT)
    # The lowest class empties at the link rate before it is read.
    wait_until(lambda: not lab.tc_classes(port)[class_of(low)].get(
        "backlog"), 60, "the lowest class to drain")
    after = lab.tc_classes(port)
    drops = lab.tx_dropped(port) - drops_before
    low_dropped = delta(after, before, low, "dropped")
    assert low_dropped > 1000, (after, lab.tc_text(port, "qdisc"))
    # Refused packets are counted in the port's tx_dropped.  Each is a
    # packet the qdisc dropped; the kernel does not report every qdisc drop
    # to the sender, though (a packet handed over while another CPU runs
    # the qdisc may be enqueued, and dropped, later), hence "<=".
    total_class_drops = sum(delta(after, before, q, "dropped")
                            for q in range(LEVELS))
    assert 0 < drops <= total_class_drops, (drops, after)
    assert sum(got.values()) == n_top, got
    assert delta(after, before, top, "dropped") == 0


def test_top_class_no_retransmissions_under_bulk(lab, tmp_path):
    """14 CUBIC flows fill the lowest class; 3000 memcached GETs in the top
    class complete without a single TCP retransmission."""
    low = LEVELS - 1
    port = lab.srv.port
    # memcached requests (cli -> srv) in the top queue; the bulk data
    # (panda-fg-server on blk answering panda-fg-client on srv) in the
    # lowest.
    lab.sb.ofctl("add-flow", "br0", "priority=100,tcp,nw_dst=%s,tp_dst=%d,"
                 "actions=set_queue:0,NORMAL" % (lab.srv.ip, MEMCACHED_PORT))
    lab.sb.ofctl("add-flow", "br0", "priority=100,tcp,nw_src=%s,tp_src=%d,"
                 "actions=set_queue:%d,NORMAL" % (lab.blk.ip, FG_PORT, low))
    lab.start_memcached(lab.srv)
    lab.fg_server(lab.blk, FG_PORT)
    bulk = loadgen.start_fg_client(
        lab.build, lab.blk.ip, FG_PORT, str(tmp_path), host=lab.srv,
        size="1G", connections=14, duration=3600, quiet=True)
    try:
        # A standing queue in the lowest class: the bulk flows saturate it
        # (more than the ~90 packets the default socket send buffer would
        # let through), however long they take to get there.
        wait_until(lambda: lab.tc_classes(port)[class_of(low)].get(
            "backlog", 0) > 100, 120, "a standing queue in the lowest class")
        before = lab.tc_classes(port)
        retrans = {h: Lab.nstat(h) for h in (lab.cli, lab.srv)}
        rc, mc = loadgen.run_mc_client(
            lab.build, lab.srv.ip, MEMCACHED_PORT, str(tmp_path),
            host=lab.cli, value_size=100, keys=1, requests=3000,
            quiet=True, timeout=600)
        after = lab.tc_classes(port)
        retrans_delta = {h.name: Lab.nstat(h) - retrans[h]
                         for h in (lab.cli, lab.srv)}
        assert bulk.poll() is None, bulk.error_tail()
    finally:
        bulk.interrupt()
    blk = bulk.result()
    print("memcached under bulk: %s; low class: %s" % (
        mc["latency_us"]["all"], after.get(class_of(low))))
    assert rc == 0 and mc["requests_ok"] == 3000, mc
    # The bulk flows never failed (SIGINT stopped those in flight)...
    assert set(blk["unfinished_reasons"]) <= {"interrupted"}, blk
    # ...kept the lowest class busy: it sent all along and still has a
    # standing queue at the end...
    assert delta(after, before, low, "bytes") > 0, after
    assert after[class_of(low)]["backlog"] > 100, after
    # ...yet the request/response connection never retransmitted.
    assert retrans_delta == {lab.cli.name: 0, lab.srv.name: 0}, \
        (retrans_delta, mc)

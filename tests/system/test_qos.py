"""QoS queues on the userspace datapath (issue 4, ovs-patches/qos.series).

Runs the patched ovs-vswitchd (datapath_type=netdev) in network namespaces
and checks, with the kernel's own counters, that:
  - OpenFlow set_queue:N puts packets into tc class 1:N+1 of the port's
    linux-htb QoS made by tools/panda-qos, with the queue's DSCP;
  - a packet the qdisc refuses is counted in the port's tx_dropped and
    does not take the rest of its batch with it: with the lowest class
    flooded, every top-class packet arrives;
  - with 14 bulk TCP flows saturating the lowest class, a memcached
    request/response connection in the top class sees no retransmission.

Build: $PANDA_BUILD_DIR (default <repo>/_build).  Needs root.
"""

import os
import re
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "pylib"))
from ovs_sandbox import is_root  # noqa: E402
import qos_lab  # noqa: E402
from qos_lab import QosLab  # noqa: E402

BUILD = qos_lab.default_build_dir()
VSWITCHD = os.path.join(BUILD, "ovs", "build", "vswitchd", "ovs-vswitchd")

pytestmark = [
    pytest.mark.skipif(not is_root(),
                       reason="needs root (network namespaces, tc, OVS)"),
    pytest.mark.skipif(not os.access(VSWITCHD, os.X_OK),
                       reason="no OVS build at %s (set PANDA_BUILD_DIR or "
                       "build with 'make')" % BUILD),
]

LEVELS = 4
RATE = "50M"
UDP_BASE = 6000


@pytest.fixture
def lab():
    with QosLab(BUILD) as lab:
        lab.panda_qos("add", lab.srv.port, "--rate", RATE,
                      "--levels", str(LEVELS), "--dscp", "default")
        # Wait until ovs-vswitchd has made the classes.
        deadline = time.monotonic() + 10
        while len(lab.tc_classes()) < LEVELS + 1:
            assert time.monotonic() < deadline, lab.tc_qdisc()
            time.sleep(0.1)
        yield lab


def class_of(queue):
    return "1:%x" % (queue + 1)


def delta(after, before, queue, key="packets"):
    c = class_of(queue)
    return after.get(c, {}).get(key, 0) - before.get(c, {}).get(key, 0)


def test_helper_makes_k_queues(lab):
    out = lab.panda_qos("show", lab.srv.port)
    assert "linux-htb" in out
    for q in range(LEVELS):
        assert "queue %d (tc class 1:%d)" % (q, q + 1) in out
    classes = lab.tc_classes()
    for q in range(LEVELS):
        assert class_of(q) in classes, classes
    # Removing and re-adding works and leaves no stray records.
    assert "removed QoS" in lab.panda_qos("del", lab.srv.port)
    assert lab.sb.vsctl("list", "Queue").strip() == ""
    assert lab.sb.vsctl("list", "QoS").strip() == ""


def test_set_queue_selects_tc_class(lab):
    """Each queue's packets are counted in its own class, with its DSCP."""
    br = "br0"
    ports = [UDP_BASE + q for q in range(LEVELS)]
    for q, port in enumerate(ports):
        lab.sb.ofctl("add-flow", br, "priority=100,udp,nw_dst=%s,tp_dst=%d,"
                     "actions=set_queue:%d,NORMAL" % (lab.srv.ip, port, q))
    recv = lab.spawn(lab.srv, "udprecv", "--ports",
                     ",".join(map(str, ports)))
    assert "listening" in recv.stdout.readline()
    counts = {q: 40 + 25 * q for q in range(LEVELS)}
    before = lab.tc_classes()
    for q, port in enumerate(ports):
        lab.traffic(lab.cli, "udp", lab.srv.ip, port, "--count", counts[q],
                    "--pps", 1000)
    time.sleep(0.5)
    after = lab.tc_classes()
    got = lab.stop_sink(recv)["dscp_counts"]
    for q in range(LEVELS):
        d = delta(after, before, q)
        if q == 0:
            # Queue 0 is also the default class: allow a few stray packets
            # (e.g. IPv6 neighbour discovery) besides ours.
            assert counts[q] <= d <= counts[q] + 10, (q, d, after)
        else:
            assert d == counts[q], (q, d, after)
        # The helper's default map: level/queue q has DSCP q + 1.
        assert got[str(ports[q])] == {str(q + 1): counts[q]}, got
    # OVS reports the same per-queue counters (ovs-ofctl queue-stats).
    stats = lab.sb.ofctl("queue-stats", br, lab.srv.port)
    pkts = {int(m.group(1)): int(m.group(2)) for m in re.finditer(
        r"queue (\d+): bytes=\d+, pkts=(\d+)", stats)}
    for q in range(1, LEVELS):
        assert pkts.get(q) == counts[q], stats


def test_refused_packet_counted_rest_of_batch_sent(lab):
    """Flood the lowest class far beyond the link rate: the qdisc refuses
    many of its packets (ENOBUFS), each is counted in tx_dropped, and none
    of the top-class packets sent meanwhile is lost."""
    br = "br0"
    low, top = LEVELS - 1, 0
    flood_port, top_port = UDP_BASE + low, UDP_BASE + top
    for q, port in ((low, flood_port), (top, top_port)):
        lab.sb.ofctl("add-flow", br, "priority=100,udp,nw_dst=%s,tp_dst=%d,"
                     "actions=set_queue:%d,NORMAL" % (lab.srv.ip, port, q))
    recv = lab.spawn(lab.srv, "udprecv", "--ports", str(top_port))
    assert "listening" in recv.stdout.readline()
    before = lab.tc_classes()
    drops_before = lab.tx_dropped()
    flood = [lab.spawn(lab.blk, "udp", lab.srv.ip, flood_port, "--count",
                       60000, "--size", 1400) for _ in range(2)]
    time.sleep(0.5)
    n_top = 1000
    lab.traffic(lab.cli, "udp", lab.srv.ip, top_port, "--count", n_top,
                "--pps", 2000)
    for p in flood:
        lab.finish(p)
    time.sleep(1.0)
    after = lab.tc_classes()
    drops = lab.tx_dropped() - drops_before
    got = lab.stop_sink(recv)["dscp_counts"][str(top_port)]
    low_dropped = delta(after, before, low, "dropped")
    assert low_dropped > 1000, (after, lab.tc_qdisc())
    # Refused packets are counted in the port's tx_dropped.  Each is a
    # packet the qdisc dropped; the kernel does not report every qdisc drop
    # to the sender, though (a packet handed over while another CPU runs
    # the qdisc may be enqueued, and dropped, later), hence "<=".
    total_class_drops = sum(delta(after, before, q, "dropped")
                            for q in range(LEVELS))
    assert 0 < drops <= total_class_drops, (drops, after)
    assert sum(got.values()) == n_top, got
    assert delta(after, before, top, "dropped") == 0


def test_top_class_no_retransmissions_under_bulk(lab):
    """14 CUBIC flows fill the lowest class; memcached GETs in the top class
    complete without a single TCP retransmission."""
    lab.add_queue_flows(rr_queue=0, bulk_queue=LEVELS - 1)
    lab.start_memcached()
    sink = lab.start_sink()
    bulk = lab.start_bulk(flows=14, duration=25)
    time.sleep(4)                       # let the bulk flows fill the class
    before = lab.tc_classes()
    t0 = time.monotonic()
    retrans = {h: QosLab.nstat(h) for h in (lab.cli, lab.srv)}
    res = lab.traffic(lab.cli, "memget", lab.srv.ip, qos_lab.MEMCACHED_PORT,
                      "--count", 3000, "--duration", 15)
    after = lab.tc_classes()
    elapsed = time.monotonic() - t0
    retrans_delta = {h.name: QosLab.nstat(h) - retrans[h]
                     for h in (lab.cli, lab.srv)}
    blk = lab.finish(bulk)
    lab.stop_sink(sink)
    print("memcached under bulk: %s; low class: %s" % (
        res, after.get(class_of(LEVELS - 1))))
    assert res["n"] >= 2000, res
    # The bulk flows really saturated their class...
    low_bytes = delta(after, before, LEVELS - 1, "bytes")
    assert not blk["errors"], blk
    assert low_bytes / elapsed > 0.8 * 50e6 / 8, (low_bytes, elapsed, after)
    # ...with a standing queue longer than the ~90 packets that the default
    # socket send buffer would have let through.
    assert after[class_of(LEVELS - 1)]["backlog"] > 100, after
    # ...yet the request/response connection never retransmitted.
    assert retrans_delta == {lab.cli.name: 0, lab.srv.name: 0}, \
        (retrans_delta, res)

"""Traffic and checks shared by the overlay and OVN system tests
(test_overlay.py, test_ovn.py): two inner connections between VM 'a' on
hypervisor 1 and VM 'b' on hypervisor 2, at the same time, in the same
tunnel -- a bulk transfer and a small-message request/response connection
-- captured on hypervisor 1's underlay port as they leave it, encapsulated.

The server of both is on 'a', so the data and the answers leave through
hypervisor 1's underlay port, where panda-sched counts them per level.
"""

import re
import shutil
import signal

import pytest

from pandaovs import paths
from pandalab import loadgen
from pandalab.lab import LabError, wait_until
from pandalab.loadgen import FgServer
from pandalab.sandbox import end_process
from pandalab.testbed import pcap
from pandalab.testbed.trial import tcpdump

BUILD = paths.BuildTree()

# The conditions of both tests besides conftest's ovs_ready.
NEEDS_TCPDUMP = pytest.mark.skipif(not shutil.which("tcpdump"),
                                   reason="needs tcpdump")

# Panda: T below the MSS payload (1348 bytes at the VMs' MTU of 1400, with
# TCP timestamps), so that the bulk flow's full-sized segments count and the
# small messages are compensated; three levels, queues 0..2.
POLICY = ("panda(id=1,threshold=1000,thresholds=100000/1000000,"
          "dscp=46/26/0,queues=0/1/2)")
DSCP_OF_LEVEL = [46, 26, 0]
BULK_PORT, RR_PORT = 5001, 5002
BULK_BYTES = 3 * 1000 * 1000
RR_COUNT = 200
RR_SIZE = 100


def connections(ov, tmp, a, b):
    """Runs the bulk and the request/response connection (servers on 'a',
    clients on 'b') at the same time, to their end."""
    servers = [FgServer(BUILD, tmp, host=a, bind=a.ip, port=port,
                        tag="fg-%d" % port, quiet=True)
               for port in (BULK_PORT, RR_PORT)]
    try:
        clients = [
            loadgen.start_fg_client(BUILD, a.ip, BULK_PORT, tmp, host=b,
                                    tag="bulk", connections=1, quiet=True,
                                    size=BULK_BYTES, requests=1),
            loadgen.start_fg_client(BUILD, a.ip, RR_PORT, tmp, host=b,
                                    tag="rr", connections=1, quiet=True,
                                    size=RR_SIZE, requests=RR_COUNT,
                                    pool=True)]
        for c, flows in zip(clients, (1, RR_COUNT)):
            assert c.wait(timeout=300) == 0, c.error_tail()
            assert c.result()["flows_completed"] == flows
    finally:
        for s in servers:
            s.kill()


def sent_per_level(path, hv):
    """Packets per panda-sched level that the capture of 'hv's underlay
    port says it sent: an IPv4 packet of 'hv' (all of them are tunnelled
    and classified on br-phy) at the level of its DSCP, a frame that is
    not IPv4 (not classified: skb_priority 0) at level 0."""
    n = [0] * len(DSCP_OF_LEVEL)
    for ts, frame, orig in pcap.packets(path):
        ip = pcap.ipv4_header(frame)
        if ip is None:
            n[0] += 1
        elif pcap.ip_str(ip[12:16]) == hv.ip:
            n[DSCP_OF_LEVEL.index(ip[1] >> 2)] += 1
    return n


def all_at_level_0(path, hv):
    """What sent_per_level() would say if every packet 'hv' sent had
    skb_priority 0, whatever its DSCP."""
    n = sent_per_level(path, hv)
    return [sum(n)] + [0] * (len(n) - 1)


def run_and_capture(ov, hv, tmp, a, b, expect=sent_per_level):
    """Runs connections() while capturing 'hv's underlay port; returns
    (the tunnelled inner TCP packets 'hv' sent, in capture order; the
    packets per level panda-sched sent meanwhile; expect(capture, hv), the
    same as the capture says they should be).  The capture is stopped once
    both agree (the last ACKs may still be on their way when the programs
    exit) or, if they never do, after 10 s: the caller's assertions then
    say how they differ."""
    path = "%s/%s-phy.pcap" % (tmp, hv.name)
    cap = tcpdump(hv.sb.ns, path, "", snaplen=200, iface="phy")
    before = hv.level_sent()
    try:
        connections(ov, tmp, a, b)

        def sent():
            return [x - y for x, y in zip(hv.level_sent(), before)]
        try:
            levels = wait_until(
                lambda: sent() == expect(path, hv) and sent(), 10,
                "the capture and the scheduler's counters to agree")
        except LabError:
            levels = sent()
    finally:
        end_process(cap, signal.SIGINT)
    pkts = [p for p in pcap.tunnel_packets(path) if p["outer_src"] == hv.ip]
    return pkts, levels, expect(path, hv)


def check_marking(pkts, tunnel, server_ip):
    """The checks of the issue on the packets 'a' (server_ip) sent through
    the tunnel: every packet's outer DSCP is its inner DSCP; the bulk
    data steps down through the levels in order; the answers of the
    request/response connection stay on top; and the outer headers of both
    connections are the same but for the UDP source port."""
    assert pkts, "no tunnelled packets captured"
    assert {p["tunnel"] for p in pkts} == {tunnel}
    bad = [p for p in pkts if p["outer_dscp"] != p["dscp"]]
    assert not bad, "outer DSCP differs from inner: %s" % bad[:3]
    outer = {(p["outer_src"], p["outer_dst"]) for p in pkts}
    assert len(outer) == 1, outer

    bulk = [p["dscp"] for p in pkts
            if p["src"] == server_ip and p["sport"] == BULK_PORT
            and p["payload"] > 0]
    assert sum(p["payload"] for p in pkts if p["src"] == server_ip
               and p["sport"] == BULK_PORT) >= BULK_BYTES
    levels = [DSCP_OF_LEVEL.index(d) for d in bulk]
    firsts = [levels.index(lv) if lv in levels else None
              for lv in range(len(DSCP_OF_LEVEL))]
    assert None not in firsts, "bulk: levels seen %s" % sorted(set(levels))
    assert firsts == sorted(firsts), "bulk: first packet of each level %s" \
        % firsts
    assert levels[-1] == len(DSCP_OF_LEVEL) - 1
    back = sum(1 for x, y in zip(levels, levels[1:]) if y < x)
    assert back <= len(levels) // 100, "bulk: %d steps back up" % back

    rr = [p["dscp"] for p in pkts if p["src"] == server_ip
          and p["sport"] == RR_PORT and p["payload"] > 0]
    assert len(rr) >= RR_COUNT
    assert set(rr) == {DSCP_OF_LEVEL[0]}, "rr DSCPs %s" % sorted(set(rr))


def inserted(show):
    """The 'inserted' count of panda/show output 'show' (0 if the policy
    has no table yet)."""
    m = re.search(r"inserted: (\d+),", show)
    return int(m.group(1)) if m else 0


def check_table(show, a, b, inserted_before=0):
    """panda/show of the policy on the hypervisor that sent, after the
    connections: it made one entry for each of the two inner TCP
    connections since 'inserted_before' (the direction a -> b of each; a
    FIN removes it), and the entries still there are inner ones.
    Classified by the outer header (UDP), the packets would have made no
    entry at all."""
    assert inserted(show) - inserted_before == 2, show
    ends = re.findall(r"^\s*(\S+):\d+ > (\S+):\d+ counter=", show, re.M)
    assert all(e == (a.ip, b.ip) for e in ends), show

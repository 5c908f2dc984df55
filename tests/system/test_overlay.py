"""System test of the panda action on overlay traffic ("OVN and
overlays", without OVN): two hypervisors, each a sandboxed userspace OVS
(pandalab.overlay), joined by a Geneve or a VXLAN tunnel; VM 'a' on the
first, VM 'b' on the second.

A bulk transfer and a small-message request/response connection run at
the same time from 'a' to 'b' through the same tunnel (same outer
addresses and destination port).  The panda flows are on hypervisor 1's
br-phy, after the tunnel push; on the wire (a capture of its underlay
port):

  - every packet's outer DSCP is its inner DSCP;
  - the bulk data steps down through the levels, the answers of the
    request/response connection stay on top (the classification is by the
    inner connection: panda/show counts an entry per inner TCP connection);
  - panda-sched on the underlay port sent exactly the packets of each
    level that the capture shows (the queue follows the level).

Build: $PANDA_BUILD_DIR (default <repo>/_build).  Needs root.
"""

import signal

import pytest

from pandalab.lab import wait_until
from pandalab.overlay import Overlay
from pandalab.sandbox import end_process
from pandalab.testbed import pcap
from pandalab.testbed.trial import tcpdump

import overlay_traffic as traffic

pytestmark = [pytest.mark.usefixtures("ovs_ready"), traffic.NEEDS_TCPDUMP]


@pytest.mark.parametrize("tunnel", ["geneve", "vxlan"])
def test_overlay_marks_inner_connections(tunnel, tmp_path):
    with Overlay(traffic.BUILD.root, tunnel=tunnel) as ov:
        hv1, hv2 = ov.hvs
        a = ov.add_vm(hv1, "a", "10.0.0.1")
        b = ov.add_vm(hv2, "b", "10.0.0.2")
        ov.static_arp()
        ov.add_panda_flows(traffic.POLICY)
        ov.shape_underlay(hv1, 200e6, len(traffic.DSCP_OF_LEVEL))
        flows = hv1.panda_flows()
        assert len(flows) == 2
        # Each flow declares the tunnel its match selects, and only that
        # one: the packets from LOCAL to its port are this host's tunnel.
        for port, name in ((6081, "geneve"), (4789, "vxlan")):
            flow, = [f for f in flows if "tp_dst=%d" % port in f]
            assert "in_port=LOCAL" in flow and \
                ",tunnels=%s)" % name in flow, flow

        pkts, sent, captured = traffic.run_and_capture(ov, hv1,
                                                       str(tmp_path), a, b)
        traffic.check_marking(pkts, tunnel, a.ip)
        # The queue follows the level: the scheduler sent what the capture
        # shows, per level, and every level carried packets.
        assert sent == captured
        assert all(sent), sent
        traffic.check_table(hv1.sb.appctl("panda/show", "1"), a, b)


def test_tos_inherit_does_not_carry_the_level(tmp_path):
    """The evidence for putting the action on br-phy (docs/ovn.md,
    "Decisions"): the same policy on br-int, before the tunnel push, with
    the tunnel's options:tos=inherit, marks the inner header only -- the
    outer header was built at translation time with the DSCP the VM sent
    (0) -- and every packet leaves the underlay in level 0 (the push
    reset skb_priority)."""
    with Overlay(traffic.BUILD.root, tunnel="geneve") as ov:
        hv1, hv2 = ov.hvs
        a = ov.add_vm(hv1, "a", "10.0.0.1")
        b = ov.add_vm(hv2, "b", "10.0.0.2")
        ov.static_arp()
        hv1.sb.vsctl("set", "Interface", "tun0", "options:tos=inherit")
        hv1.sb.ofctl("add-flow", "br-int", "priority=100,ip,actions=%s,"
                     "NORMAL" % traffic.POLICY)
        ov.shape_underlay(hv1, 200e6, len(traffic.DSCP_OF_LEVEL))

        pkts, sent, captured = traffic.run_and_capture(
            ov, hv1, str(tmp_path), a, b, expect=traffic.all_at_level_0)
        inner = {p["dscp"] for p in pkts if p["payload"] > 0}
        assert inner == set(traffic.DSCP_OF_LEVEL), inner
        assert {p["outer_dscp"] for p in pkts} == {0}
        assert sent == captured and sent[0] > 0 and not any(sent[1:]), sent


def test_inner_ipv6_with_outer_udp_checksum(tmp_path):
    """An inner IPv6 connection in a Geneve tunnel with csum=true (OVN's
    setting): the panda action rewrites the inner traffic class and so
    must update the outer UDP checksum, which the receiving OVS verifies
    (it drops the packet otherwise, and the transfer would not complete).
    The bulk transfer goes from b to a, so hypervisor 2's br-phy marks it:
    its table holds the IPv6 connection, the outer DSCPs step through
    every level."""
    with Overlay(traffic.BUILD.root, tunnel="geneve") as ov:
        hv1, hv2 = ov.hvs
        for hv in ov.hvs:
            hv.sb.vsctl("set", "Interface", "tun0", "options:csum=true")
        a = ov.add_vm(hv1, "a", "10.0.0.1", ip6="fd00::1/64")
        b = ov.add_vm(hv2, "b", "10.0.0.2", ip6="fd00::2/64")
        ov.add_panda_flows(traffic.POLICY)
        path = str(tmp_path / "hv2-phy.pcap")
        cap = tcpdump(hv2.sb.ns, path, "", snaplen=200, iface="phy")
        out = tmp_path / "received"
        with open(out, "wb") as f:
            srv = a.popen("nc", "-6", "-l", "-s", a.ip6, "-p",
                          str(traffic.BULK_PORT), stdout=f)
        try:
            wait_until(lambda: a.run("ss", "-Hltn", "sport = :%d"
                                     % traffic.BULK_PORT).strip(), 30,
                       "nc to listen")
            # A bound on failure, not a wait: a stalled transfer (packets
            # dropped for a bad checksum) ends after 60 s.
            b.run("sh", "-c", "head -c %d /dev/zero | timeout 60 nc -6 -N "
                  "%s %d" % (traffic.BULK_BYTES, a.ip6, traffic.BULK_PORT),
                  check=False, timeout=120)
            srv.wait(timeout=60)
        finally:
            end_process(srv)
            end_process(cap, signal.SIGINT)
        assert out.stat().st_size == traffic.BULK_BYTES, (
            "%d of %d bytes arrived: the receiving OVS dropped tunnelled "
            "packets (outer UDP checksum?)" % (out.stat().st_size,
                                               traffic.BULK_BYTES))
        # One IPv6 entry made (b -> a); the FIN may have removed it.
        show = hv2.sb.appctl("panda/show", "1")
        assert "inserted: 1," in show, show
        assert all(line.lstrip().startswith("[fd00::2]:") for line in
                   show.splitlines() if "counter=" in line), show
        outer = set()
        for ts, frame, orig in pcap.packets(path):
            ip = pcap.ipv4_header(frame)
            if ip is not None and pcap.ip_str(ip[12:16]) == hv2.ip:
                outer.add(ip[1] >> 2)
        assert outer == set(traffic.DSCP_OF_LEVEL), outer

"""System test of the panda action on overlay traffic (issue 20, "OVN and
overlays", without OVN): two hypervisors, each a sandboxed userspace OVS
(pandaovs.overlay), joined by a Geneve or a VXLAN tunnel; VM 'a' on the
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

import pytest

from pandaovs.overlay import Overlay

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
        assert len(hv1.panda_flows()) == 2

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

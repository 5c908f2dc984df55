"""The Mininet front end's topologies and flows, without root or a network
(pandalab.mininet.topo, pandalab.mininet.testbed.dscp_flows): ports,
shortest-path forwarding with equal-cost ports kept, the bottleneck, the
addresses the experiment relies on, and the fabric's DSCP -> queue flows.
Skipped when Debian's mininet does not import (its Topo is the graph)."""

import pytest

from pandalab.mininet import net
from pandaovs.policy import Policy

pytestmark = pytest.mark.skipif(net.available() is not None,
                                reason=str(net.available()))


def test_dumbbell_smallest():
    from pandalab.mininet.topo import Dumbbell
    t = Dumbbell()
    assert sorted(t.switches()) == ["s1", "s2"]
    assert {h: t.ip(h) for h in t.hosts()} == {"pm1": "10.0.0.1",
                                               "pm2": "10.0.0.2"}
    assert (t.pm1, t.pm2) == ("pm1", "pm2")
    # The inter-switch link is port 1 of both switches: the bottleneck is
    # s1's, on the way from PM2 to PM1.
    assert t.bottleneck_intf() == "s1-eth1"
    assert t.host_ports("s1") == {2: "pm2"}
    assert t.host_ports("s2") == {2: "pm1"}
    assert t.forwarding() == {"s1": {"pm1": [1], "pm2": [2]},
                              "s2": {"pm1": [2], "pm2": [1]}}


def test_dumbbell_host_groups():
    from pandalab.mininet.topo import Dumbbell
    t = Dumbbell(hosts=3)
    left = set(t.host_ports("s1").values())
    right = set(t.host_ports("s2").values())
    assert left == {"pm2", "h3", "h5"} and right == {"pm1", "h4", "h6"}
    fwd = t.forwarding()
    for h in right:
        assert fwd["s1"][h] == [1]
    for h in left:
        assert fwd["s2"][h] == [1]


def test_leafspine_ecmp_and_bottleneck():
    from pandalab.mininet.topo import LeafSpine
    t = LeafSpine(leaves=3, spines=2, hosts=2)
    assert len(t.hosts()) == 6
    assert len(set(t.ip(h) for h in t.hosts())) == 6
    assert t.pm2 in t.host_ports("leaf1").values()
    assert t.pm1 in t.host_ports("leaf3").values()
    assert t.bottleneck == ("leaf3", "pm1")
    assert t.bottleneck_intf() == "leaf3-eth%d" % t.ofport("leaf3", "pm1")
    fwd = t.forwarding()
    uplinks = sorted(t.ofport("leaf1", s) for s in ("spine1", "spine2"))
    # A leaf reaches a remote host over every spine, a local one directly;
    # a spine has exactly one way down.
    assert fwd["leaf1"]["pm1"] == uplinks
    assert fwd["leaf1"]["pm2"] == [t.ofport("leaf1", "pm2")]
    for spine in ("spine1", "spine2"):
        assert fwd[spine]["pm1"] == [t.ofport(spine, "leaf3")]
        assert not t.host_ports(spine)
    # Datapath ids are distinct (Mininet would derive 1 from both leaf1
    # and spine1).
    dpids = [t.nodeInfo(s)["dpid"] for s in t.switches()]
    assert len(set(dpids)) == len(dpids)


def test_bad_sizes():
    from pandalab.mininet.topo import Dumbbell, LeafSpine
    with pytest.raises(ValueError, match="at least one host"):
        Dumbbell(hosts=0)
    with pytest.raises(ValueError, match="at least 2 leaves"):
        LeafSpine(leaves=1)
    with pytest.raises(ValueError, match="254"):
        Dumbbell(hosts=200)


def test_dscp_flows():
    from pandalab.mininet.testbed import dscp_flows
    assert dscp_flows(None) == []
    p = Policy.from_text("id=1,kind=pias,thresholds=10/20/30,"
                         "dscp=46/26/26/0,queues=0/1/2/3")
    flows = dscp_flows(p)
    # One flow per DSCP; a DSCP two levels share takes the higher level's
    # queue.
    assert [f.split(",actions=")[1] for f in flows] == [
        "set_queue:0,goto_table:1", "set_queue:1,goto_table:1",
        "set_queue:3,goto_table:1"]
    assert ["ip_dscp=46" in flows[0], "ip_dscp=26" in flows[1],
            "ip_dscp=0" in flows[2]] == [True] * 3

"""System test of the OVN recipe (docs/ovn.md): Debian's OVN
(ovn-central, ovn-host) on two chassis, each a sandboxed userspace OVS
(pandalab.overlay, pandalab.ovn); a logical switch with one port per
chassis, VM 'a' bound on chassis hv1, VM 'b' on hv2; Geneve between them,
made by ovn-controller.

  - VM-to-VM traffic across the tunnel is marked per inner connection,
    inner and outer DSCP alike, and queued by level on the underlay port
    (the checks of test_overlay.py);
  - where the panda flows live: ovn-controller clears every table of
    br-int when it (re)connects -- a flow put in a table OVN does not use
    is gone after a restart -- while the panda flows on br-phy stay, and
    after the restart and after a full recompute (ovn-appctl recompute) the
    traffic is still marked per inner connection.

Skipped without OVN's packages.  Build: $PANDA_BUILD_DIR (default
<repo>/_build).  Needs root.
"""

import pytest

from pandalab import ovn
from pandalab.lab import wait_until
from pandalab.overlay import Overlay

import overlay_traffic as traffic

pytestmark = [
    pytest.mark.usefixtures("ovs_ready"),
    traffic.NEEDS_TCPDUMP,
    pytest.mark.skipif(ovn.missing() is not None,
                       reason=ovn.missing() or ""),
]

MACS = {"a": "0a:00:00:00:00:01", "b": "0a:00:00:00:00:02"}
IPS = {"a": "10.0.0.1", "b": "10.0.0.2"}
# A flow of our own in a br-int table OVN 23.03 does not use (its tables
# end below 100), with a cookie of its own.
PROBE = "cookie=0x5041,table=200,priority=1,actions=drop"


def br_int_has_probe(hv):
    return "cookie=0x5041" in hv.sb.ofctl("dump-flows", "br-int",
                                          "table=200")


def br_int_flow_count(hv):
    """br-int's flows but the probe."""
    return len([line for line in hv.sb.ofctl("dump-flows", "br-int")
                .splitlines()
                if "actions=" in line and "cookie=0x5041," not in line])


def test_ovn_marks_inner_connections(tmp_path):
    with Overlay(traffic.BUILD.root, tunnel=None) as ov, \
            ovn.OvnCentral(ov.hvs[0].sb) as central:
        hv1, hv2 = ov.hvs
        ctls = [ovn.OvnController(hv, central) for hv in ov.hvs]
        try:
            for c in ctls:
                c.start()
            central.nbctl("ls-add", "ls0")
            for name in ("a", "b"):
                central.nbctl("lsp-add", "ls0", "vm-%s" % name)
                central.nbctl("lsp-set-addresses", "vm-%s" % name,
                              "%s %s" % (MACS[name], IPS[name]))
            a = ov.add_vm(hv1, "a", IPS["a"], mac=MACS["a"],
                          iface_id="vm-a")
            b = ov.add_vm(hv2, "b", IPS["b"], mac=MACS["b"],
                          iface_id="vm-b")
            for c in ctls:
                c.wait_connected()
            for name in ("a", "b"):
                central.nbctl("wait-until", "Logical_Switch_Port",
                              "vm-%s" % name, "up=true")
            central.nbctl("--wait=hv", "sync")
            # ovn-controller made the Geneve tunnels.
            for hv in ov.hvs:
                ports = hv.sb.vsctl("--columns=name,type", "find",
                                    "Interface", "type=geneve")
                assert "geneve" in ports, ports
            ov.static_arp()
            ov.add_panda_flows(traffic.POLICY)
            ov.shape_underlay(hv1, 200e6, len(traffic.DSCP_OF_LEVEL))
            hv1.sb.ofctl("add-flow", "br-int", PROBE)
            assert br_int_has_probe(hv1)

            def trial(tag):
                tmp = tmp_path / tag
                tmp.mkdir()
                n = traffic.inserted(hv1.sb.appctl("panda/show"))
                pkts, sent, captured = traffic.run_and_capture(
                    ov, hv1, str(tmp), a, b)
                traffic.check_marking(pkts, "geneve", a.ip)
                assert sent == captured, tag
                assert all(sent), (tag, sent)
                traffic.check_table(hv1.sb.appctl("panda/show", "1"), a, b,
                                    n)

            trial("first")

            # A full recompute of OVN's flows.
            ctls[0].appctl("recompute")
            central.nbctl("--wait=hv", "sync")
            assert len(hv1.panda_flows()) == 2
            # A recompute changes only the flows ovn-controller installed:
            # the probe is still there (until the next reconnection).
            assert br_int_has_probe(hv1)
            trial("recompute")

            # A restart: the new ovn-controller clears br-int (the probe
            # goes) and installs its flows again; br-phy is not touched.
            n_before = br_int_flow_count(hv1)
            ctls[0].restart()
            ctls[0].wait_connected()
            central.nbctl("--wait=hv", "sync")
            wait_until(lambda: not br_int_has_probe(hv1), 30,
                       "ovn-controller to clear br-int")
            wait_until(lambda: br_int_flow_count(hv1) >= n_before, 30,
                       "ovn-controller to install br-int's flows again")
            assert len(hv1.panda_flows()) == 2
            trial("restart")
        finally:
            for c in ctls:
                c.stop()

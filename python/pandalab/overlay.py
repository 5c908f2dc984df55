"""Hypervisors joined by a Geneve or VXLAN overlay, each a sandboxed
userspace Open vSwitch: the topology of the overlay system tests and of
the OVN recipe (pandalab.ovn; docs/ovn.md).

    with Overlay(build, tunnel="geneve") as ov:
        a = ov.add_vm(ov.hvs[0], "a", "10.0.0.1")
        b = ov.add_vm(ov.hvs[1], "b", "10.0.0.2")
        ov.add_panda_flows(POLICY)          # on every br-phy
        a.run("ping", "-c1", b.ip)

Each hypervisor is one OvsSandbox (its own network namespace, OVS in a
temporary directory) with two bridges, both datapath_type=netdev, as in
OVS's userspace tunnelling recipe (Documentation/howto/userspace-
tunneling.rst):

  br-int   the VMs' ports (veth pairs into their namespaces) and the
           tunnel port (tunnel=geneve|vxlan; or ovn-controller's);
  br-phy   the underlay: port 'phy', one end of the veth pair that joins
           the two hypervisors, and the bridge's own internal port, which
           holds the tunnel endpoint address 192.168.50.N.

A packet a VM sends leaves br-int through the tunnel port: the datapath
pushes the tunnel header and the packet continues, encapsulated, through
br-phy's flows as if it came in on br-phy's LOCAL port.  The panda flows
live there (add_panda_flows): one per tunnel type, matching in_port=LOCAL
and the tunnel's UDP port -- the packets this host encapsulated -- with a
policy that declares that tunnel (tunnels=geneve or tunnels=vxlan), so the
panda action looks into them, classifies them by the inner connection and
writes the level's DSCP into the inner and the outer IP header, and the
skb_priority that selects the queue of the underlay port
(ovs-ext/lib/dpif-netdev-panda.c).  A datagram to those ports from
anywhere else is not a tunnel of this host: without the declaration it is
UDP.  Why there and not on br-int with tos=inherit: docs/ovn.md.

Namespaces are named after ns_prefix ('ov' by default: 'ovv-<id>' for
each hypervisor, 'ovh-<id>-<vm>' for its VMs); stop() removes all of them
and ends every process started here, by pid.
"""

import concurrent.futures
import ipaddress
import re

from pandaovs import paths
from .lab import LabError, panda_qos, parse_sched_show, wait_until
from .sandbox import OvsSandbox, run

TUNNELS = {"geneve": 6081, "vxlan": 4789}
UNDERLAY = "192.168.50.%d"
UNDERLAY_PREFIX = 24
# Geneve adds 50 bytes to the VM's frame (outer Ethernet, IPv4, UDP, 8-byte
# header) plus its options (OVN's: 8 more), VXLAN 50: with a 1500-byte
# underlay the VMs get 1400, as clouds give their VMs less than the fabric.
UNDERLAY_MTU = 1500
VM_MTU = 1400
# The panda flows on br-phy: above its NORMAL flow, their own cookie so
# that they can be listed and replaced without touching anything else
# ("OVLY": outside the controller's prefix 0x50414e44/32, which it treats
# as its own, so neither removes the other's flows).
PANDA_PRIORITY = 100
PANDA_COOKIE = 0x4f564c5900000001


def tunnel_action(action, tunnel):
    """The panda action 'action' ("panda(...)", a policy that declares no
    tunnel) declaring 'tunnel' ("geneve" or "vxlan"): the action of the
    br-phy flow that matches in_port=LOCAL and that tunnel's UDP port, the
    one place where such a datagram is known to be this host's own tunnel
    (docs/ovn.md)."""
    if tunnel not in TUNNELS:
        raise LabError("unknown tunnel type %r (choose from %s)"
                       % (tunnel, ", ".join(sorted(TUNNELS))))
    if not (action.startswith("panda(") and action.endswith(")")):
        raise LabError("expected a panda action \"panda(...)\", got %r"
                       % action)
    if "tunnels=" in action:
        raise LabError("%s declares its tunnels already: add_panda_flows "
                       "declares, in each flow, the tunnel its match selects"
                       % action)
    return "%s,tunnels=%s)" % (action[:-1], tunnel)


class Hypervisor:
    """One sandboxed OVS: .sb (the OvsSandbox), .name, .ip (the tunnel
    endpoint on br-phy), .vms {name: Host}."""

    def __init__(self, sb, name, ip):
        self.sb = sb
        self.name = name
        self.ip = ip
        self.vms = {}

    def mac(self, dev="br-phy"):
        return self.sb.ns.run("cat", "/sys/class/net/%s/address"
                              % dev).strip()

    def sched_show(self, port="phy"):
        """panda-sched/show of 'port', parsed (lab.parse_sched_show)."""
        return parse_sched_show(self.sb.appctl("panda-sched/show", port))

    def level_sent(self, port="phy"):
        """Packets sent from each panda-sched level of 'port'."""
        return [lv.get("sent_p", 0) for lv in self.sched_show(port)["levels"]]

    def panda_flows(self):
        """br-phy's panda flows (dump-flows lines with PANDA_COOKIE)."""
        out = self.sb.ofctl("dump-flows", "br-phy",
                            "cookie=%#x/-1" % PANDA_COOKIE)
        return [line.strip() for line in out.splitlines() if "panda(" in line]


class Overlay:
    """'n' hypervisors (2) joined by one underlay link (n == 2; a switch
    would join more).  tunnel: "geneve", "vxlan", or None when something
    else (ovn-controller) makes the tunnel ports."""

    def __init__(self, build=None, tunnel="geneve", ns_prefix="ov",
                 keep_dir=False):
        if tunnel is not None and tunnel not in TUNNELS:
            raise LabError("unknown tunnel type %r (choose from %s)"
                           % (tunnel, ", ".join(sorted(TUNNELS))))
        self.build = paths.BuildTree(build)
        self.tunnel = tunnel
        self.ns_prefix = ns_prefix
        self.keep_dir = keep_dir
        self.hvs = []

    # -- lifecycle ----------------------------------------------------------
    def start(self):
        try:
            for i in (1, 2):
                self.hvs.append(self._hypervisor("hv%d" % i, UNDERLAY % i))
            self._underlay(*self.hvs)
            if self.tunnel:
                for hv in self.hvs:
                    peer = [o for o in self.hvs if o is not hv][0]
                    hv.sb.vsctl("add-port", "br-int", "tun0", "--", "set",
                                "Interface", "tun0", "type=%s" % self.tunnel,
                                "options:remote_ip=%s" % peer.ip,
                                "options:key=flow")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        # The hypervisors stop side by side: each waits for its daemons to
        # be gone (seconds here: the container's init reaps them late).
        with concurrent.futures.ThreadPoolExecutor(len(self.hvs) or 1) as ex:
            for f in [ex.submit(hv.sb.stop) for hv in self.hvs]:
                f.result()
        self.hvs = []

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _hypervisor(self, name, ip):
        sb = OvsSandbox(self.build.root, keep_dir=self.keep_dir,
                        ns_prefix=self.ns_prefix)
        hv = Hypervisor(sb, name, ip)
        try:
            sb.start()
            # No IPv6 on the bridges' internal ports: no router or neighbour
            # solicitations in the underlay's queues and captures.
            for conf in ("all", "default"):
                sb.ns.run("sysctl", "-qw",
                          "net.ipv6.conf.%s.disable_ipv6=1" % conf)
            sb.add_bridge("br-int")
            sb.add_bridge("br-phy")
            sb.ns.run("ip", "addr", "add", "%s/%d" % (ip, UNDERLAY_PREFIX),
                      "dev", "br-phy")
            sb.ns.run("ip", "link", "set", "br-phy", "up")
        except BaseException:
            sb.stop()
            raise
        return hv

    def _underlay(self, hv1, hv2):
        """The veth pair 'phy' <-> 'phy' between the two hypervisors, each
        end a port of its br-phy; each OVS gets the other's tunnel endpoint
        as a neighbour (tnl/neigh/set) and waits for the route to it, so the
        first tunnelled packet is not dropped for want of either."""
        ends = ["%su" % hv.sb.id for hv in (hv1, hv2)]
        run("ip", "link", "add", ends[0], "type", "veth", "peer", "name",
            ends[1])
        for hv, end in zip((hv1, hv2), ends):
            run("ip", "link", "set", end, "netns", hv.sb.ns.name)
            hv.sb.ns.run("ip", "link", "set", end, "name", "phy")
            hv.sb.ns.run("ip", "link", "set", "phy", "mtu", UNDERLAY_MTU)
            hv.sb.ns.run("ethtool", "-K", "phy", "tx", "off", "tso", "off",
                         "gso", "off", "gro", "off", check=False)
            hv.sb.ns.run("ip", "link", "set", "phy", "up")
            hv.sb.vsctl("add-port", "br-phy", "phy")
        for hv, peer in ((hv1, hv2), (hv2, hv1)):
            hv.sb.appctl("tnl/neigh/set", "br-phy", peer.ip, peer.mac())
            net = ipaddress.ip_interface("%s/%d" % (peer.ip,
                                                    UNDERLAY_PREFIX)).network
            want = re.compile(r"\b%s\b.*\bbr-phy\b" % re.escape(str(net)))
            wait_until(lambda: want.search(hv.sb.appctl("ovs/route/show")),
                       30, "the route to the underlay in %s's OVS" % hv.name)

    # -- VMs ----------------------------------------------------------------
    def add_vm(self, hv, name, ip, mac=None, iface_id=None, ip6=None):
        """VM 'name' (a namespace) with eth0 = ip/24 (MTU VM_MTU), plugged
        into hv's br-int; 'mac' sets its address, 'iface_id' the
        external_ids:iface-id that binds it to an OVN logical port.  IPv6
        is off (no neighbour discovery in the tunnels) unless 'ip6' (an
        address/prefix) is given: then eth0 has that address too, without
        duplicate address detection, and vm.ip6 is the address."""
        vm = hv.sb.add_host(name, "%s/24" % ip, br="br-int", mtu=VM_MTU)
        for conf in ("all", "default", "eth0"):
            vm.run("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=%d"
                   % (conf, 0 if ip6 else 1), check=False)
        vm.ip6 = ip6.split("/")[0] if ip6 else None
        if ip6:
            vm.run("ip", "-6", "addr", "add", ip6, "dev", "eth0", "nodad")
        if mac:
            vm.run("ip", "link", "set", "eth0", "address", mac)
        if iface_id:
            hv.sb.vsctl("set", "Interface", vm.port,
                        "external_ids:iface-id=%s" % iface_id)
        vm.hv = hv
        hv.vms[name] = vm
        return vm

    def static_arp(self):
        """Permanent neighbour entries between all VMs: no ARP in the
        tunnels (an encapsulated ARP is not IP inside, so the panda action
        classifies it by its outer header, as UDP)."""
        vms = [vm for hv in self.hvs for vm in hv.vms.values()]
        macs = {vm.name: vm.run("cat", "/sys/class/net/eth0/address").strip()
                for vm in vms}
        for vm in vms:
            for o in vms:
                if o is not vm:
                    vm.run("ip", "neigh", "replace", o.ip, "lladdr",
                           macs[o.name], "dev", "eth0", "nud", "permanent")

    # -- Panda --------------------------------------------------------------
    def add_panda_flows(self, action, hvs=None):
        """On br-phy of each hypervisor ('hvs', default all): encapsulated
        packets leaving through the underlay (in_port=LOCAL, UDP to the
        Geneve or VXLAN port) get the panda action 'action' (its text,
        "panda(...)", a policy without 'tunnels') declaring the tunnel of
        the flow's port (tunnel_action()), then NORMAL.  Replaces earlier
        panda flows."""
        for hv in hvs or self.hvs:
            hv.sb.ofctl("del-flows", "br-phy",
                        "cookie=%#x/-1" % PANDA_COOKIE)
            for port, tunnel in sorted((p, t) for t, p in TUNNELS.items()):
                hv.sb.ofctl("add-flow", "br-phy",
                            "cookie=%#x,priority=%d,in_port=LOCAL,udp,"
                            "tp_dst=%d,actions=%s,NORMAL"
                            % (PANDA_COOKIE, PANDA_PRIORITY, port,
                               tunnel_action(action, tunnel)))

    def shape_underlay(self, hv, rate_bps, levels, sched=()):
        """panda-sched on hv's underlay port 'phy' with 'levels' strict
        priority levels at 'rate_bps' (panda-qos add; it waits until the
        datapath runs it).  The DSCP is the panda action's."""
        args = ["add", "phy", "--type", "panda-sched", "--rate",
                str(int(rate_bps)), "--levels", str(levels), "--no-dscp"]
        for kv in sched:
            args += ["--set", "%s=%s" % kv]
        panda_qos(hv.sb, *args)

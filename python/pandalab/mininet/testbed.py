"""The testbed's experiment on a Mininet topology.

MininetTestbed is a pandalab.testbed.topology.Testbed whose network is a
MininetSandbox (pandalab.mininet.net) with a dumbbell or leaf-spine
topology (pandalab.mininet.topo) instead of one bridge, so the testbed's
runner, trials, load generators, model, report and plots run on it
unchanged: PM2 serves memcached and the web-search flows, PM1 runs the
clients, the bottleneck is one shaped switch port on the way from PM2 to
PM1.

The pipeline of every switch (two tables):

  table 0  classification, set per scheme (scheme_flows):
             - a port facing a host (the hypervisor's side, where the
               testbed puts it too): TCP goes through panda(policy), which
               writes the level's DSCP and picks its queue; the rest keeps
               queue 0 (a host's own DSCP is not trusted);
             - every other port (the fabric): the DSCP picks the queue,
               one flow per level of the policy (ip_dscp=D -> set_queue:Q,
               the level's pair from the policy's maps), as PIAS and Panda
               assume of the switches: they schedule by DSCP;
             - schemes without a policy (fifo, fq): all in queue 0.
  table 1  forwarding, static, installed once (topo.forwarding()): per
           destination address, one port or a select group that hashes
           each connection onto one of its equal-cost ports.

With 'controller' the project's controller (pandaovs.controller, through
its launcher as an operator runs it; pandalab.controller_harness) runs in
the sandbox's namespace with every bridge attached to it, and owns table
0's panda and host rules: each scheme becomes a controller configuration
(controller_config: per edge switch, per host port, the panda rule and
the plain one; the catch-all) that the controller pushes in one bundle
per bridge, and set_scheme waits until every bridge reports it synced.
Only the DSCP -> queue flows, which a configuration cannot express
(set_queue), and table 1 stay with ovs-ofctl, under cookie 0, which the
controller never touches.

Every switch port runs panda-sched (panda-qos) with the run's K levels:
the bottleneck at the run's rate with the scheme's settings (the
testbed's: buffer, ECN threshold, guard, per-flow queues), every other
port at the fabric rate (default 10x the bottleneck, so the fabric
schedules by level but does not queue) with panda-qos's defaults.
"""

from ..testbed.schemes import SCHEMES
from ..testbed.topology import Testbed, TestbedError
from .net import MininetSandbox

PANDA_PRIORITY = 10
HOST_PRIORITY = 9
DSCP_PRIORITY = 5
FABRIC_FACTOR = 10


class MininetTestbed(Testbed):
    """'topo': a topo.PandaTopo (its pm1 and pm2 play the testbed's PM1
    and PM2); 'fabric_rate_bps': the rate of every switch port but the
    bottleneck (default FABRIC_FACTOR x the bottleneck's)."""

    __test__ = False

    def __init__(self, build_dir, qos, topo, fabric_rate_bps=None, mtu=1500,
                 cc="cubic", keep_dir=False, controller=False):
        if qos.type != "panda-sched":
            raise TestbedError("the Mininet topologies run panda-sched on "
                               "every switch port (--qos panda-sched), not "
                               "%s" % qos.type)
        super().__init__(build_dir, qos, mtu=mtu, cc=cc, keep_dir=keep_dir)
        self.topo = topo
        self.controller = controller
        self.ctl = None         # the ControllerLab, with 'controller'
        self.fabric_rate_bps = int(fabric_rate_bps
                                   or FABRIC_FACTOR * qos.rate_bps)
        if self.fabric_rate_bps < qos.rate_bps:
            raise TestbedError("fabric rate %d bit/s is below the "
                               "bottleneck's %d" % (self.fabric_rate_bps,
                                                    qos.rate_bps))

    # -- the network -------------------------------------------------------
    @property
    def bottleneck(self):
        return self.topo.bottleneck_intf()

    def topology(self):
        d = self.topo.describe()
        d.update(front_end="Mininet %s (OVSSwitch datapath=user, the "
                 "build tree's OVS in a private network namespace)"
                 % _mininet_version(),
                 fabric_rate_bps=self.fabric_rate_bps,
                 fabric_qos="panda-sched on every other switch port at the "
                 "fabric rate, panda-qos defaults",
                 pipeline="table 0: panda action on TCP from hosts, DSCP -> "
                 "queue from the fabric; table 1: static forwarding by "
                 "destination, select groups over equal-cost ports",
                 table0_owner="the project's controller (panda and host "
                 "rules) and ovs-ofctl (DSCP -> queue)" if self.controller
                 else "ovs-ofctl")
        return d

    def start_network(self):
        self.sb = MininetSandbox(self.build.root, self.topo, mtu=self.mtu,
                                 keep_dir=self.keep_dir)
        self.sb.start()
        self.hosts = [self.sb.hosts[h] for h in sorted(self.sb.hosts)]
        for h in self.hosts:
            setattr(self, h.name, h)
        self.pm1 = self.sb.hosts[self.topo.pm1]
        self.pm2 = self.sb.hosts[self.topo.pm2]
        if self.controller:
            # First: attaching the bridges (ControllerLab.attach: the
            # controller, fail mode and protocols in one ovs-vsctl) was
            # seen to empty their flow tables.
            self.start_controller()
        self.install_forwarding()
        for sw in self.topo.switches():
            for port in self.topo.switch_intfs(sw):
                if port != self.bottleneck:
                    self.shape(port, self.fabric_rate_bps, self.levels,
                               qos_type="panda-sched")

    def ofctl(self, *args, **kw):
        """ovs-ofctl in OpenFlow 1.3 (goto_table, groups)."""
        return self.sb.ofctl("-O", "OpenFlow13", *args, **kw)

    def install_forwarding(self):
        """Table 1 of every switch (module docstring)."""
        for sw, routes in sorted(self.topo.forwarding().items()):
            groups = {}
            flows = []
            for host, ports in sorted(routes.items()):
                if len(ports) == 1:
                    action = "output:%d" % ports[0]
                else:
                    gid = groups.setdefault(tuple(ports), len(groups) + 1)
                    action = "group:%d" % gid
                flows.append("table=1,priority=10,ip,nw_dst=%s,actions=%s"
                             % (self.topo.ip(host), action))
            for ports, gid in sorted(groups.items(), key=lambda g: g[1]):
                self.ofctl("add-group", sw, "group_id=%d,type=select,%s" % (
                    gid, ",".join("bucket=output:%d" % p for p in ports)))
            self.ofctl("add-flows", sw, "-", input="\n".join(flows) + "\n")

    def start_controller(self):
        from ..controller_harness import ControllerLab, write_json
        self.ctl = ControllerLab(self.sb.dir, bridges=(), sb=self.sb)
        write_json(self.ctl.config, self.controller_config(None))
        self.ctl.start_controller()
        for sw in self.topo.switches():
            self.ctl.attach(sw)
        self.ctl.wait_synced(len(self.topo.switches()))

    def stop(self):
        if self.ctl is not None:
            self.ctl.stop()     # the controller; the sandbox is ours
            self.ctl = None
        super().stop()

    # -- schemes -----------------------------------------------------------
    def set_scheme(self, scheme, policy=None):
        if scheme not in SCHEMES:
            raise TestbedError("scheme %r does not run on the Mininet "
                               "topologies" % scheme)
        if self.ctl is not None:
            from ..controller_harness import write_json
            from ..lab import LabError
            if SCHEMES[scheme].policy and policy is None:
                raise TestbedError("scheme %s needs a policy" % scheme)
            write_json(self.ctl.config, self.controller_config(policy))
            try:
                self.ctl.wait_synced(len(self.topo.switches()))
            except LabError as e:
                raise TestbedError("controller: %s" % e)
        super().set_scheme(scheme, policy)

    def host_rules(self, sw, policy):
        """(priority, port, policy or None) of table 0 for the host ports
        of 'sw': the panda rule on TCP, the plain rule for the rest."""
        out = []
        for port in sorted(self.topo.host_ports(sw)):
            if policy is not None:
                out.append((PANDA_PRIORITY, port, policy))
            out.append((HOST_PRIORITY, port, None))
        return out

    def scheme_flows(self, scheme, policy):
        out = {}
        for sw in self.topo.switches():
            flows = []
            if self.ctl is None:
                flows.append("table=0,priority=0,actions=goto_table:1")
                for prio, port, pol in self.host_rules(sw, policy):
                    flows.append("table=0,priority=%d,%sin_port=%d,actions=%s"
                                 "goto_table:1" % (
                                     prio, "tcp," if pol else "", port,
                                     "panda(%s)," % pol.text() if pol
                                     else ""))
            out[sw] = flows + dscp_flows(policy)
        return out

    def controller_config(self, policy):
        """The controller's configuration of 'policy' (None: no panda
        rule): table 0's rules but the DSCP flows (module docstring)."""
        rules = [{"name": "fabric", "dpids": "*", "table": 0, "priority": 0,
                  "match": {}, "policy": None, "next": "goto_table:1"}]
        # The topology's switches are the only ones the controller takes.
        switches = ["0x" + self.topo.nodeInfo(sw)["dpid"]
                    for sw in self.topo.switches()]
        for sw in self.topo.switches():
            dpid = "0x" + self.topo.nodeInfo(sw)["dpid"]
            for prio, port, pol in self.host_rules(sw, policy):
                match = {"in_port": port}
                if pol is not None:
                    match.update(eth_type="0x0800", ip_proto=6)
                rules.append({
                    "name": "%s-port%d-%s" % (sw, port,
                                              "panda" if pol else "plain"),
                    "dpids": [dpid], "table": 0, "priority": prio,
                    "match": match,
                    "policy": pol.to_json() if pol else None,
                    "next": "goto_table:1"})
        return {"switches": switches, "rules": rules}

    def replace_flows(self, br, flows):
        """Replaces our (cookie 0) flows of table 0 of 'br': forwarding
        (table 1) and the controller's flows stay."""
        self.ofctl("del-flows", br, "table=0,cookie=0/-1")
        self.ofctl("add-flows", br, "-", input="\n".join(flows) + "\n")

    # -- observation -------------------------------------------------------
    def datapath_interfaces(self):
        out = [("%s:eth0" % h.name, h, "eth0") for h in (self.pm1, self.pm2)]
        for sw in self.topo.switches():
            out += [("ovs:" + p, self.sb.ns, p)
                    for p in self.topo.switch_intfs(sw)]
        return out


def dscp_flows(policy):
    """Table 0 flows of a fabric port: each level's DSCP -> its queue (the
    first level's when two share a DSCP).  None: no flows (queue 0)."""
    if policy is None:
        return []
    seen = {}
    for dscp, queue in zip(policy.dscp, policy.queues):
        seen.setdefault(dscp, queue)
    return ["table=0,priority=%d,ip,ip_dscp=%d,actions=set_queue:%d,"
            "goto_table:1" % (DSCP_PRIORITY, d, q) for d, q in seen.items()]


def _mininet_version():
    try:
        from mininet.net import VERSION
        return VERSION
    except ImportError:
        return "?"

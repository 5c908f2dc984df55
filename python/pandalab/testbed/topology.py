"""The testbed topology (thesis Fig. 4.4, on one machine).

    PM2 (10.0.0.2)                                   PM1 (10.0.0.1)
    memcached :11211  --eth0==veth--[ br0 (OVS,  ]--veth==eth0--  panda-mc-client
    panda-fg-server :5001           [ netdev DP) ]  ^             panda-fg-client
                                                    |
                                  bottleneck: K-level QoS (panda-sched or
                                  linux-htb, made by panda-qos) on the OVS
                                  port towards PM1

A pandalab.lab.Lab with two hosts: OVS in its own network namespace with
run/db/log directories in a temporary directory, PM1 and PM2 in two more.
Every process is started by us and ended by its pid; stop() is safe to
call twice and on a half-built testbed.

With datapath "bpf" (testbed/run.py --datapath bpf) the levels are the tc
eBPF classifier's (bpf/panda-cls.bpf.c, driven by panda-bpf), not the
panda action's: OVS only forwards, and the classifier runs on the egress
of OVS's port towards PM1, before its linux-htb QoS (the same panda-qos
--type htb as --qos htb), as it would on a kernel-datapath hypervisor's
uplink: the VM's (PM2's) packets cross the switch and meet the classifier
and the queues where they leave the host.  Only who classifies differs
from the userspace datapath's htb runs.

    PM2 --eth0==veth--[ br0 (OVS, plain forwarding) ]--port: panda_cls
        -> linux-htb 1:1..1:K ==veth==eth0-- PM1
"""

import os
import re
import shutil
import tempfile

from pandaovs import bpfcls
from .. import cc as ccs
from ..lab import (FG_PORT, MEMCACHED_PORT, Lab, LabError, PortConfig,
                   wait_until)
from ..sandbox import run
from . import conditions
from .schemes import FRAME, SCHEMES

PM1_IP = "10.0.0.1"
PM2_IP = "10.0.0.2"
PM1_OFPORT = 1
PM2_OFPORT = 2
OFFLOADS = ("tx-checksumming", "tcp-segmentation-offload",
            "generic-segmentation-offload", "generic-receive-offload",
            "large-receive-offload")

CONN_RE = re.compile(r"^\s*(\S+):(\d+) > (\S+):(\d+) counter=(-?\d+)"
                     r"(?: level=(\d+))?")


class TestbedError(RuntimeError):
    pass


def parse_panda_show(text):
    """panda/show output -> {policy_id: {"action", "packets_per_level",
    "connections": [{src, sport, dst, dport, counter, level}]}}."""
    out = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"\s*policy (\d+):\s*(?:panda\((.*)\))?\s*$", line)
        if m:
            cur = {"action": m.group(2), "packets_per_level": None,
                   "connections": []}
            out[int(m.group(1))] = cur
            continue
        if cur is None:
            continue
        if "packets per level:" in line:
            vals = line.split("packets per level:")[1].split()
            cur["packets_per_level"] = [int(v.split(":")[1]) for v in vals]
            continue
        m = CONN_RE.match(line)
        if m:
            cur["connections"].append({
                "src": m.group(1), "sport": int(m.group(2)),
                "dst": m.group(3), "dport": int(m.group(4)),
                "counter": int(m.group(5)),
                "level": int(m.group(6)) if m.group(6) else None})
    return out


class Testbed(Lab):
    """PM1 and PM2 joined through the patched OVS; the OVS port towards PM1
    is the bottleneck, with the egress of 'qos' (a schemes.QosConfig:
    panda-sched or linux-htb, K levels, shaped to the link rate); 'cc' is
    the congestion-control condition of every connection between PM1 and
    PM2 (conditions.py), whose algorithm must be registered when the
    testbed starts (pandalab.cc.session does that for the BPF DCTCP).
    'datapath': "userspace" (the panda action in OVS) or "bpf" (the tc
    classifier on the egress of the bottleneck port, OVS only forwarding:
    the module's docstring)."""

    __test__ = False        # not a pytest class, whatever imports it

    DATAPATHS = ("userspace", "bpf")

    def __init__(self, build_dir, qos, mtu=1500, cc="cubic",
                 keep_dir=False, ports=PortConfig(), datapath="userspace"):
        if datapath not in self.DATAPATHS:
            raise TestbedError("unknown datapath %r" % datapath)
        if datapath == "bpf" and (qos.type != "htb"
                                  or ports.type != "system"):
            raise TestbedError("--datapath bpf needs --qos htb and system "
                               "ports: the queues are the kernel's")
        self.datapath = datapath
        self.cls = None             # bpfcls.Classifier (datapath bpf)
        self.cls_attached = False
        self.bpffs = None           # its BPF filesystem, mounted here
        try:
            super().__init__(build_dir, hosts=[("pm1", PM1_IP, PM1_OFPORT),
                                               ("pm2", PM2_IP, PM2_OFPORT)],
                             mtu=mtu, keep_dir=keep_dir, ports=ports)
        except LabError as e:
            raise TestbedError(str(e))
        self.qos = qos
        self.rate_bps = qos.rate_bps
        self.levels = qos.levels
        self.cc = cc
        try:
            self.condition = conditions.parse(cc)
        except conditions.ConditionError as e:
            raise TestbedError(str(e))
        self.cc_impl = None         # pandalab.cc.Implementation, at start
        self.queue_pkts = qos.queue_pkts
        self.scheme = None
        self.sched_applied = None   # panda-sched settings on the port
        self.egress = None          # the scheme whose egress settings run
        self.memcached = self.fg = None

    @property
    def bottleneck(self):
        """The shaped switch port: the OVS port towards PM1 (with datapath
        bpf, the classifier runs on its egress too)."""
        return self.pm1.port

    def topology(self):
        """What result.json's metadata records about the topology."""
        topo = {"kind": "namespace testbed: PM1 and PM2 on one OVS bridge",
                "bottleneck": "br0 port %d (%s) towards pm1"
                              % (PM1_OFPORT, self.bottleneck)}
        if self.datapath == "bpf":
            topo["classifier"] = ("tc eBPF classifier panda_cls on the "
                                  "egress of %s; OVS only forwards"
                                  % self.bottleneck)
        return topo

    def start_network(self):
        """OVS, the bridge and the hosts (Lab.start)."""
        Lab.start(self)

    def start(self):
        try:
            self.start_network()
            for h in (self.pm1, self.pm2):
                self.set_cc(h)
            if self.datapath == "bpf":
                self.start_bpf()
            if self.qos.type == "htb":
                # --no-dscp: the panda action writes each level's DSCP
                # itself.
                self.shape(self.bottleneck, self.rate_bps, self.levels,
                           queue_pkts=self.queue_pkts, qos_type="htb",
                           queue_bytes=self.queue_pkts * FRAME
                           if self.qos.buffer_bytes else None)
            # Static forwarding: no learning, no flooding, same path for
            # every scheme (panda-sched: its QoS settings, too).
            self.set_scheme("fifo")
            self.memcached = self.start_memcached(
                self.pm2, MEMCACHED_PORT, ("-m", "256", "-c", "1024"))
            self.fg = self.fg_server(self.pm2, FG_PORT)
        except LabError as e:
            self.stop()
            raise TestbedError(str(e))
        except BaseException:
            self.stop()
            raise
        return self

    def start_bpf(self):
        """Datapath bpf: the classifier loaded in a BPF filesystem of our
        own (set_scheme() attaches it to the bottleneck port)."""
        why = bpfcls.missing(self.build)
        if why:
            raise TestbedError("--datapath bpf: %s" % why)
        self.bpffs = tempfile.mkdtemp(prefix="panda-testbed-bpffs-")
        run("mount", "-t", "bpf", "bpf", self.bpffs)
        self.cls = bpfcls.Classifier(self.build, pin_dir=os.path.join(
            self.bpffs, "panda"))
        why = self.cls.probe()
        if why:
            raise TestbedError("--datapath bpf: panda-bpf probe: %s" % why)

    def stop_bpf(self):
        if self.cls is not None:
            self.cls.run("detach", "--all", check=False)
            self.cls = None
            self.cls_attached = False
        if self.bpffs:
            run("umount", self.bpffs, check=False)
            shutil.rmtree(self.bpffs, ignore_errors=True)
            self.bpffs = None

    def stop(self):
        self.stop_bpf()
        Lab.stop(self)

    def set_cc(self, host):
        """The condition's congestion control and ECN setting for every
        connection of 'host' to the other hosts.  A namespace may only
        make an algorithm of net.ipv4.tcp_allowed_congestion_control its
        default (cubic is usually not in that list), but a route's congctl
        attribute is not restricted, so the algorithm goes on the subnet
        route, under the name it is registered as (the BPF DCTCP's is
        panda_dctcp).  ECN: net.ipv4.tcp_ecn per namespace, set explicitly
        (conditions.Condition.tcp_ecn): PM1 opens every connection, so its
        setting decides whether the connections are ECN-capable; DCTCP
        asks by itself, and its route says so too."""
        cond = self.condition
        impl = ccs.resolve(cond.algorithm)
        if impl is None:
            raise TestbedError(
                "congestion control %s is not registered (tcp_available_"
                "congestion_control: %s); the runner registers it for the "
                "run (pandalab.cc.session)"
                % (cond.algorithm, " ".join(ccs.available())))
        self.cc_impl = impl
        args = ["ip", "route", "replace", "10.0.0.0/24", "dev", "eth0",
                "congctl", impl.algorithm]
        if cond.algorithm in conditions.ECN_NATIVE:
            args += ["features", "ecn"]
        host.run(*args)
        host.run("sysctl", "-qw", "net.ipv4.tcp_ecn=%d" % cond.tcp_ecn)

    def check_servers(self):
        for name, p in (("memcached", self.memcached),
                        ("panda-fg-server", self.fg.proc)):
            if p.poll() is not None:
                raise TestbedError("%s exited (status %d)"
                                   % (name, p.returncode))

    # -- schemes --------------------------------------------------------
    def set_scheme(self, scheme, policy=None):
        """The OpenFlow and (panda-sched) the egress settings of 'scheme'
        (schemes.SCHEMES).  Schemes without a policy: plain forwarding,
        everything in queue 0.  pias/fish/panda*: the panda action with
        'policy' (a pandaovs.policy.Policy) on TCP from PM2 towards PM1,
        which sets DSCP and queue per level.  "prio" (calibration, and the
        10g profile's collection): an oracle that puts memcached in the top
        queue and the web-search flows in the lowest one."""
        if scheme == "prio":
            egress = "pias"     # strict FIFO levels, as on HTB
        elif scheme in SCHEMES:
            if SCHEMES[scheme].policy and policy is None:
                raise TestbedError("scheme %s needs a policy" % scheme)
            egress = scheme
        else:
            raise TestbedError("unknown scheme %r" % scheme)
        flows = self.scheme_flows(scheme, policy)
        if self.datapath == "bpf":
            self.set_bpf_scheme(scheme, policy)
        if self.qos.type == "panda-sched":
            settings = self.qos.sched_settings(egress)
            if settings != self.sched_applied:
                try:
                    self.shape(self.bottleneck, self.rate_bps, self.levels,
                               qos_type="panda-sched", sched=settings)
                except RuntimeError as e:
                    raise TestbedError("panda-sched on %s: %s"
                                       % (self.bottleneck, e))
                self.sched_applied = settings
        self.egress = egress
        for br, brflows in flows.items():
            self.replace_flows(br, brflows)
        if policy is not None and self.datapath != "bpf":
            try:
                self.sb.appctl("panda/flush")
            except RuntimeError:
                pass
        self.scheme = scheme

    def set_bpf_scheme(self, scheme, policy):
        """Datapath bpf: the classifier on the bottleneck port with
        'policy' for the schemes that have one (set-policy, then flush:
        each trial starts with an empty table, as panda/flush gives the
        panda action), none for the others (every packet in the default
        class, queue 0)."""
        if scheme == "prio":
            raise TestbedError("the prio oracle picks queues with OpenFlow "
                               "set_queue: not with --datapath bpf")
        port, ns = self.bottleneck, self.sb.ns.name
        try:
            if policy is None:
                if self.cls_attached:
                    self.cls.detach([port], netns=ns)
                    self.cls_attached = False
                return
            if not self.cls_attached:
                self.cls.attach([port], netns=ns, policy_text=policy.text())
                self.cls_attached = True
            else:
                self.cls.set_policy(policy.text())
            self.cls.run("flush")
        except bpfcls.BpfError as e:
            raise TestbedError("panda-bpf: %s" % e)

    def scheme_flows(self, scheme, policy):
        """{bridge: [flow]} of 'scheme' (set_scheme); with datapath bpf,
        plain forwarding whatever the scheme."""
        flows = ["priority=1,in_port=%d,actions=output:%d"
                 % (PM1_OFPORT, PM2_OFPORT),
                 "priority=1,in_port=%d,actions=output:%d"
                 % (PM2_OFPORT, PM1_OFPORT)]
        if self.datapath == "bpf":
            pass
        elif scheme == "prio":
            flows.append("priority=10,tcp,in_port=%d,tp_src=%d,"
                         "actions=set_queue:0,output:%d"
                         % (PM2_OFPORT, MEMCACHED_PORT, PM1_OFPORT))
            flows.append("priority=10,tcp,in_port=%d,tp_src=%d,"
                         "actions=set_queue:%d,output:%d"
                         % (PM2_OFPORT, FG_PORT, self.levels - 1,
                            PM1_OFPORT))
        elif SCHEMES[scheme].policy:
            flows.append("priority=10,tcp,in_port=%d,actions=panda(%s),"
                         "output:%d" % (PM2_OFPORT, policy.text(),
                                        PM1_OFPORT))
        return {"br0": flows}

    def replace_flows(self, br, flows):
        """Replaces every flow of bridge 'br' with 'flows'."""
        self.sb.ofctl("del-flows", br)
        self.sb.ofctl("add-flows", br, "-", input="\n".join(flows) + "\n")

    def qos_record(self):
        """The "qos" of a trial of the current scheme: its settings
        (schemes.QosConfig.record) and, for panda-sched, every key in
        effect as the datapath reports it."""
        rec = self.qos.record(self.egress)
        if self.datapath == "bpf":
            rec["datapath"] = "bpf"
            rec["classifier"] = self.cls.show() if self.cls_attached \
                else None
        if self.qos.type == "panda-sched":
            rec["in_effect"] = self.qos_status(self.bottleneck).get("config")
        return rec

    def panda_available(self):
        """True if this OVS build has the panda action (datapath bpf: the
        classifier, which start() checked)."""
        if self.datapath == "bpf":
            return self.cls is not None
        try:
            return "panda/show" in self.sb.appctl("list-commands")
        except RuntimeError:
            return False

    def panda_show(self, policy_id=None):
        """panda/show [ID], parsed (parse_panda_show); {} on error."""
        if self.datapath == "bpf":
            return self.bpf_show()
        args = ["panda/show"] + ([str(policy_id)] if policy_id else [])
        try:
            return parse_panda_show(self.sb.appctl(*args))
        except RuntimeError:
            return {}

    def bpf_show(self):
        """The classifier's state in panda_show()'s form (no per-connection
        list: panda-bpf show counts connections, it does not list them);
        {} when it is not attached or cannot be read."""
        if not self.cls_attached:
            return {}
        try:
            show = self.cls.show()
        except bpfcls.BpfError:
            return {}
        pol = show.get("policy")
        if not pol:
            return {}
        return {pol["id"]: {"action": pol["text"],
                            "packets_per_level":
                                show["packets"][:self.levels],
                            "connections": []}}

    # -- observation ----------------------------------------------------
    SENDER_COUNTERS = ("TcpOutSegs", "TcpRetransSegs", "TcpExtTCPTimeouts")

    def sender_tcp(self):
        """PM2's TCP counters (it sends the memcached responses and the
        web-search data): segments sent, retransmitted, and RTOs."""
        return self.nstat_counters(self.pm2, *self.SENDER_COUNTERS)

    def bottleneck_counters(self):
        """Counters of the bottleneck (the port towards PM1): the HTB
        classes ({"tc_classes": {classid: {bytes, packets, dropped,
        backlog}}}) or the panda-sched levels ({"sched": [{sent_p, sent_b,
        drop-limit, mark-ecn, guard, ...}], "backlog_p"})."""
        if self.qos.type == "htb":
            return {"tc_classes": self.tc_classes(self.bottleneck)}
        show = self.sched_show(self.bottleneck)
        return {"sched": show["levels"],
                "backlog_p": show["port"].get("backlog_p", 0)}

    def wait_drained(self, timeout=60):
        """Waits until no packet is queued at the bottleneck (the previous
        trial's packets have left), however long that takes the machine."""
        def drained():
            c = self.bottleneck_counters()
            if "sched" in c:
                return not c["backlog_p"]
            return not any(v.get("backlog")
                           for v in c["tc_classes"].values())
        wait_until(drained, timeout, "the queues of %s to drain"
                   % self.bottleneck)

    def offload_state(self):
        """ethtool -k of every interface on the data path."""
        out = {}
        for where, ns, dev in self.datapath_interfaces():
            text = ns.run("ethtool", "-k", dev, check=False)
            feats = {}
            for line in text.splitlines():
                m = re.match(r"\s*([a-z0-9-]+): (on|off)", line)
                if m and m.group(1) in OFFLOADS:
                    feats[m.group(1)] = m.group(2)
            out[where] = feats
        return out

    def datapath_interfaces(self):
        """[(label, namespace, device)] of every interface packets between
        PM1 and PM2 cross."""
        return [("pm1:eth0", self.pm1, "eth0"), ("pm2:eth0", self.pm2, "eth0"),
                ("ovs:" + self.pm1.port, self.sb.ns, self.pm1.port),
                ("ovs:" + self.pm2.port, self.sb.ns, self.pm2.port)]

    def ovs_version(self):
        out = run(self.sb.bin("vswitchd/ovs-vswitchd"), "--version")
        return out.splitlines()[0].strip() if out else "unknown"

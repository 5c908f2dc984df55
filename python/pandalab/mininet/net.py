"""Mininet over the patched Open vSwitch, in a sandbox of its own.

MininetSandbox is a pandalab.sandbox.OvsSandbox (ovsdb-server and
ovs-vswitchd of the build tree in a private network namespace, run/db/log
directories in a temporary directory) in which Mininet builds a topology
(pandalab.mininet.topo) of OVSSwitch(datapath='user') bridges.

One OVS per network namespace, and Mininet never meets another OVS:

  - Mininet runs inside the sandbox's namespace: the calling thread enters
    it (Netns.entered) for every call into Mininet, so the switches'
    shells, the veth pairs' switch sides and the bridges' internal ports
    are all there, next to the sandbox's ovs-vswitchd, which needs them in
    its own namespace;
  - Mininet runs ovs-vsctl by name, through its switches' shells
    (OVSSwitch.vsctl, start, stop) and directly (OVSSwitch.setup,
    batchStartup, batchShutdown), and ovs-vsctl finds its database through
    $OVS_RUNDIR.  While Mininet runs, PATH starts with the build tree's
    utilities/ and OVS_RUNDIR (and the other OVS_*DIR) name the sandbox's
    directory; the shells inherit both when they start.  Before anything
    is built, _check_vsctl() makes sure the ovs-vsctl Mininet will find is
    the build tree's and reaches our database (Mininet's own check,
    OVSSwitch.setup(), would exit the process otherwise);
  - Mininet.init() is skipped: its fixLimits() raises machine-wide sysctls
    (fs.file-max, net.core.[rw]mem_max, kernel.pty.max, ...), which would
    change every other test and OVS on the machine and make results
    incomparable with the namespace testbed's; the testbed needs none of
    them;
  - nothing here calls Mininet's cleanup (mininet.clean, 'mn -c'): it
    deletes every bridge of whatever OVS it reaches and kills processes
    by name.  stop() ends what this sandbox started: Mininet's stop()
    (links, then 'ovs-vsctl del-br' of our bridges in our database, then
    our switch and host shells by their pids and process groups), then
    the OVS daemons by pid, then the namespace.

Hosts are Mininet hosts (a shell in a namespace of its own); MnHost gives
them the interface of pandalab.sandbox hosts (run, popen, cmd; name, ip,
port: the switch side of eth0), so the lab and testbed code runs on them
unchanged.
"""

import contextlib
import functools
import os
import shutil

from ..sandbox import Netns, OvsSandbox, run

try:
    from mininet.link import Link
    from mininet.net import Mininet
    from mininet.node import Host, OVSSwitch
    IMPORT_ERROR = None
except ImportError as e:      # reported by available(), not at import
    Mininet = None
    IMPORT_ERROR = e

OFFLOADS_OFF = ("tx", "off", "tso", "off", "gso", "off", "gro", "off")
OF_VERSIONS = "OpenFlow10,OpenFlow13"


def available():
    """None if Mininet can be used, else why not."""
    if IMPORT_ERROR is not None:
        return ("mininet is not importable (%s): apt install mininet "
                "(./install-deps.sh), run with /usr/bin/python3"
                % IMPORT_ERROR)
    if not shutil.which("mnexec"):
        return "mnexec (Debian's mininet package) is not on PATH"
    return None


class MnHost(Netns):
    """A Mininet host as a sandbox host: commands run in its namespace
    through 'mnexec -a PID' (Mininet's own way, Node.popen)."""

    def __init__(self, node, cidr, port, mtu):
        # No Netns.__init__: Mininet made the namespace (and ends it).
        self.node = node
        self.name = node.name
        self.pid = node.pid
        self.cidr = cidr
        self.ip = cidr.split("/")[0]
        self.port = port
        self.mtu = mtu

    def cmd(self, *cmd):
        return ["mnexec", "-a", str(self.pid)] + [str(c) for c in cmd]

    def delete(self):
        pass


class MininetSandbox(OvsSandbox):
    """'topo': a pandalab.mininet.topo.PandaTopo.  start() starts OVS, then
    Mininet with the topology (bridges datapath_type=netdev, fail_mode
    secure, OpenFlow 1.0 and 1.3, every port's ofport as the topology
    numbers it), then sets up the hosts as the testbed's: MTU, offloads
    off on both sides of every link, no IPv6, permanent neighbour
    entries.  The sandbox's 'hosts' are MnHosts by name.  Nothing is
    forwarded until flows are added (fail_mode=secure, no controller)."""

    def __init__(self, build_dir, topo, mtu=1500, keep_dir=False):
        super().__init__(build_dir, keep_dir=keep_dir)
        self.topo = topo
        self.mtu = mtu
        self.net = None

    @contextlib.contextmanager
    def _mininet(self):
        """The namespace and the environment Mininet runs in."""
        saved = {k: os.environ.get(k) for k in
                 ("PATH", "OVS_RUNDIR", "OVS_DBDIR", "OVS_LOGDIR",
                  "OVS_SYSCONFDIR", "OVS_PKGDATADIR")}
        os.environ.update({k: self.env[k] for k in saved if k != "PATH"})
        os.environ["PATH"] = "%s%s%s" % (
            os.path.join(self.ovs, "utilities"), os.pathsep,
            saved["PATH"] or "/usr/sbin:/usr/bin:/sbin:/bin")
        try:
            with self.ns.entered():
                yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def start(self, other_config=None):
        why = available()
        if why:
            raise RuntimeError(why)
        super().start(other_config)
        try:
            with self._mininet():
                self._check_vsctl()
                # Mininet.init() would raise machine-wide sysctls (module
                # docstring); the rlimits it also raises are not needed.
                Mininet.inited = True
                switch = functools.partial(OVSSwitch, datapath="user",
                                           failMode="secure",
                                           protocols=OF_VERSIONS)
                self.net = Mininet(topo=self.topo, switch=switch, host=Host,
                                   link=Link, controller=None, build=False,
                                   autoSetMacs=True, inNamespace=False)
                self.net.build()
                self.net.start()
            self._setup_links()
        except BaseException:
            self.stop()
            raise
        return self

    def _check_vsctl(self):
        """The ovs-vsctl Mininet will run is the build tree's, and it
        reaches the sandbox's database (OVSSwitch.setup() would exit the
        process if it did not)."""
        found = shutil.which("ovs-vsctl")
        mine = self.bin("utilities/ovs-vsctl")
        if not found or os.path.realpath(found) != os.path.realpath(mine):
            raise RuntimeError("Mininet would run ovs-vsctl %s, not %s"
                               % (found, mine))
        run(found, "--timeout=10", "show")

    def _setup_links(self):
        topo = self.topo
        for s in topo.switches():
            for intf in topo.switch_intfs(s):
                self.ns.run("ip", "link", "set", intf, "mtu", self.mtu)
                self.ns.run("ethtool", "-K", intf, *OFFLOADS_OFF,
                            check=False)
        for name in topo.hosts():
            node = self.net.get(name)
            sw = next(s for s in topo.switches()
                      if name in topo.neighbours(s).values())
            h = MnHost(node, topo.nodeInfo(name)["ip"], topo.intf(sw, name),
                       self.mtu)
            h.run("ip", "link", "set", "eth0", "mtu", self.mtu)
            # TCP through the userspace datapath stalls with tx checksum
            # offload on the sending veth; TSO/GSO/GRO off as on the
            # testbed (sandbox.add_host).
            h.run("ethtool", "-K", "eth0", *OFFLOADS_OFF, check=False)
            for conf in ("all", "default", "eth0"):
                h.run("sysctl", "-qw",
                      "net.ipv6.conf.%s.disable_ipv6=1" % conf, check=False)
            self.hosts[name] = h
        macs = {n: self.net.get(n).MAC() for n in topo.hosts()}
        for h in self.hosts.values():
            for other, o in self.hosts.items():
                if o is not h:
                    h.run("ip", "neigh", "replace", o.ip, "lladdr",
                          macs[other], "dev", "eth0", "nud", "permanent")

    def mininet(self, fn, *args, **kw):
        """Calls fn(self.net, *args) inside Mininet's namespace and
        environment (e.g. the Mininet CLI)."""
        with self._mininet():
            return fn(self.net, *args, **kw)

    def stop(self):
        net, self.net = self.net, None
        if net is not None and self.ns is not None:
            try:
                with self._mininet():
                    net.stop()
            finally:
                self.hosts = {}
                super().stop()
        else:
            self.hosts = {}
            super().stop()

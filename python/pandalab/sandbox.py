"""Network-namespace sandboxes for the patched Open vSwitch.

One OvsSandbox runs ovsdb-server and ovs-vswitchd (userspace datapath) in a
private network namespace of its own, with run/db/log directories in a
temporary directory, so it never meets another OVS on the machine (the
userspace datapath's 'ovs-netdev' tap is per namespace).  Hosts are further
namespaces joined to the bridge by veth pairs.  Everything is named after a
short random id, and stop() ends only the processes this sandbox started
(by pid) and deletes only the namespaces it created.

    with OvsSandbox(build_dir) as sb:
        sb.add_bridge("br0")
        a = sb.add_host("a", "10.0.0.1/24")
        b = sb.add_host("b", "10.0.0.2/24")
        a.run("ping", "-c1", "10.0.0.2")

Product code (the testbed, the lab, the benchmarks) and the tests share it.
"""

import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time

from pandaovs import qos


def run(*cmd, check=True, capture=True, timeout=60, env=None, input=None):
    """Runs a command; returns its stdout (str).  Raises with stderr."""
    res = subprocess.run([str(c) for c in cmd], capture_output=capture,
                         text=True, timeout=timeout, env=env, input=input)
    if check and res.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (
            " ".join(str(c) for c in cmd), res.returncode,
            (res.stderr or "").strip() if capture else ""))
    return res.stdout if capture else ""


def is_root():
    return os.geteuid() == 0


def end_process(p, sig=signal.SIGTERM, timeout=5):
    """Ends a process we started (a Popen), by its pid: 'sig', then SIGKILL
    after 'timeout' seconds.  Returns its exit status."""
    if p.poll() is not None:
        return p.returncode
    try:
        p.send_signal(sig)
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.wait(timeout=5)
    except ProcessLookupError:
        return p.poll()


def end_pid(pid, timeout=5):
    """Ends a daemon we started (not our child: it detached) by its pid:
    SIGTERM, then SIGKILL if it is still there after 'timeout' seconds."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# The parser of 'tc -s class show' lives in the product beside the htb
# plan it reads back (pandaovs.bpfcls needs it, and the product never
# imports the lab).
parse_tc_classes = qos.parse_tc_classes


class Netns:
    """A network namespace created (and deleted) by us."""

    def __init__(self, name):
        self.name = name
        run("ip", "netns", "add", name)
        self.run("ip", "link", "set", "lo", "up")

    def cmd(self, *cmd):
        return ["ip", "netns", "exec", self.name] + [str(c) for c in cmd]

    def run(self, *cmd, **kw):
        return run(*self.cmd(*cmd), **kw)

    def popen(self, *cmd, **kw):
        return subprocess.Popen(self.cmd(*cmd), **kw)

    def delete(self):
        run("ip", "netns", "del", self.name, check=False)

    @contextlib.contextmanager
    def entered(self):
        """Runs the calling thread in this namespace for the 'with' body
        (setns(2); Python 3.11 has no os.setns), and back in the one it
        was in afterwards, whatever happens.  For libraries that create
        interfaces and start processes in "the" network namespace of the
        process that calls them (Mininet): their children inherit it.
        Only the calling thread moves, so call it from the thread that
        runs the library."""
        old = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            new = os.open("/run/netns/%s" % self.name, os.O_RDONLY)
            try:
                _setns(new, self.name)
            finally:
                os.close(new)
            try:
                yield self
            finally:
                _setns(old, "the original namespace")
        finally:
            os.close(old)


_CLONE_NEWNET = 0x40000000


def _setns(fd, what):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, _CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "setns into %s: %s" % (what, os.strerror(err)))


class Host(Netns):
    """A namespace with one interface, eth0, plugged into the bridge."""

    def __init__(self, name, ip, mtu=1500):
        super().__init__(name)
        self.ip = ip.split("/")[0]
        self.cidr = ip
        self.mtu = mtu


def host_offloads(tso):
    """ethtool -K arguments for a host's eth0.

    Without userspace TSO in OVS (tso false) everything is off: the
    AF_PACKET socket of a netdev-linux port then receives a packet without
    its virtio-net header, so a packet with a partial checksum (tx checksum
    offload) leaves OVS with a wrong checksum and TCP stalls, and a GSO
    super-packet is dropped as too big (thesis 1G profile: MTU-sized
    packets).

    With userspace TSO (OVS other_config:userspace-tso-enable=true) the
    socket reads and writes a virtio-net header (PACKET_VNET_HDR): a
    super-packet of up to 64 KB arrives whole with its GSO type and the
    "needs checksum" flag, crosses the datapath as one packet (the panda
    action sees its size before segmentation) and is handed back to the
    kernel with the same header, so the host may send with tx checksum,
    TSO and GSO on and receive with GRO on (thesis 10G profile)."""
    state = "on" if tso else "off"
    return ["tx", state, "tso", state, "gso", state, "gro", state]


# The switch side of each veth: TSO and tx checksum off, so the kernel
# segments a super-packet that OVS sends, and finishes its checksums, in
# software after the port's qdisc, at the point where a NIC would do it in
# hardware: a capture on the far host shows the MTU-sized frames of the
# wire, each with the DSCP the datapath wrote, and the qdisc classifies
# and shapes the whole super-packet at once (like a NIC's TSO queue).  GRO
# off: OVS receives what the host sent, without re-coalescing.
SWITCH_PORT_OFFLOADS = ["tx", "off", "tso", "off", "gso", "off",
                        "gro", "off"]


class OvsSandbox:
    """'ns_prefix' starts the names of the namespaces it makes: the
    switch's is '<ns_prefix>v-<id>', each host's '<ns_prefix>h-<id>-<name>'
    (several labs can then tell theirs apart; ip netns list)."""

    def __init__(self, build_dir, tag=None, keep_dir=False, ns_prefix="po"):
        self.build = os.path.abspath(build_dir)
        self.ovs = os.path.join(self.build, "ovs", "build")
        self.src = os.path.join(self.build, "ovs", "src")
        self.id = tag or secrets.token_hex(3)
        self.dir = tempfile.mkdtemp(prefix="panda-ovs-%s-" % self.id)
        self.keep_dir = keep_dir
        self.ns_prefix = ns_prefix
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_DBDIR=self.dir,
                        OVS_LOGDIR=self.dir, OVS_SYSCONFDIR=self.dir,
                        OVS_PKGDATADIR=os.path.join(self.src))
        self.ns = None
        self.hosts = {}
        self.pids = []
        self.daemon_pids = {}           # name: pid
        self.started = False

    # -- tools ------------------------------------------------------------
    def bin(self, rel):
        path = os.path.join(self.ovs, rel)
        if not os.access(path, os.X_OK):
            raise FileNotFoundError("%s not built (run make)" % path)
        return path

    def _tool(self, rel, *args, **kw):
        return run(*self.ns.cmd(self.bin(rel), *args), env=self.env, **kw)

    def vsctl(self, *args, **kw):
        return self._tool("utilities/ovs-vsctl", "--timeout=30", *args, **kw)

    def ofctl(self, *args, **kw):
        return self._tool("utilities/ovs-ofctl", *args, **kw)

    def appctl(self, *args, **kw):
        return self._tool("utilities/ovs-appctl", *args, **kw)

    # -- lifecycle --------------------------------------------------------
    def start(self, other_config=None):
        self.ns = Netns("%sv-%s" % (self.ns_prefix, self.id))
        # The switch's ports carry the hosts' traffic only: without this,
        # the kernel's IPv6 on each switch-side veth sends MLD reports and
        # router solicitations of its own, straight to the port's qdisc,
        # beside whatever OVS sends and schedules.
        for conf in ("all", "default"):
            self.ns.run("sysctl", "-qw",
                        "net.ipv6.conf.%s.disable_ipv6=1" % conf, check=False)
        db = os.path.join(self.dir, "conf.db")
        run(self.bin("ovsdb/ovsdb-tool"), "create", db,
            os.path.join(self.src, "vswitchd", "vswitch.ovsschema"))
        self._daemon("ovsdb/ovsdb-server", db,
                     "--remote=punix:%s" % os.path.join(self.dir, "db.sock"),
                     name="ovsdb-server")
        self.vsctl("--no-wait", "init")
        for k, v in (other_config or {}).items():
            self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                       "other_config:%s=%s" % (k, v))
        self._daemon("vswitchd/ovs-vswitchd", name="ovs-vswitchd")
        self.started = True
        return self

    def _daemon(self, rel, *args, name):
        pidfile = os.path.join(self.dir, name + ".pid")
        log = os.path.join(self.dir, name + ".log")
        self._tool(rel, *args, "--pidfile=%s" % pidfile, "--detach",
                   "--no-chdir", "--log-file=%s" % log, "-vconsole:off")
        with open(pidfile) as f:
            self.pids.append(int(f.read().strip()))
        self.daemon_pids[name] = self.pids[-1]

    def log(self, name="ovs-vswitchd"):
        with open(os.path.join(self.dir, name + ".log")) as f:
            return f.read()

    def stop(self):
        for pid in reversed(self.pids):
            end_pid(pid)
        self.pids = []
        self.daemon_pids = {}
        for h in self.hosts.values():
            h.delete()
        self.hosts = {}
        if self.ns:
            self.ns.delete()
            self.ns = None
        if not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- topology ---------------------------------------------------------
    def add_bridge(self, br="br0", *extra):
        self.vsctl("add-br", br, "--", "set", "bridge", br,
                   "datapath_type=netdev", *extra)
        return br

    def add_host(self, name, ip, br="br0", mtu=1500, ofport=None,
                 tso=False):
        """Creates host namespace 'name' with eth0 = 'ip' (CIDR), plugged
        into 'br' through a veth pair whose switch side is called
        '<id>-<name>' (returned as host.port).  'tso': the host's offloads
        are on (host_offloads()); only for an OVS started with
        other_config:userspace-tso-enable=true."""
        h = Host("%sh-%s-%s" % (self.ns_prefix, self.id, name), ip,
                 mtu)
        port = ("%s%s" % (self.id, name))[:15]
        tmp = ("t%s%s" % (self.id, name))[:15]
        run("ip", "link", "add", port, "type", "veth", "peer", "name", tmp)
        run("ip", "link", "set", port, "netns", self.ns.name)
        run("ip", "link", "set", tmp, "netns", h.name)
        h.run("ip", "link", "set", tmp, "name", "eth0")
        h.run("ip", "link", "set", "eth0", "mtu", mtu)
        h.run("ip", "addr", "add", ip, "dev", "eth0")
        h.run("ip", "link", "set", "eth0", "up")
        h.run("ethtool", "-K", "eth0", *host_offloads(tso), check=False)
        self.ns.run("ip", "link", "set", port, "mtu", mtu)
        self.ns.run("ip", "link", "set", port, "up")
        self.ns.run("ethtool", "-K", port, *SWITCH_PORT_OFFLOADS,
                    check=False)
        args = ["add-port", br, port]
        if ofport is not None:
            args += ["--", "set", "Interface", port,
                     "ofport_request=%d" % ofport]
        self.vsctl(*args)
        h.port = port
        self.hosts[name] = h
        return h

    def ofport(self, port):
        return int(self.vsctl("get", "Interface", port, "ofport").strip())

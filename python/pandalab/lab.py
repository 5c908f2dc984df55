"""Hosts on one sandboxed OVS bridge, one of whose ports can be shaped
into K strict-priority queues: the topology shared by the testbed
(pandalab.testbed.topology), the QoS system tests and the benchmarks.

    with Lab(build, [("cli", "10.0.0.1"), ("srv", "10.0.0.2")]) as lab:
        lab.shape(lab.srv.port, rate_bps=50e6, levels=4)
        lab.start_memcached(lab.srv)
        srv = lab.fg_server(lab.srv)

Everything runs in namespaces made by sandbox.OvsSandbox: OVS in its own,
each host in one more (eth0 plugged into br0 by a veth pair whose switch
side is host.port).  Every process is started here and ended by its pid;
stop() is safe on a half-built lab and twice.
"""

import dataclasses
import json
import os
import re
import shutil
import subprocess
import time
from typing import Optional

from pandaovs import paths, qos
from .hugepages import Hugepages, HugepagesUnavailable
from .hugepages import unavailable as hugepages_unavailable
from .loadgen import FgServer
from .sandbox import OvsSandbox, end_process, parse_tc_classes, run

MEMCACHED_PORT = 11211
FG_PORT = 5001


class LabError(RuntimeError):
    pass


class PortsUnavailable(LabError):
    """The port type asked for cannot run here (OVS built without it, or
    the kernel cannot attach it); the message says which and why."""


PORT_TYPES = ("system", "afxdp", "dpdk")
# OVS 3.1 caps other_config:pmd-maxsleep at PMD_RCU_QUIESCE_INTERVAL
# (lib/dpif-netdev.c): a larger value would be cut down silently.
PMD_MAXSLEEP_MAX_US = 10000
# DPDK's runtime directory for root (EAL, eal_create_runtime_dir): DPDK
# makes <it>/<file-prefix> even with --in-memory, and leaves it.
DPDK_RUNTIME_DIR = "/var/run/dpdk"
# DPDK ports: 2 MB hugepages reserved for the life of the lab.  OVS makes
# one shared mempool per MTU, asking for 256k mbufs and halving on ENOMEM
# down to 16k (lib/netdev-dpdk.c, MIN_NB_MBUF, about 49 MB at MTU 1500):
# in 64 pages (128 MB) it settles at 32k mbufs of 3008 B, 98 MB, beside
# DPDK's own heap (measured, netdev-dpdk/get-mempool-info).  The smallest
# pool alone needs 25 pages: 32 is the least PortConfig accepts.
DPDK_HUGEPAGES = 64


def dpdk_version(build):
    """The DPDK version OVS in BuildTree 'build' was built with ("22.11.x"),
    or None if it was built without DPDK (ovs-vswitchd --version says)."""
    try:
        out = subprocess.run([build.ovs("vswitchd/ovs-vswitchd"),
                              "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (paths.NotBuilt, OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"^DPDK (\S+)", out, re.M)
    return m.group(1) if m else None


def dpdk_unavailable(build):
    """None if DPDK ports can run with BuildTree 'build' here, else why not
    (checked before anything is started or reserved)."""
    if not build.has("ovs/build/vswitchd/ovs-vswitchd"):
        return "no OVS build in %s" % build.root
    if dpdk_version(build) is None:
        return ("OVS in %s was built without DPDK (DPDK=1 ./build.sh builds "
                "one in _build-dpdk, ./configure --with-dpdk)" % build.root)
    why = hugepages_unavailable()
    return "DPDK ports need hugepages: %s" % why if why else None


def default_pmd_cpu_mask(ncpu=None):
    """One PMD thread, on the last CPU.  OVS's default is one PMD per core
    of the NUMA node, each spinning a whole core: on a 2-core machine that
    leaves nothing for the hosts' processes."""
    ncpu = ncpu or os.cpu_count() or 1
    return "0x%x" % (1 << (ncpu - 1))


@dataclasses.dataclass(frozen=True)
class PortConfig:
    """The type of the switch ports the hosts plug into.

    system: netdev-linux (AF_PACKET on the veth), served by ovs-vswitchd's
    main thread, which wakes on millisecond poll timers.
    afxdp:  AF_XDP sockets on the veths (generic XDP: veth has no zero-copy
    mode), polled by PMD threads (pmd_cpu_mask) that, with pmd_maxsleep_us
    > 0, sleep up to that long when idle (OVS's pmd-maxsleep) instead of
    spinning a core.
    dpdk:   netdev-dpdk ports on DPDK's net_af_packet vdevs attached to the
    veths (no NIC needed), with 'hugepages' 2 MB pages reserved for the
    lab's life (pandalab.hugepages), polled by PMD threads like afxdp;
    needs OVS built with DPDK (DPDK=1 ./build.sh)."""
    type: str = "system"
    pmd_cpu_mask: Optional[str] = None      # afxdp, dpdk; None: default
    pmd_maxsleep_us: int = 0
    xdp_mode: str = "generic"
    # OVS's userspace TSO (other_config:userspace-tso-enable, read once at
    # start) with the hosts' offloads on (sandbox.host_offloads): packets
    # of up to 64 KB cross the datapath whole.  system ports only.
    tso: bool = False
    hugepages: int = DPDK_HUGEPAGES         # dpdk

    def problem(self):
        """None if the settings are consistent, else what is wrong."""
        if self.type not in PORT_TYPES:
            return "unknown port type %r (choose from %s)" % (
                self.type, ", ".join(PORT_TYPES))
        if not 0 <= self.pmd_maxsleep_us <= PMD_MAXSLEEP_MAX_US:
            return ("pmd-maxsleep %d us: must be 0..%d (OVS caps it there)"
                    % (self.pmd_maxsleep_us, PMD_MAXSLEEP_MAX_US))
        if self.pmd_cpu_mask is not None:
            try:
                if int(self.pmd_cpu_mask, 16) <= 0:
                    raise ValueError
            except ValueError:
                return ("pmd-cpu-mask %r: expected a non-zero hex CPU mask,"
                        " e.g. 0x2" % self.pmd_cpu_mask)
        if self.tso and self.type != "system":
            # OVS 3.1's netdev-afxdp does not offer TSO, so the datapath
            # would drop every super-packet sent to such a port; netdev-dpdk
            # offers it only where the device segments (a NIC's TSO), and
            # net_af_packet does not.
            return ("userspace TSO needs system ports: OVS 3.1's %s ports "
                    "cannot send TSO packets" % self.type)
        if self.type == "dpdk" and not 32 <= self.hugepages <= 4096:
            return ("%d hugepages: DPDK ports need 32..4096 2 MB pages"
                    % self.hugepages)
        return None

    @property
    def pmd(self):
        """Do PMD threads serve the ports?"""
        return self.type in ("afxdp", "dpdk")

    def ovs_other_config(self, hugepages=None, file_prefix=None):
        """Open_vSwitch other_config the ports need (set before
        ovs-vswitchd starts, so no PMD thread starts on a wrong core, and
        DPDK starts with its memory where 'hugepages', a reserved
        pandalab.hugepages.Hugepages, is mounted, its files named after
        'file_prefix')."""
        oc = {"userspace-tso-enable": "true"} if self.tso else {}
        if self.pmd:
            oc.update({"pmd-cpu-mask": self.pmd_cpu_mask
                       or default_pmd_cpu_mask(),
                       "pmd-maxsleep": str(self.pmd_maxsleep_us)})
        if self.type == "dpdk":
            if hugepages is None or not hugepages.mount:
                raise LabError("DPDK ports need a hugepage reservation")
            # OVS adds --in-memory (no shared files).  --no-pci: no NIC is
            # probed or taken from the kernel; the ports are vdevs.  The
            # memory is capped at the reservation.
            oc.update({
                "dpdk-init": "true",
                "dpdk-socket-mem": str(hugepages.megabytes),
                "dpdk-socket-limit": str(hugepages.megabytes),
                "dpdk-extra": "--huge-dir=%s --file-prefix=%s --no-pci "
                              "--no-telemetry"
                              % (hugepages.mount, file_prefix or "panda")})
        return oc

    def record(self):
        """The settings, for result files."""
        if not self.pmd:
            return {"type": "system", "netdev": "netdev-linux (AF_PACKET)",
                    "served_by": "ovs-vswitchd main thread (millisecond "
                                 "poll timers)",
                    "pmd_cpu_mask": None, "pmd_maxsleep_us": None,
                    "userspace_tso": self.tso}
        rec = {"type": self.type, "served_by": "PMD threads",
               "pmd_cpu_mask": self.pmd_cpu_mask or default_pmd_cpu_mask(),
               "pmd_maxsleep_us": self.pmd_maxsleep_us,
               "userspace_tso": self.tso}
        if self.type == "afxdp":
            rec.update(netdev="netdev-afxdp", xdp_mode=self.xdp_mode)
        else:
            rec.update(netdev="netdev-dpdk (net_af_packet vdevs on the "
                       "veths)", hugepages_2mb=self.hugepages)
        return rec


def _rmdir_if_empty(path):
    try:
        os.rmdir(path)
    except OSError:
        pass


def wait_until(cond, timeout, what, interval=0.1):
    """Polls 'cond' until it returns something true (returned) or
    'timeout' seconds pass (LabError naming 'what')."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() >= deadline:
            raise LabError("timed out after %g s waiting for %s"
                           % (timeout, what))
        time.sleep(interval)


def parse_sched_show(text):
    """panda-sched/show output (one port) -> {"config", "port", "levels"}
    (Lab.sched_show)."""
    def pairs(line):
        d = {}
        for k, v in re.findall(r"([\w-]+)=([\d/pB]+)(?=\s|$)", line):
            m = re.match(r"(\d+)p/(\d+)B$", v)
            if m:
                d[k + "_p"], d[k + "_b"] = int(m.group(1)), int(m.group(2))
            elif re.match(r"\d+[Bp]?$", v):
                d[k] = int(v.rstrip("Bp"))
        return d
    cfg = re.search(r"^  config: (.*)$", text, re.M)
    port = re.search(r"^  backlog=.*$", text, re.M)
    if not cfg or not port:
        raise LabError("not panda-sched/show output: %r" % text[:200])
    return {"config": cfg.group(1).strip(), "port": pairs(port.group(0)),
            "levels": [pairs(m.group(1)) for m in
                       re.finditer(r"^  level \d+: (.*)$", text, re.M)]}


def panda_qos(sb, *args):
    """Runs panda-qos (pandaovs.qos) with 'args' in the namespace of
    sandbox 'sb', with its ovs-vsctl; returns its stdout."""
    return run(*sb.ns.cmd(*paths.module_cmd(
        "qos", *args, "--vsctl", sb.bin("utilities/ovs-vsctl"))),
        env=paths.module_env(sb.env))


class Lab:
    """'hosts': (name, ip[, ofport]) each; the host is then attribute
    'name' (a sandbox.Host: .ip, .port, .run(), .popen()).  static_arp:
    permanent neighbour entries and no IPv6, so that no ARP or neighbour
    discovery shows up in queue counters."""

    def __init__(self, build=None, hosts=(), mtu=1500, static_arp=False,
                 keep_dir=False, ports=PortConfig(), ns_prefix="po"):
        self.build = paths.BuildTree(build)
        self.host_specs = list(hosts)
        self.mtu = mtu
        why = ports.problem()
        if why:
            raise LabError(why)
        self.ports = ports
        self.static_arp = static_arp
        self.keep_dir = keep_dir
        self.ns_prefix = ns_prefix  # Of its namespaces' names (sandbox).
        self.sb = None
        self.hugepages = None       # DPDK ports: the reservation made here
        self.dpdk_dirs = []         # and DPDK's runtime dirs, to remove
        self.dpdk_version = None
        self.hosts = []
        self.procs = []             # (name, Popen) started here, by pid
        self.servers = []           # FgServers started here

    # -- lifecycle ----------------------------------------------------------
    def start(self):
        self.sb = OvsSandbox(self.build.root, keep_dir=self.keep_dir,
                             ns_prefix=self.ns_prefix)
        try:
            if self.ports.type == "dpdk":
                self._reserve_dpdk()
            self.sb.start(self.ports.ovs_other_config(
                self.hugepages, "panda-%s" % self.sb.id))
            self.sb.add_bridge("br0")
            for spec in self.host_specs:
                name, ip = spec[0], spec[1]
                ofport = spec[2] if len(spec) > 2 else None
                h = self.sb.add_host(name, ip + "/24", mtu=self.mtu,
                                     ofport=ofport, tso=self.ports.tso)
                setattr(self, name, h)
                self.hosts.append(h)
            if self.ports.type == "afxdp":
                self.use_afxdp()
            elif self.ports.type == "dpdk":
                self.use_dpdk()
            if self.static_arp:
                self._static_arp()
        except BaseException:
            self.stop()
            raise
        return self

    def use_afxdp(self, xdp_mode=None):
        """Turns every host's switch port into an AF_XDP port (type=afxdp,
        'xdp_mode', by default the PortConfig's) and waits until OVS has
        each one up.  PortsUnavailable if this OVS has no AF_XDP or the
        kernel refuses XDP on the veth."""
        mode = xdp_mode or self.ports.xdp_mode
        types = self.sb.vsctl("get", "Open_vSwitch", ".", "iface_types")
        if "afxdp" not in types:
            raise PortsUnavailable(
                "Open vSwitch built without AF_XDP (iface_types %s; its "
                "configure needs libbpf-dev and libxdp-dev, see "
                "install-deps.sh)" % types.strip())
        for h in self.hosts:
            self.sb.vsctl("set", "interface", h.port, "type=afxdp",
                          "options:xdp-mode=%s" % mode)
        self._wait_ports_up("AF_XDP", 30)

    def _wait_ports_up(self, kind, timeout):
        """Waits until OVS has every host's switch port (of type 'kind',
        for messages) up; PortsUnavailable with OVS's error for one it
        could not open."""
        for h in self.hosts:
            def up():
                err = self.sb.vsctl("get", "interface", h.port,
                                    "error").strip()
                if err not in ("[]", '""'):
                    raise PortsUnavailable("%s port %s unavailable here: %s"
                                           % (kind, h.port, err))
                return self.sb.vsctl("get", "interface", h.port,
                                     "ofport").strip() not in ("[]", "-1")
            wait_until(up, timeout, "%s port %s" % (kind, h.port))

    def _reserve_dpdk(self):
        """Checks that DPDK ports can run here and reserves their
        hugepages (PortsUnavailable naming what is missing)."""
        why = dpdk_unavailable(self.build)
        if why:
            raise PortsUnavailable(why)
        self.dpdk_version = dpdk_version(self.build)
        # Removed by stop(): the directory of this lab's file prefix, and
        # the parent if this lab is the one that makes it.
        if not os.path.isdir(DPDK_RUNTIME_DIR):
            self.dpdk_dirs.append(DPDK_RUNTIME_DIR)
        self.dpdk_dirs.insert(0, os.path.join(DPDK_RUNTIME_DIR,
                                              "panda-%s" % self.sb.id))
        hp = Hugepages(self.ports.hugepages)
        try:
            hp.reserve()
        except HugepagesUnavailable as e:
            raise PortsUnavailable("DPDK ports need hugepages: %s" % e)
        self.hugepages = hp

    def use_dpdk(self):
        """Turns every host's switch port into a DPDK port on a
        net_af_packet vdev attached to its veth (type=dpdk,
        dpdk-devargs=net_af_packetN,iface=VETH) and waits until OVS has
        each one up.  PortsUnavailable if DPDK did not initialise (the
        log's reason) or a port cannot be attached."""
        def initialised():
            v = self.sb.vsctl("get", "Open_vSwitch", ".",
                              "dpdk_initialized").strip()
            if v != "true" and "EAL" in self.sb.log() and re.search(
                    r"\|(ERR|EMER)\|dpdk", self.sb.log()):
                raise PortsUnavailable(
                    "DPDK did not initialise: %s" % "; ".join(re.findall(
                        r"\|(?:ERR|EMER)\|dpdk\|(.*)", self.sb.log()))[:500])
            return v == "true"
        wait_until(initialised, 60, "DPDK to initialise")
        for i, h in enumerate(self.hosts):
            # Every switch port carries the hosts' MTU; the vdev's ring
            # frames (2 KB by default) hold it.
            self.sb.vsctl("set", "interface", h.port, "type=dpdk",
                          "options:dpdk-devargs=net_af_packet%d,iface=%s"
                          % (i, h.port), "mtu_request=%d" % self.mtu)
        self._wait_ports_up("DPDK", 60)

    def port_state(self):
        """What serves the switch ports, as OVS reports it: each port's
        type and whether an XDP program is attached to its veth, and the
        PMD threads with the receive queues they poll."""
        out = dict(self.ports.record(), ports={})
        for h in self.hosts:
            link = self.sb.ns.run("ip", "-d", "link", "show", "dev",
                                  h.port, check=False)
            out["ports"][h.port] = {
                "type": self.sb.vsctl("get", "interface", h.port,
                                      "type").strip().strip('"') or
                "system",
                "xdp": bool(re.search(r"\bxdp(generic|drv|offload)?\b",
                                      link))}
        if self.ports.pmd:
            out["pmd_rxq"] = self.sb.appctl("dpif-netdev/pmd-rxq-show")
        if self.ports.type == "dpdk":
            out["dpdk_version"] = self.dpdk_version
            out["hugepages"] = self.hugepages.record()
        return out

    def thread_cpu(self):
        """{thread name: CPU seconds (user+system)} of ovs-vswitchd's
        threads: what the PMD threads and the main thread cost."""
        pid = self.sb.daemon_pids["ovs-vswitchd"]
        tick = os.sysconf("SC_CLK_TCK")
        out = {}
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                    st = f.read()
            except OSError:
                continue
            name = st[st.index("(") + 1:st.rindex(")")]
            fields = st[st.rindex(")") + 2:].split()
            cpu = (int(fields[11]) + int(fields[12])) / tick
            out[name] = out.get(name, 0) + cpu
        return out

    def _static_arp(self):
        for h in self.hosts:
            for conf in ("all", "default", "eth0"):
                h.run("sysctl", "-qw",
                      "net.ipv6.conf.%s.disable_ipv6=1" % conf, check=False)
        macs = {h.name: h.run("cat", "/sys/class/net/eth0/address").strip()
                for h in self.hosts}
        for h in self.hosts:
            for o in self.hosts:
                if o is not h:
                    h.run("ip", "neigh", "replace", o.ip, "lladdr",
                          macs[o.name], "dev", "eth0", "nud", "permanent")

    def stop(self):
        for s in reversed(self.servers):
            s.kill()
        self.servers = []
        for _, p in reversed(self.procs):
            end_process(p)
        self.procs = []
        if self.sb:
            self.sb.stop()
            self.sb = None
        if self.hugepages:
            # After ovs-vswitchd has exited (sb.stop waits for it): nothing
            # maps the pages any more.
            self.hugepages.release()
            self.hugepages = None
        for d in self.dpdk_dirs:
            # Only what DPDK made for this lab (empty: --in-memory); a
            # parent another DPDK process uses is not empty, and stays.
            if d == DPDK_RUNTIME_DIR:
                _rmdir_if_empty(d)
            else:
                shutil.rmtree(d, ignore_errors=True)
        self.dpdk_dirs = []

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- processes -----------------------------------------------------------
    def spawn(self, name, host, *cmd, **kw):
        """Starts 'cmd' in 'host'; ended by stop() if still running."""
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.PIPE)
        p = host.popen(*cmd, **kw)
        self.procs.append((name, p))
        return p

    def wait_listen(self, host, port, proc, timeout=30):
        """Waits until something listens on TCP 'port' in 'host'; LabError
        if 'proc' (the server) exits first."""
        def listening():
            if proc.poll() is not None:
                raise LabError("server for port %d exited: %s" % (
                    port, proc.stderr.read().strip() if proc.stderr else
                    "status %d" % proc.returncode))
            return host.run("ss", "-Hltn", "sport", "= :%d" % port).strip()
        wait_until(listening, timeout, "a listener on port %d in %s"
                   % (port, host.name))

    def start_memcached(self, host, port=MEMCACHED_PORT, extra=()):
        """memcached on host.ip:port, one thread; returns once it
        listens."""
        p = self.spawn("memcached", host, "memcached", "-l", host.ip, "-p",
                       port, "-U", "0", "-u", "nobody", "-t", "1", *extra)
        self.wait_listen(host, port, p)
        return p

    def fg_server(self, host, port=FG_PORT, workdir=None):
        """panda-fg-server in 'host' on host.ip:port."""
        s = FgServer(self.build, workdir or self.sb.dir, host=host,
                     bind=host.ip, port=port, tag="fg-server-%s-%d"
                     % (host.name, port), quiet=True)
        self.servers.append(s)
        return s

    # -- QoS -----------------------------------------------------------------
    def panda_qos(self, *args):
        """Runs panda-qos (pandaovs.qos) in the switch namespace; returns
        its stdout."""
        return panda_qos(self.sb, *args)

    def shape(self, port, rate_bps, levels, dscp=None, queue_pkts=None,
              qos_type="htb", sched=(), queue_bytes=None):
        """K-level QoS of 'qos_type' ("htb" or "panda-sched", panda-qos
        --type) on switch port 'port' (panda-qos add) at 'rate_bps'; dscp:
        None (queues leave the DSCP alone: what the panda action needs, it
        writes each level's DSCP itself), "default" or a "46/26/.../0" map.
        htb (the default here: the HTB tests and bench-qos measure it):
        queue_pkts is the buffer of each queue in packets (the HTB leaves get
        a pfifo as long as the device's txqueuelen when they are made, so it
        is set first), and this waits until OVS (which applies QoS
        asynchronously) has made every class; 'queue_bytes' replaces each
        leaf with a bfifo of that many bytes (with TSO a packet may be 64
        KB, so a limit in packets would hold up to 43 times the bytes).  panda-sched: 'sched' is
        [(key, value)] of its other_config (limits, ECN threshold, guard,
        per-flow...); panda-qos itself waits until the datapath runs it, or
        fails with the key it refused."""
        if queue_pkts and qos_type == "htb":
            self.sb.ns.run("ip", "link", "set", port, "txqueuelen",
                           queue_pkts)
        args = ["add", port, "--type", qos_type, "--rate",
                str(int(rate_bps)), "--levels", str(levels)]
        args += ["--dscp", dscp] if dscp else ["--no-dscp"]
        for kv in sched:
            args += ["--set", "%s=%s" % kv]
        self.panda_qos(*args)
        if qos_type != "htb":
            return
        want = {"1:%x" % (q + 1) for q in range(levels)}
        try:
            wait_until(lambda: want <= set(self.tc_classes(port)), 30,
                       "the HTB classes on %s" % port)
        except LabError as e:
            raise LabError("%s: %s" % (e, self.tc_text(port)))
        for cls in sorted(want) if queue_bytes else ():
            # OVS makes the classes and leaves their leaf qdiscs alone.
            self.sb.ns.run("tc", "qdisc", "replace", "dev", port, "parent",
                           cls, "bfifo", "limit", int(queue_bytes))

    def queue_flows(self, rr_queue, bulk_queue, srv="srv", blk="blk"):
        """OpenFlow set_queue for the QoS experiments: memcached requests
        to host 'srv' in queue 'rr_queue', the bulk data that
        panda-fg-server on host 'blk' sends in 'bulk_queue'; everything
        else NORMAL.  Replaces the flows of an earlier call."""
        srv, blk = getattr(self, srv), getattr(self, blk)
        self.sb.ofctl("add-flow", "br0", "priority=100,tcp,nw_dst=%s,"
                      "tp_dst=%d,actions=set_queue:%d,NORMAL"
                      % (srv.ip, MEMCACHED_PORT, rr_queue))
        self.sb.ofctl("add-flow", "br0", "priority=100,tcp,nw_src=%s,"
                      "tp_src=%d,actions=set_queue:%d,NORMAL"
                      % (blk.ip, FG_PORT, bulk_queue))

    # -- observation ---------------------------------------------------------
    def tc_text(self, port, what="class"):
        return self.sb.ns.run("tc", "-s", what, "show", "dev", port)

    def tc_classes(self, port):
        """{classid: {"bytes", "packets", "dropped"[, "backlog"]}}."""
        return parse_tc_classes(self.tc_text(port))

    def sched_show(self, port):
        """ovs-appctl panda-sched/show PORT, parsed: {"config": text,
        "port": {key: int}, "levels": [{key: int}]}; a value "12p/1500B"
        gives key_p and key_b, "1500B" gives key."""
        return parse_sched_show(self.sb.appctl("panda-sched/show", port))

    def qos_status(self, port):
        """The status column of the QoS record of 'port' ({} if none)."""
        uuid = self.sb.vsctl("get", "Port", port, "qos").strip()
        if uuid in ("[]", ""):
            return {}
        return qos.parse_status(self.sb.vsctl("get", "QoS", uuid, "status"))

    def tx_dropped(self, port):
        """The port's tx_dropped, read live (ovs-ofctl dump-ports; the
        database's statistics column lags by up to 5 s)."""
        out = self.sb.ofctl("dump-ports", "br0", port)
        m = re.search(r"tx pkts=\S+ bytes=\S+ drop=(\d+)", out)
        if not m:
            raise LabError("no tx drop counter in: %s" % out)
        return int(m.group(1))

    @staticmethod
    def nstat(host, counter="TcpRetransSegs"):
        """Absolute value of an SNMP counter in 'host''s namespace."""
        return Lab.nstat_counters(host, counter)[counter]

    @staticmethod
    def nstat_counters(host, *counters):
        """{counter: absolute value} of SNMP counters in 'host''s namespace
        (nstat -a: absolute, -s: do not touch nstat's history file, -z:
        zeros too)."""
        data = json.loads(host.run("nstat", "-asz", "--json", *counters))
        flat = {}
        for k, v in data.items():
            if isinstance(v, dict):
                flat.update(v)
            else:
                flat[k] = v
        return {c: int(flat.get(c, 0)) for c in counters}

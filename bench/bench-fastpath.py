#!/usr/bin/python3
"""The panda action and panda-sched on OVS-DPDK's fast path: PMD cycles per
packet and Mpps against the same port without them, in the same run.

    sudo bench/bench-fastpath.py [--build DIR] [--seconds S] [--reps N]
        [--sizes 64,1500,mix] [--conns 1,1000,20000,max,rotate]
        [--configs none,action,...] [--two-pmd 1000:shared,...]
        [--json FILE] [--quick]
    bench/bench-fastpath.py --instructions [--build DIR] [--json FILE]

Why.  Through veth and AF_PACKET the base path costs microseconds per
packet, so the panda action's few hundred cycles vanish in its noise.  Here
nothing but the datapath runs per packet: OVS built with DPDK (DPDK=1
./build.sh; --build defaults to $PANDA_DPDK_BUILD_DIR or <repo>/_build-dpdk)
in a private namespace (pandalab.lab with no hosts), a DPDK net_pcap port
replaying a pcap from memory as fast as the PMD thread polls
(rx_pcap=FILE,infinite_rx=1; ofport 1) and a net_null port that swallows
what is sent to it (no-rx=1; ofport 2), one PMD thread spinning on the last
CPU (pmd-maxsleep 0), 2 MB hugepages reserved for the run and given back
(pandalab.hugepages, as the DPDK system test does).

Traffic.  The script writes its pcaps itself (Ethernet, IPv4, TCP ACK
segments with zero payload bytes, checksums right): one packet per
connection per round, in rounds, so every connection comes back once per
round.  --sizes: "64" (64-byte frames on the wire, 60 in the pcap: 6 bytes
of payload), "1500" (1500-byte IP packets, 1460 bytes of payload) and "mix"
(each connection alternates the two).  The policy's T is 1000 bytes: 64-byte
frames compensate (the counter goes down, the floor holds it at 0: level 0,
DSCP 46 written into every packet), 1500-byte frames climb (the counter
rises through the thresholds, then saturates at the last level), the mix
does both on every connection.  --conns: "1", any number, "max" (as many
connections as the port's mempool holds: infinite_rx copies the whole pcap
into mbufs of the port's mempool, and a pcap that does not fit leaves the
port silent; the script reads the pool's size from
netdev-dpdk/get-mempool-info and keeps a margin for the mbufs in flight)
and "rotate": the "max" pcap, whose destination port an OpenFlow set_field
rewrites, changed every --rotate-ms by a flow-mod, so that every epoch
brings as many new connections as the pcap holds and the table sees far
more connections than fit in memory (inserts, expiry and eviction on the
per-packet path; the no-action configuration rewrites the same way).

Configurations (--configs), all on the same flow shape
tcp,in_port=1,actions=[set_field:P->tp_dst,][panda(...),]output:2:

    none                  output:2 (the baseline)
    action                panda(...),output:2 (histograms on, the default)
    action-nohist         the same with other_config:panda-histograms=false
    action+sched          the action, and a panda-sched QoS on port 2
                          (unshaped: 8 levels, per-flow queues; every
                          packet is classified, enqueued and dequeued)
    action+sched-shaped   the same shaped to --shape-fraction of the
                          rate the unshaped one sent in the warm-up (the
                          shaper holds and drops the rest)
    sched                 output:2 with the panda-sched QoS alone

Measure.  For each point (size, connections): a warm-up (the baseline,
then the action with the unshaped scheduler, so every connection is in
the table and the flow caches are warm, and the shaped configuration
knows the rate to stay below), then --reps ABBA passes: the
configurations in order, then in reverse order, each run: settle, then
dpif-netdev/pmd-stats-clear, --seconds of traffic, pmd-stats-show.  Per
run: packets received, the PMD's "avg processing cycles per packet", Mpps
(packets over the wall-clock window), the PMD thread's CPU time in the
window (/proc schedstat), hence the share of the core it had and the
"on-CPU" cycles per packet (processing cycles x that share / packets: a
PMD preempted by another process counts those cycles as processing, an
inflation this removes), the packets the null port sent, and upcalls.
Medians over the runs, the spread (min-max), and ratios against "none"
measured in the same point: rate ratio = none's on-CPU cycles / the
configuration's (what a dedicated core would forward, relative), Mpps
ratio = wall Mpps / none's.

--two-pmd: two PMD threads, one per core (pmd-cpu-mask 0x3; the main
thread, the revalidators and everything else share the cores with them),
each polling its own pcap port (ofports 1 and 3, pinned with
pmd-rxq-affinity), both sending to port 2: the connection table and the
scheduler's lock taken from two threads at once.  "shared": both pcaps
hold the same connections (both threads update the same entries);
"disjoint": different ones (only the table's shards and the scheduler are
shared).  Totals over both PMDs; configurations none, action, action+sched
and sched.

--instructions (no root): instructions per packet, counted exactly by
callgrind (independent of the machine's load): dp_panda_execute() (the
action, batches of 32: bench/bench-panda-action.c), panda_table_classify()
(the table path: tools/panda-bench, one packet per call, and 32 per call
as the datapath calls it where it has --batch) and dp_sched_exchange()
(an unshaped scheduler's classify, enqueue and dequeue, or its
cut-through: bench/bench-sched-glue.c).  Each is everything executed
inside the function (callgrind --toggle-collect), the code inlined into it
from headers included; results before
docs/results/2026-11-27-fastpath-instructions/ counted the function's own
source file only (callgrind_annotate's inclusive count), which left that
code out.

The machine is shared: absolute cycles move with its load; every run
records the load average, and the ratios within one ABBA run are what to
compare.  The JSON (--json) holds every run, the medians, the ratios, the
CPU model, the kernel, DPDK's version, the build's commit and the load.

--quick: the smoke test's size (tests/system/test_fastpath.py): 64-byte
frames, 1000 connections, none/action/action+sched/sched, one pass of one
second each, 64 hugepages; seconds in all.

Exit status 77 (and the reason on stderr) where the benchmark cannot run
here: not root, no DPDK build, no hugepages, no net_pcap or net_null.
"""

import argparse
import importlib.util
import json
import os
import platform
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

try:
    import pandaovs  # noqa: F401
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

from pandaovs import paths  # noqa: E402
from pandalab.lab import (Lab, LabError, PortConfig,  # noqa: E402
                          PortsUnavailable, dpdk_unavailable, wait_until)
from pandalab.ovsbench import build_ovs_bench  # noqa: E402
from pandalab.sandbox import is_root  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXIT_UNAVAILABLE = 77

# T = 1000 bytes: 64-byte frames' 6 payload bytes compensate, 1500-byte
# packets' 1460 climb (module docstring).
POLICY = ("panda(id=1,threshold=1000,thresholds=100000/1000000/10000000,"
          "dscp=46/26/18/0,queues=0/1/2/3)")
T_BYTES = 1000

# Frame bytes in the pcap (no FCS): a 64-byte frame on the wire, a
# 1500-byte IP packet.
FRAME = {"64": 60, "1500": 1514}
SIZES = ("64", "1500", "mix")

CONFIGS = ("none", "action", "action-nohist", "action+sched",
           "action+sched-shaped", "sched")
TWO_PMD_CONFIGS = ("none", "action", "action+sched", "sched")
# What each configuration sets: (panda action?, QoS on port 2, histograms).
CONFIG_PARTS = {
    "none": (False, None, True),
    "action": (True, None, True),
    "action-nohist": (True, None, False),
    "action+sched": (True, "unshaped", True),
    "action+sched-shaped": (True, "shaped", True),
    "sched": (False, "unshaped", True),
}
SCHED_LEVELS = 8

# Hugepages of the full run: OVS's shared mempool for MTU 1500 asks for
# 256k mbufs of about 3 KB (halving on ENOMEM), and the "max" pcap should
# get all of them.
FULL_HUGEPAGES = 600
QUICK_HUGEPAGES = 64
# Mbufs of the pool kept free beside the pcap's copy: the PMD's bursts in
# flight, the per-lcore mempool caches (512 each), the null port's queue.
MEMPOOL_MARGIN = 8192

DST_MAC = b"\x02\x00\x00\x00\x99\x99"
SRC_MAC = b"\x02\x00\x00\x00\x00\x01"
DST_IP = bytes((10, 2, 0, 1))
DST_PORT = 80
PORTS_PER_IP = 50000


# -- pcaps ---------------------------------------------------------------

def _csum(data):
    """The Internet checksum of 'data' (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def conn_addr(i, base=0):
    """Source (IPv4 bytes, port) of connection 'i' ('base' offsets the
    connection set, so two sets can be disjoint)."""
    j = base + i
    ip = 0x0a010000 + j // PORTS_PER_IP
    return struct.pack("!I", ip), 1024 + j % PORTS_PER_IP


def tcp_frame(src_ip, sport, frame_len):
    """An Ethernet + IPv4 + TCP ACK frame of 'frame_len' bytes (no FCS) from
    src_ip:sport to DST_IP:DST_PORT, payload zeros, checksums right."""
    ip_len = frame_len - 14
    payload = ip_len - 40
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0x4000, 64, 6, 0,
                     src_ip, DST_IP)
    ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
    tcp = struct.pack("!HHIIBBHHH", sport, DST_PORT, 1, 1, 5 << 4, 0x10,
                      65535, 0, 0)
    # The zero payload adds nothing to the sum.
    pseudo = src_ip + DST_IP + struct.pack("!BBH", 0, 6, 20 + payload)
    tcp = tcp[:16] + struct.pack("!H", _csum(pseudo + tcp)) + tcp[18:]
    return DST_MAC + SRC_MAC + b"\x08\x00" + ip + tcp + bytes(payload)


def payload_bytes(size):
    """TCP payload bytes of the frames of --sizes entry 'size' (a pair for
    the mix)."""
    if size == "mix":
        return (FRAME["64"] - 54, FRAME["1500"] - 54)
    return (FRAME[size] - 54,)


def pcap_rounds(conns, min_packets=1024):
    """Rounds of 'conns' packets the pcap holds: enough for 'min_packets'
    (a pcap of one packet would replay one packet per burst)."""
    return max(1, -(-min_packets // conns))


def write_pcap(path, size, conns, base=0):
    """Writes the pcap of a point: 'conns' connections (from 'base'), one
    packet each per round, pcap_rounds() rounds (an even number for the
    mix, whose connections alternate 64-byte and 1500-byte frames: in
    even rounds the even connections send the small frame).  Returns the
    number of packets."""
    rounds = pcap_rounds(conns)
    if size == "mix":
        rounds += rounds % 2
    frames = {}                 # (connection, kind): frame, if rounds > 1
    n = 0
    with open(path, "wb") as f:
        # Classic pcap, microsecond timestamps, Ethernet.
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for r in range(rounds):
            for i in range(conns):
                if size == "mix":
                    kind = "64" if (i + r) % 2 == 0 else "1500"
                else:
                    kind = size
                frame = frames.get((i, kind))
                if frame is None:
                    frame = tcp_frame(*conn_addr(i, base), FRAME[kind])
                    if rounds > 1:
                        frames[(i, kind)] = frame
                f.write(struct.pack("<IIII", n // 1000000, n % 1000000,
                                    len(frame), len(frame)))
                f.write(frame)
                n += 1
    return n


# -- the switch ----------------------------------------------------------

def dpdk_pmds_dir():
    """Where Debian's DPDK keeps its driver plugins (EAL loads them all),
    or None."""
    try:
        out = subprocess.run(["pkg-config", "--variable=pmdsdir",
                              "libdpdk"], capture_output=True, text=True,
                             timeout=30)
        d = out.stdout.strip()
        if d and os.path.isdir(d):
            return d
    except OSError:
        pass
    for base in ("/usr/lib/x86_64-linux-gnu/dpdk", "/usr/lib64/dpdk"):
        if os.path.isdir(base):
            for sub in sorted(os.listdir(base)):
                if sub.startswith("pmds-"):
                    return os.path.join(base, sub)
    return None


def unavailable(build):
    """None if the benchmark can run here, else why not."""
    if not is_root():
        return "needs root (namespaces, hugepages, OVS)"
    why = dpdk_unavailable(paths.BuildTree(build))
    if why:
        return why
    pmds = dpdk_pmds_dir()
    if pmds is None:
        return "cannot find DPDK's driver directory (pmds-*)"
    for drv in ("net_pcap", "net_null"):
        lib = "librte_%s.so" % drv
        if not any(f.startswith(lib) for f in os.listdir(pmds)):
            return "DPDK has no %s driver (%s not in %s)" % (drv, lib, pmds)
    return None


class Switch:
    """A Lab with no hosts: ovs-vswitchd with DPDK, bridge br0, the null
    port (ofport 2) and pcap ports added and removed per point."""

    def __init__(self, build, hugepages):
        self.lab = Lab(build, [], ports=PortConfig(
            "dpdk", pmd_cpu_mask=self.one_pmd_mask(), pmd_maxsleep_us=0,
            hugepages=hugepages))
        self.vdev = 0               # DPDK vdev names are never reused.
        self.pcap_ports = {}        # ofport: name
        self.rotate = None          # a Rotator while one runs
        self.flow_lock = threading.Lock()
        self.actions = None         # the current flows' actions (per port)
        self.qos = None

    @staticmethod
    def one_pmd_mask():
        return "0x%x" % (1 << ((os.cpu_count() or 1) - 1))

    def start(self):
        self.lab.start()
        self.sb = self.lab.sb
        self.add_dpdk_port("null0", 2, "net_null%d,no-rx=1" % self.next())
        return self

    def stop(self):
        if self.rotate:
            self.rotate.stop()
        self.lab.stop()

    def next(self):
        self.vdev += 1
        return self.vdev

    def add_dpdk_port(self, name, ofport, devargs, core=None):
        args = ["add-port", "br0", name, "--", "set", "interface", name,
                "type=dpdk", "options:dpdk-devargs=%s" % devargs,
                "ofport_request=%d" % ofport, "mtu_request=1500"]
        if core is not None:
            args.append("other_config:pmd-rxq-affinity=0:%d" % core)
        self.sb.vsctl(*args)

        def up():
            err = self.sb.vsctl("get", "interface", name, "error").strip()
            if err not in ("[]", '""'):
                raise PortsUnavailable("port %s (%s): %s"
                                       % (name, devargs, err))
            return self.sb.vsctl("get", "interface", name,
                                 "ofport").strip() == str(ofport)
        wait_until(up, 60, "port %s" % name)

    def add_pcap_port(self, ofport, pcap, core=None):
        name = "pcap%d" % ofport
        # Recorded first: a port OVS refuses is in its database all the
        # same, and del_pcap_ports() must take it out.
        self.pcap_ports[ofport] = name
        self.add_dpdk_port(name, ofport, "net_pcap%d,rx_pcap=%s,infinite_rx=1"
                           % (self.next(), pcap), core)

    def del_pcap_ports(self):
        for name in self.pcap_ports.values():
            self.sb.vsctl("del-port", "br0", name)
        self.pcap_ports = {}

    def mempool_size(self):
        """Mbufs in the mempool of the null port (the shared pool of MTU
        1500, which every port here uses)."""
        out = self.sb.appctl("netdev-dpdk/get-mempool-info", "null0")
        m = re.search(r"^\s*size=(\d+)", out, re.M)
        if not m:
            raise LabError("no mempool size in: %s" % out[:300])
        return int(m.group(1))

    # -- configuration ------------------------------------------------------
    def flow_actions(self, action, dport=None):
        acts = []
        if dport is not None:
            acts.append("set_field:%d->tp_dst" % dport)
        if action:
            acts.append(POLICY)
        acts.append("output:2")
        return ",".join(acts)

    def set_flows(self, action):
        """tcp,in_port=P,actions=... for every pcap port (the panda action
        or not); with a rotator running, its current destination port."""
        with self.flow_lock:
            self.actions = action
            dport = self.rotate.dport if self.rotate else None
            self._put_flows(dport)

    def _put_flows(self, dport):
        flows = ["priority=0,actions=drop"] + [
            "priority=10,tcp,in_port=%d,actions=%s"
            % (p, self.flow_actions(self.actions, dport))
            for p in sorted(self.pcap_ports)]
        self.sb.ofctl("replace-flows", "br0", "-",
                      input="\n".join(flows) + "\n")

    def set_histograms(self, on):
        self.sb.vsctl("set", "Open_vSwitch", ".",
                      "other_config:panda-histograms=%s"
                      % ("true" if on else "false"))

    def set_qos(self, rate_bps):
        """A panda-sched QoS on port 2 (rate_bps 0: unshaped), or none
        (rate_bps None); waits until the datapath runs it."""
        if rate_bps == self.qos:
            return
        self.sb.vsctl("--", "--if-exists", "clear", "port", "null0", "qos")
        for uuid in self.sb.vsctl("--bare", "--columns=_uuid", "list",
                                  "qos").split():
            self.sb.vsctl("destroy", "qos", uuid)
        self.qos = None
        if rate_bps is None:
            return
        keys = ["other_config:levels=%d" % SCHED_LEVELS]
        if rate_bps:
            keys.append("other_config:max-rate=%d" % rate_bps)
        self.sb.vsctl("set", "port", "null0", "qos=@q", "--", "--id=@q",
                      "create", "qos", "type=panda-sched", *keys)
        wait_until(lambda: "state=active" in self.sb.vsctl(
            "get", "port", "null0", "qos", "--", "list", "qos"), 10,
            "panda-sched on null0")
        self.qos = rate_bps

    def apply(self, config, shape_bps):
        action, qos, hist = CONFIG_PARTS[config]
        self.set_histograms(hist)
        self.set_qos(None if qos is None else
                     shape_bps if qos == "shaped" else 0)
        self.set_flows(action)

    # -- measurement --------------------------------------------------------
    def pmd_tids(self):
        """{core id: thread id} of ovs-vswitchd's PMD threads."""
        pid = self.sb.daemon_pids["ovs-vswitchd"]
        out = {}
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                    comm = f.read().strip()
            except OSError:
                continue
            m = re.match(r"pmd-c(\d+)/", comm)
            if m:
                out[int(m.group(1))] = int(tid)
        return out

    def pmd_stats(self):
        """{core id: {counter: value}} from dpif-netdev/pmd-stats-show."""
        out, cur = {}, None
        for line in self.sb.appctl("dpif-netdev/pmd-stats-show").splitlines():
            m = re.match(r"pmd thread numa_id \d+ core_id (\d+):", line)
            if m:
                cur = out.setdefault(int(m.group(1)), {})
            elif not line.startswith(" "):
                cur = None
            elif cur is not None and ":" in line:
                k, v = line.strip().split(":", 1)
                try:
                    cur[k] = float(v.split()[0])
                except (ValueError, IndexError):
                    pass
        return out

    def tx_packets(self):
        out = self.sb.ofctl("dump-ports", "br0", "2")
        m = re.search(r"tx pkts=(\d+)", out)
        return int(m.group(1)) if m else 0

    def measure(self, seconds):
        """One run: the PMDs' counters over 'seconds' of traffic."""
        tids = self.pmd_tids()
        self.sb.appctl("dpif-netdev/pmd-stats-clear")
        tx0 = self.tx_packets()
        cpu0 = {c: schedstat_ns(t) for c, t in tids.items()}
        t0 = time.monotonic()
        time.sleep(seconds)
        st = self.pmd_stats()
        t1 = time.monotonic()
        cpu1 = {c: schedstat_ns(t) for c, t in tids.items()}
        tx1 = self.tx_packets()
        wall = t1 - t0
        pmds = {}
        for core, s in st.items():
            pkts = s.get("packets received", 0)
            busy = s.get("processing cycles", 0)
            total = busy + s.get("idle cycles", 0)
            cpu = (cpu1.get(core, 0) - cpu0.get(core, 0)) / 1e9
            share = min(cpu / wall, 1.0) if wall else 0
            pmds[core] = {
                "packets": pkts, "processing_cycles": busy,
                "total_cycles": total,
                "cycles_per_pkt": busy / pkts if pkts else None,
                "cpu_s": cpu, "cpu_share": share,
                "oncpu_cycles_per_pkt": busy * share / pkts if pkts
                else None,
                "tsc_hz": total / wall if wall else None,
                "upcalls": s.get("miss with success upcall", 0)
                + s.get("miss with failed upcall", 0),
                "emc_hits": s.get("emc hits", 0),
                "megaflow_hits": s.get("megaflow hits", 0),
                "pkts_per_batch": s.get("avg. packets per output batch", 0),
            }
        pkts = sum(p["packets"] for p in pmds.values())
        busy = sum(p["processing_cycles"] for p in pmds.values())
        oncpu = sum(p["processing_cycles"] * p["cpu_share"]
                    for p in pmds.values())
        return {"wall_s": wall, "packets": pkts,
                "mpps": pkts / wall / 1e6 if wall else 0,
                "cycles_per_pkt": busy / pkts if pkts else None,
                "oncpu_cycles_per_pkt": oncpu / pkts if pkts else None,
                "cpu_share": min(p["cpu_share"] for p in pmds.values())
                if pmds else 0,
                "tx_mpps": (tx1 - tx0) / wall / 1e6 if wall else 0,
                "upcalls": sum(p["upcalls"] for p in pmds.values()),
                "loadavg_1m": os.getloadavg()[0],
                "pmds": {str(c): p for c, p in pmds.items()}}


def schedstat_ns(tid):
    """CPU time of thread 'tid' so far, ns (0 once it is gone)."""
    try:
        with open("/proc/%d/schedstat" % tid) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


class Rotator:
    """Moves every pcap port's flow to a new destination port every
    'period' seconds (set_field:P->tp_dst), so each epoch makes every
    connection of the pcap a new one."""

    def __init__(self, switch, period):
        self.sw = switch
        self.period = period
        self.dport = 1024
        self.epochs = 0
        self.error = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def _run(self):
        while not self.done.wait(self.period):
            try:
                with self.sw.flow_lock:
                    self.dport = self.dport + 1 if self.dport < 65535 \
                        else 1024
                    self.sw._put_flows(self.dport)
                    self.epochs += 1
            except Exception as e:      # reported by stop()
                self.error = e
                return

    def stop(self):
        self.done.set()
        self.thread.join()
        self.sw.rotate = None
        if self.error:
            raise self.error


# -- one point -----------------------------------------------------------

def spread(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v),
            "n": len(v)}


def summarize(runs):
    """Medians and spreads per configuration, ratios against "none"."""
    out = {}
    for config, rs in runs.items():
        out[config] = {k: spread([r[k] for r in rs]) for k in (
            "cycles_per_pkt", "oncpu_cycles_per_pkt", "mpps", "tx_mpps",
            "cpu_share", "loadavg_1m")}
        out[config]["upcalls"] = sum(r["upcalls"] for r in rs)
    base = out.get("none")
    for config, s in out.items():
        if not base or not s["oncpu_cycles_per_pkt"] or \
                not base["oncpu_cycles_per_pkt"]:
            continue
        s["rate_ratio"] = (base["oncpu_cycles_per_pkt"]["median"]
                           / s["oncpu_cycles_per_pkt"]["median"])
        s["mpps_ratio"] = s["mpps"]["median"] / base["mpps"]["median"] \
            if base["mpps"]["median"] else None
        s["extra_cycles"] = (s["oncpu_cycles_per_pkt"]["median"]
                             - base["oncpu_cycles_per_pkt"]["median"])
    return out


def abba(configs, reps):
    order = []
    for _ in range(reps):
        order += list(configs) + list(reversed(configs))
    return order


def pcap_file(args, size, conns, base=0):
    path = os.path.join(args.tmp, "%s-%d-%d.pcap" % (size, conns, base))
    if path not in args.pcaps:
        args.pcaps[path] = write_pcap(path, size, conns, base)
    return path, args.pcaps[path]


def start_traffic(sw, ports, what):
    """Checks that the pcap ports just added receive: a pcap that does not
    fit the mempool leaves its port silent (no error anywhere)."""
    sw.apply("none", 0)
    time.sleep(0.5)
    m = sw.measure(1.0)
    if m["packets"] == 0:
        raise LabError("%s: the pcap port received nothing (pcap larger "
                       "than the mempool allows?)" % what)
    return m


def run_point(sw, args, size, spec, log):
    """One point of the single-PMD part: warm-up, then ABBA passes over
    args.configs; returns its record."""
    rotate = spec == "rotate"
    if spec in ("max", "rotate"):
        conns = args.max_conns
    else:
        conns = int(spec)
    pcap, n_pkts = pcap_file(args, size, conns)
    what = "%s B, %s connections" % (size, spec)
    sw.add_pcap_port(1, pcap)
    try:
        start_traffic(sw, (1,), what)
        if rotate:
            sw.rotate = Rotator(sw, args.rotate_ms / 1000).start()
        sw.apply("none", 0)
        time.sleep(args.settle)
        warm = sw.measure(args.warmup)
        # Warms the table and learns what the port sends through an
        # unshaped scheduler behind the action: the shaped configuration
        # must be shaped below that, not below what arrives (the action
        # itself slows the PMD below the offered rate).
        sw.sb.appctl("panda/flush")
        sw.apply("action+sched", 0)
        time.sleep(args.settle)
        warm_sched = sw.measure(args.warmup)
        frame_bits = 8 * statistics.mean(p + 54 for p in
                                         payload_bytes(size))
        shape_bps = int(args.shape_fraction * warm_sched["tx_mpps"] * 1e6
                        * frame_bits)
        runs = {c: [] for c in args.configs}
        sched_show = {}
        for config in abba(args.configs, args.reps):
            sw.apply(config, shape_bps)
            time.sleep(args.settle)
            r = sw.measure(args.seconds)
            runs[config].append(r)
            if sw.qos is not None:
                sched_show[config] = sw.sb.appctl("panda-sched/show",
                                                  "null0")
            log("    %-20s %8.1f cycles/pkt on-CPU (%6.1f), %6.3f Mpps, "
                "cpu %.2f, load %.1f" % (
                    config, r["oncpu_cycles_per_pkt"] or 0,
                    r["cycles_per_pkt"] or 0, r["mpps"], r["cpu_share"],
                    r["loadavg_1m"]))
        epochs = sw.rotate.epochs if sw.rotate else None
        if sw.rotate:
            sw.rotate.stop()
        panda_show = sw.sb.appctl("panda/show")
    finally:
        if sw.rotate:
            sw.rotate.stop()
        sw.del_pcap_ports()
    return {"size": size, "conns_spec": spec, "conns": conns,
            "pcap_packets": n_pkts, "payload_bytes": payload_bytes(size),
            "rotate_epochs": epochs, "shape_bps": shape_bps,
            "warmup_none_mpps": warm["mpps"],
            "warmup_action_sched_mpps": warm_sched["tx_mpps"],
            "runs": runs, "summary": summarize(runs),
            "panda_show": panda_show, "sched_show": sched_show}


def run_two_pmd(sw, args, spec, log):
    """Two PMD threads, one per core, each polling a pcap port, both
    sending to port 2."""
    conns_s, mode = spec.split(":")
    conns = int(conns_s)
    a, n_a = pcap_file(args, "64", conns)
    b, n_b = pcap_file(args, "64", conns, 0 if mode == "shared" else conns)
    try:
        sw.add_pcap_port(1, a, core=0)
        sw.add_pcap_port(3, b, core=1)
        start_traffic(sw, (1, 3), "two PMDs, %s" % spec)
        sw.sb.appctl("panda/flush")
        sw.apply("action", 0)
        time.sleep(args.settle)
        sw.measure(args.warmup)
        runs = {c: [] for c in TWO_PMD_CONFIGS}
        for config in abba(TWO_PMD_CONFIGS, args.reps):
            sw.apply(config, 0)
            time.sleep(args.settle)
            r = sw.measure(args.seconds)
            runs[config].append(r)
            log("    %-20s %8.1f cycles/pkt on-CPU (%6.1f), %6.3f Mpps "
                "(both PMDs), cpu %.2f, load %.1f" % (
                    config, r["oncpu_cycles_per_pkt"] or 0,
                    r["cycles_per_pkt"] or 0, r["mpps"], r["cpu_share"],
                    r["loadavg_1m"]))
        panda_show = sw.sb.appctl("panda/show")
    finally:
        sw.del_pcap_ports()
    return {"size": "64", "conns": conns, "mode": mode,
            "pcap_packets": [n_a, n_b], "runs": runs,
            "summary": summarize(runs), "panda_show": panda_show}


def set_two_pmds(sw):
    ncpu = os.cpu_count() or 1
    if ncpu < 2:
        raise LabError("two PMD threads need two CPUs")
    sw.sb.vsctl("set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x3")
    wait_until(lambda: len(sw.pmd_tids()) == 2, 30, "two PMD threads")


# -- instructions (callgrind) --------------------------------------------

def load_bench_module(name):
    spec = importlib.util.spec_from_file_location(
        name.replace("-", "_"), os.path.join(HERE, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def callgrind_fn(cmd, fn, tmp, env=None):
    """Instructions executed inside function 'fn' in one run of 'cmd'
    under callgrind, the code inlined into it included
    (bench-forwarding.py's callgrind_instructions())."""
    return load_bench_module("bench-forwarding").callgrind_instructions(
        cmd, fn, tmp, env)


# tools/panda-bench.c's connection counts (its 'sizes').
PANDA_BENCH_ROWS = (1, 1000, 100000, 1000000)


def instructions(args):
    """Instructions per packet of the action, the table path and the
    scheduler glue (callgrind)."""
    fwd = load_bench_module("bench-forwarding")
    res = {"action": [], "table": [], "sched": []}
    with tempfile.TemporaryDirectory() as tmp:
        action = fwd.build_action_bench(tmp, args.build)
        glue = build_ovs_bench(tmp, args.build, "bench-sched-glue")
        for size in ("64", "1500"):
            frame = FRAME[size]
            for conns in (1, 1000, 20000):
                for hist in ("true", "false"):
                    ipp = fwd.action_instructions(action, frame, conns, tmp,
                                                  histograms=hist)
                    res["action"].append({"size": size, "conns": conns,
                                          "histograms": hist == "true",
                                          "instructions_per_pkt": ipp})
        iters = 2000
        # Levels per batch: 1 (every packet at level 0, as this script's
        # panda-sched configurations send them: a batch the cut-through
        # leaves as it is) and 4 mixed (one it sorts).
        for levels in (1, 4):
            for size in ("64", "1500"):
                for flows in (1, 1000, 20000):
                    ir = callgrind_fn([glue, str(FRAME[size]), str(flows),
                                       str(iters)],
                                      "dp_sched_exchange", tmp,
                                      env=dict(os.environ,
                                               SCHED_GLUE_LEVELS=str(levels)))
                    # Warm-up and 3 timed runs through the scheduler, of
                    # 'iters' batches of 32 each (bench-sched-glue.c).
                    res["sched"].append({"size": size, "flows": flows,
                                         "levels": levels,
                                         "instructions_per_pkt":
                                         ir / (4 * iters * 32)})
        bench = os.path.join(args.build, "tools", "panda-bench")
        batched = "--batch" in subprocess.run(
            [bench, "--help"], capture_output=True, text=True).stdout
        for conns in (1000, 100000):
            packets = 200000
            # panda-bench: Panda and PIAS, a row per connection count of
            # PANDA_BENCH_ROWS up to 'conns', each populated (one packet
            # per connection, one call each), then 'packets' timed.
            rows = [c for c in PANDA_BENCH_ROWS if c <= conns]
            ir = callgrind_fn([bench, "--max-conns", str(conns), "--packets",
                               str(packets)],
                              "panda_table_classify", tmp)
            res["table"].append({"max_conns": conns, "packets": packets,
                                 "batch": 1, "instructions_per_pkt":
                                 ir / (2 * sum(c + packets for c in rows))})
            if not batched:
                continue
            # Batches of 32, as the datapath calls it: the timed packets
            # only (the population is single calls).
            ir = callgrind_fn([bench, "--max-conns", str(conns), "--packets",
                               str(packets), "--batch", "32"],
                              "panda_table_classify_batch", tmp)
            res["table"].append({"max_conns": conns, "packets": packets,
                                 "batch": 32, "instructions_per_pkt":
                                 ir / (2 * len(rows) * packets)})
    return res


def print_instructions(res):
    print("dp_panda_execute() instructions per packet (callgrind, batches "
          "of 32; bench-panda-action.c):")
    for r in res["action"]:
        print("  %5s B %6d conns histograms %-5s %7.1f" % (
            r["size"], r["conns"], "on" if r["histograms"] else "off",
            r["instructions_per_pkt"]))
    print("panda_table_classify() per packet (tools/panda-bench, Panda and "
          "PIAS, its rows up to N connections; batch 32: "
          "panda_table_classify_batch()):")
    for r in res["table"]:
        print("  N = %6d, batch %2d: %7.1f" % (
            r["max_conns"], r.get("batch", 1), r["instructions_per_pkt"]))
    print("dp_sched_exchange() per packet (unshaped panda-sched, 8 levels; "
          "bench-sched-glue.c; the levels a batch mixes):")
    for r in res["sched"]:
        print("  %5s B %6d flows %d level%s %7.1f" % (
            r["size"], r["flows"], r.get("levels", 4),
            " " if r.get("levels", 4) == 1 else "s",
            r["instructions_per_pkt"]))


# -- the run ---------------------------------------------------------------

def machine():
    """The CPU (as /proc/cpuinfo names it: a VM may show only the vendor's
    family name, so its family, model and stepping too), the kernel and
    the load average now."""
    info = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break               # The first CPU is enough.
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    return {"cpu_model": info.get("model name"),
            "cpu_family_model_stepping": "%s/%s/%s" % (
                info.get("cpu family"), info.get("model"),
                info.get("stepping")),
            "hypervisor": "hypervisor" in info.get("flags", "").split(),
            "cpus": os.cpu_count(), "kernel": platform.release(),
            "loadavg": os.getloadavg()}


def build_record(build):
    rec = {"dir": build}
    try:
        rec["commit"] = subprocess.run(
            ["git", "-C", paths.TOP, "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=30).stdout.strip()
        rec["dirty"] = bool(subprocess.run(
            ["git", "-C", paths.TOP, "status", "--porcelain", "--",
             "lib", "ovs-patches", "ovs-ext"], capture_output=True,
            text=True, timeout=30).stdout.strip())
    except OSError:
        pass
    return rec


def fmt(s, key, scale=1.0, digits=1):
    v = s.get(key)
    if not v:
        return "-"
    return "%.*f [%.*f-%.*f]" % (digits, v["median"] * scale, digits,
                                 v["min"] * scale, digits, v["max"] * scale)


def print_point(title, summary, configs):
    print(title)
    print("  %-20s %-24s %-24s %-10s %-10s %-6s" % (
        "config", "cycles/pkt on-CPU", "Mpps", "rate ratio", "Mpps ratio",
        "cpu"))
    for c in configs:
        s = summary.get(c)
        if not s:
            continue
        print("  %-20s %-24s %-24s %-10s %-10s %-6s" % (
            c, fmt(s, "oncpu_cycles_per_pkt", digits=0),
            fmt(s, "mpps", digits=3),
            "%.3f" % s["rate_ratio"] if s.get("rate_ratio") else "-",
            "%.3f" % s["mpps_ratio"] if s.get("mpps_ratio") else "-",
            "%.2f" % s["cpu_share"]["median"] if s.get("cpu_share")
            else "-"))


def print_summary(result):
    print()
    print("Summary: rate ratio against no action (none's on-CPU cycles per "
          "packet / the configuration's), same point, same run")
    configs = [c for c in result["setup"]["configs"] if c != "none"]
    print("  %-6s %-12s %8s  " % ("size", "conns", "none cyc")
          + " ".join("%-14s" % c[:14] for c in configs))
    for p in result["points"]:
        s = p["summary"]
        base = s.get("none", {}).get("oncpu_cycles_per_pkt")
        conns = p["conns_spec"]
        if conns in ("max", "rotate"):
            conns = "%s=%d" % (conns, p["conns"])
        print("  %-6s %-12s %8s  " % (
            p["size"], conns, "%.0f" % base["median"] if base else "-")
            + " ".join("%-14s" % ("%.3f" % s[c]["rate_ratio"]
                                  if s.get(c, {}).get("rate_ratio")
                                  else "-") for c in configs))
    for p in result.get("two_pmd", []):
        if "unavailable" in p:
            print("  2 PMDs %s: unavailable" % p["spec"])
            continue
        s = p["summary"]
        base = s.get("none", {}).get("oncpu_cycles_per_pkt")
        print("  2 PMDs %d %s, none %.0f cycles: %s" % (
            p["conns"], p["mode"], base["median"] if base else 0,
            ", ".join("%s %.3f" % (c, s[c]["rate_ratio"])
                      for c in TWO_PMD_CONFIGS[1:]
                      if s.get(c, {}).get("rate_ratio"))))


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", help="OVS-DPDK build tree (default "
                    "$PANDA_DPDK_BUILD_DIR or <repo>/_build-dpdk)")
    ap.add_argument("--seconds", type=float, default=3.0,
                    help="seconds per measured run (default 3)")
    ap.add_argument("--reps", type=int, default=2,
                    help="ABBA passes (each runs every configuration twice;"
                    " default 2)")
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--settle", type=float, default=0.5,
                    help="seconds between a change and its measurement")
    ap.add_argument("--sizes", default="64,1500")
    ap.add_argument("--conns", default="1,1000,20000,max,rotate")
    ap.add_argument("--mix-conns", default="1000",
                    help="connection counts of the mix (64/1500 B "
                    "alternating; empty: none)")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--two-pmd", default="1000:shared,1000:disjoint,"
                    "20000:shared", help="CONNS:shared|disjoint points with "
                    "two PMD threads (empty: none)")
    ap.add_argument("--rotate-ms", type=float, default=500)
    ap.add_argument("--shape-fraction", type=float, default=0.5,
                    help="action+sched-shaped: the shaper's rate as a "
                    "fraction of the unshaped one's (warm-up)")
    ap.add_argument("--hugepages", type=int, default=None,
                    help="2 MB pages (default %d, %d with --quick)"
                    % (FULL_HUGEPAGES, QUICK_HUGEPAGES))
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--quick", action="store_true",
                    help="the smoke test's size: seconds in all")
    ap.add_argument("--instructions", action="store_true",
                    help="callgrind instruction counts only (no root)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seconds, args.reps, args.warmup, args.settle = 1.0, 1, 1.0, 0.3
        args.sizes, args.conns, args.mix_conns = "64", "1000", ""
        args.configs = "none,action,action+sched,sched"
        args.two_pmd = ""
    args.build = args.build or paths.dpdk_build_dir()
    args.sizes = [s for s in args.sizes.split(",") if s]
    args.conns = [c for c in args.conns.split(",") if c]
    args.mix_conns = [c for c in args.mix_conns.split(",") if c]
    args.configs = [c for c in args.configs.split(",") if c]
    args.two_pmd = [p for p in args.two_pmd.split(",") if p]
    if args.hugepages is None:
        args.hugepages = QUICK_HUGEPAGES if args.quick else FULL_HUGEPAGES
    for s in args.sizes:
        if s not in SIZES:
            ap.error("--sizes: %r is not one of %s" % (s, ", ".join(SIZES)))
    for c in args.conns + args.mix_conns:
        if c not in ("max", "rotate") and not (c.isdigit() and int(c) > 0):
            ap.error("--conns: %r is not a positive number, max or rotate"
                     % c)
    for c in args.configs:
        if c not in CONFIGS:
            ap.error("--configs: %r is not one of %s"
                     % (c, ", ".join(CONFIGS)))
    if "none" not in args.configs:
        ap.error("--configs: 'none' (the baseline) is needed")
    for p in args.two_pmd:
        m = re.match(r"(\d+):(shared|disjoint)$", p)
        if not m or int(m.group(1)) == 0:
            ap.error("--two-pmd: %r is not CONNS:shared or CONNS:disjoint"
                     % p)
    if args.seconds <= 0 or args.reps <= 0:
        ap.error("--seconds and --reps must be positive")
    if not 0 < args.shape_fraction < 1:
        ap.error("--shape-fraction must be between 0 and 1")
    return args


def mempool_free(sw):
    """(size, free) mbufs of the MTU-1500 pool."""
    out = sw.sb.appctl("netdev-dpdk/get-mempool-info", "null0")
    size = int(re.search(r"^\s*size=(\d+)", out, re.M).group(1))
    free = sum(int(x) for x in re.findall(
        r"^\s*(?:common_pool_count|total_cache_count)=(\d+)", out, re.M))
    return size, free


def main():
    args = parse_args()
    started = time.strftime("%Y-%m-%d %H:%M:%S %z")
    result = {"benchmark": "bench/bench-fastpath.py",
              "argv": sys.argv[1:], "started": started,
              "machine": machine(), "build": build_record(args.build)}
    if args.instructions:
        res = instructions(args)
        result["instructions"] = res
        result["machine"]["loadavg_end"] = os.getloadavg()
        print_instructions(res)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
        return 0

    why = unavailable(args.build)
    if why:
        print("bench-fastpath: unavailable here: %s" % why, file=sys.stderr)
        return EXIT_UNAVAILABLE

    def log(msg):
        print(msg, flush=True)

    sw = Switch(args.build, args.hugepages)
    with tempfile.TemporaryDirectory(prefix="panda-fastpath-") as tmp:
        args.tmp, args.pcaps = tmp, {}
        try:
            sw.start()
        except PortsUnavailable as e:
            print("bench-fastpath: unavailable here: %s" % e,
                  file=sys.stderr)
            sw.stop()
            return EXIT_UNAVAILABLE
        try:
            size, free = mempool_free(sw)
            args.max_conns = max(1000, free - MEMPOOL_MARGIN)
            state = sw.lab.port_state()
            result["setup"] = {
                "policy": POLICY, "t_bytes": T_BYTES,
                "frame_bytes_no_fcs": FRAME, "configs": args.configs,
                "sched_levels": SCHED_LEVELS, "seconds": args.seconds,
                "reps_abba": args.reps, "warmup_s": args.warmup,
                "settle_s": args.settle, "rotate_ms": args.rotate_ms,
                "shape_fraction": args.shape_fraction,
                "hugepages_2mb": args.hugepages, "mempool_mbufs": size,
                "mempool_free": free, "max_conns": args.max_conns,
                "dpdk_version": state.get("dpdk_version"),
                "pmd_cpu_mask": state.get("pmd_cpu_mask"),
                "pmd_maxsleep_us": 0}
            log("bench-fastpath: %s, kernel %s, DPDK %s; mempool %d mbufs "
                "(%d free), max connections %d; load %.2f %.2f %.2f" % (
                    result["machine"]["cpu_model"],
                    result["machine"]["kernel"], state.get("dpdk_version"),
                    size, free, args.max_conns, *os.getloadavg()))
            points = [(s, c) for s in args.sizes for c in args.conns]
            points += [("mix", c) for c in args.mix_conns]
            result["points"] = []
            for size, spec in points:
                log("  point: %s B, %s connections" % (size, spec))
                result["points"].append(run_point(sw, args, size, spec, log))
            result["two_pmd"] = []
            if args.two_pmd:
                set_two_pmds(sw)
                for spec in args.two_pmd:
                    log("  two PMDs: %s" % spec)
                    try:
                        result["two_pmd"].append(run_two_pmd(sw, args, spec,
                                                             log))
                    except PortsUnavailable as e:
                        # A second pcap port of many connections may not
                        # fit the hugepages: that point is unavailable,
                        # the others stand.
                        log("    unavailable: %s" % e)
                        result["two_pmd"].append({"spec": spec,
                                                  "unavailable": str(e)})
        finally:
            sw.stop()
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    result["machine"]["loadavg_end"] = os.getloadavg()
    print()
    print("CPU %s (family/model/stepping %s%s), kernel %s, load average at "
          "start %s, at end %s" % (
        result["machine"]["cpu_model"],
        result["machine"]["cpu_family_model_stepping"],
        ", virtual machine" if result["machine"]["hypervisor"] else "",
        result["machine"]["kernel"],
        " ".join("%.2f" % x for x in result["machine"]["loadavg"]),
        " ".join("%.2f" % x for x in result["machine"]["loadavg_end"])))
    for p in result["points"]:
        print_point("%s B, %d connections (%s; pcap %d packets)" % (
            p["size"], p["conns"], p["conns_spec"], p["pcap_packets"]),
            p["summary"], args.configs)
    for p in result["two_pmd"]:
        if "unavailable" in p:
            print("two PMDs, %s: unavailable: %s" % (p["spec"],
                                                    p["unavailable"]))
            continue
        print_point("two PMDs, 64 B, %d connections %s" % (
            p["conns"], p["mode"]), p["summary"], TWO_PMD_CONFIGS)
    print_summary(result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Forwarding rate of the patched OVS with and without the panda action.

    sudo bench/bench-forwarding.py [--build DIR] [--seconds S] [--reps N]
                                   [--sizes 64,1500] [--conns 1,1000,100000]
                                   [--ports system|dpdk]
    bench/bench-forwarding.py --instructions [--build DIR] [--sizes ...]
                              [--conns ...]
    sudo bench/bench-forwarding.py --histograms [...]

--histograms measures what the panda action's histograms cost:
both configurations run the panda flow, "base" with
other_config:panda-histograms=false and "panda" with it true (the
default), in the same ABBA alternation; the action microbenchmark and
--instructions compare the two settings the same way.

Method.  One OvsSandbox (pandalab.sandbox): ovs-vswitchd with
datapath_type=netdev in a private network namespace, two veth ports
(netdev-linux, AF_PACKET, polled by the main thread).  bench/bench-blast.c
(compiled on the fly) sends TCP ACK segments with payload from the source
namespace as fast as it can (AF_PACKET, sendmmsg, qdisc bypass), cycling
through C distinct 5-tuples.  The frames go to a MAC address the sink does
not own, so the sink's kernel counts and drops them without answering.  The
forwarding rate is the sink veth's rx_packets increase over the middle of
each S-second run ("wall" rate).

The machine is shared with other jobs, so the wall rate mostly measures how
much CPU the scheduler gave ovs-vswitchd.  The benchmark therefore also
reads the CPU time that ovs-vswitchd's forwarding thread (the main thread,
which polls netdev-linux ports) spent during the same window, from
/proc/PID/task/PID/schedstat, and reports packets forwarded per CPU-second
of that thread ("per-core" rate: the rate one dedicated core would sustain,
kernel socket work included).  The ratio uses the per-core rates.

Third, bench/bench-panda-action.c (built against the same OVS build tree)
times dp_panda_execute() itself on batches of 32 packets, for the same
frame sizes and connection counts, against the same loop without it: the
action's own cost in ns per packet, free of I/O noise.  The "model" ratio is
1 / (1 + cost x per-core base rate), what that cost does to the measured
per-core forwarding rate.

--ports dpdk runs the same on DPDK ports: OVS built with DPDK
(DPDK=1 ./build.sh; --build defaults to $PANDA_DPDK_BUILD_DIR or
<repo>/_build-dpdk), each veth attached to a net_af_packet vdev, 128 MB of
hugepages reserved for the run (pandalab.lab, PortConfig "dpdk") and one
PMD thread on the last CPU that spins (pmd-maxsleep 0), as a forwarding PMD
does.  A spinning thread's CPU time is the wall time, so there the
forwarding thread's busy time is the PMD's own account: the window's wall
time x processing cycles / (processing + idle cycles), from
dpif-netdev/pmd-stats-show, cleared at the window's start.  Both port types
also report the datapath's average packets per output batch (how many
packets one send to the port carries).

--instructions (no root needed) runs only bench-panda-action, once per
point under valgrind (callgrind), and prints the instructions that
dp_panda_execute() executes per packet: exact and independent of the
machine's load, for comparing two build trees (the classifier
interface must not slow the panda action down).

Both configurations use the same megaflow shape:

    base:  tcp,in_port=1,actions=output:2
    panda: tcp,in_port=1,actions=panda(id=1,...),output:2

Before each point, one unmeasured S-second run with the panda flow warms
the connection table (every connection is in it, so the measured runs see
steady-state lookups, not first packets) and the datapath flow caches.
Runs alternate base/panda (ABBA order) for each point, N times each; the
table shows the medians and their ratio.  The last columns show that the packets took the
datapath's fast path (EMC/SMC/megaflow hits, not upcalls).  Gbit/s counts Ethernet frame bytes without FCS,
preamble and gap.  The machine is shared, so the absolute rates are those of
a loaded 2-core VM; the ratio is what matters.
"""

import contextlib
import os
import statistics
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

from benchnet import SINK_MAC, build_blaster, cpu_ns, rx_packets  # noqa
from pandaovs import cli  # noqa: E402
from pandaovs import paths  # noqa: E402
from pandalab.lab import Lab, PortConfig, PortsUnavailable  # noqa: E402
from pandalab.ovsbench import build_ovs_bench  # noqa: E402
from pandalab.sandbox import is_root  # noqa: E402

BENCH_PORTS = ("system", "dpdk")

PANDA = ("panda(id=1,threshold=1460,weights=1460:1/9000:2,"
         "thresholds=100000/1000000/10000000,dscp=46/26/18/0,"
         "queues=0/1/2/3)")


def build_action_bench(tmp, build):
    """Compiles bench/bench-panda-action.c against the OVS build tree."""
    return build_ovs_bench(tmp, build, "bench-panda-action")


def action_cost_ns(exe, frame, conns, reps, histograms=None):
    """Median ns per packet of the panda action (microbenchmark);
    'histograms': "true" or "false" sets other_config:panda-histograms."""
    env = dict(os.environ)
    if histograms is not None:
        env["PANDA_HISTOGRAMS"] = histograms
    return statistics.median(
        float(subprocess.run([exe, str(frame), str(conns), "20000"],
                             capture_output=True, text=True, env=env,
                             check=True).stdout)
        for _ in range(reps))


def add_ports_option(ap):
    """--ports and --build of the forwarding benchmarks (--build's default
    follows --ports: see build_tree())."""
    ap.add_argument("--ports", choices=BENCH_PORTS, default="system",
                    help="switch ports: system (netdev-linux, main thread; "
                    "default) or dpdk (net_af_packet vdevs, one spinning "
                    "PMD thread; OVS built with DPDK)")
    ap.add_argument("--build", help="build tree (default $PANDA_BUILD_DIR "
                    "or <repo>/_build; with --ports dpdk "
                    "$PANDA_DPDK_BUILD_DIR or <repo>/_build-dpdk)")


def build_tree(args):
    return args.build or (paths.dpdk_build_dir() if args.ports == "dpdk"
                          else paths.build_dir())


@contextlib.contextmanager
def bench_switch(build, ports):
    """A started Lab for a 'with' body (stopped after it, hugepages given
    back): hosts src (ofport 1) and sink (ofport 2) on br0, switch ports of
    type 'ports'; exits with the reason if that type cannot run here.  The
    PMD thread of DPDK ports spins (pmd-maxsleep 0): a sleeping one would
    measure its wake-ups."""
    lab = Lab(build, [("src", "10.0.0.1", 1), ("sink", "10.0.0.2", 2)],
              ports=PortConfig(ports, pmd_maxsleep_us=0))
    try:
        lab.start()
    except PortsUnavailable as e:
        sys.exit("bench-forwarding: --ports %s unavailable: %s" % (ports, e))
    try:
        yield lab
    finally:
        lab.stop()


def pmd_tid(sb):
    """The thread id of ovs-vswitchd's PMD thread, or None (system ports
    only: the main thread forwards)."""
    pid = sb.daemon_pids["ovs-vswitchd"]
    for tid in sorted(os.listdir("/proc/%d/task" % pid)):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            if f.read().startswith("pmd"):
                return int(tid)
    return None


def forwarding_busy_s(sb, window):
    """The PMD thread's busy seconds in the last 'window' seconds since
    dpif-netdev/pmd-stats-clear: 'window' x processing / (processing +
    idle) cycles."""
    st = pmd_stats(sb)
    busy = st.get("processing cycles", 0)
    total = busy + st.get("idle cycles", 0)
    return window * busy / total if total else 0.0


def measure(sb, src, sink, blaster, size, conns, seconds):
    """Returns (forwarded packets per second, forwarded packets per
    CPU-second of the forwarding thread, offered packets per second)."""
    pid = sb.daemon_pids["ovs-vswitchd"]
    pmd = pmd_tid(sb)
    result = {}

    def blast():
        result["sent"] = int(src.run(blaster, "eth0", size, conns, seconds,
                                     SINK_MAC, timeout=seconds + 30))

    t = threading.Thread(target=blast)
    t.start()
    margin = min(1.0, seconds / 4)
    time.sleep(margin)
    # The window's own counters (busy cycles, batch sizes, upcalls).
    sb.appctl("dpif-netdev/pmd-stats-clear")
    r0, t0, c0 = rx_packets(sink), time.monotonic(), cpu_ns(pid)
    time.sleep(seconds - 2 * margin)
    r1, t1, c1 = rx_packets(sink), time.monotonic(), cpu_ns(pid)
    busy = forwarding_busy_s(sb, t1 - t0) if pmd else (c1 - c0) / 1e9
    t.join()
    return ((r1 - r0) / (t1 - t0), (r1 - r0) / max(busy, 1e-9),
            result.get("sent", 0) / seconds)


def pmd_stats(sb):
    """{counter: value} of the forwarding thread from pmd-stats-show: the
    PMD thread's if there is one (DPDK ports), else the main thread's."""
    sections = {}
    cur = None
    for line in sb.appctl("dpif-netdev/pmd-stats-show").splitlines():
        if not line.startswith(" "):
            cur = sections.setdefault(
                "pmd" if line.startswith("pmd thread") else "main", {})
        elif ":" in line and cur is not None:
            k, v = line.strip().split(":", 1)
            try:
                cur[k] = float(v.split()[0])
            except (ValueError, IndexError):
                pass
    return sections.get("pmd") or sections.get("main", {})


def callgrind_instructions(cmd, fn, tmp, env=None):
    """Instructions executed inside function 'fn' (and whatever it calls)
    in one run of 'cmd' under callgrind.  Collected with --toggle-collect
    rather than read from callgrind_annotate's inclusive count of the
    function's own file, which leaves out the code inlined into it from
    headers (callgrind names that code by the header's file)."""
    out = os.path.join(tmp, "callgrind.out")
    subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=" + fn,
                    "--callgrind-out-file=" + out] + cmd,
                   check=True, capture_output=True, env=env)
    with open(out) as f:
        for line in f:
            if line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError("no totals in callgrind's output of %s" % cmd)


def action_instructions(exe, frame, conns, tmp, iters=2000,
                        histograms=None):
    """Instructions per packet of dp_panda_execute() (inclusive), from one
    bench-panda-action run under callgrind."""
    env = dict(os.environ)
    if histograms is not None:
        env["PANDA_HISTOGRAMS"] = histograms
    ir = callgrind_instructions([exe, str(frame), str(conns), str(iters)],
                                "dp_panda_execute", tmp, env)
    # Batches of 32 with the action: the warm-up (conns / 32 + 1000) and
    # two timed runs of 'iters' (bench-panda-action.c).
    return ir / ((conns // 32 + 1000 + 2 * iters) * 32)


def set_flows(sb, actions):
    sb.ofctl("del-flows", "br0")
    sb.ofctl("add-flow", "br0", "priority=0,actions=drop")
    sb.ofctl("add-flow", "br0", "tcp,in_port=1,actions=%s" % actions)


def main():
    ap = cli.ArgumentParser(description=__doc__.split("\n")[0])
    add_ports_option(ap)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="64,1500")
    ap.add_argument("--conns", default="1,1000,100000")
    ap.add_argument("--instructions", action="store_true",
                    help="instructions per packet of the action, under "
                    "valgrind; no forwarding runs")
    ap.add_argument("--histograms", action="store_true",
                    help="base = panda action without histograms, panda = "
                    "with them (other_config:panda-histograms)")
    args = ap.parse_args()
    args.build = build_tree(args)
    if args.instructions:
        with tempfile.TemporaryDirectory() as tmp:
            exe = build_action_bench(tmp, args.build)
            print("dp_panda_execute() instructions per packet, build %s%s"
                  % (args.build, ": without / with histograms"
                     if args.histograms else ""))
            for size in (int(x) for x in args.sizes.split(",")):
                for conns in (int(x) for x in args.conns.split(",")):
                    frame = max(60, size - 4)
                    if args.histograms:
                        off = action_instructions(exe, frame, conns, tmp,
                                                  histograms="false")
                        on = action_instructions(exe, frame, conns, tmp,
                                                 histograms="true")
                        print("  %5d B %7d conns: %7.1f / %7.1f (+%.1f)"
                              % (size, conns, off, on, on - off))
                    else:
                        print("  %5d B %7d conns: %7.1f" % (
                            size, conns, action_instructions(
                                exe, frame, conns, tmp)))
        return
    if not is_root():
        sys.exit("bench-forwarding: needs root (namespaces)")

    sizes = [int(x) for x in args.sizes.split(",")]
    connss = [int(x) for x in args.conns.split(",")]
    rows = []
    batch = {"base": [], "panda": []}
    with tempfile.TemporaryDirectory() as tmp, \
            bench_switch(args.build, args.ports) as lab:
        blaster = build_blaster(tmp)
        action_bench = build_action_bench(tmp, args.build)
        os.chmod(tmp, 0o755)
        sb, src, sink = lab.sb, lab.src, lab.sink
        for size in sizes:
            frame = max(60, size - 4)       # Without the FCS.
            for conns in connss:
                res = {"base": [], "panda": []}
                core = {"base": [], "panda": []}
                offered = []
                set_flows(sb, PANDA + ",output:2")
                sb.appctl("panda/flush")
                measure(sb, src, sink, blaster, frame, conns, args.seconds)
                sb.appctl("dpif-netdev/pmd-stats-clear")
                for rep in range(args.reps):
                    # ABBA order, so that drifts do not favour one mode.
                    for mode in (("base", "panda") if rep % 2 == 0
                                 else ("panda", "base")):
                        if args.histograms:
                            sb.vsctl("set", "Open_vSwitch", ".",
                                     "other_config:panda-histograms=%s"
                                     % ("false" if mode == "base"
                                        else "true"))
                        else:
                            set_flows(sb, "output:2" if mode == "base"
                                      else PANDA + ",output:2")
                        pps, cpps, sent = measure(sb, src, sink, blaster,
                                                  frame, conns, args.seconds)
                        batch[mode].append(pmd_stats(sb).get(
                            "avg. packets per output batch", 0))
                        res[mode].append(pps)
                        core[mode].append(cpps)
                        offered.append(sent)
                if args.histograms:
                    # The histograms' own cost: with minus without.
                    cost = action_cost_ns(
                        action_bench, frame, conns, 2 * args.reps + 1,
                        "true") - action_cost_ns(
                        action_bench, frame, conns, 2 * args.reps + 1,
                        "false")
                else:
                    cost = action_cost_ns(action_bench, frame, conns,
                                          2 * args.reps + 1)
                st = pmd_stats(sb)
                upcalls = st.get("miss with success upcall", 0) + \
                    st.get("miss with failed upcall", 0)
                fast = upcalls / max(st.get("packets received", 1), 1)
                base = statistics.median(core["base"])
                panda = statistics.median(core["panda"])
                row = (size, conns, base, panda, panda / base if base else 0,
                       statistics.median(offered), fast,
                       statistics.median(res["base"]),
                       statistics.median(res["panda"]), cost)
                rows.append(row)
                print("  %5d B %6d conns: per-core pps base %s panda %s; "
                      "wall pps base %s panda %s" % (
                          size, conns,
                          ["%.0f" % x for x in core["base"]],
                          ["%.0f" % x for x in core["panda"]],
                          ["%.0f" % x for x in res["base"]],
                          ["%.0f" % x for x in res["panda"]]), flush=True)
        show = sb.appctl("panda/show")
        state = lab.port_state()

    print()
    print("Ports: %s, served by %s%s; kernel %s, veths with tx checksum, "
          "TSO, GSO, GRO off" % (
              state["netdev"], state["served_by"],
              " (pmd-cpu-mask %s, pmd-maxsleep 0, DPDK %s, %d MB hugepages)"
              % (state["pmd_cpu_mask"], state.get("dpdk_version"),
                 state["hugepages"]["megabytes"]) if args.ports == "dpdk"
              else "", os.uname().release))
    print("avg. packets per output batch (datapath), medians: base %.1f, "
          "panda %.1f" % (statistics.median(batch["base"] or [0]),
                          statistics.median(batch["panda"] or [0])))
    print("Per-core forwarding rate (packets per CPU-second of the forwarding "
          "thread), medians:")
    if args.histograms:
        print("(--histograms: base = the panda action without histograms, "
              "panda = with them; action ns/pkt = what counting adds)")
    print("frame  conns    base Mpps  Gbit/s   panda Mpps  Gbit/s   ratio"
          "   | action ns/pkt  model ratio"
          " | wall Mpps base  panda  offered | upcalls/pkt")
    models = []
    for (size, conns, base, panda, ratio, offered, upc, wbase,
         wpanda, cost) in rows:
        frame = max(60, size - 4)
        model = 1 / (1 + cost * 1e-9 * base)
        models.append(model)
        print("%5d %6d   %9.3f %7.3f   %10.3f %7.3f   %5.3f   | %13.0f  %11.3f"
              " | %9.3f %6.3f %8.3f | %.1e"
              % (size, conns, base / 1e6, base * frame * 8 / 1e9,
                 panda / 1e6, panda * frame * 8 / 1e9, ratio, cost, model,
                 wbase / 1e6, wpanda / 1e6, offered / 1e6, upc))
    ratios = [r[4] for r in rows]
    print("\nmeasured per-core ratio panda/base: min %.3f, median %.3f; "
          "model ratio: min %.3f (target >= 0.95)" % (
              min(ratios), statistics.median(ratios), min(models)))
    print()
    print("last panda/show:")
    print(show)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Forwarding rate of the patched OVS with and without a panda-sched QoS,
the glue's cost per packet, and shaping accuracy.

    sudo bench/bench-sched-forwarding.py [--build DIR] [--seconds S]
        [--reps N] [--sizes 64,1500] [--flows 1,1000,100000]
        [--rates 50,200,500,1000] [--skip-forwarding] [--ports system|dpdk]

Three parts, each against a baseline measured in the same run:

1. Forwarding, as bench/bench-forwarding.py measures it (whose helpers this
   reuses; see its docstring for the method): two netdev-linux ports polled
   by the main thread, bench-blast.c offering TCP segments of one size over
   F distinct 5-tuples as fast as it can, the flow tcp,in_port=1,
   actions=output:2.  'base' has no QoS on the output port; 'sched' gives
   it a panda-sched QoS with the default configuration, unshaped (8 levels,
   per-flow queues: every packet is classified, enqueued and dequeued), so
   the scheduler's cost is what differs.  Runs alternate ABBA; medians of
   the per-core rate (packets per CPU-second of the forwarding thread) and
   their ratio (target >= 0.9).

2. bench/bench-sched-glue.c: ns per packet of dp_sched_exchange() (classify,
   enqueue, dequeue, under the scheduler's mutex), against a ring of packet
   pointers, for the same sizes and flow counts; and two threads on one
   scheduler (its mutex contended, as with two PMD threads sending to one
   port) against two threads on a scheduler each.

3. Shaping accuracy: the output port shaped to R Mbit/s with the default
   token bucket (10 ms), and with 2 ms for comparison, bench-blast offering
   more than R in 1500-byte frames; achieved/configured = the sink's
   received frames x frame bytes x 8 over the middle of the run, against
   R.  The frames the sink counts are those the shaper let out (the rest it
   dropped at its buffer).  Next to each, a run without QoS shows what the
   forwarding thread sustains at that moment: rates near it are CPU-bound,
   not a property of the shaper.

--ports dpdk: the same on DPDK ports (net_af_packet vdevs on the veths,
one spinning PMD thread; OVS built with DPDK), as bench-forwarding.py
--ports dpdk describes, busy time included.

The machine is shared, so the absolute rates are those of a loaded 2-core
VM; the ratios are what matter.
"""

import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import pandaovs  # noqa: F401
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

from pandaovs import cli  # noqa: E402
from pandalab.ovsbench import build_ovs_bench  # noqa: E402
from pandalab.sandbox import is_root  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# The forwarding benchmark's helpers (measure(), set_flows(), the builds).
_spec = importlib.util.spec_from_file_location(
    "bench_forwarding", os.path.join(HERE, "bench-forwarding.py"))
fwd = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fwd)


def set_qos(sb, port, keys):
    """Gives 'port' a panda-sched QoS with other_config 'keys' (a list of
    "k=v"), or none if 'keys' is None; waits until the datapath applied
    it."""
    sb.vsctl("--", "--if-exists", "clear", "port", port, "qos")
    for uuid in sb.vsctl("--bare", "--columns=_uuid", "list",
                         "qos").split():
        sb.vsctl("destroy", "qos", uuid)
    if keys is None:
        return
    sb.vsctl("set", "port", port, "qos=@q", "--", "--id=@q", "create", "qos",
             "type=panda-sched", *["other_config:" + k for k in keys])
    deadline = time.monotonic() + 10
    while "state=active" not in sb.vsctl("get", "port", port, "qos",
                                         "--", "list", "qos"):
        if time.monotonic() > deadline:
            raise RuntimeError(sb.vsctl("list", "qos"))
        time.sleep(0.05)


def forwarding(args, sb, src, sink, blaster):
    rows = []
    fwd.set_flows(sb, "output:2")
    for size in args.sizes:
        frame = max(60, size - 4)           # Without the FCS.
        for flows in args.flows:
            core = {"base": [], "sched": []}
            wall = {"base": [], "sched": []}
            set_qos(sb, sink.port, ["levels=8"])
            fwd.measure(sb, src, sink, blaster, frame, flows, args.seconds)
            for rep in range(args.reps):
                for mode in (("base", "sched") if rep % 2 == 0
                             else ("sched", "base")):
                    set_qos(sb, sink.port,
                            None if mode == "base" else ["levels=8"])
                    pps, cpps, _ = fwd.measure(sb, src, sink, blaster, frame,
                                               flows, args.seconds)
                    core[mode].append(cpps)
                    wall[mode].append(pps)
            print("  %5d B %6d flows: per-core pps base %s sched %s; wall "
                  "pps base %s sched %s" % (
                      size, flows, ["%.0f" % x for x in core["base"]],
                      ["%.0f" % x for x in core["sched"]],
                      ["%.0f" % x for x in wall["base"]],
                      ["%.0f" % x for x in wall["sched"]]), flush=True)
            rows.append((size, flows, statistics.median(core["base"]),
                         statistics.median(core["sched"]),
                         statistics.median(wall["base"]),
                         statistics.median(wall["sched"])))
    return rows


def glue(args, exe):
    rows = []
    for size in args.sizes:
        frame = max(60, size - 4)
        for flows in args.flows:
            out = subprocess.run([exe, str(frame), str(flows), "200000"],
                                 capture_output=True, text=True,
                                 check=True).stdout
            r = dict((line.split()[0], float(line.split()[1]))
                     for line in out.splitlines())
            rows.append((size, flows, r["ring"], r["sched"]))
    out = subprocess.run([exe, "1496", "1000", "200000", "2"],
                         capture_output=True, text=True, check=True).stdout
    threads = dict((line.split()[0], [float(x) for x in line.split()[1:]])
                   for line in out.splitlines())
    return rows, threads


def shaping(args, sb, src, sink, blaster):
    """For each rate and bucket (the default, and 2 ms for comparison),
    the median over --reps runs of achieved/configured, each run next to a
    run without QoS that measures what the forwarding thread sustains at
    that moment."""
    rows = []
    frame = 1496
    for rate in args.rates:
        ratios = {"default": [], "2ms": []}
        capacity = []
        for _ in range(args.reps):
            set_qos(sb, sink.port, None)
            pps, _, _ = fwd.measure(sb, src, sink, blaster, frame, 100,
                                    args.seconds)
            capacity.append(pps * frame * 8 / 1e6)
            for bucket in ratios:
                keys = ["max-rate=%dM" % rate]
                if bucket == "2ms":
                    keys.append("burst=%d" % max(rate * 1000000 // 8 // 500,
                                                 3028))
                set_qos(sb, sink.port, keys)
                pps, _, _ = fwd.measure(sb, src, sink, blaster, frame, 100,
                                        args.seconds)
                ratios[bucket].append(pps * frame * 8 / (rate * 1e6))
        row = (rate, statistics.median(capacity),
               statistics.median(ratios["default"]),
               statistics.median(ratios["2ms"]))
        rows.append(row)
        print("  %4d Mbit/s: no QoS %s Mbit/s; achieved/configured default "
              "%s, 2 ms %s" % (rate, ["%.0f" % x for x in capacity],
                               ["%.3f" % x for x in ratios["default"]],
                               ["%.3f" % x for x in ratios["2ms"]]),
              flush=True)
    set_qos(sb, sink.port, None)
    return rows


def main():
    ap = cli.ArgumentParser(description=__doc__.split("\n")[0])
    fwd.add_ports_option(ap)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="64,1500")
    ap.add_argument("--flows", default="1,1000,100000")
    ap.add_argument("--rates", default="20,50,200,500",
                    help="shaping rates, Mbit/s")
    ap.add_argument("--skip-forwarding", action="store_true")
    args = ap.parse_args()
    args.sizes = [int(x) for x in args.sizes.split(",")]
    args.flows = [int(x) for x in args.flows.split(",")]
    args.rates = [int(x) for x in args.rates.split(",")]
    args.build = fwd.build_tree(args)
    if not is_root():
        sys.exit("bench-sched-forwarding: needs root (namespaces)")

    with tempfile.TemporaryDirectory() as tmp, \
            fwd.bench_switch(args.build, args.ports) as lab:
        blaster = fwd.build_blaster(tmp)
        glue_exe = build_ovs_bench(tmp, args.build, "bench-sched-glue")
        os.chmod(tmp, 0o755)
        sb, src, sink = lab.sb, lab.src, lab.sink
        state = lab.port_state()
        fwd.set_flows(sb, "output:2")
        fwd_rows = [] if args.skip_forwarding else forwarding(
            args, sb, src, sink, blaster)
        shape_rows = shaping(args, sb, src, sink, blaster)
        glue_rows, threads = glue(args, glue_exe)

    print("\nConditions: 2 %s ports (veths) served by %s, tx checksum/TSO/"
          "GSO/GRO off, kernel %s; shared 2-core VM"
          % (state["netdev"], state["served_by"], os.uname().release))
    if fwd_rows:
        print("\nForwarding, per-core rate (packets per CPU-second of the "
              "forwarding thread), medians; panda-sched unshaped, defaults:")
        print("frame   flows   base Mpps   sched Mpps   ratio | wall Mpps "
              "base  sched")
        for size, flows, base, sched, wbase, wsched in fwd_rows:
            print("%5d %7d   %9.3f   %10.3f   %5.3f | %14.3f %6.3f" % (
                size, flows, base / 1e6, sched / 1e6, sched / base,
                wbase / 1e6, wsched / 1e6))
        ratios = [r[3] / r[2] for r in fwd_rows]
        print("per-core ratio sched/base: min %.3f, median %.3f (target >= "
              "0.9)" % (min(ratios), statistics.median(ratios)))
    print("\nGlue cost (bench-sched-glue, batches of 32, best of 3), ns per "
          "packet:")
    print("frame   flows    ring   sched   sched-ring")
    for size, flows, ring, sched in glue_rows:
        print("%5d %7d  %6.1f  %6.1f   %10.1f" % (size, flows, ring, sched,
                                                  sched - ring))
    print("two threads, 1496-byte frames, 1000 flows (CPU ns per packet of "
          "both, Mpps of both): one scheduler shared %.1f ns, %.2f Mpps; one "
          "each %.1f ns, %.2f Mpps" % tuple(threads["shared"]
                                             + threads["separate"]))
    print("\nShaping accuracy, 1496-byte frames, medians: achieved/configured"
          " with the default bucket (10 ms) and with 2 ms; 'no QoS' is what"
          " the forwarding thread sustained next to them (a rate near or "
          "above it is CPU-bound, marked *):")
    print("rate Mbit/s   no QoS Mbit/s   default    2 ms")
    for rate, capacity, default, b2 in shape_rows:
        print("%11d   %13.0f   %7.4f   %5.4f%s" % (
            rate, capacity, default, b2,
            " *" if rate > 0.9 * capacity else ""))
    print("\nload average at the end: %s" % open("/proc/loadavg").read()
          .split()[0])


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""ADPS's server-side experiments on the priority event loop:
the full runs.  See python/pandalab/adps.py for what they do and why.

    bench/adps-experiments.py [--experiments queueing,blocking] [--reps 3]
                              [--out DIR] [--build DIR] [--nice N]
                              [--rt PRIO] [--burst N]

Writes DIR/adps.json (metadata, every run's client and server JSON, the
p99 of the latency-sensitive type per mode and its ratio to the ideal or
optimum) and DIR/adps-<experiment>.png; prints the summary.  About a
minute per repetition and mode (7 runs per repetition), not niced: see
main().  On a machine other jobs share, --rt 50 (root) is how the
reference figures were taken (docs/design.md, "Application-defined
priority").  tests/loadgen/test_adps.py runs the quick versions.
"""

import datetime
import json
import os
import sys

try:
    import pandaovs  # noqa: F401
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

from pandaovs import cli  # noqa: E402
from pandalab import adps  # noqa: E402


def main():
    ap = cli.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--experiments", default="queueing,blocking")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=None,
                    help="output directory (default results/adps-TIME)")
    ap.add_argument("--build", default=None, help="build tree")
    ap.add_argument("--nice", type=int, default=0,
                    help="run server and client at this nice value "
                         "(e.g. -10 as root on a machine other jobs share)")
    ap.add_argument("--rt", type=int, default=0, metavar="PRIO",
                    help="run server and client under SCHED_FIFO at this "
                         "priority (1..99, root; chrt): on a shared machine "
                         "they then take a core as soon as they wake, as "
                         "on a dedicated one; 0 = off (default)")
    ap.add_argument("--burst", type=int, default=0, metavar="N",
                    help="queueing: bursts of N requests (default 40), "
                         "the interval scaled with N so that the load "
                         "stays 0.8 (pandalab.adps.queueing_burst)")
    a = ap.parse_args()
    if a.burst < 0:
        ap.error("--burst: %d is not a number of requests" % a.burst)
    if not -20 <= a.nice <= 19:
        ap.error("--nice: %d is not a nice value (-20..19)" % a.nice)
    if not 0 <= a.rt <= 99:
        ap.error("--rt: %d is not a SCHED_FIFO priority (1..99, or 0 for "
                 "off)" % a.rt)
    if a.rt and a.nice:
        ap.error("--rt and --nice: choose one (a SCHED_FIFO process has no "
                 "nice value)")
    if a.rt and os.geteuid() != 0:
        ap.error("--rt: needs root (SCHED_FIFO)")
    names = a.experiments.split(",")
    for n in names:
        if n not in adps.EXPERIMENTS:
            ap.error("--experiments: unknown %r (known: %s)"
                     % (n, ", ".join(adps.EXPERIMENTS)))
    # Not niced (unlike the CPU benchmarks): what is measured is latency,
    # which a niced process on a loaded machine mostly spends waiting for
    # the CPU; the runs themselves use little CPU (the queueing experiment
    # sleeps, the blocking one spins for about 2% of a core).
    out = a.out or os.path.join("results", "adps-" + datetime.datetime.now()
                                .strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    doc = {"metadata": adps.metadata(sys.argv, a.build), "experiments": {}}
    doc["metadata"]["nice"] = a.nice
    doc["metadata"]["sched_fifo_priority"] = a.rt
    doc["metadata"]["queueing_burst"] = a.burst or None
    for n in names:
        client = (adps.queueing_burst(a.burst)
                  if a.burst and n == "queueing" else None)
        res = adps.run_experiment(adps.EXPERIMENTS[n], a.build, a.reps,
                                  client_args=client,
                                  log=lambda m: print(m, file=sys.stderr),
                                  nice=a.nice, rt=a.rt)
        adps.plot(res, os.path.join(out, "adps-%s.png" % n))
        for rs in res["runs"].values():
            for r in rs:
                r.pop("samples")
        doc["experiments"][n] = res
        exp = res["experiment"]
        print("%s: %s" % (n, exp["title"]))
        print("  %-14s %12s %10s" % ("mode", "p99 (us)",
                                     "x " + exp["reference"]))
        for mode, s in res["summary"].items():
            print("  %-14s %12.0f %10.2f" % (
                mode, s["p99_us_median"],
                s["ratio_to_%s" % exp["reference"]]))
    doc["metadata"]["loadavg_at_end"] = os.getloadavg()
    with open(os.path.join(out, "adps.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print("results in %s" % out)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""tools/panda-bench of two build trees, interleaved: the cost of a change
to lib/panda's per-packet path (issue 17: the classifier interface must not
slow Panda or PIAS down).

    bench/bench-panda-ab.py --before /work/main/_build --after _build
                            [--reps 7] [-- PANDA-BENCH OPTIONS...]

Runs 'panda-bench' from BEFORE and AFTER alternately (ABBA order, so that
drifts in the machine's load hit both alike), --reps times each, and prints
per connection count the median ns/packet of the Panda policy and of the
PIAS policy for both trees, and after/before ratios.  On a shared machine
single runs vary by tens of percent; the medians of interleaved runs are
what to compare.  No pass/fail.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

ROW = re.compile(r"^\s*(\d+) \|\s+([\d.]+)\s+([\d.]+)\s")


def run(build, extra):
    out = subprocess.run(
        ["nice", "-n", "10", os.path.join(build, "tools", "panda-bench")]
        + extra, check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            rows[int(m.group(1))] = (float(m.group(2)), float(m.group(3)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="build tree (baseline)")
    ap.add_argument("--after", required=True, help="build tree (change)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("bench_args", nargs=argparse.REMAINDER,
                    help="options for panda-bench, after '--'")
    a = ap.parse_args()
    extra = [x for x in a.bench_args if x != "--"] or \
        ["--max-conns", "100000", "--packets", "2000000"]
    runs = {"before": [], "after": []}
    for i in range(a.reps):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")
        for which in order:
            runs[which].append(run(getattr(a, which), extra))
            print("rep %d/%d: %s done" % (i + 1, a.reps, which),
                  file=sys.stderr)
    print("panda-bench %s, %d interleaved runs per tree; medians in ns/packet"
          % (" ".join(extra), a.reps))
    print("%8s | %12s %12s %7s | %12s %12s %7s" % (
        "conns", "panda before", "panda after", "ratio", "pias before",
        "pias after", "ratio"))
    for conns in sorted(runs["before"][0]):
        med = {w: [statistics.median(r[conns][k] for r in runs[w])
                   for k in (0, 1)] for w in runs}
        print("%8d | %12.1f %12.1f %7.3f | %12.1f %12.1f %7.3f" % (
            conns, med["before"][0], med["after"][0],
            med["after"][0] / med["before"][0], med["before"][1],
            med["after"][1], med["after"][1] / med["before"][1]))
    print("ratio = after / before (1.000: no change).")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""tools/panda-bench of two build trees, interleaved: the cost of a change
to lib/panda's per-packet path (the classifier interface must not
slow Panda or PIAS down).

    bench/bench-panda-ab.py --before /work/main/_build --after _build
                            [--reps 7] [-- PANDA-BENCH OPTIONS...]
    bench/bench-panda-ab.py --before ... --after ... --instructions

Runs 'panda-bench' from BEFORE and AFTER alternately (ABBA order, so that
drifts in the machine's load hit both alike), --reps times each, and prints
per connection count the median ns/packet of the Panda policy and of the
PIAS policy for both trees, and after/before ratios.  On a shared machine
single runs vary by tens of percent; the medians of interleaved runs are
what to compare.  No pass/fail.

With --instructions, the measure does not depend on the machine's load:
each tree's panda-bench runs once under valgrind (callgrind, with its cache
simulation) for 1 and 1000 connections and 200,000 packets each, Panda and
PIAS, and the table shows per classified packet the instructions executed
in panda_table_classify() and below (inclusive), its data reads and its
simulated first-level data-cache read misses.  The counts are exact; what
they leave out is the cost of misses on the real machine (the ns figures
have it, with the noise).
"""

import argparse
import os
import re
import subprocess
import tempfile
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


def callgrind(build, tmp, conns, packets):
    """(Ir, Dr, D1mr) of panda_table_classify() (inclusive) per call, from
    one panda-bench run under callgrind."""
    out = os.path.join(tmp, "cg.%d" % abs(hash(build)))
    subprocess.run(["valgrind", "--tool=callgrind", "--cache-sim=yes",
                    "--callgrind-out-file=" + out,
                    os.path.join(build, "tools", "panda-bench"),
                    "--max-conns", str(conns), "--packets", str(packets)],
                   check=True, capture_output=True)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", out],
                         check=True, capture_output=True, text=True).stdout
    events = None
    for line in ann.splitlines():
        if line.startswith("Events shown:"):
            events = line.split(":", 1)[1].split()
        if re.search(r"conn-table\.c:panda_table_classify \[", line):
            nums = [int(x.replace(",", "")) for x in
                    re.findall(r"([\d,]+) \(", line)]
            v = dict(zip(events, nums))
            # Calls: both policies, every row (1 and 'conns' connections):
            # one per connection to populate, then 'packets' timed.
            calls = 2 * sum(c + packets for c in (1, conns))
            return tuple(v[k] / calls for k in ("Ir", "Dr", "D1mr"))
    raise RuntimeError("no panda_table_classify in callgrind's output")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="build tree (baseline)")
    ap.add_argument("--after", required=True, help="build tree (change)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions under valgrind instead")
    ap.add_argument("bench_args", nargs=argparse.REMAINDER,
                    help="options for panda-bench, after '--'")
    a = ap.parse_args()
    if a.instructions:
        with tempfile.TemporaryDirectory() as tmp:
            res = {w: callgrind(getattr(a, w), tmp, 1000, 200000)
                   for w in ("before", "after")}
        print("panda_table_classify() per packet (Panda and PIAS, 1 and "
              "1000 connections, 200000 packets each; callgrind)")
        print("%-8s %14s %12s %14s" % ("tree", "instructions", "data reads",
                                        "D1 read misses"))
        for w in ("before", "after"):
            print("%-8s %14.1f %12.1f %14.4f" % ((w,) + res[w]))
        print("%-8s %14.3f %12.3f %14.3f" % (
            "ratio", *(res["after"][i] / res["before"][i] for i in range(3))))
        return
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

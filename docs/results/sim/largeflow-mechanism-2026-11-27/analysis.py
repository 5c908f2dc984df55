#!/usr/bin/python3
"""The README's tables from runs.csv: per arrivals, variant and scheme,
the large flows (> 10 MB, started in the window) completed out of those
started, summed over the seeds, with a 95% Wilson interval; Fisher's
exact test (two-sided, flows treated as independent) against pias of the
same variant and against the same scheme's base run; the mean over seeds
of the small flows' mean FCT, the medium flows' mean FCT, the memcached
p99, RTOs, fast recoveries and drops per run.
Usage: analysis.py [runs.csv]"""

import csv
import math
import os
import statistics
import sys
from collections import defaultdict


def fisher(a, b, c, d):
    """Two-sided p of the 2x2 table [[a, b], [c, d]]."""
    n, r1, c1 = a + b + c + d, a + b, a + c

    def p(x):
        return (math.comb(r1, x) * math.comb(n - r1, c1 - x)
                / math.comb(n, c1))
    p0 = p(a)
    return sum(p(x) for x in range(max(0, c1 - (n - r1)), min(r1, c1) + 1)
               if p(x) <= p0 * (1 + 1e-9))


def wilson(k, n, z=1.96):
    if n == 0:
        return (float("nan"),) * 2
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def mean(rows, col):
    v = [float(r[col]) for r in rows if r[col] not in ("", None)]
    return statistics.mean(v) if v else float("nan")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "runs.csv")
    groups = defaultdict(list)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            groups[(r["arrivals"], r["variant"], r["scheme"])].append(r)

    def large(key):
        rs = groups.get(key, [])
        done = sum(int(r["large_done"]) for r in rs)
        return done, sum(int(r["large_unfinished"]) for r in rs)

    print("arrivals variant scheme seeds | large done/started [95%] "
          "p(vs pias) p(vs base) | small ms, medium s, memcached p99 ms | "
          "RTO, fast rec., drops full, pushed out (per run) | rpc level | "
          "flows > 300 KB that never entered CWR (traced runs) | "
          "runs whose sink listener took a CE-marked segment, its sequence "
          "number's median (MB)")
    for key in sorted(groups):
        arrivals, variant, scheme = key
        rs = groups[key]
        d, u = large(key)
        lo, hi = wilson(d, d + u)
        vs = []
        for other in ((arrivals, variant, "pias"),
                      (arrivals, "base", scheme)):
            if other != key and other in groups:
                vs.append("%.3g" % fisher(d, u, *large(other)))
            else:
                vs.append("-")
        levels = sorted({r["rpc_level"] for r in rs})
        traced = [r for r in rs if r.get("flows_no_cwr")]
        deaf = "%d of %d" % (sum(int(r["flows_no_cwr"]) for r in traced),
                             sum(int(r["flows_over_300kb"]) for r in traced)) \
            if traced else "-"
        lis = [r for r in rs if r.get("listener_ecn_changes") not in
               ("", None)]
        seqs = [int(r["listener_ce_seq"]) / 1e6 for r in lis
                if int(r.get("listener_ce_seq") or -1) >= 0]
        lis = "%d of %d, %.2f" % (
            len(seqs), len(lis),
            statistics.median(seqs) if seqs else float("nan")) \
            if lis else "-"
        print("%s %s %s %d | %d/%d [%.2f, %.2f] %s %s | %.1f, %.2f, %.2f | "
              "%.0f, %.0f, %.0f, %.0f | %s | %s | %s"
              % (arrivals, variant, scheme, len(rs), d, d + u, lo, hi,
                 vs[0], vs[1], mean(rs, "small_mean_ms"),
                 mean(rs, "medium_mean_ms") / 1e3, mean(rs, "rpc_p99_ms"),
                 mean(rs, "rto"), mean(rs, "fast_recovery"),
                 mean(rs, "drop_full"), mean(rs, "drop_push_out"),
                 "/".join(levels), deaf, lis))
    split_by_deaf(groups)


def split_by_deaf(groups):
    """Traced runs split by whether any flow ignored ECN throughout (the
    ns-3 listener artefact, README): large flows completed / started in
    the runs without such a flow and in those with one, and Fisher's test
    of each scheme's runs without one against pias's base without one."""
    print()
    print("traced runs: large flows done/started in runs with no flow that "
          "never entered CWR | in runs with one")
    rows = {}
    for key in sorted(groups):
        rs = [r for r in groups[key] if r.get("flows_no_cwr") not in
              ("", None)]
        if rs:
            rows[key] = ([r for r in rs if int(r["flows_no_cwr"]) == 0],
                         [r for r in rs if int(r["flows_no_cwr"]) > 0])

    def count(sel):
        d = sum(int(r["large_done"]) for r in sel)
        return d, sum(int(r["large_unfinished"]) for r in sel)
    for key, (ok, bad) in rows.items():
        (a, b), (c, d) = count(ok), count(bad)
        ref = rows.get((key[0], "base", "pias"))
        p = ("%.3g" % fisher(a, b, *count(ref[0]))) \
            if ref and key[1:] != ("base", "pias") else "-"
        print("%s %s %s | %d runs: %d/%d (p vs pias base %s) | %d runs: "
              "%d/%d" % (key[0], key[1], key[2], len(ok), a, a + b, p,
                         len(bad), c, c + d))


if __name__ == "__main__":
    main()

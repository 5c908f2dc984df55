#!/usr/bin/python3
"""Recomputes this folder's README table from flows-in-window.csv.gz
(the flows started in the 20 s FCT window, per workload, scheme and seed,
from the run's points/*/flows.csv): the small flows' (<= 100 KB) mean FCT
panda/pias per seed with a 95% interval over the 20 seeds (geometric), the
same without the flows above 150 ms, and the large flows' (> 10 MB)
completions with Fisher's exact test.  Usage: analysis.py [CSV]"""

import csv
import gzip
import math
import os
import statistics
import sys

T95_19 = 2.093          # Student's t, 19 degrees of freedom, two-sided 95%


def gm_ci(values):
    logs = [math.log(v) for v in values]
    m = statistics.mean(logs)
    h = T95_19 * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def fisher(a, b, c, d):
    """Two-sided p of the 2x2 table [[a, b], [c, d]]."""
    n, r1, c1 = a + b + c + d, a + b, a + c

    def p(x):
        return (math.comb(r1, x) * math.comb(n - r1, c1 - x)
                / math.comb(n, c1))
    p0 = p(a)
    return sum(p(x) for x in range(max(0, c1 - (n - r1)), min(r1, c1) + 1)
               if p(x) <= p0 * (1 + 1e-9))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "flows-in-window.csv.gz")
    flows = {}
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            key = (r["workload"], r["scheme"], int(r["seed"]))
            fct = float(r["fct_ms"]) if r["fct_ms"] else None
            flows.setdefault(key, []).append((int(r["size"]), fct))
    for wl in sorted({k[0] for k in flows}):
        seeds = sorted({k[2] for k in flows if k[0] == wl})
        ratio, trimmed, slow, n_small, large = [], [], {}, {}, {}
        for seed in seeds:
            means = {}
            for sch in ("pias", "panda"):
                fl = flows[(wl, sch, seed)]
                small = [t for s, t in fl if s <= 100000 and t is not None]
                big = [t for s, t in fl if s > 10000000]
                means[sch] = (statistics.mean(small),
                              statistics.mean([t for t in small
                                               if t <= 150]))
                slow[sch] = slow.get(sch, 0) + sum(t > 150 for t in small)
                n_small[sch] = n_small.get(sch, 0) + len(small)
                done, left = large.get(sch, (0, 0))
                large[sch] = (done + sum(t is not None for t in big),
                              left + sum(t is None for t in big))
            ratio.append(means["panda"][0] / means["pias"][0])
            trimmed.append(means["panda"][1] / means["pias"][1])
        print("%s, %d seeds" % (wl, len(seeds)))
        print("  small flows' mean FCT, panda/pias: %.3f [%.3f, %.3f]"
              % gm_ci(ratio))
        print("  the same without flows above 150 ms: %.3f [%.3f, %.3f]"
              % gm_ci(trimmed))
        print("  small flows above 150 ms: pias %d of %d, panda %d of %d"
              % (slow["pias"], n_small["pias"], slow["panda"],
                 n_small["panda"]))
        (a, b), (c, d) = large["pias"], large["panda"]
        print("  large flows completed / not: pias %d / %d, panda %d / %d;"
              " Fisher's exact test, two-sided p = %.4f"
              % (a, b, c, d, fisher(a, b, c, d)))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes this folder's flows-in-window.csv.gz and level-bytes.json from a
`sim/run.py workloads` run directory (its points/*/point.json and
flows.csv, which are too large to keep): every background flow started in
the FCT window (the point's warm-up to warm-up + WINDOW seconds) of each
loaded pias and panda point, FCT empty if unfinished; and the bytes each
scheduler level sent, summed over the simulator's queues, in MB, mean per
seed.  Usage: extract.py RUN_DIR [OUT_DIR] [WINDOW_S]"""

import csv
import glob
import gzip
import json
import os
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: extract.py RUN_DIR [OUT_DIR] [WINDOW_S]")
    run = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(
        os.path.abspath(__file__))
    window_s = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
    rows, levels = [], {}
    points = sorted(glob.glob(os.path.join(run, "points", "*", "point.json")))
    if not points:
        sys.exit("extract.py: no points/*/point.json under %s" % run)
    for pj in points:
        with open(pj) as f:
            p = json.load(f)
        pt = p["point"]
        if pt["scheme"] not in ("pias", "panda") or not pt["flows"]:
            continue
        if not p.get("complete"):
            sys.exit("extract.py: %s is not complete" % pj)
        lo = int(pt["warmup"] * 1e9)
        hi = int((pt["warmup"] + window_s) * 1e9)
        with open(os.path.join(os.path.dirname(pj), "flows.csv")) as f:
            for r in csv.DictReader(f):
                start = int(r["start_ns"])
                if r["kind"] != "background" or not lo <= start < hi:
                    continue
                fin = int(r["finish_ns"])
                fct = "%.6f" % ((fin - start) / 1e6) if fin >= 0 else ""
                rows.append((pt["workload"], pt["scheme"], pt["seed"],
                             int(r["size"]), start, fct))
        key = "%s %s" % (pt["workload"], pt["scheme"])
        sent = [lv["sent_bytes"] for lv in p["run"]["sched"]["levels"]]
        levels.setdefault(key, []).append(sent)
    rows.sort(key=lambda r: (r[0], r[1] != "pias", r[2], r[4]))
    with gzip.open(os.path.join(out, "flows-in-window.csv.gz"), "wt",
                   newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(("workload", "scheme", "seed", "size", "start_ns",
                    "fct_ms"))
        w.writerows(rows)
    mean = {k: [round(sum(s[i] for s in v) / len(v) / 1e6, 1)
                for i in range(len(v[0]))] for k, v in sorted(levels.items())}
    with open(os.path.join(out, "level-bytes.json"), "w") as f:
        json.dump(mean, f, indent=1)
        f.write("\n")
    print("%d flows from %d points" % (len(rows),
                                       sum(len(v) for v in levels.values())))


if __name__ == "__main__":
    main()

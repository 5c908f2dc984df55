#!/usr/bin/python3
"""What ../largeflow-mechanism-2026-11-27/extract.py does not take from
run.json: per run, the flow sinks' listener (the CE sequence number it
took, the connections it forked, those that started with a CE sequence
number above zero, the largest such number) and the lowest level's share
(its bytes sent and its packets dropped for a full buffer or pushed out,
against levels 0-6; summed over the simulator's scheduler queues, as
run.json gives them).  Writes forks.csv beside this file and prints one
line per arrivals, variant and scheme.
Usage: forks.py OUT_DIR  (OUT_DIR as run.sh's $OUT)"""

import csv
import json
import os
import sys
from collections import defaultdict

COLUMNS = ("arrivals", "variant", "scheme", "seed", "listener_ecn",
           "listener_ce_seq", "forks", "forks_stale_ce", "fork_max_ce_seq",
           "l7_sent_mb", "l0_6_sent_mb", "l7_drops", "l0_6_drops",
           "guard_packets")


def one(path, arrivals, variant, scheme, seed):
    with open(os.path.join(path, "run.json")) as f:
        run = json.load(f)
    tcp = run["tcp"]
    lv = run["sched"]["levels"]

    def drops(ls):
        return sum(x["drop_limit"] + x["drop_push_out"] for x in ls)
    return {
        "arrivals": arrivals, "variant": variant, "scheme": scheme,
        "seed": seed, "listener_ecn": run["config"]["listener_ecn"],
        "listener_ce_seq": tcp["flow_listener_ce_seq"],
        "forks": tcp["flow_listener_forks"],
        "forks_stale_ce": tcp["flow_listener_forks_stale_ce"],
        "fork_max_ce_seq": tcp["flow_listener_fork_max_ce_seq"],
        "l7_sent_mb": "%.2f" % (lv[7]["sent_bytes"] / 1e6),
        "l0_6_sent_mb": "%.2f" % (sum(x["sent_bytes"] for x in lv[:7]) / 1e6),
        "l7_drops": drops(lv[7:]), "l0_6_drops": drops(lv[:7]),
        "guard_packets": sum(x["guard_packets"] for x in lv),
    }


def main():
    src = sys.argv[1]
    rows = []
    for arrivals in sorted(os.listdir(src)):
        for variant in sorted(os.listdir(os.path.join(src, arrivals))):
            vdir = os.path.join(src, arrivals, variant)
            for name in sorted(os.listdir(vdir)):
                path = os.path.join(vdir, name)
                if os.path.exists(os.path.join(path, "run.json")):
                    scheme, seed = name.rsplit("-s", 1)
                    rows.append(one(path, arrivals, variant, scheme,
                                    int(seed)))
    rows.sort(key=lambda r: (r["arrivals"], r["variant"], r["scheme"],
                             r["seed"]))
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "forks.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(rows)
    groups = defaultdict(list)
    for r in rows:
        groups[(r["arrivals"], r["variant"], r["scheme"])].append(r)
    print("arrivals variant scheme runs | listener_ecn | runs whose "
          "listener took CE | forks, stale forks (sum) | per run: level 7 "
          "sent MB, levels 0-6 sent MB, level 7 drops, levels 0-6 drops, "
          "guard packets")
    for key, rs in sorted(groups.items()):
        n = len(rs)
        print("%s %s %s %d | %s | %d | %d, %d | %.1f, %.1f, %.0f, %.0f, %.0f"
              % (*key, n, "/".join(sorted({r["listener_ecn"] for r in rs})),
                 sum(r["listener_ce_seq"] >= 0 for r in rs),
                 sum(r["forks"] for r in rs),
                 sum(r["forks_stale_ce"] for r in rs),
                 sum(float(r["l7_sent_mb"]) for r in rs) / n,
                 sum(float(r["l0_6_sent_mb"]) for r in rs) / n,
                 sum(r["l7_drops"] for r in rs) / n,
                 sum(r["l0_6_drops"] for r in rs) / n,
                 sum(r["guard_packets"] for r in rs) / n))


if __name__ == "__main__":
    main()

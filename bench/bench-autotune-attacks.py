#!/usr/bin/python3
"""What tenants' traffic makes auto-tune push, round by round
(pandaovs.controller.autotune, "What a tenant can move"): for each attack,
the model's own proposal (what the controller pushed before the step and
the bounds) beside what is pushed now, against a legit-only baseline in
the same run.  Synthetic histograms, the build's panda-model; seconds.

    /usr/bin/python3 bench/bench-autotune-attacks.py [--rounds 8]
        [--json FILE]

Attacks (per round, on top of the legit traffic):
  tiny-flows   50,000 finished flows of 8 bytes (two packets each: the
               datapath no longer counts one-packet tuples);
  level0-1400  100,000 packets of 1400-byte payloads kept at level 0;
  two-bridges  the tiny flows from a second bridge (the source cap).
"""

import argparse
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

from pandaovs import paths  # noqa: E402
from pandaovs.controller import autotune  # noqa: E402
from pandaovs.policy import Policy  # noqa: E402
from pandaovs.sizehist import Histogram  # noqa: E402

CONFIGURED = Policy(id=7, threshold=1000,
                    thresholds=(20000, 1000000, 10000000),
                    dscp=(46, 26, 18, 0), queues=(0, 1, 2, 3))
LEGIT = {"payload": {0: {24: 3000, 96: 1500, 320: 600},
                     1: {512: 3000, 1448: 4000}, 2: {1448: 6000},
                     3: {1448: 9000}},
         "flow": {8192: 40, 16384: 20, 65536: 20, 1048576: 15, 8388608: 5}}
TINY = {"payload": {}, "flow": {8: 50000}}
LEVEL0 = {"payload": {0: {1400: 100000}}, "flow": {}}
SCENARIOS = {
    "legit": lambda: {"br0": [LEGIT]},
    "tiny-flows": lambda: {"br0": [LEGIT, TINY]},
    "level0-1400": lambda: {"br0": [LEGIT, LEVEL0]},
    "two-bridges": lambda: {"br0": [LEGIT],
                            "br1": [{"payload": {0: {24: 3000},
                                                 3: {1448: 9000}},
                                     "flow": {8: 50000}}]},
}


def add(h, parts):
    for part in parts:
        for lv, b in part["payload"].items():
            mine = h.payload.setdefault(lv, {})
            for lo, c in b.items():
                mine[lo] = mine.get(lo, 0) + c
        for lo, c in part["flow"].items():
            h.flow[lo] = h.flow.get(lo, 0) + c


def run(name, rounds):
    st = autotune.Settings(model=os.path.join(paths.build_dir(), "tools",
                                              "panda-model"),
                           cdf=paths.cdf("web-search.cdf"), load=0.8,
                           interval=1, min_interval=0, margin=0.05,
                           confirm=1, min_packets=100, min_flows=50)
    bounds = autotune.effective_bounds(CONFIGURED, None, st.bound_factor)
    tuner = autotune.Tuner(CONFIGURED.id, st)
    totals, current, out = {}, CONFIGURED, []
    for r in range(rounds):
        snaps = {}
        for br, parts in SCENARIOS[name]().items():
            h = totals.setdefault(br, Histogram(CONFIGURED.id))
            add(h, parts)
            snaps[br] = Histogram(CONFIGURED.id)
            add(snaps[br], [{"payload": h.payload, "flow": h.flow}])
        action, reason, proposed, inputs = tuner.step(current, snaps, bounds)
        if proposed is not None:
            current = proposed
        out.append({"round": r + 1, "action": action,
                    "model": inputs.get("model_proposed"),
                    "in_force": current.text(),
                    "limited": inputs.get("limited"),
                    "influence": inputs.get("influence")})
    return {"bounds": bounds.summary(), "rounds": out}


def short(text):
    if not text:
        return "-"
    p = Policy.from_text(text)
    return "T=%d a=%s" % (p.threshold, "/".join(map(str, p.thresholds)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    res = {"configured": CONFIGURED.text(), "scenarios": {}}
    for name in SCENARIOS:
        r = res["scenarios"][name] = run(name, args.rounds)
        print("%s (bounds T %s, alpha %s):" % (
            name, r["bounds"]["threshold"], r["bounds"]["thresholds"]))
        for x in r["rounds"]:
            print("  %d %-5s model %-40s in force %s%s" % (
                x["round"], x["action"], short(x["model"]),
                short(x["in_force"]),
                "  influence %s" % x["influence"] if x["influence"]
                else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

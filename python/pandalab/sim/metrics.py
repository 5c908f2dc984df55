"""Statistics of one simulation point, from panda-sim's flows.csv and
rpc.csv (the simulator writes records; every statistic is computed here,
once).

FCT buckets are the thesis's and the testbed's: small (0, 100 KB],
medium (100 KB, 10 MB], large > 10 MB (decimal units, bytes of payload),
plus "all".  Percentiles are nearest-rank (the smallest value with at
least q of the sample at or below it), so a p99 is always a measured
value.  Times are reported in milliseconds.
"""

import csv
import math

BUCKETS = (("small", 0, 100000), ("medium", 100000, 10000000),
           ("large", 10000000, None), ("all", 0, None))


def percentile(sorted_values, q):
    """Nearest-rank percentile of an ascending list (None if empty)."""
    if not sorted_values:
        return None
    k = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[min(k, len(sorted_values)) - 1]


def _describe(values):
    v = sorted(values)
    if not v:
        return {"mean": None, "p50": None, "p99": None, "max": None}
    return {"mean": sum(v) / len(v), "p50": percentile(v, 0.50),
            "p99": percentile(v, 0.99), "max": v[-1]}


def read_flows(path):
    with open(path, newline="") as f:
        return [{"id": int(r["id"]), "kind": r["kind"],
                 "group": int(r["group"]), "src": int(r["src"]),
                 "dst": int(r["dst"]), "size": int(r["size"]),
                 "start_ns": int(r["start_ns"]),
                 "finish_ns": int(r["finish_ns"]),
                 "ideal_ns": int(r["ideal_ns"])}
                for r in csv.DictReader(f)]


def read_rpcs(path):
    with open(path, newline="") as f:
        return [{"pair": int(r["pair"]), "value": int(r["value"]),
                 "sent_ns": int(r["sent_ns"]), "done_ns": int(r["done_ns"])}
                for r in csv.DictReader(f)]


def in_bucket(size, lo, hi):
    return size > lo and (hi is None or size <= hi)


def fct_summary(flows, from_ns=0, to_ns=None):
    """Per bucket: flows, completed, unfinished, FCT mean/p50/p99/max
    (ms) and slowdown (FCT / FCT alone in the network) mean/p50/p99 over
    the completed background flows that started in [from_ns, to_ns] (the
    testbed's FCT window: every scheme is judged on the flows of the same
    stretch of time)."""
    out = {}
    for name, lo, hi in BUCKETS:
        sel = [f for f in flows if f["kind"] == "background"
               and in_bucket(f["size"], lo, hi)
               and f["start_ns"] >= from_ns
               and (to_ns is None or f["start_ns"] <= to_ns)]
        done = [f for f in sel if f["finish_ns"] >= 0]
        fct = _describe([(f["finish_ns"] - f["start_ns"]) / 1e6
                         for f in done])
        slow = _describe([(f["finish_ns"] - f["start_ns"]) / f["ideal_ns"]
                          for f in done if f["ideal_ns"] > 0])
        out[name] = {"flows": len(sel), "completed": len(done),
                     "unfinished": len(sel) - len(done),
                     "mean_ms": fct["mean"], "p50_ms": fct["p50"],
                     "p99_ms": fct["p99"], "max_ms": fct["max"],
                     "slowdown_mean": slow["mean"],
                     "slowdown_p50": slow["p50"],
                     "slowdown_p99": slow["p99"]}
    return out


def incast_summary(flows):
    """Query completion time (last response in - first request out) over
    the incast queries whose responses all completed; None without
    incast."""
    groups = {}
    for f in flows:
        if f["kind"] == "incast":
            groups.setdefault(f["group"], []).append(f)
    if not groups:
        return None
    qct = []
    for members in groups.values():
        if all(m["finish_ns"] >= 0 for m in members):
            qct.append((max(m["finish_ns"] for m in members)
                        - min(m["start_ns"] for m in members)) / 1e6)
    d = _describe(qct)
    return {"queries": len(groups), "completed": len(qct),
            "unfinished": len(groups) - len(qct), "qct_mean_ms": d["mean"],
            "qct_p50_ms": d["p50"], "qct_p99_ms": d["p99"],
            "qct_max_ms": d["max"]}


def rpc_summary(rpcs, from_ns=0, to_ns=None):
    """Latency of the memcached-like requests sent in [from_ns, to_ns]:
    count, completed, unfinished, mean/p50/p90/p99/p99.9/max (ms); None
    without requests."""
    sel = [r for r in rpcs if r["sent_ns"] >= from_ns
           and (to_ns is None or to_ns < 0 or r["sent_ns"] <= to_ns)]
    if not sel:
        return None
    lat = sorted((r["done_ns"] - r["sent_ns"]) / 1e6 for r in sel
                 if r["done_ns"] >= 0)
    return {"requests": len(sel), "completed": len(lat),
            "unfinished": len(sel) - len(lat),
            "mean_ms": sum(lat) / len(lat) if lat else None,
            "p50_ms": percentile(lat, 0.50), "p90_ms": percentile(lat, 0.90),
            "p99_ms": percentile(lat, 0.99),
            "p999_ms": percentile(lat, 0.999),
            "max_ms": lat[-1] if lat else None}

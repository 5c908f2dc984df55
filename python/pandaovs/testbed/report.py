"""Aggregation, the terminal table and the CSV."""

import csv

from . import targets
from . import stats
from .schemes import canonical
from .stats import get
from .stats import trimmed as stats_trimmed

MC_METRICS = ("p50_ms", "p90_ms", "p99_ms", "p99.9_ms", "mean_ms", "max_ms")
EGRESS_COUNTERS = ("mark-ecn", "drop-limit", "drop-push-out", "guard")


def _level_sum(trial, counter):
    """A panda-sched counter of 'trial' summed over the levels (None on
    linux-htb, whose class counters have drops only: tc_classes)."""
    levels = trial.get("sched_levels")
    if levels is None:
        if counter == "drop-limit" and trial.get("tc_classes"):
            return sum(c.get("dropped", 0)
                       for c in trial["tc_classes"].values())
        return None
    return sum(lv.get(counter, 0) for lv in levels)


def level_bytes(trial):
    """Bytes the bottleneck sent per level in 'trial' ([level 0, 1, ...]):
    panda-sched's per-level counters, or the HTB class of each queue
    (class 1:N+1 is queue N).  None when the trial recorded neither."""
    levels = trial.get("sched_levels")
    if levels is not None:
        return [lv.get("sent_b", 0) for lv in levels]
    classes = trial.get("tc_classes")
    if not classes:
        return None
    out = {}
    for cls, c in classes.items():
        major, _, minor = cls.partition(":")
        # 1:fffe is the root class OVS's linux-htb hangs the queues from.
        if major == "1" and minor and minor != "fffe":
            out[int(minor, 16) - 1] = c.get("bytes", 0)
    return [out.get(i, 0) for i in range(max(out) + 1)] if out else None


def fct_buckets(trials):
    """The FCT size buckets, in panda-fg-client's order: {name:
    size_range_bytes}.  They are defined once, in the client
    (load_generator/fg-client.c), and carried by its JSON into each
    trial's "fct"."""
    out = {}
    for t in trials:
        for name, st in (t.get("fct") or {}).items():
            out.setdefault(name, st.get("size_range_bytes"))
    return out


def aggregate(trials):
    """Groups ok trials by (cc, scheme, concurrency, requests) and reduces
    every metric over the repetitions (thesis: drop min and max)."""
    groups = {}
    ranges = fct_buckets(trials)
    for t in trials:
        key = (t["cc"], canonical(t["scheme"]), t["concurrency"],
               t["requests"])
        g = groups.setdefault(key, {"ok": [], "failed": [],
                                    "experiments": set()})
        g["experiments"].update(t.get("experiments") or [])
        (g["ok"] if t["status"] == "ok" else g["failed"]).append(t)
    rows = []
    for (cc, scheme, conc, req), g in sorted(groups.items()):
        ok = g["ok"]
        reps = [t["rep"] for t in ok]

        def trimmed(values):
            # Each value with its repetition: targets pair schemes by
            # repetition (the same seed).
            return stats_trimmed(values, reps)
        row = {"cc": cc, "scheme": scheme, "concurrency": conc,
               "requests": req, "experiments": sorted(g["experiments"]),
               "reps_ok": len(ok), "reps_failed": len(g["failed"]),
               "failures": [t["status"] for t in g["failed"]],
               "memcached": {}, "fct_mean_ms": {}, "fct_completed": {}}
        for m in MC_METRICS:
            row["memcached"][m] = trimmed(get(t, ("memcached", m))
                                          for t in ok)
        row["fct_p99_ms"], row["fct_unfinished"] = {}, {}
        for b in ranges:
            row["fct_mean_ms"][b] = trimmed(get(t, ("fct", b, "mean_ms"))
                                            for t in ok)
            row["fct_p99_ms"][b] = trimmed(get(t, ("fct", b, "p99_ms"))
                                           for t in ok)
            row["fct_completed"][b] = sum(
                get(t, ("fct", b, "completed")) or 0 for t in ok)
            row["fct_unfinished"][b] = sum(
                get(t, ("fct", b, "unfinished")) or 0 for t in ok)
        # The senders' TCP (retransmissions, RTOs) and, on panda-sched, the
        # egress's marks and drops, per trial summed over the levels.
        row["tcp_sender"] = {k: trimmed(get(t, ("tcp_sender", k))
                                        for t in ok)
                             for k in sorted({k for t in ok for k in
                                              t.get("tcp_sender") or {}})}
        row["egress"] = {k: trimmed(_level_sum(t, k) for t in ok)
                         for k in EGRESS_COUNTERS}
        row["fct_size_range_bytes"] = ranges
        row["goodput_mbps"] = trimmed(get(t, ("load", "goodput_mbps"))
                                      for t in ok)
        # Where the memcached connection's packets went (all reps).
        lv = {}
        for t in ok:
            for k, v in (t.get("memcached_levels") or {}).items():
                lv[k] = lv.get(k, 0) + v
        row["memcached_levels"] = lv
        n = sum(lv.values())
        row["memcached_level0_share"] = lv.get("0", 0) / n if n else None
        # ... and per repetition, for an interval.
        row["memcached_level0_share_reps"] = trimmed(
            _level0_share(t.get("memcached_levels")) for t in ok)
        # Bytes per level at the bottleneck (all reps): nearly all of them
        # the workload's flows, so how fast they sink.
        per = [b for b in (level_bytes(t) for t in ok) if b]
        row["bytes_per_level"] = ([sum(b[i] if i < len(b) else 0
                                       for b in per)
                                   for i in range(max(map(len, per)))]
                                  if per else None)
        sink = [targets.sinking(level_bytes(t)) or {} for t in ok]
        row["bytes_sinking_reps"] = {
            k: trimmed(x.get(k) for x in sink)
            for k in ("level0_share", "mean_level")}
        rows.append(row)
    return rows


def _level0_share(levels):
    n = sum((levels or {}).values())
    return (levels or {}).get("0", 0) / n if n else None


def _m(s):
    """A row's value: the mean, and with two or more repetitions its 95%
    interval's half-width (the interval is symmetric: stats.interval)."""
    if not s:
        return "-"
    if s.get("ci95"):
        return "%.2f±%.2f" % (s["mean"], (s["ci95"][1] - s["ci95"][0]) / 2)
    return "%.2f" % s["mean"]


def _bucket_names(rows):
    names = []
    for r in rows:
        names += [b for b in r["fct_mean_ms"] if b not in names]
    return names


def _lv(lv):
    n = sum(lv.values())
    if not n:
        return "-"
    top = lv.get("0", 0) / n
    deepest = max(int(k) for k, v in lv.items() if v)
    return "%3.0f%% top, max %d" % (100 * top, deepest)


def rows_of(result):
    """The aggregated rows of a result ({} before the run's end)."""
    return (result.get("summary") or {}).get("rows") or []


def table(result):
    out = []
    rows = rows_of(result)
    buckets = _bucket_names(rows)
    names = ["FCT %s" % buckets[0]] + buckets[1:] if buckets else []
    # The value columns as wide as their widest cell (an interval's
    # half-width makes them wider than a mean).
    cells = [[_m(r["memcached"][m]) for m in
              ("p50_ms", "p90_ms", "p99_ms", "p99.9_ms")]
             + [_m(r["fct_mean_ms"].get(b)) for b in buckets] for r in rows]
    heads = ["mc p50", "mc p90", "mc p99", "mc p99.9"] + names
    widths = [max([9, len(h)] + [len(c[i]) for c in cells])
              for i, h in enumerate(heads)]

    def cols(vals, lo, hi):
        return " ".join("%*s" % (w, v) for w, v in
                        zip(widths[lo:hi], vals[lo:hi]))
    n = len(heads)
    hdr = ("%-5s %-14s %5s %6s | %s | %-16s | %s | %s" % (
        "cc", "sch", "flows", "reqs", cols(heads, 0, 4), "mc queue",
        cols(heads, 4, n), "reps"))
    out.append("memcached latency and web-search mean FCT (ms; mean over "
               "the repetitions ± its 95%% confidence interval's "
               "half-width, from 2 repetitions; %d%% of each end dropped "
               "from 10)" % (stats.TRIM * 100))
    out.append(hdr)
    out.append("-" * len(hdr))
    for r, c in zip(rows, cells):
        out.append("%-5s %-14s %5d %6d | %s | %-16s | %s | %d%s"
                   % (r["cc"], r["scheme"], r["concurrency"], r["requests"],
                      cols(c, 0, 4), _lv(r["memcached_levels"]),
                      cols(c, 4, n), r["reps_ok"],
                      (" (+%d failed)" % r["reps_failed"])
                      if r["reps_failed"] else ""))
    # One line per congestion control the kernel lacks, not per scheme.
    why = {}
    for u in result.get("unavailable") or []:
        why.setdefault((u["cc"], u["status"]), []).append(u["scheme"])
    for (cc, status), schemes in why.items():
        out.append("%-5s %s: %s" % (cc, ",".join(schemes), status))
    for r in rows:
        for f in r["failures"]:
            out.append("FAILED %s %s flows %d requests %d: %s" % (
                r["cc"], r["scheme"], r["concurrency"], r["requests"], f))
    pol = result.get("policy") or {}
    for name in ("panda", "pias"):
        if name in pol:
            out.append("%s policy: %s" % (name, pol[name]["action"]))
    out += targets.lines(result.get("summary") or {})
    return "\n".join(out)


def _ci(s, digits):
    """(lo, hi) of a statistic's 95% interval, (None, None) without."""
    if not s or not s.get("ci95"):
        return None, None
    return tuple(round(v, digits) for v in s["ci95"])


def write_csv(result, path):
    """One row per (cc, scheme, concurrency, requests) with every figure's
    numbers, plus the unavailable rows."""
    cols = ["cc", "scheme", "concurrency", "requests", "experiments",
            "reps_ok", "reps_failed", "status"]
    for m in MC_METRICS:
        cols += ["mc_%s_mean" % m, "mc_%s_std" % m, "mc_%s_ci95_lo" % m,
                 "mc_%s_ci95_hi" % m]
    rows = rows_of(result)
    buckets = _bucket_names(rows)
    for b in buckets:
        cols += ["fct_%s_mean_ms" % b, "fct_%s_std_ms" % b,
                 "fct_%s_ci95_lo_ms" % b, "fct_%s_ci95_hi_ms" % b,
                 "fct_%s_completed" % b]
    cols += ["goodput_mbps", "memcached_levels"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            row = {k: r[k] for k in ("cc", "scheme", "concurrency",
                                     "requests", "reps_ok", "reps_failed")}
            row["experiments"] = "+".join(r["experiments"])
            row["status"] = "ok" if r["reps_ok"] else "failed"
            for m in MC_METRICS:
                s = r["memcached"][m]
                row["mc_%s_mean" % m] = s and round(s["mean"], 4)
                row["mc_%s_std" % m] = s and round(s["std"], 4)
                row["mc_%s_ci95_lo" % m], row["mc_%s_ci95_hi" % m] = \
                    _ci(s, 4)
            for b in buckets:
                s = r["fct_mean_ms"].get(b)
                row["fct_%s_mean_ms" % b] = s and round(s["mean"], 3)
                row["fct_%s_std_ms" % b] = s and round(s["std"], 3)
                row["fct_%s_ci95_lo_ms" % b], row["fct_%s_ci95_hi_ms" % b] \
                    = _ci(s, 3)
                row["fct_%s_completed" % b] = r["fct_completed"].get(b, 0)
            g = r["goodput_mbps"]
            row["goodput_mbps"] = g and round(g["mean"], 2)
            row["memcached_levels"] = " ".join(
                "%s:%d" % kv for kv in sorted(r["memcached_levels"].items()))
            w.writerow(row)
        for u in result.get("unavailable") or []:
            w.writerow({"cc": u["cc"], "scheme": u["scheme"],
                        "status": u["status"]})

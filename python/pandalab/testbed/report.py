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


def _num(v):
    """A number for the console: three significant figures or so, whole
    numbers as integers (the CSV and result.json keep every digit)."""
    if v is None:
        return "-"
    if float(v).is_integer() and abs(v) >= 1:
        return "%d" % v
    a = abs(v)
    return "%.0f" % v if a >= 100 else "%.1f" % v if a >= 10 \
        else "%.2f" % v


def _m(s):
    """A row's value: the mean, and with two or more repetitions its 95%
    interval's half-width (the interval is symmetric: stats.interval)."""
    if not s:
        return "-"
    if s.get("ci95"):
        return "%s±%s" % (_num(s["mean"]),
                          _num((s["ci95"][1] - s["ci95"][0]) / 2))
    return _num(s["mean"])


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


def _columns(rows, heads, cells):
    """(header, lines) of a table whose first columns say the row (cc,
    scheme, flows, requests) and whose value columns are as wide as their
    widest cell."""
    widths = [max([len(h)] + [len(c[i]) for c in cells])
              for i, h in enumerate(heads)]
    sch = max([6] + [len(r["scheme"]) for r in rows])

    def line(a, b, c, d, vals, reps):
        return "%-5s %-*s %5s %6s  %s  %s" % (
            a, sch, b, c, d, " ".join("%*s" % (w, v)
                                      for w, v in zip(widths, vals)), reps)
    head = line("cc", "scheme", "flows", "reqs", heads, "reps")
    return head, [line(r["cc"], r["scheme"], r["concurrency"], r["requests"],
                       c, "%d%s" % (r["reps_ok"], " (+%d failed)"
                                    % r["reps_failed"]
                                    if r["reps_failed"] else ""))
                  for r, c in zip(rows, cells)]


def table(result, brief_unavailable=False):
    """The run's closing text: memcached's latency and the flows' mean FCT
    per row (two tables, each within the console's 100 columns), the
    unavailable conditions once each, failures, the policies and the
    targets.  'brief_unavailable': the reasons were printed as the run
    began (a run's end), so they are not repeated."""
    out = []
    rows = rows_of(result)
    wl = ((result.get("metadata") or {}).get("workload") or {}).get(
        "name") or "the workload's"
    note = ("ms; mean over the repetitions ± the 95%% confidence "
            "interval's half-width where a row has 2 repetitions or more; "
            "%d%% of each end dropped from 10" % (stats.TRIM * 100))
    out.append("memcached latency (%s)" % note)
    heads = ["p50", "p90", "p99", "p99.9", "queue"]
    cells = [[_m(r["memcached"][m]) for m in
              ("p50_ms", "p90_ms", "p99_ms", "p99.9_ms")]
             + [_lv(r["memcached_levels"])] for r in rows]
    head, lines = _columns(rows, heads, cells)
    out += [head, "-" * len(head)] + lines
    buckets = _bucket_names(rows)
    if any(r["fct_mean_ms"] for r in rows):
        out.append("")
        out.append("%s flows' mean FCT (ms, as above)" % wl)
        cells = [[_m(r["fct_mean_ms"].get(b)) for b in buckets]
                 for r in rows]
        fct_rows = [(r, c) for r, c in zip(rows, cells)
                    if any(x != "-" for x in c)]
        head, lines = _columns([r for r, _ in fct_rows], buckets,
                               [c for _, c in fct_rows])
        out += [head, "-" * len(head)] + lines
    # One line per congestion control that cannot run, not per scheme.
    why = {}
    for u in result.get("unavailable") or []:
        why.setdefault((u["cc"], u["status"]), []).append(u["scheme"])
    for (cc, status), schemes in why.items():
        out.append("%s: %s" % (cc, "unavailable (the reason is above and "
                                   "in result.json)" if brief_unavailable
                               else status))
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


def _mc_col(metric, stat):
    """The CSV column of memcached's 'metric' ("p99_ms") and 'stat'
    ("mean"): quantity, statistic, unit, as the FCT columns are
    ("mc_p99_mean_ms" beside "fct_small_mean_ms")."""
    name, unit = metric.rsplit("_", 1)
    return "mc_%s_%s_%s" % (name, stat, unit)


# Columns of result.csv files written before the one order: memcached's
# had the unit before the statistic ("mc_p99_ms_mean").
_OLD_MC_COL = {"mc_%s_%s" % (m, st): _mc_col(m, st) for m in MC_METRICS
               for st in ("mean", "std", "ci95_lo", "ci95_hi")}


def read_csv(path):
    """The rows of a run's result.csv as dicts keyed by today's column
    names, whichever version wrote it."""
    with open(path, newline="") as f:
        return [{_OLD_MC_COL.get(k, k): v for k, v in row.items()}
                for row in csv.DictReader(f)]


def write_csv(result, path):
    """One row per (cc, scheme, concurrency, requests) with every figure's
    numbers, plus the unavailable rows.  Value columns are named quantity,
    statistic, unit: mc_p99_mean_ms, fct_small_ci95_lo_ms."""
    cols = ["cc", "scheme", "concurrency", "requests", "experiments",
            "reps_ok", "reps_failed", "status"]
    for m in MC_METRICS:
        cols += [_mc_col(m, st) for st in ("mean", "std", "ci95_lo",
                                           "ci95_hi")]
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
                row[_mc_col(m, "mean")] = s and round(s["mean"], 4)
                row[_mc_col(m, "std")] = s and round(s["std"], 4)
                row[_mc_col(m, "ci95_lo")], row[_mc_col(m, "ci95_hi")] = \
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

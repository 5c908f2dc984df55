"""matplotlib figures shaped like the thesis's: memcached p90/p99 vs
requests (grouped bars per scheme; its Figs 5.1/5.2 under CUBIC, 5.3/5.4
under DCTCP), p90/p99 vs concurrency (one panel per request count; Figs
5.6, 5.5) and the mean FCT per size bucket vs concurrency (Fig 5.10, a
DCTCP figure); the 10g profile's run gives the same under the thesis's 10
Gbit/s numbers, Figs 5.7, 5.8, 5.9 and 5.11.  A file carries the thesis's
number only when the run is the thesis's condition (conditions.py).
Error bars are the 95% confidence interval of the mean over the
repetitions (stats.py), drawn from 3 repetitions up (fewer: none, and the
title says so).  The latency figures draw the run's floor (memcached
unloaded, targets.floor) as a dashed line; the flows are named after the
run's workload.  The thesis's figures show the schemes compared on the
same FIFO levels; the per-flow queues and the ablations, each one change
to one scheme, have a figure of their own (factors-<cc>.png).

Every figure is written as PNG (300 dpi), PDF and SVG (pandalab.figures:
the schemes' names and colours, the axes, the legends);
'testbed/run.py plot RUN_DIR' draws them again from a run's
result.json."""

import os
import warnings

from .. import figures
from . import conditions
from .report import rows_of
from .schemes import ABLATIONS, ORDER, PER_FLOW_FACTOR, change

# Error bars from this many repetitions: with two, a 95% interval (t with
# one degree of freedom) is too wide to show anything but the noise.
MIN_REPS_FOR_BARS = 3
# The schemes the thesis-shaped figures leave to the factors figure.
FACTOR_SCHEMES = PER_FLOW_FACTOR + ABLATIONS

# One colour per scheme, the palette's (pandalab.figures).
COLORS = {s: figures.color(s) for s in ORDER}


def _val(s):
    """(mean, (below, above)): the error bar, the 95% interval from
    MIN_REPS_FOR_BARS repetitions (cut at 0: the figures' quantities
    are not negative, and their axes often logarithmic), else none."""
    if not s:
        return float("nan"), (0.0, 0.0)
    if s["n"] >= MIN_REPS_FOR_BARS and s.get("ci95"):
        lo, hi = s["ci95"]
        return s["mean"], (s["mean"] - max(lo, 0.0), hi - s["mean"])
    return s["mean"], (0.0, 0.0)


def _yerr(errs):
    """matplotlib's yerr of a list of _val() bars (None without bars: no
    caps drawn at the mean)."""
    if not any(e[0] or e[1] for e in errs):
        return None
    return [[e[0] for e in errs], [e[1] for e in errs]]


def _tops(vals):
    """The values an axis must show: each bar's mean and the top of its
    error bar."""
    return [y + e[1] for y, e in vals] + [y for y, _ in vals]


def _bars_note(rows):
    """What the error bars are, for a figure's title."""
    n = min((r["reps_ok"] for r in rows), default=0)
    if n >= MIN_REPS_FOR_BARS and any(
            (r["memcached"].get("p99_ms") or {}).get("ci95") for r in rows):
        return "error bars: 95%% CI, %d+ repetitions" % n
    if n >= MIN_REPS_FOR_BARS:
        # Runs recorded before the intervals were (a trimmed mean alone).
        return "%d repetitions, no interval recorded" % n
    return "%d repetition%s: no error bars" % (n, "" if n == 1 else "s")


def _schemes(rows):
    """The schemes of 'rows' in ORDER, then those of older runs that ORDER
    no longer has (a run is drawn as it was recorded)."""
    present = {r["scheme"] for r in rows} - set(FACTOR_SCHEMES)
    return ([s for s in ORDER if s in present]
            + sorted(s for s in present if s not in ORDER))


def _floor(rows, floors, cc, metric):
    """(value in ms, legend text) of the run's floor under 'cc' for
    'metric': the p99 floor the targets use (targets.floor: memcached
    unloaded plus one frame at the rate), or for another percentile the
    unloaded trial's own; (None, None) without a floor trial."""
    if metric == "p99_ms":
        return (((floors or {}).get(cc) or {}).get("floor_ms"), "floor")
    r = next((r for r in rows if r["cc"] == cc
              and "floor" in r["experiments"]), None)
    s = r and r["memcached"].get(metric)
    return (s["mean"] if s else None,
            "unloaded %s" % metric.split("_")[0])


def _legend_on_top(fig, ax, title):
    """One legend for the figure's panels, between its title and them."""
    h, lab = ax.get_legend_handles_labels()
    inch = 1 / fig.get_figheight()      # one inch in figure fractions
    fig.suptitle(title, y=1 - 0.05 * inch, va="top")
    fig.legend(h, lab, loc="upper center", ncol=min(len(h), 6),
               frameon=False, bbox_to_anchor=(0.5, 1 - 0.28 * inch))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 * inch))


def fig_vs_requests(rows, cc, metric, label, path, workload="the workload's",
                    floors=None):
    floor, floor_text = _floor(rows, floors, cc, metric)
    rows = [r for r in rows if r["cc"] == cc and "a" in r["experiments"]]
    if not rows:
        return None
    plt = figures.pyplot()
    reqs = sorted({r["requests"] for r in rows})
    schemes = _schemes(rows)
    fig, ax = plt.subplots(figsize=(6.4, 4))
    w = 0.8 / max(1, len(schemes))
    shown = []
    for i, s in enumerate(schemes):
        vals = []
        for q in reqs:
            r = next((r for r in rows if r["scheme"] == s
                      and r["requests"] == q), None)
            vals.append(_val(r["memcached"][metric] if r else None))
        xs = [j + (i - (len(schemes) - 1) / 2) * w for j in range(len(reqs))]
        ax.bar(xs, [y for y, _ in vals], w,
               yerr=_yerr([e for _, e in vals]), capsize=3,
               label=figures.label(s), color=figures.color(s))
        figures.na_labels(ax, xs, [y for y, _ in vals],
                          [figures.color(s)] * len(xs))
        shown += _tops(vals)
    figures.floor_line(ax, floor, floor_text)
    ax.set_xticks(range(len(reqs)))
    ax.set_xticklabels([str(q) for q in reqs])
    ax.set_xlim(-0.5, len(reqs) - 0.5)
    ax.set_xlabel("memcached requests")
    ax.set_ylabel("%s request latency (ms)" % label)
    figures.value_axis(ax, shown + ([floor] if floor else []))
    ax.set_title("memcached %s latency, %s, %d %s flows (%s)"
                 % (label, cc, rows[0]["concurrency"], workload,
                    _bars_note(rows)), pad=28)
    figures.legend_above(ax, ncol=min(len(schemes) + 1, 6))
    ax.grid(axis="y", which="both", alpha=0.3)
    figures.save(fig, path)
    return path


def fig_vs_concurrency(rows, cc, path, workload="the workload's",
                       floors=None):
    every = rows
    rows = [r for r in rows if r["cc"] == cc and "b" in r["experiments"]]
    if not rows:
        return None
    plt = figures.pyplot()
    reqs = sorted({r["requests"] for r in rows})
    concs = sorted({r["concurrency"] for r in rows})
    schemes = _schemes(rows)
    fig, axes = plt.subplots(2, len(reqs), figsize=(4 * len(reqs), 6.5),
                             squeeze=False)
    for col, q in enumerate(reqs):
        for row, (metric, label) in enumerate((("p90_ms", "p90"),
                                               ("p99_ms", "p99"))):
            ax = axes[row][col]
            shown = []
            for s in schemes:
                pts = sorted(((r["concurrency"], r) for r in rows
                              if r["scheme"] == s and r["requests"] == q),
                             key=lambda p: p[0])
                xs = [c for c, _ in pts]
                vals = [_val(r["memcached"][metric]) for _, r in pts]
                ax.errorbar(xs, [v[0] for v in vals],
                            yerr=_yerr([v[1] for v in vals]), marker="o",
                            capsize=3, label=figures.label(s),
                            color=figures.color(s))
                shown += _tops(vals)
            floor, floor_text = _floor(every, floors, cc, metric)
            figures.floor_line(ax, floor, floor_text)
            figures.value_axis(ax, shown + ([floor] if floor else []))
            ax.set_xticks(concs)
            ax.set_title("%d requests" % q)
            ax.set_xlabel("%s flows (concurrency)" % workload)
            ax.set_ylabel("%s latency (ms)" % label)
            ax.grid(which="both", alpha=0.3)
    _legend_on_top(fig, axes[-1][0], "memcached latency vs load, %s (%s)"
                   % (cc, _bars_note(rows)))
    figures.save(fig, path)
    return path


def _size(n):
    for unit, k in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= k:
            return "%g%s" % (n / k, unit)
    return "%gB" % n


def _size_range(rng):
    """[100000, 10000000] -> "(100KB,10MB]"; [10000000, None] ->
    "(>10MB)"."""
    lo, hi = (rng or [None, None])[:2]
    if hi is None:
        return "(>%s)" % _size(lo or 0)
    return "(%s,%s]" % (_size(lo) if lo else "0", _size(hi))


def fig_fct(rows, cc, path, workload="the workload's"):
    rows = [r for r in rows if r["cc"] == cc and "c" in r["experiments"]]
    if not rows:
        return None
    schemes = _schemes(rows)
    # The client's size buckets (load_generator/fg-client.c), but "all".
    buckets = [(b, "%s %s" % (b, _size_range(rng))) for b, rng in
               (rows[0].get("fct_size_range_bytes") or {}).items()
               if b != "all"]
    if not buckets:
        return None
    plt = figures.pyplot()
    concs = sorted({r["concurrency"] for r in rows})
    fig, axes = plt.subplots(1, len(buckets), figsize=(13, 4),
                             squeeze=False)
    for i, (b, title) in enumerate(buckets):
        ax = axes[0][i]
        w = 0.8 / max(1, len(schemes))
        shown = []
        for j, s in enumerate(schemes):
            vals = []
            for c in concs:
                r = next((r for r in rows if r["scheme"] == s
                          and r["concurrency"] == c), None)
                vals.append(_val(r["fct_mean_ms"][b] if r else None))
            xs = [k + (j - (len(schemes) - 1) / 2) * w
                  for k in range(len(concs))]
            ys = [y for y, _ in vals]
            ax.bar(xs, ys, w, yerr=_yerr([e for _, e in vals]), capsize=3,
                   label=figures.label(s), color=figures.color(s))
            figures.na_labels(ax, xs, ys, [figures.color(s)] * len(xs))
            shown += _tops(vals)
        ax.set_xticks(range(len(concs)))
        ax.set_xticklabels([str(c) for c in concs])
        ax.set_xlim(-0.5, len(concs) - 0.5)
        ax.set_xlabel("%s flows (concurrency)" % workload)
        ax.set_ylabel("mean FCT (ms)")
        figures.value_axis(ax, shown)
        ax.set_title(title)
        ax.grid(axis="y", which="both", alpha=0.3)
    _legend_on_top(fig, axes[0][0], "%s mean flow completion time, %s (%s)"
                   % (workload, cc, _bars_note(rows)))
    figures.save(fig, path)
    return path


# Each factor: the scheme and the one change made to it (schemes.py).
FACTORS = (("pias", "pias-pf"), ("panda", "panda-pf"),
           ("panda", "panda-guard"), ("panda", "panda-droptail"),
           ("panda", "panda-w1"))


def fig_factors(rows, cc, path, floors=None):
    """The per-flow queues and the ablations at the targets' point (the
    (a) concurrency, most requests): each scheme beside its variant,
    memcached p99 and the small and medium flows' mean FCT."""
    pts = [r for r in rows if r["cc"] == cc and "a" in r["experiments"]]
    if not pts:
        return None
    req = max(r["requests"] for r in pts)
    at = {r["scheme"]: r for r in pts if r["requests"] == req}
    pairs = [(a, b) for a, b in FACTORS if a in at and b in at]
    if not pairs:
        return None
    plt = figures.pyplot()
    metrics = (("memcached p99 (ms)", lambda r: r["memcached"]["p99_ms"]),
               ("small flows' mean FCT (ms)",
                lambda r: r["fct_mean_ms"].get("small")),
               ("medium flows' mean FCT (ms)",
                lambda r: r["fct_mean_ms"].get("medium")))
    fig, axes = plt.subplots(1, len(metrics), figsize=(14, 4.5),
                             squeeze=False)
    for k, (ax, (label, get)) in enumerate(zip(axes[0], metrics)):
        shown = []
        for i, (a, b) in enumerate(pairs):
            for j, s in enumerate((a, b)):
                y, e = _val(get(at[s]))
                x = i + (j - 0.5) * 0.38
                ax.bar(x, y, 0.36, yerr=_yerr([e]), capsize=3,
                       color=figures.color(s),
                       edgecolor="black" if j else None)
                ax.annotate(figures.label(s), (x, 0),
                            xycoords=("data", "axes fraction"),
                            xytext=(0, 2), textcoords="offset points",
                            rotation=90, ha="center", va="bottom",
                            fontsize=7)
                shown += _tops([(y, e)])
        if k == 0:
            floor, text = _floor(rows, floors, cc, "p99_ms")
            figures.floor_line(ax, floor, text)
            shown += [floor] if floor else []
            figures.legend_above(ax)
        ax.set_xticks(range(len(pairs)))
        ax.set_xticklabels(["%s: %s" % (figures.label(a),
                                        change(a, b).split(":")[0])
                            for a, b in pairs], fontsize=8)
        ax.set_ylabel(label)
        figures.value_axis(ax, shown)
        ax.grid(axis="y", which="both", alpha=0.3)
    fig.suptitle("one change at a time, %s, %d flows, %d requests (%s)"
                 % (cc, pts[0]["concurrency"], req,
                    _bars_note(list(at.values()))))
    fig.tight_layout()
    figures.save(fig, path)
    return path


def workload_name(result):
    """The run's workload as its figures name it (metadata.workload)."""
    wl = ((result.get("metadata") or {}).get("workload") or {})
    return wl.get("name") or "the workload's"


def plot_all(result, outdir):
    """Every figure of the run, per congestion-control condition; a file
    carries the thesis's figure number only where the run is the thesis's
    condition (conditions.figure_file), else a descriptive name.  Returns
    the PNGs' names; each has its .pdf and .svg beside it."""
    warnings.filterwarnings("ignore", message="All-NaN")
    rows = rows_of(result)
    md = result.get("metadata") or {}
    profile = md.get("profile", "1g")
    marks = bool((md.get("qos") or {}).get("ecn_threshold_bytes")) \
        and (md.get("qos") or {}).get("type") == "panda-sched"
    floors = (result.get("summary") or {}).get("floor")
    wl = workload_name(result)
    made = []
    for cc in sorted({r["cc"] for r in rows}):
        cond = conditions.parse(cc)

        def path(plot):
            return os.path.join(outdir, conditions.figure_file(
                cond, profile, marks, plot))
        for f in (fig_vs_requests(rows, cc, "p90_ms", "p90",
                                  path("p90-vs-requests"), wl, floors),
                  fig_vs_requests(rows, cc, "p99_ms", "p99",
                                  path("p99-vs-requests"), wl, floors),
                  fig_vs_concurrency(rows, cc, path(
                      "latency-vs-concurrency"), wl, floors),
                  fig_fct(rows, cc, path("fct-vs-concurrency"), wl)):
            if f:
                made.append(os.path.basename(f))
        f = fig_factors(rows, cc, os.path.join(outdir,
                                               "factors-%s.png" % cc),
                        floors)
        if f:
            made.append(os.path.basename(f))
    return made


def plot_switch(result, outdir):
    """The workload switch (workload_switch.py): memcached p99 over time
    for both variants, the thresholds auto-tune pushed (and the static
    policy's), and the small flows' mean FCT per window.  Returns the PNG's path (the
    PDF and SVG are beside it)."""
    sw = result["switch"]
    variants = {v: r for v, r in sw["variants"].items()
                if r.get("status") == "ok"}
    plt = figures.pyplot()
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(8, 10))
    for v, r in variants.items():
        ser = [(t, p) for t, p, n in r["p99_series"] if p is not None]
        ax1.plot([t for t, _ in ser], [p for _, p in ser], marker=".",
                 label=v)
        ts = r["t_switch"] - r["t0"]
        for d in r.get("decisions", []):
            if d.get("action") == "push":
                ax1.axvline(d["t"] - r["t0"], color="green", lw=0.6,
                            ls=":")
    if variants:
        r0 = next(iter(variants.values()))
        ts = r0["t_switch"] - r0["t0"]
        for ax in (ax1, ax2):
            ax.axvline(ts, color="red", ls="--", lw=1)
            ax.axvspan(ts, ts + sw["params"]["settle_s"], color="red",
                       alpha=0.06)
    ax1.set_ylabel("memcached p99 (ms), %g s bins" % sw["params"]["bin_s"])
    ax1.set_title("%s -> %s at the dashed line (pushes dotted)"
                  % (sw["from"]["name"], sw["to"]["name"]))
    ax1.legend()
    r = variants.get("autotune")
    if r:
        pts = [(d["t"] - r["t0"], d["thresholds"]) for d in r["decisions"]
               if d.get("action") == "push"]
        start = [int(x) for x in
                 r["policy_start"].split("thresholds=")[1].split(",")[0]
                 .split("/")] if "thresholds=" in r["policy_start"] else []
        end = r["t_end"] - r["t0"]
        for j in range(len(start)):
            xs, ys = [0], [start[j]]
            for t, th in pts:
                xs += [t, t]
                ys += [ys[-1], th[j]]
            xs.append(end)
            ys.append(ys[-1])
            ax2.plot(xs, ys, label="alpha_%d auto-tune" % (j + 1))
            ax2.axhline(start[j], color="gray", lw=0.6, ls=":")
        ax2.set_yscale("log")
        ax2.set_ylabel("threshold (bytes); static: dotted")
        ax2.legend(fontsize=8)
    names = ["before", "during", "after"]
    width = 0.8 / max(1, len(variants))
    for i, (v, r) in enumerate(variants.items()):
        vals = [r["windows"][n]["small_mean_fct_ms"] or 0 for n in names]
        ax3.bar([k + i * width for k in range(3)], vals, width, label=v)
    ax3.set_xticks([k + width * (len(variants) - 1) / 2 for k in range(3)])
    ax3.set_xticklabels(names)
    ax3.set_ylabel("mean FCT of flows < 100 KB (ms)")
    ax3.legend()
    ax3.set_xlabel("window")
    ax2.set_xlabel("seconds from the start of the trial")
    fig.tight_layout()
    path = os.path.join(outdir, "switch.png")
    figures.save(fig, path)
    return path

"""Figures (matplotlib, Agg backend), shaped like the seeds':

* schemes(): one bar per scheme - memcached-like p99 and the FCT of the
  thesis's buckets (the dumbbell, the thesis's Figs 5.1/5.10), the mean
  over seeds with each seed's value as a dot;
* at_load(): the same bars for the leaf-spine at one load (FISH's Fig. 6
  shape: small-flow mean and p99 first, changes against PIAS);
* vs_load(): FCT against load, one line per scheme, one figure per
  topology/workload/transport (PIAS's Figs 7-8: overall mean, (0,100KB]
  mean and p99, (100KB,10MB] mean, >10MB mean);
* fish(): bars per scheme for each arrival interval t and queue capacity
  (FISH's Figs 6, 8 and 9: small-flow mean and p99, medium and large mean);
* scale(): wall time and peak memory against hosts and flows.

The schemes' names and colours, the axes and the formats (PNG at 300 dpi,
PDF and SVG beside it) are those of every figure of the project
(pandalab.figures).
"""

import os

from .. import figures
from .points import SCHEMES

PANELS = (("all", "mean_ms", "overall: mean FCT"),
          ("small", "mean_ms", "(0,100KB]: mean FCT"),
          ("small", "p99_ms", "(0,100KB]: 99th pct FCT"),
          ("medium", "mean_ms", "(100KB,10MB]: mean FCT"),
          ("large", "mean_ms", ">10MB: mean FCT"))


def _value(r, bucket, key):
    if bucket == "rpc":
        return (r.get("rpc") or {}).get(key)
    return r["fct"][bucket][key]


def _order(schemes):
    return sorted(schemes, key=lambda s: SCHEMES.index(s)
                  if s in SCHEMES else len(SCHEMES))


def schemes(results, path, title, panels=None, baseline=None):
    """Bars per scheme for points that differ only in scheme (and seed):
    the mean over seeds, each seed's value as a dot when there are
    several.  'baseline' (a scheme) adds each bar's change against it, as
    FISH reports its results against PIAS."""
    by = {}
    for r in results:
        by.setdefault(r["point"]["scheme"], []).append(r)
    names = _order(by)
    if panels is None:
        panels = [("rpc", "p99_ms", "memcached-like p99 latency")] \
            + [p for p in PANELS if p[0] != "all"]
    plt = figures.pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6))
    for ax, (bucket, key, label) in zip(axes, panels):
        seeds = [[v for v in (_value(r, bucket, key) for r in by[n])
                  if v is not None] for n in names]
        vals = [sum(v) / len(v) if v else None for v in seeds]
        ax.bar(range(len(names)), [v if v is not None else float("nan")
                                   for v in vals],
               color=[figures.color(n) for n in names])
        figures.na_labels(ax, range(len(names)), vals,
                          [figures.color(n) for n in names])
        for i, v in enumerate(seeds):
            if len(v) > 1:
                ax.plot([i] * len(v), v, "k.", ms=3)
        ref = vals[names.index(baseline)] if baseline in names else None
        for i, v in enumerate(vals):
            if v is None:
                continue
            text = "%.3g" % v
            if ref and names[i] != baseline:
                text += "\n%+.0f%%" % (100 * (v / ref - 1))
            ax.text(i, v, text, ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([figures.label(n) for n in names], rotation=40,
                           ha="right", fontsize=8)
        ax.set_title(label, fontsize=9)
        ax.set_ylabel("ms")
        figures.value_axis(ax, vals + [v for vs in seeds for v in vs])
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    figures.save(fig, path)
    return path


def at_load(results, out_dir, load=0.8):
    """FISH-style bars per scheme (its Fig. 6: small-flow mean and p99,
    then medium, large and all flows) for each leaf-spine topology,
    workload and transport at 'load', mean over seeds, changes against
    PIAS; returns the paths."""
    groups = {}
    for r in results:
        p = r["point"]
        if p["topology"] != "leafspine" or p["interval_us"] \
                or p["concurrency"] or p["load"] != load:
            continue
        groups.setdefault(_series_key(r), []).append(r)
    paths = []
    for key, rs in sorted(groups.items()):
        seeds = sorted({r["point"]["seed"] for r in rs})
        p = rs[0]["point"]
        path = os.path.join(out_dir, "bars-%s-%s-%s-l%g%s.png" % (
            key[0], key[1], key[2], load, "-" + key[3] if key[3] else ""))
        title = ("%s (%d leaves x %d hosts, %d spines), %s, load %g, %s, "
                 "%d flows, seed%s %s; %% vs PIAS" % (
                     key[0], p["leaves"], p["hosts_per_leaf"], p["spines"],
                     key[1], load, key[2], p["flows"],
                     "s" if len(seeds) > 1 else "",
                     ",".join(str(x) for x in seeds)))
        panels = [PANELS[1], PANELS[2], PANELS[3], PANELS[4], PANELS[0]]
        paths.append(schemes(rs, path, title, panels, baseline="pias"))
    return paths


def _series_key(r):
    p = r["point"]
    topo = ("dumbbell" if p["topology"] == "dumbbell" else "leafspine-%dh"
            % (p["leaves"] * p["hosts_per_leaf"]))
    return (topo, p["workload"], p["cc"], p["tag"])


def vs_load(results, out_dir):
    """One figure per (topology, workload, cc, tag) with at least two
    loads; returns the paths."""
    groups = {}
    for r in results:
        if r["point"]["interval_us"] or r["point"]["concurrency"]:
            continue
        groups.setdefault(_series_key(r), []).append(r)
    paths = []
    for key, rs in sorted(groups.items()):
        loads = sorted({r["point"]["load"] for r in rs})
        if len(loads) < 2:
            continue
        panels = list(PANELS)
        if any(r.get("rpc") for r in rs):
            panels.append(("rpc", "p99_ms", "memcached-like p99"))
        plt = figures.pyplot()
        fig, axes = plt.subplots(1, len(panels),
                                 figsize=(3.6 * len(panels), 3.4))
        for ax, (bucket, k, label) in zip(axes, panels):
            shown = []
            for s in _order({r["point"]["scheme"] for r in rs}):
                by_load = {}
                for r in rs:
                    v = _value(r, bucket, k)
                    if r["point"]["scheme"] == s and v is not None:
                        by_load.setdefault(r["point"]["load"], []).append(v)
                pts = sorted((x, sum(v) / len(v)) for x, v in by_load.items())
                if pts:
                    ax.plot([x for x, _ in pts], [y for _, y in pts],
                            marker="o", ms=3, label=figures.label(s),
                            color=figures.color(s))
                    shown += [y for _, y in pts]
            figures.value_axis(ax, shown)
            ax.set_title(label, fontsize=9)
            ax.set_xlabel("load")
            ax.set_ylabel("ms")
        h, lab = axes[0].get_legend_handles_labels()
        fig.legend(h, lab, loc="lower center", ncol=len(h), frameon=False,
                   bbox_to_anchor=(0.5, -0.02))
        fig.suptitle("%s, %s, %s%s (mean over seeds)" % (
            key[0], key[1], key[2], ", " + key[3] if key[3] else ""),
            fontsize=10)
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        path = os.path.join(out_dir, "fct-vs-load-%s-%s-%s%s.png" % (
            key[0], key[1], key[2], "-" + key[3] if key[3] else ""))
        figures.save(fig, path)
        paths.append(path)
    return paths


def fish(results, out_dir, name="fish"):
    """FISH-style grouped bars: x = arrival interval t (or tag), bars =
    schemes; small mean, small p99, medium mean, large mean."""
    rs = [r for r in results if r["point"]["interval_us"]]
    if not rs:
        return []
    xs = sorted({(r["point"]["interval_us"], r["point"]["tag"]) for r in rs},
                key=lambda x: (-x[0], x[1]))
    names = _order({r["point"]["scheme"] for r in rs})
    plt = figures.pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    width = 0.8 / max(1, len(names))
    for ax, (bucket, key, label) in zip(axes, PANELS[1:]):
        shown = []
        for j, s in enumerate(names):
            vals = []
            for t, tag in xs:
                v = [_value(r, bucket, key) for r in rs
                     if r["point"]["scheme"] == s
                     and r["point"]["interval_us"] == t
                     and r["point"]["tag"] == tag]
                v = [x for x in v if x is not None]
                vals.append(sum(v) / len(v) if v else float("nan"))
            bx = [i + j * width for i in range(len(xs))]
            ax.bar(bx, vals, width, label=figures.label(s),
                   color=figures.color(s))
            figures.na_labels(ax, bx, vals, [figures.color(s)] * len(bx))
            shown += vals
        ax.set_xticks([i + width * (len(names) - 1) / 2
                       for i in range(len(xs))])
        ax.set_xticklabels(["t=%gms%s" % (t / 1000, " " + tag if tag else "")
                            for t, tag in xs], fontsize=7, rotation=20)
        ax.set_title(label, fontsize=9)
        ax.set_ylabel("ms")
        figures.value_axis(ax, shown)
    figures.legend_above(axes[0], ncol=len(names))
    fig.tight_layout()
    path = os.path.join(out_dir, "%s-bars.png" % name)
    figures.save(fig, path)
    return [path]


def scale(rows, path):
    """rows: [{"hosts", "flows", "wall_s", "peak_rss_mb"}]."""
    plt = figures.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, key, label in ((axes[0], "wall_s", "wall time (s)"),
                           (axes[1], "peak_rss_mb", "peak RSS (MB)")):
        for flows in sorted({r["flows"] for r in rows}):
            pts = sorted((r["hosts"], r[key]) for r in rows
                         if r["flows"] == flows)
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o",
                    label="%d flows" % flows)
        ax.set_xlabel("hosts")
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
    fig.tight_layout()
    figures.save(fig, path)
    return path

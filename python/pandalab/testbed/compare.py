"""Side by side figures of several testbed runs (e.g. one workload before
and after a model change, or two workloads):

    testbed/run.py compare [--out DIR] RUN_A RUN_B ...
    testbed/run.py compare --out DIR "CDF alone=results/dm-before" \\
        "floor=results/dm-floor" ...

(a run is RUN_DIR, labelled with its directory's name, or
LABEL=RUN_DIR; DIR defaults to results/compare-<A>-vs-<B>) writes
DIR/compare-levels.png (where the memcached connection's packets
arrived under panda: the share per level, and each packet's level in
arrival order, from the trial's capture at PM1 when it is still there),
DIR/compare-metrics.png (memcached p99 and the small and medium flows'
mean FCT of pias and panda per run) and DIR/compare.json (the figures'
numbers); each figure also as PDF and SVG (pandalab.figures).  Reads
each run's result.json (and its panda trial's mc-rx.pcap); needs no
root."""

import json
import os
import sys

from pandaovs import cli, paths
from .. import figures
from .model import policies
from .report import rows_of
from .targets import LEVEL0_SHARE
from .trial import measured_dscps

SCHEMES = ("pias", "panda")


def _row(result, scheme):
    """The run's row of 'scheme' at its (a) point: 14 flows, most
    requests."""
    rows = [r for r in rows_of(result) if r["scheme"] == scheme
            and r["concurrency"] > 0 and r["reps_ok"]]
    return max(rows, key=lambda r: (r["concurrency"] == 14, r["requests"]),
               default=None)


def _mean(stat):
    return stat["mean"] if stat else None


def summary(label, rundir):
    """One run's numbers for the figures."""
    with open(os.path.join(rundir, "result.json")) as f:
        result = json.load(f)
    out = {"label": label, "dir": rundir,
           "workload": (result["metadata"].get("workload") or {}).get(
               "name", "web-search"),
           "panda_action": (result.get("policy") or {}).get(
               "panda", {}).get("action")}
    for s in SCHEMES:
        r = _row(result, s)
        if r is None:
            continue
        out[s] = {"memcached_p99_ms": _mean(r["memcached"]["p99_ms"]),
                  "fct_small_ms": _mean(r["fct_mean_ms"].get("small")),
                  "fct_medium_ms": _mean(r["fct_mean_ms"].get("medium")),
                  "memcached_levels": r["memcached_levels"],
                  "memcached_level0_share": r.get("memcached_level0_share")}
    trial = next((t for t in result.get("trials") or []
                  if t["scheme"] == "panda"
                  and t["status"] == "ok" and t["concurrency"] > 0), None)
    cap = trial and os.path.join(trial["dir"], "mc-rx.pcap")
    if cap and os.path.exists(cap) and result.get("policy"):
        inv = {d: i for i, d in enumerate(
            policies(result["policy"])["panda"].dscp)}
        out["panda_packet_levels"] = [inv.get(d, -1)
                                      for d in measured_dscps(cap)]
    return out


def fig_levels(runs, path):
    plt = figures.pyplot()
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7.5, 6),
                                  gridspec_kw={"height_ratios": [1, 1.3]})
    labels = [r["label"] for r in runs]
    levels = max([int(k) for r in runs
                  for k in (r.get("panda") or {}).get("memcached_levels", {})]
                 + [1]) + 1
    bottom = [0.0] * len(runs)
    cmap = plt.get_cmap("viridis", levels)
    for lv in range(levels):
        share = []
        for r in runs:
            c = (r.get("panda") or {}).get("memcached_levels") or {}
            n = sum(c.values())
            share.append(100.0 * c.get(str(lv), 0) / n if n else 0)
        ax.barh(labels, share, left=bottom, color=cmap(lv),
                label="level %d" % lv)
        bottom = [b + s for b, s in zip(bottom, share)]
    ax.axvline(100 * LEVEL0_SHARE, color="k", ls="--", lw=1)
    ax.set_xlim(0, 100)
    ax.set_xlabel("memcached packets under panda, %% per level (dashed: "
                  "the %d%% target at level 0)" % (100 * LEVEL0_SHARE))
    ax.legend(fontsize=7, ncol=4, loc="lower left")
    for i, r in enumerate(runs):
        seq = r.get("panda_packet_levels")
        if seq:
            ax2.plot(range(len(seq)), [lv + 0.8 * i / len(runs)
                                       for lv in seq], ".", ms=1.5,
                     label=r["label"])
    ax2.set_xlabel("memcached packet (arrival order at PM1)")
    ax2.set_ylabel("level under panda")
    if any(r.get("panda_packet_levels") for r in runs):
        ax2.legend(fontsize=7, markerscale=6)
    fig.tight_layout()
    return figures.save(fig, path)


def fig_metrics(runs, path):
    metrics = (("memcached_p99_ms", "memcached p99 (ms)"),
               ("fct_small_ms", "small flows' mean FCT (ms)"),
               ("fct_medium_ms", "medium flows' mean FCT (ms)"))
    plt = figures.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.8))
    x = range(len(runs))
    for ax, (key, title) in zip(axes, metrics):
        shown = []
        for j, s in enumerate(SCHEMES):
            ys = [(r.get(s) or {}).get(key) for r in runs]
            ys = [float("nan") if y is None else y for y in ys]
            xs = [i + (j - 0.5) * 0.38 for i in x]
            ax.bar(xs, ys, width=0.38, color=figures.color(s),
                   label=figures.label(s))
            figures.na_labels(ax, xs, ys, [figures.color(s)] * len(xs))
            shown += ys
        figures.value_axis(ax, shown)
        ax.set_xticks(list(x))
        ax.set_xticklabels([r["label"] for r in runs], fontsize=7,
                           rotation=15)
        ax.set_title(title, fontsize=9)
    figures.legend_above(axes[0])
    fig.tight_layout()
    return figures.save(fig, path)


def add_arguments(p):
    p.add_argument("--out", metavar="DIR",
                   help="directory for the figures (default "
                   "results/compare-<first run>-vs-<second run>)")
    p.add_argument("runs", nargs="+", metavar="[LABEL=]RUN_DIR",
                   help="a run's directory (holding its result.json), "
                   "labelled with the directory's name or LABEL")


def parser(prog="testbed/run.py compare"):
    p = cli.ArgumentParser(
        prog=prog, description="Figures comparing testbed runs side by "
        "side: where panda put the memcached packets, and memcached p99 "
        "and the small and medium flows' mean FCT of pias and panda.")
    add_arguments(p)
    return p


def run(p, a):
    """The comparison of the runs 'a' (parsed by 'p') names; the files
    written."""
    runs = []
    for spec in a.runs:
        label, sep, rundir = spec.rpartition("=")
        rundir = rundir.rstrip("/")
        if not os.path.isfile(os.path.join(rundir, "result.json")):
            p.error("%s: expected [LABEL=]RUN_DIR, RUN_DIR holding a "
                    "result.json" % spec)
        runs.append(summary(label if sep else os.path.basename(rundir),
                            rundir))
    out = a.out or os.path.join(
        paths.TOP, "results", "compare-" + "-vs-".join(
            os.path.basename(r["dir"]) for r in runs[:2]))
    os.makedirs(out, exist_ok=True)
    written = fig_levels(runs, os.path.join(out, "compare-levels.png"))
    written += fig_metrics(runs, os.path.join(out, "compare-metrics.png"))
    js = os.path.join(out, "compare.json")
    with open(js, "w") as f:
        json.dump([{k: v for k, v in r.items() if k != "panda_packet_levels"}
                   for r in runs], f, indent=1)
    return written + [js]


def main(argv=None):
    p = parser("python3 -m pandalab.testbed.compare")
    for path in run(p, p.parse_args(argv)):
        print(path)
    return cli.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

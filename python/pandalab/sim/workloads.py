"""sim/run.py workloads: the testbed's quick point in the simulator, for
several flow-size workloads, seeds and ways of modelling the memcached
connection's place (panda-model --flt-bound).

The point is the testbed's (testbed/README.md): two hosts, 50 Mbit/s, 14
flows of the workload in a closed loop, one memcached-like connection,
DCTCP with the port's ECN threshold at 30 KB (20 packets) over a
50-packet port buffer, levels served FIFO.  Two things differ, both on
purpose:

* the memcached requests arrive at a fixed rate (Poisson, --rpc-rate),
  not in a closed loop.  A closed-loop client asks as fast as it is
  answered, so its load is the scheme's doing: answered at once on top
  of the levels it takes a much larger share of the link than demoted.
  The flows' FCT would then measure how much memcached asked, not how it
  was scheduled; at a fixed rate every scheme carries the same memcached
  load.
* the run lasts a fixed time (--window plus 10 s, after the warm-up), and
  the FCT figures count the flows that started in the window, as the
  testbed's experiment (c) does; memcached's latency counts every request
  after the warm-up.

Per workload: the collection point (fifo-ecn with --collect: the
scheduler-less FIFO with a DCTCP marker, what the testbed's fifo trial
is), panda-model once per --flt-bound variant on its captures (the FLT
segments in sending order, flt.pcap, so that the excursions are measured
as on the testbed), the floor (the same memcached requests without
flows; plus one frame at the link rate, as the testbed's floor), and for
each seed pias and panda (and any other --schemes) under each variant.
ns-3 is deterministic: the seeds are the repetitions.
"""

import dataclasses
import json
import math
import os

from .. import figures
from . import metrics
from . import points as pts
from . import policy as pol
from . import sweep

WORKLOADS = ("web-search", "data-mining", "fb-hadoop", "fb-web",
             "ali-storage")
VARIANTS = ("floor", "level")
RATE = "50Mbps"
FRAME_MS = 1514 * 8 / 50e6 * 1e3    # One frame at the link rate.
WARMUP = 3.0
GRACE = 10.0

BASE = pts.Point(topology="dumbbell", edge_rate=RATE, concurrency=14,
                 flows=1000000, rpc_pairs=1, ecn_pkts=20, cc="dctcp",
                 buffer_pkts=50, warmup=WARMUP, tag="tbq")


class _Group:
    """What run_parallel looks a point's policy up by."""

    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


def base_point(args):
    """The loaded point of the run's settings."""
    return dataclasses.replace(BASE, rpc_rate=args.rpc_rate,
                               max_time=WARMUP + args.window + GRACE,
                               sched_extra=args.sched_extra or "")


def plan(args):
    """[(Point, policy key or None)] of the experiment, collection and
    floor points first."""
    base = base_point(args)
    workloads, schemes, variants = args.workloads, args.schemes, \
        args.variants
    seeds = range(args.seed, args.seed + args.seeds)
    out = []
    for w in workloads:
        out.append((collection(base, w), None))
        for seed in seeds:
            out.append((dataclasses.replace(base, workload=w, flows=0,
                                             scheme="fifo", seed=seed,
                                             tag="tbq-unloaded"), None))
    for w in workloads:
        for seed in seeds:
            for s in schemes:
                if pts.POLICY_KIND.get(s) == "panda":
                    for v in variants:
                        out.append((dataclasses.replace(
                            base, workload=w, scheme=s, seed=seed,
                            tag="tbq-" + v), "%s-%s" % (w, v)))
                else:
                    out.append((dataclasses.replace(
                        base, workload=w, scheme=s, seed=seed),
                        "%s-%s" % (w, variants[0])
                        if s in pts.POLICY_KIND else None))
    return out


def collection(base, workload):
    return dataclasses.replace(base, workload=workload, scheme="fifo-ecn",
                               seed=1)


def models(ctx, base, workloads, variants, load, log):
    """{key: policy doc} for every workload and variant, from each
    workload's collection point (which must have run)."""
    out, errors = {}, {}
    for w in workloads:
        d = ctx.point_dir(collection(base, w))
        cdf = os.path.join(ctx.top, "load_generator", "cdf", w + ".cdf")
        for v in variants:
            key = "%s-%s" % (w, v)
            pdir = os.path.join(ctx.out_dir, "policies", key)
            path = os.path.join(pdir, "policy.json")
            try:
                if os.path.exists(path):
                    with open(path) as f:
                        out[key] = json.load(f)
                else:
                    out[key] = pol.make_policies(
                        ctx.build_dir, d, cdf, load, pdir, flt_ordered=True,
                        panda_options={"flt_bound": v})
            except (pol.ModelToolError, OSError, ValueError) as e:
                errors[key + " (model)"] = str(e)
                log("model %s: FAILED: %s" % (key, e))
                continue
            log("policy %s: panda %s" % (key, out[key]["panda"]["action"]))
    return out, errors


def windowed(ctx, point, window):
    """The point's FCT figures over the flows started in the window."""
    flows = metrics.read_flows(os.path.join(ctx.point_dir(point),
                                            "flows.csv"))
    return metrics.fct_summary(flows, int(WARMUP * 1e9),
                               int((WARMUP + window) * 1e9))


# Responses of at least this many bytes span several segments: their
# latency shows the connection's window (the value CDF's tail, which also
# sets the unloaded p99).
LARGE_VALUE = 3000


def large_value_p50(ctx, point):
    """Median latency (ms) of the memcached requests after the warm-up
    whose value is at least LARGE_VALUE bytes (None without any)."""
    rpcs = metrics.read_rpcs(os.path.join(ctx.point_dir(point), "rpc.csv"))
    lat = sorted((r["done_ns"] - r["sent_ns"]) / 1e6 for r in rpcs
                 if r["done_ns"] >= 0 and r["sent_ns"] >= WARMUP * 1e9
                 and r["value"] >= LARGE_VALUE)
    return metrics.percentile(lat, 0.5) if lat else None


def _gmean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize(ctx, results, todo, window):
    """Per workload and scheme/variant, the figures the targets are about,
    per seed and as the geometric mean of the seeds' ratios:
    memcached p99 over the seed's floor, small and medium mean FCT over
    pias's, large flows completed of those started; plus the memcached
    connection's last level and counter."""
    by = {}
    for p, _ in todo:
        r = results.get(p.name())
        if r is None:
            continue
        by[(p.workload, p.scheme, p.tag, p.seed)] = (p, r)
    out = {}
    for (w, s, tag, seed), (p, r) in sorted(by.items()):
        if p.flows == 0 or p.scheme == "fifo-ecn":
            continue
        name = s if tag == "tbq" else "%s/%s" % (s, tag[4:])
        floor = by.get((w, "fifo", "tbq-unloaded", seed))
        pias = by.get((w, "pias", "tbq", seed))
        f = windowed(ctx, p, window)
        fp = windowed(ctx, pias[0], window) if pias else None
        floor_ms = ((floor[1]["rpc"] or {}).get("p99_ms") or 0) + FRAME_MS \
            if floor else None
        p99 = (r.get("rpc") or {}).get("p99_ms")
        large = large_value_p50(ctx, p)
        large_floor = large_value_p50(ctx, floor[0]) if floor else None

        def ratio(bucket):
            a = f[bucket]["mean_ms"]
            b = fp[bucket]["mean_ms"] if fp else None
            return a / b if a and b else None
        conn = (r["run"].get("marking") or {}).get("rpc_connections") or [{}]
        rec = {"seed": seed, "memcached_p99_ms": p99, "floor_ms": floor_ms,
               "p99_over_floor": p99 / floor_ms if p99 and floor_ms
               else None,
               "large_value_p50_ms": large,
               "large_value_p50_over_floor": large / large_floor
               if large and large_floor else None,
               "small_mean_ms": f["small"]["mean_ms"],
               "small_flows": f["small"]["completed"],
               "small_over_pias": ratio("small"),
               "medium_mean_ms": f["medium"]["mean_ms"],
               "medium_over_pias": ratio("medium"),
               "large_completed": f["large"]["completed"],
               "large_started": f["large"]["flows"],
               "all_completed": f["all"]["completed"],
               "all_started": f["all"]["flows"],
               "memcached_level": conn[0].get("level"),
               "memcached_counter": conn[0].get("counter")}
        out.setdefault(w, {}).setdefault(name, {"seeds": []})["seeds"].append(
            rec)
    for w in out.values():
        for row in w.values():
            seeds = row["seeds"]
            for k in ("p99_over_floor", "large_value_p50_over_floor",
                      "small_over_pias", "medium_over_pias"):
                row[k] = _gmean([x[k] for x in seeds])
                vals = [x[k] for x in seeds if x[k] is not None]
                row[k + "_range"] = [min(vals), max(vals)] if vals else None
            row["large_completed"] = sum(x["large_completed"] for x in seeds)
            row["large_started"] = sum(x["large_started"] for x in seeds)
            row["small_flows"] = sum(x["small_flows"] for x in seeds)
    return out


def table(summary):
    def f(x, fmt="%.3f"):
        return fmt % x if x is not None else "-"
    lines = ["%-12s %-16s %9s %17s %9s %9s %17s %9s %8s" % (
        "workload", "scheme", "p99/floor", "(seeds)", "large-val",
        "small/pias", "(seeds)", "med/pias", "large")]
    for w, rows in summary.items():
        for name, row in rows.items():
            lines.append("%-12s %-16s %9s %17s %9s %9s %17s %9s %8s" % (
                w, name, f(row["p99_over_floor"]),
                "[%s, %s]" % tuple(f(x) for x in row["p99_over_floor_range"])
                if row["p99_over_floor_range"] else "-",
                f(row["large_value_p50_over_floor"]),
                f(row["small_over_pias"]),
                "[%s, %s]" % tuple(f(x) for x in row["small_over_pias_range"])
                if row["small_over_pias_range"] else "-",
                f(row["medium_over_pias"]),
                "%d/%d" % (row["large_completed"], row["large_started"])))
    return "\n".join(lines)


def plot(summary, path, title):
    """Two panels per workload: memcached p99 over the floor and the small
    flows' mean FCT over pias's, a bar per scheme and variant (geometric
    mean of the seeds, error bars their range), the targets' bounds
    dashed; written through pandalab.figures (PNG, PDF, SVG)."""
    plt = figures.pyplot()
    wls = list(summary)
    names = sorted({n for rows in summary.values() for n in rows
                    if n != "pias"})
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 2.8))
    width = 0.8 / max(1, len(names))
    for ax, key, bound, label in (
            (axes[0], "p99_over_floor", (1.1,), "memcached p99 / floor"),
            (axes[1], "small_over_pias", (0.95, 1.05),
             "small flows' mean FCT / PIAS's")):
        for i, n in enumerate(names):
            scheme, _, variant = n.partition("/")
            xs = [j + (i - (len(names) - 1) / 2) * width
                  for j in range(len(wls))]
            rows = [summary[w].get(n) or {} for w in wls]
            ys = [r.get(key) or 0 for r in rows]
            rng = [r.get(key + "_range") or [y, y] for r, y in zip(rows, ys)]
            lo = [max(0, y - r[0]) for r, y in zip(rng, ys)]
            hi = [max(0, r[1] - y) for r, y in zip(rng, ys)]
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2,
                   color=figures.color(scheme),
                   hatch="//" if variant == "level" else None,
                   edgecolor="white", linewidth=0.5,
                   label=figures.label(scheme)
                   + (" (%s)" % variant if variant else ""))
        for b in bound:
            ax.axhline(b, color="black", lw=0.8, ls="--")
        ax.set_xticks(range(len(wls)))
        ax.set_xticklabels(wls, rotation=20)
        ax.set_ylabel(label)
        ax.set_yscale("log")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels),
               bbox_to_anchor=(0.5, 1.0), frameon=False, fontsize=7)
    fig.suptitle(title + " (geometric mean; bars: the seeds' range)",
                 fontsize=7, y=1.13)
    fig.tight_layout()
    return figures.save(fig, path)


def run(ctx, args, log=sweep._log):
    """The experiment; returns (results, errors, extra for result.json)."""
    todo = plan(args)
    base = base_point(args)
    first = [p for p, key in todo if key is None]
    results, errors = sweep.run_parallel(ctx, first, args.jobs, log=log)
    done = [w for w in args.workloads
            if collection(base, w).name() in results]
    policies, err = models(ctx, base, done, args.variants, 0.8, log)
    errors.update(err)
    rest = [(p, key) for p, key in todo if key is not None
            and (key in policies or pts.POLICY_KIND.get(p.scheme) is None)]
    keys = {p.name(): key for p, key in rest}
    res, err = sweep.run_parallel(
        ctx, [p for p, _ in rest], args.jobs, policies, log=log,
        group_of=lambda p: _Group(keys[p.name()]))
    results.update(res)
    errors.update(err)
    for p, key in todo:
        if p.name() not in results and p.name() not in errors:
            errors[p.name()] = "not run: no policy (%s)" % key
    summary = summarize(ctx, results, todo, args.window)
    extra = {"workloads_summary": summary,
             "policies": policies,
             "settings": {"rpc_rate": args.rpc_rate, "window_s": args.window,
                          "warmup_s": WARMUP, "grace_s": GRACE,
                          "frame_ms": FRAME_MS,
                          "seeds": list(range(args.seed,
                                              args.seed + args.seeds)),
                          "variants": list(args.variants),
                          "sched_extra": args.sched_extra,
                          "schemes": list(args.schemes)}}
    return results, errors, extra

"""The commands of sim/run.py.

  quick        one dumbbell point per scheme (the test suite runs it)
  reproduce    the FISH/PIAS reproduction (hours: leaf-spine load sweeps,
               FISH's interval/queue-capacity experiments)
  crosscheck   the testbed's quick point (50 Mbit/s, 14 flows, memcached
               GETs) with the testbed's policy file
  scale        wall time and memory against hosts and flows
  point        one point with every parameter on the command line
  plot         figures again from a run directory's result.json

Every command writes OUT/<run-id>/: points/<name>/ (panda-sim's records
and point.json), policies/, result.json, result.csv, PNG figures.
Exit status: 0 when every point ran, 1 if any failed, 2 on bad arguments.
"""

import argparse
import dataclasses
import json
import os
import sys
import time

from .. import paths
from . import plots
from . import points as pts
from . import sweep

TOP = paths.TOP


def _ctx(args, run_id):
    build = paths.build_dir(args.build_dir)
    out = os.path.join(args.out, run_id)
    os.makedirs(out, exist_ok=True)
    ctx = pts.Context(top=TOP, build_dir=build, out_dir=out,
                      git=pts.git_state(TOP))
    if not os.access(ctx.binary(), os.X_OK):
        status = os.path.join(build, "sim", "ns3-status")
        why = open(status).read().strip() if os.path.exists(status) \
            else "no build tree (run ./build.sh)"
        sys.exit("sim/run.py: %s is not built: %s" % (ctx.binary(), why))
    return ctx


def _finish(ctx, results, errors, extra=None):
    sweep.write_outputs(ctx.out_dir, results, errors, extra)
    print("results: %s (result.json, result.csv, figures)" % ctx.out_dir)
    for name, e in sorted(errors.items()):
        print("FAILED %s: %s" % (name, e))
    return 1 if errors else 0


def _table(results, keys=("small", "medium", "large", "all")):
    def ms(x):
        return "%9.3f" % x if x is not None else "        -"
    lines = ["%-52s %9s %9s %9s %9s %9s %9s %9s %6s" % (
        "point", "rpc p99", "small", "small p99", "medium", "large", "all",
        "slowdown", "flows")]
    def order(r):
        rest = sorted((k, str(v)) for k, v in r["point"].items()
                      if k != "scheme")
        return (rest, pts.SCHEMES.index(r["point"]["scheme"]))
    for r in sorted(results, key=order):
        f = r["fct"]
        lines.append("%-52s %s %s %s %s %s %s %s %6s" % (
            r["name"][:52], ms((r.get("rpc") or {}).get("p99_ms")),
            ms(f["small"]["mean_ms"]), ms(f["small"]["p99_ms"]),
            ms(f["medium"]["mean_ms"]), ms(f["large"]["mean_ms"]),
            ms(f["all"]["mean_ms"]), ms(f["all"]["slowdown_mean"]),
            "%d/%d" % (f["all"]["completed"], f["all"]["flows"])))
    return "\n".join(lines)


# ---------------------------------------------------------------- quick

QUICK = pts.Point(topology="dumbbell", workload="web-search", load=0.8,
                  flows=40, cc="cubic", rpc_pairs=1, max_time=20)


def cmd_quick(args):
    """A dumbbell point per scheme: the thesis's two hosts at 1 Gbit/s,
    web-search flows at load 0.8 and one memcached-like connection."""
    ctx = _ctx(args, args.run_id or "quick")
    base = dataclasses.replace(QUICK, flows=args.flows, seed=args.seed)
    todo = [dataclasses.replace(base, scheme=s) for s in args.schemes]
    results, errors, policies = sweep.run_sweep(ctx, todo, args.jobs,
                                                args.policy)
    mine = [results[p.name()] for p in todo if p.name() in results]
    print(_table(mine))
    if mine and not args.no_plots:
        plots.schemes(mine, os.path.join(ctx.out_dir, "quick-schemes.png"),
                      "dumbbell 1 Gbit/s, web search, load %g, %s"
                      % (base.load, base.cc))
    return _finish(ctx, {r["name"]: r for r in mine}, errors,
                   {"policies": policies})


# ------------------------------------------------------------ crosscheck

def _dscps(action, levels=8):
    for part in action.split(","):
        if part.startswith("dscp="):
            return [int(x) for x in part[5:].split("/")]
    n = levels
    for part in action.split(","):
        if part.startswith("thresholds="):
            n = len(part[11:].split("/")) + 1
    return [i + 1 for i in range(n)]


def cmd_crosscheck(args):
    """The testbed's quick point in the simulator: 50 Mbit/s, CUBIC,
    Linux timers, 14 web-search flows in a closed loop, memcached GETs on
    one persistent connection, no ECN, a 50-packet queue per level
    (FIFO: one 50-packet queue).  The scheduler core has one port buffer
    (here 8 x 50 packets), so the levels' own queues are emulated by a
    WRED rule on the DSCPs of every level below the top: their packets are
    dropped beyond 50 packets of port backlog; the top level keeps the
    rest.  The FIFO point collects for the model when no --policy is
    given (the testbed collects on its FIFO trial too)."""
    ctx = _ctx(args, args.run_id or "crosscheck")
    from . import policy as pol
    dscps = [i + 1 for i in range(8)]
    if args.policy:
        dscps = _dscps(pol.load_policy(args.policy)["panda"]["action"])
    wred = "wred=" + "/".join("%d:74999:75000:1" % d
                              for d in sorted(set(dscps[1:])))
    fifo = pts.Point(topology="dumbbell", edge_rate="50Mbps",
                     workload="web-search", concurrency=14, flows=1000000,
                     rpc_pairs=1, rpc_requests=args.requests, ecn_pkts=0,
                     cc="cubic", seed=args.seed, warmup=args.warmup,
                     max_time=args.max_time, buffer_pkts=50, tag="tb")
    todo = [fifo if s == "fifo" else
            dataclasses.replace(fifo, scheme=s, buffer_pkts=400,
                                sched_extra=wred)
            for s in args.schemes]
    first_fifo = dataclasses.replace(fifo, seed=1)
    results, errors, policies = sweep.run_sweep(
        ctx, todo, args.jobs, args.policy, group_of=lambda p: first_fifo)
    mine = [results[p.name()] for p in todo if p.name() in results]
    print(_table(mine))
    p99 = {r["point"]["scheme"]: (r.get("rpc") or {}).get("p99_ms")
           for r in mine}
    verdict = None
    if all(p99.get(s) is not None for s in ("fifo", "pias", "panda")):
        verdict = p99["fifo"] > p99["pias"] > p99["panda"]
        print("memcached p99: fifo %.3g > pias %.3g > panda %.3g ms: %s "
              "(the testbed's quick run: fifo > pias > panda)"
              % (p99["fifo"], p99["pias"], p99["panda"],
                 "reproduced" if verdict else "NOT reproduced"))
    extra = {"policies": policies, "policy_file": args.policy,
             "ordering_reproduced": verdict}
    if args.testbed:
        with open(args.testbed) as f:
            extra["testbed_summary"] = json.load(f).get("summary")
    if mine and not args.no_plots:
        plots.schemes(mine, os.path.join(ctx.out_dir, "crosscheck.png"),
                      "simulated testbed point: 50 Mbit/s, 14 flows, "
                      "%d GETs" % args.requests)
    return _finish(ctx, {r["name"]: r for r in mine}, errors, extra)


# ------------------------------------------------------------- reproduce

def reproduce_points(args):
    """PIAS's leaf-spine load sweeps and FISH's §4.1/§4.2 experiments."""
    out = []
    seeds = range(1, args.seeds + 1)
    if "pias" in args.parts:
        for w in args.workloads:
            for load in args.loads:
                for cc in args.cc:
                    for s in args.schemes:
                        for seed in seeds:
                            out.append(pts.Point(
                                topology="leafspine", leaves=args.leaves,
                                hosts_per_leaf=args.hosts_per_leaf,
                                spines=args.spines, workload=w, load=load,
                                flows=args.flows, cc=cc, scheme=s,
                                rpc_pairs=args.rpc_pairs, seed=seed,
                                max_time=args.max_time))
    if "fish" in args.parts:
        # FISH §4.2: 4 leaves x 4 servers, 4 spines, 10G down / 20G up,
        # 800 web-search flows, mean arrival interval t; queue capacity
        # 240 (all schemes), 480 and 960 packets (PIAS and FISH only, as
        # FISH's Fig. 8).
        for t in args.fish_intervals:
            for buf in args.fish_buffers:
                schemes = args.schemes if buf == args.fish_buffers[0] else \
                    [s for s in args.schemes if s in ("pias", "fish")]
                for s in schemes:
                    for seed in seeds:
                        out.append(pts.Point(
                            topology="leafspine", leaves=4, hosts_per_leaf=4,
                            spines=4, core_rate="20Gbps",
                            workload="web-search", interval_us=t, flows=800,
                            cc=args.cc[0], scheme=s, rpc_pairs=0,
                            buffer_pkts=buf, seed=seed, tag="buf%d" % buf,
                            max_time=args.max_time))
        # FISH §4.1: two servers through one switch, 10G, 100 flows.
        for t in args.fish_intervals:
            for s in args.schemes:
                for seed in seeds:
                    out.append(pts.Point(
                        topology="dumbbell", edge_rate="10Gbps",
                        workload="web-search", interval_us=t, flows=100,
                        cc=args.cc[0], scheme=s, rpc_pairs=0, seed=seed,
                        min_rto_ms=5, delack_ms=1, buffer_pkts=240,
                        ecn_pkts=65, tag="fish41", max_time=args.max_time))
    return out


def targets(results, leaves, hosts_per_leaf):
    """Issue 15's targets at load 0.8, web search, leaf-spine: orderings
    of small-flow mean and p99 FCT, FHT (all flows) mean FCT of panda
    against pias, distance to the oracle.  Means over seeds."""
    out = {}
    for cc in sorted({r["point"]["cc"] for r in results}):
        sel = [r for r in results if r["point"]["topology"] == "leafspine"
               and r["point"]["leaves"] == leaves
               and r["point"]["hosts_per_leaf"] == hosts_per_leaf
               and r["point"]["workload"] == "web-search"
               and r["point"]["load"] == 0.8 and not r["point"]["tag"]
               and not r["point"]["interval_us"] and r["point"]["cc"] == cc]
        if not sel:
            continue
        val = {}
        for key in (("small", "mean_ms"), ("small", "p99_ms"),
                    ("all", "mean_ms")):
            for s in pts.SCHEMES:
                v = [r["fct"][key[0]][key[1]] for r in sel
                     if r["point"]["scheme"] == s
                     and r["fct"][key[0]][key[1]] is not None]
                if v:
                    val.setdefault("%s_%s" % key, {})[s] = sum(v) / len(v)
        t = {"values_ms": val}

        def chain(metric, names, strict_last=False):
            v = val.get(metric, {})
            if not all(n in v for n in names):
                return None
            ok = all(v[a] <= v[b] for a, b in zip(names, names[1:-1]))
            a, b = names[-2], names[-1]
            return ok and (v[a] < v[b] if strict_last else v[a] <= v[b])
        for m in ("small_mean_ms", "small_p99_ms"):
            t[m + ": oracle <= panda-pf <= panda"] = chain(
                m, ["oracle", "panda-pf", "panda"])
            t[m + ": fish <= pias < fifo"] = chain(
                m, ["fish", "pias", "fifo"], strict_last=True)
            v = val.get(m, {})
            if "oracle" in v:
                t[m + ": distance to oracle"] = {
                    s: v[s] / v["oracle"] for s in v if v["oracle"]}
        a = val.get("all_mean_ms", {})
        if "panda" in a and "pias" in a:
            t["all_mean_ms: panda / pias"] = a["panda"] / a["pias"]
            t["all_mean_ms: panda within 5% of pias"] = \
                abs(a["panda"] / a["pias"] - 1) <= 0.05
        out[cc] = t
    return out


def cmd_reproduce(args):
    ctx = _ctx(args, args.run_id or "reproduce")
    todo = reproduce_points(args)
    print("reproduce: %d points (%s)" % (len(todo), ", ".join(args.parts)))
    results, errors, policies = sweep.run_sweep(ctx, todo, args.jobs,
                                                args.policy)
    mine = [results[p.name()] for p in todo if p.name() in results]
    print(_table(mine))
    tg = targets(mine, args.leaves, args.hosts_per_leaf)
    print(json.dumps(tg, indent=1))
    if not args.no_plots:
        plots.vs_load(mine, ctx.out_dir)
        plots.fish([r for r in mine if r["point"]["topology"] == "leafspine"],
                   ctx.out_dir, "fish-4.2")
        plots.fish([r for r in mine if r["point"]["topology"] == "dumbbell"],
                   ctx.out_dir, "fish-4.1")
    return _finish(ctx, {r["name"]: r for r in mine}, errors,
                   {"targets": tg, "policies": policies})


# ----------------------------------------------------------------- scale

def cmd_scale(args):
    """Wall time and peak memory of one scheme at several sizes; ratios
    against the smallest point of the same run."""
    ctx = _ctx(args, args.run_id or "scale")
    shapes = {16: (4, 4), 64: (4, 16), 144: (9, 16)}
    todo = []
    for h in args.hosts:
        if h not in shapes:
            sys.exit("sim/run.py scale: --hosts takes 16, 64 and 144")
        for n in args.flows:
            if h != max(args.hosts) and n != min(args.flows):
                continue  # Flows scale at the largest size only.
            todo.append(pts.Point(
                topology="leafspine", leaves=shapes[h][0],
                hosts_per_leaf=shapes[h][1], spines=4, workload="web-search",
                load=args.load, flows=n, cc="dctcp", scheme=args.scheme,
                rpc_pairs=0, max_time=args.max_time))
    results, errors, _ = sweep.run_sweep(ctx, todo, args.jobs, args.policy)
    rows = []
    for p in todo:
        r = results.get(p.name())
        if not r:
            continue
        q = r["run"]["queues"]
        hops = sum(v["enqueued_packets"] for v in q.values())
        m = r["metadata"]
        rows.append({"hosts": p.hosts(), "flows": p.flows,
                     "wall_s": m["wall_s"],
                     "peak_rss_mb": m["peak_rss_kb"] / 1024.0,
                     "events": m["events"], "packet_hops": hops,
                     "us_per_packet_hop": m["wall_s"] / max(hops, 1) * 1e6,
                     "events_per_s": m["events"] / max(m["wall_s"], 1e-9),
                     "sim_s": m["sim_end_s"],
                     "loadavg": m["loadavg_before"]})
    if rows:
        base = rows[0]
        print("%6s %7s %9s %8s %11s %12s %9s %8s %7s" % (
            "hosts", "flows", "wall s", "RSS MB", "events", "packet-hops",
            "us/hop", "x wall", "load"))
        for r in rows:
            r["wall_ratio"] = r["wall_s"] / base["wall_s"]
            r["rss_ratio"] = r["peak_rss_mb"] / base["peak_rss_mb"]
            print("%6d %7d %9.1f %8.1f %11d %12d %9.2f %8.2f %7.2f" % (
                r["hosts"], r["flows"], r["wall_s"], r["peak_rss_mb"],
                r["events"], r["packet_hops"], r["us_per_packet_hop"],
                r["wall_ratio"], r["loadavg"]))
        if not args.no_plots:
            plots.scale(rows, os.path.join(ctx.out_dir, "scale.png"))
    return _finish(ctx, results, errors, {"scale": rows})


# ----------------------------------------------------------------- point

def cmd_point(args):
    ctx = _ctx(args, args.run_id or "point")
    fields = {f.name for f in dataclasses.fields(pts.Point)}
    kw = {k: v for k, v in vars(args).items()
          if k in fields and v is not None}
    p = pts.Point(**kw)
    results, errors, _ = sweep.run_sweep(ctx, [p], 1, args.policy)
    if p.name() in results:
        print(_table([results[p.name()]]))
    return _finish(ctx, {n: r for n, r in results.items()
                         if n == p.name()}, errors)


def cmd_plot(args):
    with open(os.path.join(args.dir, "result.json")) as f:
        doc = json.load(f)
    rs = doc["points"]
    paths = plots.vs_load(rs, args.dir) + plots.fish(rs, args.dir)
    print("\n".join(paths) or "nothing to plot")
    return 0


# ------------------------------------------------------------------ main

def _list(conv):
    def parse(s):
        try:
            return [conv(x) for x in s.split(",") if x]
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e))
    return parse


def _schemes(s):
    out = _list(str)(s)
    bad = [x for x in out if x not in pts.SCHEMES]
    if bad:
        raise argparse.ArgumentTypeError(
            "unknown scheme(s) %s (known: %s)" % (", ".join(bad),
                                                 ", ".join(pts.SCHEMES)))
    return out


def parser():
    ap = argparse.ArgumentParser(prog="sim/run.py", description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p, schemes=pts.SCHEMES):
        p.add_argument("--out", default=os.path.join(TOP, "results", "sim"),
                       help="results root (default results/sim)")
        p.add_argument("--run-id", help="directory under --out")
        p.add_argument("--build-dir", help="build tree (default "
                       "$PANDA_BUILD_DIR or <repo>/_build)")
        p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                       help="points run at once (default: one per core)")
        p.add_argument("--schemes", type=_schemes, default=list(schemes))
        p.add_argument("--policy", help="policy file (testbed/simulator "
                       "policy.json) instead of collection + panda-model")
        p.add_argument("--no-plots", action="store_true")
        p.add_argument("--seed", type=int, default=1)

    q = sub.add_parser("quick", help="a dumbbell point per scheme")
    common(q)
    q.add_argument("--flows", type=int, default=QUICK.flows)
    q.set_defaults(func=cmd_quick)

    c = sub.add_parser("crosscheck", help="the testbed's quick point")
    common(c, ("fifo", "pias", "panda"))
    c.add_argument("--requests", type=int, default=10000)
    c.add_argument("--warmup", type=float, default=3.0)
    c.add_argument("--max-time", type=float, default=600)
    c.add_argument("--testbed", help="a testbed result.json to quote")
    c.set_defaults(func=cmd_crosscheck)

    r = sub.add_parser("reproduce", help="the FISH/PIAS reproduction")
    common(r)
    r.add_argument("--parts", type=_list(str), default=["pias", "fish"])
    r.add_argument("--workloads", type=_list(str),
                   default=["web-search", "data-mining"])
    r.add_argument("--loads", type=_list(float),
                   default=[0.5, 0.6, 0.7, 0.8, 0.9])
    r.add_argument("--cc", type=_list(str), default=["dctcp"])
    r.add_argument("--flows", type=int, default=10000)
    r.add_argument("--leaves", type=int, default=9)
    r.add_argument("--hosts-per-leaf", type=int, default=16)
    r.add_argument("--spines", type=int, default=4)
    r.add_argument("--rpc-pairs", type=int, default=16)
    r.add_argument("--seeds", type=int, default=1)
    r.add_argument("--max-time", type=float, default=60)
    r.add_argument("--fish-intervals", type=_list(int),
                   default=[1000, 100, 10],
                   help="FISH's mean arrival intervals t, us")
    r.add_argument("--fish-buffers", type=_list(int), default=[240, 480, 960],
                   help="FISH's queue capacities, packets (the first with "
                   "every scheme, the others PIAS and FISH only)")
    r.set_defaults(func=cmd_reproduce)

    s = sub.add_parser("scale", help="wall time and memory vs size")
    common(s, ("panda",))
    s.add_argument("--hosts", type=_list(int), default=[16, 64, 144])
    s.add_argument("--flows", type=_list(int), default=[10000, 100000])
    s.add_argument("--load", type=float, default=0.8)
    s.add_argument("--scheme", default="panda", choices=pts.SCHEMES)
    s.add_argument("--max-time", type=float, default=120)
    s.set_defaults(func=cmd_scale)

    p = sub.add_parser("point", help="one point")
    common(p)
    for f in dataclasses.fields(pts.Point):
        if f.name in ("seed",):
            continue
        typ = {int: int, float: float, str: str}.get(f.type, str)
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name,
                       type=typ, default=None)
    p.set_defaults(func=cmd_point)

    pl = sub.add_parser("plot", help="figures from a run directory")
    pl.add_argument("dir")
    pl.set_defaults(func=cmd_plot)
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    if getattr(args, "jobs", 1) < 1:
        parser().error("--jobs: at least 1")
    t0 = time.monotonic()
    rc = args.func(args)
    print("sim/run.py %s: %.0f s" % (args.cmd, time.monotonic() - t0))
    return rc

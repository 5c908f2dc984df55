"""Runs a list of points in parallel processes (one panda-sim per job, one
job per core by default) with a progress line per finished point, and
resume: points whose point.json is complete are not run again.

Two phases: first the FIFO points that collect for the policies (one per
group of points sharing a model, see Point.group), then panda-model, then
everything else.  A given policy file skips the collection.
"""

import concurrent.futures
import csv
import glob
import json
import os
import sys
import time

from . import points as pts
from . import policy as pol


def _log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


class DryRun(Exception):
    """Raised instead of running when the context is a dry run: 'points'
    is what would run, in order (collection first), with 'done' those
    whose result already exists."""

    def __init__(self, points, done=()):
        super().__init__("dry run")
        self.points = list(points)
        self.done = set(done)


def run_parallel(ctx, todo, jobs, policies=None, log=_log,
                 group_of=pts.Point.group, run=None, describe=None):
    """Runs the points of 'todo' ([Point]); returns ({name: result},
    {name: error}).  'policies' maps the name of a point's group (see
    run_sweep) to its policy.  Other simulators' points (tsl-sim's,
    incast.py) bring their own 'run(ctx, point, policy)' and
    'describe(result)' (one line of headline numbers)."""
    run = run or pts.run_point
    describe = describe or brief
    results, errors = {}, {}
    pending = []
    for p in todo:
        r = pts.load_result(ctx, p)
        if r:
            results[p.name()] = r
        else:
            pending.append(p)
    if ctx.dry_run:
        raise DryRun(todo, results)
    if not pending:
        return results, errors
    log("%d point(s) to run, %d already done, %d job(s)"
        % (len(pending), len(todo) - len(pending), jobs))
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = {}
        for p in pending:
            pol_doc = (policies or {}).get(group_of(p).name())
            futs[ex.submit(run, ctx, p, pol_doc)] = p
        for i, f in enumerate(concurrent.futures.as_completed(futs), 1):
            p = futs[f]
            try:
                r = f.result()
            except pts.PointError as e:
                errors[p.name()] = str(e)
                log("[%d/%d] %s: FAILED: %s" % (i, len(pending), p.name(), e))
                continue
            results[p.name()] = r
            el = time.monotonic() - t0
            eta = el / i * (len(pending) - i)
            log("[%d/%d] %s: %s (%.0f s wall, %d MB; elapsed %.0f s, eta "
                "%.0f s)" % (i, len(pending), p.name(), describe(r),
                             r["metadata"]["wall_s"],
                             r["metadata"]["peak_rss_kb"] // 1024, el, eta))
    return results, errors


def plan(dry, jobs, out_root, log=_log):
    """Prints a dry run's plan: every point, and the expected wall time
    from the same points' earlier results under 'out_root' (a simulation
    runs as fast as the CPU lets it, so only a measured point predicts
    one; points never run before are counted, not guessed)."""
    todo = [p for p in dry.points if p.name() not in dry.done]
    known = {}
    for p in todo:
        for f in glob.glob(os.path.join(out_root, "*", "points", p.name(),
                                        "point.json")):
            try:
                with open(f) as fh:
                    known[p.name()] = json.load(fh)["metadata"]["wall_s"]
                break
            except (OSError, ValueError, KeyError, TypeError):
                continue
    log("plan: %d point(s), %d already done, %d to run on %d job(s)"
        % (len(dry.points), len(dry.points) - len(todo), len(todo), jobs))
    for p in dry.points:
        state = ("done" if p.name() in dry.done else
                 "%.0f s before" % known[p.name()] if p.name() in known
                 else "never run")
        log("  %s (%s)" % (p.name(), state))
    if todo and len(known) == len(todo):
        log("expected: about %.0f s (the points' earlier wall times, %d at "
            "a time)" % (sum(known.values()) / jobs, jobs))
    elif todo:
        log("expected: unknown for %d of %d point(s) never run under %s; "
            "'sim/run.py scale' measures this machine's speed"
            % (len(todo) - len(known), len(todo), out_root))


def brief(r):
    f = r["fct"]

    def ms(x):
        return "-" if x is None else "%.3g" % x
    s = "small mean %s p99 %s ms, all %s ms, %d/%d flows" % (
        ms(f["small"]["mean_ms"]), ms(f["small"]["p99_ms"]),
        ms(f["all"]["mean_ms"]), f["all"]["completed"], f["all"]["flows"])
    if r.get("rpc"):
        s += ", rpc p99 %s ms" % ms(r["rpc"]["p99_ms"])
    return s


def run_sweep(ctx, points, jobs, policy_file=None, log=_log,
              group_of=pts.Point.group):
    """Collection, model, then all points.  'group_of(point)' is the FIFO
    point whose collection gives 'point' its policy (Point.group: the same
    parameters with scheme fifo and the first seed).  Returns (results of
    'points', errors, policies by group name)."""
    policies, errors, results = {}, {}, {}
    marking = [p for p in points if p.scheme in pts.POLICY_KIND]
    groups = {}
    for p in marking:
        groups.setdefault(group_of(p).name(), group_of(p))
    if ctx.dry_run:
        first = [] if policy_file else list(groups.values())
        todo = first + [p for p in points if p not in first]
        raise DryRun(todo, [p.name() for p in todo
                            if pts.load_result(ctx, p)])
    if policy_file:
        doc = pol.load_policy(policy_file)
        policies = {g: doc for g in groups}
    elif groups:
        log("collection: %d FIFO point(s)" % len(groups))
        res, err = run_parallel(ctx, list(groups.values()), jobs, log=log)
        results.update(res)
        errors.update(err)
        for g, p in groups.items():
            if g not in res:
                continue
            d = ctx.point_dir(p)
            pdir = os.path.join(ctx.out_dir, "policies", g)
            path = os.path.join(pdir, "policy.json")
            try:
                policies[g] = (pol.load_policy(path) if os.path.exists(path)
                               else pol.make_policies(
                                   ctx.build_dir, d,
                                   os.path.join(ctx.top, "load_generator",
                                                "cdf", p.workload + ".cdf"),
                                   _model_load(p, res[g]), pdir))
            except pol.ModelToolError as e:
                errors[g + " (model)"] = str(e)
                log("model for %s: FAILED: %s" % (g, e))
                continue
            log("policy %s: panda %s" % (g, policies[g]["panda"]["action"]))
    runnable = [p for p in points if p.scheme not in pts.POLICY_KIND
                or group_of(p).name() in policies]
    res, err = run_parallel(ctx, runnable, jobs, policies, log=log,
                            group_of=group_of)
    results.update(res)
    errors.update(err)
    for p in points:
        if p.name() not in results and p.name() not in errors:
            errors[p.name()] = "not run: no policy (its collection failed)"
    wanted = {p.name() for p in points}
    return ({n: r for n, r in results.items() if n in wanted}, errors,
            policies)


def _model_load(point, fifo_result):
    """The load the model assumes: the point's, or for arrivals by
    interval or closed loop the load measured on the FIFO run (bytes
    offered over the load window and the host links), capped below 1."""
    if not point.interval_us and not point.concurrency:
        return point.load
    run = fifo_result["run"]
    flows = fifo_result["fct"]["all"]
    window = (run["workload"]["load_end_ns"]
              - run["workload"]["load_start_ns"]) / 1e9
    hosts = run["topology"]["hosts"] if point.topology != "dumbbell" else 1
    offered = run["workload"]["mean_flow_bytes"] * flows["flows"] * 8
    rho = offered / max(window, 1e-9) / (run["topology"]["edge_bps"] * hosts)
    return min(max(rho, 0.05), 0.95)


CSV_FIELDS = ["name", "topology", "hosts", "workload", "scheme", "cc", "load",
              "interval_us", "concurrency", "flows", "seed", "tag",
              "small_mean_ms", "small_p50_ms", "small_p99_ms",
              "medium_mean_ms", "medium_p99_ms", "large_mean_ms",
              "all_mean_ms", "small_slowdown_mean", "all_slowdown_mean",
              "flows_completed", "flows_unfinished", "rpc_requests",
              "rpc_p50_ms", "rpc_p99_ms", "rpc_p999_ms", "incast_qct_p99_ms",
              "rto", "drops", "marks", "wall_s", "cpu_s", "peak_rss_mb",
              "events", "malloc", "ns3_version", "git_commit"]


def row(r):
    p, f, m, run = r["point"], r["fct"], r["metadata"], r["run"]
    rpc, inc = r.get("rpc") or {}, r.get("incast") or {}
    q = run.get("queues") or {}
    return {
        "name": r["name"], "topology": p["topology"],
        "hosts": run["topology"]["hosts"], "workload": p["workload"],
        "scheme": p["scheme"], "cc": p["cc"], "load": p["load"],
        "interval_us": p["interval_us"], "concurrency": p["concurrency"],
        "flows": p["flows"], "seed": p["seed"], "tag": p["tag"],
        "small_mean_ms": f["small"]["mean_ms"],
        "small_p50_ms": f["small"]["p50_ms"],
        "small_p99_ms": f["small"]["p99_ms"],
        "medium_mean_ms": f["medium"]["mean_ms"],
        "medium_p99_ms": f["medium"]["p99_ms"],
        "large_mean_ms": f["large"]["mean_ms"],
        "all_mean_ms": f["all"]["mean_ms"],
        "small_slowdown_mean": f["small"]["slowdown_mean"],
        "all_slowdown_mean": f["all"]["slowdown_mean"],
        "flows_completed": f["all"]["completed"],
        "flows_unfinished": f["all"]["unfinished"],
        "rpc_requests": rpc.get("requests"), "rpc_p50_ms": rpc.get("p50_ms"),
        "rpc_p99_ms": rpc.get("p99_ms"), "rpc_p999_ms": rpc.get("p999_ms"),
        "incast_qct_p99_ms": inc.get("qct_p99_ms"),
        "rto": run["tcp"]["rto"],
        "drops": sum(v["dropped_packets"] for v in q.values()),
        "marks": sum(v["marked_packets"] for v in q.values()),
        "wall_s": m["wall_s"],
        "cpu_s": (m["cpu_user_s"] + m["cpu_sys_s"]
                  if m.get("cpu_user_s") is not None else None),
        "peak_rss_mb": m["peak_rss_kb"] / 1024.0,
        "events": m["events"], "malloc": m.get("malloc"),
        "ns3_version": m["ns3_version"],
        "git_commit": m["git_commit"],
    }


def run_metadata(results, argv=None):
    """What a set of results was made with: the command, ns-3 version(s),
    code commit(s) and whether the tree was dirty, seeds, allocators, and
    the machine time spent (CPU is the work; wall time also counts the
    other load, loadavg before each point)."""
    ms = [r["metadata"] for r in results]

    def values(key):
        return sorted({m.get(key) for m in ms if m.get(key) is not None},
                      key=str)
    cpu = [m["cpu_user_s"] + m["cpu_sys_s"] for m in ms
           if m.get("cpu_user_s") is not None]
    if argv is None:
        argv = ["sim/run.py"] + sys.argv[1:]
    return {"command": " ".join(argv),
            "points": len(ms), "ns3_version": values("ns3_version"),
            "git_commit": values("git_commit"),
            "git_dirty": values("git_dirty"), "seeds": values("seed"),
            "malloc": values("malloc"), "cpus": values("cpus"),
            "cpu_s_total": sum(cpu) if cpu else None,
            "point_wall_s_total": sum(m["wall_s"] for m in ms),
            "loadavg_before": [min(values("loadavg_before") or [0]),
                               max(values("loadavg_before") or [0])]}


def write_outputs(out_dir, results, errors, extra=None, fields=CSV_FIELDS,
                  row_of=row):
    """result.json (every point, errors, extra, run metadata), result.csv
    (one row per point: 'fields', from 'row_of(result)') and metadata.json
    (run_metadata)."""
    ordered = sorted(results.values(), key=lambda r: r["name"])
    meta = run_metadata(ordered)
    doc = {"metadata": meta, "points": ordered, "errors": errors}
    doc.update(extra or {})
    with open(os.path.join(out_dir, "result.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out_dir, "metadata.json"), "w") as f:
        json.dump(meta, f, indent=1)
    with open(os.path.join(out_dir, "result.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in ordered:
            w.writerow(row_of(r))

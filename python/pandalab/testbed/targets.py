"""The latency floor of a run and the scheduler's targets, measured in
the same run (summary.floor, summary.floor_ms, summary.targets).

floor_ms = p99 of the unloaded memcached trial (experiments.py, "floor")
+ one full frame serialised at the link rate: the best a loaded
top-priority memcached connection can do is the unloaded latency plus the
MTU packet that may have just started to leave ahead of it.

The targets compare the schemes' aggregated rows (report.aggregate) at the
point where every scheme ran: the (a) concurrency and the largest (a)
request count (14 flows, 10000 requests).  Each compares schemes that
differ in one variable ("variable", from the scheme table), but for the
design comparisons with fq_codel, which say so.  Each has a verdict decided by
the repetitions' 95% interval (stats.py): "met" when the interval lies
inside the bound, "NOT met" when it lies outside, "undecided" when it
straddles the bound (or one repetition cannot decide it), "not run" when
a scheme it needs did not run, "reported" for the records without a
bound; "met" is True, False or None alike.  None of them fails the run
(they are targets of the scheduler, not properties of the harness:
tests/system checks only the robust orderings)."""

from . import stats
from .experiments import MODES
from .schemes import FRAME, change, differences

P99_VS_FLOOR = 1.1          # panda p99 <= 1.1 x floor_ms
LEVEL0_SHARE = 0.95         # panda keeps >= 95% of memcached's packets at
                            # level 0 (every shipped workload)
FCT_TOLERANCE = 0.05        # panda small/medium mean FCT within 5% of pias
FQ_CODEL_VS_PIAS = 2.0      # fq_codel's small-flow mean FCT <= 2 x pias's:
                            # the operator's alternative is no straw man

REPORTED, NOT_RUN = "reported", "not run"


def _mean(stat):
    return stat["mean"] if stat else None


def _drops(egress):
    """Packets the egress lost, mean per trial: arrivals refused and held
    packets pushed out for a higher level's alike (None if not counted)."""
    vals = [_mean(egress.get(k)) for k in ("drop-limit", "drop-push-out")]
    vals = [v for v in vals if v is not None]
    return sum(vals) if vals else None


def floor(rows, rate_bps):
    """{cc: {"unloaded_p99_ms", "frame_ms", "floor_ms", "requests",
    "floor_ms_reps"}} from the floor rows (concurrency 0).  With
    repetitions, the unloaded p99 is the trimmed mean over the
    repetitions' floors, as a loaded row's is over the same seeds
    (experiments.py: a floor per repetition); floor_ms_reps is each
    repetition's own ({rep: ms}), which the targets pair with the loaded
    trials of the same seed."""
    out = {}
    frame_ms = FRAME * 8 / rate_bps * 1000
    for r in rows:
        if "floor" not in r["experiments"]:
            continue
        stat = r["memcached"]["p99_ms"]
        p99 = _mean(stat)
        out[r["cc"]] = {
            "unloaded_p99_ms": p99, "frame_ms": frame_ms,
            "frame_bytes": FRAME, "requests": r["requests"],
            "floor_ms": None if p99 is None else p99 + frame_ms,
            "floor_ms_reps": {str(k): v + frame_ms
                              for k, v in stats.by_rep(stat).items()}}
    return out


def _point(mode):
    m = MODES[mode]
    return m["a_concurrency"], max(m["a_requests"])


def _target(tid, what, verdict, **values):
    met = {stats.MET: True, stats.NOT_MET: False}.get(verdict)
    return dict({"id": tid, "what": what, "verdict": verdict, "met": met},
                **values)


def evaluate(rows, floors, mode):
    """The targets, per congestion control that has a floor."""
    conc, req = _point(mode)
    out = []
    for cc, fl in sorted(floors.items()):
        at = {r["scheme"]: r for r in rows if r["cc"] == cc
              and r["concurrency"] == conc and r["requests"] == req
              and r["reps_ok"]}
        out += _evaluate_cc(cc, at, fl, conc, req)
    return out


def _p99(at, scheme):
    return at[scheme]["memcached"]["p99_ms"] if scheme in at else None


def _variable(a, b):
    """What differs between schemes 'a' and 'b' (the scheme table)."""
    return {"compares": [a, b], "differs_in": differences(a, b),
            "variable": change(a, b)}


def _check(est, lo=None, hi=None, need=(), strict=False):
    """A criterion's record: the estimate, its interval, the verdict and
    why.  'need': the schemes it needs that did not run; 'strict': the
    bound itself does not meet it ("<", not "<=")."""
    if need:
        return {"verdict": NOT_RUN, "why": "%s did not run"
                % " and ".join(need)}
    v = stats.verdict(est, lo, hi, strict)
    rec = {"verdict": v, "bound": [lo, hi], "strict": strict}
    if est:
        rec.update(estimate=est["estimate"], ci95=est["ci95"],
                   reps=est["n"], method=est["method"])
    if est is None or est.get("estimate") is None:
        rec["why"] = "no ratio: a side is missing or both are zero"
    elif est["n"] == 1 and v == stats.UNDECIDED:
        if not stats.one_rep_can_decide(lo, hi):
            rec["why"] = ("one repetition: cannot decide a +-%s%% target"
                          % _pct(lo, hi))
        else:
            rec["why"] = ("one repetition: it decides only %gx or more "
                          "beyond the bound" % stats.ONE_REP_FACTOR)
    elif v == stats.UNDECIDED:
        rec["why"] = "the %d repetitions' 95%% interval straddles the " \
            "bound" % est["n"]
    return rec


def _pct(lo, hi):
    return "%g" % round((hi - lo) / (hi + lo) * 100, 3)


def _ratio_check(at, a, b, get, lo=None, hi=None, strict=False):
    """The paired ratio of 'get'(row) of scheme a over scheme b."""
    need = [s for s in (a, b) if s not in at]
    if need:
        return _check(None, need=need)
    return _check(stats.ratio(stats.paired(get(at[a]), get(at[b]))), lo, hi,
                  strict=strict)


def _verdict(*checks):
    vs = [c["verdict"] for c in checks]
    if NOT_RUN in vs:
        return NOT_RUN
    return stats.combine(vs)


def _evaluate_cc(cc, at, fl, conc, req):
    where = {"cc": cc, "concurrency": conc, "requests": req}
    res = []
    p99 = (lambda r: r["memcached"]["p99_ms"])
    floor_ms = fl["floor_ms"]

    # panda against the unloaded floor of its own repetition.
    if "panda" in at:
        fl_reps = {int(k): v for k, v in
                   (fl.get("floor_ms_reps") or {}).items()}
        c = _check(stats.ratio(stats.paired(p99(at["panda"]), fl_reps)),
                   hi=P99_VS_FLOOR)
    else:
        c = _check(None, need=["panda"])
    res.append(_target(
        "panda_p99_vs_floor", "panda memcached p99 <= %.1f x floor_ms"
        % P99_VS_FLOOR, c["verdict"], variable="the load: panda loaded "
        "against memcached unloaded (the floor trial of the same "
        "repetition)", compares=["panda", "floor"], check=c,
        panda_p99_ms=_mean(_p99(at, "panda")), floor_ms=floor_ms,
        ratio=c.get("estimate"), **where))

    c = _ratio_check(at, "panda", "fq_codel", p99, hi=1.0)
    res.append(_target(
        "panda_p99_vs_fq", "panda memcached p99 <= fq_codel's",
        c["verdict"], check=c, panda_p99_ms=_mean(_p99(at, "panda")),
        fq_p99_ms=_mean(_p99(at, "fq_codel")),
        **dict(_variable("panda", "fq_codel"), variable="design: Panda's "
               "levels or fq_codel's per-flow queues (two alternatives, "
               "not one mechanism)"), **where))

    small = (lambda r: r["fct_mean_ms"].get("small"))
    c = _ratio_check(at, "fq_codel", "pias", small, hi=FQ_CODEL_VS_PIAS)
    res.append(_target(
        "fq_codel_small_vs_pias", "small flows' mean FCT of fq_codel <= "
        "%g x pias's" % FQ_CODEL_VS_PIAS, c["verdict"], check=c,
        mean_fct_ms={s: _mean(at[s]["fct_mean_ms"].get("small"))
                     if s in at else None for s in ("fq_codel", "pias")},
        ratio=c.get("estimate"),
        **dict(_variable("fq_codel", "pias"), variable="design: PIAS's "
               "levels or fq_codel's per-flow queues (the operator's "
               "alternative must be no straw man)"), **where))

    if "panda" in at:
        share = at["panda"].get("memcached_level0_share_reps")
        # Decided on the share that leaves level 0, so that one
        # repetition's interval (a factor) is about the leak.
        leak = stats.mean_of(
            [1 - v for v in share["values"]] if share else [])
        c = _check(leak, hi=1 - LEVEL0_SHARE)
        if leak:
            c["share_estimate"] = 1 - leak["estimate"]
    else:
        c = _check(None, need=["panda"])
    res.append(_target(
        "panda_mc_level0", "panda keeps >= %d%% of the memcached "
        "connection's packets at level 0" % (LEVEL0_SHARE * 100),
        c["verdict"], variable="none: a property of panda", check=c,
        share=at["panda"].get("memcached_level0_share")
        if "panda" in at else None,
        levels=at["panda"]["memcached_levels"] if "panda" in at else None,
        **where))

    c1 = _ratio_check(at, "fifo", "pias", p99, lo=1.0, strict=True)
    c2 = _ratio_check(at, "pias", "panda", p99, lo=1.0, strict=True)
    order = {s: _p99(at, s) for s in ("fifo", "pias", "panda")}
    cis = {s: v["ci95"] if v else None for s, v in order.items()}
    res.append(_target(
        "p99_order", "memcached p99: fifo > pias > panda",
        _verdict(c1, c2), variable="policy: none -> pias -> panda (one "
        "step each)", compares=["fifo", "pias", "panda"],
        checks={"fifo/pias": c1, "pias/panda": c2},
        p99_ms={s: _mean(v) for s, v in order.items()}, p99_ci95=cis,
        intervals_overlap=_overlap(cis), **where))

    for b in ("small", "medium"):
        c = _ratio_check(at, "panda", "pias",
                         lambda r, b=b: r["fct_mean_ms"].get(b),
                         lo=1 - FCT_TOLERANCE, hi=1 + FCT_TOLERANCE)
        res.append(_target(
            "fct_%s_vs_pias" % b, "%s flows' mean FCT of panda within "
            "+-%d%% of pias" % (b, FCT_TOLERANCE * 100), c["verdict"],
            check=c, mean_fct_ms={s: _mean(at[s]["fct_mean_ms"].get(b))
                                  if s in at else None
                                  for s in ("pias", "panda")},
            ratio=c.get("estimate"), **dict(_variable("pias", "panda"),
                                             **where)))

    c = _ratio_check(at, "panda", "pias", p99, hi=1.0, strict=True)
    res.append(_target(
        "panda_p99_vs_pias", "panda memcached p99 < pias's", c["verdict"],
        check=c, panda_p99_ms=_mean(_p99(at, "panda")),
        pias_p99_ms=_mean(_p99(at, "pias")),
        **dict(_variable("pias", "panda"), **where)))
    res.append(_large_flows(at, where))
    res.append(_ecn(at, where))
    res.append(_per_flow(at, where))
    if "panda-w1" in at:
        res.append(_weights(at, where))
    return res


def _overlap(cis):
    """Do the schemes' own 95% intervals overlap (None: one is missing)?"""
    vals = list(cis.values())
    if None in vals:
        return None
    return any(a[0] <= b[1] and b[0] <= a[1]
               for i, a in enumerate(vals) for b in vals[i + 1:])


def sinking(bytes_per_level):
    """How fast the bottleneck's bytes sank: the share sent at level 0 and
    the byte-weighted mean level."""
    total = sum(bytes_per_level or ())
    if not total:
        return None
    return {"level0_share": bytes_per_level[0] / total,
            "mean_level": sum(i * b for i, b in enumerate(bytes_per_level))
            / total}


def _weights(at, where):
    """Size-interval weights (panda) against all ones (panda-w1), same
    run: the flows must sink at least as fast in bytes (no larger a share
    of the bytes at level 0, no lower a mean level) and the memcached
    connection stay at level 0 as it does without weights: its level-0
    share at least all ones' (to one packet in a thousand) and at least
    panda_mc_level0's 95%.  Not "every packet": the same few packets leave
    level 0 under both (counter excursions beyond those the collection
    sampled, weights or not: 6 of 10742 in both schemes of the run that
    showed it), and what the weights must not do is add to them.  Each
    criterion is decided on the paired repetitions."""
    vals = {s: dict(sinking(at[s].get("bytes_per_level")) or {},
                    memcached_level0_share=at[s].get("memcached_level0_share"),
                    memcached_p99_ms=_mean(_p99(at, s)))
            for s in ("panda", "panda-w1") if s in at}
    sink = (lambda k: lambda r: (r.get("bytes_sinking_reps") or {}).get(k))
    leak = (lambda extra: lambda r: {
        rep: 1 - v + extra
        for rep, v in stats.by_rep(r.get("memcached_level0_share_reps"))
        .items()})
    checks = {
        "bytes at level 0, panda/panda-w1 <= 1": _ratio_check(
            at, "panda", "panda-w1", sink("level0_share"), hi=1.0),
        "mean level, panda/panda-w1 >= 1": _ratio_check(
            at, "panda", "panda-w1", sink("mean_level"), lo=1.0),
        "memcached off level 0, panda/(panda-w1 + 0.001) <= 1":
        _leak_check(at, leak)}
    if "panda" in at:
        share = at["panda"].get("memcached_level0_share_reps")
        checks["memcached off level 0 under panda <= %g" % (
            1 - LEVEL0_SHARE)] = _check(stats.mean_of(
                [1 - v for v in share["values"]] if share else []),
                hi=1 - LEVEL0_SHARE)
    return _target("weights_vs_all_ones", "size-interval weights (panda) "
                   "against all ones (panda-w1): bytes sink at least as "
                   "fast, memcached stays at level 0",
                   _verdict(*checks.values()), checks=checks, schemes=vals,
                   **dict(_variable("panda-w1", "panda"), **where))


def _leak_check(at, leak):
    need = [s for s in ("panda", "panda-w1") if s not in at]
    if need:
        return _check(None, need=need)
    return _check(stats.ratio(stats.paired(leak(0)(at["panda"]),
                                           leak(0.001)(at["panda-w1"]))),
                  hi=1.0)


def _large_flows(at, where):
    """Reported, no verdict: what the guard does for the large flows that
    strict priority leaves in the lowest levels."""
    vals = {}
    for s in ("panda", "panda-guard"):
        if s in at:
            r = at[s]
            vals[s] = {
                "large_completed": r["fct_completed"].get("large"),
                "large_unfinished": r["fct_unfinished"].get("large"),
                "large_mean_fct_ms": _mean(r["fct_mean_ms"].get("large")),
                "all_completed": r["fct_completed"].get("all"),
                "guard_packets": _mean(r["egress"].get("guard")),
                "memcached_p99_ms": _mean(r["memcached"]["p99_ms"])}
    return _target("large_flows_guard", "large-flow completion without "
                   "(panda) and with (panda-guard) the starvation guard",
                   REPORTED, schemes=vals,
                   **dict(_variable("panda", "panda-guard"), **where))


def _ecn(at, where):
    """Port ECN with ECN-capable senders against drop-tail at the same
    buffer: retransmissions and small-flow p99 FCT must both fall."""
    vals = {}
    for s in ("panda", "panda-droptail"):
        if s in at:
            r = at[s]
            vals[s] = {
                "retrans_segs": _mean(r["tcp_sender"].get("TcpRetransSegs")),
                "rto": _mean(r["tcp_sender"].get("TcpExtTCPTimeouts")),
                "small_p99_fct_ms": _mean(r["fct_p99_ms"].get("small")),
                "marks": _mean(r["egress"].get("mark-ecn")),
                # Arrivals refused and held packets pushed out (for a
                # higher level's) alike: packets the senders lost here.
                "drops": _drops(r["egress"])}
    checks = {
        "retransmissions, panda/panda-droptail < 1": _ratio_check(
            at, "panda", "panda-droptail",
            lambda r: r["tcp_sender"].get("TcpRetransSegs"), hi=1.0,
            strict=True),
        "small-flow p99 FCT, panda/panda-droptail < 1": _ratio_check(
            at, "panda", "panda-droptail",
            lambda r: r["fct_p99_ms"].get("small"), hi=1.0, strict=True)}
    return _target("ecn_vs_droptail", "port ECN (panda) against drop-tail "
                   "(panda-droptail): sender retransmissions and small-flow "
                   "p99 FCT fall", _verdict(*checks.values()),
                   checks=checks, schemes=vals,
                   **dict(_variable("panda-droptail", "panda"), **where))


def _per_flow(at, where):
    """Reported, no bound: the per-flow queues as a factor of their own,
    each classifier with and without them, and the classifiers with
    them (memcached p99, small and medium flows' mean FCT; paired
    ratios with their intervals)."""
    metrics = {"memcached_p99": lambda r: r["memcached"]["p99_ms"],
               "small_fct": lambda r: r["fct_mean_ms"].get("small"),
               "medium_fct": lambda r: r["fct_mean_ms"].get("medium")}
    pairs = {}
    for a, b in (("pias", "pias-pf"), ("panda", "panda-pf"),
                 ("pias-pf", "panda-pf")):
        if a in at and b in at:
            pairs["%s/%s" % (b, a)] = dict(
                {m: _est(stats.ratio(stats.paired(g(at[b]), g(at[a]))))
                 for m, g in metrics.items()},
                variable=change(a, b))
    return _target("per_flow_factor", "per-flow queues inside the levels, "
                   "under each classifier, and the classifiers with them "
                   "(ratios)", REPORTED, ratios=pairs,
                   variable="per_flow (pias-pf/pias, panda-pf/panda); "
                   "policy (panda-pf/pias-pf)", **where)


def _est(e):
    if not e:
        return None
    return {"estimate": e["estimate"], "ci95": e["ci95"], "reps": e["n"]}


# -- the run's closing lines ---------------------------------------------
def lines(summary):
    """The targets as text for the run's closing table."""
    out = []
    for cc, fl in sorted((summary.get("floor") or {}).items()):
        out.append("floor (%s): %s ms = unloaded memcached p99 %s ms + a "
                   "%d-byte frame at the rate (%.3f ms)" % (
                       cc, _f(fl["floor_ms"]), _f(fl["unloaded_p99_ms"]),
                       fl["frame_bytes"], fl["frame_ms"]))
    for t in summary.get("targets") or []:
        verdict = t.get("verdict") or {True: stats.MET,
                                       False: stats.NOT_MET}.get(t["met"],
                                                                 "-")
        out.append("target %-20s %-9s %s [%s]: %s" % (
            t["id"], verdict, t["what"], t.get("variable", "-"),
            _values(t)))
    return out


def _check_str(c):
    """"ratio 1.0503 [0.35, 3.15], 1 rep (one repetition: ...)"."""
    if c["verdict"] == NOT_RUN:
        return c["why"]
    lo, hi = c.get("bound", (None, None))
    bounds = [b for b in (lo, hi) if b is not None]
    s = "%s %s, %s" % (stats.fmt(c.get("estimate"), bounds),
                       stats.fmt_ci(c.get("ci95"), bounds),
                       _reps(c.get("reps")))
    if c.get("why"):
        s += " (%s)" % c["why"]
    return s


def _reps(n):
    return "-" if not n else "1 rep" if n == 1 else "%d reps" % n


def _values(t):
    tid = t["id"]
    if tid == "panda_p99_vs_floor":
        return "panda %s ms, floor %s ms, ratio %s" % (
            _f(t["panda_p99_ms"]), _f(t["floor_ms"]), _check_str(t["check"]))
    if tid == "panda_p99_vs_pias":
        return "panda %s ms, pias %s ms, ratio %s" % (
            _f(t["panda_p99_ms"]), _f(t["pias_p99_ms"]),
            _check_str(t["check"]))
    if tid == "panda_p99_vs_fq":
        return "panda %s ms, fq_codel %s ms, ratio %s" % (
            _f(t["panda_p99_ms"]), _f(t["fq_p99_ms"]),
            _check_str(t["check"]))
    if tid == "fq_codel_small_vs_pias":
        return "fq_codel %s ms, pias %s ms, ratio %s" % (
            _f(t["mean_fct_ms"]["fq_codel"]), _f(t["mean_fct_ms"]["pias"]),
            _check_str(t["check"]))
    if tid == "panda_mc_level0":
        lv = t["levels"] or {}
        return "%s at level 0 (packets per level: %s); off level 0 %s" % (
            "-" if t["share"] is None else "%.1f%%" % (100 * t["share"]),
            " ".join("%s:%d" % kv for kv in sorted(lv.items())) or "-",
            _check_str(t["check"]))
    if tid == "p99_order":
        return ", ".join("%s %s" % (s, _f(v)) for s, v in
                         t["p99_ms"].items()) + " ms; " + "; ".join(
            "%s %s" % (k, _check_str(c)) for k, c in t["checks"].items())
    if tid.startswith("fct_"):
        return "panda %s ms, pias %s ms, ratio %s" % (
            _f(t["mean_fct_ms"]["panda"]), _f(t["mean_fct_ms"]["pias"]),
            _check_str(t["check"]))
    if tid == "per_flow_factor":
        return "; ".join("%s: %s" % (k, ", ".join(
            "%s %s %s" % (m, stats.fmt(e["estimate"]),
                          stats.fmt_ci(e["ci95"])) if e else "%s -" % m
            for m, e in v.items() if m != "variable"))
            for k, v in t["ratios"].items()) or "(schemes not run)"
    parts = []
    for s, v in (t.get("schemes") or {}).items():
        parts.append("%s: %s" % (s, ", ".join(
            _named(k, x) for k, x in v.items())))
    for k, c in (t.get("checks") or {}).items():
        parts.append("%s: %s" % (k, _check_str(c)))
    return "; ".join(parts) or "(schemes not run)"


def _f(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    return "%.*f" % (digits, v)


def _named(key, v):
    """A figure named 'key' for the text: a count (a name without a unit:
    marks, drops, completed) as an integer where its mean is whole -
    "marks 141301", not "141301.00"; a time or share with decimals."""
    if isinstance(v, float) and v.is_integer() and not key.endswith(
            ("_ms", "_s", "share", "_mbps", "ratio")):
        return "%s %d" % (key, v)
    return "%s %s" % (key, _f(v))

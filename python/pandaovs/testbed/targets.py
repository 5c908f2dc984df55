"""The latency floor of a run and issue 13's targets, measured in the same
run (summary.floor, summary.floor_ms, summary.targets).

floor_ms = p99 of the unloaded memcached trial (experiments.py, "floor")
+ one full frame serialised at the link rate: the best a loaded
top-priority memcached connection can do is the unloaded latency plus the
MTU packet that may have just started to leave ahead of it.

The targets compare the schemes' aggregated rows (report.aggregate) at the
point where every scheme ran: the (a) concurrency and the largest (a)
request count (quick: 14 flows, 10000 requests).  Each is a measurement
with a verdict ("met": True/False, None when a scheme it needs did not
run), printed and stored; none of them fails the run (they are targets of
the scheduler, not properties of the harness: tests/system checks only
the robust orderings)."""

from .experiments import MODES
from .schemes import FRAME

P99_VS_FLOOR = 1.1          # panda p99 <= 1.1 x floor_ms
LEVEL0_SHARE = 0.95         # panda keeps >= 95% of memcached's packets at
                            # level 0 (issue 19, every shipped workload)
FCT_TOLERANCE = 0.05        # panda small/medium mean FCT within 5% of pias


def _mean(stat):
    return stat["mean"] if stat else None


def _drops(egress):
    """Packets the egress lost, mean per trial: arrivals refused and held
    packets pushed out for a higher level's alike (None if not counted)."""
    vals = [_mean(egress.get(k)) for k in ("drop-limit", "drop-push-out")]
    vals = [v for v in vals if v is not None]
    return sum(vals) if vals else None


def floor(rows, rate_bps):
    """{cc: {"unloaded_p99_ms", "frame_ms", "floor_ms", "requests"}} from
    the floor rows (concurrency 0).  With repetitions, the unloaded p99 is
    the trimmed mean over the repetitions' floors, as a loaded row's is
    over the same seeds (experiments.py: a floor per repetition)."""
    out = {}
    frame_ms = FRAME * 8 / rate_bps * 1000
    for r in rows:
        if "floor" not in r["experiments"]:
            continue
        p99 = _mean(r["memcached"]["p99_ms"])
        out[r["cc"]] = {
            "unloaded_p99_ms": p99, "frame_ms": frame_ms,
            "frame_bytes": FRAME, "requests": r["requests"],
            "floor_ms": None if p99 is None else p99 + frame_ms}
    return out


def _point(mode):
    m = MODES[mode]
    return m["a_concurrency"], max(m["a_requests"])


def _target(tid, what, met, **values):
    return dict({"id": tid, "what": what, "met": met}, **values)


def evaluate(rows, floors, mode):
    """The targets, per congestion control that has a floor."""
    conc, req = _point(mode)
    out = []
    for cc, fl in sorted(floors.items()):
        at = {r["scheme"]: r for r in rows if r["cc"] == cc
              and r["concurrency"] == conc and r["requests"] == req
              and r["reps_ok"]}
        out += _evaluate_cc(cc, at, fl["floor_ms"], conc, req)
    return out


def _p99(at, scheme):
    return _mean(at[scheme]["memcached"]["p99_ms"]) if scheme in at else None


def _evaluate_cc(cc, at, floor_ms, conc, req):
    where = {"cc": cc, "concurrency": conc, "requests": req}
    res = []
    panda, fq = _p99(at, "panda"), _p99(at, "fq")
    ratio = panda / floor_ms if panda is not None and floor_ms else None
    res.append(_target(
        "panda_p99_vs_floor", "panda memcached p99 <= %.1f x floor_ms"
        % P99_VS_FLOOR, None if ratio is None else ratio <= P99_VS_FLOOR,
        panda_p99_ms=panda, floor_ms=floor_ms, ratio=ratio, **where))
    res.append(_target(
        "panda_p99_vs_fq", "panda memcached p99 <= fq's",
        None if panda is None or fq is None else panda <= fq,
        panda_p99_ms=panda, fq_p99_ms=fq, **where))
    share = (at["panda"].get("memcached_level0_share") if "panda" in at
             else None)
    res.append(_target(
        "panda_mc_level0", "panda keeps >= %d%% of the memcached "
        "connection's packets at level 0" % (LEVEL0_SHARE * 100),
        None if share is None else share >= LEVEL0_SHARE,
        share=share, levels=at["panda"]["memcached_levels"]
        if "panda" in at else None, **where))
    order = {s: _p99(at, s) for s in ("fifo", "pias", "panda")}
    res.append(_target(
        "p99_order", "memcached p99: fifo > pias > panda",
        None if None in order.values()
        else order["fifo"] > order["pias"] > order["panda"],
        p99_ms=order, **where))
    for b in ("small", "medium"):
        fct = {s: _mean(at[s]["fct_mean_ms"].get(b)) if s in at else None
               for s in ("pias", "panda")}
        r = (fct["panda"] / fct["pias"]
             if None not in fct.values() and fct["pias"] else None)
        res.append(_target(
            "fct_%s_vs_pias" % b, "%s flows' mean FCT of panda within "
            "+-%d%% of pias" % (b, FCT_TOLERANCE * 100),
            None if r is None else abs(r - 1) <= FCT_TOLERANCE,
            mean_fct_ms=fct, ratio=r, **where))
    pias = _p99(at, "pias")
    res.append(_target(
        "panda_p99_vs_pias", "panda memcached p99 < pias's",
        None if panda is None or pias is None else panda < pias,
        panda_p99_ms=panda, pias_p99_ms=pias, **where))
    res.append(_large_flows(at, where))
    res.append(_ecn(at, where))
    if "panda-w1" in at:
        res.append(_weights(at, where))
    return res


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
    """Size-interval weights (panda) against all ones (panda-w1), same run
    (issue 18): the flows must sink at least as fast in bytes (no larger a
    share of the bytes at level 0, no lower a mean level) and the memcached
    connection stay at level 0 as it does without weights: its level-0
    share at least all ones' (to one packet in a thousand) and at least
    panda_mc_level0's 95%.  Not "every packet": the same few packets leave
    level 0 under both (counter excursions beyond those the collection
    sampled, weights or not: 6 of 10742 in both schemes of the run that
    showed it), and what the weights must not do is add to them."""
    vals = {s: dict(sinking(at[s].get("bytes_per_level")) or {},
                    memcached_level0_share=at[s].get("memcached_level0_share"),
                    memcached_p99_ms=_p99(at, s))
            for s in ("panda", "panda-w1") if s in at}
    met = None
    if len(vals) == 2 and all("mean_level" in v for v in vals.values()):
        w, o = vals["panda"], vals["panda-w1"]
        wm, om = w["memcached_level0_share"], o["memcached_level0_share"]
        met = (w["level0_share"] <= o["level0_share"]
               and w["mean_level"] >= o["mean_level"]
               and wm is not None and om is not None
               and wm >= om - 0.001 and wm >= LEVEL0_SHARE)
    return _target("weights_vs_all_ones", "size-interval weights (panda) "
                   "against all ones (panda-w1): bytes sink at least as "
                   "fast, memcached stays at level 0", met, schemes=vals,
                   **where)


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
                   None, schemes=vals, **where)


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
    met = None
    if len(vals) == 2 and None not in (
            vals["panda"]["retrans_segs"], vals["panda"]["small_p99_fct_ms"],
            vals["panda-droptail"]["retrans_segs"],
            vals["panda-droptail"]["small_p99_fct_ms"]):
        e, d = vals["panda"], vals["panda-droptail"]
        met = (e["retrans_segs"] < d["retrans_segs"]
               and e["small_p99_fct_ms"] < d["small_p99_fct_ms"])
    return _target("ecn_vs_droptail", "port ECN (panda) against drop-tail "
                   "(panda-droptail): sender retransmissions and small-flow "
                   "p99 FCT fall", met, schemes=vals, **where)


def lines(summary):
    """The targets as text for the run's closing table."""
    out = []
    for cc, fl in sorted((summary.get("floor") or {}).items()):
        out.append("floor (%s): %s ms = unloaded memcached p99 %s ms + one "
                   "%d-byte frame at the link rate %.3f ms" % (
                       cc, _f(fl["floor_ms"]), _f(fl["unloaded_p99_ms"]),
                       fl["frame_bytes"], fl["frame_ms"]))
    for t in summary.get("targets") or []:
        verdict = {True: "met", False: "NOT met", None: "-"}[t["met"]]
        out.append("target %-20s %-7s %s: %s" % (
            t["id"], verdict, t["what"], _values(t)))
    return out


def _values(t):
    if t["id"] == "panda_p99_vs_floor":
        return "panda %s ms, floor %s ms, %sx" % (
            _f(t["panda_p99_ms"]), _f(t["floor_ms"]), _f(t["ratio"]))
    if t["id"] == "panda_p99_vs_pias":
        return "panda %s ms, pias %s ms" % (_f(t["panda_p99_ms"]),
                                            _f(t["pias_p99_ms"]))
    if t["id"] == "panda_p99_vs_fq":
        return "panda %s ms, fq %s ms" % (_f(t["panda_p99_ms"]),
                                          _f(t["fq_p99_ms"]))
    if t["id"] == "panda_mc_level0":
        lv = t["levels"] or {}
        return "%s at level 0 (packets per level: %s)" % (
            "-" if t["share"] is None else "%.1f%%" % (100 * t["share"]),
            " ".join("%s:%d" % kv for kv in sorted(lv.items())) or "-")
    if t["id"] == "p99_order":
        return ", ".join("%s %s" % (s, _f(v)) for s, v in
                         t["p99_ms"].items()) + " ms"
    if t["id"].startswith("fct_"):
        return "panda %s ms, pias %s ms, ratio %s" % (
            _f(t["mean_fct_ms"]["panda"]), _f(t["mean_fct_ms"]["pias"]),
            _f(t["ratio"], 3))
    parts = []
    for s, v in t["schemes"].items():
        parts.append("%s: %s" % (s, ", ".join(
            "%s %s" % (k, _f(x)) for k, x in v.items())))
    return "; ".join(parts) or "(schemes not run)"


def _f(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    return "%.*f" % (digits, v)

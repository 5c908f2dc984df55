"""Thesis stage 2 (offline modelling): tools/panda-model turns the packet
sizes recorded in stage 1 (FLT = memcached, FHT = the workload's flows,
sending side) plus the workload's flow-size CDF and the load into Panda's T
and thresholds, and the PIAS baseline from the same CDF and load.

A policy record is {"panda": {...}, "pias": {...}}, each with "action" (the
policy text) and, from a model run, "model" (panda-model's JSON) and
"command"; policies() turns it into pandaovs.policy.Policy objects (their
ids and DSCP maps come from the policies themselves)."""

import collections
import json
import os

from pandaovs.modeltool import (  # noqa: F401
    ModelToolError, load_policy, run_model)
from pandaovs.policy import Policy, PolicyError
from ..lab import FG_PORT, MEMCACHED_PORT
from . import pcap
from .topology import PM2_IP

# The ids panda-model is asked to write (--id): two policies, two
# connection tables in the switch.  A profile with size-interval weights
# adds a third, Panda with all weights 1 (scheme panda-w1), so that the
# weights are compared with the thesis's all-ones in the same run.
MODEL_IDS = {"panda": 1, "pias": 2}
ALL_ONES = "panda-w1"
# Units of Panda's thresholds with weights (run_model): the weighted
# counter's, C modelled ("counter") or measured under all ones
# ("counter-w1"), or the CDF's bytes.
THRESHOLD_UNITS = ("counter", "counter-w1", "bytes")
ALL_ONES_ID = 3


# The model tool's error (one class: a failed run, a bad policy record).
ModelError = ModelToolError


def sample_summary(path, port):
    """Payload-size summary of the data packets of one capture."""
    sizes = collections.Counter()
    conns = set()
    for p in pcap.tcp_packets(path):
        if p["src"] != PM2_IP or p["sport"] != port or p["payload"] == 0:
            continue
        sizes[p["payload"]] += 1
        conns.add(p["dport"])
    n = sum(sizes.values())
    if not n:
        return {"packets": 0}
    ordered = sorted(sizes.items())

    def pct(q):
        need = q * n
        acc = 0
        for s, c in ordered:
            acc += c
            if acc >= need:
                return s
        return ordered[-1][0]
    return {"packets": n, "connections": len(conns),
            "bytes": sum(s * c for s, c in ordered),
            "mean_payload": sum(s * c for s, c in ordered) / n,
            "p10_payload": pct(0.10), "p50_payload": pct(0.50),
            "p90_payload": pct(0.90), "max_payload": ordered[-1][0],
            "share_below_1000": sum(c for s, c in ordered if s < 1000) / n}


def make_policies(build, flt_pcap, fht_pcap, cdf, load, levels, outdir,
                  flt_level0=0.99, flt_bound="floor", weights=None,
                  threshold_units="counter", counter_fht=None,
                  log=None):
    """Runs panda-model for Panda and PIAS on the flow-size CDF 'cdf' (the
    run's workload); returns the policy record.  'flt_level0', 'flt_bound':
    the Panda policy makes room for the memcached counter's excursions in
    the FLT capture (a floor, or a higher alpha_1), so that this share of
    its packets stay at level 0 (panda-model --flt-level0, --flt-bound;
    tools/README-panda-model.md).  'weights': panda-model --weight-values
    for Panda (None: all ones); with weights the record also holds
    ALL_ONES, the same model without them.  'threshold_units' (with
    weights): "counter", the thresholds in the weighted counter's units
    (panda-model --counter-thresholds), or "bytes" (--byte-thresholds);
    the record's "threshold_units" says which, and "counter_thresholds"
    holds the model's mapping (C(alpha) / alpha per threshold).
    "counter-w1" is "counter" with C measured in 'counter_fht' (a capture
    of the flows under the all-ones policy, panda-model --counter-fht)
    instead of the window model, once that capture exists."""
    if weights and threshold_units not in THRESHOLD_UNITS:
        raise ModelError("threshold units %r: expected one of %s"
                         % (threshold_units, ", ".join(THRESHOLD_UNITS)))
    log = log or (lambda m: None)
    try:
        tool = build.tool("panda-model")
    except RuntimeError as e:
        raise ModelError(str(e))
    common = dict(cdf=cdf, load=load, levels=levels)

    def panda(pid, extra):
        return dict(
            id=pid, flt=flt_pcap,
            flt_filter="src host %s and tcp src port %d" % (PM2_IP,
                                                            MEMCACHED_PORT),
            fht=fht_pcap,
            fht_filter="src host %s and tcp src port %d" % (PM2_IP, FG_PORT),
            flt_level0=flt_level0, flt_bound=flt_bound, **extra, **common)
    runs = {
        # Not eq. 3-24's mapping by each class's eta: computed from the
        # collection's sizes it raises the thresholds as much as the
        # weights raise an average flow's counter, so the weights only
        # reorder flows within a class.  "bytes" keeps the CDF's bytes:
        # every weight above 1 sinks a flow sooner than all ones, but a
        # medium flow sending super-packets then sinks ~7x too soon, with
        # the large ones (1.7-3x pias's medium FCT, docs/results/2026-11-
        # 23-full-reduced-10g).  "counter" maps the thresholds below the
        # large class to the counter a TSO flow reaches after that many
        # bytes (tools/README-panda-model.md, "Thresholds in counter
        # units").  memcached's bound (--flt-level0) is computed with the
        # weights either way.
        "panda": panda(MODEL_IDS["panda"], dict(
            weight_values=weights,
            byte_thresholds=threshold_units == "bytes",
            counter_thresholds=threshold_units != "bytes",
            counter_fht=counter_fht
            if threshold_units == "counter-w1" else None)
            if weights else {}),
        "pias": dict(pias=True, id=MODEL_IDS["pias"], **common),
    }
    if weights:
        runs[ALL_ONES] = panda(ALL_ONES_ID, {})
    out, warnings = run_model(tool, runs, outdir)
    for name in runs:
        if warnings[name]:
            raise ModelError("panda-model (%s): %s"
                             % (name, warnings[name][0]))
        log("  %s policy: %s" % (name, out[name]["action"]))
    bound = (out["panda"]["model"].get("model", {}).get("alpha") or {}).get(
        "flt_bound")
    if bound:
        log("  memcached counter (replayed over the FLT capture): %g%% of "
            "its packets at or below %d, max %d; %s bound %s; predicted at "
            "level 0: %.1f%%%s" % (
                100 * bound["flt_level0"], bound["counter_quantile"],
                bound["counter_max"], bound["bound"],
                "active" if bound["active"] else "not needed",
                100 * bound["flt_level0_share"],
                " (%.1f%% without)" % (100 * bound["flt_level0_share_free"])
                if bound["active"] else ""))
    alpha = out["panda"]["model"].get("model", {}).get("alpha") or {}
    out["threshold_units"] = (threshold_units if weights else "bytes")
    mapping = alpha.get("counter_thresholds")
    if mapping:
        out["counter_thresholds"] = mapping
        if mapping.get("source") == "measured":
            how = "measured: median of the captured connections, %s " \
                "of them per threshold" % "/".join(
                    str(n) for n in mapping.get("flows", []))
        else:
            how = "TSO flow, window %d up to %d bytes" % (
                mapping["initial_window"], mapping["tso_max"])
        log("  thresholds in counter units: C(alpha) / alpha = %s (%s)" % (
            "/".join("%.2f" % r for r in mapping["counter_per_byte"]), how))
    return out


def policies(record, where="policy"):
    """{"panda": Policy, "pias": Policy[, ALL_ONES: Policy]} of a policy
    record."""
    out = {}
    for s in list(MODEL_IDS) + ([ALL_ONES] if ALL_ONES in record else []):
        try:
            out[s] = Policy.from_text(record[s]["action"])
        except PolicyError as e:
            raise ModelError("%s: %s.action: %s" % (where, s, e))
    return out

"""Marking policies for the simulator, made the thesis's way (Fig. 3.1):
collection (a FIFO run of the same point writes the sizes of the segments
its hosts send: flt.hist for the memcached-like responses, fht.hist for
the flows), modelling (tools/panda-model on those histograms, the flow-size
CDF and the load, through pandaovs.modeltool), online classification (the
other schemes run with the result).

A policy file has the testbed's format, {"panda": {"action": ...},
"pias": {"action": ...}}, so a testbed run's policy.json can drive the
simulator and the other way round (modeltool.load_policy reads both).
"""

import json
import os

from pandaovs.modeltool import (  # noqa: F401
    ModelToolError, load_policy, run_model)

# The simulator's TCP segments: 1448 bytes of payload, 52 bytes of TCP
# (with the timestamp option) and IPv4 headers.
MSS = 1448
HEADER_LEN = 52
PANDA_ID, PIAS_ID = 1, 2


def make_policies(build_dir, collect_dir, cdf, load, out_dir, levels=8,
                  flt_ordered=False, panda_options=None):
    """Runs panda-model for Panda (on collect_dir's histograms) and PIAS;
    writes out_dir/policy.json and returns its content.  'flt_ordered':
    the FLT input is the collection's flt.pcap (its segments in sending
    order) instead of flt.hist, so that panda-model replays the FLT's
    counter and makes room for its excursions (--flt-level0, default 0.99)
    as the testbed's model does over its capture; without it the FLT
    input has no order and the policy has no such room.
    'panda_options': more panda-model options for the Panda policy, as
    modeltool.command() takes them (e.g. {"flt_bound": "level"})."""
    flt = os.path.join(collect_dir, "flt.pcap" if flt_ordered
                       else "flt.hist")
    fht = os.path.join(collect_dir, "fht.hist")
    for f in (flt, fht):
        if not os.path.exists(f):
            raise ModelToolError("no collection in %s (%s missing)"
                                 % (collect_dir, os.path.basename(f)))
    common = dict(cdf=cdf, load=load, levels=levels, mss=MSS,
                  header_len=HEADER_LEN, quiet=True)
    record, _ = run_model(
        os.path.join(build_dir, "tools", "panda-model"),
        {"panda": dict(id=PANDA_ID, flt=flt, fht=fht,
                       **dict(panda_options or {}), **common),
         "pias": dict(pias=True, id=PIAS_ID, **common)}, out_dir)
    doc = {kind: {"action": r["action"], "command": r["command"]}
           for kind, r in record.items()}
    bound = ((record["panda"].get("model") or {}).get("model", {})
             .get("alpha") or {}).get("flt_bound")
    if bound:
        doc["panda"]["flt_bound"] = bound
    with open(os.path.join(out_dir, "policy.json"), "w") as f:
        json.dump(doc, f, indent=2)
    return doc

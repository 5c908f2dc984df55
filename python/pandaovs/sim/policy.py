"""Marking policies for the simulator, made the thesis's way (Fig. 3.1):
collection (a FIFO run of the same point writes the sizes of the segments
its hosts send: flt.hist for the memcached-like responses, fht.hist for
the flows), modelling (tools/panda-model on those histograms, the flow-size
CDF and the load), online classification (the other schemes run with the
result).

A policy file has the testbed's format, {"panda": {"action": ...},
"pias": {"action": ...}}, so a testbed run's policy.json can drive the
simulator and the other way round.
"""

import json
import os

from .. import modeltool
from ..modeltool import ModelToolError

# The simulator's TCP segments: 1448 bytes of payload, 52 bytes of TCP
# (with the timestamp option) and IPv4 headers.
MSS = 1448
HEADER_LEN = 52
PANDA_ID, PIAS_ID = 1, 2


class PolicyError(Exception):
    pass


def run_model(build_dir, collect_dir, cdf, load, out_dir, levels=8):
    """Runs panda-model for Panda (on collect_dir's histograms) and PIAS;
    writes out_dir/policy.json and returns its content."""
    tool = os.path.join(build_dir, "tools", "panda-model")
    if not os.access(tool, os.X_OK):
        raise PolicyError("%s is not built (run ./build.sh)" % tool)
    flt = os.path.join(collect_dir, "flt.hist")
    fht = os.path.join(collect_dir, "fht.hist")
    for f in (flt, fht):
        if not os.path.exists(f):
            raise PolicyError("no collection in %s (%s missing)"
                              % (collect_dir, os.path.basename(f)))
    os.makedirs(out_dir, exist_ok=True)
    common = ["--cdf", cdf, "--load", str(load), "--levels", str(levels),
              "--mss", str(MSS), "--header-len", str(HEADER_LEN)]
    cmds = {
        "panda": [tool, "--id", str(PANDA_ID), "--flt", flt, "--fht", fht,
                  "-q", "-o", os.path.join(out_dir, "panda-policy.json")]
        + common,
        "pias": [tool, "--pias", "--id", str(PIAS_ID), "-q",
                 "-o", os.path.join(out_dir, "pias-policy.json")] + common,
    }
    out_json = {kind: cmd[cmd.index("-o") + 1] for kind, cmd in cmds.items()}
    try:
        record, _ = modeltool.run(cmds, out_json)
    except ModelToolError as e:
        raise PolicyError(str(e))
    doc = {kind: {"action": r["action"], "command": r["command"]}
           for kind, r in record.items()}
    with open(os.path.join(out_dir, "policy.json"), "w") as f:
        json.dump(doc, f, indent=2)
    return doc


def load_policy(path):
    """Reads a policy file: {"panda": {"action"}, "pias": {"action"}} (a
    testbed or simulator policy.json)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise PolicyError("policy %s: %s" % (path, e))
    for kind in ("panda", "pias"):
        if not isinstance(doc.get(kind), dict) or not doc[kind].get("action"):
            raise PolicyError("policy %s: no %s.action (expected a testbed "
                              "or simulator policy.json)" % (path, kind))
    return doc

"""Thesis stage 2 (offline modelling): tools/panda-model turns the packet
sizes recorded in stage 1 (FLT = memcached, FHT = web-search, sending side)
plus the web-search flow-size CDF and the load into Panda's T and
thresholds, and the PIAS baseline from the same CDF and load."""

import collections
import json
import os
import subprocess

from . import pcap
from .topology import FG_PORT, MEMCACHED_PORT, PM2_IP
from .trial import WEB_SEARCH_CDF

PANDA_ID = 1
PIAS_ID = 2


class ModelError(RuntimeError):
    pass


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


def run_model(build, flt_pcap, fht_pcap, load, levels, outdir, log=None):
    """Runs panda-model for Panda and PIAS; returns the policy record."""
    log = log or (lambda m: None)
    tool = os.path.join(build, "tools", "panda-model")
    if not os.access(tool, os.X_OK):
        raise ModelError("%s is not built" % tool)
    common = ["--cdf", WEB_SEARCH_CDF, "--load", str(load),
              "--levels", str(levels)]
    panda_json = os.path.join(outdir, "panda-policy.json")
    pias_json = os.path.join(outdir, "pias-policy.json")
    cmds = {
        "panda": [tool, "--id", str(PANDA_ID),
                  "--flt", flt_pcap, "--flt-filter",
                  "src host %s and tcp src port %d" % (PM2_IP,
                                                       MEMCACHED_PORT),
                  "--fht", fht_pcap, "--fht-filter",
                  "src host %s and tcp src port %d" % (PM2_IP, FG_PORT),
                  "-o", panda_json] + common,
        "pias": [tool, "--pias", "--id", str(PIAS_ID), "-o", pias_json]
        + common,
    }
    out = {}
    for name, cmd in cmds.items():
        res = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=600)
        if res.returncode:
            raise ModelError("panda-model (%s) failed: %s"
                             % (name, (res.stderr or res.stdout).strip()))
        path = panda_json if name == "panda" else pias_json
        with open(path) as f:
            doc = json.load(f)
        action = doc.get("action")
        if not action:
            raise ModelError("panda-model (%s) wrote no \"action\" in %s"
                             % (name, path))
        out[name] = {"action": action, "model": doc,
                     "command": " ".join(cmd)}
        log("  %s policy: %s" % (name, action))
    return out


def load_policy(path):
    """Reads a saved policy (a run's policy.json, or a panda-model output
    for Panda).  Returns {"panda": {...}, "pias": {...}}."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ModelError("--policy %s: %s" % (path, e))
    if "panda" in doc and "action" in doc["panda"]:
        if "pias" not in doc or "action" not in doc.get("pias", {}):
            raise ModelError("--policy %s: no pias.action" % path)
        return doc
    raise ModelError("--policy %s: expected a testbed policy.json with "
                     "panda.action and pias.action" % path)


def dscp_map(action, levels):
    """Per-level DSCP of a policy action string (default level i -> i+1)."""
    for part in action.split(","):
        if part.startswith("dscp="):
            return [int(x) for x in part[5:].split("/")]
    return [i + 1 for i in range(levels)]


def policy_levels(action):
    for part in action.split(","):
        if part.startswith("thresholds="):
            return len(part.split("=")[1].split("/")) + 1
    return 1

"""Where a trial's memcached latency and its small flows' FCT come from,
read from the files a testbed run keeps (no root, nothing re-run):

    /usr/bin/python3 -m pandalab.testbed.anatomy RUN_DIR [--json FILE]

For every loaded trial with a capture of the memcached responses at PM1
(trials/*/mc-rx.pcap):

* the responses of the measured connection, one per request (the packets
  that acknowledge the same request bytes: the responder's ACK number
  moves with each request).  The client asks again as soon as a response
  is complete (closed loop, one connection), so a request's latency is
  the time from the previous response's last packet to its own last one,
  less the client's turn-around: the reconstruction gives the p50 and p99
  that panda-mc-client measured within a few percent (both are printed).
  Each latency splits into the *wait* (previous response's last packet to
  this one's first: client, request path, server) and the *span* (first
  to last packet of the response: how the response itself crossed the
  bottleneck).  Reported: the share of the response packets that arrived
  CE-marked (the port's ECN threshold marked them), the wait and span of
  the slowest 1% of requests, and the latency and span of the largest 1%
  of responses (the value-size tail, which sets the unloaded p99);
* the small flows of the FCT window (trials/*/flows.txt) split by
  whether they started while the memcached client was running or after
  it was done: the closed-loop client asks as fast as it is answered, so
  the memcached load the flows share the link with depends on the scheme
  (on top under Panda, demoted under PIAS);
* panda's small flows against pias's, flow by flow: repetition r of every
  scheme draws the same flow sizes in the same order (seed + r), so flow
  i has the same size in both trials, and the geometric mean of the FCT
  ratios of the pairs compares the schemes without the sizes' spread;
  split by whether the flow started while panda's memcached client ran.
"""

import collections
import json
import math
import os
import sys

from pandaovs import cli
from ..lab import MEMCACHED_PORT
from . import pcap
from . import stats

SMALL = 100000          # The small bucket's upper bound (thesis §4.4).


def responses(path):
    """[{"t0", "t1", "bytes", "packets", "ce", "dscps"}] of the measured
    memcached connection in capture 'path' (the one seen last: the client
    stores its keys on a connection of its own first), in order."""
    per_conn = collections.defaultdict(list)
    first = {}
    for p in pcap.tcp_packets(path):
        if p["sport"] != MEMCACHED_PORT or p["payload"] == 0:
            continue
        first.setdefault(p["dport"], p["ts"])
        per_conn[p["dport"]].append(p)
    if not first:
        return []
    out, cur = [], None
    for p in per_conn[max(first, key=lambda port: first[port])]:
        if cur is None or p["ack"] != cur["ack"]:
            cur = {"ack": p["ack"], "t0": p["ts"], "t1": p["ts"], "bytes": 0,
                   "packets": 0, "ce": 0, "dscps": collections.Counter()}
            out.append(cur)
        cur["t1"] = p["ts"]
        cur["bytes"] += p["payload"]
        cur["packets"] += 1
        cur["ce"] += p["ecn"] == 3
        cur["dscps"][p["dscp"]] += 1
    return out


def _q(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else None


def _mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def memcached(path):
    """The memcached figures of one trial's capture (module doc)."""
    rs = responses(path)
    if len(rs) < 100:
        return None
    req = [{"lat": (b["t1"] - a["t1"]) * 1e3,
            "wait": (b["t0"] - a["t1"]) * 1e3,
            "span": (b["t1"] - b["t0"]) * 1e3, "bytes": b["bytes"],
            "top_dscp": b["dscps"].get(min(b["dscps"]), 0) == b["packets"]}
           for a, b in zip(rs, rs[1:])]
    n = len(req)
    slow = sorted(req, key=lambda r: r["lat"])[int(0.99 * n):]
    large = sorted(req, key=lambda r: r["bytes"])[int(0.99 * n):]
    packets = sum(r["packets"] for r in rs)
    return {
        "responses": n,
        "p50_ms": _q([r["lat"] for r in req], 0.50),
        "p99_ms": _q([r["lat"] for r in req], 0.99),
        "ce_share": sum(r["ce"] for r in rs) / packets,
        "slowest_1pct": {
            "latency_mean_ms": _mean(r["lat"] for r in slow),
            "wait_mean_ms": _mean(r["wait"] for r in slow),
            "span_mean_ms": _mean(r["span"] for r in slow),
            "bytes_mean": _mean(r["bytes"] for r in slow),
            "responses_all_at_one_dscp": sum(r["top_dscp"] for r in slow)},
        "largest_1pct": {
            "bytes_mean": _mean(r["bytes"] for r in large),
            "latency_p50_ms": _q([r["lat"] for r in large], 0.5),
            "span_p50_ms": _q([r["span"] for r in large], 0.5)},
        "median_wait_ms": _q([r["wait"] for r in req], 0.5),
    }


def small_flows(trial, trial_dir):
    """The FCT window's small flows split by memcached's run (module
    doc), or None without the files."""
    path = os.path.join(trial_dir, "flows.txt")
    win, ov = trial.get("fct_window"), trial.get("overlap") or {}
    if not (win and ov.get("memcached_window") and os.path.exists(path)):
        return None
    w0, w1 = win["start"], win["start"] + win["seconds"]
    m0, m1 = ov["memcached_window"]
    parts = {"during": [], "after": [], "all": []}
    with open(path) as f:
        for line in f:
            c = line.split()
            if not c or c[0].startswith("#") or c[6] != "1":
                continue
            size, start, fct = int(c[1]), float(c[2]), float(c[4]) / 1e3
            if size > SMALL or not w0 <= start <= w1:
                continue
            parts["all"].append(fct)
            if m0 <= start <= m1:
                parts["during"].append(fct)
            elif start > m1:
                parts["after"].append(fct)
    return {"memcached_run_s": m1 - m0,
            **{k: {"flows": len(v), "mean_fct_ms": _mean(v)}
               for k, v in parts.items()}}


def _small_window_flows(trial, trial_dir):
    """{flow id: (start - window start, FCT ms)} of the FCT window's
    completed small flows, and the window's (memcached start, end)
    relative to it; None without the files."""
    path = os.path.join(trial_dir, "flows.txt")
    win, ov = trial.get("fct_window"), trial.get("overlap") or {}
    if not (win and ov.get("memcached_window") and os.path.exists(path)):
        return None
    w0 = win["start"]
    out = {}
    with open(path) as f:
        for line in f:
            c = line.split()
            if not c or c[0].startswith("#") or c[6] != "1":
                continue
            start = float(c[2]) - w0
            if int(c[1]) <= SMALL and 0 <= start <= win["seconds"]:
                out[int(c[0])] = (start, float(c[4]) / 1e3)
    m0, m1 = ov["memcached_window"]
    return out, (m0 - w0, m1 - w0)


def paired(run_dir, result, a="panda", b="pias"):
    """Scheme 'a''s small flows against 'b''s of the same repetition,
    flow by flow (module doc): {cc/rep: {"all", "during", "after":
    {"pairs", "geo_ratio"}}}."""
    trials = {}
    for t in result.get("trials", []):
        if t.get("status") == "ok" and t.get("dir") and \
                t["scheme"] in (a, b) and t["concurrency"] > 0:
            d = os.path.join(run_dir, "trials", os.path.basename(t["dir"]))
            trials[(t["cc"], t.get("rep", 0), t["concurrency"],
                    t["scheme"])] = _small_window_flows(t, d)
    out = {}
    for (cc, rep, conc, s), fa in trials.items():
        fb = trials.get((cc, rep, conc, b))
        if s != a or not fa or not fb:
            continue
        (flows_a, (m0, m1)), (flows_b, _) = fa, fb
        parts = {"all": [], "during": [], "after": []}
        for i, (start, fct) in flows_a.items():
            if i not in flows_b or fct <= 0 or flows_b[i][1] <= 0:
                continue
            lr = math.log(fct / flows_b[i][1])
            parts["all"].append(lr)
            parts["during" if start <= m1 else "after"].append(lr)
        out["%s c%d rep%d" % (cc, conc, rep + 1)] = {
            k: _geo(v) for k, v in parts.items()}
    return out


def _geo(logs):
    """{"pairs", "geo_ratio", "ci95"} of log ratios: their geometric mean
    and the t interval of the mean log, back-transformed (the pairs of
    one trial share its conditions, so the interval is the pairs' spread
    in that one repetition, not a repetition's)."""
    n = len(logs)
    if not n:
        return {"pairs": 0, "geo_ratio": None, "ci95": None}
    m = sum(logs) / n
    if n < 2:
        return {"pairs": n, "geo_ratio": math.exp(m), "ci95": None}
    sd = math.sqrt(sum((x - m) ** 2 for x in logs) / (n - 1))
    hw = stats._t(n - 1) * sd / math.sqrt(n)
    return {"pairs": n, "geo_ratio": math.exp(m),
            "ci95": [math.exp(m - hw), math.exp(m + hw)]}


def analyse(run_dir):
    """{scheme/cc/rep: figures} of the run's loaded trials (and its floor
    trials' memcached figures)."""
    with open(os.path.join(run_dir, "result.json")) as f:
        result = json.load(f)
    out = {}
    for t in result.get("trials", []):
        if t.get("status") != "ok" or not t.get("dir"):
            continue
        d = os.path.join(run_dir, "trials", os.path.basename(t["dir"]))
        key = "%s %s c%d rep%d" % (t["cc"], t["scheme"], t["concurrency"],
                                   t.get("rep", 0) + 1)
        cap = os.path.join(d, "mc-rx.pcap")
        rec = {"memcached_p99_ms_measured":
               (t.get("memcached") or {}).get("p99_ms"),
               "memcached": memcached(cap) if os.path.exists(cap) else None,
               "small_flows": small_flows(t, d)}
        out[key] = rec
    return {"run": os.path.abspath(run_dir),
            "loadavg_at_start": result.get("metadata", {}).get(
                "loadavg_at_start"),
            "trials": out,
            "panda_over_pias_small_flows": paired(run_dir, result)}


def _f(x, fmt="%.2f"):
    return fmt % x if x is not None else "-"


def text(doc):
    lines = ["%s (load average at start %s)" % (doc["run"],
                                                doc["loadavg_at_start"])]
    for key, r in doc["trials"].items():
        m, s = r["memcached"], r["small_flows"]
        if m:
            lines.append(
                "%-28s memcached p99 %s ms (client %s), CE on %s of its "
                "packets; slowest 1%%: wait %s + span %s ms, %s bytes; "
                "largest 1%% (%s bytes): latency %s, span %s ms" % (
                    key, _f(m["p99_ms"]), _f(r["memcached_p99_ms_measured"]),
                    _f(100 * m["ce_share"], "%.0f%%"),
                    _f(m["slowest_1pct"]["wait_mean_ms"]),
                    _f(m["slowest_1pct"]["span_mean_ms"]),
                    _f(m["slowest_1pct"]["bytes_mean"], "%.0f"),
                    _f(m["largest_1pct"]["bytes_mean"], "%.0f"),
                    _f(m["largest_1pct"]["latency_p50_ms"]),
                    _f(m["largest_1pct"]["span_p50_ms"])))
        if s:
            lines.append(
                "%-28s small flows %s ms (%d); started while memcached ran "
                "(%.1f s): %s ms (%d), after: %s ms (%d)" % (
                    "", _f(s["all"]["mean_fct_ms"]), s["all"]["flows"],
                    s["memcached_run_s"], _f(s["during"]["mean_fct_ms"]),
                    s["during"]["flows"], _f(s["after"]["mean_fct_ms"]),
                    s["after"]["flows"]))
    def ratio(r):
        ci = r["ci95"]
        return "%s%s (%d)" % (_f(r["geo_ratio"], "%.3f"),
                              " [%.3f, %.3f]" % tuple(ci) if ci else "",
                              r["pairs"])
    for key, p in doc.get("panda_over_pias_small_flows", {}).items():
        lines.append(
            "%-28s panda/pias small flows, flow by flow: %s; started "
            "while panda's memcached ran: %s, after: %s"
            % (key, ratio(p["all"]), ratio(p["during"]), ratio(p["after"])))
    return "\n".join(lines)


def main(argv=None):
    ap = cli.ArgumentParser(
        prog="python3 -m pandalab.testbed.anatomy",
        description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--json", help="write the figures here too")
    a = ap.parse_args(argv)
    try:
        doc = analyse(a.run_dir)
    except (OSError, ValueError, pcap.PcapError) as e:
        sys.exit("anatomy: %s" % e)
    print(text(doc))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

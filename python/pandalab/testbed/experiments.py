"""Experiment definitions (thesis ch. 5) and the trial plan.

(a) memcached p90/p99 vs number of requests, 14 flows of the workload
    (web-search by default, --workload) (Figs 5.1/5.2);
(b) memcached p90/p99 vs concurrency 1..20 for 100/2000/10000 requests
    (Figs 5.5/5.6);
(c) the flows' mean FCT per size bucket vs concurrency (Fig 5.10), from the
    load of the (b) trials.
floor: memcached unloaded (no flow of the workload), per congestion
    control at the start of each repetition: its p99 plus one MTU at the
    link rate is the latency floor the loaded schemes are measured against
    (summary.floor_ms).  Per repetition because a repetition's seed sets
    its memcached request sequence, and with it the value-size tail that
    makes the p99: in the first reference full run seed 3's loaded p99s
    were below seed 1's under every scheme and load (panda 0.48 against
    2.24 ms at 14 flows), so one floor (seed 1's) could not stand for
    the three repetitions.

A trial is (scheme, concurrency, requests, rep); trials shared by several
experiments run once.  Within one repetition the schemes of a point run
back to back, so slow drifts of the machine hit every scheme alike.

Modes: quick (one point, one repetition, short windows: a few minutes),
headline (the same point with the full run's warm-up and FCT window and
5 repetitions: the points the targets are decided on, with intervals
that can decide them, without the hours of the full sweep), full (every
point of (a), (b) and (c)).
"""

import itertools

MODES = {
    "quick": {
        "a_requests": [10000],
        "a_concurrency": 14,
        "b_concurrency": [],
        "b_requests": [],
        "c_concurrency": [14],
        "c_requests": 10000,
        "floor_requests": 10000,
        "reps": 1,
        "warmup_s": 3.0,
        "fct_window_s": 20.0,
        "fct_grace_s": 10.0,
        "goodput_check_s": 10.0,
        "ablations": True,
    },
    "headline": {
        "a_requests": [10000],
        "a_concurrency": 14,
        "b_concurrency": [],
        "b_requests": [],
        "c_concurrency": [14],
        "c_requests": 10000,
        "floor_requests": 10000,
        "reps": 5,
        "warmup_s": 5.0,
        "fct_window_s": 60.0,
        "fct_grace_s": 30.0,
        "goodput_check_s": 30.0,
        "ablations": True,
    },
    "full": {
        "a_requests": [100, 500, 1000, 2000, 5000, 10000],
        "a_concurrency": 14,
        "b_concurrency": [1, 2, 4, 8, 11, 14, 17, 20],
        "b_requests": [100, 2000, 10000],
        "c_concurrency": [1, 2, 4, 8, 11, 14, 17, 20],
        "c_requests": 10000,
        "floor_requests": 10000,
        "reps": 10,
        "warmup_s": 5.0,
        "fct_window_s": 60.0,
        "fct_grace_s": 30.0,
        "goodput_check_s": 30.0,
        "ablations": False,
    },
}

# Stage 1 (collection) when no fifo trial of the plan can do it.
COLLECT_POINT = (14, 2000)


def points(mode):
    """The (concurrency, requests) points of 'mode', each once, and which
    experiments use them."""
    m = MODES[mode]
    pts = {}
    for r in m["a_requests"]:
        pts.setdefault((m["a_concurrency"], r), set()).add("a")
    for c, r in itertools.product(m["b_concurrency"], m["b_requests"]):
        pts.setdefault((c, r), set()).add("b")
    for c in m["c_concurrency"]:
        pts.setdefault((c, m["c_requests"]), set()).add("c")
    return pts


def plan(mode, schemes, reps, ccs):
    """Ordered list of trial dicts: per congestion control and
    repetition, the floor (unloaded, plain forwarding), then the points."""
    pts = points(mode)
    order = sorted(pts, key=lambda p: (p[0] != MODES[mode]["a_concurrency"],
                                       p[0], p[1]))
    trials = []
    for cc in ccs:
        for rep in range(reps):
            trials.append({"cc": cc, "scheme": "fifo", "concurrency": 0,
                           "requests": MODES[mode]["floor_requests"],
                           "rep": rep, "experiments": ["floor"]})
            for conc, req in order:
                for s in schemes:
                    trials.append({"cc": cc, "scheme": s, "concurrency": conc,
                                   "requests": req, "rep": rep,
                                   "experiments": sorted(pts[(conc, req)])})
    return trials


# -- how long a plan takes -------------------------------------------------
# A planning estimate, not a measurement: a trial lasts its warm-up and
# then as long as the longer of its FCT window (with the grace after it)
# and its closed-loop memcached run, requests x the time one request
# takes.  That time is unknown before the run (it is what the run
# measures), so the estimate is a range: from every request at the
# unloaded latency to every request waiting behind a full buffer.
UNLOADED_REQUEST_S = 0.0002     # a GET unloaded, 50 Mbit/s, this machine
TRIAL_OVERHEAD_S = 2.0          # scheme change, drain, start and stop
SETUP_S = 20.0                  # namespaces, OVS, per congestion control
MODEL_S = 10.0                  # panda-model, once per run


def trial_seconds(t, cfg, request_s):
    """Seconds trial 't' (a plan() entry) takes when a memcached request
    takes 'request_s' loaded."""
    if t["concurrency"] == 0:           # the floor: unloaded, no warm-up
        return TRIAL_OVERHEAD_S + t["requests"] * UNLOADED_REQUEST_S
    window = (cfg.fct_window_s + cfg.fct_grace_s
              if "c" in t["experiments"] else 0.0)
    return (TRIAL_OVERHEAD_S + cfg.warmup_s
            + max(window, t["requests"] * request_s))


def estimate(cfg, trials, measured=None, collection=True, goodput=True):
    """(low, high) seconds for 'trials' of RunConfig 'cfg': a loaded
    request from UNLOADED_REQUEST_S to a full buffer's delay; 'measured':
    {(cc, scheme, concurrency, requests): seconds} of trials of the same
    run already done (a resumed run's), used for both ends; 'collection':
    the run still has to collect and model (a dedicated trial when no
    fifo trial of the plan can host it); 'goodput': the cross-check is
    still to run."""
    full_buffer = cfg.queue_pkts * 1514 * 8 / cfg.qos.rate_bps
    ends = []
    for request_s in (UNLOADED_REQUEST_S, full_buffer + UNLOADED_REQUEST_S):
        sec = SETUP_S * len({t["cc"] for t in trials})
        for t in trials:
            key = (t["cc"], t["scheme"], t["concurrency"], t["requests"])
            sec += (measured[key] if measured and key in measured
                    else trial_seconds(t, cfg, request_s))
        if collection:
            sec += MODEL_S
            conc = MODES[cfg.mode]["a_concurrency"]
            if not any(t["scheme"] == "fifo" and t["concurrency"] == conc
                       for t in trials):
                sec += trial_seconds({"concurrency": conc, "experiments": [],
                                      "requests": COLLECT_POINT[1]},
                                     cfg, request_s)
        if goodput and cfg.goodput_check_s:
            sec += 2 * cfg.goodput_check_s + TRIAL_OVERHEAD_S
        ends.append(sec)
    return tuple(ends)


def duration(seconds, unit=None):
    """"4.7 h", "38 min", "50 s" (in 'unit', else the one that fits)."""
    unit = unit or ("h" if seconds >= 5400 else "min" if seconds >= 120
                    else "s")
    if unit == "h":
        return "%.1f h" % (seconds / 3600)
    if unit == "min":
        return "%.0f min" % (seconds / 60)
    return "%.0f s" % seconds


def duration_range(lo_hi):
    """"4.7-6.1 h" for (low, high) seconds."""
    lo, hi = lo_hi
    high = duration(hi)
    low = duration(lo, high.split()[1])
    return high if low == high else "%s-%s" % (low.split()[0], high)

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

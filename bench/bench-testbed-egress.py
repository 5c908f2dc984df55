#!/usr/bin/python3
"""Panda's loaded memcached latency on the testbed through each egress,
against linux-htb measured in the same run.

    sudo bench/bench-testbed-egress.py --policy RUN/policy.json
        [--build DIR] [--reps N] [--requests N] [--concurrency N]

The testbed's topology and trial (pandaovs.testbed: PM2 -> OVS -> PM1 at
50 Mbit/s, N web-search flows, then R memcached GETs on one connection),
with the panda action running the policy of an earlier testbed run
(--policy, e.g. docs/results/*/policy.json) and no FCT window, so a trial
is a few seconds.  One unloaded trial (the floor) per egress, then the
variants of the panda scheme's egress, interleaved over the repetitions so
that the machine's load drifts hit all alike:

  sched port-ecn       the testbed's panda: panda-sched, per-flow queues,
                       port ECN at 30 KB, ECN-capable senders
  sched lower-ecn      ECN only for levels 1-7 (label-aware WRED on DSCP
                       2-8, 30 KB to the buffer, probability up to 1; the
                       top level is never marked)
  sched fifo-levels    port ECN, one FIFO per level (as HTB has)
  htb                  linux-htb, drop-tail, 50 packets per class: the
                       baseline (issue 13: panda on htb sits at the floor)

It prints p50/p90/p99 per trial and, per variant, the median p99 and its
ratio to htb's, and to the floor (unloaded p99 + one frame at the rate).
It separates the port ECN's marks on the top level from the rest of what
differs between the two egresses (where and how often the queue is served:
panda-sched on netdev-linux ports is served by ovs-vswitchd's main thread
on millisecond timers, HTB by the kernel's hrtimer).  Needs root."""

import argparse
import dataclasses
import os
import statistics
import tempfile

try:
    import pandaovs  # noqa: F401
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

from pandaovs import paths  # noqa: E402
from pandaovs.sandbox import is_root  # noqa: E402
from pandaovs.testbed import model  # noqa: E402
from pandaovs.testbed.config import TrialConfig  # noqa: E402
from pandaovs.testbed.schemes import (DEFAULT_ECN_THRESHOLD,  # noqa: E402
                                      DEFAULT_GUARD_PERMILLE, FRAME,
                                      QosConfig)
from pandaovs.testbed.topology import Testbed  # noqa: E402
from pandaovs.testbed.trial import run_trial  # noqa: E402

RATE = 50000000
QUEUE_PKTS = 50


def sched_variants(qos):
    base = dict(qos.sched_settings("panda"))
    lower = dict(base, **{"ecn-threshold": "0", "wred": "2-8:%d:%d:1" % (
        DEFAULT_ECN_THRESHOLD, QUEUE_PKTS * FRAME)})
    fifo = dict(base, **{"per-flow": "false"})
    return [("sched port-ecn", list(base.items())),
            ("sched lower-ecn", list(lower.items())),
            ("sched fifo-levels", list(fifo.items()))]


def trial(tb, cfg, conc, requests, seed, workdir, policy=None):
    r = run_trial(tb, cfg, "panda" if policy else "fifo", conc, requests,
                  seed, workdir, policy=policy)
    if r["status"] != "ok":
        raise SystemExit("trial failed: %s" % r["status"])
    mc = r["memcached"]
    return mc["p50_ms"], mc["p90_ms"], mc["p99_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", required=True,
                    help="policy.json of an earlier testbed run")
    ap.add_argument("--build", default=paths.build_dir())
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--concurrency", type=int, default=14)
    a = ap.parse_args()
    if not is_root():
        raise SystemExit("needs root (network namespaces, OVS)")
    panda = model.policies(model.load_policy(a.policy))["panda"]
    cfg = TrialConfig(warmup_s=3.0)
    work = tempfile.mkdtemp(prefix="bench-egress-")
    print("kernel %s, %d cores, load average %.1f; %d Mbit/s, %d flows, "
          "%d GETs, %d repetitions; CUBIC; offloads off"
          % (os.uname().release, os.cpu_count(), os.getloadavg()[0],
             RATE // 10**6, a.concurrency, a.requests, a.reps))
    sched = QosConfig("panda-sched", RATE, 8, QUEUE_PKTS,
                      DEFAULT_ECN_THRESHOLD, DEFAULT_GUARD_PERMILLE)
    htb = dataclasses.replace(sched, type="htb", ecn_threshold=0)
    p99 = {}
    floors = {}
    n = 0
    with Testbed(a.build, sched) as tb:
        floors["sched"] = trial(tb, cfg, 0, a.requests, 1,
                                os.path.join(work, "floor-sched"))[2]
        tb.set_scheme("panda", panda)
        for rep in range(a.reps):
            for name, settings in sched_variants(sched):
                tb.shape(tb.pm1.port, RATE, 8, qos_type="panda-sched",
                         sched=settings)
                tb.wait_drained()
                n += 1
                res = trial(tb, cfg, a.concurrency, a.requests, 1 + rep,
                            os.path.join(work, "t%d" % n), panda)
                p99.setdefault(name, []).append(res[2])
                print("%-18s rep %d  p50 %.2f  p90 %.2f  p99 %.2f ms"
                      % ((name, rep + 1) + res), flush=True)
    with Testbed(a.build, htb) as tb:
        floors["htb"] = trial(tb, cfg, 0, a.requests, 1,
                              os.path.join(work, "floor-htb"))[2]
        tb.set_scheme("panda", panda)
        for rep in range(a.reps):
            tb.wait_drained()
            n += 1
            res = trial(tb, cfg, a.concurrency, a.requests, 1 + rep,
                        os.path.join(work, "t%d" % n), panda)
            p99.setdefault("htb", []).append(res[2])
            print("%-18s rep %d  p50 %.2f  p90 %.2f  p99 %.2f ms"
                  % (("htb", rep + 1) + res), flush=True)
    frame_ms = FRAME * 8 / RATE * 1000
    base = statistics.median(p99["htb"])
    print("\nfloor (unloaded p99 + %.3f ms): panda-sched %.2f ms, htb %.2f "
          "ms" % (frame_ms, floors["sched"] + frame_ms,
                  floors["htb"] + frame_ms))
    for name, vals in p99.items():
        m = statistics.median(vals)
        fl = floors["htb" if name == "htb" else "sched"] + frame_ms
        print("%-18s median p99 %6.2f ms  x htb %.2f  x own floor %.2f"
              % (name, m, m / base, m / fl))
    print("(trial outputs in %s)" % work)


if __name__ == "__main__":
    main()

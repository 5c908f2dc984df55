#!/usr/bin/python3
"""Panda's loaded memcached latency on the testbed through each egress,
against linux-htb measured in the same run.

    sudo bench/bench-testbed-egress.py --policy RUN/policy.json
        [--build DIR] [--reps N] [--requests N] [--concurrency N]
        [--egresses sched,htb,afxdp] [--pmd-maxsleep 0,50,200]

The testbed's topology and trial (pandalab.testbed: PM2 -> OVS -> PM1 at
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
                       baseline (panda on htb sits at the floor)
  afxdp ms=N           (--egresses afxdp) sched port-ecn on AF_XDP ports
                       with the testbed's burst there (--afxdp-burst),
                       polled by one PMD thread with other_config:
                       pmd-maxsleep=N us (each --pmd-maxsleep value, set
                       live on one testbed, each with its own floor); also
                       the PMD thread's CPU share loaded and idle

It prints p50/p90/p99 per trial and, per variant, the median p99 and its
ratio to htb's, and to the floor (unloaded p99 + one frame at the rate).
It separates the port ECN's marks on the top level from the rest of what
differs between the two egresses (where and how often the queue is served:
panda-sched on netdev-linux ports is served by ovs-vswitchd's main thread
on millisecond timers, HTB by the kernel's hrtimer).  Needs root."""

import dataclasses
import os
import statistics
import tempfile
import time

try:
    import pandaovs  # noqa: F401
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

from pandaovs import cli  # noqa: E402
from pandaovs import paths  # noqa: E402
from pandalab.lab import PortConfig  # noqa: E402
from pandalab.sandbox import is_root  # noqa: E402
from pandalab.testbed import model  # noqa: E402
from pandalab.testbed.config import TrialConfig  # noqa: E402
from pandalab.testbed.schemes import (DEFAULT_ECN_THRESHOLD,  # noqa: E402
                                      DEFAULT_GUARD_PERMILLE, FRAME,
                                      SCHED_BURST, QosConfig)
from pandalab.testbed.topology import Testbed  # noqa: E402
from pandalab.testbed.trial import run_trial  # noqa: E402

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
    ap = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", required=True,
                    help="policy.json of an earlier testbed run")
    ap.add_argument("--build", default=paths.build_dir())
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--concurrency", type=int, default=14)
    ap.add_argument("--egresses", default="sched,htb",
                    help="which groups to run: sched (panda-sched on system "
                    "ports, three variants), htb, afxdp (default "
                    "%(default)s)")
    ap.add_argument("--pmd-maxsleep", default="0,50,200",
                    help="afxdp: pmd-maxsleep values in us (default "
                    "%(default)s)")
    ap.add_argument("--afxdp-burst", type=int, default=SCHED_BURST,
                    help="afxdp: panda-sched's burst in bytes, 0 = the "
                    "datapath's default (default: %(default)s, the "
                    "testbed's on --ports afxdp)")
    a = ap.parse_args()
    groups = set(a.egresses.split(","))
    if not groups or groups - {"sched", "htb", "afxdp"}:
        ap.error("--egresses: choose from sched, htb, afxdp")
    sleeps = [int(v) for v in a.pmd_maxsleep.split(",")]
    if not is_root():
        raise SystemExit("needs root (network namespaces, OVS)")
    panda = model.policies(model.load_policy(a.policy))["panda"]
    b = Bench(a, panda)
    print("kernel %s, %d cores, load average %.2f %.2f %.2f; %d Mbit/s, "
          "%d flows, %d GETs, %d repetitions; CUBIC; offloads off"
          % ((os.uname().release, os.cpu_count()) + os.getloadavg()
             + (RATE // 10**6, a.concurrency, a.requests, a.reps)))
    sched = QosConfig("panda-sched", RATE, 8, QUEUE_PKTS,
                      DEFAULT_ECN_THRESHOLD, DEFAULT_GUARD_PERMILLE)
    htb = dataclasses.replace(sched, type="htb", ecn_threshold=0)
    if "sched" in groups:
        # ECN-CUBIC where the egress marks, as these figures were measured.
        with Testbed(a.build, sched, cc="ecn-cubic") as tb:
            b.floor(tb, "sched")
            tb.set_scheme("panda", panda)
            for rep in range(a.reps):
                for name, settings in sched_variants(sched):
                    tb.shape(tb.pm1.port, RATE, 8, qos_type="panda-sched",
                             sched=settings)
                    b.loaded(tb, name, "sched", rep)
    if "htb" in groups:
        with Testbed(a.build, htb) as tb:
            b.floor(tb, "htb")
            tb.set_scheme("panda", panda)
            for rep in range(a.reps):
                b.loaded(tb, "htb", "htb", rep)
    if "afxdp" in groups:
        ports = PortConfig("afxdp", pmd_maxsleep_us=sleeps[0])
        xdp_q = dataclasses.replace(sched, burst_bytes=a.afxdp_burst)
        with Testbed(a.build, xdp_q, ports=ports, cc="ecn-cubic") as tb:
            print("afxdp ports: %s, burst %s" % (ports.record(),
                                                 a.afxdp_burst or "default"))
            # The PMD thread's cost with nothing to do, then each value's
            # floor; the loaded trials interleave the values.
            for ms in sleeps:
                set_maxsleep(tb, ms)
                b.idle_cpu(tb, "afxdp ms=%d" % ms)
            for ms in sleeps:
                set_maxsleep(tb, ms)
                b.floor(tb, "afxdp ms=%d" % ms)
            tb.set_scheme("panda", panda)
            for rep in range(a.reps):
                for ms in sleeps:
                    set_maxsleep(tb, ms)
                    b.loaded(tb, "afxdp ms=%d" % ms, "afxdp ms=%d" % ms, rep)
    b.summary()
    print("load average at the end %.2f %.2f %.2f" % os.getloadavg())
    print("(trial outputs in %s)" % b.work)


def set_maxsleep(tb, us):
    tb.sb.vsctl("set", "Open_vSwitch", ".", "other_config:pmd-maxsleep=%d"
                % us)


def pmd_cpu(tb):
    """CPU seconds of ovs-vswitchd's PMD threads."""
    return sum(v for k, v in tb.thread_cpu().items() if k.startswith("pmd"))


class Bench:
    IDLE_S = 3.0

    def __init__(self, a, panda):
        self.a = a
        self.panda = panda
        self.cfg = TrialConfig(warmup_s=3.0)
        self.work = tempfile.mkdtemp(prefix="bench-egress-")
        self.p99 = {}           # variant: [p99 ms per repetition]
        self.floors = {}        # floor key: unloaded p99 ms
        self.floor_of = {}      # variant: floor key
        self.cpu = {}           # variant: [PMD CPU share of loaded trials]
        self.idle = {}          # variant: PMD CPU share idle
        self.n = 0

    def _trial(self, tb, conc, seed, policy=None):
        self.n += 1
        tb.wait_drained()
        c0, t0 = pmd_cpu(tb), time.monotonic()
        res = trial(tb, self.cfg, conc, self.a.requests, seed,
                    os.path.join(self.work, "t%d" % self.n), policy)
        return res, (pmd_cpu(tb) - c0) / (time.monotonic() - t0)

    def floor(self, tb, key):
        tb.set_scheme("fifo")
        res, _ = self._trial(tb, 0, 1)
        self.floors[key] = res[2]
        print("%-18s floor  p50 %.2f  p90 %.2f  p99 %.2f ms" % ((key,) + res),
              flush=True)

    def loaded(self, tb, name, floor_key, rep):
        res, cpu = self._trial(tb, self.a.concurrency, 1 + rep, self.panda)
        self.p99.setdefault(name, []).append(res[2])
        self.floor_of[name] = floor_key
        self.cpu.setdefault(name, []).append(cpu)
        print("%-18s rep %d  p50 %.2f  p90 %.2f  p99 %.2f ms  PMD CPU %.2f"
              "  load %.1f" % ((name, rep + 1) + res
                               + (cpu, os.getloadavg()[0])), flush=True)

    def idle_cpu(self, tb, name):
        c0, t0 = pmd_cpu(tb), time.monotonic()
        time.sleep(self.IDLE_S)     # measuring an idle interval, not waiting
        self.idle[name] = (pmd_cpu(tb) - c0) / (time.monotonic() - t0)
        print("%-18s idle PMD CPU %.2f of a core" % (name, self.idle[name]),
              flush=True)

    def summary(self):
        frame_ms = FRAME * 8 / RATE * 1000
        print("\nfloor = unloaded p99 + %.3f ms (one frame): %s" % (
            frame_ms, ", ".join("%s %.2f ms" % (k, v + frame_ms)
                                for k, v in self.floors.items())))
        base = (statistics.median(self.p99["htb"]) if "htb" in self.p99
                else None)
        for name, vals in self.p99.items():
            m = statistics.median(vals)
            fl = self.floors[self.floor_of[name]] + frame_ms
            line = "%-18s median p99 %6.2f ms  x own floor %.2f" % (
                name, m, m / fl)
            if "htb" in self.floors:
                line += "  x htb floor %.2f" % (
                    m / (self.floors["htb"] + frame_ms))
            if base:
                line += "  x htb %.2f" % (m / base)
            if name in self.idle:
                line += "  PMD CPU loaded %.2f idle %.2f" % (
                    statistics.median(self.cpu[name]), self.idle[name])
            print(line)


if __name__ == "__main__":
    main()

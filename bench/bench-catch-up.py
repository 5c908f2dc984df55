#!/usr/bin/python3
"""panda-sched's catch-up on each port type: the goodput of long-lived TCP
streams and the unloaded memcached latency (the testbed's floor) with
catch-up off and on, measured in the same run on the same build.

    sudo bench/bench-catch-up.py [--ports dpdk,afxdp,system] [--reps N]
        [--seconds S] [--streams N] [--requests N] [--build DIR]
        [--dpdk-build DIR] [--variants LIST] [--hogs N]

The testbed's topology (pandalab.testbed: PM2 -> OVS -> PM1, the OVS port
towards PM1 shaped by panda-sched to 50 Mbit/s, 8 levels, the testbed's
50-packet buffer and port ECN with ECN-capable CUBIC senders, fifo scheme:
everything in level 0), one testbed per port type; PMD ports with the
testbed's settings (one PMD thread on the last CPU, pmd-maxsleep 50 us).
Variants of the port's panda-sched, interleaved over the repetitions so
that the machine's load drifts hit all alike:

  off        burst=3028 catch-up=3028: the classic token bucket (the
             scheduler before catch-up), with the testbed's two-frame
             bucket of PMD ports
  on         burst=3028, catch-up at its default (10 ms at the rate)
  deep       burst=62500 (10 ms at the rate; catch-up the same): the
             datapath's default bucket, the workaround before catch-up
  unshaped   panda-sched at 10 Gbit/s, far above what the datapath
             forwards here (floor only: the goodput would be the
             datapath's, not a shaper's): separates the port type's own
             latency from the shaper's

Each variant's repetition: an unloaded trial of R memcached GETs (the
testbed's floor trial: p50/p90/p99, floor = p99 + one frame at the rate),
then N iperf3 streams for S seconds (goodput, TCP payload; the link
carries 50 x 1448/1514 = 47.8 Mbit/s of it).  Printed per trial with the
load average and the PMD threads' CPU share; at the end per variant the
medians and their ratios to "off".

--hogs N adds a controlled load: N busy loops pinned to the last CPU (the
PMD thread's, the testbed's default pmd-cpu-mask), started here for the
whole run and ended by their pids, so that the kernel preempts the PMD
thread (or the main thread) as a busy host would, on an otherwise quiet
machine.  Needs root."""

import os
import statistics
import subprocess
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
from pandalab import iperf3  # noqa: E402
from pandalab.lab import PortConfig  # noqa: E402
from pandalab.sandbox import end_process, is_root  # noqa: E402
from pandalab.testbed.config import (DEFAULT_PMD_MAXSLEEP_US,  # noqa: E402
                                     TrialConfig)
from pandalab.testbed.goodput import MSS  # noqa: E402
from pandalab.testbed.schemes import (DEFAULT_ECN_THRESHOLD,  # noqa: E402
                                      DEFAULT_GUARD_PERMILLE, FRAME,
                                      SCHED_BURST, QosConfig)
from pandalab.testbed.topology import Testbed  # noqa: E402
from pandalab.testbed.trial import run_trial  # noqa: E402

RATE = 50000000
QUEUE_PKTS = 50
DEEP_BURST = RATE // 8 // 100           # 10 ms at the rate
UNSHAPED_RATE = 10**10
VARIANTS = {
    "off": [("burst", SCHED_BURST), ("catch-up", SCHED_BURST)],
    "on": [("burst", SCHED_BURST)],
    "deep": [("burst", DEEP_BURST)],
    "unshaped": None,
}


def main():
    ap = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ports", default="dpdk,afxdp,system",
                    help="port types, one testbed each (default "
                    "%(default)s)")
    ap.add_argument("--variants", default="off,on,deep,unshaped",
                    help="from %s (default %%(default)s)"
                    % ", ".join(VARIANTS))
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--streams", type=int, default=14)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--build", default=paths.build_dir(),
                    help="build of system and afxdp ports")
    ap.add_argument("--dpdk-build", default=paths.dpdk_build_dir(),
                    help="build of dpdk ports (DPDK=1 ./build.sh)")
    ap.add_argument("--hogs", type=int, default=0,
                    help="busy loops on the last CPU for the whole run "
                    "(default 0)")
    a = ap.parse_args()
    ports = a.ports.split(",")
    variants = a.variants.split(",")
    if set(ports) - {"dpdk", "afxdp", "system"} or not ports:
        ap.error("--ports: choose from dpdk, afxdp, system")
    if set(variants) - set(VARIANTS) or not variants:
        ap.error("--variants: choose from %s" % ", ".join(VARIANTS))
    if a.reps < 1 or a.seconds <= 0 or a.streams < 1 or a.requests < 1:
        ap.error("--reps, --seconds, --streams, --requests must be positive")
    if not 0 <= a.hogs <= 16:
        ap.error("--hogs: 0..16")
    why = iperf3.unavailable()
    if why:
        raise SystemExit(why)
    if not is_root():
        raise SystemExit("needs root (network namespaces, OVS)")
    print("kernel %s, %d cores, load average %.2f %.2f %.2f; %d Mbit/s "
          "panda-sched, %d-packet buffer, port ECN %d B, fifo scheme; %d "
          "iperf3 streams x %g s; %d GETs unloaded; CUBIC with ECN; offloads "
          "off; %d repetitions"
          % ((os.uname().release, os.cpu_count()) + os.getloadavg()
             + (RATE // 10**6, QUEUE_PKTS, DEFAULT_ECN_THRESHOLD,
                a.streams, a.seconds, a.requests, a.reps)), flush=True)
    b = Bench(a)
    cpu = str(os.cpu_count() - 1)
    hogs = [subprocess.Popen(["taskset", "-c", cpu, "sh", "-c",
                              "while :; do :; done"])
            for _ in range(a.hogs)]
    if hogs:
        print("%d busy loops on CPU %s" % (len(hogs), cpu))
    try:
        for port in ports:
            b.run_port(port, variants)
    finally:
        for h in hogs:
            end_process(h)
    b.summary()
    print("load average at the end %.2f %.2f %.2f" % os.getloadavg())
    print("(trial outputs in %s)" % b.work)


class Bench:
    def __init__(self, a):
        self.a = a
        self.cfg = TrialConfig(warmup_s=0.0)
        self.work = tempfile.mkdtemp(prefix="bench-catch-up-")
        self.rows = {}          # (port, variant): [per-rep dict]
        self.n = 0

    def run_port(self, port, variants):
        a = self.a
        pmd = port != "system"
        ports = (PortConfig(port, pmd_maxsleep_us=DEFAULT_PMD_MAXSLEEP_US)
                 if pmd else PortConfig())
        build = a.dpdk_build if port == "dpdk" else a.build
        qos = QosConfig("panda-sched", RATE, 8, QUEUE_PKTS,
                        DEFAULT_ECN_THRESHOLD, DEFAULT_GUARD_PERMILLE)
        base = [kv for kv in qos.sched_settings("fifo") if kv[0] != "burst"]
        # ECN-CUBIC (the egress marks), as these figures were measured.
        with Testbed(build, qos, ports=ports, cc="ecn-cubic") as tb:
            print("%s ports: %s" % (port, ports.record()), flush=True)
            for rep in range(a.reps):
                for v in variants:
                    self.apply(tb, port, base, VARIANTS[v])
                    row = self.floor(tb, rep)
                    if VARIANTS[v] is not None:
                        row.update(self.goodput(tb))
                    row["load"] = os.getloadavg()[0]
                    self.rows.setdefault((port, v), []).append(row)
                    print("%-6s %-5s rep %d  floor p50 %.2f p90 %.2f p99 "
                          "%.2f ms%s  PMD CPU %.2f  load %.1f" % (
                              port, v, rep + 1, row["p50"], row["p90"],
                              row["p99"],
                              "  goodput %.1f Mbit/s (%d retrans)"
                              % (row["goodput"], row["retrans"] or 0)
                              if "goodput" in row else "",
                              row["pmd_cpu"], row["load"]), flush=True)

    def apply(self, tb, port, base, extra):
        if extra is None:
            tb.shape(tb.bottleneck, UNSHAPED_RATE, 8, qos_type="panda-sched",
                     sched=base)
            return
        settings = base + [(k, str(v)) for k, v in extra]
        tb.shape(tb.bottleneck, RATE, 8, qos_type="panda-sched",
                 sched=settings)
        show = tb.sched_show(tb.bottleneck)
        want = dict(extra)
        # What the datapath runs, from its own report.
        got = show["port"]
        if got["burst"] != want["burst"] or \
                got["catch-up"] != want.get("catch-up", max(
                    want["burst"], RATE // 8 // 100)):
            raise SystemExit("%s: panda-sched runs burst=%s catch-up=%s, "
                             "not %s" % (port, got["burst"],
                                         got["catch-up"], want))

    def pmd_cpu(self, tb):
        return sum(v for k, v in tb.thread_cpu().items()
                   if k.startswith("pmd"))

    def floor(self, tb, rep):
        self.n += 1
        tb.wait_drained()
        c0, t0 = self.pmd_cpu(tb), time.monotonic()
        r = run_trial(tb, self.cfg, "fifo", 0, self.a.requests, 1 + rep,
                      os.path.join(self.work, "t%d" % self.n))
        if r["status"] != "ok":
            raise SystemExit("floor trial failed: %s" % r["status"])
        mc = r["memcached"]
        return {"p50": mc["p50_ms"], "p90": mc["p90_ms"],
                "p99": mc["p99_ms"],
                "floor": mc["p99_ms"] + FRAME * 8 / RATE * 1000,
                "pmd_cpu": (self.pmd_cpu(tb) - c0)
                / (time.monotonic() - t0)}

    def goodput(self, tb):
        self.n += 1
        tb.wait_drained()
        work = os.path.join(self.work, "t%d" % self.n)
        os.makedirs(work, exist_ok=True)
        s = iperf3.Streams(tb.spawn, tb.pm2, tb.pm1, self.a.streams, work,
                           seconds=self.a.seconds, tag="iperf3")
        r = s.wait(timeout=self.a.seconds + 60)
        return {"goodput": r["goodput_mbps"], "retrans": r["retransmits"]}

    def summary(self):
        link = RATE * MSS / FRAME / 1e6
        print("\nmedians per variant (goodput: of %.1f Mbit/s of TCP payload "
              "the link carries; ratios: to 'off' of the same port type)"
              % link)
        for (port, v), rows in self.rows.items():
            med = {k: statistics.median(r[k] for r in rows)
                   for k in rows[0] if rows[0][k] is not None}
            off = self.rows.get((port, "off"))
            line = "%-6s %-5s floor %.2f ms (p50 %.2f)" % (
                port, v, med["floor"], med["p50"])
            if off:
                line += " x off %.2f" % (
                    med["floor"] / statistics.median(r["floor"]
                                                     for r in off))
            if "goodput" in med:
                line += "  goodput %.1f Mbit/s (%.2f of the link)" % (
                    med["goodput"], med["goodput"] / link)
                if off:
                    line += " x off %.2f" % (
                        med["goodput"] / statistics.median(r["goodput"]
                                                           for r in off))
            line += "  load %.1f-%.1f" % (min(r["load"] for r in rows),
                                          max(r["load"] for r in rows))
            print(line)


if __name__ == "__main__":
    main()

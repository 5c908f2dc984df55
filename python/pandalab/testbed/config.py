"""The testbed's command line (a stable contract: testbed/README.md,
ansible/ drives it) and the typed configuration it produces.

parse_args() checks the arguments once and returns a RunConfig; the rest
of the testbed reads only that (never the argparse namespace)."""

import dataclasses
import json
import os
from typing import Optional, Tuple

from pandaovs import cli, paths
from .. import workload as workloads
from . import conditions
from ..lab import PMD_MAXSLEEP_MAX_US, PORT_TYPES, PortConfig
from .experiments import MODES
from .model import THRESHOLD_UNITS
from .profiles import PROFILES, queue_pkts_for
from .schemes import (ABLATIONS, DEFAULT_ECN_THRESHOLD, DEFAULT_GUARD_PERMILLE,
                      DEFAULT_SCHEMES, EGRESS_FIELDS, FRAME, ORDER,
                      PER_FLOW_FACTOR,
                      SCHED_BURST, QOS_TYPES, RENAMED, SCHEMES,
                      WEIGHTS_ABLATION, QosConfig, unavailable)


@dataclasses.dataclass(frozen=True)
class RunConfig:
    mode: str                   # "quick" or "full" (experiments.MODES)
    schemes: Tuple[str, ...]
    build_dir: str              # absolute
    out: str                    # results root; the run goes to out/run_id
    rate_mbit: float            # bottleneck rate
    seed: int
    reps: int
    policy: Optional[str]       # a saved policy.json: skip stages 1 and 2
    profile: str
    ccs: Tuple[str, ...]        # congestion-control conditions asked
                                # for (conditions.py)
    load: float                 # rho given to the model
    queue_pkts: int             # buffer: each HTB queue, the panda-sched
                                # port
    qos: QosConfig              # the egress (schemes.py)
    ports: PortConfig           # the switch ports' type (pandalab.lab)
    warmup_s: float
    fct_window_s: float         # experiment (c)'s FCT window; the load is
    fct_grace_s: float          # kept up the grace after it
    run_id: Optional[str]
    plots: bool
    calibrate: Optional[Tuple[float, ...]]  # rates, Mbit/s
    # The FHT flow-size CDF (pandalab.workload): collection, model and
    # every trial use it.
    workload: workloads.Workload = None
    iperf3_streams: int = 0     # long-lived background streams per trial
    mc_interval_us: int = 0     # memcached requests paced, one every this
                                # many us at most (0: back to back)
    goodput_check_s: float = 0  # the iperf3 cross-check's length, 0: off
    flt_level0: float = 0.99    # panda-model --flt-level0 (0: no bound)
    flt_bound: str = "floor"    # panda-model --flt-bound: floor, alpha1
    weights: Optional[str] = None   # panda-model --weight-values (the
                                    # profile's; None: all ones)
    threshold_units: Optional[str] = None   # with weights: "counter"
                                    # (--counter-thresholds) or "bytes"
                                    # (--byte-thresholds)
    argv: Tuple[str, ...] = ()
    # The segment's own (never part of the run's settings, see SETTINGS):
    resume: Optional[str] = None    # the run directory to continue
    stop_after_s: Optional[float] = None    # no trial starts after this
    allow_code_change: bool = False         # resume under other code
    dry_run: bool = False                   # print the plan, start nothing
    # Who classifies: "userspace" (the panda action) or "bpf" (the tc
    # classifier on the bottleneck port's egress: topology.py).
    datapath: str = "userspace"

    @property
    def modeled_schemes(self):
        """The schemes that need a policy from the model."""
        return [s for s in self.schemes if SCHEMES[s].policy]


@dataclasses.dataclass(frozen=True)
class TrialConfig:
    """What one trial needs besides its point and scheme."""
    warmup_s: float
    keys: int = 200                 # memcached keys
    mc_timeout_s: float = 1800
    fct_window_s: float = 0.0       # 0: from warm-up to memcached's end
    fct_grace_s: float = 0.0        # load kept up after the window
    fht_sample_pkts: int = 300000   # stage 1: FHT packets captured
    cdf: str = None                 # FHT flow sizes (the run's workload
                                    # copy); None: the web-search CDF
    iperf3_streams: int = 0         # background iperf3 streams (loaded
                                    # trials only)
    mc_interval_us: int = 0         # panda-mc-client --interval, us


# An idle PMD thread spins a whole core unless OVS lets it sleep; on the
# testbed's 2 cores that core is half the machine.  See testbed/README.md,
# "Port types", for what each value costs in latency and CPU.
DEFAULT_PMD_MAXSLEEP_US = 50


# Exit status of a run stopped by --stop-after: its measurement is
# incomplete (pandaovs.cli: 0 every trial ok, 1 the setup failed or every
# trial did, 2 bad arguments or a refused --resume, 3 incomplete: stopped,
# or some trials failed, 130 interrupted).
EXIT_STOPPED = cli.EXIT_INCOMPLETE


def parser(prog="testbed/run.py"):
    p = cli.ArgumentParser(
        prog=prog,
        description="Panda vs PIAS vs FIFO on one machine (thesis ch. 5): "
        "OVS (userspace datapath) in a private network namespace, PM1/PM2 "
        "as namespaces, memcached against web-search flows on a shaped "
        "K-level egress (panda-sched or linux-htb).  Needs root (but "
        "for --dry-run).  On finished runs, without root: '%s plot "
        "RUN_DIR' draws the figures again, '%s report RUN_DIR' prints "
        "the table and targets again, '%s compare RUN_A RUN_B ...' "
        "draws runs side by side (each has --help)." % (prog, prog, prog))
    m = p.add_mutually_exclusive_group()
    m.add_argument("--quick", dest="mode", action="store_const",
                   const="quick", help="one point of (a) and (c), 1 "
                   "repetition: a few minutes (default)")
    m.add_argument("--headline", dest="mode", action="store_const",
                   const="headline", help="the point the targets are "
                   "decided on (14 flows, 10000 requests: (a) and the FCT "
                   "window of (c)) with the full run's warm-up and window, "
                   "5 repetitions and every scheme the targets compare: "
                   "15-20 minutes per repetition and congestion control "
                   "(--dry-run says)")
    m.add_argument("--full", dest="mode", action="store_const",
                   const="full", help="the complete figures (hours)")
    p.add_argument("--schemes",
                   help="comma-separated, from %s (default: %s on "
                   "panda-sched, quick and headline runs adding %s; %s on "
                   "htb)"
                   % (",".join(ORDER),
                      ",".join(DEFAULT_SCHEMES["panda-sched"]),
                      ",".join(ABLATIONS + PER_FLOW_FACTOR),
                      ",".join(DEFAULT_SCHEMES["htb"])))
    # panda-sched is the default since it meets the issue-13 bar on every
    # port type: panda's loaded memcached p99 0.93-1.00x the floor on
    # system ports (three trials, 2026-11-24, testbed/README.md
    # "Results"), 0.98-0.99x on afxdp.  Until its main thread slept on a
    # timerfd (ovs-ext/lib/dpif-netdev-sched.c) a system port was served on millisecond
    # timers and panda measured 1.6-2.4x, and htb (0.93-1.13x) was the
    # default.  htb stays for comparison, and for kernels where the
    # datapath's scheduler is not wanted.
    p.add_argument("--qos", choices=QOS_TYPES,
                   help="egress QoS of the bottleneck: panda-sched (the "
                   "userspace datapath's scheduler, which fish, fq_codel "
                   "and fq-drr need; the default) or htb (kernel linux-htb "
                   "through the netdev-linux patches; the default and the "
                   "only choice with --datapath bpf)")
    p.add_argument("--datapath", choices=("userspace", "bpf"),
                   default="userspace",
                   help="who classifies: the panda action in OVS's "
                   "userspace datapath (default), or bpf: the tc eBPF "
                   "classifier (panda-bpf) on the egress of OVS's port "
                   "towards PM1, before its linux-htb, with OVS only "
                   "forwarding, as on a kernel-datapath hypervisor's "
                   "uplink; schemes fifo, pias, panda")
    # The ovs-dpdk variant is a port type here, not a
    # --datapath option: the datapath is dpif-netdev whatever the ports
    # are, and what DPDK changes is the netdev class (netdev-dpdk), who
    # polls it (PMD threads, as with afxdp) and the build it needs.
    p.add_argument("--ports", choices=PORT_TYPES, default="system",
                   help="type of the OVS ports towards PM1 and PM2: system "
                   "(netdev-linux, AF_PACKET, served by ovs-vswitchd's main "
                   "thread; default), afxdp "
                   "(AF_XDP on the veths, generic XDP, polled by a PMD "
                   "thread: needs OVS built with AF_XDP) or dpdk (DPDK "
                   "net_af_packet vdevs on the veths, polled by a PMD "
                   "thread, with 128 MB of hugepages reserved for the run: "
                   "needs OVS built with DPDK, DPDK=1 ./build.sh, whose "
                   "_build-dpdk is then the default --build-dir); afxdp "
                   "and dpdk need --qos panda-sched, since they bypass the "
                   "kernel's qdiscs")
    p.add_argument("--pmd-maxsleep", type=int, metavar="USEC",
                   help="--ports afxdp/dpdk: OVS other_config:pmd-maxsleep, "
                   "how long an idle PMD thread may sleep instead of "
                   "spinning a core (0..%d; default %d)" % (
                       PMD_MAXSLEEP_MAX_US, DEFAULT_PMD_MAXSLEEP_US))
    p.add_argument("--pmd-cpu-mask", metavar="HEX",
                   help="--ports afxdp/dpdk: OVS other_config:pmd-cpu-mask "
                   "(default: one PMD thread, on the last CPU)")
    p.add_argument("--burst", type=cli.size(), metavar="SIZE",
                   help="panda-sched token bucket depth, bytes (default: "
                   "%d, two "
                   "frames; 0 = the library's default, two frames or 100 us "
                   "at the rate)"
                   % SCHED_BURST)
    p.add_argument("--ecn-threshold", type=cli.size(), metavar="SIZE",
                   help="panda-sched port ECN threshold K, bytes: CE on ECN-"
                   "capable packets (those of the --cc conditions that "
                   "negotiate ECN) above it; 0 = drop-tail only (default: "
                   "the profile's; 1g %d, the thesis's K kept in bytes, "
                   "testbed/README.md says why; 10g 0, the thesis marks no "
                   "64 KB packets)" % DEFAULT_ECN_THRESHOLD)
    p.add_argument("--ecn-backlog", choices=("port", "ahead"),
                   default="port",
                   help="what the ECN threshold is compared with: the "
                   "port's backlog, all levels summed (default: the "
                   "thesis's scheme 3, PIAS's sch_pias), or the backlog "
                   "ahead of the packet, its level's and the levels' "
                   "above (panda-sched ecn-ahead; the lowest level sees "
                   "the port's either way)")
    p.add_argument("--guard", type=int, default=DEFAULT_GUARD_PERMILLE,
                   metavar="PERMILLE",
                   help="starvation guard of the fish and panda-guard "
                   "schemes, 1/1000 of the link (default %(default)d)")
    p.add_argument("--build-dir",
                   help="build tree with OVS, load_generator and tools "
                   "(default $PANDA_BUILD_DIR or <repo>/_build, where "
                   "./build.sh builds; with --ports dpdk "
                   "$PANDA_DPDK_BUILD_DIR or <repo>/_build-dpdk, where "
                   "DPDK=1 ./build.sh builds)")
    p.add_argument("--out", default=os.path.join(paths.TOP, "results"),
                   help="results directory (default %(default)s); the run "
                   "goes to OUT/<run-id>/")
    p.add_argument("--rate-mbit", type=float, help="bottleneck rate "
                   "(default: the profile's calibrated rate, 50)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--reps", type=int, help="repetitions, at least 1 "
                   "(default: quick 1, headline 5, full 10); rows give the "
                   "mean and its 95%% confidence interval from 2, the "
                   "10%% trimmed mean from 10 (the thesis's 8 of 10)")
    p.add_argument("--policy", help="reuse a saved policy.json (skips "
                   "stages 1 and 2)")
    p.add_argument("--profile", default="1g", choices=sorted(PROFILES))
    p.add_argument("--cc",
                   help="congestion-control conditions to run, comma-"
                   "separated (default: full runs the profile's, the "
                   "thesis's own, 1g cubic,dctcp, 10g cubic; quick runs "
                   "one of them, dctcp where the egress marks ECN, else "
                   "cubic): cubic = CUBIC senders that "
                   "do not negotiate ECN (the thesis's CUBIC runs: drop-"
                   "tail for them), dctcp = DCTCP with the port's ECN "
                   "threshold (its DCTCP runs; the kernel's tcp_dctcp, else "
                   "the project's BPF DCTCP registered for the run, else "
                   "the rows are unavailable with the reason), ecn-NAME = "
                   "NAME with ECN negotiated (e.g. ecn-cubic), any other "
                   "NAME that algorithm without ECN (testbed/README.md, "
                   "\"Congestion control\")")
    p.add_argument("--load", type=float, default=0.8,
                   help="load rho given to the model (thesis: 14 flows is "
                   "about 0.8)")
    p.add_argument("--queue-pkts", type=int,
                   help="buffer in packets: each linux-htb queue, or the "
                   "panda-sched port, shared by its levels (default: "
                   "scaled with the rate, 1000 at 1 Gbit/s)")
    p.add_argument("--warmup", type=cli.duration(), metavar="DURATION",
                   help="load before the memcached client starts (e.g. "
                   "10s; a bare number is seconds)")
    p.add_argument("--fct-window", type=cli.duration(), metavar="DURATION",
                   help="experiment (c)'s FCT window (default: quick 20s, "
                   "headline and full 60s); the load is kept up half as "
                   "long again")
    p.add_argument("--workload", default=workloads.DEFAULT,
                   metavar="NAME|FILE",
                   help="flow sizes of the throughput traffic, in "
                   "collection, model and experiments: a shipped CDF "
                   "(load_generator/cdf/: %s) or a CDF file in the load "
                   "generator's format (default %%(default)s)"
                   % ", ".join(workloads.SHIPPED))
    p.add_argument("--iperf3-streams", type=int, default=0, metavar="N",
                   help="add N long-lived iperf3 streams (PM2 to PM1, the "
                   "path of the flows) as background load to every loaded "
                   "trial (default 0; needs iperf3)")
    p.add_argument("--mc-interval", type=cli.duration(lo=0, hi=1),
                   default=0, metavar="DURATION",
                   help="start a memcached request every DURATION at most "
                   "(e.g. 2ms; panda-mc-client --interval, one request "
                   "outstanding), in every trial and the floor: the "
                   "memcached load the flows share the link with is then "
                   "the same under every scheme that keeps up, instead of "
                   "growing as its latency falls (default 0: closed loop, "
                   "back to back, the thesis's client)")
    p.add_argument("--goodput-check", type=cli.duration(),
                   metavar="DURATION",
                   help="length of the iperf3 cross-check of the load "
                   "generator's goodput, once per run (default: quick 10s, "
                   "headline and full 30s; 0 = skip)")
    p.add_argument("--flt-level0", type=float, metavar="SHARE",
                   help="the model makes room for the memcached counter's "
                   "excursions so that SHARE of the collected memcached "
                   "packets stay at level 0 (panda-model --flt-level0; "
                   "default: the profile's, 1g 0.99, 10g 1; 0 = the "
                   "policy of the flow-size CDF alone)")
    p.add_argument("--flt-bound", choices=("floor", "alpha1", "level"),
                   default="floor",
                   help="how: a counter floor (credit) below 0, the "
                   "thresholds staying the CDF's (default), alpha_1 "
                   "raised, or a top level of their own for the "
                   "connections with credit, the CDF's thresholds one "
                   "level lower (panda-model --flt-bound)")
    p.add_argument("--threshold-units", choices=THRESHOLD_UNITS,
                   help="with the 10g profile's weights: Panda's thresholds "
                   "in the weighted counter's units, the counter C(alpha) "
                   "measured on the flows under panda-w1 (counter-w1: its "
                   "trial at the (a) point captures them first, panda-"
                   "model --counter-thresholds --counter-fht) or modelled "
                   "by a TSO flow's window (counter), or in "
                   "the CDF's bytes (bytes: --byte-thresholds, the "
                   "policy before); default: the profile's "
                   "(tools/README-panda-model.md)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan (trials, schemes, points, "
                   "repetitions) and its expected duration, and exit: "
                   "nothing is started, no root needed")
    p.add_argument("--run-id", help="name of the run directory")
    p.add_argument("--no-plots", action="store_true")
    r = p.add_argument_group(
        "runs over several sessions (testbed/README.md, \"Runs over several "
        "sessions\")")
    r.add_argument("--resume", metavar="RUN_DIR",
                   help="continue the run in RUN_DIR from its result.json: "
                   "the trials done with status ok are kept, failed and "
                   "missing ones run; the run's policy, workload copy and "
                   "settings are reused, and an option that would change "
                   "results is refused when it differs from the run's "
                   "(--reps may grow; --build-dir, --no-plots, --stop-after "
                   "are this session's)")
    r.add_argument("--stop-after", type=cli.duration(bare=60),
                   metavar="DURATION",
                   help="start no trial once DURATION has passed since this "
                   "session started (e.g. 90m, 2h; a bare number is "
                   "minutes; the trial under way finishes), write "
                   "the partial result, summary, CSV and figures and exit "
                   "%d with the command that continues the run" % EXIT_STOPPED)
    r.add_argument("--allow-code-change", action="store_true",
                   help="with --resume: continue although the code the "
                   "results depend on differs from the run's (recorded in "
                   "metadata.segments)")
    p.add_argument("--calibrate", metavar="RATES",
                   help="instead of the experiments, measure a top-priority "
                   "memcached unloaded and against 14 flows at these rates "
                   "(Mbit/s, comma-separated)")
    return p


def parse_args(argv, prog="testbed/run.py"):
    """Checks 'argv' (argparse's exit 2 on errors) -> RunConfig."""
    p = parser(prog)
    return run_config(p, p.parse_args(argv), argv)


def quick_cc(prof, a):
    """A quick run's default condition: one of the profile's, so that it
    takes as long as one (a full run runs them all): DCTCP where the
    profile has it and the egress marks at the port's threshold - the
    thesis's headline condition, and the one under which the quick run's
    ECN-against-drop-tail ablation means anything - else the first (CUBIC
    without ECN: drop-tail, as the thesis's CUBIC runs)."""
    ccs = [c.strip() for c in prof["cc"].split(",") if c.strip()]
    marks = a.qos == "panda-sched" and a.ecn_threshold > 0
    return "dctcp" if "dctcp" in ccs and marks else ccs[0]


def run_config(p, a, argv):
    """The RunConfig of 'a', what parser 'p' (parser() or one that adds
    options to it) parsed from 'argv'; p.error() on bad values."""
    mode = a.mode or "quick"
    prof = PROFILES[a.profile]
    if a.datapath == "bpf":
        if a.qos not in (None, "htb"):
            p.error("--datapath bpf needs --qos htb: the classifier sets "
                    "the skb priority that the kernel's htb classes use")
        if a.ports != "system":
            p.error("--datapath bpf needs --ports system: the classifier "
                    "and the queues are in the kernel")
        a.qos = "htb"
    elif a.qos is None:
        a.qos = "panda-sched"
    if a.ecn_threshold is None:
        a.ecn_threshold = prof["ecn_threshold"]
    if a.cc is None:
        a.cc = quick_cc(prof, a) if mode == "quick" else prof["cc"]
    if a.flt_level0 is None:
        a.flt_level0 = prof["flt_level0"]
    ccs = tuple(c.strip() for c in a.cc.split(",") if c.strip())
    try:
        for c in ccs:
            conditions.parse(c)
    except conditions.ConditionError as e:
        p.error("--cc: %s" % e)
    if not ccs or len(set(ccs)) != len(ccs):
        p.error("--cc %s: name each condition once" % a.cc)
    weights = PROFILES[a.profile]["weights"]
    units = a.threshold_units or PROFILES[a.profile]["threshold_units"]
    if a.threshold_units and not weights:
        p.error("--threshold-units: the %s profile has no size-interval "
                "weights, its counter is bytes" % a.profile)
    if a.schemes is None:
        schemes = DEFAULT_SCHEMES[a.qos]
        if a.qos == "panda-sched" and MODES[mode]["ablations"]:
            # Without ECN there is nothing for drop-tail to differ from.
            schemes += tuple(s for s in ABLATIONS if a.ecn_threshold
                             or SCHEMES[s].ecn) + PER_FLOW_FACTOR
        if weights:
            # The weights against all ones in the same run, in
            # full runs too: all ones is the thesis's own 10 Gbit/s setup
            # (it left the weights open and set them equal, §5.1), and the
            # reduced full run showed the weights costing medium flows
            # 1.7-3x their mean FCT (docs/results/2026-11-23-full-reduced-
            # 10g), so the figures should show both.
            schemes += (WEIGHTS_ABLATION,)
    else:
        schemes = tuple(s.strip() for s in a.schemes.split(",")
                        if s.strip())
    renamed = [s for s in schemes if s in RENAMED]
    if renamed:
        p.error("--schemes: %s is now %s (plain per-flow DRR); the "
                "operator's fq_codel is fq_codel"
                % (renamed[0], RENAMED[renamed[0]]))
    bad = [s for s in schemes if s not in SCHEMES]
    if bad or not schemes:
        p.error("--schemes: unknown scheme(s) %s (choose from %s)"
                % (",".join(bad) or "(none)", ",".join(ORDER)))
    for s in schemes:
        why = unavailable(s, a.qos, weights)
        if why:
            p.error("--schemes: %s" % why)
    schemes = tuple(s for s in ORDER if s in schemes)
    # Each option checked here, where it enters: a value out of range is
    # refused naming it, never replaced by the default (an explicit 0 is
    # not "unset").
    rate = (PROFILES[a.profile]["default_rate_mbit"] if a.rate_mbit is None
            else a.rate_mbit)
    if not 0 < rate <= 100000:
        p.error("--rate-mbit %g: must be above 0 and at most 100000"
                % rate)
    if not 0 < a.load < 1:
        p.error("--load %g: must be in (0, 1)" % a.load)
    reps = MODES[mode]["reps"] if a.reps is None else a.reps
    if not 1 <= reps <= 1000:
        p.error("--reps %d: must be 1..1000 (a repetition runs every "
                "trial of the plan once)" % reps)
    if a.seed < 0:
        p.error("--seed %d: must be 0 or more (repetition r runs with "
                "seed + r)" % a.seed)
    queue_pkts = (queue_pkts_for(rate * 1e6) if a.queue_pkts is None
                  else a.queue_pkts)
    if queue_pkts < 2:
        p.error("--queue-pkts %d: must be at least 2" % queue_pkts)
    if a.ecn_threshold < 0:
        p.error("--ecn-threshold %d: must be 0 (off) or more"
                % a.ecn_threshold)
    if a.warmup is not None and not 0 <= a.warmup <= 600:
        p.error("--warmup %g: must be 0..600 seconds" % a.warmup)
    if a.qos == "panda-sched" and not (
            0 <= a.ecn_threshold < queue_pkts * FRAME):
        p.error("--ecn-threshold %d: must be 0 (off) or below the buffer, "
                "%d packets = %d bytes" % (a.ecn_threshold, queue_pkts,
                                           queue_pkts * FRAME))
    if not 0 <= a.guard <= 500:
        p.error("--guard %d: must be 0..500 permille" % a.guard)
    if a.ports != "system" and a.qos != "panda-sched":
        p.error("--ports %s needs --qos panda-sched: %s sends around the "
                "kernel's qdiscs, so linux-htb would shape nothing"
                % (a.ports, {"afxdp": "AF_XDP", "dpdk": "DPDK"}[a.ports]))
    if a.ports == "system" and (a.pmd_maxsleep is not None
                                or a.pmd_cpu_mask is not None):
        p.error("--pmd-maxsleep and --pmd-cpu-mask need --ports afxdp or "
                "dpdk (system ports are not served by PMD threads)")
    tso = PROFILES[a.profile]["tso"]
    ports = PortConfig(type=a.ports, pmd_cpu_mask=a.pmd_cpu_mask,
                       pmd_maxsleep_us=DEFAULT_PMD_MAXSLEEP_US
                       if a.pmd_maxsleep is None else a.pmd_maxsleep,
                       tso=tso)
    if not ports.pmd:
        ports = PortConfig(tso=tso)
    why = ports.problem()
    if why:
        p.error("--ports %s --profile %s: %s" % (a.ports, a.profile, why))
    if a.burst is not None and (a.qos != "panda-sched"
                                or a.burst < 0 or 0 < a.burst < FRAME):
        p.error("--burst %d: needs --qos panda-sched and at least one "
                "frame, %d bytes (0: the datapath's default)"
                % (a.burst, FRAME))
    if a.ecn_backlog == "ahead" and not (a.qos == "panda-sched"
                                         and a.ecn_threshold > 0):
        p.error("--ecn-backlog ahead: needs --qos panda-sched and an ECN "
                "threshold (--ecn-threshold above 0); nothing is marked "
                "otherwise")
    burst = (0 if a.qos != "panda-sched" else
             SCHED_BURST if a.burst is None else a.burst)
    qos = QosConfig(type=a.qos, rate_bps=int(rate * 1e6),
                    levels=PROFILES[a.profile]["levels"],
                    queue_pkts=queue_pkts,
                    buffer_bytes=PROFILES[a.profile]["tso"],
                    ecn_threshold=a.ecn_threshold if a.qos == "panda-sched"
                    else 0, guard_permille=a.guard, burst_bytes=burst,
                    ecn_ahead=a.ecn_backlog == "ahead")
    if a.fct_window is not None and not 0 < a.fct_window <= 3600:
        p.error("--fct-window %g: must be above 0 and at most 3600 seconds"
                % a.fct_window)
    window = a.fct_window or MODES[mode]["fct_window_s"]
    grace = (window / 2 if a.fct_window
             else MODES[mode]["fct_grace_s"])
    try:
        wl = workloads.load(a.workload)
    except workloads.WorkloadError as e:
        p.error("--workload: %s" % e)
    if not 0 <= a.iperf3_streams <= 128:
        p.error("--iperf3-streams %d: must be 0..128" % a.iperf3_streams)
    if a.goodput_check is not None and not 0 <= a.goodput_check <= 3600:
        p.error("--goodput-check must be 0..3600 seconds")
    if not 0 <= a.flt_level0 <= 1:
        p.error("--flt-level0 %g: must be in [0, 1]" % a.flt_level0)
    check_s = (a.goodput_check if a.goodput_check is not None
               else MODES[mode]["goodput_check_s"])
    if a.stop_after is not None and a.stop_after <= 0:
        p.error("--stop-after: must be positive")
    if a.allow_code_change and not a.resume:
        p.error("--allow-code-change: only with --resume")
    if a.resume and a.calibrate:
        p.error("--resume: not with --calibrate (a calibration is not a "
                "run of the experiments)")
    calibrate = None
    if a.calibrate:
        try:
            calibrate = tuple(float(r) for r in a.calibrate.split(","))
        except ValueError:
            p.error("--calibrate: expected rates in Mbit/s, e.g. 25,50,100")
        if not all(0 < r <= 100000 for r in calibrate):
            p.error("--calibrate %s: every rate must be above 0 and at most "
                    "100000 Mbit/s" % a.calibrate)
    if a.dry_run and a.calibrate:
        p.error("--dry-run: not with --calibrate (the plan is the "
                "experiments')")
    return RunConfig(
        mode=mode, schemes=schemes,
        build_dir=(paths.dpdk_build_dir() if a.ports == "dpdk"
                   else paths.build_dir()) if a.build_dir is None
        else os.path.abspath(a.build_dir),
        out=os.path.abspath(a.out), rate_mbit=rate, seed=a.seed, reps=reps,
        policy=a.policy, profile=a.profile,
        ccs=ccs,
        load=a.load, queue_pkts=queue_pkts, qos=qos, ports=ports,
        datapath=a.datapath,
        warmup_s=MODES[mode]["warmup_s"] if a.warmup is None else a.warmup,
        fct_window_s=window,
        fct_grace_s=grace, run_id=a.run_id,
        plots=not a.no_plots, calibrate=calibrate, workload=wl,
        iperf3_streams=a.iperf3_streams, goodput_check_s=check_s,
        mc_interval_us=int(round(a.mc_interval * 1e6)),
        flt_level0=a.flt_level0, flt_bound=a.flt_bound, weights=weights,
        threshold_units=units,
        argv=tuple(argv), resume=a.resume,
        stop_after_s=a.stop_after,
        allow_code_change=a.allow_code_change, dry_run=a.dry_run)


# -- what a run's results depend on ------------------------------------
# Every setting of a RunConfig that changes results: (key in result.json's
# metadata.config.settings, the option that sets it, its value).  --resume
# refuses a command line whose settings differ from the run's in any of
# them (resume.py).  Not here, because they do not change what a trial
# measures (testbed/README.md, "Runs over several sessions"):
#   --reps          the run's, kept in metadata.config.reps; it may grow:
#                   repetition r runs with seed + r whenever it runs, so the
#                   repetitions added later are those a longer run would
#                   have had (experiments.plan);
#   --build-dir, --no-plots, --stop-after, --allow-code-change, --dry-run
#                   the session's (another machine's tree; the code
#                   itself is checked apart, resume.code_state());
#   --out, --run-id the run's directory is --resume's.
SETTINGS = (
    ("mode", "--quick/--headline/--full", lambda c: c.mode),
    ("schemes", "--schemes", lambda c: list(c.schemes)),
    # What each scheme is made of, not only its name: a name may come to
    # mean another egress (panda had per-flow queues until 2026-11-27),
    # and a run must not mix the two.  fq_codel only where it is on, as
    # runs recorded before the field existed have it.
    ("scheme_egress", "--schemes", lambda c: {
        s: {f: getattr(SCHEMES[s], f) for f in EGRESS_FIELDS
            if f != "fq_codel" or SCHEMES[s].fq_codel}
        for s in c.schemes}),
    ("profile", "--profile", lambda c: c.profile),
    ("rate_mbit", "--rate-mbit", lambda c: c.rate_mbit),
    ("seed", "--seed", lambda c: c.seed),
    ("cc", "--cc", lambda c: list(c.ccs)),
    ("load", "--load", lambda c: c.load),
    ("queue_pkts", "--queue-pkts", lambda c: c.queue_pkts),
    ("qos", "--qos", lambda c: c.qos.type),
    ("datapath", "--datapath", lambda c: c.datapath),
    ("levels", "--profile", lambda c: c.qos.levels),
    ("buffer_bytes", "--profile", lambda c: c.qos.buffer_bytes),
    ("ecn_threshold", "--ecn-threshold", lambda c: c.qos.ecn_threshold),
    ("ecn_backlog", "--ecn-backlog",
     lambda c: "ahead" if c.qos.ecn_ahead else "port"),
    ("guard_permille", "--guard", lambda c: c.qos.guard_permille),
    ("burst_bytes", "--burst", lambda c: c.qos.burst_bytes),
    ("ports", "--ports", lambda c: c.ports.type),
    ("pmd_cpu_mask", "--pmd-cpu-mask", lambda c: c.ports.pmd_cpu_mask),
    ("pmd_maxsleep_us", "--pmd-maxsleep", lambda c: c.ports.pmd_maxsleep_us),
    ("tso", "--profile", lambda c: c.ports.tso),
    ("warmup_s", "--warmup", lambda c: c.warmup_s),
    ("fct_window_s", "--fct-window", lambda c: c.fct_window_s),
    ("fct_grace_s", "--fct-window", lambda c: c.fct_grace_s),
    ("workload_sha256", "--workload", lambda c: c.workload.sha256),
    ("iperf3_streams", "--iperf3-streams", lambda c: c.iperf3_streams),
    ("mc_interval_us", "--mc-interval", lambda c: c.mc_interval_us),
    ("goodput_check_s", "--goodput-check", lambda c: c.goodput_check_s),
    ("flt_level0", "--flt-level0", lambda c: c.flt_level0),
    ("flt_bound", "--flt-bound", lambda c: c.flt_bound),
    ("weights", "--profile", lambda c: c.weights),
    ("threshold_units", "--threshold-units", lambda c: c.threshold_units),
    ("policy", "--policy", lambda c: c.policy),
)

# Settings added after runs were recorded without them: the value such a
# run had (check_settings() in resume.py reads a missing key as this).
SETTING_DEFAULTS = {"datapath": "userspace"}

# The format of metadata.config; --resume refuses any other.  2: --cc
# names conditions (conditions.py), and "cubic" no longer negotiates ECN
# where the egress marks (format 1 ran ECN-CUBIC under that name), so a
# format-1 run continued now would mix two conditions under one name.
CONFIG_FORMAT = 2


# Settings added after runs were recorded, and the value the older runs
# had without the option: a record that lacks the key ran with it.
LEGACY = {"ecn_backlog": "port", "mc_interval_us": 0}


def settings(cfg):
    """{key: value} of SETTINGS for 'cfg', as JSON gives it back (lists,
    not tuples), so that a recorded copy compares equal."""
    return json.loads(json.dumps({k: get(cfg) for k, _, get in SETTINGS}))


def option_of(key):
    """The command-line option behind a SETTINGS key."""
    return next(opt for k, opt, _ in SETTINGS if k == key)


def record(cfg, prog, code):
    """result.json's metadata.config: what --resume needs to continue the
    run and check a command line against it.  'code': resume.code_state()
    at the start."""
    return {"format": CONFIG_FORMAT, "prog": prog, "argv": list(cfg.argv),
            "reps": cfg.reps, "settings": settings(cfg), "code": code}


_UNSET = object()


def explicit_options(make_parser, argv):
    """{dest: value} of the options 'argv' gives explicitly (not the
    defaults) for the parser make_parser() builds."""
    p = make_parser()
    p.set_defaults(**{d: _UNSET for d in vars(make_parser().parse_args([]))})
    return {d: v for d, v in vars(p.parse_args(argv)).items()
            if v is not _UNSET}

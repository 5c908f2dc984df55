"""The testbed runner: stage 1 (collection), stage 2 (model), stage 3 (the
experiments), aggregation and output.  testbed/run.py is its command line;
testbed/README.md documents both."""

import argparse
import datetime
import glob
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time

from . import experiments, model, report, stats
from .profiles import PROFILES, queue_pkts_for
from .topology import TOP, Testbed, TestbedError
from .trial import run_trial

SCHEMES = ("fifo", "pias", "panda")


class Interrupted(Exception):
    pass


def default_out():
    return os.path.join(TOP, "results")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="testbed/run.py",
        description="Panda vs PIAS vs FIFO on one machine (thesis ch. 5): "
        "OVS (userspace datapath) in a private network namespace, PM1/PM2 "
        "as namespaces, memcached against web-search flows on a shaped "
        "K-level egress.  Needs root.")
    m = p.add_mutually_exclusive_group()
    m.add_argument("--quick", dest="mode", action="store_const",
                   const="quick", help="one point of (a) and (c), 1 "
                   "repetition: a few minutes (default)")
    m.add_argument("--full", dest="mode", action="store_const",
                   const="full", help="the complete figures (hours)")
    p.add_argument("--schemes", default="fifo,pias,panda",
                   help="comma-separated subset of fifo,pias,panda")
    p.add_argument("--build-dir", default=os.environ.get(
        "PANDA_BUILD_DIR", os.path.join(TOP, "_build")),
        help="build tree with OVS, load_generator and tools "
        "(default $PANDA_BUILD_DIR or <repo>/_build, where ./build.sh "
                   "builds)")
    p.add_argument("--out", default=default_out(),
                   help="results directory (default %(default)s); the run "
                   "goes to OUT/<run-id>/")
    p.add_argument("--rate-mbit", type=float, help="bottleneck rate "
                   "(default: the profile's calibrated rate, 50)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--reps", type=int, help="repetitions (default: quick "
                   "1, full 10; with 3 or more min and max are dropped)")
    p.add_argument("--policy", help="reuse a saved policy.json (skips "
                   "stages 1 and 2)")
    p.add_argument("--profile", default="1g", choices=sorted(PROFILES))
    p.add_argument("--cc", default="cubic,dctcp",
                   help="congestion control algorithms to run (default "
                   "cubic,dctcp; dctcp rows are reported unavailable when "
                   "the kernel lacks it)")
    p.add_argument("--load", type=float, default=0.8,
                   help="load rho given to the model (thesis: 14 flows is "
                   "about 0.8)")
    p.add_argument("--queue-pkts", type=int,
                   help="per-queue buffer in packets (default: scaled with "
                   "the rate, 1000 at 1 Gbit/s)")
    p.add_argument("--warmup", type=float, help="seconds of load before "
                   "the memcached client starts")
    p.add_argument("--run-id", help="name of the run directory")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--calibrate", metavar="RATES",
                   help="instead of the experiments, measure a top-priority "
                   "memcached unloaded and against 14 flows at these rates "
                   "(Mbit/s, comma-separated)")
    a = p.parse_args(argv)
    a.mode = a.mode or "quick"
    a.schemes = [s.strip() for s in a.schemes.split(",") if s.strip()]
    bad = [s for s in a.schemes if s not in SCHEMES]
    if bad or not a.schemes:
        p.error("--schemes: unknown scheme(s) %s (choose from %s)"
                % (",".join(bad) or "(none)", ",".join(SCHEMES)))
    a.ccs = [c.strip() for c in a.cc.split(",") if c.strip()]
    prof = PROFILES[a.profile]
    a.rate_mbit = a.rate_mbit or prof["default_rate_mbit"]
    if a.rate_mbit <= 0:
        p.error("--rate-mbit must be positive")
    if not 0 < a.load < 1:
        p.error("--load must be in (0, 1)")
    a.reps = a.reps or experiments.MODES[a.mode]["reps"]
    if a.reps < 1:
        p.error("--reps must be at least 1")
    a.queue_pkts = a.queue_pkts or queue_pkts_for(a.rate_mbit * 1e6)
    a.warmup = a.warmup or experiments.MODES[a.mode]["warmup_s"]
    return a


# -- metadata --------------------------------------------------------------
def patch_hash():
    """sha256 over the names and contents of ovs-patches/* (sorted)."""
    h = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(TOP, "ovs-patches", "*"))):
        if os.path.isfile(path):
            h.update(os.path.basename(path).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def git_state():
    try:
        head = subprocess.run(["git", "-C", TOP, "rev-parse", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", TOP, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True).stdout
        return {"commit": head or None, "dirty": bool(dirty.strip())}
    except OSError:
        return {"commit": None, "dirty": None}


def read_sysctl(name):
    try:
        with open("/proc/sys/" + name.replace(".", "/")) as f:
            return f.read().strip()
    except OSError:
        return None


def cc_availability(cc):
    """None if the kernel can run 'cc', else the reason why not."""
    avail = (read_sysctl("net.ipv4.tcp_available_congestion_control")
             or "").split()
    if cc in avail:
        return None
    modprobe = shutil.which("modprobe") or "/sbin/modprobe"
    try:
        res = subprocess.run([modprobe, "tcp_%s" % cc], capture_output=True,
                             text=True, timeout=30)
        why = "modprobe tcp_%s: %s" % (cc, (res.stderr.strip() or "exit %d"
                                            % res.returncode))
    except (OSError, subprocess.TimeoutExpired) as e:
        why = "modprobe tcp_%s: %s" % (cc, e)
    avail = (read_sysctl("net.ipv4.tcp_available_congestion_control")
             or "").split()
    if cc in avail:
        return None
    return ("unavailable: kernel has no %s (tcp_available_congestion_control:"
            " %s; %s)" % (cc, " ".join(avail), why))


# -- the run ---------------------------------------------------------------
class Run:
    def __init__(self, args, log=print):
        self.a = args
        self.log = log
        self.prof = PROFILES[args.profile]
        self.run_id = args.run_id or "%s-%s-%gm" % (
            datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y%m%d-%H%M%S"), args.mode, args.rate_mbit)
        self.dir = os.path.join(os.path.abspath(args.out), self.run_id)
        self.result = None

    def preflight(self):
        if os.geteuid() != 0:
            raise TestbedError("needs root (network namespaces, OVS)")
        need = ["ovs/build/vswitchd/ovs-vswitchd",
                "ovs/build/ovsdb/ovsdb-server",
                "ovs/build/utilities/ovs-vsctl",
                "load_generator/panda-fg-server",
                "load_generator/panda-fg-client",
                "load_generator/panda-mc-client"]
        if not self.a.policy and set(self.a.schemes) & {"pias", "panda"}:
            need.append("tools/panda-model")
        missing = [n for n in need
                   if not os.access(os.path.join(self.a.build_dir, n),
                                    os.X_OK)]
        if missing:
            raise TestbedError("not built in %s: %s (run make there)"
                               % (self.a.build_dir, ", ".join(missing)))
        for prog in ("memcached", "tcpdump", "ethtool", "tc", "ss"):
            if not shutil.which(prog):
                raise TestbedError("%s not found (run ./install-deps.sh)"
                                   % prog)

    def metadata(self, tb):
        return {
            "run_id": self.run_id,
            "mode": self.a.mode,
            "argv": sys.argv,
            "started_utc": datetime.datetime.now(
                datetime.timezone.utc).isoformat(),
            "host": platform.node(),
            "kernel": platform.release(),
            "cpus": os.cpu_count(),
            "loadavg_at_start": os.getloadavg(),
            "ovs_version": tb.ovs_version(),
            "ovs_patch_sha256": patch_hash(),
            "git": git_state(),
            "build_dir": os.path.abspath(self.a.build_dir),
            "profile": self.a.profile,
            "profile_description": self.prof["description"],
            "link_rate_mbit": self.a.rate_mbit,
            "link_rate_note": "the thesis ran 1 Gbit/s; the rate is scaled "
                              "down so the 2-core CPU is not the bottleneck "
                              "(testbed/README.md, Calibration)",
            "queue_pkts": self.a.queue_pkts,
            "levels": tb.levels,
            "mtu": tb.mtu,
            "offloads": tb.offload_state(),
            "congestion_control_host_default": read_sysctl(
                "net.ipv4.tcp_congestion_control"),
            "congestion_control_method": "per-route congctl on "
                                         "10.0.0.0/24 in PM1 and PM2",
            "seed": self.a.seed,
            "reps": self.a.reps,
            "warmup_s": self.a.warmup,
            "load_rho_for_model": self.a.load,
            "memcached_version": _cmd_out(["memcached", "-V"]),
            "schemes": self.a.schemes,
        }

    def save(self):
        os.makedirs(self.dir, exist_ok=True)
        tmp = os.path.join(self.dir, ".result.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.result, f, indent=1, sort_keys=False)
        os.replace(tmp, os.path.join(self.dir, "result.json"))

    def execute(self):
        a = self.a
        self.preflight()
        os.makedirs(self.dir, exist_ok=True)
        t_start = time.time()
        self.log("panda testbed: run %s -> %s" % (self.run_id, self.dir))
        self.result = {"metadata": None, "policy": None, "collection": None,
                       "trials": [], "unavailable": [], "summary": None}
        ccs = []
        for cc in a.ccs:
            why = cc_availability(cc)
            if why:
                self.log("  %s: %s" % (cc, why))
                for s in a.schemes:
                    self.result["unavailable"].append(
                        {"cc": cc, "scheme": s, "status": why})
            else:
                ccs.append(cc)
        trials = experiments.plan(a.mode, a.schemes, a.reps, ccs)
        self.total = len(trials)
        policy = None
        if a.policy and set(a.schemes) & {"pias", "panda"}:
            policy = model.load_policy(a.policy)
            policy["source"] = os.path.abspath(a.policy)
            self.result["policy"] = policy
        for cc in ccs:
            cc_trials = [t for t in trials if t["cc"] == cc]
            with Testbed(a.build_dir, a.rate_mbit * 1e6,
                         levels=self.prof["levels"], mtu=self.prof["mtu"],
                         cc=cc, queue_pkts=a.queue_pkts) as tb:
                if self.result["metadata"] is None:
                    self.result["metadata"] = self.metadata(tb)
                    self.log("  kernel %s, %s, link %g Mbit/s, %d queues of "
                             "%d packets, offloads off, cc %s" % (
                                 platform.release(),
                                 self.result["metadata"]["ovs_version"],
                                 a.rate_mbit, tb.levels, a.queue_pkts,
                                 ",".join(ccs)))
                panda_ok = tb.panda_available()
                if policy is None and set(a.schemes) & {"pias", "panda"}:
                    policy = self.stage_collect_model(tb, cc_trials)
                self.stage_experiments(tb, cc_trials, policy, panda_ok,
                                       len(trials))
        if self.result["metadata"] is None:
            self.result["metadata"] = {"run_id": self.run_id,
                                       "kernel": platform.release()}
        self.result["summary"] = report.aggregate(self.result["trials"])
        self.result["metadata"]["runtime_s"] = time.time() - t_start
        self.save()
        report.write_csv(self.result, os.path.join(self.dir, "result.csv"))
        if not a.no_plots:
            try:
                from . import plots
                made = plots.plot_all(self.result, self.dir)
                self.result["plots"] = made
                self.save()
            except Exception as e:  # plotting must not lose the data
                self.log("warning: plots failed: %s" % e)
        self.log("")
        self.log(report.table(self.result))
        failed = [t for t in self.result["trials"] if t["status"] != "ok"]
        self.log("run %s: %d trials, %d failed, %.0f s; results in %s"
                 % (self.run_id, len(self.result["trials"]), len(failed),
                    time.time() - t_start, self.dir))
        return 1 if failed or not self.result["trials"] else 0

    # -- stage 1 + 2 -----------------------------------------------------
    def stage_collect_model(self, tb, trials):
        """Collection on the first fifo trial of the plan at the (a)
        concurrency, or a dedicated fifo trial; then panda-model."""
        a = self.a
        conc = experiments.MODES[a.mode]["a_concurrency"]
        # The fifo trial at the (a) concurrency with the most requests (the
        # most memcached samples), moved to the front of the plan.
        cands = [t for t in trials if t["scheme"] == "fifo"
                 and t["concurrency"] == conc and t["rep"] == 0]
        host = max(cands, key=lambda t: t["requests"]) if cands else None
        self.log("stage 1: collection (packet sizes sent by PM2, FLT and "
                 "FHT captured separately, scheme fifo)")
        if host is not None:
            trials.remove(host)
            trials.insert(0, host)
            host["collect"] = True
            res = self.one_trial(tb, host, None, 1, self.total)
            cdir = res["dir"]
        else:
            c, r = experiments.COLLECT_POINT
            t = {"cc": tb.cc, "scheme": "fifo", "concurrency": c,
                 "requests": r, "rep": 0, "experiments": ["collection"],
                 "collect": True}
            res = self.trial_exec(tb, t, None)
            cdir = res["dir"]
            if res["status"] != "ok":
                raise TestbedError("collection trial failed: %s"
                                   % res["status"])
        flt = os.path.join(cdir, "flt.pcap")
        fht = os.path.join(cdir, "fht.pcap")
        from .topology import FG_PORT, MEMCACHED_PORT
        coll = {"trial_dir": cdir, "flt_pcap": flt, "fht_pcap": fht,
                "where": "PM2 eth0 (sending side), TSO/GSO off: sizes "
                         "before segmentation are the wire sizes",
                "flt": model.sample_summary(flt, MEMCACHED_PORT),
                "fht": model.sample_summary(fht, FG_PORT),
                "trial": {k: res.get(k) for k in (
                    "scheme", "concurrency", "requests", "status",
                    "memcached", "overlap")}}
        self.result["collection"] = coll
        self.log("  FLT %d packets (mean payload %.0f B), FHT %d packets "
                 "(mean payload %.0f B)" % (
                     coll["flt"].get("packets", 0),
                     coll["flt"].get("mean_payload") or 0,
                     coll["fht"].get("packets", 0),
                     coll["fht"].get("mean_payload") or 0))
        self.log("stage 2: model (panda-model, web-search CDF, rho %g, K %d)"
                 % (a.load, tb.levels))
        pol = model.run_model(a.build_dir, flt, fht, a.load, tb.levels,
                              self.dir, log=self.log)
        pol["source"] = "model"
        with open(os.path.join(self.dir, "policy.json"), "w") as f:
            json.dump({"panda": {"action": pol["panda"]["action"]},
                       "pias": {"action": pol["pias"]["action"]},
                       "collection": {k: v for k, v in coll.items()
                                      if k in ("flt", "fht")},
                       "load": a.load, "levels": tb.levels}, f, indent=1)
        self.result["policy"] = pol
        self.save()
        return pol

    # -- stage 3 ---------------------------------------------------------
    def stage_experiments(self, tb, trials, policy, panda_ok, total):
        self.log("stage 3: experiments (%d trials)" % len(trials))
        for t in trials:
            if t.get("done"):
                continue
            n = len(self.result["trials"]) + 1
            self.one_trial(tb, t, policy, n, total, panda_ok=panda_ok)

    def one_trial(self, tb, t, policy, n, total, panda_ok=True):
        self.log("[%d/%d] %-5s %-5s flows %2d requests %5d rep %d ..." % (
            n, total, t["cc"], t["scheme"], t["concurrency"], t["requests"],
            t["rep"] + 1))
        if t["scheme"] != "fifo" and not panda_ok:
            res = dict(t, status="failed: this OVS build has no panda "
                       "action (ovs-appctl panda/show missing)")
        elif t["scheme"] != "fifo" and not policy:
            res = dict(t, status="failed: no policy")
        else:
            res = self.trial_exec(tb, t, policy)
        res.update({k: t[k] for k in ("rep", "experiments")})
        t["done"] = True
        self.result["trials"].append(res)
        self.save()
        mc = res.get("memcached") or {}
        self.log("      %s  memcached p50 %s p90 %s p99 %s ms  %s  (%.0f s)"
                 % (res["status"] if res["status"] != "ok" else "ok",
                    _f(mc.get("p50_ms")), _f(mc.get("p90_ms")),
                    _f(mc.get("p99_ms")),
                    _levels_str(res.get("memcached_levels")),
                    res.get("elapsed_s") or 0))
        return res

    def trial_exec(self, tb, t, policy):
        action = None
        dmap = [0]          # fifo: no DSCP written, one queue
        if t["scheme"] in ("pias", "panda"):
            action = policy[t["scheme"]]["action"]
            dmap = model.dscp_map(action, tb.levels)
        tb.set_scheme(t["scheme"], action)
        time.sleep(1.0)     # let the previous trial's queues drain
        wdir = os.path.join(self.dir, "trials", "%s-%s-c%d-r%d-rep%d" % (
            t["cc"], t["scheme"], t["concurrency"], t["requests"],
            t["rep"] + 1))
        seed = self.a.seed + t["rep"]
        mode = experiments.MODES[self.a.mode]
        cfg = {"warmup_s": self.a.warmup, "keys": 200,
               "mc_timeout_s": 1800,
               "fct_window_s": 0.0, "fct_grace_s": 0.0}
        if "c" in t.get("experiments", ()):
            # Experiment (c): a fixed FCT window, the same for every scheme.
            cfg["fct_window_s"] = mode["fct_window_s"]
            cfg["fct_grace_s"] = mode["fct_grace_s"]
        res = run_trial(tb, cfg, t["scheme"], t["concurrency"],
                        t["requests"], seed, wdir,
                        policy_id=(model.PANDA_ID if t["scheme"] == "panda"
                                   else model.PIAS_ID
                                   if t["scheme"] == "pias" else None),
                        dscp_map=dmap, collect=t.get("collect", False),
                        log=self.log)
        if action:
            res["policy_action"] = action
        return res


def _f(v):
    return "-" if v is None else "%.2f" % v


def _levels_str(lv):
    if not lv:
        return ""
    return "levels " + " ".join("%s:%d" % kv for kv in lv.items())


def _cmd_out(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)

    def on_term(sig, frame):
        raise Interrupted("signal %d" % sig)
    signal.signal(signal.SIGTERM, on_term)
    # A shell starts background jobs with SIGINT ignored; clean up on it
    # all the same.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if args.calibrate:
        return calibrate_main(args)
    run = Run(args, log=lambda m: print(m, flush=True))
    try:
        return run.execute()
    except (TestbedError, model.ModelError) as e:
        print("testbed/run.py: %s" % e, file=sys.stderr)
        if run.result is not None:
            run.result.setdefault("error", str(e))
            run.save()
        return 1
    except (KeyboardInterrupt, Interrupted) as e:
        print("testbed/run.py: interrupted (%s); partial results in %s"
              % (e or "Ctrl-C", run.dir), file=sys.stderr)
        if run.result is not None:
            run.result["error"] = "interrupted"
            run.save()
        return 130


def calibrate_main(args):
    from .calibrate import calibrate
    if os.geteuid() != 0:
        print("testbed/run.py: needs root", file=sys.stderr)
        return 1
    try:
        rates = [float(r) for r in args.calibrate.split(",")]
    except ValueError:
        print("testbed/run.py: --calibrate: expected rates in Mbit/s, e.g. "
              "25,50,100", file=sys.stderr)
        return 1
    run_id = args.run_id or "calibrate-" + datetime.datetime.now(
        datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = os.path.join(os.path.abspath(args.out), run_id)
    os.makedirs(out, exist_ok=True)
    rows = calibrate(args.build_dir, rates, 14, 3000, out, seed=args.seed,
                     warmup_s=args.warmup,
                     log=lambda m: print(m, flush=True))
    with open(os.path.join(out, "calibration.json"), "w") as f:
        json.dump({"kernel": platform.release(), "cpus": os.cpu_count(),
                   "rows": rows}, f, indent=1)
    print("calibration written to %s" % os.path.join(out,
                                                     "calibration.json"))
    return 0

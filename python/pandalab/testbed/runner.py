"""The testbed runner: stage 1 (collection), stage 2 (model), stage 3 (the
experiments), aggregation and output.  testbed/run.py launches main();
testbed/README.md documents both."""

import contextlib
import dataclasses
import datetime
import fcntl
import glob
import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time

from pandaovs import cli, paths
from .. import cc as ccs
from .. import console, figures, iperf3
from ..lab import FG_PORT, MEMCACHED_PORT
from ..sandbox import is_root
from . import (conditions, config, experiments, goodput, model, report,
               resume, targets)
from .config import EXIT_STOPPED, TrialConfig
from .profiles import PROFILES
from .schemes import FRAME, SCHEMES
from .topology import Testbed, TestbedError
from .trial import run_trial

TOP = paths.TOP


class Interrupted(BaseException):
    """SIGTERM (handle_signals()).  A BaseException, as KeyboardInterrupt
    is: the handlers that keep a run going past a failed measurement
    (except Exception: the goodput check, the plots) must not swallow it
    and let the run carry on."""


class Stopped(Exception):
    """--stop-after: the session's time is up (Run.check_deadline())."""


def trial_key(t):
    """What identifies a trial of the plan: a run holds at most one
    record of each in "trials"."""
    return (t["cc"], t["scheme"], t["concurrency"], t["requests"], t["rep"])


# -- metadata --------------------------------------------------------------
def patch_hash():
    """sha256 over the names and contents of ovs-patches/* and of the files
    the series adds, ovs-ext/** (sorted)."""
    h = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(TOP, "ovs-patches", "*"))):
        if os.path.isfile(path):
            h.update(os.path.basename(path).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
    ext = os.path.join(TOP, "ovs-ext")
    for path in sorted(glob.glob(os.path.join(ext, "**"), recursive=True)):
        if os.path.isfile(path):
            h.update(os.path.relpath(path, TOP).encode() + b"\0")
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


def cc_session(algorithm, build_dir, log):
    """Makes TCP congestion control 'algorithm' runnable for the 'with'
    block and yields its pandalab.cc.Implementation: the kernel's, or the
    BPF DCTCP of 'build_dir' registered for the block and unregistered
    after it; pandalab.cc.CcUnavailable says why neither can run."""
    return ccs.session(algorithm, build=paths.BuildTree(build_dir), log=log)


# -- the run ---------------------------------------------------------------
class Run:
    """One testbed run as configured by 'cfg' (a config.RunConfig)."""

    def __init__(self, cfg, log=print, testbed=None, prog="testbed/run.py",
                 previous=None, clock=time.monotonic, console=None):
        """'testbed': makes the topology of one congestion control,
        testbed(cfg, cc, mtu) -> a started-by-'with' Testbed (default the
        namespace testbed; pandalab.mininet passes its own); 'prog': the
        command recorded in the metadata; 'previous': the result.json of
        the run this one continues (resume.prepare()); 'clock': seconds,
        what --stop-after counts in; 'console': a pandalab.console.Console
        for the progress line and the trials' notes (None: notes are
        log lines)."""
        self.cfg = cfg
        self.console = console
        self.plan = []          # the plan's trials (experiments.plan)
        self.previous = previous
        self.clock = clock
        self.deadline = None
        self.segment = None     # this session's metadata.segments record
        self.done = 0           # trials of the plan done (ok)
        self.total = 0          # trials in the plan
        self.log = log
        self.testbed = testbed or (lambda cfg, cc, mtu: Testbed(
            cfg.build_dir, cfg.qos, mtu=mtu, cc=cc, ports=cfg.ports,
            datapath=cfg.datapath))
        self.prog = prog
        self.prof = PROFILES[cfg.profile]
        self.build = paths.BuildTree(cfg.build_dir)
        self.run_id = cfg.run_id or "%s-%s-%gm" % (
            datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y%m%d-%H%M%S"), cfg.mode, cfg.rate_mbit)
        self.dir = os.path.join(cfg.out, self.run_id)
        self.result = None
        self.policies = None        # {"panda": Policy, "pias": Policy}
        # The workload's checked bytes, copied into the run directory:
        # what the model and the load generator read (execute()).
        self.cdf = None
        # The congestion controls in use: {condition: pandalab.cc.
        # Implementation}, registered for the run by 'cc_stack' (closed
        # when execute() returns or raises, which unregisters what the run
        # registered).
        self.cc_impls = {}
        self.cc_stack = None

    def preflight(self):
        if not is_root():
            raise TestbedError("needs root (network namespaces, OVS)")
        need = ["ovs/build/vswitchd/ovs-vswitchd",
                "ovs/build/ovsdb/ovsdb-server",
                "ovs/build/utilities/ovs-vsctl"]
        need += ["load_generator/" + p for p in paths.BuildTree.LOADGEN]
        if (self.cfg.modeled_schemes and not self.cfg.policy
                and (self.previous or {}).get("policy") is None):
            need.append("tools/panda-model")
        missing = self.build.missing(need)
        if missing:
            raise TestbedError("not built in %s: %s (run make there)"
                               % (self.build.root, ", ".join(missing)))
        for prog in ("memcached", "tcpdump", "ethtool", "tc", "ss"):
            if not shutil.which(prog):
                raise TestbedError("%s not found (run ./install-deps.sh)"
                                   % prog)
        if self.cfg.iperf3_streams and iperf3.unavailable():
            raise TestbedError("--iperf3-streams %d: %s" % (
                self.cfg.iperf3_streams, iperf3.unavailable()))

    def metadata(self, tb):
        c = self.cfg
        return {
            "run_id": self.run_id,
            "mode": c.mode,
            "argv": [self.prog] + list(c.argv),
            "topology": tb.topology(),
            "started_utc": datetime.datetime.now(
                datetime.timezone.utc).isoformat(),
            "host": platform.node(),
            "kernel": platform.release(),
            "cpus": os.cpu_count(),
            "loadavg_at_start": os.getloadavg(),
            "ovs_version": tb.ovs_version(),
            "ovs_patch_sha256": patch_hash(),
            "git": git_state(),
            "build_dir": c.build_dir,
            "profile": c.profile,
            "profile_description": self.prof["description"],
            "link_rate_mbit": c.rate_mbit,
            "link_rate_note": "the thesis ran %s; the rate is scaled "
                              "down so the 2-core CPU is not the bottleneck "
                              "(testbed/README.md, Calibration)"
                              % ("10 Gbit/s" if c.profile == "10g"
                                 else "1 Gbit/s"),
            "size_interval_weights": c.weights or "all ones",
            "threshold_units": c.threshold_units or "bytes",
            "queue_pkts": c.queue_pkts,
            "qos": self.qos_metadata(),
            "ports": tb.port_state(),
            "levels": tb.levels,
            "mtu": tb.mtu,
            "offloads": tb.offload_state(),
            "congestion_control_host_default": read_sysctl(
                "net.ipv4.tcp_congestion_control"),
            "congestion_control_method": "per-route congctl on "
                                         "10.0.0.0/24 and net.ipv4.tcp_ecn "
                                         "in PM1 and PM2 (conditions)",
            "conditions": self.conditions_metadata(),
            "seed": c.seed,
            "reps": c.reps,
            "warmup_s": c.warmup_s,
            "fct_window_s": c.fct_window_s,
            "fct_grace_s": c.fct_grace_s,
            "load_rho_for_model": c.load,
            "flt_level0_for_model": c.flt_level0,
            "flt_bound_for_model": c.flt_bound,
            "workload": c.workload.record(copy="workload.cdf"),
            "iperf3_background_streams": c.iperf3_streams,
            "memcached_interval_us": c.mc_interval_us,
            "memcached_version": _cmd_out(["memcached", "-V"]),
            "schemes": list(c.schemes),
            "scheme_descriptions": {s: SCHEMES[s].description
                                    for s in c.schemes},
        }

    def qos_metadata(self):
        q = self.cfg.qos
        md = {"type": q.type, "rate_bps": q.rate_bps, "levels": q.levels,
              "made_by": "panda-qos add --type %s (python/pandaovs/qos.py)"
                         % q.type}
        if q.type == "htb":
            md.update(buffer="%d packets per level (the leaf pfifo, from "
                      "the port's txqueuelen)" % q.queue_pkts,
                      ecn="none: linux-htb never marks; drop-tail")
        else:
            ecn = ("port ECN threshold %d bytes: CE on ECN-capable packets "
                   "that find more queued %s; which senders are ECN-capable "
                   "is each condition's (metadata.conditions), the others "
                   "see drop-tail" % (
                       q.ecn_threshold,
                       "ahead of them (their level and the levels above: "
                       "--ecn-backlog ahead)" if q.ecn_ahead
                       else "at the port (all levels)")
                   if q.marks else "off (--ecn-threshold 0): drop-tail")
            md.update(buffer="%d packets / %d bytes for the port, shared by "
                      "the levels" % (q.queue_pkts, q.queue_pkts * FRAME),
                      burst_bytes=q.burst_bytes or "datapath default (10 "
                      "ms at the rate)",
                      catch_up_bytes="scheduler default (10 ms at the "
                      "rate, at least the burst): a backlogged port whose "
                      "thread comes back late sends what the link would "
                      "have sent meanwhile, up to this much",
                      ecn_threshold_bytes=q.ecn_threshold,
                      ecn_backlog="ahead" if q.ecn_ahead else "port",
                      guard_permille_of_guarded_schemes=q.guard_permille,
                      ecn=ecn)
            if q.marks:
                md["ecn_threshold_decision"] = \
                    conditions.ecn_threshold_decision(
                        q.ecn_threshold, q.rate_bps,
                        {conc for conc, _ in
                         experiments.points(self.cfg.mode)})
        return md

    def conditions_metadata(self):
        """{condition: its record (conditions.Condition.record)} of every
        condition of the run, with the implementation of those that run."""
        c = self.cfg
        return {name: conditions.parse(name).record(
                    c.profile, c.qos.marks, self.cc_impls.get(name))
                for name in c.ccs}

    def save(self):
        os.makedirs(self.dir, exist_ok=True)
        tmp = os.path.join(self.dir, ".result.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.result, f, indent=1, sort_keys=False)
        os.replace(tmp, os.path.join(self.dir, "result.json"))

    def execute(self):
        """The run; whatever happens, the congestion controls it
        registered are unregistered before this returns or raises."""
        self.cc_stack = contextlib.ExitStack()
        with self.cc_stack:
            return self._execute()

    def _execute(self):
        c = self.cfg
        self.preflight()
        os.makedirs(self.dir, exist_ok=True)
        self.lock()
        self.t_start = time.time()
        if c.stop_after_s is not None:
            self.deadline = self.clock() + c.stop_after_s
        code = resume.code_state()
        if self.previous is None:
            self.start_result(code)
        else:
            self.resume_result()
        self.begin_segment(code)
        ccs = self.runnable_ccs()
        trials = experiments.plan(c.mode, c.schemes, c.reps, ccs)
        ok = {trial_key(t) for t in self.result["trials"]
              if t["status"] == "ok"}
        for t in trials:
            t["done"] = trial_key(t) in ok
        self.total = len(trials)
        self.done = sum(t["done"] for t in trials)
        self.plan = trials
        est = experiments.estimate(
            c, [t for t in trials if not t["done"]],
            measured=measured_seconds(self.result),
            collection=to_model(c, self.result),
            goodput=self.result["goodput_check"] is None)
        self.segment["planned_s"] = [round(x) for x in est]
        self.log("  plan: %d trials (%s), expected %s (testbed/run.py "
                 "--dry-run says how)" % (self.total, ", ".join(c.schemes),
                                          experiments.duration_range(est)))
        if self.previous is not None:
            self.log("  resumed (session %d): %d of %d trials done, %d to "
                     "run" % (self.segment["index"] + 1, self.done,
                              self.total, self.total - self.done))
        if self.result["policy"] is not None:
            # The run's policy, modelled (or read) in an earlier session:
            # a run has one policy, so never modelled again.
            self.use_policy(self.result["policy"])
            self.log("  policy: the run's own (result.json), not modelled "
                     "again")
        elif c.policy and c.modeled_schemes:
            record = model.load_policy(c.policy)
            record["source"] = os.path.abspath(c.policy)
            self.check_policy_workload(record)
            self.use_policy(record)
        self.save()
        try:
            for cc in ccs:
                cc_trials = [t for t in trials
                             if t["cc"] == cc and not t["done"]]
                if cc_trials:
                    self.check_deadline()
                    self.run_cc(cc, cc_trials)
        except Stopped as e:
            return self.finish(stopped=str(e))
        return self.finish()

    def run_cc(self, cc, trials):
        """The trials of congestion control 'cc' still to run, on one
        testbed (with stages 1 and 2 first if the run has no policy yet)."""
        c = self.cfg
        with self.testbed(c, cc, self.prof["mtu"]) as tb:
            md = self.result["metadata"]
            if "kernel" not in md:
                md.update(self.metadata(tb))
            if "ovs_version" not in self.segment:
                self.segment["ovs_version"] = tb.ovs_version()
                self.log("  kernel %s, %s, link %g Mbit/s, %s ports, "
                         "%s%s, %d levels, buffer %d %s %s, %s, "
                         "offloads %s" % (
                             platform.release(), self.segment["ovs_version"],
                             c.rate_mbit, ports_str(c.ports),
                             c.qos.type, " after the tc classifier on "
                             "the same port (OVS only forwards)"
                             if c.datapath == "bpf" else "", tb.levels,
                             c.queue_pkts * FRAME if c.qos.buffer_bytes
                             else c.queue_pkts,
                             "bytes" if c.qos.buffer_bytes
                             else "packets", "per level" if
                             c.qos.type == "htb" else "per port",
                             "port ECN threshold %d bytes"
                             % c.qos.ecn_threshold if c.qos.marks
                             else "drop-tail",
                             "on (OVS userspace TSO; hosts' TSO, GSO, "
                             "GRO, tx checksum)" if c.ports.tso
                             else "off"))
                if (md.get("ovs_version")
                        and md["ovs_version"] != self.segment["ovs_version"]):
                    self.log("  warning: the run began on %s"
                             % md["ovs_version"])
            cond = conditions.parse(cc)
            self.log("  cc %s: %s (%s)" % (
                cc, self.cc_impls[cc].label if cc in self.cc_impls
                else cc, cond.describe(c.qos.marks)))
            md["conditions"] = self.conditions_metadata()
            self.segment.setdefault("congestion_control", {})[cc] = (
                self.cc_impls[cc].label if cc in self.cc_impls else None)
            self.bpf_netns = self.bpf_namespaces(tb, cc)
            panda_ok = tb.panda_available()
            cpu0, t0 = tb.thread_cpu(), time.time()

            def thread_cpu():
                cpu = thread_cpu_share(cpu0, tb.thread_cpu(),
                                       time.time() - t0)
                md.setdefault("ovs_thread_cpu", {})[cc] = cpu
                self.segment.setdefault("ovs_thread_cpu", {})[cc] = cpu
            try:
                if self.policies is None and c.modeled_schemes:
                    self.stage_collect_model(tb, trials)
                if self.result["goodput_check"] is None \
                        and c.goodput_check_s > 0:
                    self.stage_goodput_check(tb)
                self.stage_experiments(tb, trials, panda_ok)
            except Stopped:
                thread_cpu()
                raise
            thread_cpu()

    # -- the run's record and its sessions ------------------------------
    def lock(self):
        """One process at a time in a run directory (a second --resume of
        the same run would record trials twice): an exclusive flock on
        RUN_DIR/.lock, which holds the pid and is removed at the end."""
        path = os.path.join(self.dir, ".lock")
        while True:
            f = open(path, "a+")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.seek(0)
                pid = f.read().strip()
                f.close()
                raise TestbedError("%s is in use by another testbed run "
                                   "(pid %s)" % (self.dir, pid or "?"))
            # The holder before may have removed the file between our open
            # and our lock: then the lock is on a file nobody else sees.
            try:
                same = os.stat(path).st_ino == os.fstat(f.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            f.close()
        f.truncate(0)
        f.write("%d\n" % os.getpid())
        f.flush()
        self._lock = f

    def unlock(self):
        """Removes the lock file (while still holding the lock, so that a
        waiting run cannot take a lock on a file being removed) and
        releases it."""
        lock, self._lock = getattr(self, "_lock", None), None
        if lock is not None:
            try:
                os.unlink(os.path.join(self.dir, ".lock"))
            except OSError:
                pass
            lock.close()

    def start_result(self, code):
        c = self.cfg
        self.log("panda testbed: run %s -> %s" % (self.run_id, self.dir))
        self.result = {"metadata": {
                           "run_id": self.run_id,
                           "config": config.record(c, self.prog, code),
                           "segments": []},
                       "policy": None, "collection": None,
                       "goodput_check": None, "trials": [],
                       "unavailable": [], "summary": None}
        self.cdf = c.workload.write_copy(os.path.join(self.dir,
                                                      "workload.cdf"))
        self.log("  workload %s (%s, sha256 %s, mean flow %.0f bytes)%s" % (
            c.workload.name, c.workload.path, c.workload.sha256[:12],
            c.workload.mean_bytes, ", %d background iperf3 streams"
            % c.iperf3_streams if c.iperf3_streams else ""))

    def resume_result(self):
        """Continues self.previous, checked by resume.prepare(): its
        settings, policy and workload copy are the run's."""
        c = self.cfg
        self.log("panda testbed: run %s continued in %s" % (
            self.previous["metadata"].get("run_id"), self.dir))
        self.result = self.previous
        self.result.pop("error", None)
        md = self.result["metadata"]
        md["config"]["reps"] = md["reps"] = c.reps
        self.cdf = os.path.join(self.dir, "workload.cdf")
        self.log("  workload %s (the run's copy, sha256 %s)" % (
            c.workload.name, c.workload.sha256[:12]))

    def begin_segment(self, code):
        """This session's record in metadata.segments: sessions may run
        on other days and machines, so each keeps its own."""
        c, md = self.cfg, self.result["metadata"]
        changed = resume.code_changes(md["config"]["code"], code)
        self.segment = {
            "index": len(md["segments"]),
            "argv": [self.prog] + list(c.argv),
            "started_utc": _utcnow(),
            "host": platform.node(),
            "kernel": platform.release(),
            "cpus": os.cpu_count(),
            "loadavg_at_start": os.getloadavg(),
            "git": git_state(),
            "code": code,
            "code_changed": changed,
            "allow_code_change": c.allow_code_change,
            "build_dir": c.build_dir,
            "stop_after_min": None if c.stop_after_s is None
            else c.stop_after_s / 60,
            "trials_run": 0, "trials_failed": 0, "end": "running"}
        md["segments"].append(self.segment)
        if changed:
            self.log("  warning: --allow-code-change: the code differs "
                     "from the run's in %s" % ", ".join(changed))

    def end_segment(self, end):
        seg, md = self.segment, self.result["metadata"]
        seg.update(ended_utc=_utcnow(), runtime_s=time.time() - self.t_start,
                   loadavg_at_end=os.getloadavg(), end=end)
        md["runtime_s"] = sum(s.get("runtime_s") or 0
                              for s in md["segments"])
        md["loadavg_at_end"] = seg["loadavg_at_end"]

    def use_cc(self, cc):
        """Registers the algorithm of condition 'cc' for the rest of the
        run (cc_session); None, or why it cannot run."""
        try:
            impl = self.cc_stack.enter_context(cc_session(
                conditions.parse(cc).algorithm, self.cfg.build_dir,
                self.log))
        except ccs.CcUnavailable as e:
            return "unavailable: %s" % e
        self.cc_impls[cc] = impl
        return None

    def runnable_ccs(self):
        """The conditions to run, their algorithms registered for the run
        (use_cc).  A new run records those that cannot run as
        unavailable; a resumed one runs the run's, and needs each of them
        here."""
        c = self.cfg
        if self.previous is not None:
            gone = {u["cc"] for u in self.result["unavailable"]}
            for cc in c.ccs:
                why = None if cc in gone else self.use_cc(cc)
                if why:
                    raise TestbedError("--resume: %s ran in this run's "
                                       "earlier sessions but is %s here"
                                       % (cc, why))
            return [cc for cc in c.ccs if cc not in gone]
        runnable = []
        for cc in c.ccs:
            why = self.use_cc(cc)
            if why:
                self.log("  %s: %s" % (cc, why))
                for s in c.schemes:
                    self.result["unavailable"].append(
                        {"cc": cc, "scheme": s, "status": why})
            else:
                runnable.append(cc)
        return runnable

    def bpf_namespaces(self, tb, cc):
        """{"pm1", "pm2": network namespace cookie} when condition 'cc'
        runs on the BPF DCTCP (whose counters are kept per namespace), else
        None."""
        impl = self.cc_impls.get(cc)
        if impl is None or impl.kind != "bpf":
            return None
        try:
            return {name: int(getattr(tb, name).run(*ccs.NETNS_COOKIE_CMD))
                    for name in ("pm1", "pm2")}
        except (RuntimeError, ValueError, AttributeError) as e:
            self.log("  warning: no namespace cookies, so no BPF DCTCP "
                     "counters per trial: %s" % e)
            return None

    def bpf_counters(self, cc):
        """The BPF DCTCP's counters in PM1's and PM2's namespaces now, or
        None (not the BPF DCTCP, or no counters)."""
        impl = self.cc_impls.get(cc)
        if not getattr(self, "bpf_netns", None) or impl is None \
                or impl.kind != "bpf":
            return None
        try:
            netns = ccs.Loader(paths.BuildTree(self.cfg.build_dir)).stats()[
                "netns"]
        except (ccs.CcUnavailable, ValueError) as e:
            self.log("      warning: BPF DCTCP counters: %s" % e)
            return None
        return {name: netns.get(cookie, {})
                for name, cookie in self.bpf_netns.items()}

    def check_deadline(self):
        """--stop-after: no trial starts once the session's time is up."""
        if self.deadline is not None and self.clock() >= self.deadline:
            raise Stopped("--stop-after %g min" % (self.cfg.stop_after_s
                                                   / 60))

    def resume_command(self):
        return "%s --resume %s" % (self.prog, self.dir)

    def finish(self, stopped=None):
        """Summary, result.json, CSV, figures and the table, of every
        trial the run has so far; the exit status."""
        c = self.cfg
        md = self.result["metadata"]
        if "kernel" not in md:
            md["kernel"] = platform.release()
        self.summarize()
        self.end_segment("stopped: " + stopped if stopped else "complete")
        self.save()
        report.write_csv(self.result, os.path.join(self.dir, "result.csv"))
        if c.plots:
            try:
                from . import plots
                made = plots.plot_all(self.result, self.dir)
                self.result["plots"] = made
                self.save()
            except Exception as e:  # plotting must not lose the data
                self.log("warning: plots failed: %s" % e)
        if self.console is not None:
            self.console.close()
        self.log("")
        # The unavailable conditions' reasons were given as the run began.
        self.log(report.table(self.result, brief_unavailable=True))
        failed = [t for t in self.result["trials"] if t["status"] != "ok"]
        self.log("run %s: %d trials, %d failed, %s (load average %.1f at "
                 "the end)" % (self.run_id, len(self.result["trials"]),
                               len(failed),
                               console.hms(time.time() - self.t_start),
                               os.getloadavg()[0]))
        for line in written_files(self.dir):
            self.log(line)
        if stopped:
            self.log("run %s: stopped (%s) with %d of %d trials done; "
                     "continue with: %s" % (self.run_id, stopped, self.done,
                                            self.total,
                                            self.resume_command()))
            return EXIT_STOPPED
        if failed:
            self.log("run %s: the failed trials run again with: %s"
                     % (self.run_id, self.resume_command()))
        if not self.result["trials"] or len(failed) == len(
                self.result["trials"]):
            return cli.EXIT_FAILURE
        # Some trials measured, some not: the results are incomplete.
        return cli.EXIT_INCOMPLETE if failed else cli.EXIT_OK

    def summarize(self):
        """The summary of the trials so far; "progress" says whether they
        are all the plan's (a stopped or interrupted run's targets are
        verdicts on part of it)."""
        self.result["summary"] = summarize(self.result["trials"], self.cfg)
        self.result["summary"]["progress"] = {
            "trials_done": self.done, "trials_planned": self.total,
            "complete": 0 < self.total == self.done}

    def abort(self, end):
        """Interrupted or failed: result.json as it stands (every trial
        recorded so far, none under way), with its summary and CSV."""
        if self.segment is not None:
            self.summarize()
            self.end_segment(end)
        self.save()
        if self.segment is not None:
            report.write_csv(self.result, os.path.join(self.dir,
                                                       "result.csv"))

    def check_policy_workload(self, record):
        """A saved policy modelled on another workload may be reused (a
        static policy under a changed workload is an experiment of its
        own), but the result says so."""
        saved = record.get("workload")
        wl = self.cfg.workload
        if saved is None:
            record["workload_matches_run"] = None
            self.log("  warning: %s does not say which workload it was "
                     "modelled on (an older policy.json)" % self.cfg.policy)
        else:
            record["workload_matches_run"] = saved.get("sha256") == wl.sha256
            if not record["workload_matches_run"]:
                self.log("  warning: %s was modelled on workload %s (sha256 "
                         "%s), the run uses %s (sha256 %s)" % (
                             self.cfg.policy, saved.get("name"),
                             (saved.get("sha256") or "?")[:12], wl.name,
                             wl.sha256[:12]))

    def use_policy(self, record):
        """The policy record (model.py) of this run: checked once here."""
        self.policies = model.policies(record)
        self.result["policy"] = record

    # -- stage 1 + 2 -----------------------------------------------------
    def stage_collect_model(self, tb, trials):
        """Collection on the profile's collection scheme (profiles.py
        says why): fifo on the first fifo trial of the plan at the (a)
        concurrency, else (or with no such trial) a dedicated trial; then
        panda-model."""
        c = self.cfg
        conc = experiments.MODES[c.mode]["a_concurrency"]
        scheme = self.prof["collect_scheme"]
        # The fifo trial at the (a) concurrency with the most requests (the
        # most memcached samples), moved to the front of the plan.
        cands = [t for t in trials if t["scheme"] == scheme == "fifo"
                 and t["concurrency"] == conc and t["rep"] == 0]
        host = max(cands, key=lambda t: t["requests"]) if cands else None
        self.log("stage 1: collection (packet sizes sent by PM2, FLT and "
                 "FHT captured separately, scheme %s)" % scheme)
        if host is not None:
            trials.remove(host)
            trials.insert(0, host)
            host["collect"] = True
            res = self.one_trial(tb, host, 1, self.total)
        else:
            # As many requests as the plan's largest trial at the (a)
            # concurrency, so that the model sees as many of memcached's
            # counter excursions as a trial will.
            at = [t["requests"] for t in trials if t["concurrency"] == conc]
            cc, r = (conc, max(at)) if at else experiments.COLLECT_POINT
            t = {"cc": tb.cc, "scheme": scheme, "concurrency": cc,
                 "requests": r, "rep": 0, "experiments": ["collection"],
                 "collect": True}
            res = self.trial_exec(tb, t)
            if res["status"] != "ok":
                raise TestbedError("collection trial failed: %s"
                                   % res["status"])
        cdir = res["dir"]
        flt = os.path.join(cdir, "flt.pcap")
        fht = os.path.join(cdir, "fht.pcap")
        coll = {"trial_dir": cdir, "flt_pcap": flt, "fht_pcap": fht,
                "scheme": scheme,
                "where": "PM2 eth0 (sending side), TSO/GSO on: the sizes "
                         "before segmentation, those the panda action sees"
                         if self.prof["tso"] else
                         "PM2 eth0 (sending side), TSO/GSO off: sizes "
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
        self.log("stage 2: model (panda-model, %s CDF, rho %g, K %d)"
                 % (c.workload.name, c.load, tb.levels))
        pol = model.make_policies(self.build, flt, fht, self.cdf, c.load,
                              tb.levels, self.dir, flt_level0=c.flt_level0,
                              flt_bound=c.flt_bound, weights=c.weights,
                              threshold_units=c.threshold_units,
                              log=self.log)
        self.save_policy(tb, pol, coll)
        if c.weights and c.threshold_units == "counter-w1":
            self.use_policy(pol)
            pol = self.stage_counter_collection(tb, trials, conc, flt, fht)
            self.save_policy(tb, pol, coll)
        self.use_policy(pol)
        self.save()

    def stage_counter_collection(self, tb, trials, conc, flt, fht):
        """--threshold-units counter-w1: the flows captured under panda-w1
        (the same thresholds without weights), where they descend the
        levels as the counter thresholds will move them, and their
        per-connection C(alpha) gives Panda's thresholds (panda-model
        --counter-fht; tools/README-panda-model.md).  The plan's panda-w1
        trial at the (a) concurrency with the most requests is that
        capture (a trial of the run: the capture adds tcpdump's load to
        it), else a dedicated one.  Returns the new policy record."""
        c = self.cfg
        self.log("stage 1b: the flows under %s (C(alpha) for the counter "
                 "thresholds)" % model.ALL_ONES)
        cands = [t for t in trials if t["scheme"] == model.ALL_ONES
                 and t["concurrency"] == conc and t["rep"] == 0
                 and not t.get("done")]
        if cands:
            host = max(cands, key=lambda t: t["requests"])
            host["collect"] = True
            res = self.one_trial(tb, host, self.done + 1, self.total)
        else:
            at = [t["requests"] for t in trials if t["concurrency"] == conc]
            cc, r = (conc, max(at)) if at else experiments.COLLECT_POINT
            res = self.trial_exec(tb, {
                "cc": tb.cc, "scheme": model.ALL_ONES, "concurrency": cc,
                "requests": r, "rep": 0, "experiments": ["collection"],
                "collect": True})
        if res["status"] != "ok":
            raise TestbedError("%s collection trial failed: %s"
                               % (model.ALL_ONES, res["status"]))
        fht_w1 = os.path.join(res["dir"], "fht.pcap")
        self.result["collection"]["counter_fht"] = {
            "scheme": model.ALL_ONES, "trial_dir": res["dir"],
            "fht_pcap": fht_w1, "fht": model.sample_summary(fht_w1,
                                                            FG_PORT)}
        self.log("stage 2b: model again, C(alpha) from %s" % fht_w1)
        return model.make_policies(self.build, flt, fht, self.cdf, c.load,
                               tb.levels, self.dir, flt_level0=c.flt_level0,
                               flt_bound=c.flt_bound, weights=c.weights,
                               threshold_units=c.threshold_units,
                               counter_fht=fht_w1, log=self.log)

    def save_policy(self, tb, pol, coll):
        """The policy record's summary in the run directory."""
        c = self.cfg
        pol["source"] = "model"
        pol["workload"] = c.workload.record(copy="workload.cdf")
        with open(os.path.join(self.dir, "policy.json"), "w") as f:
            doc = {s: {"action": pol[s]["action"]}
                   for s in ("panda", "pias", model.ALL_ONES) if s in pol}
            doc.update({"collection": {k: v for k, v in coll.items()
                                       if k in ("flt", "fht",
                                                "counter_fht")},
                        "workload": pol["workload"],
                        "load": c.load, "levels": tb.levels,
                        "threshold_units": pol.get("threshold_units")})
            if pol.get("counter_thresholds"):
                doc["counter_thresholds"] = pol["counter_thresholds"]
            json.dump(doc, f, indent=1)

    def stage_goodput_check(self, tb):
        """goodput.py: the generator's goodput against iperf3's, once."""
        c = self.cfg
        conc = experiments.MODES[c.mode]["a_concurrency"]
        self.log("goodput cross-check: panda-fg-client and iperf3, %d "
                 "flows/streams, %g s each, fifo" % (conc, c.goodput_check_s))
        wdir = os.path.join(self.dir, "goodput-check-%s" % tb.cc)
        os.makedirs(wdir, exist_ok=True)
        try:
            rec = goodput.cross_check(tb, self.cdf, c.workload.name, conc,
                                      c.goodput_check_s, c.seed, wdir,
                                      log=self.log)
        except Exception as e:      # noqa: BLE001
            # A measurement beside the experiments (and on topologies
            # other than the namespace testbed's, pandalab.mininet):
            # recorded, never fatal to the run.
            rec = {"status": "failed: %s: %s" % (type(e).__name__, e)}
        rec.update(cc=tb.cc, dir=wdir)
        self.result["goodput_check"] = rec
        self.log("  " + goodput.line(rec))
        self.save()

    # -- stage 3 ---------------------------------------------------------
    def stage_experiments(self, tb, trials, panda_ok):
        self.log("stage 3: experiments (%d trials)"
                 % sum(not t.get("done") for t in trials))
        for t in trials:
            if t.get("done"):
                continue
            self.check_deadline()
            self.one_trial(tb, t, self.done + 1, self.total,
                           panda_ok=panda_ok)

    def time_left(self):
        """Seconds the trials not done yet should take: the plan's estimate
        (experiments.estimate), the midpoint of its range, with the run's
        own times for the points it has measured."""
        todo = [t for t in self.plan if not t.get("done")]
        if not todo:
            return 0.0
        lo, hi = experiments.estimate(
            self.cfg, todo, measured=measured_seconds(self.result),
            collection=False, goodput=False)
        return (lo + hi) / 2

    def one_trial(self, tb, t, n, total, panda_ok=True):
        elapsed, left = time.time() - self.t_start, self.time_left()
        self.log("[%d/%d] %s %s flows %d requests %d rep %d (%s in, ~%s "
                 "left) ..." % (n, total, t["cc"], t["scheme"],
                                t["concurrency"], t["requests"],
                                t["rep"] + 1, console.hms(elapsed),
                                console.hms(left)))
        if self.console is not None:
            self.console.progress(n - 1, total, elapsed, left, "%s %s" % (
                t["cc"], t["scheme"]))
        if SCHEMES[t["scheme"]].policy and not panda_ok:
            res = dict(t, status="failed: this OVS build has no panda "
                       "action (ovs-appctl panda/show missing)")
        elif SCHEMES[t["scheme"]].policy and not self.policies:
            res = dict(t, status="failed: no policy")
        elif (SCHEMES[t["scheme"]].policy
              and SCHEMES[t["scheme"]].policy not in self.policies):
            res = dict(t, status="failed: the policy record has no %s "
                       "policy (a --policy file of a run without it)"
                       % SCHEMES[t["scheme"]].policy)
        else:
            res = self.trial_exec(tb, t)
        res.update({k: t[k] for k in ("rep", "experiments")})
        t["done"] = True
        self.record_trial(res)
        self.save()
        mc = res.get("memcached") or {}
        self.log("      %s  memcached p50 %s p90 %s p99 %s ms  %s%s  (%.0f s)"
                 % (res["status"] if res["status"] != "ok" else "ok",
                    _f(mc.get("p50_ms")), _f(mc.get("p90_ms")),
                    _f(mc.get("p99_ms")),
                    _levels_str(res.get("memcached_levels")),
                    "  %d timed out (in the percentiles at the time "
                    "waited)" % mc["requests_timed_out"]
                    if mc.get("requests_timed_out") else "",
                    res.get("elapsed_s") or 0))
        return res

    def record_trial(self, res):
        """Adds trial record 'res'.  An earlier record of the same trial
        (a failed attempt, from this session's collection or an earlier
        session) moves to "retried", so that "trials" has one record per
        trial and the summary counts each once."""
        key = trial_key(res)
        trials = self.result["trials"]
        old = [i for i, x in enumerate(trials) if trial_key(x) == key]
        for i in old:
            trials[i]["superseded_in_session"] = (
                self.segment["index"] if self.segment else None)
            self.result.setdefault("retried", []).append(trials[i])
        if old:
            trials[old[0]] = res
            for i in reversed(old[1:]):
                del trials[i]
        else:
            trials.append(res)
        if res["status"] == "ok":
            self.done += 1
        if self.segment is not None:
            self.segment["trials_run"] += 1
            self.segment["trials_failed"] += res["status"] != "ok"

    def trial_exec(self, tb, t):
        c = self.cfg
        # "prio", the collection oracle, is not a compared scheme.
        which = (SCHEMES[t["scheme"]].policy if t["scheme"] in SCHEMES
                 else None)
        policy = self.policies[which] if which else None
        tb.set_scheme(t["scheme"], policy)
        # The previous trial's packets must have left the queues.
        tb.wait_drained()
        wdir = os.path.join(self.dir, "trials", "%s-%s-c%d-r%d-rep%d" % (
            t["cc"], t["scheme"], t["concurrency"], t["requests"],
            t["rep"] + 1))
        if os.path.exists(wdir):
            # An earlier attempt's outputs (a failed trial, or one cut
            # short by an interruption): kept apart, never mixed in.
            k = 1
            while os.path.exists("%s.attempt%d" % (wdir, k)):
                k += 1
            moved = "%s.attempt%d" % (wdir, k)
            os.rename(wdir, moved)
            for x in self.result["trials"]:
                if x.get("dir") == wdir:
                    x["dir"] = moved
            self.log("      an earlier attempt's outputs: %s" % moved)
        tcfg = TrialConfig(warmup_s=c.warmup_s, cdf=self.cdf,
                           iperf3_streams=c.iperf3_streams,
                           mc_interval_us=c.mc_interval_us)
        if "c" in t.get("experiments", ()):
            # Experiment (c): a fixed FCT window, the same for every scheme.
            tcfg = dataclasses.replace(tcfg, fct_window_s=c.fct_window_s,
                                       fct_grace_s=c.fct_grace_s)
        before = self.bpf_counters(t["cc"])
        res = run_trial(tb, tcfg, t["scheme"], t["concurrency"],
                        t["requests"], c.seed + t["rep"], wdir,
                        policy=policy, collect=t.get("collect", False),
                        log=self.log, note=self.console.status
                        if self.console is not None else None)
        after = self.bpf_counters(t["cc"])
        if policy is not None:
            res["policy_action"] = policy.text()
        impl = self.cc_impls.get(t["cc"])
        res["congestion_control"] = impl.label if impl else None
        if before and after:
            # What the BPF DCTCP did over the trial: PM2 sends the data
            # (its reductions), PM1 receives it (its CE echo).
            res["bpf_dctcp"] = {
                "sender_pm2": ccs.reaction(before["pm2"], after["pm2"]),
                "receiver_pm1": ccs.reaction(before["pm1"],
                                             after["pm1"])["counters"]}
        return res


def summarize(trials, cfg):
    """result.json's "summary": the rows (report.aggregate), the latency
    floor measured in the run and the targets (targets.py)."""
    rows = report.aggregate(trials)
    floors = targets.floor(rows, cfg.qos.rate_bps)
    first = next(iter(sorted(floors, key=lambda cc: cc != "cubic")), None)
    return {"rows": rows, "floor": floors,
            "floor_ms": floors[first]["floor_ms"] if first else None,
            "targets": targets.evaluate(rows, floors, cfg.mode)}


def thread_cpu_share(before, after, wall_s):
    """ovs-vswitchd's threads over one testbed's life (Lab.thread_cpu
    before and after, 'wall_s' apart): {"wall_s", "threads": {name:
    {"cpu_s", "share"}}}, share = CPU time / wall time (1.0 = a core).
    Shows what a spinning or sleeping PMD thread costs against the main
    thread that serves system ports."""
    threads = {}
    for name, cpu in sorted(after.items()):
        used = cpu - before.get(name, 0)
        if used > 0:
            threads[name] = {"cpu_s": round(used, 2),
                             "share": round(used / wall_s, 3)
                             if wall_s > 0 else None}
    return {"wall_s": round(wall_s, 1), "threads": threads}


def _f(v):
    return "-" if v is None else "%.2f" % v


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def ports_str(ports):
    if not ports.pmd:
        return ports.type
    rec = ports.record()
    return "%s (pmd-cpu-mask %s, pmd-maxsleep %s us)" % (
        ports.type, rec["pmd_cpu_mask"], rec["pmd_maxsleep_us"])


def written_files(run_dir):
    """The lines that name what a run wrote into 'run_dir': the record
    first, each figure's three formats on one line, the trials'
    directories counted."""
    try:
        names = sorted(os.listdir(run_dir))
    except OSError:
        return []
    first = [n for n in ("result.json", "result.csv") if n in names]
    figs, other = {}, []
    for n in names:
        stem, ext = os.path.splitext(n)
        if ext[1:] in figures.FORMATS:
            figs.setdefault(stem, []).append(ext[1:])
        elif n not in first and not n.startswith("."):
            other.append(n + ("/" if os.path.isdir(os.path.join(run_dir, n))
                              else ""))
    out = ["written in %s:" % run_dir]
    out += console.wrap("  " + "  ".join(first + [
        n for n in other if n != "trials/"]))
    for stem, exts in sorted(figs.items()):
        exts = sorted(exts, key=figures.FORMATS.index)
        out.append("  %s.%s" % (stem, exts[0]) + "".join(
            " .%s" % e for e in exts[1:]))
    if "trials/" in other:
        n = len(os.listdir(os.path.join(run_dir, "trials")))
        out.append("  trials/ (%d trial director%s)"
                   % (n, "y" if n == 1 else "ies"))
    return out


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
    handle_signals()
    out = console.Console()
    try:
        return launch(list(sys.argv[1:] if argv is None else argv),
                      log=out, console=out)
    finally:
        out.close()


def launch(argv, prog="testbed/run.py", **run_kw):
    """testbed/run.py 'argv': a new run, a calibration or (--resume) the
    continuation of a run, or one of COMMANDS on finished runs; the exit
    status.  'run_kw': Run's keyword arguments."""
    if argv and argv[0] in COMMANDS:
        return COMMANDS[argv[0]](argv[1:], "%s %s" % (prog, argv[0]))
    p = config.parser(prog)
    a = p.parse_args(argv)
    previous = None
    if a.resume:
        # The command line is checked merged with the run's own, not
        # alone: '--resume D --pmd-maxsleep 20' is right for a run made
        # with --ports afxdp.
        try:
            cfg, previous = resume.prepare(a.resume, argv, prog)
        except resume.ResumeError as e:
            print("%s: %s" % (prog, e), file=sys.stderr)
            return 2
    else:
        cfg = config.run_config(p, a, argv)
        if cfg.calibrate:
            return calibrate_main(cfg)
    if cfg.dry_run:
        return dry_run(cfg, prog, previous)
    return execute(Run(cfg, prog=prog, previous=previous, **run_kw), prog)


def _run_dir_parser(prog, what):
    p = cli.ArgumentParser(prog=prog, description=what)
    p.add_argument("run_dir", metavar="RUN_DIR",
                   help="a run's directory, holding its result.json")
    return p


def _read_result(p, run_dir):
    path = os.path.join(run_dir, "result.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        p.error("%s: not a run's result (%s)" % (path, e))


def plot_main(argv, prog):
    """'plot RUN_DIR': the run's figures drawn again from its result.json
    (PNG, PDF and SVG; into RUN_DIR or --out), and the files named."""
    from . import plots
    p = _run_dir_parser(prog, "Draw a finished (or stopped) run's figures "
                        "again from its result.json, with today's "
                        "plotting code; needs no root.")
    p.add_argument("--out", metavar="DIR",
                   help="directory for the figures (default RUN_DIR)")
    a = p.parse_args(argv)
    result = _read_result(p, a.run_dir)
    out = a.out or a.run_dir
    os.makedirs(out, exist_ok=True)
    made = plots.plot_all(result, out)
    if not made:
        print("%s: %s has no rows to draw (a run stopped before its first "
              "trial?)" % (prog, a.run_dir), file=sys.stderr)
        return cli.EXIT_FAILURE
    for png in made:
        stem = os.path.join(out, os.path.splitext(png)[0])
        for ext in figures.FORMATS:
            print("%s.%s" % (stem, ext))
    return cli.EXIT_OK


def report_main(argv, prog):
    """'report RUN_DIR': the table, the targets and the summary a run
    prints at its end, printed again from its result.json."""
    p = _run_dir_parser(prog, "Print a finished (or stopped) run's table "
                        "and targets again from its result.json; needs no "
                        "root.")
    a = p.parse_args(argv)
    result = _read_result(p, a.run_dir)
    if not report.rows_of(result):
        print("%s: %s has no rows (a run stopped before its first trial?)"
              % (prog, a.run_dir), file=sys.stderr)
        return cli.EXIT_FAILURE
    console.Console(live=False).line(report.table(result))
    return cli.EXIT_OK


def compare_main(argv, prog):
    """'compare [--out DIR] RUN_A RUN_B ...' (compare.py)."""
    from . import compare
    p = compare.parser(prog)
    for path in compare.run(p, p.parse_args(argv)):
        print(path)
    return cli.EXIT_OK


# The commands on finished runs: testbed/run.py COMMAND ...
COMMANDS = {"plot": plot_main, "report": report_main,
            "compare": compare_main}


def measured_seconds(result):
    """{(cc, scheme, concurrency, requests): mean elapsed seconds} of the
    ok trials of a run's 'result' (what its remaining trials will take)."""
    acc = {}
    for t in (result or {}).get("trials") or []:
        if t.get("status") == "ok" and t.get("elapsed_s"):
            key = (t["cc"], t["scheme"], t["concurrency"], t["requests"])
            acc.setdefault(key, []).append(t["elapsed_s"])
    return {k: sum(v) / len(v) for k, v in acc.items()}


def to_model(cfg, result=None):
    """Has the run of 'cfg' (with record 'result', None: a new run) still
    to collect and model?"""
    return ((result or {}).get("policy") is None
            and bool(cfg.modeled_schemes) and not cfg.policy)


def _points_str(mode):
    """A mode's points in words."""
    m = experiments.MODES[mode]
    pts = experiments.points(mode)
    if len(pts) <= 3:
        return ", ".join("%d flows x %d requests (%s)" % (
            c, r, ",".join(sorted(e))) for (c, r), e in sorted(pts.items()))
    return ("(a) %s requests at %d flows, (b) %s flows x %s requests, (c) "
            "the %d-request trials" % (
                "/".join(map(str, m["a_requests"])), m["a_concurrency"],
                "/".join(map(str, m["b_concurrency"])),
                "/".join(map(str, m["b_requests"])), m["c_requests"]))


def plan_lines(cfg, previous=None):
    """The plan of RunConfig 'cfg' (and, continuing run 'previous', what
    is left of it) as text: mode and points, schemes, congestion
    controls, repetitions, trials and the expected duration."""
    pts = experiments.points(cfg.mode)
    done = set()
    if previous is not None:
        done = {trial_key(t) for t in previous["trials"]
                if t["status"] == "ok"}
        # A congestion control the run found unavailable stays so.
        gone = {u["cc"] for u in previous.get("unavailable") or []}
        cfg = dataclasses.replace(cfg, ccs=tuple(
            cc for cc in cfg.ccs if cc not in gone))
    trials = experiments.plan(cfg.mode, cfg.schemes, cfg.reps, cfg.ccs)
    todo = [t for t in trials if trial_key(t) not in done]
    # Which conditions' algorithms are registered now: looked up, never
    # loaded (the run registers the kernel's or the BPF one at its start).
    impl = {cc: ccs.resolve(conditions.parse(cc).algorithm)
            for cc in cfg.ccs}
    avail = [cc for cc in cfg.ccs if impl[cc] is not None]
    out = ["mode %s: %d point%s, %s; warm-up %g s%s" % (
        cfg.mode, len(pts), "" if len(pts) == 1 else "s",
        _points_str(cfg.mode),
        cfg.warmup_s, ", FCT window %g s + %g s grace in (c)" % (
            cfg.fct_window_s, cfg.fct_grace_s)
        if any("c" in e for e in pts.values()) else ""),
        "schemes (%d): %s" % (len(cfg.schemes), ", ".join(cfg.schemes)),
        "classifier: %s" % (
            "the tc eBPF classifier on the egress of OVS's port towards "
            "pm1, before its %s (--datapath bpf; OVS only forwards)"
            % cfg.qos.type if cfg.datapath == "bpf" else
            "the panda action in OVS's userspace datapath, %s on its port "
            "towards pm1" % cfg.qos.type),
        "congestion control: %s" % ", ".join(
            "%s (%s registered now)" % (cc, impl[cc].label) if impl[cc]
            else "%s (%s is not registered now; the run registers the "
            "kernel's or the BPF one at its start, else its rows are "
            "unavailable)" % (cc, conditions.parse(cc).algorithm)
            for cc in cfg.ccs),
        "repetitions: %d (%s), a floor trial each" % (
            cfg.reps, "seed %d" % cfg.seed if cfg.reps == 1 else
            "seeds %d..%d" % (cfg.seed, cfg.seed + cfg.reps - 1)),
        "trials: %d = %d cc x %d repetition%s x (1 floor + %d point%s x %d "
        "schemes)" % (len(trials), len(cfg.ccs), cfg.reps,
                      "" if cfg.reps == 1 else "s", len(pts),
                      "" if len(pts) == 1 else "s", len(cfg.schemes))]
    if previous is not None:
        out.append("done: %d trials ok; to run: %d" % (
            len(trials) - len(todo), len(todo)))
    measured = measured_seconds(previous)
    est = experiments.estimate(
        cfg, todo, measured=measured, collection=to_model(cfg, previous),
        goodput=(previous or {}).get("goodput_check") is None)
    full = cfg.queue_pkts * FRAME * 8 / cfg.qos.rate_bps
    out.append("expected duration: %s (%s; a loaded memcached request "
               "taking %.1f ms, unloaded, to %.1f ms, a full buffer%s)" % (
                   experiments.duration_range(est),
                   "%d trials to run" % len(todo),
                   experiments.UNLOADED_REQUEST_S * 1000,
                   (full + experiments.UNLOADED_REQUEST_S) * 1000,
                   "; the run's own trial times where it has them"
                   if measured else ""))
    here = [cc for cc in cfg.ccs if cc in avail]
    if previous is None and here and len(here) < len(cfg.ccs):
        out.append("  %s if only %s runs" % (
            experiments.duration_range(experiments.estimate(
                cfg, [t for t in todo if t["cc"] in here],
                collection=to_model(cfg))),
            ", ".join(here)))
    for cc in cfg.ccs:
        for rep in range(cfg.reps):
            ts = [t for t in todo if t["cc"] == cc and t["rep"] == rep]
            if not ts:
                continue
            lo_hi = experiments.estimate(cfg, ts, measured=measured,
                                         collection=False, goodput=False)
            lo_hi = tuple(x - experiments.SETUP_S for x in lo_hi)
            out.append("  %s repetition %d (seed %d): %d trials, %s" % (
                cc, rep + 1, cfg.seed + rep, len(ts),
                experiments.duration_range(lo_hi)))
    return out, est


def dry_run(cfg, prog, previous=None):
    """--dry-run: the plan and its expected duration, printed; nothing is
    started (no namespace, no process, no directory) and no root is
    needed."""
    print("%s --dry-run: the plan; nothing is started" % prog)
    if previous is not None:
        print("continuing %s" % cfg.resume)
    for line in plan_lines(cfg, previous)[0]:
        for out in console.wrap("  " + line):
            print(out)
    return 0


def handle_signals():
    """SIGTERM and SIGINT end a run through its clean-up (every process
    and namespace it started goes)."""
    def on_term(sig, frame):
        raise Interrupted("signal %d" % sig)
    signal.signal(signal.SIGTERM, on_term)
    # A shell starts background jobs with SIGINT ignored; clean up on it
    # all the same.
    signal.signal(signal.SIGINT, signal.default_int_handler)


def execute(run, prog):
    """Runs 'run' (a Run); its exit status.  Errors and interruptions are
    reported as 'prog: ...' and recorded in result.json."""
    try:
        return run.execute()
    except (TestbedError, model.ModelError) as e:
        print("%s: %s" % (prog, e), file=sys.stderr)
        if run.result is not None:
            run.result.setdefault("error", str(e))
            run.abort("error: %s" % e)
        return 1
    except (KeyboardInterrupt, Interrupted) as e:
        print("%s: interrupted (%s); partial results in %s"
              % (prog, e or "Ctrl-C", run.dir), file=sys.stderr)
        if run.result is not None:
            # The trial under way is not recorded: it runs again when the
            # run is continued.
            run.result["error"] = "interrupted"
            run.abort("interrupted")
            if run.segment is not None:
                print("%s: continue with: %s" % (prog, run.resume_command()),
                      file=sys.stderr)
        return 130
    finally:
        run.unlock()


def calibrate_main(cfg):
    from .calibrate import calibrate
    if not is_root():
        print("testbed/run.py: needs root", file=sys.stderr)
        return 1
    run_id = cfg.run_id or "calibrate-" + datetime.datetime.now(
        datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = os.path.join(cfg.out, run_id)
    os.makedirs(out, exist_ok=True)
    rows = calibrate(cfg.build_dir, cfg.qos, cfg.calibrate, 14, 3000, out,
                     ports=cfg.ports,
                     seed=cfg.seed, warmup_s=cfg.warmup_s,
                     log=console.Console(live=False))
    with open(os.path.join(out, "calibration.json"), "w") as f:
        json.dump({"kernel": platform.release(), "cpus": os.cpu_count(),
                   "profile": cfg.profile, "qos": cfg.qos.type,
                   "datapath": cfg.datapath,
                   "ports": cfg.ports.record(), "rows": rows}, f, indent=1)
    print("calibration written to %s" % os.path.join(out,
                                                     "calibration.json"))
    return 0

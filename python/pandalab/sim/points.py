"""One simulation point: its parameters (Point), its run of panda-sim and
its result, point.json:

  {"complete": true, "name", "point": {parameters},
   "metadata": {ns3_version, git_commit, git_dirty, seed, wall_s,
                process_wall_s, cpu_user_s, cpu_sys_s, malloc, peak_rss_kb,
                events,
                sim_end_s, loadavg_before/after, cpus, command},
   "fct": {bucket: {flows, completed, unfinished, mean_ms, p50_ms,
                    p99_ms, max_ms, slowdown_mean/p50/p99}},
   "rpc": {requests, completed, unfinished, mean/p50/p90/p99/p999/max_ms}
          or null,
   "incast": {queries, completed, qct_*_ms} or null,
   "run": panda-sim's run.json (queues, scheduler levels, marking, TCP)}

A point whose point.json exists with "complete": true is not run again
(resume); a failed point leaves no point.json and runs again next time.
"""

import ctypes.util
import dataclasses
import hashlib
import json
import os
import shlex
import subprocess
import threading
import time

from pandaovs import paths
from . import metrics

# The seeds' schemes (the default of every command) and the operator's
# alternative, fq_codel, as the scheduler core runs it and as ns-3's own
# FqCoDelQueueDisc does (cross-checked by "fq-codel-check").
SEED_SCHEMES = ("fifo", "fifo-ecn", "pias", "fish", "panda", "panda-pf",
                "oracle")
SCHEMES = SEED_SCHEMES + ("fq-codel", "fq-codel-ns3")
POLICY_KIND = {"pias": "pias", "fish": "pias", "panda": "panda",
               "panda-pf": "panda"}


# Point fields added after runs were made, with their defaults: a point
# at the default keeps the name it had before the field existed.
LATER_FIELDS = {"flow_list": "", "dctcp_alpha_init": None}


class PointError(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class Point:
    """Parameters of panda-sim; None means panda-sim's default for the
    topology (see sim/README.md)."""
    scheme: str = "fifo"
    cc: str = "cubic"
    topology: str = "dumbbell"
    leaves: int = 9
    hosts_per_leaf: int = 16
    spines: int = 4
    edge_rate: str = None
    core_rate: str = None
    workload: str = "web-search"
    load: float = 0.8
    interval_us: float = 0
    flows: int = 100
    concurrency: int = 0
    rpc_pairs: int = None
    rpc_rate: float = 0
    rpc_requests: int = 0
    incast_rate: float = 0
    incast_queries: int = 0
    incast_fanin: int = 0
    incast_bytes: int = 0
    buffer_pkts: float = None
    ecn_pkts: float = None
    guard: int = None
    min_rto_ms: float = None
    delack_ms: float = None
    sched_extra: str = ""
    warmup: float = 0
    max_time: float = 30
    seed: int = 1
    tag: str = ""          # Free label, part of the name (e.g. "buf480").
    # A fixed workload instead of workload/load/interval_us/concurrency/
    # flows: the text of panda-sim's --flow-list file ("START_US SIZE
    # [SRC DST]" lines; sim/README.md, "Workloads").
    flow_list: str = ""
    dctcp_alpha_init: float = None   # None: panda-sim's 1 (Linux's, ns-3's).

    def hosts(self):
        return 2 if self.topology == "dumbbell" else \
            self.leaves * self.hosts_per_leaf

    def listed_flows(self):
        """How many flows flow_list lists (panda-sim validates it)."""
        return sum(1 for ln in self.flow_list.splitlines()
                   if ln.split("#")[0].strip())

    def name(self):
        topo = "db" if self.topology == "dumbbell" else \
            "ls%dx%dx%d" % (self.leaves, self.hosts_per_leaf, self.spines)
        if self.flow_list:
            wl, arr, n = "list", None, self.listed_flows()
        else:
            wl, n = self.workload, self.flows
            arr = ("c%d" % self.concurrency if self.concurrency
                   else "t%gus" % self.interval_us if self.interval_us
                   else "l%g" % self.load)
        parts = [topo, wl, arr, "n%d" % n, self.cc, self.scheme,
                 "s%d" % self.seed]
        parts = [x for x in parts if x]
        if self.tag:
            parts.insert(-1, self.tag)
        # The readable part does not hold every parameter; a digest of all
        # of them keeps different points in different directories.  A
        # field added later enters it only when set, so that the points
        # of earlier runs keep their names (and resume).
        fields = dataclasses.asdict(self)
        for k, default in LATER_FIELDS.items():
            if fields[k] == default:
                del fields[k]
        digest = hashlib.sha1(json.dumps(fields, sort_keys=True).encode())
        return "-".join(parts) + "-" + digest.hexdigest()[:6]

    def flow_list_file(self, out_dir):
        """Writes flow_list into out_dir (the point's directory, beside
        its records) and returns the path; None without a list."""
        if not self.flow_list:
            return None
        path = os.path.join(out_dir, "flow-list.txt")
        with open(path, "w") as f:
            f.write(self.flow_list.rstrip("\n") + "\n")
        return path

    def group(self):
        """The FIFO point whose collection gives this point its policy:
        same parameters (topology, workload, arrivals: the model's load),
        scheme fifo, first seed."""
        return dataclasses.replace(self, scheme="fifo", seed=1)

    def args(self, top, policy_action=None, flow_list_file=None):
        """panda-sim's options; 'flow_list_file' is where
        flow_list_file() wrote the list (points with a flow_list)."""
        cdf_dir = os.path.join(top, "load_generator", "cdf")
        a = ["--scheme=" + self.scheme, "--cc=" + self.cc,
             "--topology=" + self.topology, "--seed=%d" % self.seed,
             "--max-time=%g" % self.max_time, "--warmup=%g" % self.warmup]
        if self.topology == "leafspine":
            a += ["--leaves=%d" % self.leaves,
                  "--hosts-per-leaf=%d" % self.hosts_per_leaf,
                  "--spines=%d" % self.spines]
        opt = {"edge-rate": self.edge_rate, "core-rate": self.core_rate,
               "buffer-pkts": self.buffer_pkts, "ecn-pkts": self.ecn_pkts,
               "guard": self.guard, "min-rto-ms": self.min_rto_ms,
               "delack-ms": self.delack_ms, "rpc-pairs": self.rpc_pairs,
               "dctcp-alpha-init": self.dctcp_alpha_init}
        a += ["--%s=%s" % (k, v) for k, v in opt.items() if v is not None]
        if self.flow_list:
            if not flow_list_file:
                raise PointError("%s: its flow list is not written"
                                 % self.name())
            a.append("--flow-list=" + flow_list_file)
        elif self.flows:
            a += ["--cdf=" + os.path.join(cdf_dir, self.workload + ".cdf"),
                  "--flows=%d" % self.flows]
            if self.concurrency:
                a.append("--concurrency=%d" % self.concurrency)
            elif self.interval_us:
                a.append("--interval-us=%g" % self.interval_us)
            else:
                a.append("--load=%g" % self.load)
        a += ["--rpc-cdf=" + os.path.join(cdf_dir, "memcached-values.cdf"),
              "--rpc-rate=%g" % self.rpc_rate]
        if self.rpc_requests:
            a.append("--rpc-requests=%d" % self.rpc_requests)
        if self.incast_rate:
            a += ["--incast-rate=%g" % self.incast_rate,
                  "--incast-queries=%d" % self.incast_queries,
                  "--incast-fanin=%d" % self.incast_fanin,
                  "--incast-bytes=%d" % self.incast_bytes]
        if self.sched_extra:
            a.append("--sched-extra=" + self.sched_extra)
        if self.scheme in POLICY_KIND:
            if not policy_action:
                raise PointError("%s needs a %s policy" %
                                 (self.scheme, POLICY_KIND[self.scheme]))
            a.append("--policy=" + policy_action)
        if self.scheme in ("fifo", "fifo-ecn"):
            a.append("--collect")  # Costs nothing; feeds the model.
        return a


@dataclasses.dataclass
class Context:
    """What every point of a run shares."""
    top: str            # Repository root (load_generator/cdf/).
    build_dir: str      # Build tree (sim/panda-sim, tools/panda-model).
    out_dir: str        # Points go to out_dir/points/<name>/.
    git: dict = None    # {"commit", "dirty"} of the code.
    timeout: float = 6 * 3600
    malloc: str = "libc"  # "tcmalloc": panda-sim runs with it preloaded.
    dry_run: bool = False  # Plan only: sweep.DryRun instead of running.

    def binary(self):
        return paths.BuildTree(self.build_dir).path(paths.BuildTree.SIM)

    def point_dir(self, point):
        return os.path.join(self.out_dir, "points", point.name())


# ns-3 allocates for every packet, header, tag and event: glibc's malloc
# and free are about 14% of panda-sim's CPU (sim/README.md, "Speed").
# tcmalloc takes about 18% off its CPU time with identical results
# (allocation addresses decide nothing in the simulation).  It is
# preloaded, not linked, so that the same binary runs with either and
# 'sim/run.py scale --malloc-baseline' compares them in one run.
TCMALLOC = "libtcmalloc_minimal.so.4"


def malloc_choice(wanted="auto"):
    """The allocator for panda-sim: 'tcmalloc' when wanted and its library
    is installed (libtcmalloc-minimal4), else 'libc'.  Raises PointError
    when tcmalloc is asked for explicitly and missing."""
    if wanted == "libc":
        return "libc"
    if ctypes.util.find_library("tcmalloc_minimal"):
        return "tcmalloc"
    if wanted == "tcmalloc":
        raise PointError("--malloc=tcmalloc: %s not found (install "
                         "libtcmalloc-minimal4)" % TCMALLOC)
    return "libc"


def malloc_env(malloc):
    """The environment panda-sim runs in with allocator 'malloc'."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if malloc == "tcmalloc":
        env["LD_PRELOAD"] = TCMALLOC
    return env


def git_state(top):
    def git(*args):
        r = subprocess.run(["git", "-C", top] + list(args),
                           capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None
            else None}


def load_result(ctx, point):
    """The point's complete result, or None."""
    path = os.path.join(ctx.point_dir(point), "point.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc if doc.get("complete") else None


def run_logged(ctx, point, cmd, d):
    """Runs the simulator's 'cmd' for 'point' (with ctx.malloc's
    allocator) with its output in d/log.txt (progress lines can be
    followed there during a long point); returns (wall seconds, load
    average before, the child's own rusage).  Raises PointError with the
    log's tail on failure or timeout."""
    load_before = os.getloadavg()
    t0 = time.monotonic()
    log_path = os.path.join(d, "log.txt")
    with open(log_path, "w") as log:
        log.write("$ %s\n" % " ".join(shlex.quote(c) for c in cmd))
        log.flush()
        rc, usage, timed_out = _run_measured(cmd, log, ctx.timeout,
                                             malloc_env(ctx.malloc))
    if timed_out:
        raise PointError("%s: timed out after %g s" % (point.name(),
                                                       ctx.timeout))
    wall = time.monotonic() - t0
    if rc != 0:
        with open(log_path) as f:
            tail = f.read()[-1000:].strip()
        raise PointError("%s: %s exit %d: %s" % (
            point.name(), os.path.basename(cmd[0]), rc, tail))
    return wall, load_before, usage


def _run_measured(cmd, log, timeout, env):
    """Runs cmd with its output to 'log'; returns (exit status, its own
    rusage, timed out).  os.wait4 gives this child's CPU time and peak RSS
    alone (RUSAGE_CHILDREN would mix the points a sweep runs at once):
    with other jobs on the machine, wall time measures contention, CPU
    time the work."""
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                            env=env)
    expired = threading.Event()

    def kill():
        expired.set()
        proc.kill()
    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage, expired.is_set()


def run_point(ctx, point, policy=None):
    """Runs 'point' unless its result exists; returns the result.
    'policy' is {"panda": {"action"}, "pias": {"action"}} for the schemes
    that mark.  Raises PointError with panda-sim's message on failure."""
    done = load_result(ctx, point)
    if done:
        return done
    d = ctx.point_dir(point)
    os.makedirs(d, exist_ok=True)
    action = None
    if point.scheme in POLICY_KIND:
        if not policy:
            raise PointError("%s: no policy" % point.name())
        action = policy[POLICY_KIND[point.scheme]]["action"]
    cmd = [ctx.binary()] + point.args(ctx.top, action,
                                      point.flow_list_file(d)) \
        + ["--out=" + d]
    wall, load_before, usage = run_logged(ctx, point, cmd, d)
    return summarize(ctx, point, d, cmd, wall, load_before, usage)


def metadata(ctx, point, run, cmd, wall, load_before, usage=None, **extra):
    """A point.json's "metadata": what ran (code, simulator, command,
    allocator), and what it cost (the simulator's own wall time, memory
    and events, the child's CPU time, the machine's load before and
    after); 'extra' keys are the simulator's."""
    m = {
        "ns3_version": run.get("ns3_version"),
        "git_commit": (ctx.git or {}).get("commit"),
        "git_dirty": (ctx.git or {}).get("dirty"),
        "seed": point.seed,
        "wall_s": run["run"]["wall_s"],
        "process_wall_s": wall,
        "cpu_user_s": usage.ru_utime if usage else None,
        "cpu_sys_s": usage.ru_stime if usage else None,
        "malloc": ctx.malloc,
        "peak_rss_kb": run["run"]["peak_rss_kb"],
        "events": run["run"]["events"],
        "loadavg_before": load_before[0],
        "loadavg_after": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "command": " ".join(shlex.quote(c) for c in cmd),
    }
    m.update(extra)
    return m


def summarize(ctx, point, d, cmd, wall, load_before, usage=None):
    with open(os.path.join(d, "run.json")) as f:
        run = json.load(f)
    flows = metrics.read_flows(os.path.join(d, "flows.csv"))
    rpcs = metrics.read_rpcs(os.path.join(d, "rpc.csv"))
    wl = run["workload"]
    rpc = metrics.rpc_summary(rpcs, wl["rpc_from_ns"], wl["load_end_ns"])
    doc = {
        "complete": True,
        "name": point.name(),
        "point": dataclasses.asdict(point),
        "metadata": metadata(ctx, point, run, cmd, wall, load_before,
                             usage, sim_end_s=run["run"]["sim_end_ns"] / 1e9,
                             stopped_by=run["run"]["stopped_by"]),
        "fct": metrics.fct_summary(flows),
        "rpc": rpc,
        "incast": metrics.incast_summary(flows),
        "run": run,
    }
    tmp = os.path.join(d, "point.json.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, os.path.join(d, "point.json"))
    return doc

"""The mid-run workload switch (closed loop): the flows'
workload changes in the middle of a run (web search -> data mining by
default), under the policy modelled on the first workload kept as it is
("static") and under the controller's auto-tune ("autotune"), which pulls
the datapath's histograms, runs panda-model on them (the payload sizes for
T, the finished flows' sizes for the thresholds) and pushes what moves by
more than its margin.  Reported: how long until the thresholds adapt, and
memcached's p99 and the flows' FCT before, during and after the switch.

One switch trial (per variant, on the same testbed, back to back):

  t0            panda with the first workload's policy (tables flushed);
                memcached requests at a fixed rate for the whole trial
                (panda-mc-client --interval, --samples: every request's
                start and latency), flows of the first workload (closed
                loop, --connections);
  t0 + phase    the flow client is stopped and one of the second workload
                started (the switch);
  + settle      end of "during": the window in which auto-tune is expected
                to adapt (its adaptation time is measured, not assumed);
  + after       end of the trial.

Both variants run the auto-tune loop on the same schedule (the static one
logs what it would push and pushes nothing), so they cost the switch the
same.  The loop is the controller's own logic (pandaovs.controller.autotune:
windows, margin, hysteresis, min interval; panda-model on the datapath's
buckets), fed by 'ovs-appctl panda/histogram' (the text the controller
reads over OpenFlow, NXST_PANDA_HISTOGRAM) and pushing with 'ovs-ofctl
--strict mod-flows' under the same policy id (counters kept): the
experiment measures the tuning, not os-ken's scheduling.

testbed/workload_switch.py is the command; testbed/README.md, "Workload
switch", documents it and its results."""

import dataclasses
import json
import os
import sys
import threading
import time

from pandaovs import cli, sizehist
from pandaovs.controller import autotune
from pandaovs.policy import Policy
from .. import console, loadgen
from .. import workload as workloads
from ..lab import FG_PORT, MEMCACHED_PORT
from . import model as tbmodel
from .config import parse_args
from .runner import Run, execute, handle_signals
from .topology import PM1_OFPORT, PM2_IP, PM2_OFPORT, TestbedError

VARIANTS = ("static", "autotune")
SMALL_FLOW = 100 * 1000         # bytes: the "small flows" of the FCT rows
PROG = "testbed/workload_switch.py"


@dataclasses.dataclass(frozen=True)
class SwitchParams:
    to: str = "data-mining"     # the second workload
    phase_s: float = 45.0       # first workload
    settle_s: float = 30.0      # "during"
    after_s: float = 90.0       # second workload, "during" included
    concurrency: int = 14
    mc_interval_us: int = 5000  # one memcached request every 5 ms
    interval_s: float = 5.0     # auto-tune: seconds between pulls
    min_interval_s: float = 10.0
    margin: float = 0.10
    confirm: int = 1
    min_packets: int = 1000
    min_flows: int = 30
    max_step: float = 0.5       # the controller's defaults (autotune)
    bound_factor: float = 4.0
    bin_s: float = 5.0          # time series bins

    def record(self):
        return dataclasses.asdict(self)


MODES = {
    "quick": SwitchParams(),
    "full": SwitchParams(phase_s=180, settle_s=60, after_s=300,
                         interval_s=10, min_interval_s=30, confirm=2,
                         min_flows=100),
}


# -- analysis (pure functions, tested in tests/python) ----------------------
def _rows(path, n):
    """The data lines of a load generator output file, split, with at
    least 'n' words."""
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= n and not w[0].startswith("#"):
                yield w


def read_samples(path):
    """panda-mc-client --samples -> [(start_s, latency_ms)] of the answered
    requests."""
    return [(float(w[4]), float(w[5]) / 1000.0) for w in _rows(path, 7)
            if w[6] == "ok" and w[4] != "-"]


def read_flows(path):
    """panda-fg-client --output -> [(start_s, size_bytes, fct_ms)] of the
    completed flows."""
    return [(float(w[2]), int(w[1]), float(w[4]) / 1000.0)
            for w in _rows(path, 7) if w[6] == "1" and w[4] != "-"]


def percentile(values, p):
    """The load generator's definition: the ceil(p/100 n)-th smallest."""
    if not values:
        return None
    v = sorted(values)
    k = max(1, -(-len(v) * p // 100))
    return v[int(k) - 1]


def windows(t_start, t_switch, settle_s, t_end):
    return {"before": (t_start, t_switch),
            "during": (t_switch, t_switch + settle_s),
            "after": (t_switch + settle_s, t_end)}


def window_stats(samples, flows, wins):
    """Per window: memcached requests, p50/p99 (ms); flows completed (by
    start time), mean FCT (ms) of all flows and of those under
    SMALL_FLOW bytes."""
    out = {}
    for name, (a, b) in wins.items():
        lat = [l for t, l in samples if a <= t < b]
        fl = [(s, f) for t, s, f in flows if a <= t < b]
        small = [f for s, f in fl if s < SMALL_FLOW]
        out[name] = {
            "from_s": a, "to_s": b, "requests": len(lat),
            "p50_ms": percentile(lat, 50), "p99_ms": percentile(lat, 99),
            "flows": len(fl),
            "mean_fct_ms": sum(f for _, f in fl) / len(fl) if fl else None,
            "small_flows": len(small),
            "small_mean_fct_ms": sum(small) / len(small) if small else None}
    return out


def p99_series(samples, t0, bin_s):
    """[(bin start relative to t0, p99 ms, requests)] of memcached."""
    bins = {}
    for t, l in samples:
        bins.setdefault(int((t - t0) // bin_s), []).append(l)
    return [(k * bin_s, percentile(v, 99), len(v))
            for k, v in sorted(bins.items())]


def adaptation(decisions, t_switch):
    """Seconds from the switch to the first push after it, and to the
    last one (None if none)."""
    pushes = [d["t"] for d in decisions
              if d["action"] == "push" and d["t"] >= t_switch]
    if not pushes:
        return {"first_push_s": None, "last_push_s": None, "pushes": 0}
    return {"first_push_s": pushes[0] - t_switch,
            "last_push_s": pushes[-1] - t_switch, "pushes": len(pushes)}


# -- the trial ---------------------------------------------------------------
def panda_flow(policy):
    """The testbed's panda flow (topology.Testbed.scheme_flows) with
    'policy': what ovs-ofctl --strict mod-flows rewrites."""
    return ("priority=10,tcp,in_port=%d,actions=panda(%s),output:%d"
            % (PM2_OFPORT, policy.text(), PM1_OFPORT))


class TuneLoop(threading.Thread):
    """The auto-tune loop of one variant (module doc)."""

    def __init__(self, tb, settings, policy, push, log):
        super().__init__(daemon=True)
        self.tb = tb
        self.settings = settings
        self.current = policy
        self.push = push
        self.log = log
        self.tuner = autotune.Tuner(policy.id, settings)
        # The bounds a configuration without "auto_tune_bounds" gets.
        self.bounds = autotune.effective_bounds(policy, None,
                                                settings.bound_factor)
        self.decisions = []
        self.stop_ev = threading.Event()

    def snapshot(self):
        """{"br0": the id's histograms now}, or {} before its first
        packet."""
        pid = self.current.id
        text = self.tb.sb.appctl("panda/histogram", "br0", str(pid))
        h = sizehist.parse(text).get(pid)
        return {"br0": h} if h else {}

    def run(self):
        # The first window starts now: what an earlier trial counted under
        # the same id (the histograms outlive the tables) is not this one's.
        try:
            self.tuner.base = self.snapshot()
        except (RuntimeError, OSError, sizehist.HistogramError):
            pass
        while not self.stop_ev.wait(self.settings.interval):
            try:
                self.round()
            except (RuntimeError, OSError, sizehist.HistogramError) as e:
                self.decisions.append({"t": time.time(), "action": "error",
                                       "reason": str(e)})

    def round(self):
        action, reason, proposed, inputs = self.tuner.step(
            self.current, self.snapshot(), self.bounds)
        d = dict(inputs, t=time.time(), action=action, reason=reason)
        if "proposed" in inputs:
            p = Policy.from_text(inputs["proposed"])
            d.update(threshold=p.threshold, thresholds=list(p.thresholds),
                     floor=p.floor)
        if proposed is not None and self.push:
            self.tb.sb.ofctl("--strict", "mod-flows", "br0",
                             panda_flow(proposed))
            self.current = proposed
            self.log("      auto-tune push: T %d, thresholds %s (%s)"
                     % (proposed.threshold,
                        "/".join(map(str, proposed.thresholds)),
                        inputs["flow_sizes"]))
        elif proposed is not None:
            d["action"] = "would push"
        self.decisions.append(d)

    def stop(self):
        self.stop_ev.set()
        self.join(60)


def switch_trial(run, tb, variant, policy, to_cdf, p, workdir):
    """One variant's trial (module doc); its result dict."""
    cfg, log = run.cfg, run.log
    os.makedirs(workdir, exist_ok=True)
    res = {"variant": variant, "status": "ok", "dir": workdir,
           "policy_start": policy.text()}
    tb.set_scheme("panda", policy)
    settings = autotune.Settings(
        model=run.build.bin("tools/panda-model"), cdf=None, load=cfg.load,
        interval=p.interval_s, min_interval=p.min_interval_s,
        margin=p.margin, confirm=p.confirm, min_packets=p.min_packets,
        min_flows=p.min_flows, max_step=p.max_step,
        bound_factor=p.bound_factor)
    total = p.phase_s + p.after_s
    path = lambda n: os.path.join(workdir, n)       # noqa: E731
    mc = fg = loop = None
    try:
        mc = loadgen.start_mc_client(
            tb.build, PM2_IP, MEMCACHED_PORT, workdir, host=tb.pm1,
            cdf=loadgen.MEMCACHED_CDF, keys=200, seed=cfg.seed,
            requests=int(total * 1e6 / p.mc_interval_us) + 1,
            interval="%dus" % p.mc_interval_us, duration=total,
            samples=path("mc-samples.txt"), no_progress=True, quiet=True)
        t0 = time.time()
        fg = loadgen.start_fg_client(
            tb.build, PM2_IP, FG_PORT, workdir, host=tb.pm1, tag="fg-before",
            cdf=run.cdf, connections=p.concurrency, duration=3600,
            drain_timeout=1, max_failures=0, seed=cfg.seed,
            output=path("flows-before.txt"), no_progress=True, quiet=True)
        loop = TuneLoop(tb, settings, policy, variant == "autotune", log)
        loop.start()
        time.sleep(p.phase_s)
        if fg.poll() is not None:
            raise TestbedError("panda-fg-client (first workload) exited: %s"
                               % fg.error_tail())
        fg.interrupt()
        t_switch = time.time()
        log("      switch to %s at %.0f s" % (p.to, t_switch - t0))
        fg = loadgen.start_fg_client(
            tb.build, PM2_IP, FG_PORT, workdir, host=tb.pm1, tag="fg-after",
            cdf=to_cdf, connections=p.concurrency, duration=3600,
            drain_timeout=1, max_failures=0, seed=cfg.seed + 1,
            output=path("flows-after.txt"), no_progress=True, quiet=True)
        time.sleep(p.after_s)
        if fg.poll() is not None:
            raise TestbedError("panda-fg-client (second workload) exited: "
                               "%s" % fg.error_tail())
        fg.interrupt()
        t_end = time.time()
        mc.wait(p.phase_s + p.after_s + 120)
    except (TestbedError, loadgen.LoadgenError, RuntimeError, OSError) as e:
        res["status"] = "failed: %s" % e
        return res
    finally:
        if loop is not None:
            loop.stop()
            res["decisions"] = loop.decisions
            res["policy_end"] = loop.current.text()
        for c in (fg, mc):
            if c is not None:
                c.stop()
    samples = read_samples(path("mc-samples.txt"))
    flows = read_flows(path("flows-before.txt")) + \
        read_flows(path("flows-after.txt"))
    start = t0 + cfg.warmup_s
    res.update({
        "t0": t0, "t_switch": t_switch, "t_end": t_end,
        "windows": window_stats(samples, flows,
                                windows(start, t_switch, p.settle_s, t_end)),
        "p99_series": p99_series(samples, t0, p.bin_s),
        "adaptation": adaptation(res["decisions"], t_switch),
        "memcached": mc.result()})
    return res


class SwitchRun(Run):
    """testbed/run.py's run (metadata, collection and model on the first
    workload) with the switch trials as its experiment."""

    def __init__(self, cfg, params, log=print):
        super().__init__(cfg, log=log, prog=PROG)
        self.params = params
        self.run_id = cfg.run_id or self.run_id.replace("-%s-" % cfg.mode,
                                                        "-switch-%s-"
                                                        % cfg.mode)
        self.dir = os.path.join(cfg.out, self.run_id)

    def _execute(self):
        """(Run.execute registers and unregisters the congestion control
        around this.)"""
        c, p = self.cfg, self.params
        self.preflight()
        os.makedirs(self.dir, exist_ok=True)
        t_start = time.time()
        to = workloads.load(p.to)
        self.result = {"metadata": None, "policy": None, "collection": None,
                       "switch": {"params": p.record(),
                                  "from": c.workload.record(
                                      copy="workload.cdf"),
                                  "to": to.record(copy="workload-to.cdf"),
                                  "variants": {}}}
        self.cdf = c.workload.write_copy(os.path.join(self.dir,
                                                      "workload.cdf"))
        to_cdf = to.write_copy(os.path.join(self.dir, "workload-to.cdf"))
        self.total = 1
        cc = c.ccs[0]
        why = self.use_cc(cc)
        if why:
            raise TestbedError("--cc %s: %s" % (cc, why))
        self.log("panda testbed, workload switch: run %s -> %s"
                 % (self.run_id, self.dir))
        with self.testbed(c, cc, self.prof["mtu"]) as tb:
            self.result["metadata"] = self.metadata(tb)
            if not tb.panda_available():
                raise TestbedError("this OVS build has no panda action")
            if c.policy:
                record = tbmodel.load_policy(c.policy)
                record["source"] = os.path.abspath(c.policy)
                self.use_policy(record)
            else:
                self.stage_collect_model(tb, [])
            policy = self.policies["panda"]
            for v in VARIANTS:
                self.log("switch trial %s: %s for %g s, then %s for %g s"
                         % (v, c.workload.name, p.phase_s, p.to, p.after_s))
                r = switch_trial(self, tb, v, policy, to_cdf, p,
                                 os.path.join(self.dir, "switch-%s" % v))
                self.result["switch"]["variants"][v] = r
                self.log("    %s: %s" % (v, summary_line(r)))
                self.save()
        self.result["metadata"]["runtime_s"] = time.time() - t_start
        self.save()
        if c.plots:
            try:
                from . import plots
                self.result["plots"] = [plots.plot_switch(self.result,
                                                          self.dir)]
                self.save()
            except Exception as e:  # plotting must not lose the data
                self.log("warning: plot failed: %s" % e)
        self.log(table(self.result))
        failed = [v for v, r in self.result["switch"]["variants"].items()
                  if r["status"] != "ok"]
        return 1 if failed else 0


def _f(v, fmt="%.2f"):
    return "-" if v is None else fmt % v


def summary_line(r):
    if r["status"] != "ok":
        return r["status"]
    w = r["windows"]
    a = r["adaptation"]
    return ("p99 %s / %s / %s ms, small-flow FCT %s / %s / %s ms (before / "
            "during / after); first push %s s after the switch" % (
                _f(w["before"]["p99_ms"]), _f(w["during"]["p99_ms"]),
                _f(w["after"]["p99_ms"]), _f(w["before"]["small_mean_fct_ms"]),
                _f(w["during"]["small_mean_fct_ms"]),
                _f(w["after"]["small_mean_fct_ms"]),
                _f(a["first_push_s"], "%.0f")))


def table(result):
    lines = ["variant   window  mc_req  p50_ms  p99_ms  flows  "
             "mean_fct_ms  small  small_fct_ms"]
    for v, r in result["switch"]["variants"].items():
        if r["status"] != "ok":
            lines.append("%-9s %s" % (v, r["status"]))
            continue
        for name in ("before", "during", "after"):
            w = r["windows"][name]
            lines.append("%-9s %-7s %6d %7s %7s %6d %12s %6d %13s" % (
                v, name, w["requests"], _f(w["p50_ms"]), _f(w["p99_ms"]),
                w["flows"], _f(w["mean_fct_ms"], "%.1f"), w["small_flows"],
                _f(w["small_mean_fct_ms"], "%.1f")))
        lines.append("%-9s adaptation: %s" % (v, json.dumps(r["adaptation"])))
    return "\n".join(lines)


def parser():
    p = cli.ArgumentParser(
        prog=PROG, add_help=False,
        description="The mid-run workload switch (testbed/README.md, "
        "\"Workload switch\"); other options are testbed/run.py's.")
    p.add_argument("--to", default=None,
                   help="second workload: a shipped one (testbed/run.py "
                        "--workload) or a CDF file (default data-mining)")
    for name in ("phase", "settle", "after"):
        p.add_argument("--%s" % name, type=float, metavar="SECONDS")
    p.add_argument("--concurrency", type=int)
    p.add_argument("--auto-tune-interval", type=float, metavar="SECONDS")
    p.add_argument("--auto-tune-min-flows", type=int)
    return p


def parse(argv):
    """(RunConfig, SwitchParams) from 'argv'."""
    own, rest = parser().parse_known_args(argv)
    cfg = parse_args(rest + ["--schemes", "panda"], prog=PROG)
    if cfg.resume or cfg.stop_after_s is not None:
        print("%s: --resume/--stop-after: runs over several sessions are "
              "testbed/run.py's only" % PROG, file=sys.stderr)
        sys.exit(2)
    if cfg.mode not in MODES or cfg.dry_run:
        print("%s: %s: the workload switch has --quick and --full, and no "
              "dry run" % (PROG, "--dry-run" if cfg.dry_run
                           else "--" + cfg.mode), file=sys.stderr)
        sys.exit(2)
    base = MODES[cfg.mode]
    kw = {k: v for k, v in (("to", own.to), ("phase_s", own.phase),
                            ("settle_s", own.settle),
                            ("after_s", own.after),
                            ("concurrency", own.concurrency),
                            ("interval_s", own.auto_tune_interval),
                            ("min_flows", own.auto_tune_min_flows))
          if v is not None}
    params = dataclasses.replace(base, **kw)
    try:
        workloads.load(params.to)
    except workloads.WorkloadError as e:
        print("%s: --to: %s" % (PROG, e), file=sys.stderr)
        sys.exit(2)
    if not 0 < params.settle_s <= params.after_s or params.phase_s <= 0:
        print("%s: need --phase > 0 and 0 < --settle <= --after" % PROG,
              file=sys.stderr)
        sys.exit(2)
    return cfg, params


def main(argv=None):
    cfg, params = parse(sys.argv[1:] if argv is None else argv)
    handle_signals()
    return execute(SwitchRun(cfg, params, log=console.Console(live=False)),
                   PROG)


if __name__ == "__main__":
    sys.exit(main())

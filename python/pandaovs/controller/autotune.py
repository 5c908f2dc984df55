"""--auto-tune: the controller closes the loop of the Panda thesis's
"future work" (issue 19).  Periodically it pulls every bridge's histograms
(NXST_PANDA_HISTOGRAM, pandaovs.sizehist), runs the model on what was
counted since the last run -- panda-model itself, the tool the offline
stage uses, on "size count" files written from the buckets -- and pushes a
new T and new thresholds when they move by more than a margin.

Inputs of the model, per policy id:
  FLT  the payload sizes counted at the levels in 'flt_levels' (default
       level 0: what the policy keeps on top is the latency traffic),
  FHT  the payload sizes counted at the other levels,
  the flow-size CDF: the sizes of the flows that finished in the window
       (the datapath's flow histogram: each connection once, when it ends
       by FIN or RST, expires or is evicted), once the window holds
       'min_flows' of them; until then the CDF file of the settings if
       there is one (else the window grows).  The buckets (4 per power of
       two) become a CDF with each bucket's flows spread evenly over it
       (sizehist.Histogram.flow_cdf_lines()), written next to the size
       files, so that panda-model derives the thresholds alpha from it as
       it does from any CDF;
  the load of the settings (panda-model --load), and K, the DSCP and the
       queues of the policy in force (so only T and the thresholds move;
       the id stays, so the connections keep their counters);
  the FLT counter's excursion bound of the policy in force: a policy
       modelled with --flt-level0 and --flt-bound floor carries floor =
       -(excursion - alpha_1), the credit its FLT needs to stay at level 0
       (measured by replaying Algorithm 2 over the collected FLT packets in
       order, which histograms cannot give).  The excursion is kept, and
       the proposal's floor set for its own alpha_1: -(excursion -
       alpha_1), 0 if alpha_1 is above it (keep_flt_bound(); the Tuner
       remembers it across pushes, Tuner.flt_excursion()).  Without
       this a proposal with a smaller alpha_1 and no floor would demote
       the very traffic the policy keeps on top.
Histograms of bridges that share a datapath are counted once per bridge;
scaling every bucket alike changes neither T nor the thresholds.  The flow
histogram counts every connection of the policy id, FLT ones included:
they are few (a memcached connection carries many requests and ends
rarely); a controller that wants them out gives FLT traffic a policy id
of its own.

When to push (all of it, so that the policy does not flap):
  window       the model runs on what was counted since the last run, once
               that holds 'min_packets' packets in each class (otherwise
               the window grows): the policy follows the traffic of now,
               not of the whole uptime;
  margin       dead band: a proposal is a change only if T or a threshold
               moves by more than this fraction of its value in force;
  confirm      hysteresis: it must be a change in this many consecutive
               windows (a burst that moves one window does not push);
  min_interval at least this many seconds between two pushes of one id.
Every decision is logged with its inputs (packets per class, the window's
length, the policy in force, the proposal, the change) and kept for the
REST status.

This module does not import os-ken: app.py feeds it histograms and applies
its decisions, so the logic is tested on its own (tests/python).
"""

import dataclasses
import json
import os
import tempfile
import time

from .. import modeltool
from ..policy import Policy
from ..sizehist import Histogram


class AutoTuneError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class Settings:
    model: str                  # panda-model executable
    cdf: str                    # flow-size CDF file (load generator's
                                # format) while the window has fewer than
                                # min_flows finished flows; or None: wait
    load: float                 # rho for the thresholds (0 < rho < 1)
    interval: float = 10.0      # seconds between pulls
    min_interval: float = 60.0  # seconds between pushes of one id
    margin: float = 0.10        # relative dead band
    confirm: int = 2            # consecutive windows over the margin
    min_packets: int = 1000     # per class, per window
    min_flows: int = 100        # finished flows for a live CDF (0: never)
    flt_levels: tuple = (0,)
    header_len: int = 40
    cdf_unit: str = "bytes"

    def __post_init__(self):
        if not (os.path.isfile(self.model) and os.access(self.model,
                                                         os.X_OK)):
            raise AutoTuneError("model: %s is not an executable (the "
                                "panda-model of the build)" % self.model)
        if self.cdf is not None and not os.path.isfile(self.cdf):
            raise AutoTuneError("cdf: %s: no such file" % self.cdf)
        if self.cdf is None and not self.min_flows:
            raise AutoTuneError("cdf: none, and min_flows 0 (never the "
                                "live flow sizes): the thresholds need a "
                                "flow-size CDF")
        checks = [("load", 0 < self.load < 1, "in (0, 1)"),
                  ("interval", self.interval > 0, "> 0 seconds"),
                  ("min_interval", self.min_interval >= 0, ">= 0 seconds"),
                  ("margin", 0 <= self.margin < 10, "in [0, 10)"),
                  ("confirm", 1 <= self.confirm <= 100, "1 to 100"),
                  ("min_packets", 1 <= self.min_packets, ">= 1"),
                  ("min_flows", 0 <= self.min_flows, ">= 0"),
                  ("flt_levels", bool(self.flt_levels) and all(
                      0 <= lv < 8 for lv in self.flt_levels),
                   "levels 0 to 7, at least one"),
                  ("header_len", 0 <= self.header_len <= 1000,
                   "0 to 1000"),
                  ("cdf_unit", self.cdf_unit in ("bytes", "packets"),
                   "bytes or packets")]
        for name, ok, want in checks:
            if not ok:
                raise AutoTuneError("%s: %r must be %s"
                                    % (name, getattr(self, name), want))

    def to_json(self):
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text):
        d = json.loads(text)
        d["flt_levels"] = tuple(d["flt_levels"])
        return cls(**d)


def relative_change(current, proposed):
    """The largest relative move of T or a threshold from 'current' to
    'proposed' (a different number of levels counts as infinite)."""
    if len(current.thresholds) != len(proposed.thresholds):
        return float("inf")
    pairs = [(current.threshold, proposed.threshold)] + list(
        zip(current.thresholds, proposed.thresholds))
    return max(abs(p - c) / max(c, 1) for c, p in pairs)


class Tuner:
    """The state of one policy id: the histograms the window starts from
    (per bridge), the proposals in a row over the margin, the last push."""

    def __init__(self, pid, settings, clock=time.monotonic):
        self.id = pid
        self.s = settings
        self.clock = clock
        self.base = {}              # bridge -> Histogram
        self.window_start = clock()
        self.over = 0               # consecutive windows over the margin
        self.last_push = None
        self.excursion = None       # FLT counter bound (flt_excursion())

    def window(self, snaps):
        """Given this round's {bridge: Histogram} of the id, returns
        (window, FLT packets, FHT packets, finished flows): the window (a
        Histogram, the sum over bridges of what was counted since the base)
        once each class holds min_packets packets and, without a CDF file,
        min_flows flows have finished, and moves the base; else None (the
        window grows)."""
        total = Histogram(self.id)
        for br, snap in snaps.items():
            base = self.base.get(br)
            delta = snap.minus(base) if base is not None else snap
            total.add(delta if delta is not None else snap)
        flt = total.packets(self.s.flt_levels)
        fht = total.packets() - flt
        flows = total.flows()
        if min(flt, fht) < self.s.min_packets \
                or (self.s.cdf is None and flows < self.s.min_flows):
            for br, snap in snaps.items():
                self.base.setdefault(br, None)
            return None, flt, fht, flows
        self.base = dict(snaps)
        return total, flt, fht, flows

    def flt_excursion(self, current):
        """The FLT counter excursion bound in force: alpha_1 - floor of a
        policy with a floor (the model's --flt-bound floor), remembered,
        since a pushed policy whose alpha_1 is above it has floor 0 and
        the same bound."""
        if current.floor < 0 and current.thresholds:
            self.excursion = current.thresholds[0] - current.floor
        return self.excursion

    def decide(self, current, proposed):
        """Returns (push, change, reason) for 'proposed' against 'current'
        and notes the outcome."""
        change = relative_change(current, proposed)
        now = self.clock()
        if change <= self.s.margin:
            self.over = 0
            return False, change, "within the margin"
        self.over += 1
        if self.over < self.s.confirm:
            return False, change, "over the margin %d of %d times" % (
                self.over, self.s.confirm)
        if self.last_push is not None and \
                now - self.last_push < self.s.min_interval:
            return False, change, "last push %.0f s ago (min_interval %g s)" \
                % (now - self.last_push, self.s.min_interval)
        self.over = 0
        self.last_push = now
        return True, change, "over the margin %d times in a row" \
            % self.s.confirm


def flow_cdf(window, settings):
    """Whether the thresholds come from the window's finished flows."""
    return bool(settings.min_flows) and window.flows() >= settings.min_flows


def model_inputs(window, settings, directory):
    """Writes the FLT and FHT "size count" files of 'window' in
    'directory', and the CDF of its finished flows if it has enough
    (flow_cdf()); returns their paths ("cdf": that CDF or the file of the
    settings)."""
    fht_levels = [lv for lv in range(8) if lv not in settings.flt_levels]
    paths = {}
    for name, levels in (("flt", settings.flt_levels), ("fht", fht_levels)):
        paths[name] = os.path.join(directory, "%s.hist" % name)
        with open(paths[name], "w") as f:
            f.write("# panda/histogram policy %d, %s levels %s\n" % (
                window.id, name.upper(), ",".join(map(str, levels))))
            for line in window.model_lines(levels, settings.header_len):
                f.write(line + "\n")
    paths["cdf"] = settings.cdf
    if flow_cdf(window, settings):
        paths["cdf"] = os.path.join(directory, "flows.cdf")
        with open(paths["cdf"], "w") as f:
            f.write("# panda/histogram policy %d: %d finished flows, bytes "
                    "<cumulative probability>\n" % (window.id,
                                                     window.flows()))
            for line in window.flow_cdf_lines():
                f.write(line + "\n")
    return paths


def model_command(settings, current, flt, fht, cdf, out):
    """The panda-model command for the policy id of 'current' on the FLT
    and FHT files and the flow-size CDF 'cdf' (the live one is in bytes):
    K, DSCP and queues of the policy in force."""
    unit = settings.cdf_unit if cdf == settings.cdf else "bytes"
    return [settings.model, "--id", str(current.id),
            "--flt", flt, "--fht", fht,
            "--cdf", cdf, "--cdf-unit", unit,
            "--load", repr(settings.load),
            "--levels", str(current.n_levels),
            "--header-len", str(settings.header_len),
            "--dscp", "/".join(str(d) for d in current.dscp),
            "--queues", "/".join(str(q) for q in current.queues),
            "-o", out]


def keep_flt_bound(proposed, excursion):
    """'proposed' with the FLT counter bound 'excursion' (bytes, or None:
    none) kept (module doc): floor = -(excursion - alpha_1) for its own
    alpha_1, 0 if alpha_1 is above it."""
    if excursion is None or not proposed.thresholds:
        return proposed
    return dataclasses.replace(
        proposed, floor=min(0, proposed.thresholds[0] - excursion))


def run_model(settings, current, window, keep_dir=None, excursion=None):
    """Runs panda-model on 'window' for the id of 'current'; returns
    (Policy, with the FLT counter bound 'excursion' kept
    (keep_flt_bound()), model JSON, command, where the flow sizes came
    from: "live N flows" or the CDF file).  'keep_dir': write the inputs there (kept),
    else in a temporary directory."""
    d = keep_dir or tempfile.mkdtemp(prefix="panda-autotune-")
    try:
        paths = model_inputs(window, settings, d)
        out = os.path.join(d, "policy.json")
        cmd = model_command(settings, current, paths["flt"], paths["fht"],
                            paths["cdf"], out)
        record, warnings = modeltool.run({"tuned": cmd}, {"tuned": out})
        rec = record["tuned"]
        source = "live %d flows" % window.flows() \
            if paths["cdf"] != settings.cdf else settings.cdf
        proposed = keep_flt_bound(Policy.from_text(rec["action"]),
                                  excursion)
        return proposed, rec["model"], rec["command"], source
    finally:
        if keep_dir is None:
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
            os.rmdir(d)

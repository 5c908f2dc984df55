"""--auto-tune: the controller closes the loop of the Panda thesis's
"future work".  Periodically it pulls every bridge's histograms
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
       by FIN or RST or expires, if it sent payload in two packets or
       more; never an evicted one), once the window holds
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

Whose histograms (app.py): only those of the switches the configuration
allows (pandaovs.controller.switches), and of each switch only the ids
its rules give it; a histogram the datapath shares between ids (its
overflow table) is not used.

What a tenant can move (the decision).  The tenants' traffic is the
model's input, so a tenant can send what the model reads: one-packet
flows (the datapath counts a flow only with two packets or more, and
never an evicted one: lib/panda/conn-table.c), or packets of chosen sizes
at level 0.  The histograms are per policy id, level and bucket: they do
not say which tenant sent what, so the controller cannot cap a tenant;
what it can do is:
  source cap   with two bridges or more, no bridge (the finest source the
               data names) gives more than 'source_cap' of a class (FLT
               packets, FHT packets, finished flows) of the window: its
               buckets of that class are scaled down (cap_factors());
  trim         the 'trim' share of each payload class's packets at each
               end of its size range is left out (trim_sizes()): a few
               odd sizes do not move T;
  max_step     a push moves T and each threshold by at most this factor
               of its value in force (1 + max_step up, 1 / (1 + max_step)
               down): a window that the traffic of one tenant dominates
               moves the policy one bounded step, and only after
               'confirm' windows;
  bounds       T and each threshold stay within the operator's bounds,
               "auto_tune_bounds" in the configuration (per policy id:
               "threshold": [min, max], "thresholds": [[min, max], ...]),
               by default the configured value divided and multiplied by
               'bound_factor' (4); whatever the traffic, no push leaves
               them.
A per-tenant cap needs a datapath counter per source (per tenant match)
that the histograms do not have; a tenant that needs to be kept out of
another's model gets a policy id (a rule) of its own: each id is tuned
on its own traffic.  Every decision logs each source's contribution and,
when the proposal is over the margin and there are two sources or more,
which sources moved it ("influence", influence()): how much farther from
the policy in force the proposal is with the source than without it.

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
import math
import os
import tempfile
import time

from .. import modeltool
from ..policy import Policy, PolicyError
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
    trim: float = 0.01          # of each payload class, at each end
    source_cap: float = 0.5     # largest share of a class for one bridge
    max_step: float = 0.5       # relative move of T / a threshold per push
    bound_factor: float = 4.0   # default bounds: configured / and x this

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
                   "bytes or packets"),
                  ("trim", 0 <= self.trim < 0.5, "in [0, 0.5)"),
                  ("source_cap", 0 < self.source_cap <= 1, "in (0, 1]"),
                  ("max_step", 0 < self.max_step <= 100, "in (0, 100]"),
                  ("bound_factor", 1 <= self.bound_factor <= 1e6,
                   "in [1, 1e6]")]
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


# ---- The operator's bounds. ------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Bounds:
    """[min, max] of T and of each threshold of one policy id."""
    threshold: tuple
    thresholds: tuple
    source: str = "configuration"

    def summary(self):
        return {"threshold": list(self.threshold),
                "thresholds": [list(b) for b in self.thresholds],
                "source": self.source}


def default_bounds(policy, factor):
    """The configured value divided and multiplied by 'factor'."""
    def around(v):
        return (int(v // factor), int(min(v * factor, U64)))
    return Bounds(around(policy.threshold),
                  tuple(around(t) for t in policy.thresholds),
                  "default: configured value / and x %g" % factor)


U64 = (1 << 64) - 1
MAX_T = 65535


def parse_bounds(src, obj, rules):
    """The configuration's "auto_tune_bounds" ({policy id: {"threshold":
    [min, max], "thresholds": [[min, max], ...]}}, either key optional) ->
    {id: Bounds}; the parts not given default at use time
    (effective_bounds()).  Raises ConfigError naming the field."""
    from .config import BOUNDS_KEY, ConfigError
    if obj is None:
        return {}
    where = "%s: %s" % (src, BOUNDS_KEY)
    if not isinstance(obj, dict):
        raise ConfigError("%s: expected an object {policy id: {\"threshold\": "
                          "[min, max], \"thresholds\": [[min, max], ...]}}"
                          % where)
    panda = {r.policy.id: r.policy for r in rules
             if r.policy is not None and r.policy.kind == "panda"}
    out = {}
    for key, b in obj.items():
        w = "%s[%s]" % (where, json.dumps(key))
        try:
            pid = int(key, 10)
        except ValueError:
            pid = None
        if pid not in panda:
            raise ConfigError("%s: not the id of a policy of kind panda in "
                              "the configuration (ids: %s)" % (
                                  w, ", ".join(str(i) for i in sorted(panda))
                                  or "none"))
        p = panda[pid]
        if not isinstance(b, dict) or set(b) - {"threshold", "thresholds"}:
            raise ConfigError("%s: expected {\"threshold\": [min, max], "
                              "\"thresholds\": [[min, max], ...]}" % w)

        def pair(field, v, hi, value):
            if not (isinstance(v, list) and len(v) == 2
                    and all(isinstance(x, int) and not isinstance(x, bool)
                            for x in v) and 0 <= v[0] <= v[1] <= hi):
                raise ConfigError("%s.%s: expected [min, max], integers, "
                                  "0 <= min <= max <= %d, got %s"
                                  % (w, field, hi, json.dumps(v)))
            if not v[0] <= value <= v[1]:
                raise ConfigError("%s.%s: the configured value %d is outside "
                                  "[%d, %d]" % (w, field, value, v[0], v[1]))
            return tuple(v)
        t = pair("threshold", b["threshold"], MAX_T, p.threshold) \
            if "threshold" in b else None
        ts = None
        if "thresholds" in b:
            v = b["thresholds"]
            if not isinstance(v, list) or len(v) != len(p.thresholds):
                raise ConfigError("%s.thresholds: expected %d [min, max] "
                                  "pairs (policy id %d has %d levels)"
                                  % (w, len(p.thresholds), pid,
                                     p.n_levels))
            ts = tuple(pair("thresholds[%d]" % i, x, U64, p.thresholds[i])
                       for i, x in enumerate(v))
        out[pid] = (t, ts)
    return {pid: Bounds(*v) for pid, v in out.items()}


def effective_bounds(configured, bounds, factor):
    """The bounds of the id of policy 'configured': those of the
    configuration ('bounds', from parse_bounds(), or None), the parts it
    does not give by default_bounds()."""
    d = default_bounds(configured, factor)
    if bounds is None:
        return d
    return Bounds(bounds.threshold or d.threshold,
                  bounds.thresholds or d.thresholds,
                  "configuration" + ("" if bounds.threshold and
                                     bounds.thresholds else
                                     " (the rest %s)" % d.source))


def bound_proposal(current, proposed, bounds, max_step):
    """'proposed' with T and each threshold moved at most 'max_step' (a
    factor 1 + max_step either way) from 'current' and kept within
    'bounds'.  Returns (policy or None, notes): None when the result is
    not a valid policy (e.g. the thresholds are no longer ascending);
    notes say what was limited."""
    notes = []

    def limit(name, cur, prop, lo, hi):
        step_lo = int(cur / (1 + max_step))
        step_hi = max(int(cur * (1 + max_step)), cur + 1)
        a, b = max(lo, step_lo), min(hi, step_hi)
        if a > b:                   # in force outside the bounds
            a, b = lo, hi
        v = min(max(prop, a), b)
        if v != prop:
            notes.append("%s %d -> %d (%s)" % (
                name, prop, v, "bounds [%d, %d]" % (lo, hi)
                if v in (lo, hi) and not a < v < b else
                "step %g from %d" % (max_step, cur)))
        return v
    if len(current.thresholds) != len(proposed.thresholds):
        return None, ["%d thresholds proposed, %d in force" % (
            len(proposed.thresholds), len(current.thresholds))]
    t = limit("T", current.threshold, proposed.threshold,
              *bounds.threshold)
    ts = tuple(limit("alpha_%d" % (i + 1), c, p, *b) for i, (c, p, b) in
               enumerate(zip(current.thresholds, proposed.thresholds,
                             bounds.thresholds)))
    if not notes:
        return proposed, notes
    try:
        return proposed.replace(threshold=t, thresholds=ts), notes
    except PolicyError as e:
        return None, notes + ["limited proposal refused: %s" % e]


# ---- What each source may weigh. --------------------------------------------

def cap_factors(values, cap):
    """{source: factor} that scales 'values' ({source: amount}) so that no
    source is more than 'cap' of the scaled total (at least 1/n of it with
    n sources: the cap cannot go below an equal share).  One source (or
    none with anything): factors 1."""
    f = {k: 1.0 for k in values}
    live = sorted((k for k in values if values[k] > 0),
                  key=lambda k: -values[k])
    n = len(live)
    if n < 2:
        return f
    cap = max(cap, 1.0 / n)
    rest = float(sum(values[k] for k in live))
    if values[live[0]] <= cap * rest:
        return f
    # The k largest are cut to L = cap x (k L + the others' sum).
    for k in range(1, n):
        rest -= values[live[k - 1]]
        if cap * k >= 1:
            break
        level = cap * rest / (1 - cap * k)
        if values[live[k]] <= level:
            for s in live[:k]:
                f[s] = level / values[s]
            return f
    level = values[live[-1]]            # cap = 1/n: all equal
    for s in live:
        f[s] = level / values[s]
    return f


def classes(h, flt_levels):
    """(FLT packets, FHT packets, finished flows) of Histogram 'h'."""
    flt = h.packets(flt_levels)
    return flt, h.packets() - flt, h.flows()


def scaled(h, f_flt, f_fht, f_flow, flt_levels):
    """'h' with its FLT levels' buckets times f_flt, the other levels'
    times f_fht and its flow buckets times f_flow."""
    out = Histogram(h.id, h.shared)
    for lv, b in h.payload.items():
        f = f_flt if lv in flt_levels else f_fht
        out.payload[lv] = {lo: c * f for lo, c in b.items() if c}
    out.flow = {lo: c * f_flow for lo, c in h.flow.items() if c}
    return out


def trim_sizes(sizes, frac):
    """{size: count} without the 'frac' share of the count at each end of
    the size range (a bucket on the edge keeps what is left of it)."""
    total = sum(sizes.values())
    if not frac or not total:
        return dict(sizes)
    out = dict(sizes)
    for order in (sorted(out), sorted(out, reverse=True)):
        cut = frac * total
        for size in order:
            if cut <= 0:
                break
            take = min(out[size], cut)
            out[size] -= take
            cut -= take
    return {k: v for k, v in out.items() if v > 1e-9}


def _count(c):
    return "%d" % c if float(c).is_integer() else "%.9g" % c


def relative_change(current, proposed):
    """The largest relative move of T or a threshold from 'current' to
    'proposed' (a different number of levels counts as infinite)."""
    if len(current.thresholds) != len(proposed.thresholds):
        return float("inf")
    pairs = [(current.threshold, proposed.threshold)] + list(
        zip(current.thresholds, proposed.thresholds))
    return max(abs(p - c) / max(c, 1) for c, p in pairs)


class Window:
    """One window of a policy id: 'deltas' ({bridge: Histogram} counted
    in it), 'factors' ({bridge: (FLT, FHT, flows) scale}: the source cap),
    'hist' (their capped sum, what the model reads; None while the window
    waits) and its classes' totals."""

    def __init__(self, pid, deltas, factors, hist):
        self.id = pid
        self.deltas = deltas
        self.factors = factors
        self.hist = hist
        self.flt = self.fht = self.flows = 0

    @classmethod
    def of(cls, pid, deltas, settings, leave_out=None):
        counts = {br: classes(h, settings.flt_levels)
                  for br, h in deltas.items() if br != leave_out}
        caps = [cap_factors({br: c[i] for br, c in counts.items()},
                            settings.source_cap) for i in range(3)]
        factors = {br: tuple(caps[i][br] for i in range(3))
                   for br in counts}
        total = Histogram(pid)
        for br in counts:
            total.add(scaled(deltas[br], *factors[br],
                             flt_levels=settings.flt_levels))
        w = cls(pid, deltas, factors, total)
        w.flt, w.fht, w.flows = classes(total, settings.flt_levels)
        return w

    def sources(self, settings):
        """{bridge: its counts and cap factors}, for the decision log."""
        out = {}
        for br, h in sorted(self.deltas.items()):
            flt, fht, flows = classes(h, settings.flt_levels)
            f = self.factors.get(br, (1.0, 1.0, 1.0))
            out[br] = {"flt_packets": flt, "fht_packets": fht,
                       "flows": flows}
            capped = {k: round(v, 4) for k, v in
                      zip(("flt", "fht", "flows"), f) if v < 1}
            if capped:
                out[br]["capped_to"] = capped
        return out


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
        """Given this round's {bridge: Histogram} of the id, returns a
        Window: what each bridge counted since the base, each capped to
        'source_cap' of a class (cap_factors()), and their sum, once each
        class holds min_packets packets and, without a CDF file, min_flows
        flows have finished (then the base moves); else its 'hist' is None
        (the window grows)."""
        deltas = {}
        for br, snap in snaps.items():
            base = self.base.get(br)
            delta = snap.minus(base) if base is not None else snap
            deltas[br] = delta if delta is not None else snap
        w = Window.of(self.id, deltas, self.s)
        if min(w.flt, w.fht) < self.s.min_packets \
                or (self.s.cdf is None and w.flows < self.s.min_flows):
            for br, snap in snaps.items():
                self.base.setdefault(br, None)
            w.hist = None
            return w
        self.base = dict(snaps)
        return w

    def step(self, current, snaps, bounds):
        """One round of this id: 'current' is the policy in force, 'snaps'
        this round's {bridge: Histogram}, 'bounds' the operator's
        (effective_bounds()).  Window -> model -> step and bounds -> margin,
        hysteresis and interval.  Returns (action: "wait", "keep" or
        "push"; reason; the policy to push or None; the inputs to log:
        each source's counts and caps, the model's proposal, what the
        bounds and the step limited, and, over the margin with two sources
        or more, each source's influence).  The controller (app.py) and
        the workload-switch experiment (testbed/workload_switch.py) both
        run this."""
        st = self.s
        win = self.window(snaps)
        inputs = {"bridges": sorted(snaps), "flt_packets": win.flt,
                  "fht_packets": win.fht, "flows": win.flows,
                  "sources": win.sources(st), "policy": current.text(),
                  "bounds": bounds.summary()}
        if win.hist is None:
            return "wait", "fewer than %d packets in a class%s" % (
                st.min_packets, "" if st.cdf else
                " or %d finished flows" % st.min_flows), None, inputs
        excursion = self.flt_excursion(current)
        try:
            raw, _, cmd, source = propose(st, current, win.hist,
                                          excursion=excursion)
        except (modeltool.ModelToolError, PolicyError, OSError) as e:
            return "keep", "model failed: %s" % e, None, inputs
        proposed, limits = bound_proposal(current, raw, bounds, st.max_step)
        inputs.update({"model_proposed": raw.text(), "limited": limits,
                       "margin": st.margin, "flow_sizes": source,
                       "model_command": cmd})
        if proposed is None:
            return "keep", "the proposal within the bounds and the step is " \
                "not a valid policy", None, inputs
        proposed = keep_flt_bound(proposed, excursion)
        push, change, reason = self.decide(current, proposed)
        inputs.update({"proposed": proposed.text(), "change": change})
        if change > st.margin and len(win.deltas) > 1:
            inputs["influence"] = influence(st, current, win, raw, excursion)
        return ("push" if push else "keep"), reason, \
            (proposed if push else None), inputs

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


KEPT_DECISIONS = 50


def record_decision(decisions, log, pid, action, reason, inputs):
    """Appends the decision (a dict: time, policy id, action, reason and
    the inputs) to 'decisions', keeping the last KEPT_DECISIONS, logs it
    with its inputs and returns it.  The controller's rounds (app.py) and
    tune-bpf's (bpfhosts.py) record the same way."""
    d = {"time": time.time(), "policy_id": pid, "action": action,
         "reason": reason}
    d.update(inputs)
    decisions.append(d)
    del decisions[:-KEPT_DECISIONS]
    log.info("auto-tune policy %s: %s (%s); inputs %s", pid, action, reason,
             json.dumps(inputs, sort_keys=True))
    return d


def flow_cdf(window, settings):
    """Whether the thresholds come from the window's finished flows."""
    return bool(settings.min_flows) and window.flows() >= settings.min_flows


def size_counts(window, levels, header_len):
    """{size: count} of the payload buckets of 'levels', each bucket at
    its lower edge + header_len (sizehist.Histogram.model_lines())."""
    sizes = {}
    for lv in levels:
        for lo, c in window.payload.get(lv, {}).items():
            sizes[lo + header_len] = sizes.get(lo + header_len, 0) + c
    return sizes


def model_inputs(window, settings, directory):
    """Writes the FLT and FHT "size count" files of 'window' (a
    Histogram) in 'directory', each without its 'trim' tails
    (trim_sizes()), and the CDF of its finished flows if it has enough
    (flow_cdf()); returns their paths ("cdf": that CDF or the file of the
    settings)."""
    fht_levels = [lv for lv in range(8) if lv not in settings.flt_levels]
    paths = {}
    for name, levels in (("flt", settings.flt_levels), ("fht", fht_levels)):
        paths[name] = os.path.join(directory, "%s.hist" % name)
        sizes = trim_sizes(size_counts(window, levels, settings.header_len),
                           settings.trim)
        with open(paths[name], "w") as f:
            f.write("# panda/histogram policy %d, %s levels %s%s\n" % (
                window.id, name.upper(), ",".join(map(str, levels)),
                ", %g trimmed at each end" % settings.trim
                if settings.trim else ""))
            for size in sorted(sizes):
                f.write("%d %s\n" % (size, _count(sizes[size])))
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


def model_options(settings, current, flt, fht, cdf):
    """panda-model's options (modeltool.command()) for the policy id of
    'current' on the FLT and FHT files and the flow-size CDF 'cdf' (the
    live one is in bytes): K, DSCP and queues of the policy in force."""
    return dict(id=current.id, flt=flt, fht=fht, cdf=cdf,
                cdf_unit=settings.cdf_unit if cdf == settings.cdf
                else "bytes",
                load=settings.load, levels=current.n_levels,
                header_len=settings.header_len, dscp=current.dscp,
                queues=current.queues)


def keep_flt_bound(proposed, excursion):
    """'proposed' with the FLT counter bound 'excursion' (bytes, or None:
    none) kept (module doc): floor = -(excursion - alpha_1) for its own
    alpha_1, 0 if alpha_1 is above it."""
    if excursion is None or not proposed.thresholds:
        return proposed
    return proposed.replace(floor=min(0, proposed.thresholds[0] - excursion))


def propose(settings, current, window, keep_dir=None, excursion=None):
    """Runs panda-model (modeltool.run_model) on 'window' for the id of
    'current'; returns (Policy, with the FLT counter bound 'excursion' kept
    (keep_flt_bound()), model JSON, command, where the flow sizes came
    from: "live N flows" or the CDF file).  'keep_dir': write the inputs
    there (kept), else in a temporary directory."""
    d = keep_dir or tempfile.mkdtemp(prefix="panda-autotune-")
    try:
        paths = model_inputs(window, settings, d)
        record, warnings = modeltool.run_model(
            settings.model, {"tuned": model_options(
                settings, current, paths["flt"], paths["fht"],
                paths["cdf"])}, d)
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


def log_distance(a, b):
    """How far policy 'b' is from 'a': the largest |ln(b / a)| over T and
    the thresholds (each + 1, so 0 is a value); a different number of
    levels is infinite."""
    if len(a.thresholds) != len(b.thresholds):
        return float("inf")
    pairs = [(a.threshold, b.threshold)] + list(zip(a.thresholds,
                                                    b.thresholds))
    return max(abs(math.log((y + 1) / (x + 1))) for x, y in pairs)


def influence(settings, current, win, proposed, excursion=None, limit=8):
    """Which sources moved 'proposed' (the model of Window 'win') away from
    'current' (the policy in force): for each of the 'limit' largest
    sources, when there are two or more, log_distance(current, proposed)
    minus the same for what the model gives without that source: > 0, the
    source moved the proposal away from the policy in force (by that
    factor, e^x); < 0, it held the proposal back; or why there is no
    figure.  Runs the model once per source."""
    if len(win.deltas) < 2:
        return {}
    ranked = sorted(win.deltas, key=lambda br: -sum(
        classes(win.deltas[br], settings.flt_levels)))[:limit]
    out = {}
    for br in ranked:
        w = Window.of(win.id, win.deltas, settings, leave_out=br)
        if not w.flt or not w.fht:
            out[br] = "no FLT or FHT packets without it"
            continue
        try:
            alt = propose(settings, current, w.hist, excursion=excursion)[0]
        except (modeltool.ModelToolError, PolicyError, OSError) as e:
            out[br] = "model failed without it: %s" % e
            continue
        out[br] = round(log_distance(current, proposed)
                        - log_distance(current, alt), 3)
    return out

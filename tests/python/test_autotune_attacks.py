"""Auto-tune against tenants who send what the model reads
(pandaovs.controller.autotune, "What a tenant can move"): synthetic
histograms of a tenant flooding finished flows of a few bytes, and of a
tenant sending large payloads at level 0, with and without a second
bridge.  Whatever the attack, no pushed threshold leaves the operator's
bounds, a push moves each value by at most the step, the source cap keeps
one bridge from outweighing the others, and the decision names the source
that moved the proposal.  The model is the built panda-model."""

import os
import random

import pytest

from pandaovs import paths
from pandaovs.controller import autotune
from pandaovs.policy import Policy
from pandaovs.sizehist import Histogram

MODEL = os.path.join(paths.build_dir(), "tools", "panda-model")
CDF = paths.cdf("web-search.cdf")
needs_model = pytest.mark.skipif(not os.access(MODEL, os.X_OK),
                                 reason="no panda-model at %s" % MODEL)

CONFIGURED = Policy(id=7, threshold=1000, weights=(),
                    thresholds=(20000, 1000000, 10000000),
                    dscp=(46, 26, 18, 0), queues=(0, 1, 2, 3))
# Memcached-like requests on top, bulk segments below, web-search-like
# finished flows.
LEGIT = {"payload": {0: {24: 3000, 96: 1500, 320: 600},
                     1: {512: 3000, 1448: 4000}, 2: {1448: 6000},
                     3: {1448: 9000}},
         "flow": {8192: 40, 16384: 20, 65536: 20, 1048576: 15,
                  8388608: 5}}
# 50,000 finished flows of 8-10 bytes (now two packets each: the datapath
# no longer counts one-packet tuples, conn-table.c).
FLOOD_FLOWS = {"payload": {}, "flow": {8: 50000}}
# 100,000 packets of 1400-byte payloads kept at level 0 (many fresh
# connections, each a few large packets).
LEVEL0_SIZES = {"payload": {0: {1400: 100000}}, "flow": {}}


def hist(parts, scale=1):
    h = Histogram(CONFIGURED.id)
    for part in parts:
        for lv, b in part["payload"].items():
            mine = h.payload.setdefault(lv, {})
            for lo, c in b.items():
                mine[lo] = mine.get(lo, 0) + c * scale
        for lo, c in part["flow"].items():
            h.flow[lo] = h.flow.get(lo, 0) + c * scale
    return h


class Bridges:
    """Cumulative histograms per bridge (what NXST_PANDA_HISTOGRAM
    returns): each round adds that round's traffic."""

    def __init__(self):
        self.total = {}

    def round(self, traffic):
        for br, parts in traffic.items():
            h = self.total.setdefault(br, Histogram(CONFIGURED.id))
            h.add(hist(parts))
        return {br: hist([{"payload": h.payload, "flow": h.flow}])
                for br, h in self.total.items()}


def settings(**kw):
    d = dict(model=MODEL, cdf=CDF, load=0.8, interval=1, min_interval=0,
             margin=0.05, confirm=1, min_packets=100, min_flows=50)
    d.update(kw)
    return autotune.Settings(**d)


def within(policy, bounds):
    lo, hi = bounds.threshold
    return lo <= policy.threshold <= hi and all(
        a <= t <= b for t, (a, b) in zip(policy.thresholds,
                                          bounds.thresholds))


def step_ok(before, after, max_step):
    pairs = [(before.threshold, after.threshold)] + list(
        zip(before.thresholds, after.thresholds))
    return all(int(b / (1 + max_step)) <= a <= max(int(b * (1 + max_step)),
                                                   b + 1)
               for b, a in pairs)


def run_rounds(st, traffic_of_round, rounds, bounds=None):
    """Runs 'rounds' rounds of the tuner on one policy id, pushing what it
    decides; returns (the policies in force after each round, the
    decisions)."""
    bounds = bounds or autotune.effective_bounds(CONFIGURED, None,
                                                 st.bound_factor)
    tuner = autotune.Tuner(CONFIGURED.id, st)
    br = Bridges()
    current, history, decisions = CONFIGURED, [], []
    for r in range(rounds):
        action, reason, proposed, inputs = tuner.step(
            current, br.round(traffic_of_round(r)), bounds)
        decisions.append((action, reason, inputs))
        if proposed is not None:
            assert step_ok(current, proposed, st.max_step), (current,
                                                            proposed)
            current = proposed
        history.append(current)
    return history, decisions, bounds


# ---- The pieces. -------------------------------------------------------------

def test_cap_factors():
    assert autotune.cap_factors({"a": 10}, 0.5) == {"a": 1.0}
    assert autotune.cap_factors({"a": 5, "b": 5}, 0.5) == {"a": 1, "b": 1}
    f = autotune.cap_factors({"a": 100, "b": 90, "c": 1}, 0.5)
    capped = {k: v * f[k] for k, v in {"a": 100, "b": 90, "c": 1}.items()}
    assert capped["a"] == pytest.approx(91) and f["b"] == f["c"] == 1
    assert capped["a"] / sum(capped.values()) == pytest.approx(0.5)
    # A flood of 1000 against 10 and 10 at cap 0.5: cut to the others'
    # sum; at cap 0.2 (below an equal share of 3): an equal share.
    f = autotune.cap_factors({"x": 1000, "b": 10, "c": 10}, 0.5)
    assert 1000 * f["x"] == pytest.approx(20)
    f = autotune.cap_factors({"x": 1000, "b": 10, "c": 10}, 0.2)
    assert 1000 * f["x"] == pytest.approx(10)
    # Random: nobody above max(cap, 1/n) of the capped total.
    rnd = random.Random(3)
    for _ in range(200):
        v = {i: rnd.choice([0, 1, 5, 100, 10 ** 6]) * rnd.random()
             for i in range(rnd.randint(1, 6))}
        cap = rnd.choice([0.2, 0.34, 0.5, 0.9, 1.0])
        f = autotune.cap_factors(v, cap)
        c = {k: v[k] * f[k] for k in v}
        tot = sum(c.values())
        live = len([x for x in v.values() if x > 0])
        if tot and live > 1:
            assert max(c.values()) <= max(cap, 1 / live) * tot * (1 + 1e-6)
        assert all(0 < f[k] <= 1 for k in v)


def test_trim_sizes():
    assert autotune.trim_sizes({64: 98, 1000: 1, 1500: 1}, 0.01) == \
        {64: 97, 1000: 1}
    t = autotune.trim_sizes({10: 50, 20: 50}, 0.1)
    assert t == {10: 40, 20: 40}
    assert autotune.trim_sizes({10: 5}, 0) == {10: 5}


def test_bound_proposal():
    b = autotune.Bounds((500, 2000), ((10000, 40000), (500000, 2000000),
                                      (5000000, 20000000)))
    far = Policy(id=7, threshold=100, thresholds=(10, 20, 30),
                 dscp=(46, 26, 18, 0), queues=(0, 1, 2, 3))
    p, notes = autotune.bound_proposal(CONFIGURED, far, b, 0.5)
    assert p.threshold == 666 and p.thresholds == (13333, 666666, 6666666)
    assert len(notes) == 4 and "step 0.5 from 1000" in notes[0]
    p, notes = autotune.bound_proposal(CONFIGURED, far, b, 100)
    assert (p.threshold,) + p.thresholds == (500, 10000, 500000, 5000000)
    assert "bounds [500, 2000]" in notes[0]
    same, notes = autotune.bound_proposal(CONFIGURED, CONFIGURED, b, 0.5)
    assert same == CONFIGURED and notes == []
    # Limited into a policy that is not one: refused, with the reason.
    tight = autotune.Bounds((500, 2000), ((20000, 20000), (20000, 2000000),
                                          (5000000, 20000000)))
    p, notes = autotune.bound_proposal(CONFIGURED, far, tight, 100)
    assert p is None and "not strictly ascending" in notes[-1]


def test_bounds_from_the_configuration():
    from pandaovs.controller import config

    class R:
        def __init__(self, policy):
            self.policy = policy
    rules = [R(CONFIGURED), R(Policy(id=2, kind="pias",
                                     thresholds=(1000,)))]
    b = autotune.parse_bounds("c.json", {"7": {
        "threshold": [600, 1500],
        "thresholds": [[10000, 30000], [500000, 2000000],
                       [5000000, 20000000]]}}, rules)
    assert b[7].threshold == (600, 1500)
    e = autotune.effective_bounds(CONFIGURED, b[7], 4)
    assert e.thresholds[2] == (5000000, 20000000)
    # Only T given: the thresholds by default (/ and x 4).
    b = autotune.parse_bounds("c.json", {"7": {"threshold": [1, 1000]}},
                              rules)
    e = autotune.effective_bounds(CONFIGURED, b[7], 4)
    assert e.threshold == (1, 1000) and e.thresholds[0] == (5000, 80000)
    for obj, msg in [
            ({"2": {}}, "not the id of a policy of kind panda"),
            ({"x": {}}, "not the id"),
            ({"7": {"threshold": [2000, 3000]}},
             "threshold: the configured value 1000 is outside [2000, 3000]"),
            ({"7": {"threshold": [5, 1]}}, "expected [min, max]"),
            ({"7": {"thresholds": [[1, 2]]}}, "expected 3 [min, max] pairs"),
            ({"7": {"T": [1, 2]}}, "expected {"),
            ([], "expected an object")]:
        with pytest.raises(config.ConfigError) as ei:
            autotune.parse_bounds("c.json", obj, rules)
        assert msg in str(ei.value) and "auto_tune_bounds" in str(ei.value)


# ---- The attacks. -------------------------------------------------------------

@needs_model
def test_flood_of_tiny_flows_stays_in_bounds():
    """One bridge, legit traffic plus 50,000 finished flows of 8 bytes a
    round.  The model alone would collapse the thresholds (its proposal
    is far below the configured ones); what is pushed moves at most one
    step a round and never leaves the bounds, however long the flood
    lasts."""
    st = settings()
    history, decisions, bounds = run_rounds(
        st, lambda r: {"br0": [LEGIT, FLOOD_FLOWS]}, 8)
    raw = [Policy.from_text(i["model_proposed"]) for a, _, i in decisions
           if "model_proposed" in i]
    assert raw and raw[0].thresholds[0] < CONFIGURED.thresholds[0] / 100
    assert not within(raw[0], bounds)
    assert all(within(p, bounds) for p in history)
    # It does move (within them): the defence is the bounds and the step,
    # not a tuner that never pushes.
    assert history[-1] != CONFIGURED
    assert history[-1].thresholds[0] == bounds.thresholds[0][0]
    assert any(i.get("limited") for _, _, i in decisions)


@needs_model
def test_tenant_choosing_level0_sizes_stays_in_bounds():
    """A tenant sends 100,000 packets of 1400-byte payloads a round that
    stay at level 0: the FLT sample looks like bulk, and the model's T
    goes above them (so that they count as small: the tenant's bulk would
    stay on top).  Under the operator's bound on T (600 to 1200 here) the
    pushed T stops at 1200, below the tenant's packets."""
    st = settings()
    legit, _, _ = run_rounds(st, lambda r: {"br0": [LEGIT]}, 1)
    bounds = autotune.effective_bounds(
        CONFIGURED, autotune.Bounds((600, 1200), None), st.bound_factor)
    history, decisions, _ = run_rounds(
        st, lambda r: {"br0": [LEGIT, LEVEL0_SIZES]}, 6, bounds)
    raw = Policy.from_text(decisions[0][2]["model_proposed"])
    assert legit[0].threshold < 1000 and raw.threshold > 1400
    assert all(within(p, bounds) for p in history)
    assert history[-1].threshold == 1200
    assert "T %d -> 1200 (bounds [600, 1200])" % raw.threshold in \
        decisions[0][2]["limited"]


@needs_model
def test_operator_bounds_hold_under_random_attacks():
    """Seeded random traffic (legit, floods of tiny and huge flows, large
    level-0 payloads, bursts, silent rounds) on 1 to 3 bridges under the
    operator's own bounds: after every round, every value in force is
    inside them and moved at most one step."""
    rnd = random.Random(32)
    bounds = autotune.Bounds((600, 1450), ((8000, 60000),
                                           (300000, 3000000),
                                           (3000000, 30000000)))
    attacks = [FLOOD_FLOWS, LEVEL0_SIZES,
               {"payload": {}, "flow": {1 << 34: 500}},
               {"payload": {0: {8: 200000}}, "flow": {}},
               {"payload": {3: {1448: 10 ** 7}}, "flow": {1 << 20: 5}}]

    def traffic(r):
        out = {}
        for b in range(rnd.randint(1, 3)):
            parts = [LEGIT] if rnd.random() < 0.8 else []
            parts += rnd.sample(attacks, rnd.randint(0, 2))
            out["br%d" % b] = parts
        return out
    st = settings(max_step=1.0, trim=0.02)
    history, decisions, _ = run_rounds(st, traffic, 12, bounds)
    assert all(within(p, bounds) for p in history)
    assert sum(a == "push" for a, _, _ in decisions) >= 1


@needs_model
def test_second_bridge_capped_and_named():
    """Two bridges: br0 with legit traffic, br1 flooding tiny flows.  The
    source cap keeps br1 to half of the window's flows (it had 99.8%),
    and the decision names br1 as the source that moved the proposal away
    from the policy in force (influence > 0: without it the model stays
    near the configured thresholds) and br0 as the one that held it back
    (< 0: without it the flood alone decides)."""
    st = settings(margin=0.01)
    bounds = autotune.effective_bounds(CONFIGURED, None, st.bound_factor)
    tuner = autotune.Tuner(CONFIGURED.id, st)
    flood = {"payload": {0: {24: 3000}, 3: {1448: 9000}},
             "flow": {8: 50000}}
    action, reason, proposed, inputs = tuner.step(
        CONFIGURED, {"br0": hist([LEGIT]), "br1": hist([flood])}, bounds)
    src = inputs["sources"]
    assert src["br1"]["flows"] == 50000
    assert src["br1"]["capped_to"]["flows"] == pytest.approx(100 / 50000)
    assert inputs["flows"] == pytest.approx(200)
    infl = inputs["influence"]
    assert infl["br1"] > 1 and infl["br0"] < 0, infl
    assert within(Policy.from_text(inputs["proposed"]), bounds)

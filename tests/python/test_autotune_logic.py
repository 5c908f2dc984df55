"""The live histograms in Python (pandaovs.sizehist) and the auto-tune
logic of the controller (pandaovs.controller.autotune), without OVS."""

import json
import os
import subprocess

import pytest

from pandaovs import paths
from pandaovs.controller import autotune
from pandaovs.policy import Policy
from pandaovs import sizehist

MODEL = os.path.join(paths.build_dir(), "tools", "panda-model")
CDF = paths.cdf("web-search.cdf")
needs_model = pytest.mark.skipif(not os.access(MODEL, os.X_OK),
                                 reason="no panda-model at %s" % MODEL)

TEXT = """bridge br0 datapath netdev@ovs-netdev
policy 1
panda-histogram 1
payload 0 24 10
payload 1 1448 900
flow 98304 2
policy 2 shared
panda-histogram 1
bridge br1 datapath netdev@ovs-netdev
policy 1
panda-histogram 1
payload 0 24 5
"""


def test_parse_known_text():
    h = sizehist.parse(TEXT)
    assert sorted(h) == [1, 2]
    assert h[1].payload == {0: {24: 15}, 1: {1448: 900}}
    assert h[1].flow == {98304: 2}
    assert h[2].shared and h[2].packets() == 0
    assert h[1].packets() == 915 and h[1].packets((0,)) == 15
    # Sizes for panda-model include the headers.
    assert h[1].model_lines((0,)) == ["64 15"]
    assert h[1].model_lines(range(1, 8), header_len=52) == ["1500 900"]
    # format() is lib/panda's text again.
    assert sizehist.parse(h[1].format())[1].payload == h[1].payload


@pytest.mark.parametrize("text,msg", [
    ("payload 0 24 1\n", "line 1: 'payload' before any \"policy\" line"),
    ("policy 1\npayload 0 24 1\n", "line 2: no \"panda-histogram 1\" line"),
    ("policy 1\npanda-histogram 2\n", "line 2: unknown histogram version 2"),
    ("policy x\n", "line 1: policy id 'x' is not an integer"),
    ("policy 4294967296\n", "line 1: policy id 4294967296 out of range"),
    ("policy 1\npanda-histogram 1\npayload 8 24 1\n",
     "line 3: level 8 out of range (0 to 7)"),
    ("policy 1\npanda-histogram 1\npayload 0 70000 1\n",
     "line 3: payload size 70000 out of range"),
    ("policy 1\npanda-histogram 1\npayload 0 24 -1\n",
     "line 3: count -1 out of range"),
    ("policy 1\npanda-histogram 1\npayload 0 24 %d\n" % (1 << 64),
     "line 3: count 18446744073709551616 out of range"),
    ("policy 1\npanda-histogram 1\nfoo 1 2\n", "line 3: unexpected 'foo 1 2'"),
])
def test_parse_errors(text, msg):
    with pytest.raises(sizehist.HistogramError) as e:
        sizehist.parse(text)
    assert str(e.value).startswith(msg)


def test_minus_and_reset():
    a = sizehist.parse("policy 1\npanda-histogram 1\npayload 0 24 10\n"
                       "payload 1 1448 5\n")[1]
    b = sizehist.parse("policy 1\npanda-histogram 1\npayload 0 24 12\n"
                       "payload 1 1448 5\npayload 1 8 1\n")[1]
    d = b.minus(a)
    assert d.payload == {0: {24: 2}, 1: {8: 1}}
    # A counter that went down: the datapath forgot them.
    assert a.minus(b) is None


def test_request_body():
    assert sizehist.request_body() == bytes([0, 0, 0, 0, 1, 0, 0, 0])
    assert sizehist.request_body(7) == bytes([0, 0, 0, 7, 0, 0, 0, 0])
    with pytest.raises(sizehist.HistogramError):
        sizehist.request_body(1 << 32)


def hist(pid, flt, fht):
    h = sizehist.Histogram(pid)
    h.payload = {0: dict(flt), 1: dict(fht)}
    return h


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


@needs_model
def test_settings_checked():
    good = dict(model=MODEL, cdf=CDF, load=0.5)
    autotune.Settings(**good)
    for bad, msg in [({"load": 1.0}, "load: 1.0 must be in (0, 1)"),
                     ({"margin": -1}, "margin: -1 must be"),
                     ({"confirm": 0}, "confirm: 0 must be 1 to 100"),
                     ({"flt_levels": (8,)}, "flt_levels: (8,) must be"),
                     ({"model": "/nonexistent"}, "model: /nonexistent is"),
                     ({"cdf": "/nonexistent"}, "cdf: /nonexistent: no such")]:
        with pytest.raises(autotune.AutoTuneError) as e:
            autotune.Settings(**dict(good, **bad))
        assert str(e.value).startswith(msg)
    s = autotune.Settings(**good)
    assert autotune.Settings.from_json(s.to_json()) == s


@needs_model
def test_window_waits_for_packets_and_moves():
    s = autotune.Settings(model=MODEL, cdf=CDF, load=0.5, min_packets=10,
                          source_cap=1)
    t = autotune.Tuner(1, s, clock=Clock())
    w = t.window({"a": hist(1, {24: 5}, {1448: 20})})
    assert w.hist is None and (w.flt, w.fht) == (5, 20)
    # The window grows until each class has 10 packets; two bridges add up
    # (no source cap here: test_source_cap).
    w = t.window({"a": hist(1, {24: 8}, {1448: 20}),
                  "b": hist(1, {24: 3}, {})})
    assert (w.flt, w.fht) == (11, 20)
    assert w.hist.payload == {0: {24: 11}, 1: {1448: 20}}
    # The next window starts there.
    w = t.window({"a": hist(1, {24: 9}, {1448: 25}),
                  "b": hist(1, {24: 3}, {})})
    assert (w.hist, w.flt, w.fht, w.flows) == (None, 1, 5, 0)


@needs_model
def test_decide_margin_hysteresis_min_interval():
    clock = Clock()
    s = autotune.Settings(model=MODEL, cdf=CDF, load=0.5, margin=0.1,
                          confirm=2, min_interval=60)
    t = autotune.Tuner(1, s, clock=clock)
    cur = Policy(id=1, threshold=1000, thresholds=(10000, 100000))
    near = Policy(id=1, threshold=1050, thresholds=(10500, 100000))
    far = Policy(id=1, threshold=200, thresholds=(10000, 100000))
    assert t.decide(cur, near)[:2] == (False, pytest.approx(0.05))
    assert t.decide(cur, far)[0] is False           # 1 of 2
    assert t.decide(cur, near)[0] is False          # resets the count
    assert t.decide(cur, far)[0] is False
    push, change, why = t.decide(cur, far)
    assert push and change == pytest.approx(0.8)
    # Again over the margin twice, but within 60 s of the push.
    clock.t = 30
    assert t.decide(far, cur)[0] is False
    push, _, why = t.decide(far, cur)
    assert not push and "min_interval" in why
    clock.t = 61
    assert t.decide(far, cur)[0] is True
    assert autotune.relative_change(cur, Policy(id=1, thresholds=(1,))) \
        == float("inf")


@needs_model
def test_model_run_is_panda_model(tmp_path):
    """The policy auto-tune derives is what panda-model writes for the same
    "size count" files, DSCP and queues of the policy in force kept."""
    s = autotune.Settings(model=MODEL, cdf=CDF, load=0.6, trim=0)
    cur = Policy(id=9, threshold=1000, thresholds=(10000, 100000),
                 dscp=(46, 26, 10), queues=(0, 1, 2))
    w = hist(9, {24: 500, 96: 100}, {1448: 3000, 512: 50})
    proposed, model, cmd, source = autotune.propose(
        s, cur, w, keep_dir=str(tmp_path))
    assert source == CDF            # No finished flows: the file.
    with open(tmp_path / "flt.hist") as f:
        assert [l for l in f.read().splitlines() if l[0] != "#"] == \
            ["64 500", "136 100"]
    out = tmp_path / "direct.json"
    subprocess.run([MODEL, "--id", "9", "--flt", str(tmp_path / "flt.hist"),
                    "--fht", str(tmp_path / "fht.hist"), "--cdf", CDF,
                    "--load", "0.6", "--levels", "3", "--dscp", "46/26/10",
                    "--queues", "0/1/2", "-o", str(out)], check=True,
                   capture_output=True)
    direct, _ = Policy.from_json(json.loads(out.read_text()), str(out))
    assert proposed == direct
    assert proposed.id == 9 and proposed.dscp == (46, 26, 10)
    # T separates the 24..96-byte FLT payloads from the FHT's 512 and up.
    assert 96 < proposed.threshold <= 512


def test_flow_cdf_lines_known():
    """Flow buckets become a CDF whose interpolation spreads each bucket's
    flows over it: 3 flows in [512, 640), 1 in [3072, 3584), none between;
    and the sizes below 8 are buckets of one value."""
    h = sizehist.parse("policy 1\npanda-histogram 1\nflow 512 3\n"
                       "flow 3072 1\n")[1]
    assert h.flows() == 4
    assert h.flow_cdf_lines() == ["512 0.000000000", "640 0.750000000",
                                  "3072 0.750000000", "3584 1"]
    assert [sizehist.flow_upper(x) for x in (0, 7, 8, 14, 16, 57344)] == \
        [1, 8, 10, 16, 20, 65536]
    assert sizehist.Histogram(1).flow_cdf_lines() == []


def flows_hist(pid, flows):
    h = hist(pid, {24: 500, 96: 100}, {1448: 3000, 512: 50})
    h.flow = dict(flows)
    return h


@needs_model
def test_live_flows_set_the_thresholds(tmp_path):
    """With min_flows finished flows in the window, the thresholds come
    from their sizes: what panda-model gives for the CDF written from the
    buckets; small flows give small thresholds, large ones large; fewer
    flows than min_flows: the CDF file; no file: the window waits."""
    s = autotune.Settings(model=MODEL, cdf=CDF, load=0.6, min_flows=50,
                          trim=0)
    cur = Policy(id=9, threshold=1000, thresholds=(10000, 100000),
                 dscp=(46, 26, 10), queues=(0, 1, 2))
    # Mostly 5-10 KB flows, a few of 1-2 MB.
    small = flows_hist(9, {5120: 60, 8192: 30, 1048576: 10})
    # Mostly 1-2 MB flows, a tail of 64-128 MB.
    large = flows_hist(9, {1048576: 60, 1572864: 30, 67108864: 10})
    out = {}
    for name, w in (("small", small), ("large", large)):
        d = tmp_path / name
        d.mkdir()
        proposed, _, cmd, source = autotune.propose(s, cur, w,
                                                      keep_dir=str(d))
        assert source == "live 100 flows"
        assert "--cdf %s " % (d / "flows.cdf") in cmd
        direct = d / "direct.json"
        subprocess.run([MODEL, "--id", "9", "--flt", str(d / "flt.hist"),
                        "--fht", str(d / "fht.hist"),
                        "--cdf", str(d / "flows.cdf"), "--load", "0.6",
                        "--levels", "3", "--dscp", "46/26/10",
                        "--queues", "0/1/2", "-o", str(direct)],
                       check=True, capture_output=True)
        want, _ = Policy.from_json(json.loads(direct.read_text()),
                                   str(direct))
        assert proposed == want
        out[name] = proposed
    assert out["small"].threshold == out["large"].threshold   # same T
    assert all(a < b for a, b in zip(out["small"].thresholds,
                                     out["large"].thresholds))
    assert out["small"].thresholds[0] < 1048576 <= out["large"].thresholds[1]
    # 49 flows: the file.
    few = flows_hist(9, {5120: 49})
    assert autotune.propose(s, cur, few)[3] == CDF

    # No file: the window waits for 50 flows, then has them.
    s2 = autotune.Settings(model=MODEL, cdf=None, load=0.6, min_flows=50,
                           min_packets=1)
    t = autotune.Tuner(9, s2, clock=Clock())
    w = t.window({"a": few})
    assert w.hist is None and w.flows == 49
    w = t.window({"a": flows_hist(9, {5120: 60})})
    assert w.hist is not None and w.flows == 60
    with pytest.raises(autotune.AutoTuneError) as e:
        autotune.Settings(model=MODEL, cdf=None, load=0.6, min_flows=0)
    assert "min_flows 0" in str(e.value)


def test_flt_bound_kept():
    """A policy modelled with the FLT excursion bound (floor = -(excursion
    - alpha_1)) keeps it through proposals: the floor follows alpha_1, and
    the tuner remembers the excursion when a push has floor 0."""
    s = autotune.Settings(model=MODEL, cdf=CDF, load=0.5) \
        if os.access(MODEL, os.X_OK) else None
    t = autotune.Tuner(1, s, clock=Clock())
    cur = Policy.from_text("id=1,threshold=1143,thresholds=21415/51341,"
                           "dscp=46/26/0,queues=0/1/2,floor=-9059")
    assert t.flt_excursion(cur) == 30474
    low = Policy.from_text("id=1,threshold=1448,thresholds=1477/5170,"
                           "dscp=46/26/0,queues=0/1/2")
    high = Policy.from_text("id=1,threshold=1448,thresholds=40000/50000,"
                            "dscp=46/26/0,queues=0/1/2")
    assert autotune.keep_flt_bound(low, 30474).floor == -28997
    assert autotune.keep_flt_bound(high, 30474).floor == 0
    assert autotune.keep_flt_bound(low, None).floor == 0
    # After a push of 'high' (floor 0) the bound is still known.
    assert t.flt_excursion(high) == 30474
    assert autotune.Tuner(2, s).flt_excursion(low) is None

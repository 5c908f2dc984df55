"""Unit tests of the testbed's pure parts (no root, no OVS): statistics,
panda/show and tc parsing, the pcap reader, the trial plan, the runner's
argument checks, aggregation, table and CSV."""

import csv
import dataclasses
import json
import os
import struct

import numpy
import pytest

from pandaovs import paths
from pandalab.lab import LabError, PortConfig, default_pmd_cpu_mask
from pandaovs.policy import Policy
from pandalab.sandbox import parse_tc_classes
from pandalab.testbed import config, experiments, model, report, runner
from pandalab.testbed import schemes, stats, targets
from pandalab.testbed.pcap import PcapError, tcp_packets
from pandalab.testbed.profiles import queue_pkts_for
from pandalab.testbed.topology import parse_panda_show
from pandalab.testbed.trial import (class_delta, dscp_levels, fct_summary,
                                    memcached_failure, memcached_summary,
                                    overlap)


def test_trimmed_mean_and_interval():
    """Below 10 repetitions the plain mean and Student's t interval; at
    10 the thesis's 8 of 10 (min and max dropped) and Yuen's interval."""
    s = stats.trimmed([5, 1, 3, 100, 4])
    assert s["n"] == 5 and s["n_used"] == 5
    assert s["mean"] == pytest.approx(22.6)
    assert s["min"] == 1 and s["max"] == 100
    # mean +- t(0.975, 4) * sd / sqrt(5)
    sd = numpy.std([5, 1, 3, 100, 4], ddof=1)
    hw = 2.7764451 * sd / 5 ** 0.5
    assert s["ci95"] == pytest.approx([22.6 - hw, 22.6 + hw])
    ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1000]
    s = stats.trimmed(ten)
    assert s["n_used"] == 8 and s["mean"] == pytest.approx(5.5)
    # Yuen: winsorized [2, 2, 3, ..., 9, 9], t with 7 degrees of freedom.
    w = [2, 2, 3, 4, 5, 6, 7, 8, 9, 9]
    se = (9 * numpy.var(w, ddof=1) / (8 * 7)) ** 0.5
    assert s["ci95"] == pytest.approx([5.5 - 2.3646243 * se,
                                       5.5 + 2.3646243 * se])
    assert s["ci95"][1] < 10        # the outlier is out of it
    # Repetitions are kept with their values, for pairing.
    s = stats.trimmed([2.0, None, 4.0], reps=[0, 1, 2])
    assert s["reps"] == [0, 2] and stats.by_rep(s) == {0: 2.0, 2: 4.0}


def test_trimmed_small_and_empty():
    assert stats.trimmed([]) is None
    assert stats.trimmed([None, None]) is None
    s = stats.trimmed([2.0, None, 4.0])
    assert s["n_used"] == 2 and s["mean"] == 3.0
    one = stats.trimmed([7])
    assert one["std"] == 0.0 and one["ci95"] is None


def test_decisions_on_synthetic_repetitions():
    """A ratio whose interval straddles the bound is undecided, a clear
    one met or NOT met; one repetition decides only far from the bound,
    never a +-5% band."""
    band = dict(lo=0.95, hi=1.05)
    # Paired repetitions: the seed scales both schemes alike, the ratio
    # stays put.
    def pairs(ratios, scales=(1, 3, 0.5, 2, 0.8)):
        return [(r * s, s) for r, s in zip(ratios, scales)]
    clear = stats.ratio(pairs([1.01, 0.99, 1.00, 1.02, 0.995]))
    assert clear["n"] == 5 and clear["estimate"] == pytest.approx(1.003, 1e-3)
    assert 0.95 < clear["ci95"][0] < 1 < clear["ci95"][1] < 1.05
    assert stats.verdict(clear, **band) == stats.MET
    straddle = stats.ratio(pairs([1.06, 1.01, 1.09, 1.03, 1.08]))
    assert straddle["ci95"][0] < 1.05 < straddle["ci95"][1]
    assert stats.verdict(straddle, **band) == stats.UNDECIDED
    out = stats.ratio(pairs([1.20, 1.22, 1.18, 1.21, 1.19]))
    assert stats.verdict(out, **band) == stats.NOT_MET
    # Unpaired, the seed's scale would hide what pairing shows.
    assert stats.ratio([(1.2, 1.0)] * 5)["ci95"] == pytest.approx([1.2, 1.2])
    # The quick run's case: one repetition at 1.0503 decides nothing.
    one = stats.ratio([(1.0503, 1.0)])
    assert one["n"] == 1 and one["ci95"] == pytest.approx(
        [1.0503 / 3, 1.0503 * 3])
    assert stats.verdict(one, **band) == stats.UNDECIDED
    assert stats.verdict(stats.ratio([(1.0, 1.0)]), **band) == \
        stats.UNDECIDED
    assert not stats.one_rep_can_decide(**band)
    # ... but a factor of 10 below a "< 1" bound it does decide, and 10
    # above it decides against; 2 below it does not.
    assert stats.verdict(stats.ratio([(1, 10)]), hi=1, strict=True) == \
        stats.MET
    assert stats.verdict(stats.ratio([(10, 1)]), hi=1, strict=True) == \
        stats.NOT_MET
    assert stats.verdict(stats.ratio([(1, 2)]), hi=1) == stats.UNDECIDED
    # Equal schemes: "<" is not met, "<=" is.
    same = stats.ratio([(2.0, 2.0)] * 3)
    assert stats.verdict(same, hi=1, strict=True) == stats.NOT_MET
    assert stats.verdict(same, hi=1) == stats.MET
    # Two repetitions: t with one degree of freedom, undecided unless
    # they agree closely.
    two = stats.ratio([(1.1, 1), (0.9, 1)])
    assert stats.verdict(two, hi=1.5) == stats.UNDECIDED
    assert stats.combine([stats.MET, stats.UNDECIDED]) == stats.UNDECIDED
    assert stats.combine([stats.MET, stats.NOT_MET]) == stats.NOT_MET
    assert stats.combine([stats.MET, stats.MET]) == stats.MET


def test_ratio_with_zeros_fieller():
    """Counts can be zero: the ratio of the paired means, Fieller's
    interval."""
    r = stats.ratio([(0, 100), (2, 120), (1, 90), (0, 110), (1, 100)])
    assert r["method"].startswith("ratio of paired means")
    assert r["estimate"] == pytest.approx(4 / 520)
    assert r["ci95"][0] == 0.0 and r["ci95"][1] < 0.05
    assert stats.verdict(r, hi=1, strict=True) == stats.MET
    # The denominator indistinguishable from zero: unbounded, undecided.
    r = stats.ratio([(5, 0), (5, 1), (5, 0)])
    assert r["ci95"][1] == float("inf")
    assert stats.verdict(r, hi=1) == stats.UNDECIDED
    assert stats.ratio([(0, 0)])["estimate"] is None
    assert stats.verdict(stats.ratio([(0, 0)]), hi=1) == stats.UNDECIDED
    assert stats.verdict(stats.ratio([(0, 5)]), hi=1, strict=True) == \
        stats.MET


def test_decisive_digits():
    """Ratios are printed with the digits that decide them."""
    assert stats.fmt(1.0503, [0.95, 1.05]) == "1.0503"
    assert stats.fmt(1.05, [0.95, 1.05]) == "1.050"
    assert stats.fmt(1.0499999, [1.05]) == "1.0499999"
    assert stats.fmt(0.9388, [0.95, 1.05]) == "0.939"
    assert stats.fmt(0.00481) == "0.00481"
    assert stats.fmt(None) == "-" and stats.fmt(float("inf")) == "inf"
    assert stats.fmt_ci([0.99912, 1.05004], [0.95, 1.05]) == \
        "[0.999, 1.05004]"


SHOW = """\
netdev@ovs-netdev:
  policy 1: panda(id=1,threshold=1408,thresholds=1/2/3)
    connections: 2 (capacity 1048576 per address family)
    inserted: 5, removed: 3, evicted: 0, expired: 0
    packets per level: 0:100 1:20 2:0 3:7
    memory: 4096 bytes
    10.0.0.2:11211 > 10.0.0.1:40000 counter=-5 level=0 idle=1ms
    10.0.0.2:5001 > 10.0.0.1:40002 counter=2500000 level=3 idle=0ms
  policy 2: panda(id=2,kind=pias,thresholds=10/20)
    connections: 0 (capacity 1048576 per address family)
    packets per level: 0:1 1:2 2:3
"""


def test_parse_panda_show():
    show = parse_panda_show(SHOW)
    assert set(show) == {1, 2}
    assert show[1]["packets_per_level"] == [100, 20, 0, 7]
    assert show[1]["action"].startswith("id=1,threshold=1408")
    c = show[1]["connections"]
    assert c[0] == {"src": "10.0.0.2", "sport": 11211, "dst": "10.0.0.1",
                    "dport": 40000, "counter": -5, "level": 0}
    assert c[1]["level"] == 3
    assert show[2]["connections"] == []


def test_parse_tc_classes_and_delta():
    text = """class htb 1:1 parent 1:fffe prio 0 rate 625Kbit ceil 50Mbit
 Sent 1000 bytes 10 pkt (dropped 1, overlimits 0 requeues 0)
class htb 1:2 parent 1:fffe prio 1 rate 625Kbit ceil 50Mbit
 Sent 3000 bytes 2 pkt (dropped 0, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0
 lended: 2 borrowed: 0 giants: 0
"""
    cls = parse_tc_classes(text)
    assert cls["1:1"] == {"bytes": 1000, "packets": 10, "dropped": 1}
    assert cls["1:2"] == {"bytes": 3000, "packets": 2, "dropped": 0,
                          "backlog": 0, "lended": 2, "borrowed": 0}
    d = class_delta({"1:1": {"bytes": 400, "packets": 4, "dropped": 0}}, cls)
    assert d["1:1"] == {"bytes": 600, "packets": 6, "dropped": 1}
    assert d["1:2"] == {"bytes": 3000, "packets": 2, "dropped": 0,
                        "lended": 2, "borrowed": 0}


def _pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1 + i, 0, len(fr), len(fr)))
            f.write(fr)


def _frame(sport, dport, dscp, payload, ts=None, flags=0x18):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 0, 0, 5 << 4, flags, 0, 0,
                      0)
    ip_len = 20 + len(tcp) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, dscp << 2, ip_len, 0, 0, 64, 6,
                     0, bytes([10, 0, 0, 2]), bytes([10, 0, 0, 1]))
    eth = b"\0" * 12 + b"\x08\x00"
    return eth + ip + tcp + b"x" * payload


def test_pcap_reader_and_dscp_levels(tmp_path):
    p = str(tmp_path / "a.pcap")
    _pcap(p, [_frame(11211, 40000, 1, 100), _frame(11211, 40000, 2, 1448),
              _frame(11211, 40000, 1, 0), _frame(5001, 40001, 3, 1448),
              _frame(11211, 40000, 9, 10)])
    pk = list(tcp_packets(p))
    assert [x["payload"] for x in pk] == [100, 1448, 0, 1448, 10]
    assert pk[0]["src"] == "10.0.0.2" and pk[0]["dscp"] == 1
    lv, other = dscp_levels(p, [1, 2, 3])
    assert lv == {"0": 1, "1": 1}      # ACK-only and port 5001 ignored
    assert other == {"9": 1}
    # Two memcached connections: only the one opened last (the measured
    # one; the first stores the keys) counts.
    q = str(tmp_path / "b.pcap")
    _pcap(q, [_frame(11211, 40000, 1, 8), _frame(11211, 40000, 1, 8),
              _frame(11211, 40002, 3, 300), _frame(11211, 40000, 1, 8),
              _frame(11211, 40002, 2, 300)])
    assert dscp_levels(q, [1, 2, 3]) == ({"1": 1, "2": 1}, {})
    # With the handshakes captured, the measured connection is the one
    # opened last, whatever a stray late packet of an earlier trial's
    # connection (port 40009, no handshake here) arriving after it.
    r = str(tmp_path / "c.pcap")
    _pcap(r, [_frame(11211, 40000, 0, 0, flags=0x12),
              _frame(11211, 40000, 1, 8),
              _frame(11211, 40002, 0, 0, flags=0x12),
              _frame(11211, 40002, 1, 300),
              _frame(11211, 40009, 7, 120),
              _frame(11211, 40002, 2, 300)])
    assert dscp_levels(r, [1, 2, 3]) == ({"0": 1, "1": 1}, {})
    summ = model.sample_summary(p, 11211)
    assert summ["packets"] == 3 and summ["max_payload"] == 1448


def test_pcap_reader_rejects_garbage(tmp_path):
    p = tmp_path / "bad.pcap"
    p.write_bytes(b"not a pcap file at all, sorry")
    with pytest.raises(PcapError, match="not a pcap"):
        list(tcp_packets(str(p)))


def test_plan_quick_and_full():
    q = experiments.plan("quick", ["fifo", "pias", "panda"], 1, ["cubic"])
    # The floor first: unloaded memcached, plain forwarding.
    assert [(t["scheme"], t["concurrency"], t["requests"]) for t in q] == [
        ("fifo", 0, 10000), ("fifo", 14, 10000), ("pias", 14, 10000),
        ("panda", 14, 10000)]
    assert q[0]["experiments"] == ["floor"]
    assert q[1]["experiments"] == ["a", "c"]
    f = experiments.plan("full", ["panda"], 2, ["cubic", "dctcp"])
    # A floor per repetition (its own seed, its own request sequence),
    # each opening its repetition.
    assert [(t["cc"], t["rep"]) for t in f
            if t["experiments"] == ["floor"]] == [
        ("cubic", 0), ("cubic", 1), ("dctcp", 0), ("dctcp", 1)]
    f = [t for t in f if t["cc"] == "cubic"]
    assert [t["rep"] for t in f if t["experiments"] == ["floor"]] == [0, 1]
    assert [i for i, t in enumerate(f) if t["concurrency"] == 0] == [
        0, len(f) // 2]
    f = [t for t in f if t["concurrency"] > 0]
    pts = {(t["concurrency"], t["requests"]) for t in f}
    assert (14, 100) in pts and (1, 2000) in pts and (20, 10000) in pts
    assert len(f) == 2 * len(pts)       # each point once per repetition


def test_headline_mode():
    """--headline: the targets' point with the full run's warm-up and
    window, 5 repetitions, every scheme the targets compare."""
    a = config.parse_args(["--headline"])
    assert a.mode == "headline" and a.reps == 5
    assert (a.warmup_s, a.fct_window_s, a.fct_grace_s) == (5.0, 60.0, 30.0)
    assert a.goodput_check_s == 30.0
    assert a.schemes == config.parse_args([]).schemes
    assert experiments.points("headline") == {(14, 10000): {"a", "c"}}
    plan = experiments.plan("headline", a.schemes, a.reps, ["cubic"])
    assert len(plan) == 5 * (1 + len(a.schemes))
    assert [t["rep"] for t in plan if t["concurrency"] == 0] == list(
        range(5))
    # The same trial as the full run's at that point.
    full = experiments.MODES["full"]
    head = experiments.MODES["headline"]
    for k in ("warmup_s", "fct_window_s", "fct_grace_s", "c_requests",
              "a_concurrency"):
        assert head[k] == full[k], k
    assert config.parse_args(["--headline", "--reps", "3"]).reps == 3


def test_plan_duration_estimate():
    """The estimate: warm-up plus the longer of the FCT window (with its
    grace) and the memcached run, between an unloaded request and one
    behind a full buffer; brackets the reference full run's 3.9 hours."""
    cfg = config.parse_args(["--full", "--reps", "3", "--cc", "cubic"])
    plan = experiments.plan("full", cfg.schemes, 3, ["cubic"])
    t = next(x for x in plan if x["concurrency"] == 14
             and x["requests"] == 2000)
    assert experiments.trial_seconds(t, cfg, 0.001) == pytest.approx(
        experiments.TRIAL_OVERHEAD_S + 5 + 2.0)
    t = next(x for x in plan if x["concurrency"] == 14
             and x["requests"] == 10000)
    assert experiments.trial_seconds(t, cfg, 0.001) == pytest.approx(
        experiments.TRIAL_OVERHEAD_S + 5 + 90)
    assert experiments.trial_seconds(t, cfg, 0.012) == pytest.approx(
        experiments.TRIAL_OVERHEAD_S + 5 + 120)
    lo, hi = experiments.estimate(cfg, plan)
    assert lo < 14210 < hi          # docs/results/full-reference-push-out
    assert experiments.duration_range((lo, hi)) == "%.1f-%.1f h" % (
        lo / 3600, hi / 3600)
    assert experiments.duration_range((50, 50)) == "50 s"
    assert experiments.duration_range((100, 1000)) == "2-17 min"
    # A resumed run's own trial times replace the model.
    key = (t["cc"], t["scheme"], 14, 10000)
    one = experiments.estimate(cfg, [t], measured={key: 99.0},
                               collection=False, goodput=False)
    assert one == (experiments.SETUP_S + 99.0,) * 2


def test_dry_run_starts_nothing(tmp_path, capsys, monkeypatch):
    """--dry-run prints the plan and its duration and exits 0, as any
    user: no run, no directory, no namespace."""
    monkeypatch.setattr(runner, "is_root", lambda: False)

    def no_run(*a, **kw):
        raise AssertionError("--dry-run started a run")
    monkeypatch.setattr(runner, "Run", no_run)
    monkeypatch.setattr(runner, "cc_session", no_run)
    monkeypatch.setattr(runner.ccs, "session", no_run)
    monkeypatch.setattr(runner.ccs, "kernel_unavailable", no_run)
    out = tmp_path / "out"
    st = runner.launch(["--headline", "--cc", "cubic", "--out", str(out),
                        "--dry-run"])
    text = capsys.readouterr().out
    assert st == 0 and not out.exists()
    assert "mode headline: 1 point, 14 flows x 10000 requests (a,c)" in text
    assert "schemes (9): fifo, pias, fish, fq_codel, panda, pias-pf, " \
        "panda-pf, panda-guard, panda-droptail" in text
    assert "repetitions: 5 (seeds 1..5)" in text
    assert "trials: 50 = 1 cc x 5 repetitions x (1 floor + 1 point x 9 " \
        "schemes)" in text
    assert "expected duration: " in text and " h (50 trials to run" in text
    assert text.count("cubic repetition") == 5
    st = runner.launch(["--full", "--dry-run", "--schemes", "pias,panda"])
    text = capsys.readouterr().out
    assert st == 0 and "27 points" in text
    with pytest.raises(SystemExit):
        runner.launch(["--dry-run", "--calibrate", "25"])
    assert "--dry-run: not with --calibrate" in capsys.readouterr().err


def test_options_are_range_checked(capsys):
    """Every number is checked where it enters: out of range is refused
    naming the option, never turned into its default."""
    for argv, why in ((["--reps", "0"], "--reps 0: must be 1..1000"),
                      (["--reps", "-2"], "--reps -2"),
                      (["--headline", "--reps", "0"], "--reps 0"),
                      (["--rate-mbit", "0"], "--rate-mbit 0: must be above"),
                      (["--rate-mbit", "-5"], "--rate-mbit -5"),
                      (["--queue-pkts", "0"], "--queue-pkts 0: must be at "
                       "least 2"),
                      (["--seed", "-1"], "--seed -1: must be 0 or more"),
                      (["--warmup", "-1"], "argument --warmup: '-1' is "
                       "not a duration"),
                      (["--warmup", "11m"], "--warmup 660: must be 0..600"),
                      (["--ecn-threshold", "-1"], "argument --ecn-threshold:"
                       " '-1' is not a size"),
                      (["--qos", "htb", "--ecn-threshold", "-1"],
                       "argument --ecn-threshold: '-1'"),
                      (["--fct-window", "0"], "--fct-window 0"),
                      (["--load", "0"], "--load 0: must be in (0, 1)"),
                      (["--calibrate", "25,0"], "every rate must be above "
                       "0")):
        with pytest.raises(SystemExit):
            config.parse_args(argv)
        assert why in capsys.readouterr().err, argv
    # An explicit 0 where 0 means something is kept, not defaulted.
    assert config.parse_args(["--warmup", "0"]).warmup_s == 0.0
    assert config.parse_args(["--goodput-check", "0"]).goodput_check_s == 0
    # Durations and sizes in the project's syntax (pandaovs.cli).
    cfg = config.parse_args(["--warmup", "1.5m", "--fct-window", "500ms",
                             "--burst", "3Ki", "--ecn-threshold", "30K",
                             "--stop-after", "2h"])
    assert (cfg.warmup_s, cfg.fct_window_s, cfg.qos.burst_bytes,
            cfg.qos.ecn_threshold, cfg.stop_after_s) == (
                90, 0.5, 3072, 30000, 7200)
    # A bare --stop-after is minutes, as before.
    assert config.parse_args(["--stop-after", "3"]).stop_after_s == 180


def test_queue_scaling():
    assert queue_pkts_for(1e9) == 1000
    assert queue_pkts_for(50e6) == 50
    assert queue_pkts_for(1e6) == 20


def test_policy_record(tmp_path):
    """A run's policy.json: each action becomes a Policy (its id, its
    DSCP map); a bad one is refused naming the file and the scheme."""
    a = "id=1,threshold=1408,thresholds=1/2/3,dscp=46/26/18/0,queues=0/1/2/3"
    rec = {"panda": {"action": a},
           "pias": {"action": "id=2,kind=pias,thresholds=1/2"}}
    pols = model.policies(rec)
    assert pols["panda"] == Policy.from_text(a)
    assert pols["panda"].dscp == (46, 26, 18, 0) and pols["pias"].id == 2
    assert pols["pias"].dscp == (1, 2, 3)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(rec))
    assert model.load_policy(str(good)) == rec
    bad = tmp_path / "p.json"
    bad.write_text('{"panda": {}}')
    with pytest.raises(model.ModelError, match="panda.action"):
        model.load_policy(str(bad))
    with pytest.raises(model.ModelError, match="--policy"):
        model.load_policy(str(tmp_path / "missing.json"))
    rec["pias"]["action"] = "id=2,kind=pias,thresholds=2/1"
    bad.write_text(json.dumps(rec))
    with pytest.raises(model.ModelError,
                       match="pias.action: thresholds: not strictly"):
        model.load_policy(str(bad))


def test_args_errors(capsys):
    with pytest.raises(SystemExit):
        config.parse_args(["--schemes", "fifo,wfq"])
    assert "unknown scheme" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        config.parse_args(["--load", "1.5"])
    with pytest.raises(SystemExit):
        config.parse_args(["--calibrate", "25,fast"])
    assert "--calibrate" in capsys.readouterr().err
    a = config.parse_args([])
    assert isinstance(a, config.RunConfig)
    assert a.mode == "quick" and a.rate_mbit == 50 and a.reps == 1
    assert a.queue_pkts == 50 and a.warmup_s == 3.0 and a.plots
    # panda-sched by default (config.py: it meets the bar), the quick run
    # with the targets' ablations; --qos panda-sched says the same.
    assert a.qos.type == "panda-sched"
    assert (dataclasses.replace(a, argv=("--qos", "panda-sched"))
            == config.parse_args(["--qos", "panda-sched"]))
    assert a.qos.marks
    assert a.qos.ecn_threshold == 30000 and a.qos.guard_permille == 50
    assert a.schemes == ("fifo", "pias", "fish", "fq_codel", "panda",
                         "pias-pf", "panda-pf", "panda-guard",
                         "panda-droptail")
    assert a.modeled_schemes == ["pias", "fish", "panda", "pias-pf",
                                 "panda-pf", "panda-guard",
                                 "panda-droptail"]
    # HTB: today's three schemes; fish and fq_codel cannot run on it.
    a = config.parse_args(["--qos", "htb"])
    assert a.schemes == ("fifo", "pias", "panda") and not a.qos.marks
    with pytest.raises(SystemExit):
        config.parse_args(["--qos", "htb", "--schemes", "panda,fq_codel"])
    assert "fq_codel needs --qos panda-sched" in capsys.readouterr().err
    # The old name of plain DRR says what it is now.
    with pytest.raises(SystemExit):
        config.parse_args(["--schemes", "fifo,fq"])
    assert "fq is now fq-drr (plain per-flow DRR); the operator's " \
        "fq_codel is fq_codel" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        config.parse_args(["--qos", "panda-sched", "--ecn-threshold",
                           "80000"])
    assert "below the buffer, 50 packets = 75700 bytes" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit):
        config.parse_args(["--qos", "panda-sched", "--guard", "600"])
    assert "--guard 600" in capsys.readouterr().err
    # Without ECN there is nothing to compare drop-tail with.
    a = config.parse_args(["--qos", "panda-sched", "--ecn-threshold", "0"])
    assert "panda-droptail" not in a.schemes and not a.qos.marks
    assert "panda-guard" in a.schemes and "panda-pf" in a.schemes
    # Full runs: the five schemes; the ablations and the per-flow factor
    # on request.
    assert config.parse_args(["--full"]).schemes == (
        "fifo", "pias", "fish", "fq_codel", "panda")
    a = config.parse_args(["--full", "--rate-mbit", "100", "--no-plots",
                           "--calibrate", "25,50", "--schemes", "panda,fifo"])
    assert a.reps == 10 and a.queue_pkts == 100 and not a.plots
    assert a.schemes == ("fifo", "panda")       # in the table's order
    assert a.calibrate == (25.0, 50.0) and a.modeled_schemes == ["panda"]
    assert (a.fct_window_s, a.fct_grace_s) == (60.0, 30.0)
    a = config.parse_args(["--full", "--fct-window", "20"])
    assert (a.fct_window_s, a.fct_grace_s) == (20.0, 10.0)
    with pytest.raises(SystemExit):
        config.parse_args(["--fct-window", "0"])


def test_scheme_egress_settings():
    """Each scheme's panda-sched settings: one buffer for all, ECN, guard
    and per-flow queues only where the scheme asks for them."""
    q = config.parse_args(["--qos", "panda-sched"]).qos
    s = {n: dict(q.sched_settings(n)) for n in schemes.SCHEMES}
    for d in s.values():
        assert d["limit-packets"] == "50" and d["limit-bytes"] == "75700"
    assert [n for n in s if s[n]["per-flow"] == "true"] == [
        "fish", "fq_codel", "fq-drr", "pias-pf", "panda-pf"]
    assert s["pias"] == s["panda"]
    assert [n for n in s if s[n]["guard"] != "0"] == ["fish", "panda-guard"]
    # fq_codel signals with CoDel in place of the port threshold.
    assert [n for n in s if s[n]["ecn-threshold"] == "0"] == [
        "fq_codel", "panda-droptail"]
    assert [n for n in s if "fq-codel" in s[n]] == ["fq_codel"]
    assert s["fq_codel"]["fq-codel"] == "true"
    assert schemes.differences("fq_codel", "fq-drr") == ["fq_codel"]
    assert q.record("fq_codel")["other_config"] == s["fq_codel"]
    h = config.parse_args(["--qos", "htb"]).qos
    assert h.record("panda")["type"] == "linux-htb"
    assert h.record("panda")["ecn_threshold_bytes"] is None


def test_old_scheme_names_read_as_today():
    """Committed results name plain DRR "fq"; their rows, tables and
    figures call it fq-drr, the same egress under today's name."""
    assert schemes.canonical("fq") == "fq-drr"
    assert schemes.canonical("fq_codel") == "fq_codel"
    assert set(schemes.RENAMED.values()) <= set(schemes.SCHEMES)
    rows = report.aggregate([_trial("fq", 0, 4.0), _trial("fifo", 0, 9.0)])
    assert sorted(r["scheme"] for r in rows) == ["fifo", "fq-drr"]


def test_scheme_table_one_variable_at_a_time():
    """pias and panda differ in the policy only (the same strict-priority
    FIFO levels, ECN and buffer), and every scheme differs from its base
    in exactly one of the fields that make a scheme: each comparison of a
    scheme with its base changes one thing."""
    assert schemes.differences("pias", "panda") == ["policy"]
    assert schemes.differences("pias-pf", "panda-pf") == ["policy"]
    roots = [n for n, s in schemes.SCHEMES.items() if s.base is None]
    assert roots == ["fifo"]
    for name, s in schemes.SCHEMES.items():
        if s.base is None:
            continue
        assert s.base in schemes.SCHEMES, name
        assert len(schemes.differences(name, s.base)) == 1, (
            name, s.base, schemes.differences(name, s.base))
        # The chain of bases ends at fifo (no cycle).
        seen, b = {name}, s.base
        while b is not None:
            assert b not in seen, (name, b)
            seen.add(b)
            b = schemes.SCHEMES[b].base
    # Each factor as its own pair.
    assert schemes.SCHEMES["panda-pf"].base == "panda"
    assert schemes.SCHEMES["pias-pf"].base == "pias"
    assert schemes.differences("fish", "pias-pf") == ["guard"]
    for ablation, field in (("panda-guard", "guard"),
                            ("panda-droptail", "ecn"),
                            ("panda-w1", "policy")):
        assert schemes.SCHEMES[ablation].base == "panda"
        assert schemes.differences(ablation, "panda") == [field]
    assert schemes.change("pias", "panda") == "policy: pias -> panda"
    assert schemes.change("panda", "panda-pf") == "per_flow: no -> yes"
    # A scheme on linux-htb must be what it is on panda-sched: htb has one
    # FIFO per level, no guard and no marking.
    for name in schemes.ORDER:
        s = schemes.SCHEMES[name]
        if not s.sched_only:
            assert not s.per_flow and not s.guard, name


def _trial(scheme, rep, p99, status="ok"):
    return {"cc": "cubic", "scheme": scheme, "concurrency": 14,
            "requests": 10000, "rep": rep, "experiments": ["a", "c"],
            "status": status,
            "memcached": {"p50_ms": 1.0, "p90_ms": 2.0, "p99_ms": p99,
                          "p99.9_ms": 9.0, "mean_ms": 1.5, "max_ms": 20.0},
            # As the load generator's JSON names and bounds them.
            "fct": {b: {"mean_ms": 10.0 * (i + 1), "completed": 3,
                        "size_range_bytes": rng}
                    for i, (b, rng) in enumerate((
                        ("small", [0, 1e5]), ("medium", [1e5, 1e7]),
                        ("large", [1e7, None]), ("all", [0, None])))},
            "load": {"goodput_mbps": 47.0},
            "memcached_levels": {"0": 90, "3": 10}}


def test_aggregate_table_csv(tmp_path):
    trials = [_trial("panda", r, p) for r, p in enumerate((1, 2, 3, 4))]
    trials.append(_trial("pias", 0, 30.0))
    trials.append(_trial("pias", 1, None, status="failed: boom"))
    rows = report.aggregate(trials)
    panda = next(r for r in rows if r["scheme"] == "panda")
    assert panda["reps_ok"] == 4
    assert panda["memcached"]["p99_ms"]["mean"] == pytest.approx(2.5)
    assert panda["memcached_levels"] == {"0": 360, "3": 40}
    pias = next(r for r in rows if r["scheme"] == "pias")
    assert pias["reps_failed"] == 1 and pias["failures"] == ["failed: boom"]
    result = {"summary": {"rows": rows}, "unavailable": [
        {"cc": "dctcp", "scheme": "panda",
         "status": "unavailable: kernel has no dctcp"}],
        "policy": {"panda": {"action": "id=1"}}}
    text = report.table(result)
    # The mean and its 95% interval's half-width, t with 3 degrees of
    # freedom: 3.182 * sd / 2.
    assert "2.50±2.05" in text and "FAILED" in text and "no dctcp" in text
    path = str(tmp_path / "r.csv")
    report.write_csv(result, path)
    with open(path) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3
    assert rows[-1]["status"].startswith("unavailable")
    # Columns named quantity, statistic, unit, as the FCT ones are.
    assert float(rows[0]["mc_p99_mean_ms"]) == pytest.approx(2.5)
    assert float(rows[0]["mc_p99_ci95_hi_ms"]) == pytest.approx(
        2.5 + 3.182446 * numpy.std([1, 2, 3, 4], ddof=1) / 2, abs=1e-4)
    assert rows[1]["mc_p99_ci95_lo_ms"] == ""       # pias: one repetition
    assert "fct_small_mean_ms" in rows[0] and "mc_p99_ms_mean" not in rows[0]
    assert report.read_csv(path) == rows
    # A file of an earlier version (memcached's unit before the
    # statistic) reads with today's names.
    old = os.path.join(paths.TOP, "docs", "results",
                       "2026-11-27-fq-codel-functional", "result.csv")
    first = report.read_csv(old)[0]
    assert first["mc_p99_mean_ms"] == "5.7299"
    assert "mc_p99_ms_mean" not in first


def test_patch_hash_is_stable():
    assert runner.patch_hash() == runner.patch_hash()
    assert len(runner.patch_hash()) == 64


def test_summaries_of_the_programs_json():
    """The trial reads the load generator's figures; it computes none."""
    fct = fct_summary({
        "small": {"size_range_bytes": [0, 100000], "completed": 2,
                  "unfinished": 1, "mean": 20000.0, "p50": 10000.0,
                  "p99": 30000.0},
        "all": {"size_range_bytes": [0, None], "completed": 0,
                "unfinished": 0, "mean": None, "p50": None, "p99": None}})
    assert list(fct) == ["small", "all"]
    assert fct["small"] == {"completed": 2, "unfinished": 1,
                            "mean_ms": 20.0, "p50_ms": 10.0, "p99_ms": 30.0,
                            "size_range_bytes": [0, 100000]}
    assert fct["all"]["mean_ms"] is None
    mc = memcached_summary({"requests_ok": 5, "requests_failed": 0,
                            "latency_us": {"all": {"p99": 1500.0}},
                            "window_start_realtime": 10.0,
                            "window_end_realtime": 20.0})
    assert mc["p99_ms"] == 1.5 and mc["window"] == [10.0, 20.0]
    # Timeouts are the scheme's doing, measured; other failures fail it.
    assert memcached_failure({"requests_failed": 0}) is None
    assert memcached_failure({"requests_failed": 2,
                              "requests_timed_out": 2}) is None
    assert memcached_failure({"requests_failed": 3,
                              "requests_timed_out": 2}) \
        == "failed: 1 memcached requests failed"
    assert memcached_failure({"requests_failed": 1}) \
        == "failed: 1 memcached requests failed"
    assert overlap([1.0, 30.0], [10.0, 20.0], 3.0)["ok"]
    assert not overlap([1.0, 15.0], [10.0, 20.0], 3.0)["ok"]
    assert not overlap([9.0, 30.0], [10.0, 20.0], 3.0)["ok"]
    assert not overlap([None, 30.0], [10.0, 20.0], 3.0)["ok"]


def test_buckets_come_from_the_trials():
    trials = [_trial("panda", 0, 1.0)]
    assert report.fct_buckets(trials) == {
        "small": [0, 1e5], "medium": [1e5, 1e7], "large": [1e7, None],
        "all": [0, None]}
    row = report.aggregate(trials)[0]
    assert list(row["fct_mean_ms"]) == ["small", "medium", "large", "all"]
    assert row["fct_size_range_bytes"]["large"] == [1e7, None]


def test_plots_for_every_experiment(tmp_path):
    from pandalab.testbed import plots
    trials = []
    for s in ("fifo", "pias", "panda"):
        for rep in range(3):
            for conc, req, exps in ((14, 100, ["a", "b"]), (14, 10000,
                                    ["a", "b", "c"]), (1, 10000, ["b", "c"]),
                                    (1, 100, ["b"])):
                t = _trial(s, rep, 1.0 + rep + conc / 10.0)
                t.update(concurrency=conc, requests=req, experiments=exps)
                trials.append(t)
    result = {"summary": {"rows": report.aggregate(trials)}}
    made = plots.plot_all(result, str(tmp_path))
    # The thesis's CUBIC figures; its FCT figure (5.10) is DCTCP's.
    assert sorted(made) == sorted([
        "fig5.1-p90-vs-requests-cubic.png",
        "fig5.2-p99-vs-requests-cubic.png",
        "fig5.6-latency-vs-concurrency-cubic.png",
        "fct-vs-concurrency-cubic.png"])
    for m in made:
        assert (tmp_path / m).stat().st_size > 10000


def test_threshold_units(capsys):
    """The 10g profile's thresholds are in the weighted counter's units by
    default; --threshold-units picks the others, and is refused where
    there are no weights (1g: the counter is bytes)."""
    assert config.parse_args([]).threshold_units is None
    a = config.parse_args(["--profile", "10g"])
    assert a.weights == "auto" and a.threshold_units == "counter-w1"
    for units in model.THRESHOLD_UNITS:
        a = config.parse_args(["--profile", "10g", "--threshold-units",
                               units])
        assert a.threshold_units == units
        assert config.settings(a)["threshold_units"] == units
    with pytest.raises(SystemExit):
        config.parse_args(["--threshold-units", "bytes"])
    assert "--threshold-units: the 1g profile has no size-interval " \
        "weights" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        config.parse_args(["--profile", "10g", "--threshold-units", "eta"])


def test_plots_of_a_10g_run_with_every_scheme(tmp_path):
    """The 10g profile's run has the weights ablation (panda-w1), and its
    figures carry the thesis's 10 Gbit/s numbers."""
    from pandalab.testbed import plots
    from pandalab.testbed.schemes import SCHEMES
    assert set(plots.COLORS) == set(SCHEMES)
    trials = []
    for s in ("fifo", "pias", "panda", "panda-w1"):
        t = _trial(s, 0, 2.0)
        t.update(concurrency=14, requests=10000, experiments=["a", "c"])
        trials.append(t)
    result = {"metadata": {"profile": "10g"},
              "summary": {"rows": report.aggregate(trials)}}
    made = plots.plot_all(result, str(tmp_path))
    assert sorted(made) == sorted([
        "fig5.7-p90-vs-requests-cubic.png",
        "fig5.8-p99-vs-requests-cubic.png",
        "fig5.11-fct-vs-concurrency-cubic.png",
        "factors-cubic.png"])


def test_plots_error_bars_and_factors(tmp_path):
    """Error bars are the 95% interval from 3 repetitions, none below;
    the per-flow factor and the ablations go to their own figure, the
    thesis's figures keep the schemes on the same FIFO levels."""
    from pandalab.testbed import plots
    rows = report.aggregate([_trial("panda", r, p)
                             for r, p in enumerate((1.0, 2.0, 3.0))])
    st = rows[0]["memcached"]["p99_ms"]
    hw = (st["ci95"][1] - st["ci95"][0]) / 2
    assert hw > 2 * st["std"]        # t(2) = 4.3, n = 3
    # Cut at 0 below (the interval's lower end is negative here).
    assert st["ci95"][0] < 0
    assert plots._val(st) == (2.0, (2.0, pytest.approx(hw)))
    two = report.aggregate([_trial("panda", r, p)
                            for r, p in enumerate((1.0, 2.0))])
    assert plots._val(two[0]["memcached"]["p99_ms"]) == (1.5, (0.0, 0.0))
    assert plots._yerr([(0.0, 0.0), (0.0, 0.0)]) is None
    assert plots._yerr([(1.0, 2.0), (0.0, 0.0)]) == [[1.0, 0.0], [2.0, 0.0]]
    assert plots._bars_note(two) == "2 repetitions: no error bars"
    trials = [_trial(s, rep, 1.0 + rep) for rep in range(3)
              for s in ("fifo", "pias", "fish", "fq_codel", "panda",
                        "pias-pf", "panda-pf", "panda-guard",
                        "panda-droptail")]
    rows = report.aggregate(trials)
    assert plots._schemes(rows) == ["fifo", "pias", "fish", "fq_codel",
                                    "panda"]
    made = plots.plot_all({"summary": {"rows": rows}}, str(tmp_path))
    assert "factors-cubic.png" in made
    assert (tmp_path / "factors-cubic.png").stat().st_size > 10000


def _target_trials(reps, p99=None, scale=(1.0, 2.0, 0.5, 1.5, 0.8)):
    """A floor and every default quick scheme per repetition; each
    repetition's seed scales every scheme's memcached p99 alike (as the
    request sequence's tail does), the ratios stay."""
    p99 = p99 or {"fifo": 200.0, "pias": 20.0, "fish": 5.0, "fq_codel": 4.0,
                  "panda": 2.3, "pias-pf": 19.0, "panda-pf": 2.2,
                  "panda-guard": 2.5, "panda-droptail": 30.0}
    trials = []
    for rep in range(reps):
        k = scale[rep]
        floor = _trial("fifo", rep, 2.0 * k)
        floor.update(concurrency=0, experiments=["floor"])
        trials.append(floor)
        for s, v in p99.items():
            t = _trial(s, rep, v * k * (1 + 0.01 * (rep % 2)))
            marks = 500 if s != "panda-droptail" else 0
            drops = 0 if s != "panda-droptail" else 300
            t["sched_levels"] = [{"mark-ecn": marks, "drop-limit": drops,
                                  "guard": 40 if s == "panda-guard"
                                  else 0}] * 2
            t["tcp_sender"] = {"TcpRetransSegs": drops + 3 + rep,
                               "TcpExtTCPTimeouts": 1, "TcpOutSegs": 1000}
            t["fct"]["small"]["p99_ms"] = (50.0 if s == "panda-droptail"
                                           else 9.0 + 0.1 * rep)
            t["fct"]["large"]["unfinished"] = 2
            if s == "panda":
                # 97% of panda's memcached packets at level 0 (the others
                # keep _trial()'s 90%); small FCT 2-4% above pias's
                # (inside the band), medium 10% (outside).
                t["memcached_levels"] = {"0": 97, "1": 3}
                t["fct"]["small"]["mean_ms"] = 10.0 * (1.02 + 0.005 * rep)
                t["fct"]["medium"]["mean_ms"] = 22.0 + 0.1 * rep
            trials.append(t)
    return trials


def test_floor_and_targets():
    """summary.floor_ms = the unloaded trial's p99 + one 1514-byte frame at
    the link rate; each target compares schemes that differ in one thing
    (but the design comparisons with fq_codel), pairs them by repetition and
    decides on the 95% interval."""
    cfg = config.parse_args([])         # 50 Mbit/s: a frame is 0.24224 ms
    frame = 1514 * 8 / 50e6 * 1000
    trials = _target_trials(5)
    summ = runner.summarize(trials, cfg)
    fl = summ["floor"]["cubic"]
    assert fl["frame_ms"] == pytest.approx(0.24224)
    assert summ["floor_ms"] == pytest.approx(2.0 * 1.16 + frame)
    assert fl["floor_ms_reps"]["1"] == pytest.approx(4.0 + frame)
    t = {x["id"]: x for x in summ["targets"]}
    assert {x["verdict"] for x in t.values()} <= {
        "met", "NOT met", "undecided", "reported", "not run"}
    # Each target names what it changes, from the scheme table.
    for tid in ("fct_small_vs_pias", "fct_medium_vs_pias",
                "panda_p99_vs_pias"):
        assert t[tid]["compares"] == ["pias", "panda"]
        assert t[tid]["differs_in"] == ["policy"]
    assert t["ecn_vs_droptail"]["differs_in"] == ["ecn"]
    assert t["large_flows_guard"]["differs_in"] == ["guard"]
    assert t["panda_p99_vs_fq"]["differs_in"] == ["policy", "per_flow",
                                                  "fq_codel"]
    assert "two alternatives" in t["panda_p99_vs_fq"]["variable"]
    # fq_codel's small flows: _trial()'s 10 ms, as pias's.
    fc = t["fq_codel_small_vs_pias"]
    assert fc["compares"] == ["fq_codel", "pias"]
    assert fc["verdict"] == "met" and fc["ratio"] == pytest.approx(1.0)
    assert "straw man" in fc["variable"]
    # panda/floor: 2.3k (x1.01 on odd reps) over 2k + a frame, paired by
    # seed: 0.93 to 1.10, an interval across the 1.1 bound.
    f = t["panda_p99_vs_floor"]
    ratios = [2.3 * k * (1 + 0.01 * (r % 2)) / (2 * k + frame)
              for r, k in enumerate((1.0, 2.0, 0.5, 1.5, 0.8))]
    assert f["ratio"] == pytest.approx(numpy.exp(numpy.mean(numpy.log(
        ratios))))
    assert f["verdict"] == "undecided" and f["met"] is None
    assert f["check"]["reps"] == 5 and "straddles" in f["check"]["why"]
    assert f["check"]["ci95"][0] < 1.1 < f["check"]["ci95"][1]
    assert t["panda_p99_vs_fq"]["verdict"] == "met"
    assert t["p99_order"]["verdict"] == "met"
    assert t["p99_order"]["checks"]["pias/panda"]["estimate"] == \
        pytest.approx(20 / 2.3, rel=1e-3)
    # The schemes' own intervals (wide: the seeds' scale) are recorded
    # beside the paired verdict, and whether they overlap.
    cis = t["p99_order"]["p99_ci95"]
    assert cis["panda"][1] < cis["pias"][0] and cis["pias"][1] < \
        cis["fifo"][0]
    assert t["p99_order"]["intervals_overlap"] is False
    s = t["fct_small_vs_pias"]
    assert s["verdict"] == "met" and s["met"] is True
    assert 0.95 < s["check"]["ci95"][0] < s["check"]["ci95"][1] < 1.05
    assert t["fct_medium_vs_pias"]["verdict"] == "NOT met"
    lv = t["panda_mc_level0"]
    assert lv["verdict"] == "met" and lv["share"] == pytest.approx(0.97)
    assert t["ecn_vs_droptail"]["verdict"] == "met"
    e = t["ecn_vs_droptail"]["schemes"]
    assert e["panda"]["marks"] == 1000 and e["panda-droptail"]["drops"] == 600
    assert e["panda-droptail"]["retrans_segs"] == 305
    g = t["large_flows_guard"]
    assert g["verdict"] == "reported" and g["met"] is None
    assert g["schemes"]["panda-guard"]["guard_packets"] == 80
    assert g["schemes"]["panda"]["large_unfinished"] == 10
    pf = t["per_flow_factor"]["ratios"]
    assert set(pf) == {"pias-pf/pias", "panda-pf/panda", "panda-pf/pias-pf"}
    assert pf["panda-pf/panda"]["memcached_p99"]["estimate"] == \
        pytest.approx(2.2 / 2.3, rel=1e-3)
    assert pf["pias-pf/pias"]["variable"] == "per_flow: no -> yes"

    # Small FCT whose interval straddles the band's edge: undecided.
    for x in trials:
        if x["scheme"] == "panda":
            x["fct"]["small"]["mean_ms"] = 10.0 * (1.05 + (
                0.04 if x["rep"] % 2 else -0.04))
    t = {x["id"]: x for x in runner.summarize(trials, cfg)["targets"]}
    s = t["fct_small_vs_pias"]
    assert s["verdict"] == "undecided" and s["met"] is None
    assert s["check"]["ci95"][0] < 1.05 < s["check"]["ci95"][1]
    assert "straddles" in s["check"]["why"]

    # One repetition: the +-5% targets cannot be decided, the orderings
    # far from their bounds can.
    trials = _target_trials(1)
    summ = runner.summarize(trials, cfg)
    t = {x["id"]: x for x in summ["targets"]}
    assert t["fct_small_vs_pias"]["verdict"] == "undecided"
    assert t["fct_small_vs_pias"]["check"]["why"] == \
        "one repetition: cannot decide a +-5% target"
    assert t["fct_medium_vs_pias"]["verdict"] == "undecided"
    assert t["panda_p99_vs_floor"]["verdict"] == "undecided"
    assert t["p99_order"]["verdict"] == "met"
    assert t["panda_p99_vs_pias"]["verdict"] == "met"
    assert t["panda_p99_vs_fq"]["verdict"] == "undecided"   # 2.3 vs 4
    text = "\n".join(targets.lines(summ))
    assert "floor (cubic): 2.24 ms = unloaded memcached p99 2.00 ms" in text
    assert "one repetition: cannot decide a +-5% target" in text
    assert "[policy: pias -> panda]" in text
    assert "97.0% at level 0 (packets per level: 0:97 1:3)" in text
    # Counts are integers in the text, times keep their decimals.
    assert targets._named("marks", 141301.0) == "marks 141301"
    assert targets._named("marks", 141301.5) == "marks 141301.50"
    assert targets._named("memcached_p99_ms", 2.0) == "memcached_p99_ms 2.00"

    # A scheme missing: not run.
    trials = [x for x in _target_trials(3) if x["scheme"] != "fq_codel"]
    t = {x["id"]: x for x in runner.summarize(trials, cfg)["targets"]}
    assert t["panda_p99_vs_fq"]["verdict"] == "not run"
    assert t["panda_p99_vs_fq"]["met"] is None
    assert t["fq_codel_small_vs_pias"]["verdict"] == "not run"
    # Worse than the floor allows and off level 0: NOT met.
    for x in trials:
        if x["scheme"] == "panda":
            x["memcached_levels"] = {"0": 80, "1": 20}
            x["memcached"]["p99_ms"] *= 2
    t = {x["id"]: x for x in runner.summarize(trials, cfg)["targets"]}
    assert t["panda_mc_level0"]["verdict"] == "NOT met"
    assert t["panda_p99_vs_floor"]["verdict"] == "NOT met"
    assert t["panda_p99_vs_floor"]["met"] is False
    text = "\n".join(targets.lines(runner.summarize(trials, cfg)))
    assert "NOT met" in text and "fq_codel did not run" in text


def test_compare_runs(tmp_path):
    """pandalab.testbed.compare: the figures and their numbers, per run,
    from each run's result.json (no capture needed)."""
    from pandalab.testbed import compare
    cfg = config.parse_args([])
    for name, top in (("before", 60), ("after", 99)):
        trials = [_trial("pias", 0, 30.0), _trial("panda", 0, 2.0)]
        trials[1]["memcached_levels"] = {"0": top, "1": 100 - top}
        trials[1]["dir"] = str(tmp_path / "gone")
        d = tmp_path / name
        d.mkdir()
        (d / "result.json").write_text(json.dumps({
            "metadata": {"workload": {"name": "data-mining"}},
            "trials": trials, "summary": runner.summarize(trials, cfg)}))
    assert compare.main(["--out", str(tmp_path / "cmp"),
                         "CDF alone=%s" % (tmp_path / "before"),
                         "floor=%s" % (tmp_path / "after")]) == 0
    for f in ("compare-levels.png", "compare-metrics.png"):
        assert (tmp_path / "cmp" / f).stat().st_size > 10000
    runs = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert [r["label"] for r in runs] == ["CDF alone", "floor"]
    assert [r["panda"]["memcached_level0_share"] for r in runs] == [0.6,
                                                                    0.99]
    assert runs[0]["pias"]["memcached_p99_ms"] == 30.0
    assert runs[1]["workload"] == "data-mining"
    with pytest.raises(SystemExit):
        compare.main(["--out", str(tmp_path), "nolabel"])




def test_ports_option(capsys):
    """--ports: system by default, with no PMD settings; afxdp with one
    PMD thread and the default pmd-maxsleep, both as OVS gets them and as
    result.json records them; every bad combination refused by name."""
    a = config.parse_args([])
    assert a.ports == PortConfig() and not a.ports.pmd
    assert a.ports.ovs_other_config() == {}
    assert a.ports.record()["type"] == "system"
    assert a.ports.record()["pmd_maxsleep_us"] is None
    a = config.parse_args(["--qos", "panda-sched", "--ports", "afxdp"])
    assert a.ports.type == "afxdp" and a.ports.pmd
    assert a.ports.ovs_other_config() == {
        "pmd-cpu-mask": default_pmd_cpu_mask(),
        "pmd-maxsleep": str(config.DEFAULT_PMD_MAXSLEEP_US)}
    a = config.parse_args(["--qos", "panda-sched", "--ports", "afxdp",
                           "--pmd-maxsleep", "0", "--pmd-cpu-mask", "0x1"])
    assert a.ports.ovs_other_config() == {"pmd-cpu-mask": "0x1",
                                          "pmd-maxsleep": "0"}
    rec = a.ports.record()
    assert (rec["type"], rec["xdp_mode"], rec["pmd_cpu_mask"],
            rec["pmd_maxsleep_us"]) == ("afxdp", "generic", "0x1", 0)
    # Token bucket: two frames on every port type, --burst over it, 0 the
    # datapath's default (no key); htb has none.
    assert dict(a.qos.sched_settings("panda"))["burst"] == "3028"
    a = config.parse_args([])
    assert dict(a.qos.sched_settings("panda"))["burst"] == "3028"
    a = config.parse_args(["--qos", "panda-sched", "--burst", "20000"])
    assert dict(a.qos.sched_settings("fifo"))["burst"] == "20000"
    a = config.parse_args(["--burst", "0"])
    assert "burst" not in dict(a.qos.sched_settings("panda"))
    assert config.parse_args(["--qos", "htb"]).qos.burst_bytes == 0
    for argv, why in (
            (["--qos", "htb", "--ports", "afxdp"], "needs --qos panda-sched"),
            (["--qos", "panda-sched", "--pmd-maxsleep", "50"],
             "need --ports afxdp"),
            (["--qos", "panda-sched", "--ports", "afxdp", "--pmd-maxsleep",
              "20000"], "pmd-maxsleep 20000 us: must be 0..10000"),
            (["--qos", "panda-sched", "--ports", "afxdp", "--pmd-cpu-mask",
              "cores"], "pmd-cpu-mask 'cores'"),
            (["--qos", "htb", "--ports", "dpdk"],
             "--ports dpdk needs --qos panda-sched"),
            (["--qos", "panda-sched", "--ports", "tap"], "invalid choice"),
            (["--qos", "panda-sched", "--burst", "1000"], "--burst 1000"),
            (["--burst", "-1"], "argument --burst: '-1' is not a size"),
            (["--qos", "htb", "--burst", "3028"], "--burst 3028")):
        with pytest.raises(SystemExit):
            config.parse_args(argv)
        assert why in capsys.readouterr().err, argv
    # One PMD thread, on the last CPU, whatever the machine.
    assert default_pmd_cpu_mask(1) == "0x1"
    assert default_pmd_cpu_mask(2) == "0x2"
    assert default_pmd_cpu_mask(8) == "0x80"


def test_dpdk_ports_option(monkeypatch):
    """--ports dpdk: PMD settings as afxdp, the DPDK build tree by default,
    and what OVS gets: DPDK initialised in the reserved hugepages only,
    without PCI, its files under the run's own prefix."""
    monkeypatch.delenv("PANDA_DPDK_BUILD_DIR", raising=False)
    a = config.parse_args(["--qos", "panda-sched", "--ports", "dpdk",
                           "--pmd-cpu-mask", "0x1"])
    assert a.ports.type == "dpdk" and a.ports.pmd and not a.ports.tso
    assert a.build_dir == os.path.join(paths.TOP, "_build-dpdk")
    assert dict(a.qos.sched_settings("panda"))["burst"] == "3028"
    rec = a.ports.record()
    assert (rec["type"], rec["pmd_cpu_mask"], rec["hugepages_2mb"]) == (
        "dpdk", "0x1", 64)
    assert rec["netdev"].startswith("netdev-dpdk")
    with pytest.raises(LabError, match="need a hugepage reservation"):
        a.ports.ovs_other_config()

    class Reserved:
        mount = "/tmp/huge-x"
        megabytes = 128
    oc = a.ports.ovs_other_config(Reserved(), "panda-abc")
    assert oc == {"pmd-cpu-mask": "0x1",
                  "pmd-maxsleep": str(config.DEFAULT_PMD_MAXSLEEP_US),
                  "dpdk-init": "true", "dpdk-socket-mem": "128",
                  "dpdk-socket-limit": "128",
                  "dpdk-extra": "--huge-dir=/tmp/huge-x "
                                "--file-prefix=panda-abc --no-pci "
                                "--no-telemetry"}
    monkeypatch.setenv("PANDA_DPDK_BUILD_DIR", "/x/dpdk")
    assert config.parse_args(["--qos", "panda-sched", "--ports",
                              "dpdk"]).build_dir == "/x/dpdk"
    assert config.parse_args(["--qos", "panda-sched", "--ports", "dpdk",
                              "--build-dir", "/y"]).build_dir == "/y"
    assert PortConfig("dpdk", hugepages=16).problem().startswith(
        "16 hugepages")


def test_thread_cpu_share():
    before = {"ovs-vswitchd": 1.0, "pmd-c01/id:6": 2.0, "urcu2": 0.5}
    after = {"ovs-vswitchd": 1.5, "pmd-c01/id:6": 12.0, "urcu2": 0.5}
    got = runner.thread_cpu_share(before, after, 10.0)
    assert got == {"wall_s": 10.0, "threads": {
        "ovs-vswitchd": {"cpu_s": 0.5, "share": 0.05},
        "pmd-c01/id:6": {"cpu_s": 10.0, "share": 1.0}}}


def test_profile_10g(capsys):
    """--profile 10g: userspace TSO on the (system) ports, buffers in
    bytes, weights from panda-model, and the all-ones ablation (quick and
    full runs); the combinations that cannot work are refused by name."""
    a = config.parse_args(["--profile", "10g"])
    assert a.ports.tso and a.ports.type == "system"
    assert a.ports.ovs_other_config() == {"userspace-tso-enable": "true"}
    assert a.ports.record()["userspace_tso"] is True
    assert a.weights == "auto" and a.qos.buffer_bytes
    assert "panda-w1" in a.schemes and "panda" in a.schemes
    # As the thesis at 10 Gbit/s: CUBIC, no ECN marking of 64 KB packets.
    assert a.ccs == ("cubic",) and a.qos.ecn_threshold == 0
    assert a.flt_level0 == 1.0
    assert config.parse_args(["--profile", "10g", "--flt-level0",
                              "0.9"]).flt_level0 == 0.9
    a = config.parse_args(["--profile", "10g", "--qos", "panda-sched"])
    assert dict(a.qos.sched_settings("panda"))["ecn-threshold"] == "0"
    assert "panda-droptail" not in a.schemes
    a = config.parse_args(["--profile", "10g", "--cc", "reno"])
    assert a.ccs == ("reno",)
    a = config.parse_args(["--profile", "10g", "--qos", "htb"])
    rec = a.qos.record("panda")
    assert rec["queue_bytes_per_level"] == a.queue_pkts * schemes.FRAME
    a = config.parse_args(["--profile", "10g", "--full"])
    assert "panda-w1" in a.schemes
    a = config.parse_args(["--qos", "htb"])
    assert not a.ports.tso and a.weights is None and not a.qos.buffer_bytes
    # A quick run on htb (which never marks): the thesis's CUBIC.
    assert a.ccs == ("cubic",) and a.flt_level0 == 0.99
    assert config.parse_args(["--qos", "panda-sched"]).qos.ecn_threshold \
        == schemes.DEFAULT_ECN_THRESHOLD
    assert a.qos.record("panda")["queue_bytes_per_level"] is None
    assert "panda-w1" not in a.schemes
    for argv, why in (
            (["--profile", "10g", "--qos", "panda-sched", "--ports",
              "afxdp"], "userspace TSO needs system ports"),
            (["--schemes", "panda,panda-w1"], "needs a profile with weights")):
        with pytest.raises(SystemExit):
            config.parse_args(argv)
        assert why in capsys.readouterr().err, argv


def test_weights_target():
    """Bytes per level come from panda-sched's counters or the HTB
    classes; the weights target compares panda with panda-w1."""
    t = _trial("panda", 0, 2.0)
    t["tc_classes"] = {"1:1": {"bytes": 100}, "1:3": {"bytes": 300},
                       "1:a": {"bytes": 600}, "1:fffe": {"bytes": 1000}}
    assert report.level_bytes(t) == [100, 0, 300] + [0] * 6 + [600]
    t = _trial("panda", 0, 2.0)
    t["sched_levels"] = [{"sent_b": 5}, {"sent_b": 7}]
    assert report.level_bytes(t) == [5, 7]
    assert report.level_bytes(_trial("fifo", 0, 1.0)) is None
    assert targets.sinking([1, 1, 2]) == {"level0_share": 0.25,
                                          "mean_level": 1.25}
    assert targets.sinking([0, 0]) is None

    cfg = config.parse_args(["--profile", "10g"])

    def run(reps, panda_mc=None, w1_mc=None, panda_lv=(10, 30, 60)):
        trials = []
        for rep in range(reps):
            floor = _trial("fifo", rep, 2.0)
            floor.update(concurrency=0, experiments=["floor"])
            trials.append(floor)
            j = 1 + 0.02 * rep          # the seed moves the bytes a little
            for s, lv, mc in (
                    ("panda", panda_lv, panda_mc or {"0": 50}),
                    ("panda-w1", (30, 30, 40), w1_mc or {"0": 50}),
                    ("pias", (50, 50, 0), {"0": 40, "1": 10})):
                t = _trial(s, rep, 3.0)
                t["sched_levels"] = [{"sent_b": b * (j if i else 1)}
                                     for i, b in enumerate(lv)]
                t["memcached_levels"] = mc
                trials.append(t)
        return {x["id"]: x for x in runner.summarize(trials, cfg)["targets"]}
    t = run(5)
    w = t["weights_vs_all_ones"]
    assert w["verdict"] == "met" and w["met"] is True
    assert w["differs_in"] == ["policy"]
    assert w["schemes"]["panda"]["level0_share"] == pytest.approx(
        10 / (10 + 90 * 1.04), rel=1e-3)
    assert len(w["checks"]) == 4
    assert all(c["verdict"] == "met" for c in w["checks"].values())
    # Equal p99s: "<" is not met (3.0 vs 3.0 every repetition).
    assert t["panda_p99_vs_pias"]["verdict"] == "NOT met"
    # The memcached connection leaving level 0 more often than without
    # weights fails it.
    t = run(5, panda_mc={"0": 45, "1": 5})
    assert t["weights_vs_all_ones"]["verdict"] == "NOT met"
    # The same few packets off level 0 under both: the weights added none.
    t = run(5, panda_mc={"0": 10736, "1": 6}, w1_mc={"0": 10747, "1": 6})
    assert t["weights_vs_all_ones"]["verdict"] == "met"
    # Both far off level 0: not "stays at level 0", however equal.
    t = run(5, panda_mc={"0": 90, "1": 10}, w1_mc={"0": 90, "1": 10})
    assert t["weights_vs_all_ones"]["verdict"] == "NOT met"
    # Bytes that sink as fast with weights as without: the ratios sit on
    # their bounds, and one repetition decides nothing near them.
    t = run(1, panda_lv=(30, 30, 40))
    w = t["weights_vs_all_ones"]
    assert w["verdict"] == "undecided"
    assert "one repetition" in w["checks"][
        "bytes at level 0, panda/panda-w1 <= 1"]["why"]


def test_ecn_backlog_is_every_schemes_and_resumes_old_runs(tmp_path):
    """--ecn-backlog ahead sets panda-sched's ecn-ahead on every scheme's
    port (the egress stays the same for all); the default, the port's
    backlog, writes nothing new.  A run recorded before the option existed
    ran with the port's backlog, and resumes under the default only."""
    from pandalab.testbed import resume
    a = config.parse_args([])
    assert all("ecn-ahead" not in dict(a.qos.sched_settings(s))
               for s in a.schemes)
    assert config.settings(a)["ecn_backlog"] == "port"
    b = config.parse_args(["--ecn-backlog", "ahead"])
    assert {dict(b.qos.sched_settings(s)).get("ecn-ahead")
            for s in b.schemes} == {"true"}
    rec = {"settings": {k: v for k, v in config.settings(a).items()
                        if k != "ecn_backlog"}}
    resume.check_settings(str(tmp_path), rec, a)
    with pytest.raises(resume.ResumeError, match="--ecn-backlog"):
        resume.check_settings(str(tmp_path), rec, b)
    for argv in (["--qos", "htb"], ["--ecn-threshold", "0"]):
        with pytest.raises(SystemExit):
            config.parse_args(["--ecn-backlog", "ahead"] + argv)


def test_paced_memcached_is_a_setting(tmp_path):
    """--mc-interval paces panda-mc-client in every trial (its
    --interval); older runs, which had none, resume under 0 only."""
    from pandalab.testbed import resume
    a = config.parse_args([])
    assert a.mc_interval_us == 0 and config.settings(a)["mc_interval_us"] == 0
    b = config.parse_args(["--mc-interval", "2ms"])
    assert b.mc_interval_us == 2000
    rec = {"settings": {k: v for k, v in config.settings(a).items()
                        if k != "mc_interval_us"}}
    resume.check_settings(str(tmp_path), rec, a)
    with pytest.raises(resume.ResumeError, match="--mc-interval"):
        resume.check_settings(str(tmp_path), rec, b)
    with pytest.raises(SystemExit):
        config.parse_args(["--mc-interval", "-1ms"])
    with pytest.raises(SystemExit):
        config.parse_args(["--mc-interval", "2s"])

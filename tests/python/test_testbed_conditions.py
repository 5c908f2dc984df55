"""The testbed's congestion-control conditions (--cc) and the figure-name
rule: a file carries the thesis's figure number only under the thesis's
own condition (pandalab.testbed.conditions).  No root."""

import itertools

import pytest

from pandalab.testbed import conditions, config, plots, report, schemes

PROFILES = ("1g", "10g")


def test_the_thesis_conditions_by_name():
    cubic = conditions.parse("cubic")
    assert (cubic.algorithm, cubic.ecn, cubic.tcp_ecn) == ("cubic", False, 2)
    dctcp = conditions.parse("dctcp")
    assert (dctcp.algorithm, dctcp.ecn) == ("dctcp", True)
    ecn = conditions.parse("ecn-cubic")
    assert (ecn.algorithm, ecn.ecn, ecn.tcp_ecn) == ("cubic", True, 1)
    assert conditions.parse("reno").ecn is False
    for bad, why in (("ecn-dctcp", "negotiates ECN by itself"),
                     ("ecn-", "not a congestion control"),
                     ("cu bic", "not a congestion control"),
                     ("x" * 16, "not a congestion control")):
        with pytest.raises(conditions.ConditionError, match=why):
            conditions.parse(bad)


def test_figure_names_carry_the_thesis_number_only_under_its_condition():
    f = conditions.figure_file
    cubic, dctcp, ecn = (conditions.parse(n)
                         for n in ("cubic", "dctcp", "ecn-cubic"))
    # 1 Gbit/s: CUBIC without ECN is Figs 5.1, 5.2, 5.6, whatever the
    # egress marks (its packets are not ECN-capable); its FCT figure has
    # no thesis number (Fig 5.10 is DCTCP's).
    for marks in (True, False):
        assert f(cubic, "1g", marks, "p90-vs-requests") == \
            "fig5.1-p90-vs-requests-cubic.png"
        assert f(cubic, "1g", marks, "p99-vs-requests") == \
            "fig5.2-p99-vs-requests-cubic.png"
        assert f(cubic, "1g", marks, "latency-vs-concurrency") == \
            "fig5.6-latency-vs-concurrency-cubic.png"
        assert f(cubic, "1g", marks, "fct-vs-concurrency") == \
            "fct-vs-concurrency-cubic.png"
    # DCTCP with the port's ECN threshold: Figs 5.3, 5.4, 5.5, 5.10.
    assert [f(dctcp, "1g", True, p) for p in conditions.PLOTS] == [
        "fig5.3-p90-vs-requests-dctcp.png",
        "fig5.4-p99-vs-requests-dctcp.png",
        "fig5.5-latency-vs-concurrency-dctcp.png",
        "fig5.10-fct-vs-concurrency-dctcp.png"]
    # DCTCP on an egress that never marks is not the thesis's DCTCP.
    assert [f(dctcp, "1g", False, p) for p in conditions.PLOTS] == [
        "%s-dctcp.png" % p for p in conditions.PLOTS]
    assert "ECN threshold" in dctcp.thesis_unlike("1g", False)
    # 10 Gbit/s: the thesis ran CUBIC only (Figs 5.7, 5.8, 5.9, 5.11).
    assert [f(cubic, "10g", False, p) for p in conditions.PLOTS] == [
        "fig5.7-p90-vs-requests-cubic.png",
        "fig5.8-p99-vs-requests-cubic.png",
        "fig5.9-latency-vs-concurrency-cubic.png",
        "fig5.11-fct-vs-concurrency-cubic.png"]
    assert f(dctcp, "10g", True, "p99-vs-requests") == \
        "p99-vs-requests-dctcp.png"
    # ECN-CUBIC, or any other algorithm, never carries a thesis number.
    for profile, marks, plot in itertools.product(
            PROFILES, (True, False), conditions.PLOTS):
        for name in ("ecn-cubic", "reno", "ecn-reno", "bbr"):
            assert not f(conditions.parse(name), profile, marks,
                         plot).startswith("fig"), (name, profile, plot)
    assert "negotiates ECN" in ecn.thesis_unlike("1g", True)


def test_each_thesis_figure_number_names_one_condition():
    for profile, table in conditions.THESIS_FIGURES.items():
        nums = [n for figs in table.values() for n in figs if n]
        assert len(nums) == len(set(nums)), profile
        for figs in table.values():
            assert len(figs) == len(conditions.PLOTS)


def test_condition_records():
    rec = conditions.parse("cubic").record("1g", True)
    assert rec["thesis_condition"] and not rec["senders_negotiate_ecn"]
    assert rec["net.ipv4.tcp_ecn"] == 2 and rec["route"] == "congctl cubic"
    assert rec["thesis_figures"]["p99-vs-requests"] == "5.2"
    assert rec["thesis_figures"]["fct-vs-concurrency"] is None
    assert "drop-tail" in rec["description"]
    rec = conditions.parse("ecn-cubic").record("1g", True)
    assert not rec["thesis_condition"] and rec["thesis_figures"] is None
    assert rec["net.ipv4.tcp_ecn"] == 1 and rec["not_thesis_because"]

    class Impl:
        algorithm = "panda_dctcp"

        def record(self):
            return {"label": "dctcp (bpf)"}
    rec = conditions.parse("dctcp").record("1g", True, Impl())
    assert rec["route"] == "congctl panda_dctcp features ecn"
    assert rec["implementation"] == {"label": "dctcp (bpf)"}
    assert rec["thesis_figures"]["fct-vs-concurrency"] == "5.10"


def test_cc_option(capsys):
    # Full runs: the profile's conditions, the thesis's.  Quick runs: one,
    # DCTCP where the port marks, else CUBIC without ECN.
    assert config.parse_args(["--full"]).ccs == ("cubic", "dctcp")
    assert config.parse_args([]).ccs == ("dctcp",)
    assert config.parse_args(["--ecn-threshold", "0"]).ccs == ("cubic",)
    assert config.parse_args(["--qos", "htb"]).ccs == ("cubic",)
    assert config.parse_args(["--profile", "10g"]).ccs == ("cubic",)
    assert config.parse_args(["--cc", "ecn-cubic,dctcp"]).ccs == (
        "ecn-cubic", "dctcp")
    for argv, why in ((["--cc", "ecn-dctcp"], "negotiates ECN by itself"),
                      (["--cc", "cubic,cubic"], "name each condition once"),
                      (["--cc", "cu bic"], "not a congestion control")):
        with pytest.raises(SystemExit):
            config.parse_args(argv)
        assert why in capsys.readouterr().err, argv


def test_ecn_threshold_decision():
    d = conditions.ecn_threshold_decision(30000, 50e6, {14, 1})
    assert d["scaled_to_rate_bytes"] == 1500
    assert d["min_windows_bytes"] == {"1": 3028, "14": 42392}
    assert d["decision"].startswith("kept in bytes")
    assert "under one frame" in d["decision"]
    assert d["threshold_ms_at_rate"] == 4.8
    assert conditions.ecn_threshold_decision(1500, 50e6)["decision"] \
        .startswith("scaled")
    assert conditions.ecn_threshold_decision(
        schemes.DEFAULT_ECN_THRESHOLD, 1e9)["decision"].startswith("scaled")


def _row_trial(cc, scheme, conc, req, exps):
    return {"cc": cc, "scheme": scheme, "concurrency": conc,
            "requests": req, "rep": 0, "status": "ok", "experiments": exps,
            "memcached": {"p50_ms": 1.0, "p90_ms": 2.0, "p99_ms": 3.0,
                          "p99.9_ms": 4.0, "mean_ms": 1.5, "max_ms": 5.0},
            "fct": {"small": {"mean_ms": 2.0, "completed": 3,
                              "size_range_bytes": [0, 1e5]}}}


def test_plot_files_of_a_run_with_three_conditions(tmp_path):
    trials = [_row_trial(cc, s, 14, 10000, ["a", "c"])
              for cc in ("cubic", "dctcp", "ecn-cubic")
              for s in ("fifo", "pias", "panda")]
    result = {"metadata": {"profile": "1g",
                           "qos": {"type": "panda-sched",
                                   "ecn_threshold_bytes": 30000}},
              "summary": {"rows": report.aggregate(trials)}}
    made = sorted(plots.plot_all(result, str(tmp_path)))
    assert made == sorted([
        "fig5.1-p90-vs-requests-cubic.png",
        "fig5.2-p99-vs-requests-cubic.png",
        "fct-vs-concurrency-cubic.png",
        "fig5.3-p90-vs-requests-dctcp.png",
        "fig5.4-p99-vs-requests-dctcp.png",
        "fig5.10-fct-vs-concurrency-dctcp.png",
        "p90-vs-requests-ecn-cubic.png",
        "p99-vs-requests-ecn-cubic.png",
        "fct-vs-concurrency-ecn-cubic.png"])

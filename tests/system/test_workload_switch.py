"""The workload switch (testbed/workload_switch.py), a short version end to
end: 20 s of web search, then 40 s of data mining, static policy and
auto-tune, on the policy modelled in the run's own collection stage.
Asserts the robust facts only:

* both variants finished, with memcached requests in every window and
  flows of both workloads completed;
* the static variant pushed nothing; auto-tune pushed, after the switch,
  a policy whose thresholds came from the finished flows the datapath
  counted ("live N flows"), under the same policy id, each push logged
  with its inputs, and the FLT counter bound of the modelled policy kept
  (floor = -(excursion - alpha_1));
* result.json records both workloads with their sha256.

The p99 and FCT figures are measurements printed by the run (testbed
README, "Workload switch"), not asserted.  About 4 minutes; root."""

import pytest

from pandaovs.policy import Policy


@pytest.fixture(scope="module")
def switched(testbed_run, tmp_path_factory):
    res, result, _ = testbed_run(
        tmp_path_factory.mktemp("switch"), "switch", "--quick",
        "--phase", "20", "--settle", "15", "--after", "40",
        "--auto-tune-min-flows", "20", "--goodput-check", "0",
        script="workload_switch.py")
    assert res.returncode == 0, res.stderr[-2000:]
    return result


def test_both_variants_ran(switched):
    sw = switched["switch"]
    assert sw["from"]["name"] == "web-search"
    assert sw["to"]["name"] == "data-mining" and len(sw["to"]["sha256"]) == 64
    for v in ("static", "autotune"):
        r = sw["variants"][v]
        assert r["status"] == "ok", r["status"]
        for name in ("before", "during", "after"):
            assert r["windows"][name]["requests"] > 0, (v, name)
        assert r["windows"]["before"]["flows"] > 0
        assert r["windows"]["after"]["flows"] > 0


def test_static_keeps_autotune_adapts(switched):
    sw = switched["switch"]
    static, auto = sw["variants"]["static"], sw["variants"]["autotune"]
    assert not [d for d in static["decisions"] if d["action"] == "push"]
    assert static["policy_end"] == static["policy_start"]
    after = [d for d in auto["decisions"]
             if d["action"] == "push" and d["t"] >= auto["t_switch"]]
    assert after, auto["decisions"]
    start = Policy.from_text(auto["policy_start"])
    for d in after:
        assert d["flow_sizes"].startswith("live ")
        assert d["flows"] >= 20 and d["flt_packets"] > 0
        p = Policy.from_text(d["proposed"])
        assert p.id == start.id and p.dscp == start.dscp
        if start.floor < 0:
            excursion = start.thresholds[0] - start.floor
            assert p.floor == min(0, p.thresholds[0] - excursion)
    assert auto["adaptation"]["first_push_s"] is not None
    assert Policy.from_text(auto["policy_end"]).text() == after[-1]["proposed"]

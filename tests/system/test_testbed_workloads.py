"""The testbed on the data-mining workload with background iperf3 streams,
end to end and kept short: testbed/run.py --quick --workload
data-mining --schemes panda --iperf3-streams 2 (panda-sched, the default
egress; collection on a dedicated fifo trial, the floor, one panda trial,
the goodput cross-check: about two minutes).  Checked:

* the workload went through collection, model and the trial: the run
  records it (name, path, the sha256 of the shipped file, the copy every
  program read), the policy says it was modelled on it, and the flows'
  sizes came from it (data-mining's one-packet flows);
* the model made room for the memcached counter's excursions: the CDF
  alone puts alpha_1 at 1460 bytes, below them, and the policy got a
  counter floor (credit) that keeps 99% of the collected packets at
  level 0, the thresholds staying the CDF's;
* with that policy panda keeps >= 95% of the memcached connection's
  packets at level 0 (the workloads' target), seen on the wire;
* the background iperf3 streams ran through the trial, and the goodput
  cross-check compared the generator with iperf3 on the same path.

Needs root, a build tree ($PANDA_BUILD_DIR, default <repo>/_build) and
iperf3 (skipped with the reason otherwise: conftest.py's testbed_run)."""

import hashlib
import os
import shutil

import pytest

from pandaovs import paths


@pytest.fixture(scope="module")
def mining(testbed_run, tmp_path_factory):
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed (./install-deps.sh)")
    return testbed_run(tmp_path_factory.mktemp("testbed"), "mining",
                       "--quick", "--workload", "data-mining", "--schemes",
                       "panda", "--iperf3-streams", "2")


def panda_trial(result):
    ts = [t for t in result["trials"] if t["scheme"] == "panda"]
    assert len(ts) == 1, result["trials"]
    return ts[0]


def test_workload_carried_and_recorded(mining):
    res, result, rundir = mining
    assert res.returncode == 0, res.stderr[-2000:]
    with open(paths.cdf("data-mining.cdf"), "rb") as f:
        data = f.read()
    wl = result["metadata"]["workload"]
    assert wl["name"] == "data-mining" and wl["shipped"]
    assert wl["sha256"] == hashlib.sha256(data).hexdigest()
    with open(os.path.join(rundir, wl["copy"]), "rb") as f:
        assert f.read() == data
    assert result["policy"]["workload"]["sha256"] == wl["sha256"]
    # The model and the flows read the copy.
    copy = os.path.join(rundir, "workload.cdf")
    for kind in ("panda", "pias"):
        assert "--cdf %s " % copy in result["policy"][kind]["command"]
    t = panda_trial(result)
    assert t["status"] == "ok", t["status"]
    assert t["overlap"]["ok"], t["overlap"]
    # Half of data-mining's flows are one 1460-byte packet: most flows of
    # the trial are small (web-search's smallest is 8760 bytes, and only
    # 53% of its flows are below 100 KB).
    fct = t["fct"]
    assert fct["small"]["completed"] > 0.8 * fct["all"]["completed"], fct


def test_model_makes_room_for_memcached_excursions(mining):
    _, result, _ = mining
    panda = result["policy"]["panda"]["model"]
    b = panda["model"]["alpha"]["flt_bound"]
    assert b["flt_level0"] == 0.99 and b["bound"] == "floor"
    assert b["packets"] > 1000
    # The CDF alone puts alpha_1 at 1460 bytes (PIAS's, from the same
    # CDF), below the memcached counter's excursions: the thresholds stay,
    # the counter gets the credit that keeps 99% of the collected packets
    # at level 0.
    pias = result["policy"]["pias"]["model"]["thresholds"]
    assert pias[0] == 1460 and panda["thresholds"] == pias
    assert b["counter_quantile"] > 1460 and b["active"]
    assert b["floor"] == -(b["counter_quantile"] - 1460)
    assert "floor=%d" % b["floor"] in result["policy"]["panda"]["action"]
    assert b["flt_level0_share"] >= 0.98 > b["flt_level0_share_free"]


def test_panda_keeps_memcached_at_level0(mining):
    _, result, _ = mining
    t = panda_trial(result)
    lv = {int(k): v for k, v in t["memcached_levels"].items()}
    n = sum(lv.values())
    assert n > 10000, lv                # 10000 responses, and more packets
    assert t["memcached_level0_share"] == lv.get(0, 0) / n
    assert t["memcached_level0_share"] >= 0.95, lv
    target = {x["id"]: x for x in result["summary"]["targets"]}
    # One repetition decides the 95% bound only when the packets off
    # level 0 are a third of the 5% it allows or less (stats.py).
    off = 1 - t["memcached_level0_share"]
    assert target["panda_mc_level0"]["verdict"] == (
        "met" if off <= 0.05 / 3 else "undecided"), target


def test_iperf3_background_and_cross_check(mining):
    _, result, _ = mining
    bg = panda_trial(result)["iperf3_background"]
    assert bg["requested_streams"] == 2 and bg["streams"] == 2
    assert bg["interrupted"] and bg["bytes"] > 0 and "error" not in bg
    assert result["metadata"]["iperf3_background_streams"] == 2
    g = result["goodput_check"]
    assert g["status"] == "ok", g
    assert g["workload"] == "data-mining" and g["streams"] == 14
    link = g["link_goodput_mbps"]
    for who in ("load_generator", "iperf3"):
        assert 0 < g[who]["goodput_mbps"] <= 1.05 * link, g

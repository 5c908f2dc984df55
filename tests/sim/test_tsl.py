"""TCP SkyLine in ns-3 (sim/TSL.md): the quick incast check (sim/run.py
tsl-quick) - 64 senders of 256 KB through one 128 KB switch port at 10
Gbit/s (base RTT 8 us, RTO_min 200 ms) - and tsl-sim's refusals.

ns-3 is deterministic: what is asserted are properties of the code (who
collapses, whether an RTO happened, which packets a queue dropped), not
of the machine's speed.  About 20 s on 2 idle cores.
"""

import dataclasses
import hashlib
import json
import os
import subprocess
import sys

import pytest

from pandaovs import paths
from pandalab.sim import incast


@pytest.fixture(scope="module")
def tsl_sim(build, panda_sim):
    path = build.path("sim/tsl-sim")
    if not os.access(path, os.X_OK):
        pytest.fail("%s missing though the simulator is built" % path)
    out = subprocess.run([panda_sim, "--features"], capture_output=True,
                         text=True, check=True).stdout
    if "scheduler=yes" not in out:
        pytest.skip("TSL's label-aware WRED needs the lib/panda scheduler "
                    "core, absent from this build")
    return path


@pytest.fixture(scope="module")
def quick(build, tsl_sim, tmp_path_factory):
    out = tmp_path_factory.mktemp("tsl")
    res = subprocess.run(
        [paths.PY, os.path.join(paths.TOP, "sim", "run.py"), "tsl-quick",
         "--out", str(out), "--run-id", "q", "--build-dir", build.root],
        capture_output=True, text=True, timeout=1800)
    sys.stdout.write(res.stdout[-3000:])
    path = out / "q" / "result.json"
    assert path.exists(), "no result.json: %s" % res.stderr[-2000:]
    with open(path) as f:
        doc = json.load(f)
    by = {(r["label"], r["point"]["workers"], r["point"]["rounds"]): r
          for r in doc["points"]}
    return res, doc, by, out / "q"


def test_every_point_ran(quick):
    res, doc, by, d = quick
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert not doc["errors"]
    assert len(doc["points"]) == len(by) == 5
    for r in doc["points"]:
        m = r["metadata"]
        assert m["git_commit"] and m["ns3_version"] and m["command"]
        assert r["run"]["topology"]["hosts"] == r["point"]["workers"] + 1
    assert (d / "result.csv").exists()
    assert (d / "incast-goodput.png").exists()


def test_tsl_holds_the_link_without_timeouts(quick):
    r = quick[2][("tsl", 64, 1)]
    assert r["complete_rounds"] == 1
    assert r["link_fraction"] >= 0.8, r["goodput_gbps"]
    assert r["rto"] == 0
    tcp = r["run"]["tcp"]
    # Losses happened and were repaired by signal ACKs, not by timeouts.
    assert tcp["sa_recovery"] > 0 and tcp["sp_sent"] > 0
    assert r["run"]["labelled_packets_sent"] > 0


def test_wred_drops_only_unlabelled_packets(quick):
    r = quick[2][("tsl", 64, 1)]
    cfg = r["run"]["config"]["sched_config"]
    buf = r["point"]["buffer"]
    # Labels (DSCP 32-47) keep the whole buffer; the rest stop at 0.7.
    assert "32-47:%d:%d:" % (round(0.1 * buf), buf) in cfg
    assert "0-31:%d:%d:" % (round(0.1 * buf), round(0.7 * buf)) in cfg
    port = r["run"]["queues"]["leaf-down"]
    assert port["drop_reasons"].get("WRED", 0) > 0
    assert port["drop_reasons"].get("Port buffer full", 0) == 0


def test_tcp_collapses_and_signal_packets_matter(quick):
    by = quick[2]
    for label in ("newreno", "dctcp", "tsl-signal"):
        r = by[(label, 64, 1)]
        assert r["rto"] >= 1, label
        assert r["link_fraction"] < 0.2, (label, r["goodput_gbps"])


def test_window_alignment_each_round(quick):
    r = quick[2][("tsl", 16, 4)]
    assert r["complete_rounds"] == 4 and r["rto"] == 0
    assert r["link_fraction"] >= 0.8
    # One TSA per worker per round, and the sender aligns on each - but
    # the run ends with the last byte, when the last round's TSAs of the
    # workers that finished last are still on their way.
    assert r["run"]["receiver"]["tsa_sent"] == 16 * 4
    assert 16 * 3 < r["run"]["tcp"]["alignments"] < 16 * 4
    assert r["run"]["tcp"]["tsp_sent"] >= 16 * 4


@pytest.mark.parametrize("args,msg", [
    (["--scheme=reno"], "--scheme: 'reno'"),
    (["--scheme=dctcp", "--cawa=0"], "TSL's"),
    (["--min-th=0.8"], "--min-th"),
    (["--workers=0"], "--workers"),
])
def test_bad_configuration_is_refused(tsl_sim, tmp_path, args, msg):
    res = subprocess.run([tsl_sim, "--out=%s" % tmp_path] + args,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert msg in res.stderr


def _r(label, n, frac, rto=0):
    p = incast.TslPoint(workers=n)
    return {"label": label, "point": dict(p.__dict__),
            "link_fraction": frac, "goodput_gbps": frac * 10, "rto": rto,
            "rto_max_per_worker": min(rto, 1)}


def test_summary_largest_n_and_ordering():
    rs = [_r("tsl", 16, 0.95), _r("tsl", 64, 0.9), _r("tsl", 128, 0.1, 5),
          _r("dctcp", 16, 0.9), _r("dctcp", 64, 0.3, 2),
          _r("dctcp", 128, 0.85),
          _r("newreno", 16, 0.1, 3), _r("newreno", 64, 0.1, 9)]
    s = incast.summarize(rs)
    rows = {r["scheme"]: r for r in s["rows"]}
    assert rows["tsl"]["n_max_80pct"] == 64
    # A curve that recovers after a dip keeps its first collapse.
    assert rows["dctcp"]["n_max_80pct"] == 16
    assert rows["dctcp"]["n_any_80pct"] == 128
    assert rows["newreno"]["n_max_80pct"] is None
    assert rows["newreno"]["first_n_with_rto"] == 16
    (o,) = s["ordering"]
    assert o["paper_ordering_holds"] is True


def test_hetero_networks_and_stable_names():
    """§5.6's networks (Figs 13c/13d) are points of their own: the rate
    and the 25 us links reach tsl-sim, their curves are apart from the
    8 us ones and get the paper's ordering; points of the earlier kinds
    keep their names (the new fields count in the digest only when set)."""
    pts = incast.experiment("hetero", grid=(16,))
    assert len(pts) == 2 * 6
    for p in pts:
        rate = "1Gbps" if p.tag == "1g-rtt100us" else "10Gbps"
        assert "--edge-rate=" + rate in p.args()
        assert "--link-delay-us=25" in p.args()
    old = incast.TslPoint(workers=16)
    before = {k: v for k, v in dataclasses.asdict(old).items()
              if k not in ("edge_rate", "link_delay_us")}
    assert old.name().endswith("-" + hashlib.sha1(json.dumps(
        before, sort_keys=True).encode()).hexdigest()[:6])
    assert incast.TslPoint(workers=16).name() != \
        incast.TslPoint(workers=16, edge_rate="1Gbps").name()

    def r(label, n, frac, tag):
        d = _r(label, n, frac)
        d["point"].update(tag=tag, edge_rate="1Gbps", link_delay_us=25.0)
        return d
    g = "1g-rtt100us"
    rs = [r("tsl", 16, 0.95, g), r("tsl", 64, 0.9, g),
          r("dctcp", 16, 0.9, g), r("dctcp", 64, 0.3, g),
          r("newreno", 16, 0.1, g),
          _r("tsl", 16, 0.95), _r("dctcp", 16, 0.95), _r("newreno", 16, 0.9)]
    s = incast.summarize(rs)
    by_tag = {o["tag"]: o for o in s["ordering"]}
    assert by_tag["1g-rtt100us"]["paper_ordering_holds"] is True
    assert by_tag[""]["paper_ordering_holds"] is False


def test_parts_of_figures_3_4_and_9():
    """Fig 3 (rounds 2, 8, 16 for NewReno and DCTCP at 128 KB), Fig 4
    (DCTCP's initial window 1, 2, 4, 10 at 128 KB / 256 KB) and Fig 9
    (TSL's minTh 0.05 .. 0.5 on the four buffer/SRU settings) reach
    tsl-sim as options, and every part is one the command line names."""
    pts = incast.experiment("rounds-sweep", grid=(16,))
    assert sorted((p.scheme, p.rounds) for p in pts) == [
        ("dctcp", 2), ("dctcp", 8), ("dctcp", 16),
        ("newreno", 2), ("newreno", 8), ("newreno", 16)]
    assert all(p.buffer == 128 * incast.KB and "--rounds=%d" % p.rounds
               in p.args() for p in pts)
    pts = incast.experiment("icws", grid=(16,))
    assert [p.init_cwnd for p in pts] == [1, 2, 4, 10]
    assert all(p.scheme == "dctcp" and "--init-cwnd=%d" % p.init_cwnd
               in p.args() for p in pts)
    pts = incast.experiment("minth", grid=(16,))
    assert len(pts) == 4 * 5
    assert {p.min_th for p in pts} == {0.05, 0.1, 0.2, 0.3, 0.5}
    assert all("--min-th=%g" % p.min_th in p.args() for p in pts)
    assert len({p.name() for p in pts}) == len(pts)
    assert set(incast.PARTS) == set(incast.PART_SETTINGS) | {"fairness"}

"""The simulator beyond the quick check: a small leaf-spine (flow-hash
ECMP), incast queries, and panda-sim's refusal of bad input.  Each run
takes seconds; skipped without the simulator (the panda_sim fixture of
the root conftest.py gives configure's reason).
"""

import json
import os
import subprocess

import pytest

from pandaovs import paths

CDF = paths.cdf("web-search.cdf")
VALUES = paths.cdf("memcached-values.cdf")
RUN_PY = os.path.join(paths.TOP, "sim", "run.py")


def point(build, tmp_path, *args):
    """Runs one point through sim/run.py; returns its point.json."""
    res = subprocess.run(
        [paths.PY, RUN_PY, "point", "--out", str(tmp_path), "--run-id", "p",
         "--build-dir", build.root, "--no-plots"] + list(args),
        capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    with open(tmp_path / "p" / "result.json") as f:
        doc = json.load(f)
    assert doc["errors"] == {} and len(doc["points"]) == 1
    return doc["points"][0]


def test_leafspine_ecmp_keeps_each_flow_on_one_path(build, panda_sim,
                                                    tmp_path):
    """2 leaves x 4 hosts, 4 spines, DCTCP with ECN marking at load 0.3.
    Every uplink carries traffic, but unevenly - a leaf's uplinks share
    flows, not packets (per-packet spraying of ~10^4 packets would put
    each within a few percent of the mean) - and no TCP flow ever
    entered fast recovery or timed out: nothing was reordered or lost."""
    r = point(build, tmp_path, "--topology", "leafspine", "--leaves", "2",
              "--hosts-per-leaf", "4", "--spines", "4", "--scheme",
              "fifo-ecn", "--cc", "dctcp", "--load", "0.3", "--flows", "60",
              "--rpc-pairs", "0")
    assert r["fct"]["all"]["completed"] == 60
    run = r["run"]
    assert run["topology"]["hosts"] == 8 and run["topology"]["ports"] == 32
    ups = run["queues"]["leaf-up"]["enqueued_per_port"]
    assert len(ups) == 8 and all(n > 0 for n in ups), ups
    for leaf in (ups[:4], ups[4:]):
        assert max(leaf) > 2 * min(leaf), leaf
    assert run["tcp"]["rto"] == 0 and run["tcp"]["fast_recovery"] == 0, \
        run["tcp"]
    assert sum(q["dropped_packets"] for q in run["queues"].values()) == 0
    # Across racks the ideal FCT crosses four links, so the base RTT is
    # 8 link delays plus serialisation.
    assert 80000 <= run["topology"]["base_rtt_ns"] < 90000


def test_incast_queries_complete(build, panda_sim, tmp_path):
    """Five incast queries of six 20 KB responses each: every response
    arrives and each query's completion time is at least the time to
    deliver its 120 KB on the aggregator's 10 Gbit/s link."""
    r = point(build, tmp_path, "--topology", "leafspine", "--leaves", "2",
              "--hosts-per-leaf", "4", "--spines", "2", "--scheme",
              "fifo-ecn", "--cc", "dctcp", "--flows", "0", "--rpc-pairs",
              "0", "--incast-rate", "200", "--incast-queries", "5",
              "--incast-fanin", "6", "--incast-bytes", "20000")
    inc = r["incast"]
    assert inc["queries"] == 5 and inc["completed"] == 5, inc
    assert inc["qct_p50_ms"] >= 6 * 20000 * 8 / 10e9 * 1e3, inc
    assert r["fct"]["all"]["flows"] == 0  # incast flows are not background


def test_allocator_changes_no_result(build, panda_sim, tmp_path):
    """sim/run.py preloads tcmalloc for speed; the simulation must not
    notice: the same point with glibc's malloc gives the same records,
    byte for byte."""
    from pandalab.sim import points
    if points.malloc_choice("auto") != "tcmalloc":
        pytest.skip("tcmalloc not installed (libtcmalloc-minimal4)")
    args = ["--topology", "leafspine", "--leaves", "2", "--hosts-per-leaf",
            "2", "--spines", "2", "--scheme", "oracle", "--cc", "dctcp",
            "--load", "0.6", "--flows", "12", "--rpc-pairs", "1"]
    flows = {}
    for m in ("libc", "tcmalloc"):
        r = point(build, tmp_path / m, "--malloc", m, *args)
        assert r["metadata"]["malloc"] == m
        assert r["fct"]["all"]["completed"] == 12
        with open(tmp_path / m / "p" / "points" / r["name"] / "flows.csv") \
                as f:
            flows[m] = f.read()
    assert flows["libc"] == flows["tcmalloc"]


def test_push_out_protects_the_top_levels(panda_sim, tmp_path):
    """PIAS on the dumbbell without ECN and with a 30-packet buffer:
    starved lower levels fill it.  With push-out (the scheduler core's
    default, as in the datapath) levels 0 and 1 lose nothing, the lower
    levels' held packets go instead, and ns-3 counts each as dropped
    after dequeue; with push-out=false (drop-tail) levels 0 and 1 lose
    packets and nothing is pushed out."""
    base = [panda_sim, "--scheme=pias",
            "--policy=id=2,kind=pias,thresholds=20000/100000/1000000",
            "--cdf=" + CDF, "--rpc-cdf=" + VALUES, "--flows=40",
            "--load=0.8", "--ecn-pkts=0", "--buffer-pkts=30"]
    runs = {}
    for name, extra in (("on", []), ("off", ["--sched-extra=push-out=false"])):
        out = tmp_path / name
        res = subprocess.run(base + extra + ["--out=%s" % out],
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-2000:]
        with open(out / "run.json") as f:
            runs[name] = json.load(f)
        assert runs[name]["run"]["flows_done"] == 40
    on, off = (runs[k]["sched"]["levels"] for k in ("on", "off"))
    pushed = sum(lv["drop_push_out"] for lv in on)
    assert pushed > 0, on
    assert all(lv["drop_limit"] == 0 and lv["drop_push_out"] == 0
               for lv in on[:2]), on
    q = runs["on"]["queues"]["host-up"]
    assert q["drop_reasons"]["Pushed out for a higher level"] == pushed, q
    assert q["dropped_packets"] == pushed + sum(lv["drop_limit"]
                                                for lv in on), q
    assert sum(lv["drop_push_out"] for lv in off) == 0, off
    assert on[0]["drop_limit"] == 0 < off[0]["drop_limit"], (on, off)


BAD = [
    (["--load=1.5"], "--load: in (0, 1)"),
    (["--scheme=bogus"], "--scheme: unknown 'bogus'"),
    (["--topology=ring"], "--topology: 'ring'"),
    (["--cc=reno"], "--cc: 'reno'"),
    (["--edge-rate=fast"], "--edge-rate: 'fast' is not a rate"),
    (["--cdf=/nonexistent.cdf"], "--cdf: cannot read '/nonexistent.cdf'"),
    (["--scheme=oracle", "--delack-ms=300"], "--delack-ms: positive and below"),
    (["--scheme=panda"], "--scheme=panda needs --policy"),
    (["--scheme=oracle", "--ecn-pkts=2000"], "--ecn-pkts: 0 (off) or below"),
    (["--dctcp-alpha-init=0"], "--dctcp-alpha-init needs --cc=dctcp"),
    (["--cc=dctcp", "--dctcp-alpha-init=1.5"], "--dctcp-alpha-init: 0 .. 1"),
    (["--topology=leafspine", "--leaves=2", "--hosts-per-leaf=2",
      "--incast-rate=10", "--incast-fanin=9", "--incast-bytes=100"],
     "--incast-fanin: 1 .. hosts - 1 (3)"),
]


@pytest.mark.parametrize("args,message", BAD)
def test_bad_input_is_refused_naming_the_option(panda_sim, tmp_path, args,
                                                message):
    base = ["--cdf=" + CDF, "--rpc-cdf=" + VALUES, "--flows=5", "--load=0.5",
            "--out=" + str(tmp_path / "o")]
    res = subprocess.run([panda_sim] + base + args, capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert message in res.stderr, res.stderr
    assert not (tmp_path / "o" / "run.json").exists()


def test_bad_policy_text_gets_lib_panda_message(panda_sim, tmp_path):
    res = subprocess.run(
        [panda_sim, "--cdf=" + CDF, "--rpc-cdf=" + VALUES, "--flows=5",
         "--load=0.5", "--out=" + str(tmp_path), "--scheme=pias",
         "--policy=id=2,kind=pias,thresholds=300/100"],
        capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "--policy: thresholds" in res.stderr and "ascending" in \
        res.stderr, res.stderr


def test_policy_kind_must_match_scheme(panda_sim, tmp_path):
    res = subprocess.run(
        [panda_sim, "--cdf=" + CDF, "--rpc-cdf=" + VALUES, "--flows=5",
         "--load=0.5", "--out=" + str(tmp_path), "--scheme=pias",
         "--policy=id=1,threshold=1448,thresholds=21415"],
        capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "--scheme=pias needs a pias policy, --policy is a panda one" in \
        res.stderr, res.stderr

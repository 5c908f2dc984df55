"""The simulator's quick check (sim/run.py quick): one dumbbell point per
scheme - the thesis's two hosts at 1 Gbit/s, 40 web-search flows at load
0.8 and one memcached-like persistent connection - through ns-3 with
lib/panda's marking and scheduler core.

ns-3 is deterministic (same seed, same code: same numbers on any
machine), so the orderings asserted here are properties of the code, not
of the machine's speed; the margins are those of the measured values
(sim/README.md has the table).  Takes 1-2 minutes on 2 cores.

Skipped when the build has no simulator (ns-3 not found at configure
time: the panda_sim fixture of the root conftest.py says why).  Without the lib/panda scheduler core in
the build, the scheduler-based schemes (pias, fish, panda, panda-pf) are
skipped with that reason and the rest is still checked.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from pandaovs import paths

SCHED_SCHEMES = ("pias", "fish", "panda", "panda-pf")
ALL_SCHEMES = ("fifo", "fifo-ecn", "pias", "fish", "panda", "panda-pf",
               "oracle")


def features(panda_sim):
    out = subprocess.run([panda_sim, "--features"], capture_output=True,
                         text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.split())


@pytest.fixture(scope="module")
def quick(build, panda_sim, tmp_path_factory):
    have_sched = features(panda_sim).get("scheduler") == "yes"
    schemes = [s for s in ALL_SCHEMES
               if have_sched or s not in SCHED_SCHEMES]
    out = tmp_path_factory.mktemp("sim")
    res = subprocess.run(
        [paths.PY, os.path.join(paths.TOP, "sim", "run.py"), "quick",
         "--out", str(out), "--run-id", "q", "--build-dir", build.root,
         "--schemes", ",".join(schemes)],
        capture_output=True, text=True, timeout=1800)
    sys.stdout.write(res.stdout[-3000:])
    path = out / "q" / "result.json"
    assert path.exists(), "no result.json: %s" % res.stderr[-2000:]
    with open(path) as f:
        doc = json.load(f)
    by = {r["point"]["scheme"]: r for r in doc["points"]}
    return res, doc, by, have_sched, out / "q"


def need_sched(q):
    if not q[3]:
        pytest.skip("the lib/panda scheduler core is not in this build "
                    "(lib/panda/scheduler.c absent at configure time)")


def test_every_point_ran_and_every_flow_completed(quick):
    res, doc, by, have_sched, _ = quick
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert doc["errors"] == {}
    expected = [s for s in ALL_SCHEMES if have_sched or s not in SCHED_SCHEMES]
    assert sorted(by) == sorted(expected)
    for s, r in by.items():
        f = r["fct"]
        assert f["all"]["flows"] == r["point"]["flows"] == 40, s
        assert f["all"]["completed"] == 40 and f["all"]["unfinished"] == 0, s
        assert sum(f[b]["flows"] for b in ("small", "medium", "large")) == 40
        assert r["run"]["run"]["stopped_by"] == "all flows done", s
        rpc = r["rpc"]
        assert rpc["requests"] > 500, (s, rpc)
        assert rpc["unfinished"] <= 1, (s, rpc)


def test_point_json_schema(quick, panda_sim):
    by = quick[2]
    hexsha = re.compile(r"^[0-9a-f]{40}$")
    for s, r in by.items():
        p = r["point"]
        assert (p["topology"], p["scheme"], p["cc"], p["load"], p["seed"]) \
            == ("dumbbell", s, "cubic", 0.8, 1)
        for b in ("small", "medium", "large", "all"):
            for k in ("flows", "completed", "mean_ms", "p50_ms", "p99_ms",
                      "slowdown_mean", "slowdown_p99"):
                assert k in r["fct"][b], (s, b, k)
        for k in ("p50_ms", "p99_ms", "p999_ms", "requests"):
            assert isinstance(r["rpc"][k], (int, float)), (s, k)
        md = r["metadata"]
        assert md["ns3_version"] == features(panda_sim)["ns3"]
        assert hexsha.match(md["git_commit"] or ""), md["git_commit"]
        assert md["seed"] == 1 and md["wall_s"] > 0 and md["peak_rss_kb"] > 0
        # The child's own CPU time (os.wait4), not the sweep's.
        assert 0 < md["cpu_user_s"] + md["cpu_sys_s"] < 30 * md[
            "process_wall_s"], md
        assert md["malloc"] in ("tcmalloc", "libc")
        # Slowdown is FCT over the FCT alone in the network: never below 1.
        assert r["fct"]["all"]["slowdown_p50"] >= 1.0


def test_run_metadata(quick, panda_sim):
    """result.json and metadata.json say what the run was made with."""
    doc, outdir = quick[1], str(quick[4])
    with open(os.path.join(outdir, "metadata.json")) as f:
        meta = json.load(f)
    assert meta == doc["metadata"]
    assert meta["points"] == len(doc["points"])
    assert meta["ns3_version"] == [features(panda_sim)["ns3"]]
    assert meta["seeds"] == [1] and len(meta["git_commit"]) == 1
    assert meta["command"].startswith("sim/run.py quick")
    cpu = sum(r["metadata"]["cpu_user_s"] + r["metadata"]["cpu_sys_s"]
              for r in doc["points"])
    assert abs(meta["cpu_s_total"] - cpu) < 1e-6


def test_result_csv_and_figure(quick):
    by, outdir = quick[2], str(quick[4])
    with open(os.path.join(outdir, "result.csv")) as f:
        rows = f.read().splitlines()
    assert rows[0].startswith("name,topology,hosts,workload,scheme,cc,load")
    assert len(rows) == 1 + len(by)
    assert os.path.getsize(os.path.join(outdir, "quick-schemes.png")) > 10000


def test_priorities_cut_small_flow_fct(quick):
    """Every scheme that knows (or approximates) flow size finishes small
    flows far sooner than one FIFO (18 ms -> below 1 ms at seed 1; at
    least 3x over seeds 1-3)."""
    by = quick[2]
    fifo = by["fifo"]["fct"]["small"]["mean_ms"]
    for s in by:
        if s in ("fifo", "fifo-ecn"):
            continue
        assert by[s]["fct"]["small"]["mean_ms"] < fifo / 2, s


def test_oracle_is_the_bound(quick):
    """Clairvoyant SRPT serves medium flows best and the memcached
    connection at least as well as anything else."""
    by = quick[2]
    o = by["oracle"]
    for s in by:
        if s == "oracle":
            continue
        assert o["fct"]["medium"]["mean_ms"] < by[s]["fct"]["medium"]["mean_ms"], s
        assert o["rpc"]["p99_ms"] <= by[s]["rpc"]["p99_ms"], s


def test_memcached_p99_panda_below_pias_below_fifo(quick):
    """The thesis's claim on the memcached connection: Panda keeps it at
    the top level (its responses are small packets), PIAS demotes it by
    bytes sent, FIFO queues it behind everything."""
    need_sched(quick)
    by = quick[2]
    p99 = {s: by[s]["rpc"]["p99_ms"] for s in by}
    assert p99["panda"] < p99["pias"] < p99["fifo"], p99
    # 34x at seed 1, at least 5x over seeds 1-3.
    assert p99["panda"] < p99["fifo"] / 3, p99


def test_connection_levels_under_panda_and_pias(quick):
    """The memcached connection's counter at the end (the simulator's
    panda/show): level 0 under Panda, demoted under PIAS (bytes sent far
    above the first threshold)."""
    need_sched(quick)
    by = quick[2]
    panda = by["panda"]["run"]["marking"]["rpc_connections"][0]
    pias = by["pias"]["run"]["marking"]["rpc_connections"][0]
    assert panda["level"] == 0, panda
    assert pias["level"] >= 3, pias
    assert pias["counter"] > 100 * max(1, panda["counter"]), (pias, panda)


def test_marks_and_scheduler_counters(quick):
    """RED marked under fifo-ecn; under the scheduler schemes the core
    was handed every packet ns-3 counted, sent no more than that, and its
    port-ECN marks are the marks ns-3 counted."""
    by, have_sched = quick[2], quick[3]
    red = by["fifo-ecn"]["run"]["queues"]["host-up"]
    assert red["marked_packets"] > 0, red
    if not have_sched:
        return
    for s in SCHED_SCHEMES:
        run = by[s]["run"]
        levels = run["sched"]["levels"]
        assert len(levels) == 8
        q = run["queues"]
        enq = sum(v["enqueued_packets"] for v in q.values())
        core_enq = sum(lv["enqueued_packets"] for lv in levels)
        sent = sum(lv["sent_packets"] for lv in levels)
        assert core_enq == enq and 0 < sent <= enq, (s, core_enq, sent, enq)
        assert sum(lv["mark_ecn"] for lv in levels) == \
            sum(v["marked_packets"] for v in q.values()), s


def test_collection_keeps_the_flt_order(quick, build):
    """The collection writes the FLT's segments in sending order too
    (flt.pcap, headers only), so that panda-model replays the memcached
    counter's excursions as it does over the testbed's capture: the same
    packets as the histogram, and a bound from them."""
    doc, out = quick[1], quick[4]
    fifo = next(r for r in doc["points"] if r["point"]["scheme"] == "fifo")
    d = out / "points" / fifo["name"]
    with open(d / "flt.hist") as f:
        total = sum(int(line.split()[1]) for line in f
                    if not line.startswith("#"))
    res = subprocess.run(
        [os.path.join(build.root, "tools", "panda-model"),
         "--flt", str(d / "flt.pcap"), "--fht", str(d / "fht.hist"),
         "--cdf", paths.cdf("web-search.cdf"), "--load", "0.8",
         "--mss", "1448", "--header-len", "52", "--json"],
        capture_output=True, text=True, check=True)
    model = json.loads(res.stdout)["model"]
    assert model["inputs"]["flt"]["packets"] == total > 100
    assert model["alpha"]["flt_bound"]["packets"] == total

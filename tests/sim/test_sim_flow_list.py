"""panda-sim's fixed workload (--flow-list): the listed flows start at
their listed times, between their listed hosts, with their listed sizes,
and complete; a bad list is refused before anything runs, naming the file,
the line and the problem.  And sim/run.py fish-fig2 (FISH §2 Fig. 2) end
to end on one interval.  Seconds in all; skipped without the simulator
(the panda_sim fixture of the root conftest.py gives configure's reason).
"""

import csv
import json
import os
import subprocess

import pytest

from pandaovs import paths

CDF = paths.cdf("web-search.cdf")
RUN_PY = os.path.join(paths.TOP, "sim", "run.py")
T0_NS = 1000   # The workload starts 1 us into the run (workload.cc).


def run(panda_sim, tmp_path, text, *args):
    lst = tmp_path / "flows.txt"
    lst.write_text(text)
    out = tmp_path / "o"
    res = subprocess.run([panda_sim, "--flow-list=%s" % lst,
                          "--out=%s" % out] + list(args),
                         capture_output=True, text=True, timeout=120)
    return res, out, str(lst)


def test_flows_start_when_listed_and_complete(panda_sim, tmp_path):
    """Five flows at 10 Gbit/s, two of them at the same instant, one the
    other way (host 1 to host 0), one of a single byte, one without hosts
    (the dumbbell's 0 -> 1): flows.csv has them in the list's order, each
    started at T0 + its start (to the ns) with its size and hosts, and
    each completed no faster than alone in the network."""
    listed = [(0, 50000, 0, 1), (50, 1000000, 0, 1), (50, 3000, 1, 0),
              (120.5, 1, 0, 1), (2000, 200000, 0, 1)]
    text = ("# START_US SIZE [SRC DST]\n\n"
            "0 50000 0 1   # a comment after a flow\n"
            "50\t1000000 0 1\n"
            "  50 3000 1 0\n"
            "120.5 1\n"
            "2000 200000 0 1\n")
    res, out, lst = run(panda_sim, tmp_path, text, "--edge-rate=10Gbps",
                        "--cc=dctcp", "--rpc-pairs=0", "--scheme=fifo-ecn")
    assert res.returncode == 0, res.stderr[-2000:]
    with open(out / "flows.csv", newline="") as f:
        flows = list(csv.DictReader(f))
    assert [(int(f["id"]), f["kind"]) for f in flows] == \
        [(i, "background") for i in range(len(listed))]
    for f, (us, size, src, dst) in zip(flows, listed):
        assert int(f["start_ns"]) == T0_NS + round(us * 1000), f
        assert (int(f["size"]), int(f["src"]), int(f["dst"])) == \
            (size, src, dst), f
        fct = int(f["finish_ns"]) - int(f["start_ns"])
        assert fct >= int(f["ideal_ns"]) > 0, f
    with open(out / "run.json") as f:
        run_doc = json.load(f)
    assert run_doc["config"]["flow_list"] == lst
    assert run_doc["config"]["flows"] == len(listed)
    assert run_doc["run"]["flows_done"] == len(listed)
    assert run_doc["run"]["stopped_by"] == "all flows done"
    wl = run_doc["workload"]
    assert wl["mean_flow_bytes"] == pytest.approx(
        sum(x[1] for x in listed) / len(listed))
    # The load window is the list's: the first start to the last.
    assert wl["load_start_ns"] == T0_NS
    assert wl["load_end_ns"] == T0_NS + 2000 * 1000


GOOD = "0 1000\n"
BAD = [
    # (list text, extra options, the message after "--flow-list: FILE")
    ("0 1000\nsoon 1000\n", [], ":2: start 'soon' is not a time in us"),
    ("-5 1000\n", [], ":1: start '-5' is not a time in us"),
    ("1e3 1000\n", [], ":1: start '1e3' is not a time in us"),
    ("0 0\n", [], ":1: size 0 is out of range (1 .. 10^12 bytes)"),
    ("0 5.5\n", [], ":1: size '5.5' is not a number of bytes"),
    ("0 50KB\n", [], ":1: size '50KB' is not a number of bytes"),
    ("# header\n0 1000 1\n", [],
     ":2: 3 fields; expected START_US SIZE [SRC DST]"),
    ("0 1000 0 0\n", [], ":1: source and destination are the same host"),
    ("0 1000 0 2\n", [], ":1: destination '2' is not a host (0 .. 1)"),
    ("0 1000 x 1\n", [], ":1: source 'x' is not a host (0 .. 1)"),
    ("10 1000\n20 1000\n5 1000\n", [],
     ":3: start 5 us is before line 2's; list the flows in start order"),
    ("# only a comment\n\n", [],
     ": no flows (only blank or comment lines)"),
    ("3000000 1000\n", ["--max-time=2"],
     ":1: start 3000000 us is not before --max-time (2 s)"),
    ("0 1000\n", ["--topology=leafspine", "--leaves=2",
                  "--hosts-per-leaf=2", "--spines=1"],
     ":1: no SRC DST: the leaf-spine needs them (host indices 0 .. 3)"),
]


@pytest.mark.parametrize("text,extra,message", BAD)
def test_bad_list_is_refused_naming_the_line(panda_sim, tmp_path, text,
                                             extra, message):
    res, out, lst = run(panda_sim, tmp_path, text, *extra)
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert "panda-sim: --flow-list: %s%s" % (lst, message) in res.stderr, \
        res.stderr
    assert not (out / "run.json").exists()


@pytest.mark.parametrize("option", ["--flows=5", "--cdf=" + CDF,
                                    "--load=0.5", "--interval-us=10",
                                    "--concurrency=2"])
def test_list_excludes_the_drawn_workload(panda_sim, tmp_path, option):
    res, out, _ = run(panda_sim, tmp_path, GOOD, option)
    assert res.returncode == 2, res.stderr
    name = option.split("=")[0]
    assert "--flow-list and %s exclude each other" % name in res.stderr, \
        res.stderr
    assert not (out / "run.json").exists()


def test_unreadable_list_is_refused(panda_sim, tmp_path):
    res = subprocess.run([panda_sim, "--flow-list=/nonexistent/flows.txt",
                          "--out=%s" % (tmp_path / "o")],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "--flow-list: cannot read '/nonexistent/flows.txt'" in \
        res.stderr, res.stderr


def test_fish_fig2_one_interval(build, panda_sim, tmp_path):
    """sim/run.py fish-fig2 at t = 0.05 ms for PIAS with a given policy
    (no collection), ns-3's DCTCP (alpha from 1) and alpha from 0: both
    orders run, every flow completes, each point's flow list is FISH's
    burst in its order, the summary's ratio is the large-first mean over
    the small-first mean of the 8 small flows, as computed from the
    records, and --dctcp-alpha-init reached DCTCP: starting from 0, the
    small flows back off less from the marks that the large flows'
    backlog brings them, and finish sooner."""
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({
        "pias": {"action": "id=2,kind=pias,thresholds=21415/51341/138131"},
        "panda": {"action": "id=1,threshold=1448,thresholds=21415"}}))
    res = subprocess.run(
        [paths.PY, RUN_PY, "fish-fig2", "--out", str(tmp_path),
         "--run-id", "f", "--build-dir", build.root, "--no-plots",
         "--schemes", "pias", "--intervals", "50", "--variants",
         "alpha1,alpha0", "--policy", str(policy)],
        capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    with open(tmp_path / "f" / "result.json") as f:
        doc = json.load(f)
    assert doc["errors"] == {} and len(doc["points"]) == 4
    means = {}
    for r in doc["points"]:
        d = tmp_path / "f" / "points" / r["name"]
        with open(d / "flows.csv", newline="") as f:
            flows = list(csv.DictReader(f))
        sizes = [int(f["size"]) for f in flows]
        order, _, variant = r["point"]["tag"].partition("-t50us-")
        assert sizes == ([50000] * 8 + [1000000] * 3 if order ==
                         "small-first" else [1000000] * 3 + [50000] * 8)
        assert [int(f["start_ns"]) - T0_NS for f in flows] == \
            [i * 50000 for i in range(11)]
        assert all(int(f["finish_ns"]) >= 0 for f in flows)
        small = [(int(f["finish_ns"]) - int(f["start_ns"])) / 1e6
                 for f in flows if int(f["size"]) == 50000]
        means[(variant, order)] = sum(small) / len(small)
        cfg = r["run"]["config"]
        assert (cfg["scheme"], cfg["cc"]) == ("pias", "dctcp")
        assert cfg["dctcp_alpha_init"] == (0 if variant == "alpha0" else 1)
    rows = {row["variant"]: row for row in doc["fish_fig2"]["rows"]}
    assert sorted(rows) == ["alpha0", "alpha1"]
    for v, row in rows.items():
        assert row["scheme"] == "pias" and row["t_us"] == 50
        assert row["small_first_small_mean_ms"] == pytest.approx(
            means[(v, "small-first")])
        assert row["large_first_small_mean_ms"] == pytest.approx(
            means[(v, "large-first")])
        assert row["ratio"] == pytest.approx(
            means[(v, "large-first")] / means[(v, "small-first")])
    assert means[("alpha0", "large-first")] < \
        means[("alpha1", "large-first")]
    assert "L/S" in res.stdout

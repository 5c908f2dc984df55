"""The testbed's workload choice: pandalab.workload (a shipped
name or a CDF file, checked once where it enters, recorded with its
hash), testbed/run.py's --workload, --iperf3-streams and --goodput-check,
the record a run and its policy keep, and the iperf3 summaries.

The CDF rules are lib/panda/cdf.c's: every bad file here is also given to
panda-model (when built), which must refuse it with the same problem, so
the Python check cannot drift from the parser the programs use."""

import hashlib
import json
import os
import subprocess

import pytest

from pandaovs import paths
from pandalab import iperf3, workload
from pandalab.testbed import config, goodput, runner

# (file text, the problem both parsers must name)
BAD = [
    ("100 0.5\n50 1\n", "bad.cdf:2: values not sorted (50 after 100)"),
    ("100 0.5\n200 0.4\n300 1\n",
     "bad.cdf:2: probabilities decrease (0.4 after 0.5)"),
    ("100 0.5\n200 0.9\n", "bad.cdf: last cumulative probability is 0.9, "
     "not 1"),
    ("# only a comment\n\n", "bad.cdf: empty (no data points)"),
    ("100\n", "bad.cdf:1: missing cumulative probability after value 100"),
    ("100 1 extra\n", 'bad.cdf:1: trailing text "extra"'),
    ("size prob\n", 'bad.cdf:1: expected "<value> <probability>", got '
     '"size prob"'),
    ("-5 0\n10 1\n", "bad.cdf:1: negative value -5"),
    ("1e13 1\n", "bad.cdf:1: value 1e+13 above the largest supported"),
    ("10 1.5\n", "bad.cdf:1: probability 1.5 outside [0, 1]"),
    ("1 0\n" + "#" * 300 + "\n2 1\n", "bad.cdf:2: line too long"),
]

GOOD = "# comment\n\n1460 0 # inline\n1460 0.5\n  2920\t1\r\n"


def test_shipped_workloads_are_recorded_exactly():
    for name, mean in (("web-search", 1.666e6), ("data-mining", 7.47e6),
                       ("fb-hadoop", 134854), ("fb-web", 62483),
                       ("ali-storage", 40870)):
        w = workload.load(name)
        path = paths.cdf(name + ".cdf")
        with open(path, "rb") as f:
            data = f.read()
        assert w.name == name and w.shipped and w.path == path
        assert w.sha256 == hashlib.sha256(data).hexdigest()
        rec = w.record(copy="workload.cdf")
        assert rec["sha256"] == w.sha256 and rec["copy"] == "workload.cdf"
        assert rec["mean_bytes"] == pytest.approx(mean, rel=1e-3)
        assert rec["points"] == len(w.points) and rec["points"] > 5
    assert workload.load("data-mining").points[-1] == (973333820.0, 1.0)
    assert sorted(workload.SHIPPED) == sorted(
        n for n in ("web-search", "data-mining", "fb-hadoop", "fb-web",
                    "ali-storage"))
    assert workload.DEFAULT == "web-search"


def test_cdf_file_parsed_like_the_c_parser(tmp_path):
    f = tmp_path / "mine.cdf"
    f.write_text(GOOD)
    w = workload.load(str(f))
    assert not w.shipped and w.name == "mine.cdf"
    assert w.points == ((1460.0, 0.0), (1460.0, 0.5), (2920.0, 1.0))
    # Half the flows at 1460, the rest uniform up to 2920.
    assert w.mean_bytes == pytest.approx(0.5 * 1460 + 0.5 * 2190)
    # The copy the programs read is the checked bytes, whatever happens to
    # the file afterwards.
    f.write_text("1 1\n")
    copy = w.write_copy(str(tmp_path / "copy.cdf"))
    with open(copy, "rb") as c:
        assert c.read() == GOOD.encode()
    assert hashlib.sha256(GOOD.encode()).hexdigest() == w.sha256


@pytest.mark.parametrize("text,problem", BAD)
def test_bad_cdf_named_with_file_line_and_problem(tmp_path, monkeypatch,
                                                  text, problem):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.cdf").write_text(text)
    with pytest.raises(workload.WorkloadError) as e:
        workload.load("bad.cdf")
    assert problem in str(e.value)
    model = os.path.join(paths.build_dir(), "tools", "panda-model")
    if not os.access(model, os.X_OK):
        return                   # the Python half still ran
    res = subprocess.run([model, "--pias", "--cdf", "bad.cdf", "--load",
                          "0.8", "-q"], capture_output=True, text=True)
    assert res.returncode == 1, res
    assert problem in res.stderr, res.stderr


def test_files_that_are_not_cdfs(tmp_path):
    with pytest.raises(workload.WorkloadError,
                       match=r"cannot open CDF file .* \(not a shipped "
                       "workload either: web-search, data-mining, "
                       "fb-hadoop, fb-web, ali-storage\\)"):
        workload.load("datamining")
    with pytest.raises(workload.WorkloadError, match="is a directory"):
        workload.load(str(tmp_path))
    b = tmp_path / "b.cdf"
    b.write_bytes(b"1 0\n\0\0\n")
    with pytest.raises(workload.WorkloadError, match="NUL bytes"):
        workload.load(str(b))
    with pytest.raises(workload.WorkloadError, match="empty workload"):
        workload.load("")


def test_run_options(capsys, tmp_path):
    a = config.parse_args([])
    assert a.workload.name == "web-search" and a.iperf3_streams == 0
    assert a.goodput_check_s == 10.0
    assert config.parse_args(["--full"]).goodput_check_s == 30.0
    a = config.parse_args(["--workload", "data-mining", "--iperf3-streams",
                           "2", "--goodput-check", "0"])
    assert a.workload.name == "data-mining" and a.workload.shipped
    assert a.iperf3_streams == 2 and a.goodput_check_s == 0
    assert a.flt_level0 == 0.99 and a.flt_bound == "floor"
    assert config.parse_args(["--flt-bound", "alpha1"]).flt_bound == "alpha1"
    assert config.parse_args(["--flt-level0", "0"]).flt_level0 == 0
    bad = tmp_path / "bad.cdf"
    bad.write_text(BAD[0][0])
    with pytest.raises(SystemExit) as e:
        config.parse_args(["--workload", str(bad)])
    assert e.value.code == 2
    assert "--workload: %s:2: values not sorted" % bad in \
        capsys.readouterr().err
    for args, msg in ((["--iperf3-streams", "-1"], "--iperf3-streams -1"),
                      (["--goodput-check", "-3"], "--goodput-check"),
                      (["--flt-level0", "2"], "--flt-level0 2")):
        with pytest.raises(SystemExit):
            config.parse_args(args)
        assert msg in capsys.readouterr().err


def test_reused_policy_says_whether_its_workload_matches(tmp_path):
    cfg = config.parse_args(["--workload", "data-mining", "--policy",
                             str(tmp_path / "policy.json")])
    logged = []
    run = runner.Run(cfg, log=logged.append)
    same = {"workload": workload.load("data-mining").record()}
    run.check_policy_workload(same)
    assert same["workload_matches_run"] is True and not logged
    other = {"workload": workload.load("web-search").record()}
    run.check_policy_workload(other)
    assert other["workload_matches_run"] is False
    assert "modelled on workload web-search" in logged[-1]
    old = {}
    run.check_policy_workload(old)
    assert old["workload_matches_run"] is None
    assert "does not say which workload" in logged[-1]


IPERF3_DOC = {
    "start": {}, "intervals": [],
    "end": {"streams": [{}, {}],
            "sum_sent": {"bytes": 0, "bits_per_second": 0,
                         "retransmits": 7},
            "sum_received": {"seconds": 2.5, "bytes": 15000000,
                             "bits_per_second": 48e6}},
}


def test_iperf3_summaries():
    s = iperf3.summary(IPERF3_DOC)
    assert s == {"goodput_mbps": 48.0, "bytes": 15000000, "seconds": 2.5,
                 "streams": 2, "retransmits": 7, "interrupted": False}
    doc = dict(IPERF3_DOC, error="interrupt - the client has terminated")
    assert iperf3.summary(doc)["interrupted"] is True
    doc = dict(IPERF3_DOC, end={}, error="unable to connect to server")
    s = iperf3.summary(doc)
    assert s["goodput_mbps"] is None
    assert s["error"] == "unable to connect to server"


def test_iperf3_missing_is_said(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert "iperf3 not found" in iperf3.unavailable()
    assert "Debian package iperf3" in iperf3.unavailable()
    with pytest.raises(iperf3.Iperf3Error, match="iperf3 not found"):
        iperf3.Streams(None, None, None, 2, "/tmp")

    class Tb:
        rate_bps = 50e6
    rec = goodput.cross_check(Tb(), "x.cdf", "web-search", 14, 10, 1,
                              "/tmp")
    assert rec["status"].startswith("unavailable: iperf3 not found")
    assert rec["link_goodput_mbps"] == pytest.approx(50 * 1448 / 1514)
    assert goodput.line(rec) == "goodput cross-check: " + rec["status"]


def test_goodput_line():
    rec = {"status": "ok", "streams": 14, "seconds": 10,
           "load_generator": {"goodput_mbps": 45.0},
           "iperf3": {"goodput_mbps": 47.0},
           "ratio_load_generator_to_iperf3": 45 / 47,
           "link_goodput_mbps": 47.8}
    assert goodput.line(rec) == (
        "goodput cross-check (14 flows/streams, 10 s, fifo): load generator "
        "45.0 Mbit/s, iperf3 47.0 Mbit/s, ratio 0.957; link carries 47.8 "
        "Mbit/s of TCP payload")
    json.dumps(rec)

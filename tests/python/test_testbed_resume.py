"""Runs over several sessions (testbed/run.py --resume, --stop-after) on a
fake testbed: the runner's real plan, record, summary, segments and
checks, with trials that take fake time and return results that depend
only on what they were asked (scheme, point, seed), so that a run made in
pieces can be compared with one made in one go.  No root, no OVS."""

import contextlib
import json
import os
import struct

import pytest

from pandalab import cc
from pandalab.testbed import config, model, resume, runner

POLICY = {"panda": {"action": "id=1,threshold=1408,thresholds=1/2/3"},
          "pias": {"action": "id=2,kind=pias,thresholds=1/2"}}
TRIAL_S = 60.0          # fake seconds per trial


class FakeTestbed:
    """What runner.Run asks of a testbed, without a network."""
    levels = 8
    mtu = 1500

    def __init__(self, cfg, cc, mtu):
        self.cc = cc
        self.rate_bps = cfg.qos.rate_bps

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def topology(self):
        return {"kind": "fake"}

    def ovs_version(self):
        return "ovs-vswitchd (Open vSwitch) 3.1.0 (fake)"

    def port_state(self):
        return {}

    def offload_state(self):
        return {}

    def panda_available(self):
        return True

    def thread_cpu(self):
        return {}

    def set_scheme(self, scheme, policy=None):
        pass

    def wait_drained(self):
        pass


def _empty_pcap(path):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))


@contextlib.contextmanager
def fake_cc_session(algorithm, build_dir, log):
    """runner.cc_session on a kernel with cubic only."""
    if algorithm != "cubic":
        raise cc.CcUnavailable("kernel has no %s" % algorithm)
    yield cc.Implementation(algorithm, algorithm, "kernel")


class Lab:
    """The fake trials, the fake clock and the model calls of one test.
    'fail': {(scheme, concurrency, requests, rep): status} returned once;
    'interrupt': the number of the trial (1-based, over the test) that is
    interrupted (runner.Interrupted, as SIGTERM raises it) once."""

    def __init__(self, monkeypatch, tmp_path):
        self.now = 0.0
        self.ran = []           # (scheme, concurrency, requests, seed)
        self.models = 0
        self.fail = {}
        self.interrupt = None
        self.out = str(tmp_path / "out")
        monkeypatch.setattr(runner, "run_trial", self.run_trial)
        monkeypatch.setattr(runner.model, "make_policies", self.run_model)
        monkeypatch.setattr(runner.Run, "preflight", lambda self: None)
        monkeypatch.setattr(runner, "cc_session", fake_cc_session)

    def clock(self):
        return self.now

    def run_trial(self, tb, tcfg, scheme, conc, req, seed, wdir,
                  policy=None, collect=False, log=None, note=None):
        os.makedirs(wdir, exist_ok=True)
        self.now += TRIAL_S
        self.ran.append((scheme, conc, req, seed))
        if self.interrupt == len(self.ran):
            self.interrupt = None
            with open(os.path.join(wdir, "partial"), "w") as f:
                f.write("cut short")
            raise runner.Interrupted("signal 15")
        if collect:
            for name in ("flt.pcap", "fht.pcap"):
                _empty_pcap(os.path.join(wdir, name))
        rep = seed - 1
        status = self.fail.pop((scheme, conc, req, rep), "ok")
        p99 = 1.0 + 0.1 * seed + conc / 10.0 + req / 1e4 + len(scheme)
        return {"scheme": scheme, "cc": tb.cc, "concurrency": conc,
                "requests": req, "seed": seed, "status": status,
                "dir": wdir,
                "memcached": {"p50_ms": p99 / 4, "p90_ms": p99 / 2,
                              "p99_ms": p99, "p99.9_ms": p99 * 2,
                              "mean_ms": p99 / 3, "max_ms": p99 * 3},
                "fct": {"small": {"mean_ms": 10.0 + seed, "completed": 3,
                                  "unfinished": 0,
                                  "size_range_bytes": [0, 100000]}},
                "load": {"goodput_mbps": 47.0},
                "memcached_levels": {"0": 99, "1": 1}}

    def run_model(self, build, flt, fht, cdf, load, levels, outdir, **kw):
        self.models += 1
        assert os.path.exists(cdf)
        return json.loads(json.dumps(POLICY))

    def run(self, *argv, run_id="r"):
        """testbed/run.py ARGV on the fake testbed: (exit status, log)."""
        log = []
        args = list(argv)
        if "--resume" not in args:
            args += ["--out", self.out, "--run-id", run_id]
        st = runner.launch(args, log=log.append, testbed=FakeTestbed,
                           clock=self.clock)
        return st, "\n".join(log)

    def result(self, run_id="r"):
        with open(os.path.join(self.out, run_id, "result.json")) as f:
            return json.load(f)


BASE = ("--quick", "--cc", "cubic,dctcp", "--schemes", "fifo,pias,panda",
        "--goodput-check", "0", "--no-plots")


@pytest.fixture
def lab(monkeypatch, tmp_path):
    return Lab(monkeypatch, tmp_path)


def keys(result):
    return sorted(runner.trial_key(t) for t in result["trials"])


def strip(result):
    """The trials as results: without what names the session."""
    return sorted((runner.trial_key(t), t["status"], t["seed"],
                   t["memcached"]["p99_ms"]) for t in result["trials"])


def test_stop_and_resume_equals_one_go(lab, tmp_path):
    st, _ = lab.run(*BASE, "--reps", "3", run_id="whole")
    assert st == 0
    whole = lab.result("whole")
    # 3 reps x (a floor + 3 schemes at one point); dctcp unavailable.
    assert len(whole["trials"]) == 12 and lab.models == 1
    lab.models = 0
    lab.now = 0.0
    # 2.5 min: trials start at 0, 60 and 120 s; none at 180 s.
    with_plots = [a for a in BASE if a != "--no-plots"]
    st, log = lab.run(*with_plots, "--reps", "3", "--stop-after", "2.5")
    assert st == config.EXIT_STOPPED == 3
    run_dir = os.path.join(lab.out, "r")
    assert "continue with: testbed/run.py --resume %s" % run_dir in log
    part = lab.result()
    assert len(part["trials"]) == 3 and lab.models == 1
    seg = part["metadata"]["segments"]
    assert len(seg) == 1 and seg[0]["end"] == "stopped: --stop-after 2.5 min"
    assert seg[0]["trials_run"] == 3 and seg[0]["stop_after_min"] == 2.5
    # The partial summary and CSV are written, and say they are partial.
    assert part["summary"]["rows"]
    assert part["summary"]["progress"] == {
        "trials_done": 3, "trials_planned": 12, "complete": False}
    assert os.path.exists(os.path.join(run_dir, "result.csv"))
    assert part["plots"] and all(os.path.exists(os.path.join(run_dir, f))
                                 for f in part["plots"])
    # Continued twice (2 more sessions), with the clock of new sessions.
    lab.now = 1000.0
    st, log = lab.run("--resume", run_dir, "--stop-after", "2.5")
    assert st == 3 and "3 of 12 trials done, 9 to run" in log
    lab.now = 5000.0
    st, log = lab.run("--resume", run_dir)
    assert st == 0
    done = lab.result()
    # Same trials and results as in one go, each once, one model.
    assert keys(done) == keys(whole)
    assert len(set(keys(done))) == len(keys(done))
    assert strip(done) == strip(whole)
    assert lab.models == 1
    assert done["policy"] == part["policy"]
    assert "not modelled again" in log
    assert done["summary"]["rows"] == whole["summary"]["rows"]
    assert done["summary"]["progress"]["complete"]
    assert done["unavailable"] == whole["unavailable"]
    assert "error" not in done
    seg = done["metadata"]["segments"]
    assert [s["index"] for s in seg] == [0, 1, 2]
    assert [s["trials_run"] for s in seg] == [3, 3, 6]
    assert [s["end"] for s in seg] == ["stopped: --stop-after 2.5 min"] * 2 \
        + ["complete"]
    for s in seg:
        for k in ("kernel", "host", "loadavg_at_start", "loadavg_at_end",
                  "started_utc", "ended_utc", "git", "code",
                  "ovs_version"):
            assert s[k] is not None, k
        assert s["code_changed"] == [] and not s["allow_code_change"]
    assert seg[1]["argv"][1:3] == ["--resume", run_dir]
    md = done["metadata"]
    assert md["runtime_s"] == pytest.approx(sum(s["runtime_s"] for s in seg))
    assert md["config"]["settings"] == whole["metadata"]["config"][
        "settings"]
    # A finished run continued again: nothing runs, same result.
    n = len(lab.ran)
    assert lab.run("--resume", run_dir)[0] == 0
    assert len(lab.ran) == n and strip(lab.result()) == strip(done)


def test_dry_run_of_a_resumed_run(lab, capsys):
    """--resume RUN_DIR --dry-run: what is left of the run and how long
    it takes; the run is not touched."""
    st, _ = lab.run(*BASE, "--reps", "2", "--stop-after", "3")
    assert st == config.EXIT_STOPPED
    run_dir = os.path.join(lab.out, "r")
    with open(os.path.join(run_dir, "result.json"), "rb") as f:
        before = f.read()
    ran = list(lab.ran)
    capsys.readouterr()
    st, _ = lab.run("--resume", run_dir, "--reps", "3", "--dry-run")
    text = capsys.readouterr().out
    assert st == 0 and lab.ran == ran
    with open(os.path.join(run_dir, "result.json"), "rb") as f:
        assert f.read() == before
    # The run's dctcp was unavailable: 3 repetitions of cubic's floor and
    # three schemes are left, less what ran.
    done = len(ran)             # the fifo trial hosted the collection
    assert "continuing %s" % run_dir in text
    assert "repetitions: 3 (seeds 1..3)" in text
    assert "trials: 12 = 1 cc x 3 repetitions" in text
    assert "done: %d trials ok; to run: %d" % (done, 12 - done) in text
    # A real session plans the same and records it.
    st, log = lab.run("--resume", run_dir, "--reps", "3")
    assert st == 0 and "plan: 12 trials" in log
    r = lab.result()
    assert len(r["metadata"]["segments"][-1]["planned_s"]) == 2


def test_reps_increase_adds_exactly_the_new_repetitions(lab):
    assert lab.run(*BASE, "--reps", "3", run_id="whole")[0] == 0
    whole = lab.result("whole")
    lab.ran, lab.models = [], 0
    assert lab.run(*BASE, "--reps", "1")[0] == 0
    first = list(lab.ran)
    assert len(first) == 4 and lab.models == 1
    run_dir = os.path.join(lab.out, "r")
    st, _ = lab.run("--resume", run_dir, "--reps", "3")
    assert st == 0
    added = lab.ran[len(first):]
    # Exactly repetitions 2 and 3 (seeds 2 and 3): their floors and every
    # scheme at the point; repetition 1 and the model are not redone.
    assert sorted(added) == sorted(
        [(s, 14, 10000, seed) for s in ("fifo", "pias", "panda")
         for seed in (2, 3)] + [("fifo", 0, 10000, seed) for seed in (2, 3)])
    assert lab.models == 1
    r = lab.result()
    assert strip(r) == strip(whole)
    assert r["metadata"]["reps"] == r["metadata"]["config"]["reps"] == 3
    assert r["summary"]["rows"] == whole["summary"]["rows"]
    # All 3 repetitions in the mean and its interval, as in one go.
    row = next(x for x in r["summary"]["rows"] if x["scheme"] == "panda")
    assert row["reps_ok"] == 3 and row["memcached"]["p99_ms"]["n_used"] == 3
    assert row["memcached"]["p99_ms"]["reps"] == [0, 1, 2]
    assert row["memcached"]["p99_ms"]["ci95"] is not None
    # Later sessions keep 3 repetitions without being told again; fewer
    # are refused.
    assert lab.run("--resume", run_dir)[0] == 0
    assert len(lab.ran) == 4 + 8


def test_changed_settings_are_refused_by_name(lab, capsys):
    assert lab.run(*BASE, "--stop-after", "1")[0] == 3
    run_dir = os.path.join(lab.out, "r")
    capsys.readouterr()
    for argv, what in (
            (["--rate-mbit", "100"], "--rate-mbit (rate_mbit): the run's "
             "50, this command line's 100.0; --queue-pkts (queue_pkts): the "
             "run's 50, this command line's 100 (follows from the options "
             "above)"),
            (["--seed", "7"], "--seed (seed): the run's 1, this command "
             "line's 7"),
            (["--full"], "--quick/--headline/--full (mode): the run's "
             "\"quick\", this command line's \"full\""),
            (["--headline"], "(mode): the run's \"quick\", this command "
             "line's \"headline\""),
            (["--qos", "htb"], "--qos (qos): the run's \"panda-sched\""),
            (["--schemes", "fifo,panda"], "--schemes (schemes)"),
            (["--cc", "cubic"], "--cc (cc): the run's [\"cubic\", "
             "\"dctcp\"], this command line's [\"cubic\"]"),
            (["--workload", "data-mining"], "--workload (workload_sha256)"),
            (["--warmup", "9"], "--warmup (warmup_s): the run's 3.0"),
            (["--fct-window", "30"], "--fct-window (fct_window_s)"),
            (["--queue-pkts", "80"], "--queue-pkts (queue_pkts)"),
            (["--load", "0.5"], "--load (load)"),
            (["--profile", "10g"], "--profile (profile)"),
            (["--policy", "/x/policy.json"], "--policy (policy)"),
            (["--out", "/tmp"], "--out: not with --resume"),
            (["--run-id", "x"], "--run-id: not with --resume")):
        n = len(lab.ran)
        assert lab.run("--resume", run_dir, *argv)[0] == 2, argv
        err = capsys.readouterr().err
        assert what in err, (argv, err)
        assert len(lab.ran) == n
    # A scheme whose egress the run recorded otherwise (panda had
    # per-flow queues until 2026-11-27) is refused, whatever its name.
    path = os.path.join(run_dir, "result.json")
    with open(path) as f:
        r = json.load(f)
    eg = r["metadata"]["config"]["settings"]["scheme_egress"]
    assert eg["panda"] == {"policy": "panda", "per_flow": False,
                           "guard": False, "ecn": True}
    eg["panda"]["per_flow"] = True
    with open(path, "w") as f:
        json.dump(r, f)
    assert lab.run("--resume", run_dir)[0] == 2
    assert "--schemes (scheme_egress)" in capsys.readouterr().err
    eg["panda"]["per_flow"] = False
    with open(path, "w") as f:
        json.dump(r, f)
    # Repeating the run's own settings is no change.
    assert lab.run("--resume", run_dir, "--quick", "--seed", "1",
                   "--rate-mbit", "50", "--stop-after", "1")[0] == 3
    # Fewer repetitions than the run has: refused.
    assert lab.run("--resume", run_dir, "--reps", "2")[0] == 0
    assert lab.run("--resume", run_dir, "--reps", "1")[0] == 2
    assert "--reps 1: the run has 2 repetitions" in capsys.readouterr().err
    assert len(lab.result()["metadata"]["segments"]) == 3


def test_old_or_foreign_results_are_refused(lab, capsys, tmp_path):
    assert lab.run(*BASE, "--stop-after", "1")[0] == 3
    run_dir = os.path.join(lab.out, "r")
    path = os.path.join(run_dir, "result.json")
    with open(path) as f:
        result = json.load(f)
    del result["metadata"]["config"]
    with open(path, "w") as f:
        json.dump(result, f)
    assert lab.run("--resume", run_dir)[0] == 2
    assert "has no metadata.config: it was written before runs could be " \
        "resumed" in capsys.readouterr().err
    assert lab.run("--resume", str(tmp_path))[0] == 2
    assert "no result.json there" in capsys.readouterr().err


def test_workload_copy_and_code_are_the_runs(lab, capsys, monkeypatch):
    assert lab.run(*BASE, "--stop-after", "1")[0] == 3
    run_dir = os.path.join(lab.out, "r")
    code = resume.code_state()
    assert set(code) == set(resume.CODE_PARTS)
    changed = dict(code, **{"lib/panda": "0" * 64})
    monkeypatch.setattr(resume, "code_state", lambda: changed)
    monkeypatch.setattr(runner.resume, "code_state", lambda: changed)
    assert lab.run("--resume", run_dir)[0] == 2
    err = capsys.readouterr().err
    assert "the code differs from the run's in lib/panda" in err
    assert "--allow-code-change" in err
    assert lab.run("--resume", run_dir, "--allow-code-change",
                   "--stop-after", "1")[0] == 3
    seg = lab.result()["metadata"]["segments"][-1]
    assert seg["allow_code_change"] and seg["code_changed"] == ["lib/panda"]
    monkeypatch.setattr(resume, "code_state", lambda: code)
    monkeypatch.setattr(runner.resume, "code_state", lambda: code)
    with open(os.path.join(run_dir, "workload.cdf"), "a") as f:
        f.write("# edited\n")
    assert lab.run("--resume", run_dir)[0] == 2
    assert "workload.cdf (sha256" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        config.parse_args(["--allow-code-change"])
    with pytest.raises(SystemExit):
        config.parse_args(["--stop-after", "0"])


def test_interrupted_trial_runs_again(lab, capsys):
    assert lab.run(*BASE, "--reps", "2", run_id="whole")[0] == 0
    whole = lab.result("whole")
    lab.ran = []
    lab.interrupt = 3           # the third trial gets SIGTERM
    st, _ = lab.run(*BASE, "--reps", "2")
    assert st == 130
    assert "continue with: testbed/run.py --resume" in capsys.readouterr().err
    run_dir = os.path.join(lab.out, "r")
    cut = lab.result()          # valid JSON, as it stood
    assert cut["error"] == "interrupted" and len(cut["trials"]) == 2
    assert cut["metadata"]["segments"][0]["end"] == "interrupted"
    interrupted = lab.ran[2]
    assert lab.run("--resume", run_dir)[0] == 0
    assert lab.ran[3] == interrupted        # first thing run, again
    done = lab.result()
    assert strip(done) == strip(whole) and "error" not in done
    # The cut-short attempt's outputs are kept apart from the new ones.
    t = next(x for x in done["trials"] if (x["scheme"], x["seed"]) == (
        interrupted[0], interrupted[3]))
    assert not os.path.exists(os.path.join(t["dir"], "partial"))
    assert os.path.exists(os.path.join(t["dir"] + ".attempt1", "partial"))


def test_failed_trials_run_again_once_recorded(lab):
    assert lab.run(*BASE, run_id="whole")[0] == 0
    lab.fail = {("pias", 14, 10000, 0): "failed: boom"}
    st, log = lab.run(*BASE)
    # Incomplete: one trial failed, the others measured.
    assert st == 3 and "failed trials run again with" in log
    run_dir = os.path.join(lab.out, "r")
    n = len(lab.ran)
    assert lab.run("--resume", run_dir)[0] == 0
    assert lab.ran[n:] == [("pias", 14, 10000, 1)]      # only that one
    r = lab.result()
    assert strip(r) == strip(lab.result("whole"))
    assert [t["status"] for t in r["retried"]] == ["failed: boom"]
    assert r["retried"][0]["superseded_in_session"] == 1
    row = next(x for x in r["summary"]["rows"] if x["scheme"] == "pias")
    assert (row["reps_ok"], row["reps_failed"]) == (1, 0)


def test_sigterm_is_not_swallowed_by_the_goodput_check(lab, monkeypatch):
    """A signal during a measurement whose errors are recorded (the
    goodput cross-check catches Exception) must end the run, not be
    recorded as that measurement's failure."""
    def cross_check(*a, **kw):
        raise runner.Interrupted("signal 15")
    monkeypatch.setattr(runner.goodput, "cross_check", cross_check)
    argv = [a for a in BASE if a not in ("--goodput-check", "0")]
    assert lab.run(*argv, "--goodput-check", "5")[0] == 130
    r = lab.result()
    assert r["goodput_check"] is None and r["error"] == "interrupted"
    # The collection (first) ran; nothing after the check.
    assert len(lab.ran) == 1 and len(r["trials"]) == 1


def test_a_run_directory_is_used_by_one_run_at_a_time(lab, capsys):
    import fcntl
    run_dir = os.path.join(lab.out, "r")
    os.makedirs(run_dir)
    with open(os.path.join(run_dir, ".lock"), "w") as f:
        f.write("4242\n")
        f.flush()
        fcntl.flock(f, fcntl.LOCK_EX)
        assert lab.run(*BASE)[0] == 1
        # The lock file of the run that holds it stays.
        assert os.path.exists(os.path.join(run_dir, ".lock"))
    assert "in use by another testbed run (pid 4242)" in \
        capsys.readouterr().err
    # A run that ends leaves no lock file behind, and its last lines name
    # what it wrote.
    os.unlink(os.path.join(run_dir, ".lock"))
    st, log = lab.run(*BASE)
    assert st == 0 and not os.path.exists(os.path.join(run_dir, ".lock"))
    lines = log.splitlines()
    at = lines.index("written in %s:" % run_dir)
    assert lines[at + 1].split() == ["result.json", "result.csv",
                                     "policy.json", "workload.cdf"]
    assert lines[at + 2] == "  trials/ (4 trial directories)"


def test_model_is_only_made_by_a_run_without_policy(lab):
    """A run stopped before its model (interrupted in the collection)
    models once when continued; never again after that."""
    lab.interrupt = 1
    assert lab.run(*BASE)[0] == 130
    assert lab.models == 0 and lab.result()["policy"] is None
    run_dir = os.path.join(lab.out, "r")
    assert lab.run("--resume", run_dir)[0] == 0
    assert lab.models == 1
    assert model.policies(lab.result()["policy"])["panda"].id == 1


def test_command_line_is_checked_merged_with_the_runs(lab, capsys):
    """'--resume D --burst 3028' is checked against the run's settings,
    not against the defaults: right for a run on panda-sched (the run's
    own value is no change, another one is refused), refused for a run on
    htb although the same options alone are valid."""
    assert lab.run(*BASE, "--burst", "3028", "--stop-after", "1")[0] == 3
    run_dir = os.path.join(lab.out, "r")
    assert lab.run("--resume", run_dir, "--burst", "3028",
                   "--stop-after", "1")[0] == 3
    assert lab.run("--resume", run_dir, "--burst", "6000")[0] == 2
    assert "--burst (burst_bytes): the run's 3028, this command line's " \
        "6000" in capsys.readouterr().err
    assert config.parse_args(["--burst", "3028"]).qos.burst_bytes == 3028
    assert lab.run(*BASE, "--qos", "htb", "--stop-after", "1",
                   run_id="h")[0] == 3
    with pytest.raises(SystemExit):
        lab.run("--resume", os.path.join(lab.out, "h"), "--burst", "3028")
    assert "--burst 3028: needs --qos panda-sched" in \
        capsys.readouterr().err


def test_code_state_counts_code_not_text(tmp_path):
    """The code's identity: a change to a source changes its part, a
    README or a byte-compiled cache does not."""
    for part in resume.CODE_PARTS:
        (tmp_path / part).mkdir(parents=True)
    (tmp_path / "lib/panda/policy.c").write_text("int x;\n")
    (tmp_path / "lib/panda/README.md").write_text("text\n")
    before = resume.code_state(str(tmp_path))
    (tmp_path / "lib/panda/README.md").write_text("other text\n")
    (tmp_path / "lib/panda/__pycache__").mkdir()
    (tmp_path / "lib/panda/__pycache__/x.pyc").write_bytes(b"\0")
    assert resume.code_state(str(tmp_path)) == before
    (tmp_path / "lib/panda/policy.c").write_text("int y;\n")
    after = resume.code_state(str(tmp_path))
    assert resume.code_changes(before, after) == ["lib/panda"]
    (tmp_path / "tools/new.c").write_text("\n")
    assert resume.code_changes(before, resume.code_state(
        str(tmp_path))) == ["lib/panda", "tools"]


def test_other_front_ends_refuse_sessions(capsys):
    """The Mininet front end and the workload switch cannot continue a
    run (their own options are not in the recorded settings): refused,
    not ignored."""
    from pandalab.mininet import cli
    from pandalab.testbed import workload_switch as switch
    for main, argv in ((cli.main, ["--resume", "/x"]),
                       (cli.main, ["--stop-after", "5"]),
                       (switch.parse, ["--resume", "/x"]),
                       (switch.parse, ["--stop-after", "5"])):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2
        assert "--resume/--stop-after" in capsys.readouterr().err


def test_full_run_in_sessions(lab):
    """testbed/README.md's recipe for the reference results (--full
    --reps 3 --stop-after M, then --resume until done), on the full plan
    (two schemes to keep it quick; fake trials of 60 s, so 30 trials a
    30-minute session): exactly the plan, each trial once, one model, 3
    repetitions per point, each with its interval."""
    from pandalab.testbed import experiments
    argv = ["--full", "--qos", "panda-sched", "--schemes", "pias,panda",
            "--cc", "cubic", "--reps", "3", "--goodput-check", "0",
            "--no-plots"]
    st, log = lab.run(*argv, "--stop-after", "30")
    run_dir = os.path.join(lab.out, "r")
    sessions = 1
    while st == config.EXIT_STOPPED:
        assert "continue with: testbed/run.py --resume %s" % run_dir in log
        lab.now += 3600
        st, log = lab.run("--resume", run_dir, "--stop-after", "30")
        sessions += 1
    assert st == 0
    r = lab.result()
    plan = experiments.plan("full", ["pias", "panda"], 3, ["cubic"])
    points = len(experiments.points("full"))
    assert len(plan) == 3 * (1 + points * 2) == 165
    assert keys(r) == sorted(runner.trial_key(t) for t in plan)
    # Each trial ran once, and the collection (no fifo trial at 14 flows
    # to host it: a trial of its own, not recorded, in session 1).
    assert len(lab.ran) == len(plan) + 1 and lab.models == 1
    assert sessions == 6 and [s["trials_run"] for s in r["metadata"][
        "segments"]] == [29] + [30] * 4 + [16]
    assert all(row["reps_ok"] == 3 and row["memcached"]["p99_ms"]["n_used"]
               == 3 and row["memcached"]["p99_ms"]["ci95"]
               for row in r["summary"]["rows"] if row["concurrency"] > 0)

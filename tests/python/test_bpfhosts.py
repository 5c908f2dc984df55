"""panda-controller tune-bpf (pandaovs.controller.bpfhosts): the auto-tune
loop for hosts that mark with panda-bpf, against hosts whose panda-bpf is
a stand-in script (the real one needs root and a kernel with BPF: the
system test test_bpf_classifier.py reads a real one's histograms with the
same Host class).  panda-model is the build tree's."""

import json
import os
import sys

import pytest

from pandaovs import paths, sizehist
from pandaovs.controller import autotune, bpfhosts
from pandaovs.controller import cli as controller_cli
from pandaovs.policy import Policy

MODEL = os.path.join(paths.build_dir(), "tools", "panda-model")
CDF = paths.cdf("web-search.cdf")
needs_model = pytest.mark.skipif(not os.access(MODEL, os.X_OK),
                                 reason="no panda-model at %s" % MODEL)

POLICY = ("id=9,threshold=1000,thresholds=10000/100000,dscp=46/26/10,"
          "queues=0/1/2")

# A panda-bpf that answers from a directory: 'policy' (the text in force,
# absent: not loaded), 'histogram' (the text it prints), 'refuse' (if
# present, set-policy fails with its content, as panda-bpf does with
# lib/panda's message).
FAKE = r'''
import json, os, sys
d, cmd = sys.argv[1], sys.argv[2]
def read(name):
    p = os.path.join(d, name)
    return open(p).read() if os.path.exists(p) else None
if cmd == "show":
    pol = read("policy")
    print(json.dumps({"loaded": pol is not None, "policy": None if pol is None
                      else {"id": int(pol.split(",")[0][3:]), "text": pol}}))
elif cmd == "histogram":
    sys.stdout.write(read("histogram"))
elif cmd == "set-policy" and sys.argv[3] == "--text":
    why = read("refuse")
    if why:
        sys.stderr.write(why)
        sys.exit(1)
    open(os.path.join(d, "policy"), "w").write(sys.argv[4])
else:
    sys.exit(2)
'''


def hist(pid, flt, fht):
    h = sizehist.Histogram(pid)
    h.payload = {0: dict(flt), 1: dict(fht)}
    return h


@pytest.fixture
def hosts(tmp_path):
    """make(name, policy=POLICY, hist=...) -> the NAME=COMMAND of a host
    and its directory."""
    script = tmp_path / "fake-panda-bpf.py"
    script.write_text(FAKE)

    def make(name, policy=POLICY, h=None):
        d = tmp_path / name
        d.mkdir()
        if policy is not None:
            (d / "policy").write_text(policy)
        h = h or hist(9, {24: 500, 96: 100}, {1448: 3000, 512: 50})
        (d / "histogram").write_text(h.format())
        return "%s=%s %s %s" % (name, sys.executable, script, d), d
    return make


def settings(**kw):
    base = dict(model=MODEL, cdf=CDF, load=0.6, trim=0, min_packets=10,
                confirm=1, min_interval=0, margin=0.05, source_cap=1)
    base.update(kw)
    return autotune.Settings(**base)


@needs_model
def test_round_pushes_to_every_host(hosts, tmp_path):
    """Two hosts with the same policy and traffic: one round runs the
    model on both histograms and pushes the same proposal to both; the
    policy file the next hosts get is written."""
    (a, da), (b, db) = hosts("hv1"), hosts("hv2")
    out = tmp_path / "tuned.txt"
    t = bpfhosts.BpfTuner([bpfhosts.Host.parse(a), bpfhosts.Host.parse(b)],
                          settings(), policy_out=str(out))
    d = t.round()
    assert d["action"] == "push", d
    assert d["bridges"] == ["hv1", "hv2"]
    assert d["pushed"] == ["hv1", "hv2"] and not d["refused"]
    new = Policy.from_text((da / "policy").read_text())
    assert (db / "policy").read_text() == new.text()
    assert new.id == 9 and new.dscp == (46, 26, 10)
    # The model's T separates the 24..96-byte FLT payloads from the FHT's
    # 512 and up; a push moves it one step (max_step 0.5: / 1.5 at most).
    assert 96 < Policy.from_text(d["model_proposed"]).threshold <= 512
    assert 1000 / 1.5 - 1 <= new.threshold < 1000
    assert Policy.from_text(out.read_text().splitlines()[-1]) == new
    # The next round sees no new packets: it waits.
    assert t.round()["action"] == "wait"


@needs_model
def test_hosts_left_out_and_refusing(hosts):
    """A host with another policy is left out of the window and not
    pushed to; a host that refuses the new policy keeps its own and is
    named; the others take it."""
    (a, da) = hosts("hv1")
    (b, db) = hosts("hv2", policy=POLICY.replace("id=9", "id=3"))
    (c, dc) = hosts("hv3")
    (dc / "refuse").write_text("set-policy: thresholds: not ascending")
    (e, de) = hosts("hv4", policy=None)
    t = bpfhosts.BpfTuner([bpfhosts.Host.parse(x) for x in (a, b, c, e)],
                          settings())
    d = t.round()
    assert d["action"] == "push", d
    assert sorted(d["left_out"]) == ["hv2", "hv4"]
    assert "runs another policy" in d["left_out"]["hv2"]
    assert d["left_out"]["hv4"] == "no policy loaded"
    assert d["bridges"] == ["hv1", "hv3"]
    assert d["pushed"] == ["hv1"]
    assert "not ascending" in d["refused"]["hv3"]
    assert (db / "policy").read_text().startswith("id=3")
    assert (dc / "policy").read_text() == POLICY
    assert (da / "policy").read_text() != POLICY


def test_unreachable_and_bad_histogram(hosts, tmp_path):
    """A host whose command fails or prints what is not a histogram is
    left out with the reason; with no host left the round waits."""
    (a, da) = hosts("hv1")
    (da / "histogram").write_text("policy 9\npayload 0 24 5\n")
    bad = bpfhosts.Host.parse("hv2=%s" % (tmp_path / "nonexistent"))
    t = bpfhosts.BpfTuner([bpfhosts.Host.parse(a), bad],
                          settings(model=sys.executable))
    d = t.round()
    assert "No such file" in d["left_out"]["hv2"]
    assert "no \"panda-histogram 1\" line" in d["left_out"]["hv1"]
    assert d["action"] == "wait" and d["bridges"] == []


def test_host_spec_checked():
    for bad in ("hv1", "=panda-bpf", "hv1=", "hv1='unterminated"):
        with pytest.raises(ValueError) as e:
            bpfhosts.Host.parse(bad)
        assert "--host" in str(e.value)
    h = bpfhosts.Host.parse("hv1=ssh -o BatchMode=yes hv1 panda-bpf")
    assert h.argv == ["ssh", "-o", "BatchMode=yes", "hv1", "panda-bpf"]
    with pytest.raises(ValueError) as e:
        bpfhosts.BpfTuner([h, h], settings(model=sys.executable))
    assert "two --host with one name" in str(e.value)


@needs_model
def test_command_line(hosts, tmp_path, capsys):
    """panda-controller tune-bpf: usage errors exit 2; a run of one round
    pushes; --policy gives the bounds (here T may not leave 900..1100)."""
    a, da = hosts("hv1")
    assert controller_cli.main(["tune-bpf", "--host", a]) == 2
    assert "--auto-tune needs --auto-tune-load" in capsys.readouterr().err
    assert controller_cli.main(["tune-bpf", "--host", a,
                                "--auto-tune-load", "0.5",
                                "--auto-tune-model", MODEL]) == 2
    assert "needs --auto-tune-cdf" in capsys.readouterr().err
    assert controller_cli.main(["tune-bpf", "--host", "hv1",
                                "--auto-tune-load", "0.5",
                                "--auto-tune-cdf", CDF,
                                "--auto-tune-model", MODEL]) == 2
    assert "expected NAME=COMMAND" in capsys.readouterr().err
    # The operator's policy gives the bounds: T within 1000 / 1.05 and
    # 1000 x 1.05, so the push stops at 953 where the step allows 667.
    pol = tmp_path / "policy.json"
    pol.write_text(json.dumps(Policy.from_text(POLICY).to_json()))
    assert controller_cli.main([
        "tune-bpf", "--host", a, "--rounds", "1", "--policy", str(pol),
        "--auto-tune-load", "0.6", "--auto-tune-model", MODEL,
        "--auto-tune-cdf", CDF, "--auto-tune-min-packets", "10",
        "--auto-tune-confirm", "1", "--auto-tune-min-interval", "0",
        "--auto-tune-trim", "0", "--auto-tune-source-cap", "1",
        "--auto-tune-margin", "0.01", "--auto-tune-bound-factor",
        "1.05"]) == 0
    new = Policy.from_text((da / "policy").read_text())
    assert 1000 / 1.05 - 1 <= new.threshold < 1000
    assert controller_cli.main(["tune-bpf", "--host", a, "--policy",
                                str(tmp_path / "none.json"),
                                "--auto-tune-load", "0.5",
                                "--auto-tune-cdf", CDF,
                                "--auto-tune-model", MODEL]) == 1
    assert "none.json" in capsys.readouterr().err

"""Unit tests of panda-qos (pandaovs.qos; no OVS needed: the system test is
tests/system/test_qos.py)."""

import os
import subprocess

import pytest

from pandaovs import paths
from pandaovs import qos as pq

SCRIPT = os.path.join(paths.TOP, "tools", "panda-qos")


@pytest.mark.parametrize("text,bits", [
    ("50M", 50 * 10**6), ("50mbit", 50 * 10**6), ("1G", 10**9),
    ("2.5g", 25 * 10**8), ("100k", 10**5), ("1000000", 10**6)])
def test_parse_rate(text, bits):
    assert pq.parse_rate(text) == bits


@pytest.mark.parametrize("text", ["", "fast", "5x", "-1M", "1000"])
def test_parse_rate_rejects(text):
    with pytest.raises(pq.UsageError):
        pq.parse_rate(text)


def test_htb_burst_units(capsys):
    """--burst is bytes (the project's unit for sizes); --burst-bits keeps
    linux-htb's and the earlier versions' unit.  A bare number warns that
    the unit changed."""
    assert pq.htb_burst_bits("15K", None, 10**9) == 8 * 15000
    assert pq.htb_burst_bits("64Ki", None, 10**9) == 8 * 65536
    assert capsys.readouterr().err == ""
    assert pq.htb_burst_bits("20000", None, 10**9) == 8 * 20000
    assert "taken as bytes" in capsys.readouterr().err
    assert pq.htb_burst_bits(None, "20000", 10**9) == 20000
    # Default: 1 ms at the rate, at least two full frames.
    assert pq.htb_burst_bits(None, None, 10**9) == 10**6
    assert pq.htb_burst_bits(None, None, 10**6) == 2 * 8 * 1514
    for burst, bits, msg in (("1000B", None, "at least one full frame"),
                             ("15 kbit", None, "not a size"),
                             (None, "1514", "at least one full frame"),
                             ("15K", "20000", "give one")):
        with pytest.raises(pq.UsageError, match=msg):
            pq.htb_burst_bits(burst, bits, 10**9)


def test_parse_dscp():
    assert pq.parse_dscp("46/26/18/0", 4) == [46, 26, 18, 0]
    with pytest.raises(pq.UsageError, match="3 values"):
        pq.parse_dscp("46/26/18", 4)
    with pytest.raises(pq.UsageError, match="64"):
        pq.parse_dscp("46/26/18/64", 4)


def test_plan_queues_priorities_and_dscp():
    args, min_rates = pq.plan_htb("p1", 50 * 10**6, 4, [1, 2, 3, 4], 0.1,
                                  20000)
    assert min_rates == pq.htb_min_rates(50 * 10**6, 4, 0.1)
    text = " ".join(args)
    for i, r in enumerate(min_rates):
        assert ("--id=@q%d create Queue other_config:priority=%d "
                "other_config:min-rate=%d" % (i, i, r)) in text
    assert "set Port p1 qos=@qos" in text
    assert "type=linux-htb other_config:max-rate=50000000" in text
    for i in range(4):
        assert "queues:%d=@q%d" % (i, i) in text
        assert ("--id=@q%d create Queue other_config:priority=%d" % (i, i)
                in text)
        assert "dscp=%d" % (i + 1) in text
    args, _ = pq.plan_htb("p1", 10**9, 2, None, 0.1, 20000)
    assert not any(a.startswith("dscp=") for a in args)


def test_htb_min_rates_keep_level_0_first():
    # The lower levels share min_share evenly; level 0 is guaranteed the
    # rest, so the guarantees add up to the link and none of a lower
    # level's can pass ahead of level 0 (HTB serves classes within their
    # guarantee before borrowing ones).
    rate = 50 * 10**6
    rates = pq.htb_min_rates(rate, 8, 0.1)
    assert rates[1:] == [rate // 10 // 7] * 7
    assert rates[0] == rate - 7 * (rate // 10 // 7)
    assert sum(rates) == rate
    assert rates[0] > sum(rates[1:])
    assert pq.htb_min_rates(rate, 1, 0.1) == [rate]
    # A tiny share still guarantees each lower level a frame per second.
    frame_bits = 8 * pq.HTB_MIN_BURST_BYTES
    assert pq.htb_min_rates(10**6, 8, 0.001)[1:] == [frame_bits] * 7


def test_tc_htb_plan_rates_and_quantum():
    cmds = pq.tc_htb_plan("eth1", 10**9, 4, 0.1)
    leaves = [c for c in cmds
              if "parent" in c and c[c.index("parent") + 1] == "1:fffe"]
    assert len(leaves) == 4
    for i, c in enumerate(leaves):
        assert c[c.index("classid") + 1] == "1:%x" % (i + 1)
        assert c[c.index("prio") + 1] == str(i)
        assert (c[c.index("rate") + 1]
                == "%dbit" % pq.htb_min_rates(10**9, 4, 0.1)[i])
        assert c[c.index("quantum") + 1] == "1500"


def test_plan_sched_records():
    args = pq.plan_sched("p1", 50 * 10**6, 4, [1, 2, 3, 4],
                         [("ecn-threshold", "30000"), ("2.per-flow", "false")])
    text = " ".join(args)
    assert ("create QoS type=panda-sched other_config:max-rate=50000000 "
            "other_config:levels=4 other_config:ecn-threshold=30000 "
            "other_config:2.per-flow=false external_ids:panda-qos=4") in text
    for i in range(4):
        assert "queues:%d=@q%d" % (i, i) in text
        assert "dscp=%d" % (i + 1) in text
    assert "priority" not in text and "min-rate" not in text


def options(*argv):
    return pq.parser().parse_args(["add", "p1", "--rate", "1G"] + list(argv))


def test_sched_settings_from_options():
    a = options("--ecn-threshold", "30000", "--guard", "50", "--fifo-levels",
                "--limit-packets", "100", "--set", "burst=62500",
                "--set", "3.quantum=3000")
    assert pq.sched_settings(a) == [
        ("ecn-threshold", "30000"), ("guard", "50"),
        ("limit-packets", "100"), ("per-flow", "false"),
        ("burst", "62500"), ("3.quantum", "3000")]
    assert pq.sched_settings(options()) == []


@pytest.mark.parametrize("argv,msg", [
    (["--set", "guard"], "expected KEY=VALUE"),
    (["--set", "=5"], "expected KEY=VALUE"),
    (["--set", "Guard=5"], "expected KEY=VALUE"),
    (["--guard", "5", "--set", "guard=6"], "'guard' given twice"),
    (["--fifo-levels", "--set", "per-flow=true"], "'per-flow' given twice"),
    (["--set", "levels=4"], "--levels, not --set"),
    (["--ecn-threshold", "-1"], "--ecn-threshold -1: must not be negative"),
])
def test_sched_settings_refused(argv, msg):
    with pytest.raises(pq.UsageError, match=msg):
        pq.sched_settings(options(*argv))


def test_options_of_the_other_type_are_refused():
    with pytest.raises(pq.UsageError, match="--burst: an htb option"):
        pq.check_options(options("--burst", "20000"))
    with pytest.raises(pq.UsageError, match="--guard: a panda-sched option"):
        pq.check_options(options("--type", "htb", "--guard", "10"))
    with pytest.raises(pq.UsageError, match="--set: a panda-sched option"):
        pq.check_options(options("--type", "htb", "--set", "burst=1"))
    pq.check_options(options("--type", "htb", "--min-share", "0.2"))


def test_parse_status():
    assert pq.parse_status('{config="levels=8,guard=0", state=active}') == {
        "config": "levels=8,guard=0", "state": "active"}
    assert pq.parse_status(
        '{error="max-rate: \\"50MB\\": unknown unit", state=refused}') == {
        "error": 'max-rate: "50MB": unknown unit', "state": "refused"}
    assert pq.parse_status("{}") == {}


def run(*args):
    """The operator's command: the tools/panda-qos launcher."""
    return subprocess.run([SCRIPT] + list(args), capture_output=True,
                          text=True)


def test_cli_errors_are_clear():
    r = run("add", "p1", "--rate", "fast", "--vsctl", "true")
    assert r.returncode == 2 and "--rate: 'fast' is not a rate" in r.stderr
    r = run("add", "p1", "--rate", "1G", "--levels", "9", "--vsctl", "true")
    assert r.returncode == 2 and "--levels 9" in r.stderr
    r = run("add", "p1", "--rate", "1G", "--type", "htb", "--guard", "5",
            "--vsctl", "true")
    assert r.returncode == 2 and "linux-htb has one FIFO" in r.stderr
    # Failures at run time: exit status 1.
    r = run("add", "p1", "--rate", "1G", "--vsctl", "/nonexistent/vsctl")
    assert r.returncode == 1 and "cannot run /nonexistent/vsctl" in r.stderr
    r = run("add", "p1", "--rate", "1G", "--vsctl", "false")
    assert r.returncode == 1 and "failed" in r.stderr


def test_dry_run_prints_command():
    # 'true' stands in for ovs-vsctl: the port lookup succeeds, and the
    # change is only printed.
    r = run("add", "p1", "--rate", "1G", "--levels", "2", "-n",
            "--type", "htb", "--vsctl", "true")
    assert r.returncode == 0, r.stderr
    assert "would run: true --timeout=30 -- set Port p1 qos=@qos" in r.stdout
    assert "type=linux-htb" in r.stdout
    assert "queue 1 -> tc class 1:2  priority 1" in r.stdout
    # panda-sched is the default.
    r = run("add", "p1", "--rate", "50M", "--levels", "2", "-n",
            "--ecn-threshold", "30000", "--vsctl", "true")
    assert r.returncode == 0, r.stderr
    assert ("create QoS type=panda-sched other_config:max-rate=50000000 "
            "other_config:levels=2 other_config:ecn-threshold=30000"
            in r.stdout)
    assert "p1: panda-sched QoS, link rate 50000000 bit/s, 2 levels" \
        in r.stdout

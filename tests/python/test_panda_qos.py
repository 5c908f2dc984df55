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


def test_parse_dscp():
    assert pq.parse_dscp("46/26/18/0", 4) == [46, 26, 18, 0]
    with pytest.raises(pq.UsageError, match="3 values"):
        pq.parse_dscp("46/26/18", 4)
    with pytest.raises(pq.UsageError, match="64"):
        pq.parse_dscp("46/26/18/64", 4)


def test_plan_queues_priorities_and_dscp():
    args, min_rate = pq.plan("p1", 50 * 10**6, 4, [1, 2, 3, 4], 0.1, 20000)
    assert min_rate == 50 * 10**6 // 10 // 4
    text = " ".join(args)
    assert "set Port p1 qos=@qos" in text
    assert "type=linux-htb other_config:max-rate=50000000" in text
    for i in range(4):
        assert "queues:%d=@q%d" % (i, i) in text
        assert ("--id=@q%d create Queue other_config:priority=%d" % (i, i)
                in text)
        assert "dscp=%d" % (i + 1) in text
    args, _ = pq.plan("p1", 10**9, 2, None, 0.1, 20000)
    assert not any(a.startswith("dscp=") for a in args)


def run(*args):
    """The operator's command: the tools/panda-qos launcher."""
    return subprocess.run([SCRIPT] + list(args), capture_output=True,
                          text=True)


def test_cli_errors_are_clear():
    r = run("add", "p1", "--rate", "fast", "--vsctl", "true")
    assert r.returncode == 2 and "bad rate 'fast'" in r.stderr
    r = run("add", "p1", "--rate", "1G", "--levels", "9", "--vsctl", "true")
    assert r.returncode == 2 and "--levels 9" in r.stderr
    r = run("add", "p1", "--rate", "1G", "--vsctl", "/nonexistent/vsctl")
    assert r.returncode == 2 and "cannot run /nonexistent/vsctl" in r.stderr
    r = run("add", "p1", "--rate", "1G", "--vsctl", "false")
    assert r.returncode == 2 and "failed" in r.stderr


def test_dry_run_prints_command():
    # 'true' stands in for ovs-vsctl: the port lookup succeeds, and the
    # change is only printed.
    r = run("add", "p1", "--rate", "1G", "--levels", "2", "-n",
            "--vsctl", "true")
    assert r.returncode == 0, r.stderr
    assert "would run: true --timeout=30 -- set Port p1 qos=@qos" in r.stdout
    assert "queue 1 -> tc class 1:2  priority 1" in r.stdout

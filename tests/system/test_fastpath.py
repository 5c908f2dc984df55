"""Smoke test of the fast-path benchmark (bench/bench-fastpath.py --quick):
OVS-DPDK with a net_pcap port replaying a pcap the benchmark wrote into a
net_null port, one PMD thread, hugepages reserved and given back.  It runs
each configuration for a second and checks that the benchmark measured
what it says it measures, never how fast:

  - every run received packets on the PMD thread, on the fast path (no
    upcalls once warm), and the null port sent what arrived (so the
    cycles are those of forwarding, not of dropping);
  - the panda action classified the pcap's 1000 connections, all at level
    0 (64-byte frames: 6 payload bytes, below T), and the scheduler, with
    or without the action, sent the packets through level 0;
  - the result file records the CPU model, the load average and a ratio
    against the baseline for every configuration.

Skipped, with the benchmark's reason (its exit status 77), without root,
a DPDK build (DPDK=1 ./build.sh, $PANDA_DPDK_BUILD_DIR), hugepages or DPDK's
net_pcap and net_null drivers.  Half a minute.
"""

import json
import os
import re
import subprocess

import pytest

from pandaovs import paths

BENCH = os.path.join(paths.TOP, "bench", "bench-fastpath.py")
QUICK_CONFIGS = ("none", "action", "action+sched", "sched")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("fastpath") / "fastpath.json")
    res = subprocess.run([paths.PY, BENCH, "--quick", "--json", out],
                         capture_output=True, text=True, timeout=600,
                         env=paths.module_env())
    if res.returncode == 77:
        pytest.skip(res.stderr.strip())
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    with open(out) as f:
        data = json.load(f)
    data["stdout"] = res.stdout
    return data


def test_every_run_forwarded_on_the_fast_path(quick):
    (point,) = quick["points"]
    assert point["conns"] == 1000 and point["size"] == "64", point
    assert sorted(point["runs"]) == sorted(QUICK_CONFIGS)
    for config, runs in point["runs"].items():
        assert len(runs) == 2, (config, runs)       # One ABBA pass.
        for r in runs:
            assert r["packets"] > 10000 and r["mpps"] > 0.01, (config, r)
            assert r["cycles_per_pkt"] and r["oncpu_cycles_per_pkt"], r
            # Warm: the flow was installed before the measured runs.
            assert r["upcalls"] <= 0.001 * r["packets"], (config, r)
            # Unshaped, the null port sends what arrived (the counters
            # are read a few ms apart, hence the margin).
            assert abs(r["tx_mpps"] - r["mpps"]) <= 0.1 * r["mpps"], \
                (config, r)
            assert len(r["pmds"]) == 1, r


def test_action_classified_every_connection(quick):
    (point,) = quick["points"]
    show = point["panda_show"]
    assert re.search(r"connections: 1000 ", show), show
    m = re.search(r"packets per level: 0:(\d+) 1:(\d+) 2:(\d+) 3:(\d+)",
                  show)
    assert m and int(m.group(1)) > 0 and \
        int(m.group(2)) == int(m.group(3)) == int(m.group(4)) == 0, show


def test_scheduler_sent_through_level_0(quick):
    (point,) = quick["points"]
    for config in ("action+sched", "sched"):
        show = point["sched_show"][config]
        m = re.search(r"^  level 0: .*sent=(\d+)p", show, re.M)
        assert m and int(m.group(1)) > 10000, (config, show)


def test_result_records_machine_and_ratios(quick):
    m = quick["machine"]
    assert m["cpu_model"] and len(m["loadavg"]) == 3, m
    assert len(m["loadavg_end"]) == 3
    s = quick["points"][0]["summary"]
    assert s["none"]["rate_ratio"] == pytest.approx(1.0)
    for config in QUICK_CONFIGS:
        assert 0 < s[config]["rate_ratio"] < 2, (config, s[config])
        assert s[config]["oncpu_cycles_per_pkt"]["n"] == 2
    assert "Summary: rate ratio against no action" in quick["stdout"]


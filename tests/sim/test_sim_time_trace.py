"""panda-sim --time-trace-ms: ports-time.csv (each host port's backlog and
counters per level, every period) and flows-time.csv (each running flow's
bytes received, level, window and TCP events) agree with the run's own
records: per-flow TCP events add up to run.json's totals, levels follow
the policy, counters only grow, backlogs stay within the buffer.  Seconds;
skipped without the simulator (the panda_sim fixture of the root
conftest.py)."""

import csv
import json
import subprocess
from collections import defaultdict

THRESHOLDS = (21415, 51341, 138131, 903520, 1876707, 4170134, 7945926)
PIAS = ("id=2,kind=pias,thresholds=%s,dscp=1/2/3/4/5/6/7/8,"
        "queues=0/1/2/3/4/5/6/7" % "/".join(map(str, THRESHOLDS)))
SIZES = (2_000_000, 200_000, 30_000)


def trace(panda_sim, tmp_path, *args):
    lst = tmp_path / "flows.txt"
    lst.write_text("0 %d\n5000 %d\n8000 %d\n" % SIZES)
    out = tmp_path / "o"
    res = subprocess.run(
        [panda_sim, "--flow-list=%s" % lst, "--rpc-pairs=0",
         "--edge-rate=50Mbps", "--time-trace-ms=2", "--out=%s" % out]
        + list(args), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    rows = {}
    for name in ("ports-time", "flows-time", "flows"):
        with open(out / (name + ".csv"), newline="") as f:
            rows[name] = list(csv.DictReader(f))
    with open(out / "run.json") as f:
        rows["run"] = json.load(f)
    return rows


def last_rows(flow_rows):
    last = {}
    for r in flow_rows:
        last[r["id"]] = r
    return last


def test_dctcp_pias_levels_and_marks(panda_sim, tmp_path):
    """Three flows under PIAS with DCTCP at 50 Mbit/s (K = 20 packets):
    the flows' rows every 2 ms until they finish (the last with every
    byte), bytes and levels never going down, the 2 MB flow reaching
    level 5 (its size is between the 5th and 6th thresholds) and backing
    off from ECN echoes; the per-flow events add up to run.json's; the
    ports' rows have 8 levels per host and sample, backlogs within the
    buffer and counters that never decrease."""
    t = trace(panda_sim, tmp_path, "--scheme=pias", "--policy=" + PIAS,
              "--cc=dctcp", "--buffer-pkts=50", "--ecn-pkts=20")
    run = t["run"]
    assert run["config"]["time_trace_ms"] == 2

    by_flow = defaultdict(list)
    for r in t["flows-time"]:
        by_flow[r["id"]].append(r)
    assert sorted(by_flow) == ["0", "1", "2"]
    finish = {r["id"]: int(r["finish_ns"]) for r in t["flows"]}
    for fid, rs in by_flow.items():
        times = [int(r["t_ns"]) for r in rs]
        # Every 2 ms; the run's end (the last flow's finish) adds one.
        assert all(b - a == 2_000_000 for a, b in zip(times, times[1:-1]))
        assert 0 < times[-1] - times[-2] <= 2_000_000
        got = [int(r["received"]) for r in rs]
        assert got == sorted(got)
        size = int(rs[0]["size"])
        assert got[-1] == size
        # The first sample after the flow's finish is its last row.
        assert finish[fid] > 0 and times[-2] < finish[fid] <= times[-1]
        levels = [int(r["level"]) for r in rs if r["level"] != "-1"]
        assert levels == sorted(levels)
    big = by_flow["0"]
    assert max(int(r["level"]) for r in big) == 5
    assert max(int(r["cwnd"]) for r in big) > 10 * 1448
    end = last_rows(t["flows-time"])
    assert int(end["0"]["cwrs"]) > 0
    # ECN negotiated (ns-3's EcnState: 0 is off), and the sinks'
    # listener, which takes no data, never changed its ECN state.
    assert all(r["ecn_state"] not in ("0", "-1") for r in big)
    assert run["tcp"]["flow_listener_ecn_changes"] == 0
    assert sum(int(r["losses"]) for r in end.values()) == run["tcp"]["rto"]
    assert sum(int(r["recoveries"]) for r in end.values()) \
        == run["tcp"]["fast_recovery"]

    ports = t["ports-time"]
    samples = {r["t_ns"] for r in ports}
    assert len(ports) == len(samples) * 2 * 8
    assert {r["host"] for r in ports} == {"0", "1"}
    limit = run["config"]["buffer_bytes"]
    series = defaultdict(list)
    for r in ports:
        assert 0 <= int(r["backlog_bytes"]) <= limit
        series[(r["host"], r["level"])].append(r)
    for rs in series.values():
        for col in ("enqueued_packets", "sent_bytes", "mark_ecn"):
            v = [int(r[col]) for r in rs]
            assert v == sorted(v), col
    marked = sum(int(rs[-1]["mark_ecn"]) for rs in series.values())
    assert marked > 0
    # The host ports are half of the dumbbell's ports: their marks are
    # within run.json's total over all scheduler ports.
    assert marked <= sum(lv["mark_ecn"] for lv in run["sched"]["levels"])


def test_losses_counted_per_flow(panda_sim, tmp_path):
    """FIFO with a 10-packet buffer and CUBIC: drops, so RTOs or fast
    recoveries, each counted at the flow that had them (the sums are
    run.json's); a queue without levels has one row per host and
    sample, level -1."""
    t = trace(panda_sim, tmp_path, "--scheme=fifo", "--cc=cubic",
              "--buffer-pkts=10", "--ecn-pkts=0")
    run = t["run"]
    end = last_rows(t["flows-time"])
    losses = sum(int(r["losses"]) for r in end.values())
    recoveries = sum(int(r["recoveries"]) for r in end.values())
    assert losses + recoveries > 0
    assert (losses, recoveries) == (run["tcp"]["rto"],
                                    run["tcp"]["fast_recovery"])
    assert all(r["level"] == "-1" for r in end.values())
    ports = t["ports-time"]
    assert {r["level"] for r in ports} == {"-1"}
    assert len(ports) == 2 * len({r["t_ns"] for r in ports})
    assert max(int(r["drop_limit"]) for r in ports) > 0


def test_refused(panda_sim, tmp_path):
    lst = tmp_path / "flows.txt"
    lst.write_text("0 1000\n")
    for value, msg in (("-1", "--time-trace-ms: 0 (off) up to --max-time"),
                       ("0.01", "--time-trace-ms: at least 0.1"),
                       ("40000", "--time-trace-ms: 0 (off) up to --max-time")):
        res = subprocess.run(
            [panda_sim, "--flow-list=%s" % lst, "--rpc-pairs=0",
             "--time-trace-ms=" + value, "--out=%s" % (tmp_path / "o")],
            capture_output=True, text=True, timeout=60)
        assert res.returncode == 2, value
        assert msg in res.stderr, (value, res.stderr)
        assert not (tmp_path / "o" / "ports-time.csv").exists()

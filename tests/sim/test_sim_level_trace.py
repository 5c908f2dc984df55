"""panda-sim --level-trace: levels.csv holds, per host and connection,
the packets and payload bytes the host's marker put at each level, and
they agree with the policy and with run.json's per-level totals; a scheme
that does not mark by a policy refuses the option.  Seconds; skipped
without the simulator (the panda_sim fixture of the root conftest.py)."""

import csv
import json
import subprocess

THRESHOLDS = (21415, 51341, 138131, 903520, 1876707, 4170134, 7945926)
POLICY = ("id=2,kind=pias,thresholds=%s,dscp=1/2/3/4/5/6/7/8,"
          "queues=0/1/2/3/4/5/6/7" % "/".join(map(str, THRESHOLDS)))
SIZE = 10_000_000


def test_one_flow_climbs_through_every_level(panda_sim, tmp_path):
    """One 10 MB flow under PIAS: its connection's payload bytes per level
    are the widths between the thresholds (the packet that crosses one
    still counts at the level below, so each level gets the width rounded
    to whole segments), all 10 MB in total, and the marker's per-level
    packet counts in run.json are levels.csv's sums over connections."""
    lst = tmp_path / "flows.txt"
    lst.write_text("0 %d\n" % SIZE)
    out = tmp_path / "o"
    res = subprocess.run(
        [panda_sim, "--flow-list=%s" % lst, "--scheme=pias", "--cc=dctcp",
         "--rpc-pairs=0", "--edge-rate=1Gbps", "--policy=" + POLICY,
         "--level-trace", "--out=%s" % out],
        capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    with open(out / "levels.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    data = [r for r in rows if r["dport"] == "5001"]
    assert len(data) == 1, rows
    got = [int(data[0]["bytes_l%d" % i]) for i in range(8)]
    assert sum(got) == SIZE
    bounds = (0,) + THRESHOLDS + (SIZE,)
    for lv in range(8):
        width = bounds[lv + 1] - bounds[lv]
        assert abs(got[lv] - width) <= 1448, (lv, got, width)
    assert int(data[0]["first_ns"]) <= int(data[0]["last_ns"])
    with open(out / "run.json") as f:
        run = json.load(f)
    assert run["config"]["level_trace"] is True
    per_level = [sum(int(r["packets_l%d" % i]) for r in rows)
                 for i in range(8)]
    assert per_level == run["marking"]["packets_per_level"][:8]


def test_refused_without_policy_marking(panda_sim, tmp_path):
    lst = tmp_path / "flows.txt"
    lst.write_text("0 1000\n")
    res = subprocess.run(
        [panda_sim, "--scheme=fifo", "--flow-list=%s" % lst,
         "--rpc-pairs=0", "--level-trace", "--out=%s" % (tmp_path / "o")],
        capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "--level-trace: scheme fifo does not mark by a policy" \
        in res.stderr
    assert not (tmp_path / "o" / "levels.csv").exists()

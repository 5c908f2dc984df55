"""panda-sim --rpc-level: the memcached-like connection's segments, both
directions, go at the given level whatever the policy's counter says, and
nothing else moves (the experiment that puts PIAS's memcached on top, or
Panda's at the bottom); bad values are refused naming the option.
Seconds; skipped without the simulator (the panda_sim fixture of the root
conftest.py)."""

import csv
import json
import subprocess

from pandaovs import paths

THRESHOLDS = (21415, 51341, 138131, 903520, 1876707, 4170134, 7945926)
PIAS = ("id=2,kind=pias,thresholds=%s,dscp=1/2/3/4/5/6/7/8,"
        "queues=0/1/2/3/4/5/6/7" % "/".join(map(str, THRESHOLDS)))
PANDA = ("id=1,threshold=1448,thresholds=%s,dscp=1/2/3/4/5/6/7/8,"
         "queues=0/1/2/3/4/5/6/7" % "/".join(map(str, THRESHOLDS)))
RPC_PORT = "11211"


def run(panda_sim, out, *args):
    return subprocess.run(
        [panda_sim, "--rpc-pairs=1", "--rpc-requests=400", "--rpc-rate=0",
         "--rpc-cdf=" + paths.cdf("memcached-values.cdf"), "--cc=dctcp",
         "--edge-rate=1Gbps", "--level-trace", "--out=%s" % out]
        + list(args), capture_output=True, text=True, timeout=120)


def rpc_rows(out):
    with open(out / "levels.csv", newline="") as f:
        return [r for r in csv.DictReader(f)
                if RPC_PORT in (r["sport"], r["dport"])]


def packets(rows):
    return [sum(int(r["packets_l%d" % i]) for r in rows) for i in range(8)]


def test_pias_memcached_pinned_on_top(panda_sim, tmp_path):
    """400 GETs under PIAS: without the option the connection's counter
    passes the first thresholds and its packets spread over the levels
    below 0; with --rpc-level=0 every packet of both directions is at
    level 0, the counter is the same (the policy still counts), and
    run.json says where the packets went and where the policy would put
    them."""
    free, pinned = tmp_path / "free", tmp_path / "pinned"
    res = run(panda_sim, free, "--scheme=pias", "--policy=" + PIAS)
    assert res.returncode == 0, res.stderr[-2000:]
    res = run(panda_sim, pinned, "--scheme=pias", "--policy=" + PIAS,
              "--rpc-level=0")
    assert res.returncode == 0, res.stderr[-2000:]

    before = packets(rpc_rows(free))
    assert sum(before[1:]) > 0, before
    after_rows = rpc_rows(pinned)
    assert len(after_rows) == 2        # Requests and responses.
    after = packets(after_rows)
    assert after[0] == sum(after) and sum(after) == sum(before), after

    runs = [json.load(open(d / "run.json")) for d in (free, pinned)]
    assert runs[0]["config"]["rpc_level"] == -1
    assert runs[1]["config"]["rpc_level"] == 0
    (c0,), (c1,) = (r["marking"]["rpc_connections"] for r in runs)
    assert c0["counter"] == c1["counter"] > THRESHOLDS[1]
    assert c0["level"] == c0["policy_level"] == c1["policy_level"] > 1
    assert c1["level"] == 0


def test_panda_memcached_demoted(panda_sim, tmp_path):
    """Under Panda the connection stays at level 0; --rpc-level=6 puts all
    of it at level 6."""
    out = tmp_path / "o"
    res = run(panda_sim, out, "--scheme=panda", "--policy=" + PANDA,
              "--rpc-level=6")
    assert res.returncode == 0, res.stderr[-2000:]
    got = packets(rpc_rows(out))
    assert got[6] == sum(got) > 400, got
    (conn,) = json.load(open(out / "run.json"))["marking"]["rpc_connections"]
    assert (conn["level"], conn["policy_level"]) == (6, 0)


def test_refused(panda_sim, tmp_path):
    two = "id=2,kind=pias,thresholds=100000,dscp=1/2,queues=0/1"
    cases = [
        (("--scheme=pias", "--policy=" + PIAS, "--rpc-level=8"),
         "--rpc-level: 0..7"),
        (("--scheme=pias", "--policy=" + PIAS, "--rpc-level=-2"),
         "--rpc-level: 0..7"),
        (("--scheme=pias", "--policy=" + two, "--rpc-level=2"),
         "--rpc-level: 2 is not a level of the policy (0..1)"),
        (("--scheme=fifo", "--rpc-level=0"),
         "--rpc-level: scheme fifo does not mark by a policy"),
    ]
    for args, msg in cases:
        res = run(panda_sim, tmp_path / "o", *args)
        assert res.returncode == 2, (args, res.stderr)
        assert msg in res.stderr, (args, res.stderr)
    res = subprocess.run(
        [panda_sim, "--scheme=pias", "--policy=" + PIAS, "--rpc-pairs=0",
         "--rpc-level=0", "--flows=1", "--concurrency=1",
         "--cdf=" + paths.cdf("web-search.cdf"), "--out=%s" % (tmp_path / "p")],
        capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "--rpc-level needs --rpc-pairs" in res.stderr

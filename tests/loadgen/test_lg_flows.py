"""panda-fg-server / panda-fg-client on loopback."""
import bisect
import math
import os
import signal
import socket
import struct
import subprocess
import sys
import time

import pytest

from pandalab.sandbox import end_process

from lg_helpers import (cdf, load_json, nearest_rank, read_flows, run,
                        wait_output)

WEB = cdf("web-search.cdf")
MINING = cdf("data-mining.cdf")


def read_cdf(path):
    pts = []
    with open(path) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                v, p = line.split()
                pts.append((float(v), float(p)))
    return pts


def cdf_eval(pts, x):
    """F(x) of the piecewise-linear CDF (same model as lib/panda/cdf.c)."""
    if x < pts[0][0]:
        return 0.0
    for (v0, p0), (v1, p1) in zip(pts, pts[1:]):
        if v0 <= x < v1:
            return p0 + (p1 - p0) * (x - v0) / (v1 - v0)
    return 1.0


def dry_run(lg_bin, *args):
    r = run([lg_bin.fg_client, "--dry-run"] + list(args))
    assert r.returncode == 0, r.stderr
    rows = [l.split() for l in r.stdout.splitlines() if not l.startswith("#")]
    return [int(x[1]) for x in rows], [x[2] for x in rows]


# ---- Command line. ----

def test_help(lg_bin):
    for prog, words in ((lg_bin.fg_server, ["--bind", "--port-file",
                                            "--threads", "--json"]),
                        (lg_bin.fg_client, ["--connections", "--load",
                                            "--cdf", "--pool", "--requests",
                                            "--duration", "--json",
                                            "--output"]),
                        (lg_bin.mc_client, ["--requests", "--samples",
                                            "--connections", "--cdf"])):
        r = run([prog, "--help"])
        assert r.returncode == 0
        for w in words:
            assert w in r.stdout


@pytest.mark.parametrize("args, message, status", [
    (["--bogus"], "unrecognized option", 2),
    (["--size", "10K"], "--requests=N and/or --duration", 2),
    (["--requests", "5"], "exactly one of --cdf=FILE and --size", 2),
    (["--requests", "5", "--size", "10K", "--cdf", WEB], "exactly one of", 2),
    (["-n", "5", "--size", "ten"], "--size: \"ten\" is not a size", 2),
    (["-n", "5", "--size", "0"], "--size: 0 is out of range", 2),
    (["-n", "5", "--size", "1K", "--connections", "0"],
     "--connections: 0 is out of range", 2),
    (["-n", "5", "--size", "1K", "-c", "2", "--load", "10"],
     "exclude each other", 2),
    (["-n", "5", "--size", "1K", "--load", "-3"],
     "--load: \"-3\" is not a rate", 2),
    (["-n", "5", "--size", "1K", "--dscp", "64"],
     "--dscp: 64 is out of range", 2),
    (["-n", "5", "--size", "1K", "--duration", "5x"],
     "--duration: \"5x\" is not a duration", 2),
    (["-n", "x", "--size", "1K"], "--requests: \"x\" is not a", 2),
    (["--duration", "5", "--size", "1K", "--dry-run"], "--dry-run needs", 2),
    (["-n", "5", "--size", "1K", "extra"], "unexpected argument", 2),
    # The old -n (flows in flight) beside the old --flows: refused, not
    # silently read as two numbers of requests.
    (["-n", "4", "--flows", "100", "--size", "1K"], "given twice", 2),
    # Failures at run time: exit status 1.
    (["-n", "5", "--size", "1K", "--server", "no.such.host.invalid"],
     "cannot resolve", 1),
    (["-n", "5", "--cdf", "/nonexistent.cdf"],
     "/nonexistent.cdf: cannot open CDF file", 1),
])
def test_client_bad_arguments(lg_bin, args, message, status):
    r = run([lg_bin.fg_client] + args)
    assert r.returncode == status, r.stderr
    assert message in r.stderr
    assert "panda-fg-client" in r.stderr or "Try" in r.stderr


def test_client_deprecated_spellings(lg_bin):
    """--concurrency and --flows still work, with a warning naming the new
    spelling (scripts written for earlier versions)."""
    new = run([lg_bin.fg_client, "--dry-run", "--size", "1K",
               "--connections", "2", "--requests", "3"])
    old = run([lg_bin.fg_client, "--dry-run", "--size", "1K",
               "--concurrency", "2", "--flows", "3"])
    assert new.returncode == old.returncode == 0, old.stderr
    assert old.stdout == new.stdout and new.stderr == ""
    assert "--concurrency is deprecated and will go; use --connections" \
        in old.stderr
    assert "--flows is deprecated and will go; use --requests" in old.stderr


@pytest.mark.parametrize("args, message, status", [
    (["--port", "70000"], "--port: 70000 is out of range", 2),
    (["--threads", "0"], "--threads: 0 is out of range", 2),
    (["extra"], "unexpected argument", 2),
    (["--bind", "256.1.1.1"], "cannot resolve", 1),
])
def test_server_bad_arguments(lg_bin, args, message, status):
    r = run([lg_bin.fg_server] + args, timeout=10)
    assert r.returncode == status
    assert message in r.stderr


def test_server_port_in_use(lg_bin, fg_server):
    s = fg_server()
    r = run([lg_bin.fg_server, "--bind", "127.0.0.1", "--port", str(s.port)],
            timeout=10)
    assert r.returncode == 1
    assert "cannot bind to 127.0.0.1:%d" % s.port in r.stderr


@pytest.mark.parametrize("text, message", [
    ("", "no data points"),
    ("# only a comment\n", "no data points"),
    ("100 0.5\nabc 1\n", ":2: expected \"<value> <probability>\""),
    ("100 0.5\n200\n", ":2: missing cumulative probability"),
    ("100 0.5\n50 1\n", ":2: values not sorted"),
    ("100 0.5\n200 0.4\n300 1\n", ":2: probabilities decrease"),
    ("100 0.5\n200 0.9\n", "last cumulative probability is 0.9, not 1"),
    ("100 1.5\n", ":1: probability 1.5 outside [0, 1]"),
    ("-5 0\n100 1\n", ":1: negative value"),
    ("100 0.5 junk\n200 1\n", ":1: trailing text"),
    # Near DBL_MAX the mean flow size was inf and the client ran with it.
    ("100 0.5\n1.7e308 1\n", ":2: value 1.7e+308 above the largest "
     "supported"),
])
def test_malformed_cdf(lg_bin, tmp_path, text, message):
    path = tmp_path / "bad.cdf"
    path.write_text(text)
    for cmd in ([lg_bin.fg_client, "--requests", "3", "--cdf", str(path)],
                [lg_bin.mc_client, "--cdf", str(path)]):
        r = run(cmd)
        assert r.returncode == 1, r.stderr
        assert "--cdf: %s" % path in r.stderr
        assert message in r.stderr


# ---- The flow sequence. ----

@pytest.mark.parametrize("path", [WEB, MINING])
def test_sizes_follow_cdf(lg_bin, path):
    """Sampled sizes follow the CDF: at every CDF point and between points,
    the empirical CDF of 40000 draws (fixed seed) is within the 99.9%
    Kolmogorov-Smirnov band of the file's piecewise-linear CDF."""
    n = 40000
    sizes, _ = dry_run(lg_bin, "--cdf", path, "--requests", str(n), "--seed",
                       "11")
    assert len(sizes) == n
    pts = read_cdf(path)
    assert min(sizes) >= max(1, round(pts[0][0]))
    assert max(sizes) <= pts[-1][0]
    s = sorted(sizes)
    band = 1.95 / math.sqrt(n)
    xs = [v for v, _ in pts]
    xs += [(a + b) / 2 for a, b in zip(xs, xs[1:])]
    worst = 0
    for x in xs:
        emp = bisect.bisect_right(s, x) / n
        worst = max(worst, abs(emp - cdf_eval(pts, x)))
    assert worst < band, "max CDF deviation %.4f > %.4f" % (worst, band)


def test_same_seed_same_flows(lg_bin):
    a, _ = dry_run(lg_bin, "--cdf", WEB, "--requests", "500", "--seed", "5")
    b, _ = dry_run(lg_bin, "--cdf", WEB, "--requests", "500", "--seed", "5")
    c, _ = dry_run(lg_bin, "--cdf", WEB, "--requests", "500", "--seed", "6")
    assert a == b
    assert a != c
    # The size sequence does not depend on the load mode.
    d, arr = dry_run(lg_bin, "--cdf", WEB, "--requests", "500", "--seed", "5",
                     "--load", "100")
    assert d == a
    assert all(x != "-" for x in arr)


def test_poisson_arrivals(lg_bin):
    """Open-loop arrivals are Poisson: exponential gaps whose mean is
    mean size * 8 / load."""
    n = 20000
    _, arr = dry_run(lg_bin, "--size", "100K", "--requests", str(n),
                     "--load", "400", "--seed", "3")
    t = [float(x) for x in arr]
    gaps = [b - a for a, b in zip([0.0] + t, t)]
    mean = sum(gaps) / n
    expect = 100000 * 8 / 400e6
    assert abs(mean - expect) / expect < 0.03
    sd = math.sqrt(sum((g - mean) ** 2 for g in gaps) / n)
    assert abs(sd / mean - 1) < 0.05          # exponential: CV = 1
    below = sum(1 for g in gaps if g <= expect) / n
    assert abs(below - (1 - math.exp(-1))) < 0.02


# ---- Running flows. ----

def check_flows(flows, n):
    assert len(flows) == n
    assert sorted(f["id"] for f in flows) == list(range(n))
    for f in flows:
        assert f["completed"], f
        assert f["fct"] > 0
        assert f["end"] >= f["start"]
        assert f["received"] == f["size"]
        assert abs((f["end"] - f["start"]) * 1e6 - f["fct"]) < 5


def test_all_flows_complete(lg_bin, fg_server, tmp_path):
    s = fg_server()
    out, js = tmp_path / "flows.txt", tmp_path / "sum.json"
    r = run([lg_bin.fg_client, "--port", str(s.port), "--cdf", WEB,
             "--connections", "4", "--requests", "150", "--seed", "2",
             "--output", str(out), "--json", str(js)])
    assert r.returncode == 0, r.stderr
    flows = read_flows(out)
    check_flows(flows, 150)
    # The network run used the dry run's size sequence.
    sizes, _ = dry_run(lg_bin, "--cdf", WEB, "--requests", "150", "--seed", "2")
    assert [f["size"] for f in sorted(flows, key=lambda f: f["id"])] == sizes

    j = load_json(js)
    assert j["flows_started"] == j["flows_completed"] == 150
    assert j["flows_unfinished"] == 0 and j["flows_not_started"] == 0
    assert j["bytes_received"] == sum(sizes)
    assert j["goodput_mbps"] > 0
    buckets = {"small": (0, 100000), "medium": (100000, 10000000),
               "large": (10000000, float("inf"))}
    total = 0
    for name, (lo, hi) in buckets.items():
        fcts = [f["fct"] for f in flows if lo < f["size"] <= hi]
        b = j["fct_us"][name]
        assert b["completed"] == len(fcts)
        total += len(fcts)
        if fcts:
            # The summary's percentiles are those of the per-flow FCTs.
            assert b["p50"] == pytest.approx(nearest_rank(fcts, 50),
                                             abs=0.002)
            assert b["p99"] == pytest.approx(nearest_rank(fcts, 99),
                                             abs=0.002)
            assert b["mean"] == pytest.approx(sum(fcts) / len(fcts),
                                              rel=1e-6)
        else:
            assert b["p50"] is None and b["mean"] is None
    assert total == 150 == j["fct_us"]["all"]["completed"]
    info = s.stop()
    assert info["responses_completed"] == 150
    assert info["bytes_sent"] == sum(sizes)


@pytest.mark.parametrize("window", ["0.3:0.4", "0.5"])
def test_fct_window(lg_bin, fg_server, tmp_path, window):
    """--fct-window S[:L]: fct_window_us summarises exactly the flows that
    started in [S, S+L) after the run's start (L omitted: until the end),
    per bucket, completed or not; the window is reported in wall-clock
    time."""
    s = fg_server()
    out, js = tmp_path / "flows.txt", tmp_path / "sum.json"
    r = run([lg_bin.fg_client, "--port", str(s.port), "--cdf", WEB,
             "--connections", "3", "--duration", "1", "--seed", "7",
             "--fct-window", window, "--output", str(out), "--json",
             str(js)])
    assert r.returncode == 0, r.stderr
    j = load_json(js)
    start = float(window.split(":")[0])
    length = float(window.split(":")[1]) if ":" in window else None
    w = j["fct_window"]
    assert w["start_s"] == start and w["length_s"] == length
    assert w["start_realtime"] == pytest.approx(j["start_realtime"] + start,
                                                abs=1e-5)
    end = (w["start_realtime"] + length if length else j["end_realtime"])
    assert w["end_realtime"] == pytest.approx(end, abs=1e-5)
    flows = [f for f in read_flows(out)
             if w["start_realtime"] <= f["start"] < w["end_realtime"]]
    assert flows
    for name, b in j["fct_window_us"].items():
        # The buckets (and their limits) are those of fct_us.
        lo, hi = b["size_range_bytes"]
        assert [lo, hi] == j["fct_us"][name]["size_range_bytes"]
        mine = [f for f in flows
                if lo < f["size"] and (hi is None or f["size"] <= hi)]
        fcts = [f["fct"] for f in mine if f["completed"]]
        assert b["completed"] == len(fcts), name
        assert b["unfinished"] == len(mine) - len(fcts), name
        if fcts:
            assert b["mean"] == pytest.approx(sum(fcts) / len(fcts),
                                              rel=1e-6)
            assert b["p99"] == pytest.approx(nearest_rank(fcts, 99),
                                             abs=0.002)
    assert j["fct_window_us"]["all"]["completed"] < j["flows_completed"]


@pytest.mark.parametrize("conc", [1, 6, 14])
def test_closed_loop_concurrency(lg_bin, fg_server, tmp_path, conc):
    """Exactly 'conc' flows are in flight: never more (per-flow intervals,
    server-side count) and nearly always that many (time average)."""
    s = fg_server()
    out, js = tmp_path / "flows.txt", tmp_path / "sum.json"
    r = run([lg_bin.fg_client, "--port", str(s.port), "--size", "1M",
             "--connections", str(conc), "--requests", str(40 * conc),
             "--output", str(out), "--json", str(js)])
    assert r.returncode == 0, r.stderr
    flows = read_flows(out)
    check_flows(flows, 40 * conc)
    events = sorted([(f["start"], 1) for f in flows]
                    + [(f["end"], -1) for f in flows],
                    key=lambda e: (e[0], e[1]))
    level = peak = 0
    t_first = min(f["start"] for f in flows)
    t_last = max(f["start"] for f in flows)
    area, prev = 0.0, t_first
    for t, d in events:
        if t_first <= prev and t <= t_last:
            area += level * (t - prev)
        prev = t
        level += d
        peak = max(peak, level)
    assert peak == conc
    # While flows are being started, 'conc' of them are in flight (up to
    # the microsecond rounding of the timestamps and scheduling hiccups).
    assert area / (t_last - t_first) > 0.95 * conc
    j = load_json(js)
    assert j["max_in_flight"] == conc
    # Averaged over the whole run, including the final drain.
    assert j["mean_in_flight"] > 0.75 * conc
    info = s.stop()
    assert 1 <= info["max_active_responses"] <= conc
    assert info["connections_accepted"] == 40 * conc


def test_pool_reuses_connections(lg_bin, fg_server, tmp_path):
    s = fg_server()
    js = tmp_path / "sum.json"
    r = run([lg_bin.fg_client, "--port", str(s.port), "--size", "20K",
             "--connections", "5", "--requests", "400", "--pool",
             "--json", str(js)])
    assert r.returncode == 0, r.stderr
    j = load_json(js)
    assert j["connections"] == "pool"
    assert j["flows_completed"] == 400
    assert j["connections_opened"] == 5
    info = s.stop()
    assert info["connections_accepted"] == 5
    assert info["requests"] == 400


def test_open_loop_load(lg_bin, fg_server, tmp_path):
    s = fg_server()
    out, js = tmp_path / "flows.txt", tmp_path / "sum.json"
    r = run([lg_bin.fg_client, "--port", str(s.port), "--size", "50K",
             "--load", "200", "--duration", "3", "--output", str(out),
             "--json", str(js), "--seed", "4"])
    assert r.returncode == 0, r.stderr
    j = load_json(js)
    expect = 3 * 200e6 / (50000 * 8)             # 1500 flows
    assert abs(j["flows_started"] - expect) < 5 * math.sqrt(expect)
    assert j["flows_completed"] == j["flows_started"]
    assert j["offered_load_mbps"] == pytest.approx(200, rel=0.15)
    assert j["mode"] == "open" and j["concurrency"] is None
    check_flows(read_flows(out), j["flows_started"])


def test_duration_limit(lg_bin, fg_server, tmp_path):
    """--duration stops the starting of flows: none starts after it (but
    the one whose start raced the deadline), whatever the machine's
    speed; those in flight then complete."""
    s = fg_server()
    out, js = tmp_path / "flows.txt", tmp_path / "sum.json"
    t0 = time.time()
    r = run([lg_bin.fg_client, "--port", str(s.port), "--size", "10K",
             "--connections", "3", "--duration", "1", "--output", str(out),
             "--json", str(js)])
    t1 = time.time()
    assert r.returncode == 0, r.stderr
    j = load_json(js)
    assert j["flows_planned"] is None
    assert j["generation_s"] >= 0.99
    assert j["flows_completed"] == j["flows_started"] > 0
    assert t0 <= j["start_realtime"] < j["end_realtime"] <= t1
    flows = read_flows(out)
    assert len(flows) == j["flows_started"]
    late = [f for f in flows if f["start"] > j["start_realtime"] + 1.0]
    assert len(late) <= 1, late


def test_kill_server_mid_run(lg_bin, fg_server, tmp_path):
    """Flows cut off by a dead server are reported unfinished (never with an
    FCT of zero) and the client exits non-zero."""
    s = fg_server()
    out, js = tmp_path / "flows.txt", tmp_path / "sum.json"
    client = subprocess.Popen(
        [lg_bin.fg_client, "--port", str(s.port), "--size", "200M",
         "--connections", "4", "--requests", "40", "--output", str(out),
         "--json", str(js), "--max-failures", "10", "--progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Flows are in flight (closed loop: four, until the server is gone).
    wait_output(client.stderr, "in flight")
    s.kill()
    try:
        _, err = client.communicate(timeout=60)
    finally:
        end_process(client, signal.SIGKILL)
    assert client.returncode == 3, err     # incomplete
    j = load_json(js)
    assert j["flows_unfinished"] >= 4
    assert j["flows_completed"] + j["flows_unfinished"] == j["flows_started"]
    assert j["flows_started"] + j["flows_not_started"] == 40
    assert sum(j["unfinished_reasons"].values()) == j["flows_unfinished"]
    assert set(j["unfinished_reasons"]) <= {"reset", "eof", "refused"}
    flows = read_flows(out)
    bad = [f for f in flows if not f["completed"]]
    assert len(bad) == j["flows_unfinished"]
    for f in bad:
        assert f["fct"] is None and f["end"] is None
        assert f["received"] < f["size"]
        assert f["note"] in j["unfinished_reasons"]
    assert "unfinished" in err


# A client process that asks for flows it never reads: the server's
# responses stall on a full socket buffer whatever the machine's speed, so
# killing the process always aborts them mid-flow.
_STALLED_CLIENT = r"""
import socket, struct, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
conns = []
for i in range(n):
    c = socket.create_connection(("127.0.0.1", port))
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.sendall(struct.pack("!IBBHQQ", 0x50464731, 0, 0, 0, i, 1 << 30))
    conns.append(c)
for c in conns:
    c.recv(1)           # the response has started
print("in flight", flush=True)
time.sleep(600)
"""


def test_server_survives_vanishing_clients(lg_bin, fg_server, tmp_path):
    s = fg_server()
    # A client killed mid-flow (three responses of 1 GiB it never reads).
    client = subprocess.Popen(
        [sys.executable, "-c", _STALLED_CLIENT, str(s.port), "3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_output(client.stdout, "in flight")
    end_process(client, signal.SIGKILL)
    # Garbage, a half request and a request followed by an early close.
    for payload, answer in (
            (b"GET / HTTP/1.0\r\n\r\n" + b"x" * 20, b""),
            (b"PFG1\0\0", None),
            (struct.pack("!IBBHQQ", 0x50464731, 0, 0, 0, 1, 10**9),
             b"\0" * 100)):
        c = socket.create_connection(("127.0.0.1", s.port))
        c.sendall(payload)
        if answer is not None:
            c.settimeout(10)
            try:
                got = c.recv(100)
            except ConnectionResetError:
                got = b""
            assert got == answer
        c.close()
    r = run([lg_bin.fg_client, "--port", str(s.port), "--size", "1M",
             "--connections", "2", "--requests", "20"])
    assert r.returncode == 0, r.stderr
    info = s.stop()
    assert s.proc.returncode == 0
    assert info["responses_aborted"] >= 3
    assert info["bad_requests"] == 1
    assert info["responses_completed"] == 20


def test_server_threads_and_dscp(lg_bin, fg_server, tmp_path):
    s = fg_server(threads=3)
    js = tmp_path / "sum.json"
    r = run([lg_bin.fg_client, "--port", str(s.port), "--cdf", WEB,
             "--connections", "8", "--requests", "100", "--dscp", "10",
             "--json", str(js)])
    assert r.returncode == 0, r.stderr
    j = load_json(js)
    assert j["dscp"] == 10 and j["flows_completed"] == 100
    assert s.stop()["responses_completed"] == 100


def test_no_server(lg_bin, tmp_path, free_port):
    """Nothing listening: every flow is refused, the client stops after
    --max-failures and says so."""
    js = tmp_path / "sum.json"
    r = run([lg_bin.fg_client, "--port", str(free_port()), "--size", "1K",
             "--connections", "2", "--requests", "1000", "--max-failures", "5",
             "--json", str(js)])
    assert r.returncode == 3
    assert "gave up" in r.stderr
    j = load_json(js)
    assert j["aborted"] is True
    assert j["flows_completed"] == 0
    assert j["unfinished_reasons"] == {"refused": j["flows_unfinished"]}
    assert j["flows_not_started"] > 0
    assert j["fct_us"]["all"]["p99"] is None


def test_interrupt_writes_summary(lg_bin, fg_server, tmp_path):
    s = fg_server()
    out, js = tmp_path / "flows.txt", tmp_path / "sum.json"
    client = subprocess.Popen(
        [lg_bin.fg_client, "--port", str(s.port), "--size", "1G",
         "--connections", "2", "--duration", "60", "--output", str(out),
         "--json", str(js), "--quiet", "--progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Two 1 GB flows are in flight (closed loop: a completed one is
    # replaced at once), however fast the machine.
    wait_output(client.stderr, "in flight")
    client.send_signal(signal.SIGINT)
    assert client.wait(timeout=20) == 3
    j = load_json(js)
    assert j["interrupted"] is True
    assert j["unfinished_reasons"].get("interrupted", 0) == 2
    assert os.path.getsize(out) > 0


def test_flow_timeout(lg_bin, tmp_path):
    """A server that accepts but never answers: flows end with
    flow_timeout."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    js = tmp_path / "sum.json"
    try:
        r = run([lg_bin.fg_client, "--port", str(ls.getsockname()[1]),
                 "--size", "1K", "--connections", "2", "--requests", "2",
                 "--flow-timeout", "300ms", "--json", str(js)])
    finally:
        ls.close()
    assert r.returncode == 3
    j = load_json(js)
    # Ended by the flow timeout (a drain timeout would say
    # "drain_timeout").
    assert j["unfinished_reasons"] == {"flow_timeout": 2}


def _run_with_tty_stderr(cmd, timeout=60):
    """Runs 'cmd' with stderr on a pseudo-terminal; returns (rc, stderr)."""
    import pty
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:          # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=timeout), b"".join(chunks).decode()


def test_progress_line_on_terminal(lg_bin, fg_server, tmp_path):
    s = fg_server()
    cmd = [lg_bin.fg_client, "--port", str(s.port), "--size", "10K",
           "--connections", "2", "--duration", "1.5", "--quiet"]
    rc, err = _run_with_tty_stderr(cmd)
    assert rc == 0
    assert "flows done" in err and "/1.5 s" in err
    rc, err = _run_with_tty_stderr(cmd + ["--no-progress"])
    assert rc == 0 and err == ""
    # Not a terminal: no progress line unless asked for.
    r = run(cmd)
    assert r.returncode == 0 and r.stderr == ""
    r = run(cmd[:-1] + ["--requests", "50", "--progress"])
    assert r.returncode == 0
    assert "50/50 flows done" in r.stderr     # the final state


def test_ipv6_loopback(lg_bin, fg_server, tmp_path):
    try:
        socket.socket(socket.AF_INET6).bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback")
    s = fg_server(bind="::1")
    js = tmp_path / "sum.json"
    r = run([lg_bin.fg_client, "--server", "::1", "--port", str(s.port),
             "--size", "64K", "--connections", "3", "--requests", "30",
             "--dscp", "46", "--json", str(js)])
    assert r.returncode == 0, r.stderr
    j = load_json(js)
    assert j["flows_completed"] == 30
    assert j["server"] == "[::1]:%d" % s.port

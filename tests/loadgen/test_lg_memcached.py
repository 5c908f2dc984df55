"""panda-mc-client against a real memcached on loopback."""
import os
import signal
import subprocess
import time

import pytest

from pandalab.sandbox import end_process

from lg_helpers import (cdf, load_json, nearest_rank, run,
                        wait_gets)

VALUES = cdf("memcached-values.cdf")


def read_samples(path):
    rows = []
    with open(path) as f:
        assert f.readline().startswith(
            "# seq conn op value_bytes start_s latency_us status")
        for line in f:
            seq, conn, op, vb, start, lat, st = line.split()
            rows.append({"seq": int(seq), "conn": int(conn), "op": op,
                         "value": int(vb), "start": float(start),
                         "lat": float(lat), "status": st})
    return rows


def mc(lg_bin, port, tmp_path, *args, timeout=120):
    js, smp = tmp_path / "mc.json", tmp_path / "mc.samples"
    r = run([lg_bin.mc_client, "--port", str(port), "--json", str(js),
             "--samples", str(smp)] + list(args), timeout=timeout)
    j = load_json(js) if os.path.exists(js) else None
    rows = read_samples(smp) if os.path.exists(smp) else None
    return r, j, rows


def test_get_latency(lg_bin, memcached, tmp_path):
    _, port = memcached
    t0 = time.time()
    r, j, rows = mc(lg_bin, port, tmp_path, "--cdf", VALUES,
                    "--requests", "3000", "--keys", "500", "--seed", "9")
    t1 = time.time()
    assert r.returncode == 0, r.stderr
    assert j["requests_ok"] == 3000 and j["requests_failed"] == 0
    assert j["status_counts"]["miss"] == 0
    assert j["key_size"] == 64 and j["connections"] == 1
    assert len(rows) == 3000
    assert all(x["status"] == "ok" and x["op"] == "get" and x["lat"] > 0
               for x in rows)
    # The summary is computed from the raw samples (nearest rank).
    lat = [x["lat"] for x in rows]
    g = j["latency_us"]["get"]
    assert g["count"] == 3000 and j["latency_us"]["set"]["count"] == 0
    for key, p in (("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9)):
        assert g[key] == pytest.approx(nearest_rank(lat, p), abs=0.002)
    assert g["max"] == pytest.approx(max(lat), abs=0.002)
    assert g["p50"] <= g["p90"] <= g["p99"] <= g["p99.9"] <= g["max"]
    assert j["outliers"] == sum(1 for x in lat if x > 200e3)
    # The measurement window is wall-clock time inside this test, and each
    # request starts inside it.
    ws, we = j["window_start_realtime"], j["window_end_realtime"]
    assert t0 - 1 <= ws < we <= t1 + 1
    assert all(ws - 1e-3 <= x["start"] <= we for x in rows)
    assert we - ws == pytest.approx(j["window_s"], abs=1e-3)
    # Value sizes follow the CDF: ~85% under 400 B, ~95% up to one MTU,
    # none above 15 KB (500 keys, so loose bounds).
    sizes = [x["value"] for x in rows]
    assert 0.78 < sum(1 for v in sizes if v <= 400) / 3000 < 0.92
    assert 0.92 < sum(1 for v in sizes if v <= 1500) / 3000 < 1.0
    assert max(sizes) <= 15000


def test_same_seed_same_requests(lg_bin, memcached, tmp_path):
    _, port = memcached
    seqs = []
    for seed in ("4", "4", "5"):
        r, _, rows = mc(lg_bin, port, tmp_path, "--cdf", VALUES,
                        "--requests", "200", "--seed", seed)
        assert r.returncode == 0, r.stderr
        seqs.append([x["value"] for x in rows])
    assert seqs[0] == seqs[1] != seqs[2]


def test_connections_and_set_mix(lg_bin, memcached, tmp_path):
    _, port = memcached
    r, j, rows = mc(lg_bin, port, tmp_path, "--value-size", "1000",
                    "--requests", "4000", "--connections", "4",
                    "--set-ratio", "0.3", "--keys", "100")
    assert r.returncode == 0, r.stderr
    assert j["requests_ok"] == 4000
    sets = sum(1 for x in rows if x["op"] == "set")
    assert abs(sets / 4000 - 0.3) < 0.04
    assert j["latency_us"]["set"]["count"] == sets
    assert j["latency_us"]["get"]["count"] == 4000 - sets
    assert {x["conn"] for x in rows} == {0, 1, 2, 3}
    assert all(x["value"] == 1000 for x in rows)


def test_outlier_threshold(lg_bin, memcached, tmp_path):
    _, port = memcached
    r, j, _ = mc(lg_bin, port, tmp_path, "--value-size", "100",
                 "--requests", "300", "--outlier", "0")
    assert r.returncode == 0, r.stderr
    assert j["outliers"] == 300
    assert j["outlier_threshold_ms"] == 0


def test_stalled_server_gives_outliers(lg_bin, memcached, tmp_path):
    """A memcached stopped for 0.5 s mid-run: the request in flight waits
    for it and shows up as an RTO-scale outlier (> 200 ms), not as an
    error."""
    proc, port = memcached
    client = subprocess.Popen(
        [lg_bin.mc_client, "--port", str(port), "--value-size", "200",
         "--requests", "150", "--interval", "10ms", "--keys", "10",
         "--json", str(tmp_path / "j"), "--samples", str(tmp_path / "s"),
         "--progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The window runs (10 GETs served; --interval paces the other 140
    # over at least 1.4 s, so the stall lands mid-run however fast the
    # machine).
    wait_gets(port, 10, client)
    os.kill(proc.pid, signal.SIGSTOP)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGCONT)
    _, err = client.communicate(timeout=60)
    assert client.returncode == 0, err
    j = load_json(tmp_path / "j")
    assert j["requests_ok"] == 150
    assert j["outliers"] >= 1, err
    assert j["latency_us"]["all"]["max"] > 200e3
    rows = read_samples(tmp_path / "s")
    assert sum(1 for x in rows if x["lat"] > 200e3) == j["outliers"]


def test_timeout_and_reconnect(lg_bin, memcached, tmp_path):
    """Responses later than --timeout count as failures; the client
    reconnects and carries on, and exits 3 (incomplete)."""
    proc, port = memcached
    client = subprocess.Popen(
        [lg_bin.mc_client, "--port", str(port), "--value-size", "200",
         "--requests", "100", "--interval", "10ms", "--timeout",
         "150ms", "--keys", "10", "--json", str(tmp_path / "j"),
         "--progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_gets(port, 10, client)        # mid-run (paced: >= 0.9 s to go)
    os.kill(proc.pid, signal.SIGSTOP)
    time.sleep(0.6)
    os.kill(proc.pid, signal.SIGCONT)
    _, err = client.communicate(timeout=60)
    assert client.returncode == 3, err
    j = load_json(tmp_path / "j")
    assert j["status_counts"]["timeout"] >= 1
    assert j["requests_timed_out"] == j["status_counts"]["timeout"]
    assert j["reconnects"] >= 1
    assert j["requests_ok"] >= 30
    assert j["requests_ok"] + j["requests_failed"] == 100
    # The timed-out requests are in the percentiles, at the time waited.
    assert j["latency_us"]["all"]["count"] == (j["requests_ok"]
                                               + j["requests_timed_out"])
    assert j["latency_us"]["all"]["max"] >= 150e3


def test_server_killed(lg_bin, memcached, tmp_path):
    proc, port = memcached
    client = subprocess.Popen(
        [lg_bin.mc_client, "--port", str(port), "--value-size", "100",
         "--requests", "200", "--interval", "5ms", "--json",
         str(tmp_path / "j"), "--timeout", "1s", "--keys", "10",
         "--progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_gets(port, 5, client)         # some answered, most to go
    end_process(proc, signal.SIGKILL)
    _, err = client.communicate(timeout=60)
    assert client.returncode == 3, err
    j = load_json(tmp_path / "j")
    assert j["requests_failed"] > 0
    assert j["status_counts"]["not_sent"] > 0
    assert 0 < j["requests_ok"] < 200


def test_no_memcached(lg_bin, tmp_path, free_port):
    r = run([lg_bin.mc_client, "--port", str(free_port()), "--value-size",
             "10"])
    assert r.returncode == 1
    assert "cannot connect to 127.0.0.1:" in r.stderr


@pytest.mark.parametrize("args, message, status", [
    ([], "exactly one of --cdf=FILE and --value-size", 2),
    (["--value-size", "2M"], "--value-size: 2M is out of range", 2),
    (["--value-size", "10", "--key-size", "8"], "--key-size: 8 is out", 2),
    # Key names are "panda-mc:<index>:" padded to --key-size: index 1000000
    # needs 17 bytes (this crashed with a 4 GiB memset before the check).
    (["--value-size", "10", "--key-size", "16", "--keys", "1000001"],
     "--key-size 16 is too short for --keys 1000001: key names need 17 "
     "bytes (\"panda-mc:1000000:\")", 2),
    (["--value-size", "10", "--requests", "0"], "--requests: 0 is out", 2),
    (["--value-size", "10", "--set-ratio", "1.5"], "--set-ratio: 1.5 is out",
     2),
    (["--value-size", "10", "--requests", "2", "--connections", "3"],
     "--connections (3) is more than --requests (2)", 2),
    (["--value-size", "10", "--bogus"], "unrecognized option", 2),
    (["--value-size", "10", "--interval", "5 ms"], "not a duration", 2),
    # -c was --cdf: a file name where a number belongs is refused.
    (["-c", "values.cdf"], "--connections: \"values.cdf\" is not", 2),
    (["--cdf", "/nonexistent"], "cannot open CDF file", 1),
])
def test_bad_arguments(lg_bin, args, message, status, free_port):
    r = run([lg_bin.mc_client, "--port", str(free_port())] + args)
    assert r.returncode == status, r.stderr
    assert message in r.stderr


def test_deprecated_spellings(lg_bin, memcached, tmp_path):
    """The spellings of earlier versions still work, with a warning."""
    _, port = memcached
    r = run([lg_bin.mc_client, "--port", str(port), "--value-size", "100",
             "-C", "2", "-r", "20", "--interval-us", "1000", "--timeout-ms",
             "5000", "--outlier-ms", "100", "--json",
             str(tmp_path / "j")])
    assert r.returncode == 0, r.stderr
    for old, new in (("-C", "-c"), ("-r", "-n"),
                     ("--interval-us=N", "--interval=Nus"),
                     ("--timeout-ms=N", "--timeout=Nms"),
                     ("--outlier-ms=N", "--outlier=Nms")):
        assert "%s is deprecated and will go; use %s" % (old, new) \
            in r.stderr
    j = load_json(tmp_path / "j")
    assert (j["connections"], j["requests_ok"], j["interval_us"],
            j["outlier_threshold_ms"]) == (2, 20, 1000, 100)


def test_value_cdf_too_large(lg_bin, tmp_path):
    p = tmp_path / "big.cdf"
    p.write_text("100 0.5\n2000000 1\n")
    r = run([lg_bin.mc_client, "--cdf", str(p)])
    assert r.returncode == 1
    assert "above memcached's default item limit" in r.stderr


def test_interrupt_writes_results(lg_bin, memcached, tmp_path):
    _, port = memcached
    client = subprocess.Popen(
        [lg_bin.mc_client, "--port", str(port), "--value-size", "100",
         "--requests", "1000", "--interval", "10ms", "--connections",
         "2", "--keys", "10", "--json", str(tmp_path / "j"), "--samples",
         str(tmp_path / "s"), "--progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_gets(port, 30, client)        # > 20 answered, paced: many to go
    client.send_signal(signal.SIGINT)
    _, err = client.communicate(timeout=30)
    assert client.returncode == 3, err
    assert "interrupted" in err
    j = load_json(tmp_path / "j")
    assert j["interrupted"] is True
    assert 20 < j["requests_ok"] < 1000
    assert j["status_counts"]["not_sent"] == 1000 - j["requests_ok"]
    rows = read_samples_raw(tmp_path / "s")
    assert len(rows) == 1000
    assert all(r[6] == "not_sent" and r[5] == "-" for r in rows
               if r[6] != "ok")


def read_samples_raw(path):
    with open(path) as f:
        return [l.split() for l in f if not l.startswith("#")]


def test_progress_line(lg_bin, memcached, tmp_path):
    _, port = memcached
    r = run([lg_bin.mc_client, "--port", str(port), "--value-size", "100",
             "--requests", "50", "--interval-us", "10000", "--progress",
             "--quiet"])
    assert r.returncode == 0
    assert "50/50 requests" in r.stderr


def test_duration_limit_and_bind(lg_bin, memcached, tmp_path):
    """--duration ends the window early; requests not started are skipped
    (not failures, not in the samples file)."""
    _, port = memcached
    r, j, rows = mc(lg_bin, port, tmp_path, "--value-size", "100",
                    "--requests", "100000", "--interval-us", "2000",
                    "--duration", "0.5", "--bind", "127.0.0.1")
    assert r.returncode == 0, r.stderr
    assert j["window_s"] >= 0.5
    assert j["duration_s"] == 0.5
    assert j["requests_failed"] == 0
    # Paced at 2 ms: at most 251 can start in 0.5 s, however fast the
    # machine; no request starts after the duration (but the one whose
    # start raced the deadline).
    assert 0 < j["requests_ok"] <= 251
    ws = j["window_start_realtime"]
    assert sum(1 for x in rows if x["start"] > ws + 0.5) <= 1
    assert j["requests_sent"] == j["requests_ok"] == len(rows)
    assert j["status_counts"]["skipped"] == 100000 - j["requests_ok"]

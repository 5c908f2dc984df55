"""pandalab.testbed.anatomy on a run directory made here: the memcached
responses rebuilt from a capture (one per acknowledged request), their CE
share, wait and span, and the small flows split by memcached's run."""

import json
import struct

from pandalab.testbed import anatomy


def _pcap(path, records):
    """records: (time s, frame)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for ts, fr in records:
            f.write(struct.pack("<IIII", int(ts), round(ts % 1 * 1e6),
                                len(fr), len(fr)))
            f.write(fr)


def _frame(dport, ack, payload, ecn=2, dscp=1):
    tcp = struct.pack("!HHIIBBHHH", 11211, dport, 0, ack, 5 << 4, 0x18, 0,
                      0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, dscp << 2 | ecn,
                     40 + payload, 0, 0, 64, 6, 0, bytes([10, 0, 0, 2]),
                     bytes([10, 0, 0, 1]))
    return b"\0" * 12 + b"\x08\x00" + ip + tcp + b"x" * payload


def test_responses_wait_span_ce_and_small_flows(tmp_path):
    run = tmp_path / "run"
    trial = run / "trials" / "dctcp-panda-c14-r200-rep1"
    trial.mkdir(parents=True)
    recs, t = [], 100.0
    # The keys' connection first (ignored), then the measured one: 200
    # one-packet responses 1 ms apart, every other one CE-marked, and one
    # 3-packet response whose last packet comes 5 ms after its first.
    recs.append((99.0, _frame(40000, 1, 100)))
    for i in range(200):
        if i == 100:
            recs += [(t, _frame(40002, i, 1448, ecn=3)),
                     (t + 0.001, _frame(40002, i, 1448, ecn=3)),
                     (t + 0.005, _frame(40002, i, 600, ecn=3))]
            t += 0.006
        else:
            recs.append((t, _frame(40002, i, 100, ecn=3 if i % 2 else 2)))
            t += 0.001
    _pcap(str(trial / "mc-rx.pcap"), recs)
    with open(trial / "flows.txt", "w") as f:
        f.write("# id size_bytes start_s end_s fct_us received_bytes "
                "completed note\n")
        for i, (size, start, fct_us) in enumerate(
                [(1000, 100.05, 4000), (2000, 100.10, 6000),
                 (1000, 101.00, 1000), (500000, 100.2, 9e6),
                 (1000, 99.0, 1e5), (900, 100.3, 0)]):
            f.write("%d %d %f - %s %d %d -\n" % (
                i, size, start, fct_us if fct_us else "-", size,
                1 if fct_us else 0))
    # pias, same seed: the same flows (ids and sizes), other FCTs, and
    # memcached running all along.
    other = run / "trials" / "dctcp-pias-c14-r200-rep1"
    other.mkdir()
    with open(other / "flows.txt", "w") as f:
        for i, (size, start, fct_us) in enumerate(
                [(1000, 100.06, 2000), (2000, 100.12, 6000),
                 (1000, 100.90, 2000), (500000, 100.2, 1e7),
                 (1000, 99.0, 1e5), (900, 100.3, 500)]):
            f.write("%d %d %f - %s %d 1 -\n" % (i, size, start, fct_us,
                                                 size))
    doc = {"metadata": {"loadavg_at_start": [1, 2, 3]}, "trials": [{
        "scheme": "panda", "cc": "dctcp", "concurrency": 14, "rep": 0,
        "status": "ok", "dir": str(trial),
        "memcached": {"p99_ms": 6.1},
        "fct_window": {"start": 99.5, "seconds": 20},
        "overlap": {"memcached_window": [100.0, 100.5]}}, {
        "scheme": "pias", "cc": "dctcp", "concurrency": 14, "rep": 0,
        "status": "ok", "dir": str(other), "memcached": {"p99_ms": 40},
        "fct_window": {"start": 99.5, "seconds": 20},
        "overlap": {"memcached_window": [100.0, 150.0]}}]}
    with open(run / "result.json", "w") as f:
        json.dump(doc, f)
    out = anatomy.analyse(str(run))
    r = out["trials"]["dctcp panda c14 rep1"]
    m = r["memcached"]
    assert m["responses"] == 199
    # Latency = last packet to last packet: 1 ms, and 1 + 5 ms once.
    assert abs(m["p50_ms"] - 1.0) < 1e-3
    big = m["largest_1pct"]
    assert big["bytes_mean"] > 1400 and abs(big["span_p50_ms"] - 5) < 1e-3
    slow = m["slowest_1pct"]
    assert abs(slow["latency_mean_ms"] - (6 + 1) / 2) < 1e-2
    # The 100 odd responses CE (one packet each) and the three packets of
    # the even one at i = 100, of 202 packets.
    assert abs(m["ce_share"] - (100 + 3) / 202) < 1e-9
    s = r["small_flows"]
    # Completed small flows started in the window: three; two while
    # memcached ran (100.0-100.5), one after.
    assert s["all"]["flows"] == 3
    assert s["during"] == {"flows": 2, "mean_fct_ms": 5.0}
    assert s["after"] == {"flows": 1, "mean_fct_ms": 1.0}
    assert "small flows 3.67 ms (3)" in anatomy.text(out)
    # Flow by flow: flows 0 and 1 (started while panda's memcached ran)
    # took 2x and 1x pias's, flow 2 (after) 0.5x; flow 5 did not complete
    # under panda, flow 4 started before the window.
    p = out["panda_over_pias_small_flows"]["dctcp c14 rep1"]
    assert p["all"]["pairs"] == 3
    assert abs(p["all"]["geo_ratio"] - 1.0) < 1e-9
    assert abs(p["during"]["geo_ratio"] - 2 ** 0.5) < 1e-9
    assert p["after"] == {"pairs": 1, "geo_ratio": 0.5, "ci95": None}
    lo, hi = p["all"]["ci95"]
    assert lo < 1 < hi

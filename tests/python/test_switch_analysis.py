"""The workload-switch experiment's analysis
(pandalab.testbed.workload_switch) on known data: windows, percentiles, FCT, time series, adaptation time."""

from pandalab.testbed import workload_switch as switch


def test_read_known_files(tmp_path):
    s = tmp_path / "mc-samples.txt"
    s.write_text("# seq conn op value_bytes start_s latency_us status\n"
                 "0 0 get 74 100.5 250.0 ok\n"
                 "1 0 get 74 101.0 1500.0 ok\n"
                 "2 0 get 74 - - not_sent\n"
                 "3 0 get 74 101.5 9000.0 timeout\n")
    assert switch.read_samples(str(s)) == [(100.5, 0.25), (101.0, 1.5)]
    f = tmp_path / "flows.txt"
    f.write_text("# id size_bytes start_s end_s fct_us received_bytes "
                 "completed note\n"
                 "0 1000 100.0 100.1 100000.0 1000 1 -\n"
                 "7 29200000 100.2 - - 8323072 0 interrupted\n")
    assert switch.read_flows(str(f)) == [(100.0, 1000, 100.0)]


def test_windows_and_stats():
    wins = switch.windows(10, 50, 20, 100)
    assert wins == {"before": (10, 50), "during": (50, 70),
                    "after": (70, 100)}
    # 100 requests before: 1..100 ms, p99 = 99; 10 during at 500 ms; none
    # after.  Flows by start time: small (50 KB) and large.
    samples = [(10 + i * 0.3, float(i + 1)) for i in range(100)] + \
        [(55 + i, 500.0) for i in range(10)]
    flows = [(20, 50000, 10.0), (30, 50000, 30.0), (40, 5000000, 900.0),
             (60, 50000, 200.0), (80, 2000000, 400.0)]
    st = switch.window_stats(samples, flows, wins)
    assert st["before"]["requests"] == 100
    assert st["before"]["p99_ms"] == 99.0
    assert st["before"]["p50_ms"] == 50.0
    assert st["before"]["small_mean_fct_ms"] == 20.0
    assert st["before"]["mean_fct_ms"] == (10 + 30 + 900) / 3
    assert st["during"]["p99_ms"] == 500.0
    assert st["during"]["small_flows"] == 1
    assert st["after"]["requests"] == 0 and st["after"]["p99_ms"] is None
    assert st["after"]["small_mean_fct_ms"] is None
    assert st["after"]["flows"] == 1


def test_series_and_adaptation():
    samples = [(100 + i * 0.1, float(i % 10)) for i in range(100)]
    ser = switch.p99_series(samples, 100, 5)
    assert [(t, n) for t, _, n in ser] == [(0, 50), (5, 50)]
    assert ser[0][1] == 9.0
    d = [{"t": 40, "action": "push"}, {"t": 62, "action": "wait"},
         {"t": 65, "action": "push"}, {"t": 80, "action": "would push"},
         {"t": 90, "action": "push"}]
    assert switch.adaptation(d, 60) == {"first_push_s": 5, "last_push_s": 30,
                                        "pushes": 2}
    assert switch.adaptation(d[:2], 60)["first_push_s"] is None

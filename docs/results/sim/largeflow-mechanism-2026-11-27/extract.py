#!/usr/bin/python3
"""Summarises run.sh's runs into runs.csv (one row per arrivals, variant,
scheme and seed) and large-flows.csv (every flow above 10 MB started in
the window, with its bytes received and TCP events when traced).  For a
traced run (flows-time.csv): flows_over_300kb, the flows (any start time)
that got more than 300 KB through, flows_no_cwr, those of them that never
entered CWR (never cut their window for an ECN echo), and large_rtos, the
RTOs of the window's large flows; listener_ecn_changes and
listener_first_change_s, the ECN state changes of the flow sinks'
listening socket and the sequence number of the last CE-marked segment
it took (run.json, panda-sim from 735c289 on; -1: none).  The
window is the seeds20 run's: flows started 3-23 s into the run (the FCT
window of sim/run.py workloads), run to 33 s.
Usage: extract.py OUT_DIR [DEST_DIR]  (OUT_DIR as run.sh's $OUT)"""

import csv
import json
import os
import sys

WINDOW = (3e9, 23e9)
SMALL, LARGE = 100_000, 10_000_000

COLUMNS = ("arrivals", "variant", "scheme", "seed", "flows_window",
           "small_done", "small_mean_ms", "small_over_150ms", "medium_done",
           "medium_unfinished", "medium_mean_ms", "large_done",
           "large_unfinished", "large_bytes_received", "bytes_received",
           "rpc_requests", "rpc_p99_ms", "rpc_unanswered", "rto",
           "fast_recovery", "drop_full", "drop_push_out", "marks",
           "sent_mb_per_level", "rpc_level", "rpc_counter",
           "flows_over_300kb", "flows_no_cwr", "large_rtos",
           "listener_ecn_changes", "listener_first_change_s",
           "listener_ce_seq")


def percentile(values, q):
    """Nearest rank."""
    v = sorted(values)
    return v[max(0, -(-len(v) * q // 100) - 1)] if v else None


def one(path, arrivals, variant, scheme, seed):
    with open(os.path.join(path, "run.json")) as f:
        run = json.load(f)
    flows = []
    with open(os.path.join(path, "flows.csv"), newline="") as f:
        for r in csv.DictReader(f):
            flows.append((int(r["id"]), int(r["size"]), int(r["start_ns"]),
                          int(r["finish_ns"])))
    # Bytes received per flow: the flow sink's count is not in flows.csv;
    # a traced run has it, otherwise finished flows count their size.
    received = {}
    trace = os.path.join(path, "flows-time.csv")
    tcp = {}
    if os.path.exists(trace):
        with open(trace, newline="") as f:
            for r in csv.DictReader(f):
                received[int(r["id"])] = int(r["received"])
                tcp[int(r["id"])] = r
    win = [fl for fl in flows if WINDOW[0] <= fl[2] <= WINDOW[1]]
    small = [(fin - st) / 1e6 for _, sz, st, fin in win
             if sz <= SMALL and fin >= 0]
    med = [fl for fl in win if SMALL < fl[1] <= LARGE]
    med_done = [(fin - st) / 1e6 for _, _, st, fin in med if fin >= 0]
    large = [fl for fl in win if fl[1] > LARGE]
    rpcs = []
    unanswered = 0
    with open(os.path.join(path, "rpc.csv"), newline="") as f:
        for r in csv.DictReader(f):
            sent, done = int(r["sent_ns"]), int(r["done_ns"])
            if WINDOW[0] <= sent <= WINDOW[1]:
                if done < 0:
                    unanswered += 1
                else:
                    rpcs.append((done - sent) / 1e6)
    q = run["queues"]["host-up"]
    levels = run["sched"]["levels"] if run.get("sched") else []
    conns = (run.get("marking") or {}).get("rpc_connections") or [{}]
    row = {
        "arrivals": arrivals, "variant": variant, "scheme": scheme,
        "seed": seed, "flows_window": len(win),
        "small_done": len(small),
        "small_mean_ms": "%.3f" % (sum(small) / len(small)) if small else "",
        "small_over_150ms": sum(t > 150 for t in small),
        "medium_done": len(med_done),
        "medium_unfinished": len(med) - len(med_done),
        "medium_mean_ms": "%.1f" % (sum(med_done) / len(med_done))
        if med_done else "",
        "large_done": sum(fl[3] >= 0 for fl in large),
        "large_unfinished": sum(fl[3] < 0 for fl in large),
        "large_bytes_received": sum(received.get(fl[0], fl[1] if fl[3] >= 0
                                                 else 0) for fl in large)
        if received else "",
        "bytes_received": sum(received.values()) if received else "",
        "rpc_requests": len(rpcs) + unanswered,
        "rpc_p99_ms": "%.3f" % percentile(rpcs, 99) if rpcs else "",
        "rpc_unanswered": unanswered,
        "rto": run["tcp"]["rto"], "fast_recovery": run["tcp"]["fast_recovery"],
        "drop_full": q["drop_reasons"].get("Port buffer full", 0),
        "drop_push_out": q["drop_reasons"].get(
            "Pushed out for a higher level", 0),
        "marks": q["marked_packets"],
        "sent_mb_per_level": "/".join("%.1f" % (lv["sent_bytes"] / 1e6)
                                      for lv in levels),
        "rpc_level": conns[0].get("level", ""),
        "rpc_counter": conns[0].get("counter", ""),
        "flows_over_300kb": sum(int(r["received"]) > 300_000
                                for r in tcp.values()) if tcp else "",
        "flows_no_cwr": sum(int(r["received"]) > 300_000
                            and r["cwrs"] == "0" for r in tcp.values())
        if tcp else "",
        "listener_ecn_changes": run["tcp"].get("flow_listener_ecn_changes",
                                               ""),
        "listener_first_change_s":
        "%.2f" % (run["tcp"]["flow_listener_ecn_first_change_ns"] / 1e9)
        if run["tcp"].get("flow_listener_ecn_first_change_ns", -1) >= 0
        else "",
        "listener_ce_seq": run["tcp"].get("flow_listener_ce_seq", ""),
        "large_rtos": sum(int(tcp[fl[0]]["losses"]) for fl in large
                          if fl[0] in tcp) if tcp else "",
    }
    big = []
    for fid, size, st, fin in large:
        t = tcp.get(fid, {})
        big.append({"arrivals": arrivals, "variant": variant,
                    "scheme": scheme, "seed": seed, "id": fid, "size": size,
                    "start_ns": st, "finish_ns": fin,
                    "received": received.get(fid, ""),
                    "losses": t.get("losses", ""),
                    "recoveries": t.get("recoveries", ""),
                    "cwrs": t.get("cwrs", "")})
    return row, big


def main():
    src = sys.argv[1]
    dest = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(
        os.path.abspath(__file__))
    rows, bigs = [], []
    for arrivals in sorted(os.listdir(src)):
        for variant in sorted(os.listdir(os.path.join(src, arrivals))):
            vdir = os.path.join(src, arrivals, variant)
            for name in sorted(os.listdir(vdir)):
                path = os.path.join(vdir, name)
                if not os.path.isdir(path) or not os.path.exists(
                        os.path.join(path, "run.json")):
                    continue
                scheme, seed = name.rsplit("-s", 1)
                row, big = one(path, arrivals, variant, scheme, int(seed))
                rows.append(row)
                bigs.extend(big)
    rows.sort(key=lambda r: (r["arrivals"], r["variant"], r["scheme"],
                             r["seed"]))
    with open(os.path.join(dest, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(dest, "large-flows.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, list(bigs[0]) if bigs else ["id"])
        w.writeheader()
        w.writerows(bigs)
    print("%d runs, %d large flows" % (len(rows), len(bigs)))


if __name__ == "__main__":
    main()

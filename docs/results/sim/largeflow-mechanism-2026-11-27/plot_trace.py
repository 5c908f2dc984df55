#!/usr/bin/python3
"""trace.png and trace-summary.txt from one seed's traced runs (run.sh's
variant "trace": --time-trace-ms=10): for pias and panda side by side,
host 0's port (the bottleneck: the flows and memcached's responses leave
there) per level over time -- backlog, throughput, drops -- and every
flow above 4 MB: bytes received and its RTOs over time; which flows never
cut their window for ECN, and what the flow sinks' listener took.
Usage: plot_trace.py TRACE_DIR [DEST_DIR]
  TRACE_DIR holds pias-sN/ and panda-sN/ (run.sh's $OUT/ARRIVALS/trace)."""

import csv
import json
import os
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BIG = 4_000_000


def load(d):
    ports = defaultdict(lambda: defaultdict(list))
    with open(os.path.join(d, "ports-time.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["host"] != "0":
                continue
            lv = int(r["level"])
            for k in ("t_ns", "backlog_bytes", "sent_bytes", "drop_limit",
                      "drop_push_out", "mark_ecn"):
                ports[lv][k].append(int(r[k]))
    flows = defaultdict(lambda: defaultdict(list))
    with open(os.path.join(d, "flows-time.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if int(r["size"]) <= BIG:
                continue
            fl = flows[int(r["id"])]
            fl["size"] = int(r["size"])
            for k in ("t_ns", "received", "losses", "level", "cwnd"):
                fl[k].append(int(r[k]))
    return ports, flows


def summary(name, ports, flows, out):
    """Per level: mean backlog, MB sent, drops; per regime (seconds)."""
    t = ports[0]["t_ns"]
    dur = (t[-1] - t[0]) / 1e9
    out.write("%s: host 0's port, %.1f s traced\n" % (name, dur))
    out.write("level  mean_backlog_KB  sent_MB  drop_full  pushed_out  "
              "time_backlogged_s\n")
    for lv in sorted(ports):
        p = ports[lv]
        busy = sum(b > 0 for b in p["backlog_bytes"]) * (dur / len(t))
        out.write("%5d  %15.1f  %7.1f  %9d  %10d  %17.1f\n"
                  % (lv, sum(p["backlog_bytes"]) / len(t) / 1e3,
                     p["sent_bytes"][-1] / 1e6, p["drop_limit"][-1],
                     p["drop_push_out"][-1], busy))
    out.write("flows above 4 MB: id size_MB received_MB RTOs "
              "longest_stall_s (no bytes received)\n")
    for fid, fl in sorted(flows.items()):
        stall, last_t, last_r = 0.0, fl["t_ns"][0], fl["received"][0]
        for tt, rr in zip(fl["t_ns"], fl["received"]):
            if rr > last_r:
                last_t, last_r = tt, rr
            stall = max(stall, (tt - last_t) / 1e9)
        out.write("  %d %.1f %.1f %d %.2f\n"
                  % (fid, fl["size"] / 1e6, fl["received"][-1] / 1e6,
                     fl["losses"][-1], stall))
    out.write("\n")


def ecn_summary(d, out):
    """The flows that got more than 300 KB through, in id order: c if it
    ever entered CWR (cut its window for an ECN echo), D if never; and
    the sink listener's last CE sequence number (run.json)."""
    last = {}
    with open(os.path.join(d, "flows-time.csv"), newline="") as f:
        for r in csv.DictReader(f):
            last[int(r["id"])] = r
    seq = "".join("D" if r["cwrs"] == "0" else "c"
                  for _, r in sorted(last.items())
                  if int(r["received"]) > 300_000)
    with open(os.path.join(d, "run.json")) as f:
        tcp = json.load(f)["tcp"]
    out.write("flows > 300 KB in id order (c: entered CWR, D: never): %s\n"
              "  %d of %d never; sink listener: %s ECN state changes, first "
              "at %s ns, last CE-marked sequence number %s\n\n"
              % (seq, seq.count("D"), len(seq),
                 tcp.get("flow_listener_ecn_changes"),
                 tcp.get("flow_listener_ecn_first_change_ns"),
                 tcp.get("flow_listener_ce_seq")))


def main():
    src = sys.argv[1]
    dest = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(
        os.path.abspath(__file__))
    names = sorted((n for n in os.listdir(src)
                    if os.path.isdir(os.path.join(src, n))),
                   key=lambda n: n.startswith("panda"))
    fig, axes = plt.subplots(3, len(names), figsize=(7 * len(names), 10),
                             sharex=True, squeeze=False)
    cmap = plt.get_cmap("viridis")
    with open(os.path.join(dest, "trace-summary.txt"), "w") as out:
        for col, name in enumerate(names):
            ports, flows = load(os.path.join(src, name))
            summary(name, ports, flows, out)
            ecn_summary(os.path.join(src, name), out)
            ax = axes[0][col]
            t = [x / 1e9 for x in ports[0]["t_ns"]]
            levels = sorted(ports)
            ax.stackplot(t, *[[b / 1500 for b in ports[lv]["backlog_bytes"]]
                              for lv in levels],
                         labels=["level %d" % lv for lv in levels],
                         colors=[cmap(lv / 7) for lv in levels])
            ax.set_ylabel("host 0 backlog, packets")
            ax.set_title(name)
            ax.legend(fontsize=6, ncol=4, loc="upper right")
            ax = axes[1][col]
            for lv in levels:
                s = ports[lv]["sent_bytes"]
                # Mbit/s over 100 ms (ten 10 ms samples).
                rate = [(s[i] - s[max(0, i - 10)]) * 8
                        / ((ports[lv]["t_ns"][i]
                            - ports[lv]["t_ns"][max(0, i - 10)]) or 1) * 1e3
                        for i in range(len(s))]
                ax.plot(t, rate, color=cmap(lv / 7), lw=0.6,
                        label="level %d" % lv)
            ax.set_ylabel("sent, Mbit/s (100 ms)")
            ax = axes[2][col]
            for fid, fl in sorted(flows.items()):
                tt = [x / 1e9 for x in fl["t_ns"]]
                line, = ax.plot(tt, [r / 1e6 for r in fl["received"]],
                                lw=0.8)
                rto_t = [tt[i] for i in range(1, len(tt))
                         if fl["losses"][i] > fl["losses"][i - 1]]
                rto_y = [fl["received"][i] / 1e6 for i in range(1, len(tt))
                         if fl["losses"][i] > fl["losses"][i - 1]]
                ax.plot(rto_t, rto_y, "x", color=line.get_color(), ms=3)
            ax.set_ylabel("flows > 4 MB: MB received (x: RTO)")
            ax.set_xlabel("simulated time, s")
    fig.tight_layout()
    fig.savefig(os.path.join(dest, "trace.png"), dpi=120)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""How long the top level waits behind the lower levels' guarantees on
panda-qos's linux-htb classes (pandaovs.qos.htb_min_rates()).

    sudo bench/bench-htb-top.py [--rate 50M] [--levels 8] [--seconds S]
                                [--reps N] [--reply BYTES] [--interval MS]
                                [--json FILE]

Method.  Two network namespaces joined by a veth pair; the server side's
veth gets the htb classes of pandaovs.qos.tc_htb_plan() (the recipe
docs/kernel-datapath.md gives a host without OVS QoS; OVS's linux-htb
makes the same classes from panda-qos's Queue records) at --rate, and two
tc filters: TCP to the lowest class, UDP to class 1:1 (level 0).  iperf3
sends 4 TCP streams from the server side, which keep the lowest class
backlogged; a UDP request/response pair (one request every --interval ms,
a --reply-byte answer from the server side) stands for memcached's GETs at
level 0.  Measured: the request/response round trip (p50, p99, p99.9).

Rows, --reps times each in ABBA order:

  even       every queue guaranteed min_share / K of the link (panda-qos
             before: level 0 too)
  top-rest   the lower queues share min_share, level 0 is guaranteed the
             rest (panda-qos now)

HTB sends a class's packet at once while the class is within its own
guarantee; beyond it the class borrows from the parent, whose tokens the
backlogged lowest class uses up too.  With --reply 1000 every 1 ms (8
Mbit/s at level 0, above the 0.625 Mbit/s an even split gives it at 50
Mbit/s) level 0 borrows under "even"; --reply 100 every 2 ms (0.4 Mbit/s)
is the control where it stays within an even guarantee and the two rows
should agree.  Also printed: class 1:1's packets sent within its guarantee
("lended" in tc's words) and borrowed, the packets the lower classes sent
on their own guarantee, and the lowest class's packets (the link's
backlog).  The machine is shared: absolute times are those of a loaded
VM; the ratio between rows in one run is what matters.  No pass/fail.
"""

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

try:
    from pandaovs import cli, qos
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

SRV_IP, CLI_IP = "10.77.0.1", "10.77.0.2"
UDP_PORT = 7777
IPERF_PORT = 5299


def sh(*argv, ns=None, check=True):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
    return subprocess.run(cmd, check=check, capture_output=True,
                          text=True).stdout


def echo_server(reply):
    """Runs in the server namespace: answers each datagram with 'reply'
    bytes."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((SRV_IP, UDP_PORT))
    data = b"r" * reply
    while True:
        _, peer = s.recvfrom(2048)
        s.sendto(data, peer)


def ping_client(seconds, interval_ms, out):
    """Runs in the client namespace: one request every 'interval_ms',
    each waiting for its answer (up to 1 s); writes the round trips (us)
    as JSON to 'out'."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    rtts, lost = [], 0
    end = time.monotonic() + seconds
    nxt = time.monotonic()
    while time.monotonic() < end:
        t0 = time.monotonic()
        s.sendto(b"q" * 16, (SRV_IP, UDP_PORT))
        try:
            s.recvfrom(2048)
            rtts.append((time.monotonic() - t0) * 1e6)
        except socket.timeout:
            lost += 1
        nxt += interval_ms / 1000.0
        delay = nxt - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        else:
            nxt = time.monotonic()
    with open(out, "w") as f:
        json.dump({"rtt_us": rtts, "lost": lost}, f)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))] if xs else None


def class_counters(ns, dev):
    """{classid: [sent packets, lended, borrowed]} of 'dev''s classes."""
    return {k: [v["packets"], v.get("lended", 0), v.get("borrowed", 0)]
            for k, v in qos.parse_tc_classes(
                sh("tc", "-s", "class", "show", "dev", dev, ns=ns)).items()}


def setup_classes(ns, dev, rate, levels, mode):
    cmds = qos.tc_htb_plan(dev, rate, levels)
    if mode == "even":
        even = max(rate // 10 // levels, 8 * qos.HTB_MIN_BURST_BYTES)
        for c in cmds:
            if c[0] == "class" and c[c.index("parent") + 1] == "1:fffe":
                c[c.index("rate") + 1] = "%dbit" % even
    sh("tc", "qdisc", "del", "dev", dev, "root", ns=ns, check=False)
    for c in cmds:
        sh("tc", *c, ns=ns)
    low = "1:%x" % levels
    for proto, flowid in (("6", low), ("17", "1:1")):
        sh("tc", "filter", "add", "dev", dev, "parent", "1:", "protocol",
           "ip", "prio", "1", "u32", "match", "ip", "protocol", proto, "0xff",
           "flowid", flowid, ns=ns)


def run_row(a, mode, workdir):
    srv, cli_ns, dev = a.ns + "-srv", a.ns + "-cli", a.ns + "s"
    setup_classes(srv, dev, a.rate_bps, a.levels, mode)
    c0 = class_counters(srv, dev)
    bulk = subprocess.Popen(
        ["ip", "netns", "exec", srv, "iperf3", "-c", CLI_IP, "-p",
         str(IPERF_PORT), "-P", "4", "-t", str(int(a.seconds) + 3)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)           # The lowest class is backlogged.
        out = os.path.join(workdir, "ping-%s.json" % mode)
        sh(sys.executable, os.path.realpath(__file__), "_ping",
           str(a.seconds), str(a.interval), out, ns=cli_ns)
    finally:
        bulk.wait(timeout=a.seconds + 60)
    c1 = class_counters(srv, dev)
    with open(out) as f:
        r = json.load(f)
    top = [c1["1:1"][i] - c0["1:1"][i] for i in range(3)]
    low_own = sum(c1[k][1] - c0[k][1] for k in c1
                  if k not in ("1:1", "1:fffe"))
    lowest = "1:%x" % a.levels
    return {"p50_us": pct(r["rtt_us"], 50), "p99_us": pct(r["rtt_us"], 99),
            "p999_us": pct(r["rtt_us"], 99.9), "n": len(r["rtt_us"]),
            "lost": r["lost"], "top_sent": top[0], "top_own": top[1],
            "top_borrowed": top[2], "lower_own": low_own,
            "lowest_sent_pkts": c1[lowest][0] - c0[lowest][0],
            "seconds": a.seconds}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "_echo":
        return echo_server(int(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "_ping":
        return ping_client(float(sys.argv[2]), float(sys.argv[3]),
                           sys.argv[4])
    ap = cli.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=cli.rate(lo=10 ** 6, hi=10 ** 10),
                    default=50e6, help="link rate (default 50M)")
    ap.add_argument("--levels", type=int, choices=range(2, qos.MAX_LEVELS + 1),
                    default=8, metavar="K", help="levels (default 8)")
    ap.add_argument("--seconds", type=cli.duration(lo=1, hi=3600),
                    default=15, help="per row (default 15)")
    ap.add_argument("--reps", type=int, choices=range(1, 101), default=3,
                    metavar="N", help="ABBA repetitions (default 3)")
    ap.add_argument("--reply", type=cli.size(lo=1, hi=1400), default=1000,
                    help="answer size, bytes (default 1000)")
    ap.add_argument("--interval", type=cli.duration(bare=1e-3, lo=1e-4,
                                                    hi=1),
                    default=1e-3, help="between requests (default 1ms)")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--ns", default="htbtop%d" % os.getpid(),
                    help="prefix of the namespaces (default htbtopPID)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        ap.error("needs root (network namespaces, tc)")
    a.rate_bps = int(a.rate)
    a.interval *= 1000.0            # ms from here on
    srv, cli_ns = a.ns + "-srv", a.ns + "-cli"
    procs, rows = [], []
    try:
        for ns in (srv, cli_ns):
            sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", a.ns + "s", "netns", srv, "type", "veth",
           "peer", "name", a.ns + "c", "netns", cli_ns)
        for ns, dev, ip in ((srv, a.ns + "s", SRV_IP),
                            (cli_ns, a.ns + "c", CLI_IP)):
            sh("ip", "addr", "add", ip + "/24", "dev", dev, ns=ns)
            sh("ip", "link", "set", dev, "up", ns=ns)
            sh("ip", "link", "set", "lo", "up", ns=ns)
            # One frame per packet, as a NIC's wire sees them.
            sh("ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off",
               ns=ns, check=False)
        procs.append(subprocess.Popen(
            ["ip", "netns", "exec", cli_ns, "iperf3", "-s", "-p",
             str(IPERF_PORT)], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
        procs.append(subprocess.Popen(
            ["ip", "netns", "exec", srv, sys.executable,
             os.path.realpath(__file__), "_echo", str(a.reply)]))
        time.sleep(1)
        order = []
        for i in range(a.reps):
            order += ["even", "top-rest"] if i % 2 == 0 \
                else ["top-rest", "even"]
        with tempfile.TemporaryDirectory() as wd:
            for i, mode in enumerate(order):
                r = run_row(a, mode, wd)
                r["mode"], r["load1"] = mode, os.getloadavg()[0]
                rows.append(r)
                print("[%d/%d] %-8s p50 %6.0f us  p99 %6.0f us  p99.9 %6.0f "
                      "us  (n %d, lost %d; level 0: %d own, %d borrowed; "
                      "lower classes on their own guarantee: %d; load %.2f)"
                      % (i + 1, len(order), mode, r["p50_us"], r["p99_us"],
                         r["p999_us"], r["n"], r["lost"], r["top_own"],
                         r["top_borrowed"], r["lower_own"], r["load1"]),
                      flush=True)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)
        for ns in (srv, cli_ns):
            sh("ip", "netns", "del", ns, check=False)
    med = {}
    for mode in ("even", "top-rest"):
        rs = [r for r in rows if r["mode"] == mode]
        med[mode] = {k: statistics.median(r[k] for r in rs)
                     for k in ("p50_us", "p99_us", "p999_us")}
    print("\nmedians over %d repetitions (rate %d bit/s, %d levels, reply "
          "%d B every %g ms):" % (a.reps, a.rate_bps, a.levels, a.reply,
                                  a.interval))
    for mode in ("even", "top-rest"):
        print("  %-8s p50 %6.0f us  p99 %6.0f us  p99.9 %6.0f us" % (
            mode, med[mode]["p50_us"], med[mode]["p99_us"],
            med[mode]["p999_us"]))
    print("  p99 top-rest/even %.3f (per repetition pair: %s)" % (
        med["top-rest"]["p99_us"] / med["even"]["p99_us"],
        ", ".join("%.3f" % (t["p99_us"] / e["p99_us"]) for e, t in zip(
            [r for r in rows if r["mode"] == "even"],
            [r for r in rows if r["mode"] == "top-rest"]))))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(a).items()},
                       "commit": cli.git_commit(),
                       "kernel": platform.release(),
                       "cpus": os.cpu_count(), "rows": rows,
                       "medians": med}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

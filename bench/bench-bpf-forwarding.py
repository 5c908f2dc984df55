#!/usr/bin/python3
"""bench-bpf-forwarding: the forwarding rate through a veth with and without
the tc eBPF classifier (bpf/panda-cls.bpf.c) on its egress, in one run.
Needs root; prints a table and writes --json; there is no pass/fail.

Two network namespaces joined by a veth pair; iperf3 from the first to the
second; the classifier, when on, is attached to the sender's veth egress
(where the testbed's --datapath bpf puts it) with a four-level Panda
policy.  Off means no clsact qdisc at all.  Three workloads:

  tcp       one TCP connection (TCP builds GSO packets above the qdisc
            whatever the device's offloads, so the program sees up to 64 KB
            per packet)
  udp64     UDP datagrams of 18 bytes (64-byte frames), as fast as iperf3
            sends them
  blast64   64-byte TCP frames of 1000 connections from bench-blast (an
            AF_PACKET sender, built here with -DBLAST_THROUGH_QDISC so that
            its frames cross the qdisc and the tc hooks), counted on the
            receiving interface: the rate of small packets, where the
            program's per-packet cost shows most, every frame classified

With --no-policy, "on" is the program attached with no policy: it looks
the policy up and passes every packet as it is, so on / off is the cost
of the clsact hook and of running a program at all, the floor under any
classification's.

Each workload runs off, on, on, off (ABBA) --rounds times, --seconds
each; the ratio is on / off of the means, and each round's ratio is given
(their spread is the machine's noise).  Then one more run with the
kernel's BPF statistics on (kernel.bpf_stats_enabled, put back after)
gives the program's own ns per packet on this path (bpftool's run_time_ns
/ run_cnt: cold caches, unlike a test run's repetitions).  The load
average, kernel and offloads are recorded.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import pandaovs  # noqa: F401
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

from pandaovs import bpfcls, cli, paths  # noqa: E402

NS_A, NS_B = "bpfcls-fwd-a-%d" % os.getpid(), "bpfcls-fwd-b-%d" % os.getpid()
DEV_A, DEV_B = "bpffwd0", "bpffwd1"
POLICY = ("id=9,threshold=1000,thresholds=20000/200000/2000000,"
          "dscp=46/26/18/8,queues=0/1/2/3")


def sh(*args, check=True):
    return subprocess.run(list(args), check=check, capture_output=True,
                          text=True)


def nsx(ns, *args, check=True):
    return sh("ip", "netns", "exec", ns, *args, check=check)


def setup():
    for ns in (NS_A, NS_B):
        sh("ip", "netns", "add", ns)
    sh("ip", "link", "add", DEV_A, "netns", NS_A, "type", "veth", "peer",
       "name", DEV_B, "netns", NS_B)
    for ns, dev, addr in ((NS_A, DEV_A, "10.78.0.1/24"),
                          (NS_B, DEV_B, "10.78.0.2/24")):
        nsx(ns, "ip", "addr", "add", addr, "dev", dev)
        nsx(ns, "ip", "link", "set", dev, "up")
        nsx(ns, "ip", "link", "set", "lo", "up")


def teardown():
    for ns in (NS_A, NS_B):
        sh("ip", "netns", "del", ns, check=False)


def rx_packets():
    out = nsx(NS_B, "cat", "/sys/class/net/%s/statistics/rx_packets"
              % DEV_B).stdout
    return int(out)


def blast(blaster, seconds):
    """bench-blast through the qdisc: (received kpps, unit)."""
    mac = nsx(NS_B, "cat", "/sys/class/net/%s/address" % DEV_B).stdout \
        .strip()
    before = rx_packets()
    t0 = time.monotonic()
    nsx(NS_A, blaster, DEV_A, "64", "1000", str(seconds), mac)
    elapsed = time.monotonic() - t0
    time.sleep(0.2)
    return (rx_packets() - before) / elapsed / 1e3, "kpps"


def run_workload(kind, seconds, blaster):
    if kind == "blast64":
        return blast(blaster, seconds)
    return iperf(kind, seconds)


def program_ns(cls, kind, seconds, blaster, policy):
    """The program's mean ns per run over one run of 'kind', from the
    kernel's BPF statistics (turned on for the run, put back after)."""
    path = "/proc/sys/kernel/bpf_stats_enabled"
    with open(path) as f:
        was = f.read().strip()
    cls.attach([DEV_A], netns=NS_A, policy_text=policy)
    try:
        with open(path, "w") as f:
            f.write("1")
        run_workload(kind, seconds, blaster)
        pid = cls.show()["program_id"]
        info = json.loads(sh("bpftool", "-j", "prog", "show", "id",
                             str(pid)).stdout)
    finally:
        with open(path, "w") as f:
            f.write(was)
        cls.detach_all()
    return info["run_time_ns"] / max(info["run_cnt"], 1)


def iperf(kind, seconds):
    """One iperf3 run: (rate, unit)."""
    server = subprocess.Popen(["ip", "netns", "exec", NS_B, "iperf3", "-s",
                               "-1", "-p", "5901"],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    args = ["iperf3", "-c", "10.78.0.2", "-p", "5901", "-t", str(seconds),
            "-J"]
    if kind == "udp64":
        args += ["-u", "-b", "0", "-l", "18"]
    try:
        out = json.loads(nsx(NS_A, *args).stdout)
    finally:
        server.wait(timeout=30)
    s = out["end"]["sum"] if kind == "udp64" else out["end"]["sum_received"]
    if kind == "udp64":
        return (s["packets"] - s["lost_packets"]) / s["seconds"] / 1e3, \
            "kpps"
    return s["bits_per_second"] / 1e9, "Gbit/s"


def main():
    p = cli.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--workloads", default="tcp,udp64,blast64")
    p.add_argument("--no-policy", action="store_true",
                   help="attach the program with no policy (the floor)")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    if os.geteuid():
        print("bench-bpf-forwarding: needs root", file=sys.stderr)
        return cli.EXIT_FAILURE
    build = paths.BuildTree()
    why = bpfcls.missing(build)
    if why:
        print("bench-bpf-forwarding: %s" % why, file=sys.stderr)
        return cli.EXIT_FAILURE
    mnt = tempfile.mkdtemp(prefix="bpfcls-fwd-")
    sh("mount", "-t", "bpf", "bpf", mnt)
    cls = bpfcls.Classifier(build, pin_dir=os.path.join(mnt, "panda"))
    load0 = os.getloadavg()
    policy = None if args.no_policy else POLICY
    results = {"kernel": os.uname().release, "seconds": args.seconds,
               "policy": policy, "load_before": load0, "workloads": {}}
    blaster = os.path.join(mnt + "-blast")
    subprocess.run(["cc", "-O2", "-Wall", "-DBLAST_THROUGH_QDISC", "-o",
                    blaster, os.path.join(paths.TOP, "bench", "bench-blast.c")],
                   check=True)
    setup()
    try:
        results["offloads"] = nsx(NS_A, "ethtool", "-k", DEV_A).stdout \
            .split("\n")[1:12]
        for kind in args.workloads.split(","):
            runs = {"off": [], "on": []}
            rounds = []
            unit = None
            for _ in range(args.rounds):
                rnd = {"off": [], "on": []}
                for cond in ("off", "on", "on", "off"):
                    if cond == "on":
                        cls.attach([DEV_A], netns=NS_A, policy_text=policy)
                    rate, unit = run_workload(kind, args.seconds, blaster)
                    if cond == "on":
                        show = cls.show()
                        cls.detach_all()
                    runs[cond].append(rate)
                    rnd[cond].append(rate)
                    print("%-6s %-3s %10.3f %s" % (kind, cond, rate, unit),
                          flush=True)
                rounds.append(sum(rnd["on"]) / sum(rnd["off"]))
            in_path = program_ns(cls, kind, args.seconds, blaster, policy)
            print("%-6s in-path %.0f ns per packet" % (kind, in_path),
                  flush=True)
            off = sum(runs["off"]) / len(runs["off"])
            on = sum(runs["on"]) / len(runs["on"])
            results["workloads"][kind] = {
                "unit": unit, "off": runs["off"], "on": runs["on"],
                "ratio": on / off, "round_ratios": rounds,
                "program_ns_per_packet": in_path,
                "packets_per_level": show["packets"],
                "segments_per_level": show["segments"]}
    finally:
        teardown()
        cls.run("detach", "--all", check=False)
        sh("umount", mnt, check=False)
        os.rmdir(mnt)
        os.unlink(blaster)
    results["load_after"] = os.getloadavg()
    print("\n%-7s | %-14s | %-14s | %-6s | %-8s | %s" % (
        "", "off (mean)", "on (mean)", "on/off", "prog ns",
        "each round's on/off"))
    for kind, r in results["workloads"].items():
        print("%-7s | %7.3f %-6s | %7.3f %-6s | %6.3f | %8.0f | %s" % (
            kind, sum(r["off"]) / len(r["off"]), r["unit"],
            sum(r["on"]) / len(r["on"]), r["unit"], r["ratio"],
            r["program_ns_per_packet"],
            " ".join("%.3f" % x for x in r["round_ratios"])))
    print("load average %.1f before, %.1f after; kernel %s" % (
        load0[0], results["load_after"][0], results["kernel"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())

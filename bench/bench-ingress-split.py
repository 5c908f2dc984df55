#!/usr/bin/python3
"""Level-0 loss through a system port whose reading thread a 64-byte flood
overloads N times (default 8): no ingress priority, the userspace ingress
priority alone, and with the kernel split of the port's receive
(Interface other_config:panda-ingress-priority, panda-ingress-split).

    sudo bench/bench-ingress-split.py [--build DIR] [--seconds S]
        [--reps N] [--overload X] [--cpu F] [--pps R] [--json FILE]

Method.  A Lab (pandalab.lab): the patched OVS with datapath_type=netdev
in a private namespace, hosts cli (port 1) and srv (port 2) on veth pairs,
static ARP, flows 'actions=NORMAL'.  ovs-vswitchd runs in a cgroup of its
own limited to --cpu of one CPU (pandalab.cpulimit, default 0.2), so that
its capacity is a known fraction of a CPU, not whatever the shared machine
leaves it.  The capacity is measured first, in the same run: the frames
per second srv receives while bench/bench-blast.c on cli sends 64-byte TCP
frames (to a MAC address nobody owns, which NORMAL floods to srv) as fast
as it can, with no ingress priority.  Each row then blasts at --overload
times that rate, paced, and during the blast cli sends level-0 probes: UDP
datagrams with DSCP 46 at --pps (tests/system/udp_probe.py), S seconds,
which srv counts.  The ingress priority is
id=1,kind=app,app=46:0,levels=2,default_level=1 (the probes high, the
flood and everything else low).

Rows, --reps times each in ABBA order:

  none        no ingress priority
  userspace   panda-ingress-priority, panda-ingress-split=false: one
              socket, OVS reorders what it has read
  split       panda-ingress-priority (the split is on by default): two
              sockets, high frames in their own

Prints, per row, the probes lost (%), the flood offered and forwarded
(frames/s) and the main thread's CPU use; then the median and the range
over the repetitions.  The machine is shared: the load average is
recorded; the ratio between rows of one run is what matters.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

try:
    import pandaovs  # noqa: F401
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

from benchnet import SINK_MAC, build_blaster, cpu_ns, rx_packets  # noqa
from pandaovs import cli, paths  # noqa: E402
from pandalab.cpulimit import cpu_limit  # noqa: E402
from pandalab.lab import Lab, wait_until  # noqa: E402
from pandalab.sandbox import is_root  # noqa: E402

HOSTS = [("cli", "10.0.0.1", 1), ("srv", "10.0.0.2", 2)]
POLICY = "id=1,kind=app,app=46:0,levels=2,default_level=1"
PROBE = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..",
                     "tests", "system", "udp_probe.py")
PROBE_PORT = 7000
FRAME = 64
MODES = ("none", "userspace", "split")


def capacity(lab, blaster, seconds=4):
    """Frames per second srv receives with the blaster at full speed and
    no ingress priority."""
    t = threading.Thread(target=lambda: lab.cli.run(
        blaster, "eth0", FRAME, 1000, seconds + 2, SINK_MAC,
        timeout=seconds + 60))
    t.start()
    time.sleep(1.5)
    r0, t0 = rx_packets(lab.srv), time.monotonic()
    time.sleep(seconds - 1)
    r1, t1 = rx_packets(lab.srv), time.monotonic()
    t.join()
    return (r1 - r0) / (t1 - t0)


def configure(lab, mode):
    port = lab.cli.port
    log0 = lab.sb.log()
    if mode == "none":
        lab.sb.vsctl("remove", "interface", port, "other_config",
                     "panda-ingress-priority")
        lab.sb.vsctl("remove", "interface", port, "other_config",
                     "panda-ingress-split")
    else:
        lab.sb.vsctl("set", "interface", port,
                     "other_config:panda-ingress-priority=" + POLICY,
                     "other_config:panda-ingress-split=%s"
                     % ("true" if mode == "split" else "false"))
    if mode == "split" and "receive split by priority: active" not in log0:
        wait_until(lambda: "receive split by priority: " in lab.sb.log(),
                   30, "the split")
    time.sleep(1)       # The receive queue reopened.
    if mode == "split":
        status = lab.sb.vsctl("get", "interface", port, "status")
        log = lab.sb.log()
        if "split unavailable" in log:
            sys.exit("bench-ingress-split: %s" % log[log.index(
                "kernel split unavailable"):].splitlines()[0])
        return status
    return ""


def run_row(lab, blaster, mode, args):
    configure(lab, mode)
    n = int(args.pps * args.seconds)
    recv = lab.spawn("udprecv", lab.srv, paths.PY, PROBE, "udprecv",
                     "--ports", PROBE_PORT, "--expect", n,
                     "--duration", args.seconds + 8, stdout=subprocess.PIPE,
                     text=True)
    assert "listening" in recv.stdout.readline()
    sent = {}

    def blast():
        sent["n"] = int(lab.cli.run(
            blaster, "eth0", FRAME, 1000, args.seconds + 2, SINK_MAC, 0, 0,
            "", int(args.rate), timeout=args.seconds + 60))
    t = threading.Thread(target=blast)
    pid = lab.sb.daemon_pids["ovs-vswitchd"]
    t.start()
    time.sleep(1)       # Overloaded before the first probe.
    r0, c0, t0 = rx_packets(lab.srv), cpu_ns(pid), time.monotonic()
    out = lab.cli.run(paths.PY, PROBE, "udp", lab.srv.ip, PROBE_PORT,
                      "--count", n, "--pps", args.pps, "--tos", "0xb8",
                      timeout=args.seconds + 60)
    r1, c1, t1 = rx_packets(lab.srv), cpu_ns(pid), time.monotonic()
    t.join()
    probes = json.loads(out.strip().splitlines()[-1])["sent"]
    out, _ = recv.communicate(timeout=60)
    got = json.loads(out.strip().splitlines()[-1])["dscp_counts"][
        str(PROBE_PORT)].get("46", 0)
    return {"loss_pct": 100.0 * (1 - got / probes), "probes": probes,
            "received": got,
            "offered_pps": sent.get("n", 0) / (args.seconds + 2),
            "forwarded_pps": (r1 - r0) / (t1 - t0),
            "cpu": (c1 - c0) / 1e9 / (t1 - t0)}


def main():
    ap = cli.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=None)
    ap.add_argument("--seconds", type=float, default=10,
                    help="probing time per row")
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--overload", type=float, default=8.0,
                    help="flood rate / the bridge's capacity")
    ap.add_argument("--cpu", type=float, default=0.2,
                    help="ovs-vswitchd's CPU limit, in CPUs")
    ap.add_argument("--pps", type=float, default=100,
                    help="level-0 probes per second")
    ap.add_argument("--json", default=None, help="write the figures here")
    args = ap.parse_args()
    if not is_root():
        sys.exit("bench-ingress-split: needs root (namespaces, cgroups)")
    rows = {m: [] for m in MODES}
    load = [os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp, \
            Lab(args.build, HOSTS, static_arp=True,
                ns_prefix="rxsplit") as lab:
        os.chmod(tmp, 0o755)
        blaster = build_blaster(tmp)
        lab.sb.ofctl("del-flows", "br0")
        lab.sb.ofctl("add-flow", "br0", "actions=NORMAL")
        with cpu_limit(lab.sb.daemon_pids["ovs-vswitchd"], args.cpu,
                       "rxsplit-bench-%d" % os.getpid()):
            cap = capacity(lab, blaster)
            args.rate = args.overload * cap
            print("ovs-vswitchd limited to %.2f CPU: capacity %.0f "
                  "frames/s; flood at %.0f frames/s (%gx)"
                  % (args.cpu, cap, args.rate, args.overload), flush=True)
            status = configure(lab, "split")
            print("split status: %s" % status.strip(), flush=True)
            for rep in range(args.reps):
                order = MODES if rep % 2 == 0 else tuple(reversed(MODES))
                for mode in order:
                    r = run_row(lab, blaster, mode, args)
                    rows[mode].append(r)
                    print("rep %d %-9s lost %5.1f%% (%d/%d)  offered %7.0f"
                          " pps  forwarded %7.0f pps  cpu %.2f" % (
                              rep + 1, mode, r["loss_pct"],
                              r["probes"] - r["received"], r["probes"],
                              r["offered_pps"], r["forwarded_pps"],
                              r["cpu"]), flush=True)
                load.append(os.getloadavg())
    print()
    print("level-0 probes (UDP, DSCP 46, %g/s, %gs per row) through a "
          "system port flooded with %d-byte frames at %gx the bridge's "
          "capacity (%.0f frames/s at %.2f CPU); %d repetitions, ABBA"
          % (args.pps, args.seconds, FRAME, args.overload, cap, args.cpu,
             args.reps))
    print("%-10s %10s %16s %12s %12s" % ("row", "loss %", "range", "offered",
                                         "forwarded"))
    summary = {}
    for m in MODES:
        losses = [r["loss_pct"] for r in rows[m]]
        summary[m] = {"loss_pct_median": statistics.median(losses),
                      "loss_pct_min": min(losses),
                      "loss_pct_max": max(losses)}
        print("%-10s %10.1f %7.1f - %6.1f %12.0f %12.0f" % (
            m, summary[m]["loss_pct_median"], min(losses), max(losses),
            statistics.median(r["offered_pps"] for r in rows[m]),
            statistics.median(r["forwarded_pps"] for r in rows[m])))
    loads = " ".join("%.1f" % x[0] for x in load)
    print("kernel %s, %d CPUs, load average (1 min) at start and after each"
          " repetition: %s" % (os.uname().release, os.cpu_count(), loads))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items()},
                       "policy": POLICY, "frame": FRAME, "capacity_pps": cap,
                       "rows": rows, "summary": summary,
                       "loadavg": load, "kernel": os.uname().release,
                       "cpus": os.cpu_count()}, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""memcached GET latency through a CPU-saturated bridge, with and without
ingress priority (ovs-ext/lib/dpif-netdev-panda-ingress.c,
Interface other_config:panda-ingress-priority).

    sudo bench/bench-ingress.py [--build DIR] [--seconds S] [--reps N]
                                [--frame BYTES] [--policy length|match]

Method.  A Lab (pandalab.lab): the patched OVS with datapath_type=netdev
in a private namespace, hosts cli (10.0.0.1, port 1) and srv (10.0.0.2,
port 2) on veth pairs, static ARP, flows 'actions=NORMAL'.  memcached runs
on srv; panda-mc-client on cli sends GETs of a 100-byte value, one at a
time, for S seconds.  bench/bench-blast.c, also on cli, sends --frame-byte
TCP frames to a MAC address nobody owns into the same switch port, at
--overload times the rate the bridge forwards them at (measured first, in
the same run, with the blaster at full speed): the forwarding thread (the
main thread, which polls netdev-linux ports) cannot keep up, the port's
socket queue stays full and the GETs wait behind the blast, or are dropped
with it.  Decision: a paced blast rather than the blaster's full speed,
because at full speed the kernel drops most frames before the switch sees
them (the socket queue overflows whatever the switch does), and what is
measured is then the socket's loss, not the switch's order; an overload
the switch can see is what ingress priority is for.

Rows, --reps times each in ABBA order:

  unloaded     no blast
  saturated    blast, no ingress priority
  priority     blast, cli's switch port with
               panda-ingress-priority=id=1,kind=length,length=500:1,
               default_level=0 (payloads of 500 bytes or more are low;
               a GET, and everything else small, is high)

--policy match is ADPS's experiment (3), keyword classification end to
end through OVS: the blast frames are "heartbeats", small (default 100
bytes) TCP segments whose payload starts with "HB", which a length rule
cannot tell from a GET, and the port's ingress priority is
id=2,kind=match,match=HB:1,levels=2,default_level=0 (heartbeats low,
everything else high).

Prints the GET latency (p50, p99, max; medians over the repetitions), the
GETs completed, the blast rate offered and forwarded, the forwarding
thread's CPU use and the ingress coverage counters.  The machine is shared:
absolute times are those of a loaded 2-core VM; the ratio between rows in
one run is what matters.  No pass/fail.
"""

import os
import statistics
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
from pandaovs import cli  # noqa: E402
from pandalab import loadgen  # noqa: E402
from pandalab.lab import MEMCACHED_PORT, Lab  # noqa: E402
from pandalab.sandbox import is_root  # noqa: E402

HOSTS = [("cli", "10.0.0.1", 1), ("srv", "10.0.0.2", 2)]
POLICIES = {
    "length": "id=1,kind=length,length=500:1,default_level=0",
    "match": "id=2,kind=match,match=HB:1,levels=2,default_level=0",
}
# The blast's payload prefix per --policy: heartbeats for the keyword rule.
PAYLOAD = {"length": "", "match": "HB"}
COUNTERS = ("panda_ingress_high", "panda_ingress_deferred",
            "panda_ingress_dropped")


def coverage(lab):
    return {c: int(lab.sb.appctl("coverage/read-counter", c).strip())
            for c in COUNTERS}


def capacity(lab, blaster, args, seconds=4):
    """Frames per second the bridge forwards with the blaster at full
    speed and no ingress priority."""
    def run_blast():
        lab.cli.run(blaster, "eth0", args.frame, 1000, seconds + 2, SINK_MAC,
                    0, 0, PAYLOAD[args.policy], timeout=seconds + 60)
    t = threading.Thread(target=run_blast)
    t.start()
    time.sleep(1)
    r0, t0 = rx_packets(lab.srv), time.monotonic()
    time.sleep(seconds - 1)
    r1, t1 = rx_packets(lab.srv), time.monotonic()
    t.join()
    return (r1 - r0) / (t1 - t0)


def run_row(lab, blaster, workdir, mode, args):
    """One row: returns its figures."""
    port = lab.cli.port
    if mode == "priority":
        lab.sb.vsctl("set", "interface", port,
                     "other_config:panda-ingress-priority="
                     + POLICIES[args.policy])
    else:
        lab.sb.vsctl("remove", "interface", port, "other_config",
                     "panda-ingress-priority")
    blast, sent = None, {}
    cov0 = coverage(lab)
    pid = lab.sb.pids[-1]
    if mode != "unloaded":
        def run_blast():
            sent["n"] = int(lab.cli.run(
                blaster, "eth0", args.frame, 1000, args.seconds + 2,
                SINK_MAC, 0, 0, PAYLOAD[args.policy],
                int(args.rate), timeout=args.seconds + 60))
        blast = threading.Thread(target=run_blast)
        blast.start()
        time.sleep(1)               # The switch is saturated.
    r0, c0, t0 = rx_packets(lab.srv), cpu_ns(pid), time.monotonic()
    rc, mc = loadgen.run_mc_client(
        lab.build, lab.srv.ip, MEMCACHED_PORT, workdir, host=lab.cli,
        tag="mc-%s" % mode, value_size=100, keys=1, requests=10 ** 7,
        duration=args.seconds, quiet=True, timeout=args.seconds + 600)
    r1, c1, t1 = rx_packets(lab.srv), cpu_ns(pid), time.monotonic()
    if blast:
        blast.join()
    cov1 = coverage(lab)
    lat = mc["latency_us"]["all"]
    return {"p50": lat["p50"], "p99": lat["p99"], "max": lat["max"],
            "gets": mc["requests_ok"],
            "offered_pps": sent.get("n", 0) / (args.seconds + 2),
            "forwarded_pps": (r1 - r0) / (t1 - t0),
            "cpu": (c1 - c0) / 1e9 / (t1 - t0),
            "counters": {c: cov1[c] - cov0[c] for c in COUNTERS}}


def main():
    ap = cli.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=None)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--frame", type=int, default=None,
                    help="blast frame size, bytes without FCS (default "
                    "1000, 100 with --policy match)")
    ap.add_argument("--policy", choices=sorted(POLICIES), default="length")
    ap.add_argument("--overload", type=float, default=2.0,
                    help="blast rate / the bridge's forwarding capacity")
    args = ap.parse_args()
    if args.frame is None:
        args.frame = 100 if args.policy == "match" else 1000
    if not is_root():
        sys.exit("bench-ingress: needs root (namespaces)")
    modes = ("unloaded", "saturated", "priority")
    rows = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp, \
            Lab(args.build, HOSTS, static_arp=True) as lab:
        os.chmod(tmp, 0o755)
        blaster = build_blaster(tmp)
        lab.sb.ofctl("del-flows", "br0")
        lab.sb.ofctl("add-flow", "br0", "actions=NORMAL")
        lab.start_memcached(lab.srv)
        cap = capacity(lab, blaster, args)
        args.rate = max(1000, args.overload * cap)
        print("bridge capacity %.0f frames/s; blast at %.0f frames/s"
              % (cap, args.rate), flush=True)
        for rep in range(args.reps):
            order = modes if rep % 2 == 0 else tuple(reversed(modes))
            for mode in order:
                r = run_row(lab, blaster, tmp, mode, args)
                rows[mode].append(r)
                print("rep %d %-9s p50 %8.0f us  p99 %8.0f us  max %8.0f us"
                      "  GETs %6d  offered %7.0f pps  forwarded %7.0f pps"
                      "  cpu %.2f  %s" % (
                          rep + 1, mode, r["p50"], r["p99"], r["max"],
                          r["gets"], r["offered_pps"], r["forwarded_pps"],
                          r["cpu"], r["counters"]), flush=True)
    print()
    print("memcached GETs through the bridge, %gs per row, blast of %d-byte "
          "frames%s; medians of %d runs; ingress priority %s" % (
              args.seconds, args.frame,
              " (payload \"%s...\")" % PAYLOAD[args.policy]
              if PAYLOAD[args.policy] else "", args.reps,
              POLICIES[args.policy]))
    print("%-10s %10s %10s %10s %8s %12s %12s" % (
        "row", "p50 us", "p99 us", "max us", "GETs", "offered pps",
        "fwd pps"))
    for m in modes:
        def med(k):
            return statistics.median(r[k] for r in rows[m])
        print("%-10s %10.0f %10.0f %10.0f %8.0f %12.0f %12.0f" % (
            m, med("p50"), med("p99"), med("max"), med("gets"),
            med("offered_pps"), med("forwarded_pps")))
    sat = statistics.median(r["p99"] for r in rows["saturated"])
    pri = statistics.median(r["p99"] for r in rows["priority"])
    print("\np99 saturated / with ingress priority: %.1fx" % (sat / pri))
    print("kernel %s, %d CPUs, load average %s" % (
        os.uname().release, os.cpu_count(),
        " ".join("%.1f" % x for x in os.getloadavg())))


if __name__ == "__main__":
    main()

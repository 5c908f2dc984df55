#!/usr/bin/python3
"""Benchmark: QoS queues on the userspace datapath, stock vs patched OVS.

Measures in network namespaces, on a netdev bridge
the switch port towards the server shaped to --rate with a --levels-class
linux-htb made by panda-qos, 14 CUBIC bulk flows in the lowest class
(panda-fg-server/client), a memcached GET client (panda-mc-client) in the
top class.  Rows:

  unloaded               patched OVS, no bulk traffic
  one shared class       patched OVS, memcached and bulk in the same class
  stock OVS, top class   OVS without ovs-patches/qos.series: the queue only
                         selects the DSCP, tc u32 filters on DSCP select the
                         class (the only way it could work before)
  patched, top class     OVS with the qos.series patches, same config

and then the forwarding rate without QoS (bulk TCP through the bridge) of
both builds.  Prints figures only; no pass/fail.

    bench/bench-qos.py [--fixed-build DIR] [--stock-build DIR]
    bench/bench-qos.py --make-stock DIR     build the stock OVS into DIR

The builds are Panda-OVS build trees (DIR/ovs/build, DIR/ovs/src); the
default fixed build is $PANDA_BUILD_DIR or <repo>/_build, the default
stock build <repo>/_build-qos-stock.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

try:
    import pandaovs  # noqa: F401
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

from pandaovs import cli  # noqa: E402
from pandaovs import paths  # noqa: E402
from pandalab import loadgen  # noqa: E402
from pandalab.lab import FG_PORT, MEMCACHED_PORT, Lab, wait_until  # noqa
from pandaovs.qos import parse_rate  # noqa: E402

TOP = paths.TOP
BULK_FLOWS = 14
HOSTS = [("cli", "10.0.0.1"), ("srv", "10.0.0.2"), ("blk", "10.0.0.3")]


def add_dscp_filters(lab, levels):
    """tc u32 filters: DSCP of level q (panda-qos --dscp default: q + 1) ->
    class 1:q+1, as an operator had to do on stock OVS."""
    dev = lab.srv.port
    for q in range(levels):
        lab.sb.ns.run("tc", "filter", "add", "dev", dev, "parent", "1:",
                      "protocol", "ip", "prio", "1", "u32", "match", "ip",
                      "dsfield", "0x%02x" % ((q + 1) << 2), "0xfc",
                      "flowid", "1:%x" % (q + 1))


def latency_row(build, rate, levels, rr_queue, bulk_queue, bulk, filters,
                duration, count, workdir):
    with Lab(build, HOSTS, static_arp=True) as lab:
        # Queue DSCPs (q + 1): the stock row's tc filters select by them.
        lab.shape(lab.srv.port, rate, levels, dscp="default")
        if filters:
            add_dscp_filters(lab, levels)
        lab.queue_flows(rr_queue, bulk_queue)
        lab.start_memcached(lab.srv)
        blk = None
        if bulk:
            lab.fg_server(lab.blk, FG_PORT)
            blk = loadgen.start_fg_client(
                lab.build, lab.blk.ip, FG_PORT, workdir, host=lab.srv,
                tag="bulk", size="1G", connections=BULK_FLOWS,
                duration=3600, quiet=True)
            # The flows have filled their class (a standing queue).
            cls = "1:%x" % (bulk_queue + 1)
            wait_until(lambda: lab.tc_classes(lab.srv.port)[cls].get(
                "backlog", 0) > 100, 120, "a standing queue in " + cls)
        retr0 = Lab.nstat(lab.cli)
        rc, mc = loadgen.run_mc_client(
            lab.build, lab.srv.ip, MEMCACHED_PORT, workdir, host=lab.cli,
            value_size=100, keys=1, requests=count, duration=duration,
            quiet=True, timeout=duration + 600)
        lat = mc["latency_us"]["all"]
        res = {"n": mc["requests_ok"], "p50": lat["p50"] / 1e3,
               "p99": lat["p99"] / 1e3, "max": lat["max"] / 1e3,
               "retrans": Lab.nstat(lab.cli) - retr0,
               "tx_dropped": lab.tx_dropped(lab.srv.port)}
        if blk:
            blk.interrupt()
            b = blk.result()
            res["bulk_mbps"] = b["goodput_mbps"]
            res["bulk_errors"] = {k: v for k, v in
                                  b["unfinished_reasons"].items()
                                  if k != "interrupted"}
        return res


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tx_packets(lab):
    total = 0
    for h in lab.hosts:
        out = lab.sb.ofctl("dump-ports", "br0", h.port)
        m = re.search(r"tx pkts=(\d+)", out)
        total += int(m.group(1)) if m else 0
    return total


def forwarding_rate(build, seconds, flows, workdir):
    """TCP goodput cli -> srv through the bridge without QoS (Mbit/s), and
    ovs-vswitchd's CPU time per forwarded packet (us), which depends less
    on the load of a shared machine."""
    with Lab(build, HOSTS) as lab:
        vswitchd = lab.sb.pids[-1]
        lab.fg_server(lab.cli, FG_PORT)
        cpu0, pkts0 = cpu_seconds(vswitchd), tx_packets(lab)
        c = loadgen.start_fg_client(
            lab.build, lab.cli.ip, FG_PORT, workdir, host=lab.srv,
            tag="rate", size="1G", connections=flows, duration=seconds,
            drain_timeout=0, quiet=True)
        c.wait(timeout=seconds + 120)
        cpu, pkts = cpu_seconds(vswitchd) - cpu0, tx_packets(lab) - pkts0
        return (c.result()["goodput_mbps"],
                cpu * 1e6 / pkts if pkts else float("nan"))


def make_stock(dest, fixed_build):
    """Builds OVS with ovs-patches/series minus qos.series into 'dest'."""
    pdir = tempfile.mkdtemp(prefix="bench-qos-patches-")
    series = []
    with open(os.path.join(TOP, "ovs-patches", "series")) as f:
        for line in f:
            name = line.split("#")[0].strip()
            if name and name.endswith(".patch"):
                series.append(name)
    for name in series:
        subprocess.run(["cp", os.path.join(TOP, "ovs-patches", name), pdir],
                       check=True)
    with open(os.path.join(pdir, "series"), "w") as f:
        f.write("\n".join(series) + "\n")
    ovs = os.path.join(dest, "ovs")
    subprocess.run(["sh", os.path.join(TOP, "build-aux", "ovs-prepare.sh"),
                    "/usr/src/openvswitch/openvswitch.tar.gz", pdir, ovs],
                   check=True)
    build = os.path.join(ovs, "build")
    os.makedirs(build, exist_ok=True)
    libpanda = os.path.join(os.path.abspath(fixed_build), "lib", "panda",
                            "libpanda.a")
    if not os.path.exists(os.path.join(build, "config.status")):
        subprocess.run(["../src/configure", "--enable-silent-rules",
                        "PANDA_CFLAGS=-I%s" % os.path.join(TOP, "lib"),
                        "PANDA_LIBS=%s" % libpanda], cwd=build, check=True)
    subprocess.run(["make", "-j2", "vswitchd/ovs-vswitchd",
                    "ovsdb/ovsdb-server", "ovsdb/ovsdb-tool",
                    "utilities/ovs-vsctl", "utilities/ovs-ofctl",
                    "utilities/ovs-appctl"], cwd=build, check=True)


def fmt(res):
    return "%.2f / %.2f / %.2f ms" % (res["p50"], res["p99"], res["max"])


def main():
    ap = cli.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--fixed-build", default=paths.build_dir())
    ap.add_argument("--stock-build",
                    default=os.path.join(TOP, "_build-qos-stock"))
    ap.add_argument("--make-stock", metavar="DIR",
                    help="build the stock OVS into DIR and exit")
    ap.add_argument("--rate", type=parse_rate, default="50M",
                    help="link rate (default 50M; as panda-qos --rate)")
    ap.add_argument("--levels", type=int, default=8)
    ap.add_argument("--duration", type=float, default=20,
                    help="seconds of memcached GETs per row (default 20)")
    ap.add_argument("--count", type=int, default=5000,
                    help="at most this many GETs per row (default 5000)")
    ap.add_argument("--rate-seconds", type=float, default=8)
    ap.add_argument("--rate-flows", type=int, default=4)
    ap.add_argument("--rate-runs", type=int, default=3)
    args = ap.parse_args()

    if os.geteuid() != 0:
        sys.exit("bench-qos: needs root (network namespaces, tc)")
    if args.make_stock:
        make_stock(args.make_stock, args.fixed_build)
        return 0
    for b in (args.fixed_build, args.stock_build):
        if not os.access(os.path.join(b, "ovs", "build", "vswitchd",
                                      "ovs-vswitchd"), os.X_OK):
            sys.exit("bench-qos: no OVS build in %s (for the stock build "
                     "run bench/bench-qos.py --make-stock %s)" % (b, b))

    top, low = 0, args.levels - 1
    rows = [
        ("unloaded", args.fixed_build, dict(rr_queue=top, bulk_queue=low,
                                            bulk=False, filters=False)),
        ("one shared class (FIFO)", args.fixed_build,
         dict(rr_queue=low, bulk_queue=low, bulk=True, filters=False)),
        ("stock OVS, top class (DSCP tc filters)", args.stock_build,
         dict(rr_queue=top, bulk_queue=low, bulk=True, filters=True)),
        ("patched OVS, top class", args.fixed_build,
         dict(rr_queue=top, bulk_queue=low, bulk=True, filters=True)),
    ]
    workdir = tempfile.mkdtemp(prefix="bench-qos-")
    print("# QoS on the userspace datapath: %g Mbit/s link, %d-class "
          "linux-htb, "
          "%d CUBIC bulk flows in class %d, memcached GETs (<= %d, <= %gs)"
          % (args.rate / 1e6, args.levels, BULK_FLOWS, low, args.count,
             args.duration), flush=True)
    print()
    print("| send path | memcached p50 / p99 / max | GETs | client "
          "retrans | bulk Mbit/s | port tx_dropped |")
    print("|---|---|---|---|---|---|", flush=True)
    for name, build, kw in rows:
        res = latency_row(build, args.rate, args.levels,
                          duration=args.duration, count=args.count,
                          workdir=workdir, **kw)
        print("| %s | %s | %d | %d | %s | %d |" % (
            name, fmt(res), res["n"], res["retrans"],
            "%.1f" % res["bulk_mbps"] if "bulk_mbps" in res else "-",
            res["tx_dropped"]), flush=True)

    print()
    print("| no-QoS forwarding (%d TCP flows, %gs) | Mbit/s | "
          "ovs-vswitchd CPU us/packet |" % (args.rate_flows,
                                            args.rate_seconds))
    print("|---|---|---|")
    builds = (("stock OVS", args.stock_build),
              ("patched OVS", args.fixed_build))
    vals = {name: [] for name, _ in builds}
    for _ in range(args.rate_runs):         # interleaved: the machine is
        for name, build in builds:          # shared, its load drifts
            vals[name].append(forwarding_rate(build, args.rate_seconds,
                                              args.rate_flows, workdir))
    for name, _ in builds:
        mbps = sorted(v[0] for v in vals[name])
        cpu = sorted(v[1] for v in vals[name])
        print("| %s | median %.0f (runs: %s) | median %.2f (runs: %s) |" % (
            name, mbps[len(mbps) // 2],
            ", ".join("%.0f" % v[0] for v in vals[name]),
            cpu[len(cpu) // 2],
            ", ".join("%.2f" % v[1] for v in vals[name])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

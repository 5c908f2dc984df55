#!/usr/bin/python3
"""The panda action under a flood of distinct 5-tuples.

    sudo bench/bench-flood.py [--build DIR] [--tuples 10000000]
                              [--established 1000] [--capacity 1048576]

Method.  One OvsSandbox (pandalab.sandbox): ovs-vswitchd with
datapath_type=netdev in a private network namespace, two veth ports; every
TCP packet from the source goes through

    panda(id=1,threshold=0,thresholds=100/10000/1000000,...),output:2

with other_config:panda-max-connections=CAPACITY and an idle timeout of an
hour (nothing expires during the run).  bench/bench-blast.c sends 60-byte
TCP frames (6 bytes of payload) from the source namespace:

 1. established: E connections send 30 packets each (counter 180: level
    1), in bursts of 200 frames that the switch takes without drops (each
    burst waits until the sink has them);
 2. below capacity (the baseline): new tuples, one packet each, until the
    switch has classified CAPACITY/2 of them;
 3. filling: new tuples until the table is full (99%, or evicting);
 4. flood: new tuples until the switch has classified TUPLES of them in
    the full table;
 5. check: one more packet of each established connection, in bursts:
    the packets-per-level counters of `ovs-appctl panda/show` say how many
    were still at level 1 (kept their counter) and how many at level 0
    (their entry was lost and they started again).

For phases 2 and 4 it reports the CPU time that ovs-vswitchd's forwarding
thread (the main thread, which polls netdev-linux ports) spent per packet
it classified (from /proc/PID/task/PID/schedstat and panda/show): on this
shared machine CPU time, not the wall clock, is what measures the cost;
the blaster offers more than the switch takes, and the kernel drops the
rest before the switch sees it.  The ratio flood/baseline is the target
(<= 2); the per-packet figure includes the socket receive and send, the
same in both phases.  Also: the resident memory of ovs-vswitchd when the
table is full and after the flood, and the table's evictions, refusals
and expirations.
"""

import os
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

from benchnet import (SINK_MAC, build_blaster, cpu_ns, rss_bytes,  # noqa
                      rx_packets, wait_quiet)
from pandaovs import cli  # noqa: E402
from pandaovs import paths  # noqa: E402
from pandalab.sandbox import OvsSandbox, is_root  # noqa: E402

POLICY = ("panda(id=1,threshold=0,thresholds=100/10000/1000000,"
          "dscp=46/26/18/0,queues=0/1/2/3)")
FRAME = 60                  # Without FCS: 6 bytes of TCP payload.
EST_PACKETS = 30            # 180 bytes: level 1 (> 100), with margin.
BURST = 200                 # Frames the switch's socket takes at once.
CHUNK = 200000              # New tuples offered per blaster run.
TUPLE_SPACE = 4000 * 1000 * 1000    # bench-blast's tuples, never repeated.


def show_stats(sb):
    """panda/show of policy 1 as {key: int}, levels as 'level0'..."""
    out = sb.appctl("panda/show")
    stats = {}
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("packets per level:"):
            for item in line.split(":", 1)[1].split():
                lv, n = item.split(":")
                stats["level" + lv] = int(n)
        elif line.startswith(("connections:", "inserted:", "evicted:")):
            for part in line.replace("(", ",").replace(")", ",").split(","):
                if ":" in part:
                    k, v = part.split(":", 1)
                    v = v.strip().split()[0] if v.strip() else ""
                    if v.isdigit():
                        stats[k.strip()] = int(v)
    return stats


class Bench:
    def __init__(self, sb, src, sink, blaster):
        self.sb, self.src, self.sink = sb, src, sink
        self.blaster = blaster
        self.pid = sb.pids[-1]
        self.next_tuple = 0

    def blast(self, first, count):
        """Sends 'count' new tuples from tuple 'first', as fast as the
        blaster goes; returns once the switch is idle again."""
        self.src.run(self.blaster, "eth0", FRAME, TUPLE_SPACE, 3600,
                     SINK_MAC, first, count, timeout=7200)
        wait_quiet(self.sink)

    def bursts(self, conns, rounds):
        """'rounds' packets for each of 'conns' tuples (from tuple 0), in
        bursts the switch takes whole; returns the frames the sink got."""
        got = 0
        for _ in range(rounds):
            for first in range(0, conns, BURST):
                n = min(BURST, conns - first)
                r0 = rx_packets(self.sink)
                self.src.run(self.blaster, "eth0", FRAME, conns, 60,
                             SINK_MAC, first, n)
                deadline = time.monotonic() + 10
                while (rx_packets(self.sink) < r0 + n
                       and time.monotonic() < deadline):
                    time.sleep(0.01)
                got += min(rx_packets(self.sink) - r0, n)
        return got

    def phase(self, target, done=None):
        """New tuples until the switch has classified 'target' packets (or
        'done(stats)' is true); the switch takes what it can, the kernel
        drops the rest.  Returns (packets classified, CPU ns of the
        forwarding thread per classified packet)."""
        s0, c0 = show_stats(self.sb), cpu_ns(self.pid)
        n, s1 = 0, s0
        while n < target and not (done and done(s1)):
            self.blast(self.next_tuple, CHUNK)
            self.next_tuple += CHUNK
            s1 = show_stats(self.sb)
            n = sum(s1.get("level%d" % i, 0) - s0.get("level%d" % i, 0)
                    for i in range(4))
        return n, (cpu_ns(self.pid) - c0) / max(n, 1)


def main():
    ap = cli.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=paths.build_dir(),
                    help="build tree (default $PANDA_BUILD_DIR or "
                    "<repo>/_build)")
    ap.add_argument("--tuples", type=int, default=10 * 1000 * 1000,
                    help="flood tuples after the table is full")
    ap.add_argument("--established", type=int, default=1000)
    ap.add_argument("--capacity", type=int, default=1 << 20,
                    help="other_config:panda-max-connections")
    args = ap.parse_args()
    if not is_root():
        sys.exit("bench-flood: needs root (namespaces)")

    e, cap = args.established, args.capacity
    other = {"panda-max-connections": cap, "panda-idle-timeout": 3600000}
    with tempfile.TemporaryDirectory() as tmp, \
            OvsSandbox(args.build) as sb:
        blaster = build_blaster(tmp)
        sb.vsctl("set", "Open_vSwitch", ".",
                 *["other_config:%s=%s" % kv for kv in other.items()])
        sb.add_bridge("br0")
        src = sb.add_host("src", "10.0.0.1/24", ofport=1)
        sink = sb.add_host("sink", "10.0.0.2/24", ofport=2)
        sb.ofctl("add-flow", "br0", "priority=0,actions=drop")
        sb.ofctl("add-flow", "br0", "tcp,in_port=1,actions=%s,output:2"
                 % POLICY)
        b = Bench(sb, src, sink, blaster)

        got = b.bursts(e, EST_PACKETS)
        b.next_tuple = e
        s = show_stats(sb)
        print("established: %d connections, %d of %d packets through; "
              "connections %d, packets at level 1: %d"
              % (e, got, e * EST_PACKETS, s.get("connections", 0),
                 s.get("level1", 0)), flush=True)

        n_half, ns_half = b.phase(max(cap // 2 - e, 1))
        print("below capacity: %d new tuples classified, %.0f ns/packet"
              % (n_half, ns_half), flush=True)
        b.phase(2 * cap, lambda s: s.get("connections", 0) >= cap * 0.99
                or s.get("evicted", 0))
        rss_full = rss_bytes(b.pid)
        s_full = show_stats(sb)
        print("filled: connections %d of %d" % (s_full.get("connections", 0),
                                                cap), flush=True)

        n_flood, ns_flood = b.phase(args.tuples)
        rss_end = rss_bytes(b.pid)
        print("flood: %d new tuples classified, %.0f ns/packet"
              % (n_flood, ns_flood), flush=True)

        before = show_stats(sb)
        got = b.bursts(e, 1)
        after = show_stats(sb)
        kept = after.get("level1", 0) - before.get("level1", 0)
        lost = after.get("level0", 0) - before.get("level0", 0)
        show = sb.appctl("panda/show")

    print()
    print("bench-flood: table of %d connections, %d established (level 1), "
          "flood of %d distinct tuples classified (%d offered in all)"
          % (cap, e, n_flood, b.next_tuple))
    print("  ns/packet (forwarding thread CPU): below capacity %.0f, "
          "flooded %.0f, ratio %.2f (target <= 2)"
          % (ns_half, ns_flood, ns_flood / ns_half if ns_half else 0))
    print("  established connections after the flood: %d at their level, "
          "%d back on top, %d not seen (of %d)"
          % (kept, lost, e - got, e))
    print("  ovs-vswitchd resident memory: %.1f MiB when full, %.1f MiB "
          "after the flood" % (rss_full / 2**20, rss_end / 2**20))
    print()
    print(show)


if __name__ == "__main__":
    main()

"""Helpers shared by the namespace benchmarks (bench-forwarding.py,
bench-flood.py): the frame blaster, and the two counters they read."""

import os
import subprocess
import time

BENCH_C = os.path.dirname(os.path.abspath(__file__))
# Frames go to a MAC address the sink does not own, so that its kernel
# counts and drops them without answering.
SINK_MAC = "02:00:00:00:99:99"


def build_blaster(tmp):
    """Compiles bench/bench-blast.c into 'tmp'; returns its path."""
    exe = os.path.join(tmp, "bench-blast")
    subprocess.run(["cc", "-O2", "-Wall", "-o", exe,
                    os.path.join(BENCH_C, "bench-blast.c")], check=True)
    return exe


def rx_packets(host):
    """Packets received on 'host''s eth0."""
    return int(host.run("cat", "/sys/class/net/eth0/statistics/rx_packets"))


def cpu_ns(pid):
    """CPU time of thread 'pid' (the main thread of process 'pid'), ns: the
    thread of ovs-vswitchd that polls netdev-linux ports."""
    with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as f:
        return int(f.read().split()[0])


def rss_bytes(pid):
    """Resident memory of process 'pid'."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def wait_quiet(host, poll=0.3):
    """Waits until 'host' has received nothing for one 'poll' interval
    (the switch has forwarded or dropped everything it was sent); returns
    its rx_packets."""
    last = -1
    while True:
        now = rx_packets(host)
        if now == last:
            return now
        last = now
        time.sleep(poll)

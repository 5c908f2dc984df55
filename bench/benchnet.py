"""Helpers shared by the namespace benchmarks (bench-forwarding.py,
bench-flood.py): the frame blaster, and the two counters they read; and
the build of the C benchmarks that link OVS (bench-fastpath.py and the
callgrind breakdowns of docs/results use it too)."""

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


def build_ovs_bench(tmp, build, name, debug=False):
    """Compiles bench/NAME.c against the OVS build tree 'build'
    (libopenvswitch.a and lib/panda) into 'tmp', with debug information
    if 'debug' (for callgrind_annotate's per-line figures; the code is
    the same -O2 code); returns the executable's path."""
    ovs = os.path.join(build, "ovs")
    b, s = os.path.join(ovs, "build"), os.path.join(ovs, "src")
    exe = os.path.join(tmp, name)
    libs = os.path.join(b, "lib", ".libs")
    la = open(os.path.join(b, "lib", "libopenvswitch.la")).read()
    deps = la.split("dependency_libs='")[1].split("'")[0].split()
    deps = [d.replace(".la", ".a").replace("/lib/lib", "/lib/.libs/lib")
            if d.endswith(".la") else d for d in deps]
    # An OVS built with DPDK: its headers include DPDK's (rte_config.h
    # first, as OVS's own compile lines force).
    with open(os.path.join(b, "config.h")) as f:
        dpdk = "#define DPDK_NETDEV" in f.read()
    dpdk_cflags = subprocess.run(
        ["pkg-config", "--cflags", "libdpdk"], capture_output=True,
        text=True, check=True).stdout.split() if dpdk else []
    cmd = (["cc", "-O2"] + (["-g"] if debug else []) + ["-o", exe]
           + dpdk_cflags + [
            os.path.join(BENCH_C, name + ".c"),
            "-I" + b, "-I" + s, "-I" + os.path.join(s, "include"),
            "-I" + os.path.join(b, "include"), "-I" + os.path.join(s, "lib"),
            "-I" + os.path.join(b, "lib"),
            "-I" + os.path.join(os.path.dirname(BENCH_C), "lib"),
            os.path.join(libs, "libopenvswitch.a")] + deps +
           [os.path.join(build, "lib", "panda", "libpanda.a"),
            "-lpthread", "-lm"])
    subprocess.run(cmd, check=True)
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

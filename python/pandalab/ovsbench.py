"""The C benchmarks that link Open vSwitch (bench/bench-panda-action.c,
bench/bench-sched-glue.c), built against a build tree: bench-forwarding.py,
bench-fastpath.py, bench-sched-forwarding.py and the callgrind breakdowns
in docs/results build them here, so that every count is of the same
build.

    exe = build_ovs_bench(tmp, "_build", "bench-sched-glue", debug=True)
"""

import os
import subprocess

from pandaovs import paths


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
            os.path.join(paths.TOP, "bench", name + ".c"),
            "-I" + b, "-I" + s, "-I" + os.path.join(s, "include"),
            "-I" + os.path.join(b, "include"), "-I" + os.path.join(s, "lib"),
            "-I" + os.path.join(b, "lib"),
            "-I" + os.path.join(paths.TOP, "lib"),
            os.path.join(libs, "libopenvswitch.a")] + deps +
           [os.path.join(build, "lib", "panda", "libpanda.a"),
            "-lpthread", "-lm"])
    subprocess.run(cmd, check=True)
    return exe

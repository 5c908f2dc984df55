#!/usr/bin/python3
"""Where dp_sched_exchange()'s instructions go: bench/bench-sched-glue.c
under callgrind, collecting only inside dp_sched_exchange()
(--toggle-collect, its callees and the code inlined into it included),
self instructions per packet by function and by source file.

    breakdown.py BUILD FRAME FLOWS LEVELS [OUT]

BUILD is the build tree (_build), FRAME the frame bytes (60 for 64 B),
FLOWS the flows the packets cycle through, LEVELS the levels they are
spread over (bench-sched-glue's SCHED_GLUE_LEVELS; 1: all at level 0, as
bench-fastpath.py's panda-sched configuration sends them).  Prints the table and keeps
callgrind's output and callgrind_annotate's summaries in OUT (default: a
temporary directory).  Packets: bench-sched-glue's warm-up and its three
runs through the scheduler, ITERS batches of 32 each (the ring's runs do
not enter the function)."""

import os
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..",
                                   ".."))
try:
    import pandalab  # noqa: F401
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(TOP, "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

from pandalab.ovsbench import build_ovs_bench  # noqa: E402

ITERS = 2000


def table(ann, packets, build):
    rows = []
    for line in ann.splitlines():
        fields = line.split()
        if not fields or not fields[0].replace(",", "").isdigit():
            continue
        ir = int(fields[0].replace(",", ""))
        where = fields[-1] if "PROGRAM" not in line else "total"
        if "[" in where:
            where = fields[-2]
        if ir / packets >= 0.05:
            rows.append("%8.2f  %s" % (ir / packets,
                                       where.replace(TOP + "/", "")
                                       .replace(build + "/", "")))
    return rows


def main():
    build, frame, flows, levels = sys.argv[1:5]
    out = sys.argv[5] if len(sys.argv) > 5 else tempfile.mkdtemp()
    os.makedirs(out, exist_ok=True)
    exe = build_ovs_bench(out, build, "bench-sched-glue", debug=True)
    cg = os.path.join(out, "callgrind.out.%s.%s.%s" % (frame, flows, levels))
    subprocess.run(["valgrind", "--tool=callgrind",
                    "--toggle-collect=dp_sched_exchange",
                    "--callgrind-out-file=" + cg, exe, frame, flows,
                    str(ITERS)], check=True, capture_output=True,
                   env=dict(os.environ, SCHED_GLUE_LEVELS=levels))
    packets = 4 * ITERS * 32
    print("frame %s B, %s flows, %s levels: %d packets; self instructions "
          "per packet" % (frame, flows, levels, packets))
    ann = subprocess.run(["callgrind_annotate", "--auto=no",
                          "--threshold=100", cg],
                         check=True, capture_output=True, text=True).stdout
    with open(cg + ".annotate.txt", "w") as f:
        f.write(ann)
    print("\n".join(table(ann, packets, build)))

if __name__ == "__main__":
    main()

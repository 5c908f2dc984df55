#!/usr/bin/python3
"""Where dp_panda_execute()'s instructions go: bench/bench-panda-action.c
under callgrind, collecting only inside dp_panda_execute()
(--toggle-collect), self instructions per packet by function (inlined code
under the function it was inlined into, by source file).

    breakdown.py BUILD FRAME CONNS HISTOGRAMS [OUT]

BUILD is the build tree (_build), FRAME the frame bytes (60 for 64 B),
HISTOGRAMS true or false (other_config:panda-histograms).  Prints the
table and keeps callgrind's output and callgrind_annotate's summary in OUT
(default: a temporary directory).  Packets: bench-panda-action's warm-up
(CONNS / 32 + 1000 batches) and its two runs with the action (2000 batches
each), 32 packets a batch."""

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


def main():
    build, frame, conns, hist = sys.argv[1:5]
    out = sys.argv[5] if len(sys.argv) > 5 else tempfile.mkdtemp()
    os.makedirs(out, exist_ok=True)
    exe = build_ovs_bench(out, build, "bench-panda-action", debug=True)
    cg = os.path.join(out, "callgrind.out.%s.%s.%s" % (frame, conns, hist))
    subprocess.run(["valgrind", "--tool=callgrind",
                    "--toggle-collect=dp_panda_execute",
                    "--callgrind-out-file=" + cg, exe, frame, conns,
                    str(ITERS)], check=True, capture_output=True,
                   env=dict(os.environ, PANDA_HISTOGRAMS=hist))
    ann = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", cg],
                         check=True, capture_output=True, text=True).stdout
    with open(cg + ".annotate.txt", "w") as f:
        f.write(ann)
    packets = (int(conns) // 32 + 1000 + 2 * ITERS) * 32
    print("frame %s B, %s connections, histograms %s: %d packets" % (
        frame, conns, hist, packets))
    for line in ann.splitlines():
        fields = line.split()
        if not fields or not fields[0].replace(",", "").isdigit():
            continue
        ir = int(fields[0].replace(",", ""))
        where = fields[-1] if "PROGRAM" not in line else "total"
        if "[" in where:
            where = fields[-2]
        if ir / packets >= 0.5:
            print("%8.1f  %s" % (ir / packets,
                                 where.replace(TOP + "/", "")
                                 .replace(build + "/", "")))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""How long the controller takes to bring many bridges in sync.

Runs the patched ovs-vswitchd in a namespace sandbox with N bridges
(userspace datapath, fail_mode=secure) and the real controller
(pandalab.controller_harness), and prints:
  - time from controller start until every bridge is synced (connect,
    flow stats, bundle, barrier, read-back);
  - time from a policy file change (same id) until every bridge runs it;
  - time from a controller restart until every bridge is reconciled
    (nothing to change).
Needs root.  Usage:

    /usr/bin/python3 bench/bench-controller.py [--bridges 50] [--rules 4]
        [--build _build]
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

from pandaovs import cli  # noqa: E402
from pandaovs import paths  # noqa: E402
from pandalab.controller_harness import ControllerLab, write_json  # noqa
from pandaovs.policy import Policy  # noqa: E402


def policy(thresholds):
    """A panda-model policy file; T = 1000, two weights, three levels."""
    return Policy(id=7, threshold=1000, weights=((1000, 100), (9000, 200)),
                  thresholds=thresholds, dscp=(46, 26, 10),
                  queues=(0, 1, 2))


def main():
    ap = cli.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bridges", type=int, default=50)
    ap.add_argument("--rules", type=int, default=4,
                    help="panda rules per bridge (plus a default flow)")
    ap.add_argument("--build", default=paths.build_dir(),
                    help="build tree (default: $PANDA_BUILD_DIR or "
                    "<repo>/_build)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench-controller: needs root (network namespaces)")
    tmp = tempfile.mkdtemp(prefix="panda-ctl-bench-")
    bridges = ["br%d" % i for i in range(args.bridges)]
    t0 = time.monotonic()
    lab = ControllerLab(tmp, bridges=bridges, build=args.build)
    print("sandbox with %d bridges: %.1f s" % (len(bridges),
                                               time.monotonic() - t0))
    try:
        rules = [{"name": "r%d" % i, "priority": 100 + i,
                  "match": {"eth_type": 2048, "ip_proto": 6,
                            "tcp_dst": 5000 + i},
                  "policy": "policy.json"} for i in range(args.rules)]
        rules.append({"name": "default", "priority": 0, "policy": None})
        write_json(lab.config, {"switches": "*", "rules": rules})
        write_json(lab.policy_file, policy((50000, 500000)).to_json())
        t0 = time.monotonic()
        lab.start_controller()
        lab.wait_synced(n_switches=len(bridges), timeout=600)
        print("initial sync of %d bridges x %d flows: %.2f s"
              % (len(bridges), len(rules), time.monotonic() - t0))

        p2 = policy((60000, 600000))
        t0 = time.monotonic()
        write_json(lab.policy_file, p2.to_json())
        lab.wait_synced(n_switches=len(bridges), generation=2, timeout=600)
        print("policy change on %d bridges (incl. up to 0.3 s file poll): "
              "%.2f s" % (len(bridges), time.monotonic() - t0))
        bad = [br for br in bridges
               if [f["panda"] for f in lab.flows(br)]
               != [p2.text()] * args.rules]
        print("bridges not running the new policy: %d" % len(bad))

        lab.kill_controller()
        t0 = time.monotonic()
        lab.start_controller()
        lab.wait_synced(n_switches=len(bridges), timeout=600)
        print("restart, reconcile %d unchanged bridges: %.2f s"
              % (len(bridges), time.monotonic() - t0))
    finally:
        lab.stop()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""How long the controller takes to bring many bridges in sync.

Runs the patched ovs-vswitchd in a namespace sandbox with N bridges
(userspace datapath, fail_mode=secure) and the real controller, and prints:
  - time from controller start until every bridge is synced (connect,
    flow stats, bundle, barrier, read-back);
  - time from a policy file change (same id) until every bridge runs it;
  - time from a controller restart until every bridge is reconciled
    (nothing to change).
Needs root.  Usage:

    /usr/bin/python3 bench_controller.py [--bridges 50] [--rules 4]
        [--build _build]
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tests", "system"))
sys.path.insert(0, os.path.join(TOP, "tests", "pylib"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bridges", type=int, default=50)
    ap.add_argument("--rules", type=int, default=4,
                    help="panda rules per bridge (plus a default flow)")
    ap.add_argument("--build", default=None,
                    help="build tree (default: $PANDA_BUILD_DIR, "
                    "_build-ctl, _build)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_controller: needs root (network namespaces)")
    if args.build:
        os.environ["PANDA_BUILD_DIR"] = os.path.abspath(args.build)
    import tempfile
    import test_controller as T

    tmp = tempfile.mkdtemp(prefix="panda-ctl-bench-")
    bridges = ["br%d" % i for i in range(args.bridges)]
    t0 = time.monotonic()
    lab = T.Lab(tmp, bridges=bridges)
    print("sandbox with %d bridges: %.1f s" % (len(bridges),
                                               time.monotonic() - t0))
    try:
        rules = [{"name": "r%d" % i, "priority": 100 + i,
                  "match": {"eth_type": 2048, "ip_proto": 6,
                            "tcp_dst": 5000 + i},
                  "policy": "policy.json"} for i in range(args.rules)]
        rules.append(T.DEFAULT_RULE)
        T.write_json(lab.config, {"rules": rules})
        T.write_json(lab.policy_file, T.policy())
        t0 = time.monotonic()
        lab.start_controller()
        lab.wait_synced(n_switches=len(bridges), timeout=600)
        print("initial sync of %d bridges x %d flows: %.2f s"
              % (len(bridges), len(rules), time.monotonic() - t0))

        p2 = T.policy(thresholds=[60000, 600000])
        t0 = time.monotonic()
        T.write_json(lab.policy_file, p2)
        lab.wait_synced(n_switches=len(bridges), generation=2, timeout=600)
        print("policy change on %d bridges (incl. up to 0.3 s file poll): "
              "%.2f s" % (len(bridges), time.monotonic() - t0))
        want = T.text_of(p2)
        bad = [br for br in bridges
               if [f["panda"] for f in lab.flows(br)] != [want] * args.rules]
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

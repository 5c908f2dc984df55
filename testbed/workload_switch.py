#!/usr/bin/python3
"""The mid-run workload switch: static policy vs auto-tune.

    sudo /usr/bin/python3 testbed/workload_switch.py --quick
    sudo /usr/bin/python3 testbed/workload_switch.py --full

Launcher of pandalab.testbed.workload_switch (python/launch.py); see
testbed/README.md, "Workload switch"."""
import os
import runpy
runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                            "..", "python", "launch.py"),
               {"MODULE": "pandalab.testbed.workload_switch"})

#!/usr/bin/python3
"""Panda vs PIAS vs FIFO on this machine (thesis ch. 5).

    sudo /usr/bin/python3 testbed/run.py --quick
    sudo /usr/bin/python3 testbed/run.py --full --reps 10

Launcher of pandalab.testbed (python/pandalab/testbed/, python/launch.py);
see testbed/README.md."""
import os
import runpy
runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                            "..", "python", "launch.py"),
               {"MODULE": "pandalab.testbed"})

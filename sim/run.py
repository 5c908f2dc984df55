#!/usr/bin/python3
"""Simulation runs of Panda-OVS in ns-3 (see sim/README.md):

    /usr/bin/python3 sim/run.py quick          # a dumbbell point per scheme
    /usr/bin/python3 sim/run.py reproduce      # FISH/PIAS reproduction (hours)
    /usr/bin/python3 sim/run.py crosscheck --policy results/<run>/policy.json
    /usr/bin/python3 sim/run.py scale

Launcher of pandalab.sim (python/pandalab/sim/, python/launch.py)."""
import os
import runpy
runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                            "..", "python", "launch.py"),
               {"MODULE": "pandalab.sim"})

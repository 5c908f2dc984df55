#!/usr/bin/python3
"""The testbed's experiment on a Mininet topology (dumbbell, leaf-spine).

    sudo /usr/bin/python3 mininet/run.py --topo dumbbell --quick
    sudo /usr/bin/python3 mininet/run.py --topo leafspine --quick
    sudo /usr/bin/python3 mininet/run.py cli --topo leafspine

Launcher of pandalab.mininet (python/pandalab/mininet/, python/launch.py);
see mininet/README.md."""
import os
import runpy
runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                            "..", "python", "launch.py"),
               {"MODULE": "pandalab.mininet"})

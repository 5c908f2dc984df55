#!/usr/bin/python3
"""panda_controller.py run|check|status|sync: the Panda OpenFlow controller.
Launcher of pandaovs.controller (python/pandaovs/controller/,
python/launch.py); see README.md in this directory."""
import os
import runpy
runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                            "..", "..", "python", "launch.py"),
               {"MODULE": "pandaovs.controller"})

#!/usr/bin/python3
"""Simulation runs of Panda-OVS in ns-3 (see sim/README.md):

    /usr/bin/python3 sim/run.py quick          # a dumbbell point per scheme
    /usr/bin/python3 sim/run.py reproduce      # FISH/PIAS reproduction (hours)
    /usr/bin/python3 sim/run.py crosscheck --policy results/<run>/policy.json
    /usr/bin/python3 sim/run.py scale
"""
import sys

from pandasim.cli import main

if __name__ == "__main__":
    sys.exit(main())

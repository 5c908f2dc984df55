#!/usr/bin/python3
"""Panda vs PIAS vs FIFO on this machine (thesis ch. 5).

    sudo /usr/bin/python3 testbed/run.py --quick
    sudo /usr/bin/python3 testbed/run.py --full --reps 10

See testbed/README.md."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pandatb.runner import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

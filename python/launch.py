"""The one launcher behind every Python entry point in the tree.

An entry point (tools/panda-qos, testbed/run.py,
openflow/controller/panda_controller.py, bench/*.py) runs this file with
runpy.run_path() and MODULE (a module of the product, pandaovs.X, or of
the lab, pandalab.X) or SCRIPT (a script path) in its globals.  It
replaces the process (same pid, so signals and exit status are the entry
point's) with

    <same interpreter> -m MODULE ARGS...     or
    <same interpreter> SCRIPT ARGS...

with this directory (python/) on PYTHONPATH: the packages are imported the
normal way, with no sys.path edits.  Installed copies do not use it (the
Ansible role writes a wrapper that names the installed package).
"""

import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_old = os.environ.get("PYTHONPATH")
_env = dict(os.environ, PYTHONPATH=_here + (os.pathsep + _old if _old
                                             else ""))
if "MODULE" in globals():
    _argv = ["-m", globals()["MODULE"]]
else:
    _argv = [globals()["SCRIPT"]]
sys.stdout.flush()
os.execve(sys.executable, [sys.executable] + _argv + sys.argv[1:], _env)

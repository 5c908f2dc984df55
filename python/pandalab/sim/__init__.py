"""pandalab.sim: runs the ns-3 simulator (panda-sim) over sweeps of points and
turns its records into JSON, CSV and figures.

Modules: points (one point: its parameters, its run, its point.json),
policy (collection -> panda-model -> policies), sweep (parallel runner
with progress and resume), metrics (FCT buckets, slowdown, RPC latency),
plots (matplotlib figures), cli (the commands of sim/run.py).

Standard library and matplotlib only; the simulator's launcher is
sim/run.py (python/launch.py).
"""

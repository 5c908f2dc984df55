"""pandasim: runs the ns-3 simulator (panda-sim) over sweeps of points and
turns its records into JSON, CSV and figures.

Modules: points (one point: its parameters, its run, its point.json),
policy (collection -> panda-model -> policies), sweep (parallel runner
with progress and resume), metrics (FCT buckets, slowdown, RPC latency),
plots (matplotlib figures), cli (the commands of sim/run.py).

Self-contained on purpose (standard library and matplotlib only, no
imports from elsewhere in the repository), so that it can move into the
project's Python package as it is.
"""

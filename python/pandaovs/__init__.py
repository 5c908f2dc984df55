"""pandaovs: the Python side of Panda-OVS.

    figures      what every figure shares: schemes' names and colours, axes,
                 PNG (300 dpi), PDF and SVG
    cli          the command-line convention: --version, exit statuses,
                 sizes, rates and durations
    policy       one Panda/PIAS policy: JSON, text, NX wire format
    paths        source tree, build tree, the interpreter
    sandbox      OVS (userspace datapath) in private network namespaces
    loadgen      the load generator's programs (the only traffic source)
    lab          hosts on a sandboxed bridge with a shaped egress port
    qos          panda-qos: K strict-priority queues on an OVS port
    controller   the OpenFlow controller that pushes policies (os-ken)
    testbed      Panda vs PIAS vs FIFO, thesis ch. 5 (testbed/run.py)

Entry points are thin launchers that run 'python3 -m pandaovs.<module>'
with python/ on PYTHONPATH (tools/panda-qos, testbed/run.py,
openflow/controller/panda_controller.py, bench/*).  See
docs/architecture.md.
"""

# The project's version: configure.ac's AC_INIT says the same (a test
# checks that the two agree).
__version__ = "0.1.0"

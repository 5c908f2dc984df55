"""pandaovs: the product's Python side, what the packages install for
operators (panda-ovs-tools, panda-controller).

    cli          the command-line convention: --version, exit statuses,
                 sizes, rates and durations
    policy       one Panda/PIAS policy: JSON, text, NX wire format
    paths        source tree, build tree or installed tree, the interpreter
    qos          panda-qos: K strict-priority queues on an OVS port
    bpfcls       panda-bpf (the tc eBPF classifier) driven from Python
    sizehist     the flow-size histograms the datapath exports
    modeltool    the panda-model driver (policy from measured traffic)
    controller   the OpenFlow controller that pushes policies (os-ken),
                 with auto-tune

The lab (testbed, simulator front end, Mininet, sandboxes, load
generator, OVN and overlay recipes, ADPS experiments) is the package
pandalab beside this one; it imports this package, never the other way
round (docs/design.md, "Product and lab").

Entry points are thin launchers that run 'python3 -m pandaovs.<module>'
(installed: python/launcher.in; in the tree: python/launch.py, with
python/ on PYTHONPATH).  See docs/architecture.md.
"""

# The project's version: configure.ac's AC_INIT says the same (a test
# checks that the two agree).
__version__ = "0.1.0"

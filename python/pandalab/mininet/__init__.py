"""The Mininet front end: the testbed's experiment on Mininet topologies
(a dumbbell, a leaf-spine) of userspace bridges of the patched OVS, with
panda-sched on every switch port; mininet/run.py is its command line,
mininet/README.md its guide.

    topo     the topologies (mininet.topo.Topo) and their static forwarding
    net      MininetSandbox: Mininet inside a private namespace with the
             build tree's OVS (pandalab.sandbox), never any other OVS
    testbed  MininetTestbed: the testbed's Testbed on such a topology
             (the pipeline: panda action at the hosts, DSCP -> queue in
             the fabric)
    cli      the command line

Importing this package does not import Mininet (Debian's mininet imports
under /usr/bin/python3 only); net.available() says whether it can run.
"""

"""pandalab: the lab, the experiments that reproduce the papers' results
on one machine; it runs from a checkout and is not installed by the
packages (docs/design.md, "Product and lab").

    figures      what every figure shares: schemes' names and colours, axes,
                 PNG (300 dpi), PDF and SVG
    console      the long commands' progress lines
    sandbox      OVS (userspace datapath) in private network namespaces
    lab          hosts on a sandboxed bridge with a shaped egress port
    hugepages    the hugepages a DPDK run reserves and gives back
    loadgen      the load generator's programs (the only traffic source)
    iperf3       iperf3 as a cross-check of the load generator's goodput
    workload     the flow-size workloads (CDFs) of the experiments
    cc           congestion control for an experiment (the BPF DCTCP)
    overlay      hypervisors joined by a Geneve/VXLAN overlay
    ovn          OVN on the overlay's hypervisors
    adps         ADPS's experiments
    controller_harness  the controller against sandboxed bridges
    testbed      Panda vs PIAS vs FIFO, thesis ch. 5 (testbed/run.py)
    mininet      the testbed's experiment on Mininet topologies
    sim          the ns-3 simulator's front end (sim/run.py)

It uses the product (pandaovs) as an operator would: the policy, panda-qos
and the controller are the product's, never copies.  Entry points run
'python3 -m pandalab.<module>' through python/launch.py.
"""

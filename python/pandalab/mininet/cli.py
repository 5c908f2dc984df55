"""The Mininet front end's command line (mininet/run.py launches it with
Debian's /usr/bin/python3, where Debian's mininet imports).

    mininet/run.py [run] --topo dumbbell|leafspine [topology options]
                   [every option of testbed/run.py but --qos htb and
                    --calibrate]
    mininet/run.py cli --topo ... [--scheme S --policy policy.json]

'run' (the default) is the testbed's experiment (pandalab.testbed.runner:
stages 1-3, the same result.json, result.csv and plots) on the topology;
'cli' builds the topology with scheme S (default fifo) and opens Mininet's
CLI in it (pingall, 'pm1 ping pm2', 'sh ovs-ofctl -O OpenFlow13
dump-flows s1'...; the sandbox's ovs-* tools are on PATH there), and takes
it down when the CLI exits.  mininet/README.md is the guide.
"""

import dataclasses
import datetime
import sys

from pandaovs import cli, paths
from .. import console
from ..sandbox import is_root
from ..testbed import config, runner
from ..testbed.profiles import PROFILES
from ..testbed.topology import TestbedError
from . import net

PROG = "mininet/run.py"


def add_topology_options(p):
    g = p.add_argument_group("topology")
    g.add_argument("--topo", choices=("dumbbell", "leafspine"),
                   default="dumbbell",
                   help="dumbbell: PM2 - s1 =bottleneck=> s2 - PM1; "
                   "leafspine: PM2 on the first leaf, PM1 on the last, "
                   "the bottleneck is the last leaf's port towards PM1 "
                   "(default %(default)s)")
    g.add_argument("--hosts", type=int,
                   help="hosts per side (dumbbell, default 1) or per leaf "
                   "(leafspine, default 2); PM1 and PM2 count")
    g.add_argument("--leaves", type=int, default=2,
                   help="leafspine: leaf switches (default %(default)d)")
    g.add_argument("--spines", type=int, default=2,
                   help="leafspine: spine switches (default %(default)d)")
    g.add_argument("--fabric-rate-mbit", type=float,
                   help="rate of every switch port but the bottleneck "
                   "(default 10x --rate-mbit)")
    g.add_argument("--controller", action="store_true",
                   help="attach every switch to the project's controller "
                   "(openflow/controller), which then installs the "
                   "panda and host rules of each scheme")


def make_topo(p, a):
    """The topology the options ask for; p.error() if it cannot be."""
    from .topo import TOPOS
    kw = {}
    if a.hosts is not None:
        kw["hosts"] = a.hosts
    if a.topo == "leafspine":
        kw.update(leaves=a.leaves, spines=a.spines)
    try:
        return TOPOS[a.topo](**kw)
    except ValueError as e:
        p.error(str(e))


def parser():
    p = config.parser(prog=PROG)
    p.description = (
        "The testbed's experiment (Panda vs PIAS vs FIFO, thesis ch. 5) on a "
        "Mininet topology of userspace Open vSwitch bridges (the build "
        "tree's patched OVS, in a private network namespace) with "
        "panda-sched on every switch port.  Needs root.  'cli' as the "
        "first argument opens Mininet's CLI on the topology instead.")
    p.set_defaults(qos="panda-sched")
    add_topology_options(p)
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "cli":
        return cli_main(argv[1:])
    if argv and argv[0] in runner.COMMANDS:
        # A Mininet run's result.json is the testbed's.
        return runner.COMMANDS[argv[0]](argv[1:], "%s %s" % (PROG, argv[0]))
    if argv and argv[0] == "run":
        argv = argv[1:]
    p = parser()
    a = p.parse_args(argv)
    if a.qos != "panda-sched":
        p.error("--qos %s: the Mininet topologies run panda-sched on every "
                "switch port" % a.qos)
    if a.calibrate:
        p.error("--calibrate: calibrate on the namespace testbed "
                "(testbed/run.py --calibrate)")
    if a.resume or a.stop_after is not None:
        # The topology options are not in the run's recorded settings
        # (config.SETTINGS), so a continued run could not be checked.
        p.error("--resume/--stop-after: runs over several sessions are "
                "testbed/run.py's (namespace testbed) only")
    if a.ports != "system":
        p.error("--ports %s: the Mininet topologies plug their hosts in "
                "through netdev-linux ports; AF_XDP and DPDK ports are on "
                "the namespace testbed (testbed/run.py --ports %s)"
                % (a.ports, a.ports))
    if PROFILES[a.profile]["tso"]:
        # Mininet's hosts and links are set up with the offloads off
        # (pandalab.mininet.net); the 10g profile's userspace TSO runs on
        # the namespace testbed only.
        p.error("--profile %s: the Mininet topologies run with TSO/GSO/GRO "
                "off; the profile's userspace TSO is on the namespace "
                "testbed (testbed/run.py --profile %s)"
                % (a.profile, a.profile))
    cfg = config.run_config(p, a, argv)
    topo = make_topo(p, a)
    if cfg.dry_run:
        return runner.dry_run(cfg, PROG)
    if cfg.run_id is None:
        cfg = dataclasses.replace(cfg, run_id="%s-mininet-%s-%s-%gm" % (
            datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y%m%d-%H%M%S"), a.topo, cfg.mode, cfg.rate_mbit))
    fabric = a.fabric_rate_mbit * 1e6 if a.fabric_rate_mbit else None
    why = net.available()
    if why:
        print("%s: %s" % (PROG, why), file=sys.stderr)
        return 1

    def testbed(cfg, cc, mtu):
        from .testbed import MininetTestbed
        return MininetTestbed(cfg.build_dir, cfg.qos, topo,
                              fabric_rate_bps=fabric, mtu=mtu, cc=cc,
                              controller=a.controller)
    runner.handle_signals()
    out = console.Console()
    try:
        return runner.execute(
            runner.Run(cfg, log=out, testbed=testbed, prog=PROG,
                       console=out), PROG)
    finally:
        out.close()


def cli_main(argv):
    from ..testbed.schemes import SCHEMES, QosConfig
    from ..testbed.model import load_policy, policies
    p = cli.ArgumentParser(prog=PROG + " cli", description=(
        "Builds a Mininet topology on the patched OVS (as 'run' does) and "
        "opens Mininet's CLI in it."))
    add_topology_options(p)
    p.add_argument("--scheme", default="fifo", choices=sorted(SCHEMES))
    p.add_argument("--policy", help="policy.json of a run (needed by the "
                   "schemes with the panda action)")
    p.add_argument("--rate-mbit", type=float, default=50,
                   help="bottleneck rate (default %(default)g)")
    p.add_argument("--levels", type=int, default=8)
    p.add_argument("--build-dir", default=paths.build_dir())
    a = p.parse_args(argv)
    topo = make_topo(p, a)
    policy = None
    if SCHEMES[a.scheme].policy:
        if not a.policy:
            p.error("--scheme %s needs --policy" % a.scheme)
        policy = policies(load_policy(a.policy))[SCHEMES[a.scheme].policy]
    why = net.available()
    if why or not is_root():
        print("%s: %s" % (PROG, why or "needs root"), file=sys.stderr)
        return 1
    from mininet.cli import CLI
    from .testbed import MininetTestbed
    from ..testbed.profiles import queue_pkts_for
    rate = int(a.rate_mbit * 1e6)
    qos = QosConfig(type="panda-sched", rate_bps=rate, levels=a.levels,
                    queue_pkts=queue_pkts_for(rate), ecn_threshold=0,
                    guard_permille=0)
    fabric = a.fabric_rate_mbit * 1e6 if a.fabric_rate_mbit else None
    tb = MininetTestbed(a.build_dir, qos, topo, fabric_rate_bps=fabric,
                        controller=a.controller)
    try:
        tb.start_network()
        for h in (tb.pm1, tb.pm2):
            tb.set_cc(h)
        tb.set_scheme(a.scheme, policy)
        print("topology: %s" % tb.topology()["bottleneck"])
        tb.sb.mininet(CLI)
    except TestbedError as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 1
    finally:
        tb.stop()
    return 0

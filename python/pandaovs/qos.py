"""panda-qos: K strict-priority egress queues on an Open vSwitch port.

Creates, with plain ovs-vsctl, a linux-htb QoS record for PORT and K Queue
records 0..K-1: queue i has HTB priority i (queue 0 is the top priority,
Panda level 0), a small guaranteed rate (so that no level starves
completely) and the whole link rate as its ceiling.  On the userspace
datapath queue i is tc class 1:i+1 of the port (with the netdev-linux
patches of ovs-patches/qos.series).

By default the queues leave the DSCP alone: the panda action writes each
level's DSCP itself, and a Queue's DSCP would make OVS overwrite it with the
DSCP of the queue chosen at translation time.  --dscp MAP (or "default",
level i -> DSCP i + 1) gives each queue a DSCP that OVS writes into every
packet it puts there, for pipelines that pick queues with set_queue.

    panda-qos add PORT --rate 50M [--levels 8] [--dscp 46/26/.../0|default]
    panda-qos show PORT
    panda-qos del PORT

ovs-vsctl is found on PATH, or given with --vsctl (or $PANDA_VSCTL); it
honours OVS_RUNDIR and friends, so inside a network namespace run e.g.
    ip netns exec NS env OVS_RUNDIR=/tmp/x panda-qos add p1 --rate 1G
tools/panda-qos is the launcher; see tools/README-panda-qos.md.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys

MAX_LEVELS = 8          # HTB has 8 priorities (0..7); Panda's K <= 8.
TAG = "panda-qos"       # external_ids key marking records we created.

RATE_UNITS = {
    "": 1, "bit": 1, "bps": 1,
    "k": 10**3, "kbit": 10**3, "m": 10**6, "mbit": 10**6,
    "g": 10**9, "gbit": 10**9, "t": 10**12, "tbit": 10**12,
}


class UsageError(Exception):
    pass


def parse_rate(text):
    """'50M', '50mbit', '1G', '1000000' -> bit/s (int)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in RATE_UNITS:
        raise UsageError("bad rate %r: expected e.g. 50M, 1G, 100mbit or a "
                         "number of bit/s" % text)
    rate = int(float(m.group(1)) * RATE_UNITS[m.group(2).lower()])
    if rate < 8 * 10**3:
        raise UsageError("rate %r is below 8 kbit/s" % text)
    return rate


def parse_dscp(text, levels):
    parts = text.split("/")
    if len(parts) != levels:
        raise UsageError("--dscp %r has %d values, --levels is %d (one DSCP "
                         "per level, level 0 first)" % (text, len(parts),
                                                        levels))
    out = []
    for p in parts:
        if not p.isdigit() or int(p) > 63:
            raise UsageError("--dscp: %r is not a DSCP value (0..63)" % p)
        out.append(int(p))
    return out


def plan(port, rate, levels, dscp, min_share, burst):
    """Returns the ovs-vsctl arguments that create the QoS for 'port'."""
    min_rate = max(rate * min_share // levels, 8 * 1514)
    args = ["--", "set", "Port", port, "qos=@qos",
            "--", "--id=@qos", "create", "QoS", "type=linux-htb",
            "other_config:max-rate=%d" % rate,
            "external_ids:%s=%d" % (TAG, levels)]
    args += ["queues:%d=@q%d" % (i, i) for i in range(levels)]
    for i in range(levels):
        args += ["--", "--id=@q%d" % i, "create", "Queue",
                 "other_config:priority=%d" % i,
                 "other_config:min-rate=%d" % min_rate,
                 "other_config:max-rate=%d" % rate,
                 "other_config:burst=%d" % burst,
                 "external_ids:%s=%s" % (TAG, port)]
        if dscp is not None:
            args.append("dscp=%d" % dscp[i])
    return args, min_rate


class Vsctl:
    def __init__(self, cmd, dry_run=False):
        self.cmd = cmd
        self.dry_run = dry_run

    def __call__(self, *args, write=False):
        full = self.cmd + ["--timeout=30"] + list(args)
        if write and self.dry_run:
            print("would run: " + " ".join(shlex.quote(a) for a in full))
            return ""
        try:
            res = subprocess.run(full, capture_output=True, text=True)
        except FileNotFoundError:
            raise UsageError("cannot run %s (use --vsctl or PANDA_VSCTL)"
                             % self.cmd[0])
        if res.returncode:
            raise UsageError("%s failed: %s" % (
                " ".join(shlex.quote(a) for a in full[:4]) + " ...",
                res.stderr.strip()))
        return res.stdout.strip()


def port_qos(vsctl, port):
    out = vsctl("get", "Port", port, "qos")
    return None if out in ("[]", "") else out


def do_del(vsctl, port, quiet=False):
    """Removes the QoS of 'port' and its queues (only if panda-qos made
    them); returns True if something was removed."""
    qos = port_qos(vsctl, port)
    if not qos:
        if not quiet:
            print("%s: no QoS configured" % port)
        return False
    ext = vsctl("get", "QoS", qos, "external_ids")
    if TAG not in ext:
        raise UsageError("the QoS of port %s was not created by panda-qos "
                         "(external_ids %s); not touching it" % (port, ext))
    queues = re.findall(r"=([0-9a-f-]{36})", vsctl("get", "QoS", qos,
                                                   "queues"))
    args = ["--", "clear", "Port", port, "qos", "--", "destroy", "QoS", qos]
    for q in queues:
        args += ["--", "destroy", "Queue", q]
    vsctl(*args, write=True)
    print("%s: removed QoS %s and %d queues" % (port, qos, len(queues)))
    return True


def do_show(vsctl, port):
    qos = port_qos(vsctl, port)
    if not qos:
        print("%s: no QoS configured" % port)
        return
    print("%s: QoS %s type=%s %s" % (
        port, qos, vsctl("get", "QoS", qos, "type"),
        vsctl("get", "QoS", qos, "other_config")))
    queues = vsctl("get", "QoS", qos, "queues").strip("{}")
    for item in filter(None, (s.strip() for s in queues.split(","))):
        num, uuid = item.split("=")
        print("  queue %s (tc class 1:%d): dscp=%s %s" % (
            num, int(num) + 1, vsctl("get", "Queue", uuid, "dscp"),
            vsctl("get", "Queue", uuid, "other_config")))


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="panda-qos", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--vsctl", default=os.environ.get("PANDA_VSCTL",
                                                          "ovs-vsctl"),
                        help="ovs-vsctl command (default: $PANDA_VSCTL or "
                        "ovs-vsctl); may include options, e.g. "
                        "'ovs-vsctl --db=unix:/x/db.sock'")
    common.add_argument("-n", "--dry-run", action="store_true",
                        help="print the ovs-vsctl command that would "
                        "change the database instead of running it")
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("add", parents=[common],
                       help="create (or replace) the K-level QoS")
    a.add_argument("port")
    a.add_argument("--rate", required=True,
                   help="link rate to shape to (e.g. 50M, 1G; bit/s)")
    a.add_argument("--levels", "-k", type=int, default=MAX_LEVELS,
                   help="number of queues/levels K, 1..8 (default 8)")
    a.add_argument("--dscp", help="per-level DSCP map, level 0 first, "
                   "e.g. 46/26/18/0, or 'default' for level i -> DSCP i+1: "
                   "OVS then rewrites the DSCP of every packet it puts in a "
                   "queue.  Only for pipelines that pick queues with "
                   "set_queue; the panda action writes the DSCP itself, and "
                   "a queue DSCP would overwrite it (default: none)")
    a.add_argument("--no-dscp", action="store_true",
                   help="do not let OVS rewrite DSCP per queue (the "
                   "default)")
    a.add_argument("--min-share", type=float, default=0.1,
                   help="fraction of the rate guaranteed to all levels "
                   "together, split evenly (default 0.1); the rest goes "
                   "strictly by priority")
    a.add_argument("--burst", help="HTB burst per queue, in bits "
                   "(default: 1 ms at the link rate, at least 2 frames)")
    d = sub.add_parser("del", parents=[common],
                       help="remove the QoS created by panda-qos")
    d.add_argument("port")
    s = sub.add_parser("show", parents=[common],
                       help="print the QoS of the port")
    s.add_argument("port")
    args = ap.parse_args(argv)

    try:
        vsctl = Vsctl(shlex.split(args.vsctl), args.dry_run)
        if args.cmd == "show":
            do_show(vsctl, args.port)
            return 0
        if args.cmd == "del":
            do_del(vsctl, args.port)
            return 0

        if not 1 <= args.levels <= MAX_LEVELS:
            raise UsageError("--levels %d: must be 1..%d (HTB has %d "
                             "priorities)" % (args.levels, MAX_LEVELS,
                                              MAX_LEVELS))
        if not 0 < args.min_share < 1:
            raise UsageError("--min-share %s: must be between 0 and 1"
                             % args.min_share)
        rate = parse_rate(args.rate)
        if args.no_dscp or not args.dscp:
            dscp = None
        elif args.dscp == "default":
            dscp = [i + 1 for i in range(args.levels)]
        else:
            dscp = parse_dscp(args.dscp, args.levels)
        if args.burst:
            if not args.burst.isdigit() or int(args.burst) < 8 * 1514:
                raise UsageError("--burst %r: must be a number of bits, at "
                                 "least one full frame (12112)" % args.burst)
            burst = int(args.burst)
        else:
            burst = max(rate // 1000, 2 * 8 * 1514)

        # The port must exist; any QoS we made before is replaced.
        vsctl("get", "Port", args.port, "name")
        if not args.dry_run:
            existing = port_qos(vsctl, args.port)
            if existing:
                do_del(vsctl, args.port, quiet=True)
        cmd, min_rate = plan(args.port, rate, args.levels, dscp,
                             args.min_share, burst)
        vsctl(*cmd, write=True)
        print("%s: linux-htb QoS, link rate %d bit/s, %d queues"
              % (args.port, rate, args.levels))
        for i in range(args.levels):
            print("  queue %d -> tc class 1:%d  priority %d  min-rate %d  "
                  "max-rate %d  burst %d%s" % (
                      i, i + 1, i, min_rate, rate, burst,
                      "" if dscp is None else "  dscp %d" % dscp[i]))
        return 0
    except UsageError as e:
        print("panda-qos: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

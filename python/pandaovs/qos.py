"""panda-qos: K strict-priority egress levels on an Open vSwitch port.

Creates, with plain ovs-vsctl, one QoS record for PORT and K Queue records
0..K-1 (queue i = Panda level i, queue 0 the top priority), of one of two
types:

  panda-sched (default)  the project's egress scheduler in the userspace
      datapath (ovs-patches/sched.series; docs/guide.md, "panda-sched"):
      K strict levels, per-flow queues served round robin inside each
      level, port ECN threshold, starvation guard, shaping to the link
      rate.  Works on every port type of the userspace datapath.
  htb                    kernel linux-htb (ovs-patches/qos.series): queue i
      is tc class 1:i+1 with HTB priority i, the whole link rate as its
      ceiling and a guaranteed rate: a small one for each lower level (so
      that none starves completely), the rest of the link for level 0 (so
      that it stays strictly first); one FIFO per level, no marking.

By default the queues leave the DSCP alone: the panda action writes each
level's DSCP itself, and a Queue's DSCP would make OVS overwrite it with the
DSCP of the queue chosen at translation time.  --dscp MAP (or "default",
level i -> DSCP i + 1) gives each queue a DSCP that OVS writes into every
packet it puts there, for pipelines that pick queues with set_queue.

    panda-qos add PORT --rate 50M [--type panda-sched|htb] [--levels 8]
              [--dscp 46/26/.../0|default]
              panda-sched: [--ecn-threshold BYTES] [--guard PERMILLE]
                           [--fifo-levels] [--limit-bytes N]
                           [--limit-packets N] [--set KEY=VALUE ...]
              htb:         [--min-share F] [--burst SIZE]
    panda-qos show PORT
    panda-qos del PORT

add waits until ovs-vswitchd reports the new QoS in the QoS record's status
column (ovs-patches/qos.series): "active", or "refused" with an error naming the
problem; a refused QoS is taken back and the port keeps what it had.  The
panda-sched keys are checked by the scheduler's own parser in ovs-vswitchd
(lib/panda/scheduler.c), the one place that knows their ranges; this tool
checks only what it needs to write the records (numbers, the rate).

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
import time

from . import cli

MAX_LEVELS = 8          # Panda's K <= 8 (HTB has 8 priorities, panda-sched
                        # 8 levels).
TAG = "panda-qos"       # external_ids key marking records we created.
TYPES = {"panda-sched": "panda-sched", "htb": "linux-htb"}  # -> OVS type
WAIT_S = 30             # for ovs-vswitchd to report the QoS state

# panda-sched keys that have an option of their own: option -> key.
SCHED_OPTIONS = (("ecn_threshold", "ecn-threshold"), ("guard", "guard"),
                 ("limit_bytes", "limit-bytes"),
                 ("limit_packets", "limit-packets"))
HTB_OPTIONS = ("min_share", "burst", "burst_bits")


class QosError(Exception):
    """A failure at run time: ovs-vsctl failed, ovs-vswitchd refused the
    QoS, a record is not ours (exit status 1)."""


class UsageError(QosError):
    """A bad command line (exit status 2)."""


def parse_rate(text):
    """'50M', '50mbit', '1G', '1000000' -> bit/s (int): the project's rate
    syntax (pandaovs.cli), a bare number being bit/s as in OVS's
    max-rate."""
    try:
        rate = int(cli.parse_rate(text))
    except ValueError as e:
        raise UsageError("--rate: %s" % e)
    if rate < 8 * 10**3:
        raise UsageError("rate %r is below 8 kbit/s" % text)
    return rate


# The smallest htb burst: one full frame.
HTB_MIN_BURST_BYTES = 1514


def htb_burst_bits(burst, burst_bits, rate):
    """linux-htb's other_config:burst (bits) from --burst (bytes, the
    project's unit for sizes) or --burst-bits (the unit of linux-htb's
    key, and of --burst in earlier versions); default 1 ms at the rate, at
    least two full frames."""
    if burst is not None and burst_bits is not None:
        raise UsageError("--burst (bytes) and --burst-bits: give one")
    if burst_bits is not None:
        if not burst_bits.isdigit() or int(burst_bits) < 8 * \
                HTB_MIN_BURST_BYTES:
            raise UsageError("--burst-bits %r: must be a number of bits, at "
                             "least one full frame (%d)"
                             % (burst_bits, 8 * HTB_MIN_BURST_BYTES))
        return int(burst_bits)
    if burst is not None:
        try:
            nbytes = cli.parse_size(burst)
        except ValueError as e:
            raise UsageError("--burst: %s" % e)
        if nbytes < HTB_MIN_BURST_BYTES:
            raise UsageError("--burst %s: at least one full frame, %d bytes"
                             % (burst, HTB_MIN_BURST_BYTES))
        if burst.isdigit():
            # Earlier versions took bits: say so while scripts adapt.
            print("panda-qos: warning: --burst %s is taken as bytes "
                  "(earlier versions took bits: --burst-bits %s keeps that "
                  "meaning); give a unit, e.g. %sB, to silence this"
                  % (burst, burst, burst), file=sys.stderr)
        return 8 * nbytes
    return htb_default_burst(rate)


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


def parse_setting(text):
    """'KEY=VALUE' (a panda-sched other_config key, e.g. 'wred=0-45:...'
    or '2.per-flow=false') -> (key, value)."""
    key, sep, value = text.partition("=")
    if not sep or not re.fullmatch(r"[0-9]*\.?[a-z][a-z-]*", key) \
            or not value:
        raise UsageError("--set %r: expected KEY=VALUE with a panda-sched "
                         "key, e.g. burst=62500 or 2.per-flow=false" % text)
    return key, value


def sched_settings(args):
    """The panda-sched other_config of 'args' (argparse namespace): the
    options with a name of their own, then --set; a key given twice is an
    error.  Returns [(key, value)]."""
    out = []
    for opt, key in SCHED_OPTIONS:
        v = getattr(args, opt)
        if v is not None:
            if v < 0:
                raise UsageError("--%s %d: must not be negative"
                                 % (opt.replace("_", "-"), v))
            out.append((key, str(v)))
    if args.fifo_levels:
        out.append(("per-flow", "false"))
    for text in args.set or ():
        out.append(parse_setting(text))
    seen = set()
    for key, _ in out:
        if key in seen:
            raise UsageError("panda-sched key %r given twice" % key)
        seen.add(key)
    if "max-rate" in seen or "levels" in seen:
        raise UsageError("give the rate and the number of levels with "
                         "--rate and --levels, not --set")
    return out


def htb_min_rates(rate, levels, min_share):
    """Each queue's guaranteed rate (bit/s), queue 0 first: 'min_share' of
    the link split evenly over the lower queues 1..K-1 (at least one full
    frame per second each), and the rest of the link to queue 0.

    Why queue 0 gets the rest: HTB sends a class's packets at once while
    the class is within its guarantee; beyond it the class borrows from
    the parent, waiting for tokens that backlogged lower classes use up
    too, and a top level that borrows waits far longer than a frame
    (tools/README-panda-qos.md has the figures).  Guaranteed the rest of
    the link, level 0 borrows only beyond that; the lower queues keep
    their guarantee, and the sum stays the link rate, so the link is not
    oversubscribed."""
    if levels == 1:
        return [rate]
    low = max(int(rate * min_share) // (levels - 1), 8 * HTB_MIN_BURST_BYTES)
    return [max(rate - low * (levels - 1), 8 * HTB_MIN_BURST_BYTES)] \
        + [low] * (levels - 1)


def htb_default_burst(rate):
    """A queue's burst (bits): 1 ms at the link rate, at least two full
    frames."""
    return max(rate // 1000, 2 * 8 * HTB_MIN_BURST_BYTES)


def parse_tc_classes(text):
    """'tc -s class show' output -> {classid: {"bytes", "packets",
    "dropped"}}, plus "backlog" (packets) and, for htb, "lended" (packets
    sent within the class's own rate) and "borrowed" when tc prints
    them."""
    out = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"class \S+ (\S+) ", line)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r"\s*Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", line)
        if m and cur:
            out[cur] = {"bytes": int(m.group(1)), "packets": int(m.group(2)),
                        "dropped": int(m.group(3))}
            continue
        m = re.match(r"\s*backlog \S+ (\d+)p", line)
        if m and cur in out:
            out[cur]["backlog"] = int(m.group(1))
            continue
        m = re.match(r"\s*lended: (\d+) borrowed: (\d+)", line)
        if m and cur in out:
            out[cur]["lended"] = int(m.group(1))
            out[cur]["borrowed"] = int(m.group(2))
    return out


def tc_htb_plan(dev, rate, levels, min_share=0.1, burst=None, mtu=1500):
    """The tc commands (argument lists after "tc") that give 'dev' the
    classes OVS's linux-htb QoS would with panda-qos's Queue records, for
    a host whose queues are not OVS's (the BPF classifier on a plain
    interface): root qdisc 1: with default class 1:1, root class 1:fffe at
    the link rate, queue i = class 1:i+1 under it with HTB priority i, the
    guaranteed rate of htb_min_rates(), the link rate as ceiling and the
    same burst for both buckets, quantum at least the MTU (as
    netdev-linux's htb_setup_class__() makes them)."""
    if not 1 <= levels <= MAX_LEVELS:
        raise UsageError("%d levels: must be 1..%d" % (levels, MAX_LEVELS))
    burst = htb_default_burst(rate) if burst is None else burst
    min_rates = htb_min_rates(rate, levels, min_share)
    burst_b = max(burst // 8, mtu + 64)
    cmds = [["qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb",
             "default", "1"],
            ["class", "replace", "dev", dev, "parent", "1:", "classid",
             "1:fffe", "htb", "rate", "%dbit" % rate, "ceil", "%dbit" % rate,
             "burst", "%db" % burst_b, "cburst", "%db" % burst_b]]
    for i in range(levels):
        c = ["class", "replace", "dev", dev, "parent", "1:fffe", "classid",
             "1:%x" % (i + 1), "htb", "rate", "%dbit" % min_rates[i],
             "ceil", "%dbit" % rate, "burst", "%db" % burst_b, "cburst",
             "%db" % burst_b, "prio", str(i)]
        # The quantum only shares borrowed rate among classes of one
        # priority, which these are not; r2q 10 would make it below an
        # MTU for a small guarantee and above htb's 200000-byte cap for
        # queue 0's, and the kernel warns about both.
        c += ["quantum", str(mtu)]
        cmds.append(c)
    return cmds


def plan_htb(port, rate, levels, dscp, min_share, burst):
    """Returns the ovs-vsctl arguments that create the linux-htb QoS for
    'port', and each queue's guaranteed rate (htb_min_rates())."""
    min_rates = htb_min_rates(rate, levels, min_share)
    args = ["--", "set", "Port", port, "qos=@qos",
            "--", "--id=@qos", "create", "QoS", "type=linux-htb",
            "other_config:max-rate=%d" % rate,
            "external_ids:%s=%d" % (TAG, levels)]
    args += ["queues:%d=@q%d" % (i, i) for i in range(levels)]
    for i in range(levels):
        args += ["--", "--id=@q%d" % i, "create", "Queue",
                 "other_config:priority=%d" % i,
                 "other_config:min-rate=%d" % min_rates[i],
                 "other_config:max-rate=%d" % rate,
                 "other_config:burst=%d" % burst,
                 "external_ids:%s=%s" % (TAG, port)]
        if dscp is not None:
            args.append("dscp=%d" % dscp[i])
    return args, min_rates


def plan_sched(port, rate, levels, dscp, settings):
    """Returns the ovs-vsctl arguments that create the panda-sched QoS for
    'port': 'settings' [(key, value)] go into the QoS other_config as they
    are (per-level keys too, "LEVEL.key"); the K Queue records name the
    levels (OpenFlow queue statistics, set_queue) and carry the DSCP map."""
    args = ["--", "set", "Port", port, "qos=@qos",
            "--", "--id=@qos", "create", "QoS", "type=panda-sched",
            "other_config:max-rate=%d" % rate,
            "other_config:levels=%d" % levels]
    args += ["other_config:%s=%s" % kv for kv in settings]
    args += ["external_ids:%s=%d" % (TAG, levels)]
    args += ["queues:%d=@q%d" % (i, i) for i in range(levels)]
    for i in range(levels):
        args += ["--", "--id=@q%d" % i, "create", "Queue",
                 "external_ids:%s=%s" % (TAG, port)]
        if dscp is not None:
            args.append("dscp=%d" % dscp[i])
    return args


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
            raise QosError("cannot run %s (use --vsctl or PANDA_VSCTL)"
                           % self.cmd[0])
        if res.returncode:
            raise QosError("%s failed: %s" % (
                " ".join(shlex.quote(a) for a in full[:4]) + " ...",
                res.stderr.strip()))
        return res.stdout.strip()


def port_qos(vsctl, port):
    out = vsctl("get", "Port", port, "qos")
    return None if out in ("[]", "") else out


def qos_queues(vsctl, qos):
    return re.findall(r"=([0-9a-f-]{36})",
                      vsctl("get", "QoS", qos, "queues"))


def parse_status(text):
    """ovs-vsctl's text of a status map, e.g. '{config="a=1,b=2",
    state=active}' -> {"config": "a=1,b=2", "state": "active"}."""
    return {k: v.strip('"').replace('\\"', '"') for k, v in re.findall(
        r'([\w-]+)=("(?:[^"\\]|\\.)*"|[^,}]*)', text)}


def qos_status(vsctl, qos):
    """The QoS record's status column as a dict ({} while ovs-vswitchd has
    not written it); None if this OVS has no such column (stock OVS)."""
    try:
        out = vsctl("get", "QoS", qos, "status")
    except QosError as e:
        if "column" in str(e):
            return None
        raise
    return parse_status(out)


def wait_status(vsctl, qos, timeout):
    """Waits until ovs-vswitchd reports the QoS active or refused; returns
    the status (None: this OVS reports no QoS status)."""
    deadline = time.monotonic() + timeout
    while True:
        st = qos_status(vsctl, qos)
        if st is None or st.get("state") in ("active", "refused"):
            return st
        if time.monotonic() >= deadline:
            raise QosError(
                "ovs-vswitchd did not apply QoS %s within %g s (status %s); "
                "is it running?  The records are left in the database"
                % (qos, timeout, st or "empty"))
        time.sleep(0.1)


def owned(vsctl, qos, port):
    ext = vsctl("get", "QoS", qos, "external_ids")
    if TAG not in ext:
        raise QosError("the QoS of port %s was not created by panda-qos "
                         "(external_ids %s); not touching it" % (port, ext))


def destroy_args(qos, queues):
    args = ["--", "destroy", "QoS", qos]
    for q in queues:
        args += ["--", "destroy", "Queue", q]
    return args


def do_del(vsctl, port, quiet=False):
    """Removes the QoS of 'port' and its queues (only if panda-qos made
    them); returns True if something was removed."""
    qos = port_qos(vsctl, port)
    if not qos:
        if not quiet:
            print("%s: no QoS configured" % port)
        return False
    owned(vsctl, qos, port)
    queues = qos_queues(vsctl, qos)
    vsctl("--", "clear", "Port", port, "qos", *destroy_args(qos, queues),
          write=True)
    print("%s: removed QoS %s and %d queues" % (port, qos, len(queues)))
    return True


def do_add(vsctl, port, qos_type, create, wait):
    """Puts the QoS that 'create' (plan_*) makes on 'port' in place of the
    one it had (which must be ours), in one transaction; then waits for
    ovs-vswitchd's verdict.  Refused: the old QoS (or none) is put back
    and the new records destroyed, so nothing is lost.  Returns the new
    QoS's status ({} when not waited for)."""
    old = port_qos(vsctl, port)
    if old:
        owned(vsctl, old, port)
    vsctl(*create, write=True)
    if vsctl.dry_run:
        return {}
    new = port_qos(vsctl, port)
    if wait:
        st = wait_status(vsctl, new, wait)
    else:
        st = qos_status(vsctl, new)
    if st is None and qos_type == "panda-sched":
        st = {"state": "refused", "error": "this Open vSwitch reports no "
              "QoS status: it is not built with ovs-patches/sched.series"}
    if st and st.get("state") == "refused":
        back = (["--", "set", "Port", port, "qos=%s" % old] if old
                else ["--", "clear", "Port", port, "qos"])
        vsctl(*back, *destroy_args(new, qos_queues(vsctl, new)), write=True)
        raise QosError("%s: ovs-vswitchd refused the %s QoS: %s; the port "
                       "keeps %s" % (port, qos_type, st.get("error"),
                                     "its previous QoS" if old
                                     else "no QoS"))
    if old:
        vsctl(*destroy_args(old, qos_queues(vsctl, old)), write=True)
    return st or {}


def do_show(vsctl, port):
    qos = port_qos(vsctl, port)
    if not qos:
        print("%s: no QoS configured" % port)
        return
    qtype = vsctl("get", "QoS", qos, "type")
    print("%s: QoS %s type=%s %s" % (
        port, qos, qtype, vsctl("get", "QoS", qos, "other_config")))
    st = qos_status(vsctl, qos)
    if st:
        print("  status: %s" % " ".join("%s=%s" % kv for kv in st.items()))
    queues = vsctl("get", "QoS", qos, "queues").strip("{}")
    for item in filter(None, (s.strip() for s in queues.split(","))):
        num, uuid = item.split("=")
        where = ("level %s" % num if qtype == "panda-sched"
                 else "tc class 1:%d" % (int(num) + 1))
        print("  queue %s (%s): dscp=%s %s" % (
            num, where, vsctl("get", "Queue", uuid, "dscp"),
            vsctl("get", "Queue", uuid, "other_config")))
    if qtype == "panda-sched":
        print("  (counters: ovs-appctl panda-sched/show %s)" % port)


def parser():
    ap = cli.ArgumentParser(
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
    a.add_argument("--type", "-t", choices=sorted(TYPES),
                   default="panda-sched", help="panda-sched (default): the "
                   "userspace datapath's scheduler; htb: kernel linux-htb")
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
    a.add_argument("--wait", type=float, default=WAIT_S,
                   help="seconds to wait for ovs-vswitchd to apply the QoS "
                   "(0: do not wait; default %(default)g)")
    s = a.add_argument_group("panda-sched (docs/panda-sched-keys.md has "
                             "every key and default)")
    s.add_argument("--ecn-threshold", type=int, metavar="BYTES",
                   help="mark CE on ECN-capable packets when the port's "
                   "backlog exceeds BYTES (default: off)")
    s.add_argument("--guard", type=int, metavar="PERMILLE",
                   help="share of the link, in 1/1000, that waiting lower "
                   "levels get (FISH's starvation guard; default 0: strict "
                   "priority)")
    s.add_argument("--fifo-levels", action="store_true",
                   help="one FIFO per level instead of per-flow queues")
    s.add_argument("--limit-bytes", type=int, metavar="N",
                   help="port buffer in bytes")
    s.add_argument("--limit-packets", type=int, metavar="N",
                   help="port buffer in packets")
    s.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="any other panda-sched key, e.g. burst=62500, "
                   "wred=0-45:15000:700000:0.1, 2.per-flow=false "
                   "(repeatable)")
    h = a.add_argument_group("htb")
    h.add_argument("--min-share", type=float,
                   help="fraction of the rate guaranteed to the lower "
                   "levels 1..K-1 together, split evenly (default 0.1); "
                   "level 0 is guaranteed the rest, so that no lower "
                   "level's guarantee passes ahead of it")
    h.add_argument("--burst", metavar="SIZE",
                   help="HTB burst per queue, in bytes (e.g. 15000, 15K, "
                   "64Ki; default: 1 ms at the link rate, at least 2 "
                   "frames)")
    h.add_argument("--burst-bits", metavar="BITS",
                   help="the same in bits, as linux-htb's other_config:burst "
                   "(and --burst in earlier versions)")
    d = sub.add_parser("del", parents=[common],
                       help="remove the QoS created by panda-qos")
    d.add_argument("port")
    sh = sub.add_parser("show", parents=[common],
                        help="print the QoS of the port")
    sh.add_argument("port")
    return ap


def check_options(args):
    """Options of the other type are refused rather than ignored."""
    if args.type == "htb":
        given = [o for o, _ in SCHED_OPTIONS if getattr(args, o) is not None]
        given += ["fifo_levels"] if args.fifo_levels else []
        given += ["set"] if args.set else []
        if given:
            raise UsageError("--%s: a panda-sched option; linux-htb has one "
                             "FIFO per level and cannot mark ECN (use --type "
                             "panda-sched)" % given[0].replace("_", "-"))
    else:
        given = [o for o in HTB_OPTIONS if getattr(args, o) is not None]
        if given:
            raise UsageError("--%s: an htb option (panda-sched: --set "
                             "burst=BYTES for its token bucket)"
                             % given[0].replace("_", "-"))


def add(vsctl, args):
    check_options(args)
    if not 1 <= args.levels <= MAX_LEVELS:
        raise UsageError("--levels %d: must be 1..%d"
                         % (args.levels, MAX_LEVELS))
    rate = parse_rate(args.rate)
    if args.no_dscp or not args.dscp:
        dscp = None
    elif args.dscp == "default":
        dscp = [i + 1 for i in range(args.levels)]
    else:
        dscp = parse_dscp(args.dscp, args.levels)
    if args.wait < 0:
        raise UsageError("--wait %g: must not be negative" % args.wait)

    if args.type == "panda-sched":
        settings = sched_settings(args)
        create = plan_sched(args.port, rate, args.levels, dscp, settings)
    else:
        min_share = 0.1 if args.min_share is None else args.min_share
        if not 0 < min_share < 1:
            raise UsageError("--min-share %s: must be between 0 and 1"
                             % min_share)
        burst = htb_burst_bits(args.burst, args.burst_bits, rate)
        create, min_rates = plan_htb(args.port, rate, args.levels, dscp,
                                    min_share, burst)

    # The port must exist; a QoS we made before is replaced.
    vsctl("get", "Port", args.port, "name")
    st = do_add(vsctl, args.port, args.type, create, args.wait)
    print("%s: %s QoS, link rate %d bit/s, %d %s%s" % (
        args.port, TYPES[args.type], rate, args.levels,
        "levels" if args.type == "panda-sched" else "queues",
        " (%s)" % st["state"] if st.get("state") else ""))
    if args.type == "panda-sched":
        if st.get("config"):
            print("  in effect: %s" % st["config"])
        elif settings:
            print("  other_config: %s" % ",".join("%s=%s" % kv
                                                  for kv in settings))
        if dscp is not None:
            print("  dscp per level: %s" % "/".join(map(str, dscp)))
    else:
        for i in range(args.levels):
            print("  queue %d -> tc class 1:%d  priority %d  min-rate %d  "
                  "max-rate %d  burst %s%s" % (
                      i, i + 1, i, min_rates[i], rate,
                      "%d bytes" % (burst // 8) if burst % 8 == 0
                      else "%d bits" % burst,
                      "" if dscp is None else "  dscp %d" % dscp[i]))


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        vsctl = Vsctl(shlex.split(args.vsctl), args.dry_run)
        if args.cmd == "show":
            do_show(vsctl, args.port)
        elif args.cmd == "del":
            do_del(vsctl, args.port)
        else:
            add(vsctl, args)
        return cli.EXIT_OK
    except UsageError as e:
        print("panda-qos: %s" % e, file=sys.stderr)
        return cli.EXIT_USAGE
    except QosError as e:
        print("panda-qos: %s" % e, file=sys.stderr)
        return cli.EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())

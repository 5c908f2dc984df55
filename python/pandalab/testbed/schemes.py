"""The schemes the testbed compares and the egress QoS they run on: one
table, read by the command line (which combinations exist), the topology
(OpenFlow and QoS settings per scheme) and the report.

A scheme is two things: how packets get their level (OpenFlow: nothing,
everything in queue 0; or the panda action with the model's PIAS or Panda
policy) and what the egress does inside and across levels (per-flow queues,
starvation guard, port ECN).  The second part needs the panda-sched QoS
type; linux-htb has one FIFO per level, strict-ish priority and drop-tail,
so only the schemes that ask for nothing more run on it."""

import dataclasses
from typing import Optional

QOS_TYPES = ("panda-sched", "htb")

# FISH leaves the guard's share open; 5% of the link for waiting lower
# levels bounds what it costs the top level (one MTU in 20 ahead of it) and
# still moves a large flow at 2.5 Mbit/s at 50 Mbit/s.
DEFAULT_GUARD_PERMILLE = 50

# The thesis's port ECN threshold K (§4.2, scheme 3: 30 KB at 1 Gbit/s),
# kept in bytes rather than scaled with the rate like the buffer: scaled to
# 50 Mbit/s it would be one packet, and 14 flows' minimum windows already
# exceed that, so every packet would be marked.  30 KB is 4.8 ms at 50
# Mbit/s, 40% of the 12 ms buffer.
DEFAULT_ECN_THRESHOLD = 30000

FRAME = 1514            # bytes of a full frame on the wire (MTU 1500)

# panda-sched's token bucket in the testbed: two frames, on every port
# type, set explicitly (the library's default is the same up to 242
# Mbit/s, then 100 us at the rate).  A deep bucket (the datapath's default
# was once 10 ms at the rate, for a main thread that comes back late on a
# busy host, which catch-up now covers) lets an unloaded memcached
# response of up to 62.5 kB (at 50 Mbit/s) leave at line rate, so the
# unloaded floor would no longer be the floor a loaded connection can
# reach (there the bucket is empty and the response is serialised at the
# link rate, as HTB serialises it loaded or not).  Two frames take 484 us at 50 Mbit/s: a PMD thread (--ports
# afxdp/dpdk) comes back every pmd-maxsleep plus the timer slack, and the
# main thread, which serves system ports, sleeps on a timerfd until the
# next packet may leave (ovs-ext/lib/dpif-netdev-sched.c); when either
# comes back late on a backlogged port, catch-up keeps the rate.
SCHED_BURST = 2 * FRAME


@dataclasses.dataclass(frozen=True)
class Scheme:
    name: str
    policy: Optional[str]   # None (plain forwarding, queue 0), "pias",
                            # "panda" or "panda-w1": the model policy the
                            # action runs
    per_flow: bool          # per-flow queues (DRR) in each level
    guard: bool             # FISH's starvation guard
    ecn: bool               # ECN signals, when the run has ECN: the port
                            # threshold, or CoDel's marks with fq_codel
    sched_only: bool        # needs panda-sched (not on linux-htb)
    base: Optional[str]     # the scheme this one differs from in exactly
                            # one of EGRESS_FIELDS (None: fifo, the root)
    description: str
    fq_codel: bool = False  # the per-flow queues run as fq_codel
                            # (panda-sched's fq-codel=true: new flows
                            # first, CoDel per queue, which signals in
                            # place of the port threshold)


# What a scheme is made of: how packets get their level and what the
# egress does with them.  Two schemes are compared on one of these at a
# time (differences()).
EGRESS_FIELDS = ("policy", "per_flow", "guard", "ecn", "fq_codel")

# Every scheme is one step from its base, so that each comparison the
# targets and figures make changes one thing.  pias and panda run on the
# same egress, the thesis's strict-priority FIFO levels (§4.2: the levels
# are the switch's priority queues), and differ only in the policy; the
# per-flow queues of FISH are their own factor: pias-pf and panda-pf add
# them to each classifier, and fish is pias-pf with the starvation guard.
SCHEMES = {s.name: s for s in (
    Scheme("fifo", None, False, False, True, False, None,
           "no flow scheduling: everything in level 0, one FIFO"),
    Scheme("pias", "pias", False, False, True, False, "fifo",
           "PIAS: levels by bytes sent (model's PIAS thresholds), one "
           "FIFO per level"),
    Scheme("fish", "pias", True, True, True, True, "pias-pf",
           "FISH: PIAS levels, per-flow queues in each level, "
           "starvation guard"),
    Scheme("fq_codel", None, True, False, True, True, "fq-drr",
           "what an operator would run without priorities: one level of "
           "fq_codel (new flows first, CoDel per flow queue, 5 ms / 100 "
           "ms, marking ECN-capable packets in place of the port "
           "threshold)", fq_codel=True),
    Scheme("fq-drr", None, True, False, True, True, "fifo",
           "flow isolation only: one level of per-flow queues served by "
           "plain DRR (named fq in runs before fq_codel)"),
    Scheme("panda", "panda", False, False, True, False, "pias",
           "Panda: levels by the model's Panda policy, one FIFO per "
           "level (pias's egress)"),
    Scheme("pias-pf", "pias", True, False, True, True, "pias",
           "pias with per-flow queues in each level (fish without the "
           "guard)"),
    Scheme("panda-pf", "panda", True, False, True, True, "panda",
           "panda with per-flow queues in each level"),
    Scheme("panda-guard", "panda", False, True, True, True, "panda",
           "panda with FISH's starvation guard"),
    Scheme("panda-droptail", "panda", False, False, False, True, "panda",
           "panda without port ECN: drop-tail at the same buffer"),
    Scheme("panda-w1", "panda-w1", False, False, True, False, "panda",
           "panda with every size-interval weight 1 (the thesis's "
           "evaluation): the model run again without --weight-values; "
           "profiles with weights only"),
)}


def differences(a, b):
    """The EGRESS_FIELDS in which schemes 'a' and 'b' differ (names)."""
    return [f for f in EGRESS_FIELDS
            if getattr(SCHEMES[a], f) != getattr(SCHEMES[b], f)]


def change(a, b):
    """'a' against 'b' in words, e.g. "policy: pias -> panda"."""
    diff = differences(a, b)
    return ", ".join("%s: %s -> %s" % (f, _word(getattr(SCHEMES[a], f)),
                                       _word(getattr(SCHEMES[b], f)))
                     for f in diff) or "nothing"


def _word(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    return "none" if v is None else v


# The order of tables and figures; --schemes defaults.
ORDER = tuple(SCHEMES)
DEFAULT_SCHEMES = {"panda-sched": ("fifo", "pias", "fish", "fq_codel",
                                   "panda"),
                   "htb": ("fifo", "pias", "panda")}
# Runs of one point (quick, headline) on panda-sched add the ablations the
# targets need (the guard for the large flows, ECN against drop-tail) and
# the per-flow queues as a factor of their own (each classifier with and
# without them).  Full runs leave them to --schemes: 27 more points each.
ABLATIONS = ("panda-guard", "panda-droptail")
PER_FLOW_FACTOR = ("pias-pf", "panda-pf")
# Runs of a profile with size-interval weights add this one: the weights
# against all ones in the same run.
WEIGHTS_ABLATION = "panda-w1"


# Schemes renamed since runs were committed: results that name the old one
# are read as the new one (report.aggregate()).
RENAMED = {"fq": "fq-drr"}


def canonical(name):
    """The scheme that 'name', maybe an old name in a committed result,
    means today."""
    return RENAMED.get(name, name)


def unavailable(name, qos_type, weights=None):
    """None if scheme 'name' runs on 'qos_type' with the profile's
    'weights' (panda-model --weight-values, None: all ones), else why
    not."""
    if name == WEIGHTS_ABLATION and not weights:
        return ("%s compares the size-interval weights with all ones: it "
                "needs a profile with weights (--profile 10g)" % name)
    if qos_type == "htb" and SCHEMES[name].sched_only:
        return ("%s needs --qos panda-sched: linux-htb has one FIFO per "
                "level, no guard and never marks ECN" % name)
    return None


@dataclasses.dataclass(frozen=True)
class QosConfig:
    """The run's egress: type, buffer and, for panda-sched, the ECN
    threshold and the guard's share that schemes asking for them get."""
    type: str                   # QOS_TYPES
    rate_bps: int
    levels: int
    queue_pkts: int             # htb: each queue; panda-sched: the port
    ecn_threshold: int          # bytes, 0 = no ECN (panda-sched only)
    guard_permille: int
    burst_bytes: int = 0        # panda-sched token bucket; 0: the
                                # library's default (two frames or
                                # 100 us at the rate)
    buffer_bytes: bool = False  # htb: each queue holds queue_pkts full
                                # frames in bytes (bfifo) instead of
                                # queue_pkts packets (TSO: a packet may
                                # be 64 KB)
    ecn_ahead: bool = False     # panda-sched ecn-ahead: the threshold
                                # compares the backlog ahead of a packet
                                # (its level's and above), not the port's

    @property
    def marks(self):
        """Does this egress mark ECN (so senders should be ECN-capable)?"""
        return self.type == "panda-sched" and self.ecn_threshold > 0

    def sched_settings(self, scheme):
        """panda-sched other_config of 'scheme', [(key, value)]: the same
        buffer for every scheme - the port holds what one HTB queue holds
        (queue_pkts, 12 ms at any rate), shared by the levels as in
        sch_pias and the thesis's switch."""
        s = SCHEMES[scheme]
        burst = [("burst", str(self.burst_bytes))] if self.burst_bytes else []
        return burst + [
                ("limit-packets", str(self.queue_pkts)),
                ("limit-bytes", str(self.queue_pkts * FRAME)),
                ("ecn-threshold", str(self.ecn_threshold
                                      if s.ecn and not s.fq_codel else 0)),
                ("guard", str(self.guard_permille if s.guard else 0)),
                ("per-flow", "true" if s.per_flow else "false")] + (
                [("fq-codel", "true")] if s.fq_codel else []) + (
                [("ecn-ahead", "true")] if self.ecn_ahead else [])

    def record(self, scheme):
        """What a trial of 'scheme' ran on (its "qos" in result.json)."""
        if self.type == "htb":
            return {"type": "linux-htb", "rate_bps": self.rate_bps,
                    "levels": self.levels,
                    "queue_pkts_per_level": self.queue_pkts,
                    "queue_bytes_per_level": self.queue_pkts * FRAME
                    if self.buffer_bytes else None,
                    "per_flow": False, "guard_permille": 0,
                    "ecn_threshold_bytes": None,
                    "note": "panda-qos --type htb: min-rate 10% of the "
                            "link split over the lower levels, the rest "
                            "to level 0, one FIFO each; no ECN marking"}
        return {"type": "panda-sched", "rate_bps": self.rate_bps,
                "levels": self.levels,
                "other_config": dict(self.sched_settings(scheme))}

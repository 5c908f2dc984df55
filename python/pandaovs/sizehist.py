"""The datapath's live histograms (lib/panda/sizehist.h) in Python.

'ovs-appctl panda/histogram' prints them and the OpenFlow statistics reply
NXST_PANDA_HISTOGRAM carries them in one text (lib/panda's serialisation):

    bridge br0 datapath netdev@ovs-netdev      (ovs-appctl only)
    policy 1                                   (" shared": the ids sharing
    panda-histogram 1                           the overflow table, counted
    payload LEVEL LOWER COUNT                   together)
    flow LOWER COUNT

LOWER is a bucket's lower edge: TCP payload bytes (payload lines) or bytes
of a finished connection (flow lines).  This module parses that text once
for Python (the controller, its tests, tools) and turns a histogram into
panda-model's input ("size count" lines, size = payload + header_len, the
format tools/README-panda-model.md describes), so that the model the
controller runs is panda-model itself on the datapath's own numbers.
"""

import struct

from . import policy
from .policy import NX_VENDOR_ID  # noqa: F401 (OpenFlow's, shared)

NXST_PANDA_HISTOGRAM = 5        # Nicira statistics subtype (exp_type).
VERSION = 1
MAX_PAYLOAD = 65535
U64_MAX = (1 << 64) - 1
CDF_MAX_VALUE = 1 << 40     # The largest value lib/panda's CDFs take.


def flow_upper(lower):
    """The first value above the flow bucket whose lower edge is 'lower'
    (lib/panda/sizehist.c: exact below 8, then 4 buckets per power of
    two)."""
    if lower < 8:
        return lower + 1
    return lower + (1 << (lower.bit_length() - 1 - 2))


class HistogramError(ValueError):
    pass


class Histogram:
    """The histograms of one policy id: payload[level][lower] = count,
    flow[lower] = count."""

    def __init__(self, pid, shared=False):
        self.id = pid
        self.shared = shared
        self.payload = {}
        self.flow = {}

    def packets(self, levels=None):
        return sum(c for lv, b in self.payload.items()
                   if levels is None or lv in levels for c in b.values())

    def add(self, other):
        """Adds 'other' (same id) into this one."""
        for lv, b in other.payload.items():
            mine = self.payload.setdefault(lv, {})
            for lo, c in b.items():
                mine[lo] = mine.get(lo, 0) + c
        for lo, c in other.flow.items():
            self.flow[lo] = self.flow.get(lo, 0) + c
        self.shared = self.shared or other.shared

    def minus(self, base):
        """What was counted since snapshot 'base' (same id).  None if a
        counter went down (the datapath forgot the id's histograms: a
        restart, a reclaimed table): the caller starts again from here."""
        out = Histogram(self.id, self.shared)
        for lv, b in self.payload.items():
            old = base.payload.get(lv, {})
            for lo, c in b.items():
                d = c - old.get(lo, 0)
                if d < 0:
                    return None
                if d:
                    out.payload.setdefault(lv, {})[lo] = d
        for lv, b in base.payload.items():
            if any(lo not in self.payload.get(lv, {}) for lo in b):
                return None
        for lo, c in self.flow.items():
            d = c - base.flow.get(lo, 0)
            if d < 0:
                return None
            if d:
                out.flow[lo] = d
        if any(lo not in self.flow for lo in base.flow):
            return None
        return out

    def flows(self):
        """Finished flows counted."""
        return sum(self.flow.values())

    def flow_cdf_lines(self):
        """The flow sizes as a CDF in the load generator's format
        ("<bytes> <cumulative probability>", what panda-model --cdf
        reads): for each nonempty bucket [lo, hi) in order, the points
        (lo, P before it) and (hi, P after it), so that the model's linear
        interpolation spreads a bucket's flows evenly over it and gives
        the empty buckets between no mass.  Values are capped at 2^40 (the
        CDF reader's limit).  [] if no flow was counted."""
        total = self.flows()
        lines = []
        cum = 0
        for lo in sorted(lo for lo, c in self.flow.items() if c):
            hi = flow_upper(lo)
            lines.append("%d %.9f" % (min(lo, CDF_MAX_VALUE), cum / total))
            cum += self.flow[lo]
            lines.append("%d %.9f" % (min(hi, CDF_MAX_VALUE), cum / total))
        if lines:
            lines[-1] = lines[-1].split()[0] + " 1"
        return lines

    def model_lines(self, levels, header_len=40):
        """panda-model's "size count" lines for the payload buckets of
        'levels', each bucket at its lower edge + header_len (the model's
        sizes include headers; its T minus header_len is the datapath's
        payload threshold, so T lands on a bucket edge)."""
        sizes = {}
        for lv in levels:
            for lo, c in self.payload.get(lv, {}).items():
                sizes[lo + header_len] = sizes.get(lo + header_len, 0) + c
        return ["%d %d" % (s, sizes[s]) for s in sorted(sizes) if sizes[s]]

    def format(self):
        """The text of lib/panda's panda_sizehist_format() for this one."""
        lines = ["policy %d%s" % (self.id, " shared" if self.shared else ""),
                 "panda-histogram %d" % VERSION]
        for lv in sorted(self.payload):
            for lo in sorted(self.payload[lv]):
                if self.payload[lv][lo]:
                    lines.append("payload %d %d %d"
                                 % (lv, lo, self.payload[lv][lo]))
        for lo in sorted(self.flow):
            if self.flow[lo]:
                lines.append("flow %d %d" % (lo, self.flow[lo]))
        return "\n".join(lines) + "\n"


def _int(word, what, lo, hi, where):
    try:
        v = int(word, 10)
    except ValueError:
        raise HistogramError("%s: %s %r is not an integer" % (where, what,
                                                               word))
    if not lo <= v <= hi:
        raise HistogramError("%s: %s %d out of range (%d to %d)"
                             % (where, what, v, lo, hi))
    return v


def parse(text):
    """Parses the text (of one bridge, or of ovs-appctl with several:
    'bridge' lines are skipped, and a policy id seen again is added up)
    into {policy id: Histogram}.  Raises HistogramError naming the line."""
    out = {}
    cur = None
    header = False
    for n, line in enumerate(text.splitlines(), 1):
        where = "line %d" % n
        w = line.split()
        if not w or w[0] == "bridge" or line.startswith("("):
            continue
        if w[0] == "policy":
            if len(w) not in (2, 3) or (len(w) == 3 and w[2] != "shared"):
                raise HistogramError("%s: expected \"policy ID [shared]\""
                                     % where)
            pid = _int(w[1], "policy id", 0, (1 << 32) - 1, where)
            cur = Histogram(pid, len(w) == 3)
            if pid in out:
                out[pid].add(cur)
                cur = out[pid]
            else:
                out[pid] = cur
            header = False
        elif cur is None:
            raise HistogramError("%s: %r before any \"policy\" line"
                                 % (where, w[0]))
        elif w[0] == "panda-histogram":
            if len(w) != 2 or w[1] != str(VERSION):
                raise HistogramError("%s: unknown histogram version %s (this "
                                     "reader knows %d)" % (
                                         where, " ".join(w[1:]) or "(none)",
                                         VERSION))
            header = True
        elif not header:
            raise HistogramError("%s: no \"panda-histogram %d\" line before "
                                 "the buckets" % (where, VERSION))
        elif w[0] == "payload" and len(w) == 4:
            lv = _int(w[1], "level", 0, policy.MAX_LEVELS - 1, where)
            lo = _int(w[2], "payload size", 1, MAX_PAYLOAD, where)
            c = _int(w[3], "count", 0, U64_MAX, where)
            b = cur.payload.setdefault(lv, {})
            b[lo] = b.get(lo, 0) + c
        elif w[0] == "flow" and len(w) == 3:
            lo = _int(w[1], "flow size", 0, U64_MAX, where)
            c = _int(w[2], "count", 0, U64_MAX, where)
            cur.flow[lo] = cur.flow.get(lo, 0) + c
        else:
            raise HistogramError("%s: unexpected %r (expected \"payload LEVEL "
                                 "LOWER COUNT\" or \"flow LOWER COUNT\")"
                                 % (where, line.strip()[:60]))
    return out


def request_body(pid=None):
    """The body of an NXST_PANDA_HISTOGRAM request (struct
    nx_panda_histogram_request): one id, or every id if 'pid' is None."""
    if pid is None:
        return struct.pack("!IB3x", 0, 1)
    if not 0 <= pid < 1 << 32:
        raise HistogramError("policy id %r out of range (0 to 4294967295)"
                             % (pid,))
    return struct.pack("!IB3x", pid, 0)

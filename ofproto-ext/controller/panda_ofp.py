"""The Panda action as an os-ken Nicira-extension action.

Open vSwitch (with ovs-patches/panda.series) decodes NXAST_PANDA, a Nicira
vendor action with subtype 240 and a fixed 160-byte body.  The layout is
documented in ofproto-ext/README.md and implemented for Python once, in
ofproto-ext/panda_nx.py; this module wraps it for os-ken.  NXActionPanda is
registered with os-ken's NX action table for OpenFlow 1.3, so flows read
back from a switch (flow stats) decode into NXActionPanda too, and two
encodings can be compared byte for byte.

Policy is the policy as data, in the units of lib/panda's 'struct
panda_policy' (weights in hundredths).  Policy.text() prints it in the
policy syntax exactly as lib/panda's panda_policy_format() does, which is
what 'ovs-ofctl dump-flows' shows inside panda(...); the system test checks
both the bytes and the text against the patched ovs-ofctl.
"""

import os
import struct
import sys

from os_ken.ofproto import ofproto_v1_3_parser

# The byte layout lives in one place: ofproto-ext/panda_nx.py (owned with
# the OVS patch that defines the action).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
import panda_nx  # noqa: E402

NX_VENDOR_ID = panda_nx.NX_VENDOR_ID
NXAST_PANDA = panda_nx.NXAST_PANDA
ACTION_LEN = panda_nx.ACTION_LEN
MAX_LEVELS = panda_nx.MAX_LEVELS
MAX_WEIGHTS = panda_nx.MAX_WEIGHTS
KINDS = panda_nx.KINDS
HEADER_LEN = 10         # type, len, vendor, subtype


class Policy(object):
    """One Panda/PIAS policy, already checked for encodability."""

    __slots__ = ("id", "kind", "threshold", "weights", "thresholds", "dscp",
                 "queues", "ctl_level", "floor", "idle_reset")

    def __init__(self, id, kind="panda", threshold=0, weights=(),
                 thresholds=(), dscp=None, queues=None, ctl_level=0,
                 floor=0, idle_reset=0):
        self.id = id
        self.kind = kind
        self.threshold = threshold
        self.weights = tuple(tuple(w) for w in weights)   # (above, 1/100)
        self.thresholds = tuple(thresholds)
        n = len(self.thresholds) + 1
        # lib/panda's defaults: DSCP of level i = i + 1, queue i.
        self.dscp = tuple(dscp) if dscp is not None else tuple(
            range(1, n + 1))
        self.queues = tuple(queues) if queues is not None else tuple(
            range(n))
        self.ctl_level = ctl_level
        self.floor = floor
        self.idle_reset = idle_reset

    @property
    def n_levels(self):
        return len(self.thresholds) + 1

    def key(self):
        return tuple(getattr(self, k) for k in self.__slots__)

    def __eq__(self, other):
        return isinstance(other, Policy) and self.key() == other.key()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        return "Policy(%s)" % self.text()

    def text(self):
        """The policy syntax, as lib/panda's panda_policy_format()."""
        s = ["id=%d" % self.id]
        if self.kind == "pias":
            s.append(",kind=pias")
        else:
            s.append(",threshold=%d" % self.threshold)
        for i, (above, w) in enumerate(self.weights):
            s.append("%s%d:%d" % ("/" if i else ",weights=", above, w // 100))
            if w % 100:
                s.append(".%02d" % (w % 100) if w % 10
                         else ".%d" % (w % 100 // 10))
        for i, t in enumerate(self.thresholds):
            s.append("%s%d" % ("/" if i else ",thresholds=", t))
        s.append(",dscp=" + "/".join(str(d) for d in self.dscp))
        s.append(",queues=" + "/".join(str(q) for q in self.queues))
        if self.ctl_level:
            s.append(",ctl_level=%d" % self.ctl_level)
        if self.floor:
            s.append(",floor=%d" % self.floor)
        if self.idle_reset:
            s.append(",idle_reset=%d" % self.idle_reset)
        return "".join(s)

    # -- wire format ------------------------------------------------------
    def encode(self):
        """The whole 160-byte NXAST_PANDA action (ofproto-ext/panda_nx)."""
        return panda_nx.encode(
            self.id, self.kind, self.threshold,
            [(a, w / 100.0) for a, w in self.weights], self.thresholds,
            self.dscp, self.queues, self.ctl_level, self.floor,
            self.idle_reset)

    @classmethod
    def decode(cls, action):
        """Inverse of encode(); raises ValueError on a malformed action."""
        action = bytes(action)
        if len(action) != ACTION_LEN:
            raise ValueError("panda action: %d bytes, expected %d"
                             % (len(action), ACTION_LEN))
        kind, n_levels, n_weights = action[10], action[11], action[20]
        if kind not in KINDS.values() or not 1 <= n_levels <= MAX_LEVELS \
                or n_weights > MAX_WEIGHTS:
            raise ValueError("panda action: kind %d, %d levels, %d weights"
                             % (kind, n_levels, n_weights))
        d = panda_nx.decode(action)
        d["weights"] = [(a, int(round(w * 100))) for a, w in d["weights"]]
        return cls(**d)


class NXActionPanda(ofproto_v1_3_parser.NXAction):
    """NXAST_PANDA for os-ken's OpenFlow 1.3 parser.

    NXActionPanda(policy) where policy is a Policy."""

    _subtype = NXAST_PANDA

    def __init__(self, policy=None, type_=None, len_=None, experimenter=None,
                 subtype=None):
        super(NXActionPanda, self).__init__()
        self.policy = policy

    @classmethod
    def parser(cls, buf):
        # os-ken hands over what follows the subtype.
        try:
            return cls(Policy.decode(
                struct.pack("!HHIH", 0xffff, HEADER_LEN + len(buf),
                            NX_VENDOR_ID, NXAST_PANDA) + bytes(buf)))
        except ValueError:
            # A layout this controller does not know (another version of
            # the patch): keep the bytes, so that the flow stats reply still
            # parses and the flow simply compares unequal to ours.
            return ofproto_v1_3_parser.NXActionUnknown(NXAST_PANDA,
                                                       bytes(buf))

    def serialize_body(self):
        return bytearray(self.policy.encode()[HEADER_LEN:])

    def __str__(self):
        return "panda(%s)" % self.policy.text()


ofproto_v1_3_parser.NXAction.register(NXActionPanda)
# NXAction.parse() builds the class by name lookup in the parser module for
# to/from_jsondict; make it known there too.
setattr(ofproto_v1_3_parser, "NXActionPanda", NXActionPanda)


def encode_action(policy):
    """The action's bytes as os-ken puts them in a flow-mod."""
    buf = bytearray()
    NXActionPanda(policy).serialize(buf, 0)
    return bytes(buf)

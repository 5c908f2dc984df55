"""Encoder/decoder for the NXAST_PANDA OpenFlow action (Panda-OVS).

The wire format is described in ofproto-ext/README.md.  This module builds
the 160-byte action body for controllers (e.g. os-ken) that do not know the
action, and decodes it back.  It does not validate the policy beyond the
layout: Open vSwitch checks it (lib/panda's panda_policy_validate()) and
answers OFPBAC_BAD_ARGUMENT, logging the offending field, if it is wrong.

    >>> body = encode(id=1, threshold=1460, weights=[(1460, 1), (9000, 2)],
    ...               thresholds=[100000, 1000000, 10000000],
    ...               dscp=[46, 26, 18, 0], queues=[0, 1, 2, 3])
    >>> len(body)
    160
"""

import struct

OFPAT_VENDOR = 0xffff
NX_VENDOR_ID = 0x00002320
NXAST_PANDA = 240
ACTION_LEN = 160
MAX_LEVELS = 8
MAX_WEIGHTS = 8
KINDS = {"panda": 0, "pias": 1}

# type, len, vendor, subtype, kind, n_levels, id, threshold, n_weights,
# ctl_level, pad[2], idle_reset, pad2[4], floor.
_HEAD = struct.Struct("!HHIHBBIIBB2xI4xq")
assert _HEAD.size == 40


def encode(id, kind="panda", threshold=0, weights=(), thresholds=(),
           dscp=None, queues=None, ctl_level=0, floor=0, idle_reset=0):
    """Returns the NXAST_PANDA action as bytes.

    weights: sequence of (above_bytes, weight) with weight a number >= 1
    (stored in hundredths); thresholds: the K-1 ascending counter
    thresholds; dscp/queues: K values each (default: level i gets DSCP i+1
    and queue i, as in lib/panda)."""
    n_levels = len(thresholds) + 1
    if n_levels > MAX_LEVELS:
        raise ValueError("thresholds: at most %d" % (MAX_LEVELS - 1))
    if len(weights) > MAX_WEIGHTS:
        raise ValueError("weights: at most %d intervals" % MAX_WEIGHTS)
    if kind not in KINDS:
        raise ValueError("kind: must be panda or pias")
    if dscp is None:
        dscp = [i + 1 for i in range(n_levels)]
    if queues is None:
        queues = list(range(n_levels))
    if len(dscp) != n_levels or len(queues) != n_levels:
        raise ValueError("dscp, queues: need one value per level (%d)"
                         % n_levels)

    body = _HEAD.pack(OFPAT_VENDOR, ACTION_LEN, NX_VENDOR_ID, NXAST_PANDA,
                      KINDS[kind], n_levels, id, threshold, len(weights),
                      ctl_level, idle_reset, floor)
    alpha = list(thresholds) + [0] * (MAX_LEVELS - 1 - len(thresholds))
    body += struct.pack("!7Q", *alpha)
    above = [a for a, _ in weights] + [0] * (MAX_WEIGHTS - len(weights))
    body += struct.pack("!8I", *above)
    w = [int(round(x * 100)) for _, x in weights]
    body += struct.pack("!8H", *(w + [0] * (MAX_WEIGHTS - len(w))))
    body += bytes(list(dscp) + [0] * (MAX_LEVELS - n_levels))
    body += bytes(list(queues) + [0] * (MAX_LEVELS - n_levels))
    assert len(body) == ACTION_LEN
    return body


def decode(body):
    """Inverse of encode(): returns a dict of its keyword arguments."""
    if len(body) != ACTION_LEN:
        raise ValueError("NXAST_PANDA is %d bytes, got %d"
                         % (ACTION_LEN, len(body)))
    (typ, length, vendor, subtype, kind, n_levels, pid, threshold, n_weights,
     ctl_level, idle_reset, floor) = _HEAD.unpack_from(body)
    if (typ, length, vendor, subtype) != (OFPAT_VENDOR, ACTION_LEN,
                                          NX_VENDOR_ID, NXAST_PANDA):
        raise ValueError("not an NXAST_PANDA action")
    alpha = struct.unpack_from("!7Q", body, 40)
    above = struct.unpack_from("!8I", body, 96)
    w = struct.unpack_from("!8H", body, 128)
    kinds = {v: k for k, v in KINDS.items()}
    return {
        "id": pid,
        "kind": kinds.get(kind, kind),
        "threshold": threshold,
        "weights": [(above[i], w[i] / 100) for i in range(n_weights)],
        "thresholds": list(alpha[:n_levels - 1]),
        "dscp": list(body[144:144 + n_levels]),
        "queues": list(body[152:152 + n_levels]),
        "ctl_level": ctl_level,
        "floor": floor,
        "idle_reset": idle_reset,
    }


def to_hex(body):
    """Hex in the style of OVS's tests/ofp-actions.at."""
    return body.hex()

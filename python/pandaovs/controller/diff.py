"""What a bridge must change to match the configuration: pure functions on
bytes, without os-ken, so the decision is testable on its own.

A flow is identified by (table, priority, canonical match); two flows with
the same identity are the same flow, and then only their instructions
(byte for byte) and cookie can differ.
"""

import struct


def oxm_key(oxm):
    """Canonical form of a serialized OpenFlow 1.3 match (ofp_match, OXM
    TLVs): the TLVs sorted, with full masks dropped, fully wildcarded fields
    dropped and value bits outside a mask cleared, so that the match we
    build and the match the switch reports compare equal."""
    length = struct.unpack_from("!H", oxm, 2)[0]
    tlvs = []
    off = 4
    while off + 4 <= length:
        cls_, field, n = struct.unpack_from("!HBB", oxm, off)
        payload = bytes(oxm[off + 4:off + 4 + n])
        off += 4 + n
        if field & 1:
            half = n // 2
            value, mask = payload[:half], payload[half:]
            value = bytes(v & m for v, m in zip(value, mask))
            if not any(mask):
                continue
            if all(b == 0xff for b in mask):
                tlvs.append((cls_, field & ~1, value))
            else:
                tlvs.append((cls_, field, value + mask))
        else:
            tlvs.append((cls_, field, payload))
    return tuple(sorted(tlvs))


def plan(desired, existing):
    """desired: the flows the configuration wants ({key: flow}); existing:
    the flows with our cookie prefix on the switch.  Each flow has .key,
    .cookie and .ibytes (instructions, serialized; None if they could not
    be read back).  Returns (keep, modify, delete, add):

      keep    desired flows already there, identical (left alone, so their
              packet counters keep running);
      modify  desired flows there with other instructions (MODIFY_STRICT);
      delete  existing flows no rule wants, duplicates, or with another
              rule's cookie (strict delete);
      add     desired flows not there."""
    keep, modify, delete = [], [], []
    seen = set()
    for e in existing:
        d = desired.get(e.key)
        if d is not None and d.key not in seen and e.cookie == d.cookie:
            seen.add(d.key)
            (keep if e.ibytes == d.ibytes else modify).append(d)
        else:
            delete.append(e)
    add = [d for k, d in desired.items() if k not in seen]
    return keep, modify, delete, add


def is_catch_all(key):
    """A flow key (table, priority, canonical match) that matches every
    packet of its table."""
    return key[2] == ()


def forwarding_removed(keep, modify, delete, add):
    """The flows of 'delete' (a plan's) that are a table's catch-all with no
    catch-all left in that table after the plan: taking them away leaves
    the traffic they matched without a path (on a fail_mode=secure bridge,
    dropped)."""
    kept = {d.key[0] for d in list(keep) + list(modify) + list(add)
            if is_catch_all(d.key)}
    return [e for e in delete if is_catch_all(e.key) and e.key[0] not in kept]

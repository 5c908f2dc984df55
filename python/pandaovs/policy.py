"""One scheduling policy (Panda, PIAS or a rule kind): the Python twin of lib/panda's
'struct panda_policy' (lib/panda/policy.c) and of its wire body.

    Policy.from_text("id=1,threshold=1460,thresholds=100000/1000000")
    Policy.from_json(obj, src)          # panda-model's JSON
    policy.text()                       # == panda_policy_format()
    policy.nx_action()                  # the NXAST_PANDA action (160 bytes,
                                        # more with rules)
    Policy.from_nx_action(action)       # and back

Units are lib/panda's: weights are integers in hundredths (1 = 100), never
floats; thresholds, T and sizes in bytes; idle_reset in milliseconds
(at most MAX_DURATION_MS, lib/panda/time.h).

Every constructor validates (the decision: a policy is checked once, where
it enters, with lib/panda's own rules and messages).  The text parser and
the validator follow panda_policy_parse() and panda_policy_validate()
message for message, so an operator sees the same "field: problem" text
from the controller, the testbed and ovs-ofctl; tests/vectors/policies.txt
holds the shared cases and tests/python/test_policy.py and
tests/tools/test_policy_vectors.py check both languages against it.

Wire format (ofproto-ext/README.md): a Nicira vendor action, subtype 240,
160 bytes, big-endian, more if the policy has rules.  Its bytes 10.. are
the policy's wire body (WIRE_LEN = 150 bytes, then the rules padded to a
multiple of 8: lib/panda/wire.h) that the NX action and the datapath action
share.

Kinds (lib/panda/policy.h): panda and pias (counters), app, match and
length (rules on the packet alone: DSCP, first payload bytes, payload
length; 'levels' gives K, 'default_level' the level of the rest), compose
(rules of any type in order, else Panda).  A rule is a Rule(type, value,
level): value is the DSCP (app), the keyword bytes (match) or the minimum
payload (length).
"""

import dataclasses
import json
import math
import struct

OFPAT_VENDOR = 0xffff
NX_VENDOR_ID = 0x00002320
NXAST_PANDA = 240
NX_HEADER_LEN = 10          # type, len, vendor, subtype
NX_ACTION_LEN = 160         # without rules; 160 + 8n with them
WIRE_LEN = NX_ACTION_LEN - NX_HEADER_LEN

MAX_LEVELS = 8              # PANDA_MAX_LEVELS
MAX_WEIGHTS = 8             # PANDA_MAX_WEIGHTS
WEIGHT_ONE = 100            # PANDA_WEIGHT_ONE: weights in hundredths
MAX_DSCP = 63               # PANDA_MAX_DSCP
MAX_PKT_SIZE = 65535        # PANDA_MAX_PKT_SIZE
MAX_WHOLE_WEIGHT = 600      # panda_policy_parse(): weights up to 600.99
MAX_DURATION_MS = 0xffffffff    # PANDA_MAX_DURATION_MS
KINDS = ("panda", "pias", "app", "match", "length", "compose")
                            # enum panda_kind, in wire order
RULE_TYPES = ("app", "match", "length")     # enum panda_rule_type, from 1
COUNTER_KINDS = ("panda", "pias", "compose")
MAX_RULES = 16              # PANDA_MAX_RULES
MAX_KEYWORD = 32            # PANDA_MAX_KEYWORD
RULE_HDR = 3                # PANDA_WIRE_RULE_HDR
WIRE_MAX_LEN = WIRE_LEN + (MAX_RULES * (RULE_HDR + MAX_KEYWORD) + 7) // 8 * 8
_KEYWORD_PLAIN = frozenset(b"abcdefghijklmnopqrstuvwxyz"
                           b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~")

U8, U16, U32, U64 = 0xff, 0xffff, 0xffffffff, 0xffffffffffffffff
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1

_NX_HEADER = struct.Struct("!HHIH")
# kind, n_levels, id, threshold, n_weights, ctl_level, untracked (K-1 -
# untracked_level), default (K-1 - default_level, rule kinds), idle_reset,
# n_rules, pad2[3], floor, thresholds[7], weight_above[8], weights[8],
# dscp[8], queue[8].
_WIRE = struct.Struct("!BBIIBBBBIB3sq7Q8I8H8s8s")
assert _WIRE.size == WIRE_LEN


class PolicyError(ValueError):
    """A policy lib/panda would refuse; str() names the field, as
    panda_policy_parse() and panda_policy_validate() do."""


@dataclasses.dataclass(frozen=True)
class Rule:
    """One rule of struct panda_rule: type 'app' (value: DSCP), 'match'
    (value: keyword bytes) or 'length' (value: minimum payload)."""

    type: str
    value: object
    level: int

    def text(self):
        if self.type == "match":
            return "%s:%d" % (format_keyword(self.value), self.level)
        return "%d:%d" % (self.value, self.level)

    def matches(self, dscp, data, payload):
        """struct panda_rule on a packet (classifier.c rule_matches())."""
        if self.type == "app":
            return dscp == self.value
        if self.type == "match":
            return data[:len(self.value)] == self.value
        return payload >= self.value


@dataclasses.dataclass(frozen=True)
class Policy:
    """A validated policy.  dscp and queues default to lib/panda's maps
    (level i: DSCP i + 1, queue i), untracked_level to the lowest level
    (K - 1); weights are (above_bytes, hundredths) pairs."""

    id: int
    kind: str = "panda"
    threshold: int = 0
    weights: tuple = ()
    thresholds: tuple = ()
    dscp: tuple = None
    queues: tuple = None
    ctl_level: int = 0
    untracked_level: int = None
    floor: int = 0
    idle_reset: int = 0
    rules: tuple = ()
    levels: int = None
    default_level: int = None

    def __post_init__(self):
        rules = tuple(r if isinstance(r, Rule) else Rule(*r)
                      for r in self.rules)
        object.__setattr__(self, "rules", rules)
        rule_kind = self.kind in RULE_TYPES
        if self.kind in COUNTER_KINDS or self.kind not in KINDS:
            levels = len(self.thresholds) + 1
        elif self.levels is not None:
            levels = self.levels
        else:
            # panda_policy_parse(): every level named fits.
            levels = max([r.level for r in rules if isinstance(r.level, int)]
                         + [self.default_level
                            if isinstance(self.default_level, int) else 0]
                         ) + 1
        if self.kind in COUNTER_KINDS and self.levels is not None and \
                self.levels != levels:
            raise PolicyError("levels: not allowed with kind=%s (the "
                              "thresholds give K)" % self.kind)
        object.__setattr__(self, "levels", levels)
        n = levels if isinstance(levels, int) and \
            not isinstance(levels, bool) else 1
        fix = {
            "default_level": (n - 1 if rule_kind else 0)
            if self.default_level is None else self.default_level,
            "weights": tuple((int(a), int(w)) for a, w in self.weights),
            "thresholds": tuple(self.thresholds),
            "dscp": tuple(range(1, n + 1)) if self.dscp is None
            else tuple(self.dscp),
            "queues": tuple(range(n)) if self.queues is None
            else tuple(self.queues),
            "untracked_level": n - 1 if self.untracked_level is None
            else self.untracked_level,
        }
        for k, v in fix.items():
            object.__setattr__(self, k, v)
        err = self.problem()
        if err:
            raise PolicyError(err)

    @property
    def n_levels(self):
        return self.levels

    def __repr__(self):
        return "Policy(%s)" % self.text()

    # -- validation -----------------------------------------------------
    def problem(self):
        """None if valid, else the message of panda_policy_validate()
        (preceded by the range checks that C gets from its field types)."""
        return _type_problem(self) or _rule_problem(self)

    # -- text -------------------------------------------------------------
    @classmethod
    def from_text(cls, text):
        """panda_policy_parse(): raises PolicyError with its message."""
        return cls(**_parse_text(text))

    def text(self):
        """panda_policy_format(): the canonical text, which is what
        ovs-ofctl dump-flows prints inside panda(...)."""
        s = ["id=%d" % self.id]
        if self.kind != "panda":
            s.append(",kind=" + self.kind)
        if self.kind in ("panda", "compose"):
            s.append(",threshold=%d" % self.threshold)
        for i, (above, w) in enumerate(self.weights):
            s.append("%s%d:%s" % ("/" if i else ",weights=", above,
                                  format_weight(w)))
        if self.kind in COUNTER_KINDS:
            for i, t in enumerate(self.thresholds):
                s.append("%s%d" % ("/" if i else ",thresholds=", t))
        else:
            s.append(",levels=%d" % self.n_levels)
        for i, r in enumerate(self.rules):
            same = i and r.type == self.rules[i - 1].type
            s.append(("/" if same else ",%s=" % r.type) + r.text())
        s.append(",dscp=" + "/".join(str(d) for d in self.dscp))
        s.append(",queues=" + "/".join(str(q) for q in self.queues))
        if self.ctl_level:
            s.append(",ctl_level=%d" % self.ctl_level)
        if self.untracked_level != self.n_levels - 1:
            s.append(",untracked_level=%d" % self.untracked_level)
        if self.kind in RULE_TYPES and \
                self.default_level != self.n_levels - 1:
            s.append(",default_level=%d" % self.default_level)
        if self.floor:
            s.append(",floor=%d" % self.floor)
        if self.idle_reset:
            s.append(",idle_reset=%d" % self.idle_reset)
        return "".join(s)

    # -- JSON (panda-model's policy file) ---------------------------------
    @classmethod
    def from_json(cls, obj, src=""):
        """Reads panda-model's JSON (tools/README-panda-model.md): the
        structured fields are authoritative; 'action' (the text panda-model
        prints) is compared with them.  Returns (Policy, warnings).  Errors
        name 'src' and the field: the JSON structure first (types, counts,
        the ranges the wire format can carry), then lib/panda's rules."""
        return _from_json(cls, obj, src)

    def to_json(self):
        """The policy fields of panda-model's JSON (weights as numbers)."""
        d = {"id": self.id, "kind": self.kind, "threshold": self.threshold,
             "weights": [[a, _weight_number(w)] for a, w in self.weights],
             "thresholds": list(self.thresholds), "dscp": list(self.dscp),
             "queues": list(self.queues)}
        for k in ("ctl_level", "floor", "idle_reset"):
            if getattr(self, k):
                d[k] = getattr(self, k)
        if self.untracked_level != self.n_levels - 1:
            d["untracked_level"] = self.untracked_level
        if self.kind in RULE_TYPES:
            d["levels"] = self.n_levels
            if self.default_level != self.n_levels - 1:
                d["default_level"] = self.default_level
        if self.rules:
            d["priority_rules"] = [{r.type: format_keyword(r.value)
                           if r.type == "match" else r.value,
                           "level": r.level} for r in self.rules]
        d["action"] = self.text()
        return d

    # -- wire ---------------------------------------------------------------
    def wire_body(self):
        """The wire body (bytes 10.. of NXAST_PANDA): 150 bytes, then the
        rules padded to a multiple of 8."""
        k = self.n_levels

        def pad(v, n):
            return list(v) + [0] * (n - len(v))
        head = _WIRE.pack(
            KINDS.index(self.kind), k, self.id, self.threshold,
            len(self.weights), self.ctl_level,
            self.n_levels - 1 - self.untracked_level,
            self.n_levels - 1 - self.default_level
            if self.kind in RULE_TYPES else 0,
            self.idle_reset, len(self.rules),
            b"\0" * 3, self.floor, *pad(self.thresholds, MAX_LEVELS - 1),
            *pad([a for a, _ in self.weights], MAX_WEIGHTS),
            *pad([w for _, w in self.weights], MAX_WEIGHTS),
            bytes(pad(self.dscp, MAX_LEVELS)),
            bytes(pad(self.queues, MAX_LEVELS)))
        tail = b""
        for r in self.rules:
            value = (bytes([r.value]) if r.type == "app" else r.value
                     if r.type == "match" else struct.pack("!H", r.value))
            tail += bytes([RULE_TYPES.index(r.type) + 1, r.level,
                           len(value)]) + value
        return head + tail + b"\0" * (-len(tail) % 8)

    @classmethod
    def from_wire_body(cls, body):
        """Inverse of wire_body(); raises PolicyError as the switch's
        decoder refuses the action (same messages)."""
        body = bytes(body)
        if len(body) < WIRE_LEN or len(body) > WIRE_MAX_LEN or \
                (len(body) - WIRE_LEN) % 8:
            raise PolicyError("length %d, expected %d plus a multiple of 8, "
                              "at most %d" % (len(body), WIRE_LEN,
                                              WIRE_MAX_LEN))
        (kind, k, pid, threshold, n_w, ctl, untracked, default, idle,
         n_rules, pad2, floor, *rest) = _WIRE.unpack(body[:WIRE_LEN])
        alpha, above = rest[:7], rest[7:15]
        weights, dscp, queues = rest[15:23], rest[23], rest[24]
        if any(pad2):
            raise PolicyError("panda action: nonzero padding")
        if kind >= len(KINDS):
            raise PolicyError("kind: must be 0 (panda) to 5 (compose)")
        if not 1 <= k <= MAX_LEVELS:
            raise PolicyError("thresholds: 1 to 8 levels required")
        if n_w > MAX_WEIGHTS:
            raise PolicyError("weights: at most 8 intervals")
        if untracked >= k:
            raise PolicyError("untracked_level: %d levels above the lowest, "
                              "but the policy has only %d levels"
                              % (untracked, k))
        rule_kind = KINDS[kind] in RULE_TYPES
        if not rule_kind and default:
            raise PolicyError("panda action: nonzero padding")
        if default >= k:
            raise PolicyError("default_level: %d levels above the lowest, "
                              "but the policy has only %d levels"
                              % (default, k))
        if any(alpha[k - 1:]):
            raise PolicyError("thresholds: nonzero entry past the last "
                              "level")
        if any(above[n_w:]) or any(weights[n_w:]):
            raise PolicyError("weights: nonzero entry past the last "
                              "interval")
        if any(dscp[k:]) or any(queues[k:]):
            raise PolicyError("dscp, queues: nonzero entry past the last "
                              "level")
        rules = _decode_rules(body, n_rules)
        if rule_kind and any(alpha):
            raise PolicyError("thresholds: not allowed with kind=%s (no "
                              "counter; 'levels' gives K)" % KINDS[kind])
        kw = dict(id=pid, kind=KINDS[kind], threshold=threshold,
                  weights=tuple(zip(above[:n_w], weights[:n_w])),
                  thresholds=() if rule_kind else alpha[:k - 1],
                  dscp=dscp[:k], queues=queues[:k], ctl_level=ctl,
                  untracked_level=k - 1 - untracked, floor=floor,
                  idle_reset=idle, rules=rules, levels=k)
        if rule_kind:
            kw["default_level"] = k - 1 - default
        need = sum(RULE_HDR + len(r.value) if r.type == "match" else
                   RULE_HDR + (1 if r.type == "app" else 2) for r in rules)
        need = WIRE_LEN + (need + 7) // 8 * 8
        if len(body) != need:
            raise PolicyError("length %d, but its %d rules take %d"
                              % (len(body), n_rules, need))
        return cls(**kw)

    def nx_action(self):
        """The whole NXAST_PANDA action: 160 bytes, more with rules."""
        body = self.wire_body()
        return _NX_HEADER.pack(OFPAT_VENDOR, NX_HEADER_LEN + len(body),
                               NX_VENDOR_ID, NXAST_PANDA) + body

    @classmethod
    def from_nx_action(cls, action):
        action = bytes(action)
        if len(action) < NX_ACTION_LEN:
            raise PolicyError("panda action: %d bytes, expected at least %d"
                              % (len(action), NX_ACTION_LEN))
        if _NX_HEADER.unpack_from(action) != (OFPAT_VENDOR, len(action),
                                              NX_VENDOR_ID, NXAST_PANDA):
            raise PolicyError("not an NXAST_PANDA action")
        return cls.from_wire_body(action[NX_HEADER_LEN:])

    # -- classification (lib/panda/classifier.h, for tests and models) ----
    def rule_level(self, dscp=0, data=b"", payload=None):
        """panda_cls_rules(): the level of the first rule that a packet
        (its DSCP, first payload bytes, payload length) matches, or
        None."""
        payload = len(data) if payload is None else payload
        for r in self.rules:
            if r.matches(dscp, bytes(data), payload):
                return r.level
        return None


def _decode_rules(body, n_rules):
    """decode_rules() of lib/panda/wire.c."""
    if n_rules > MAX_RULES:
        raise PolicyError("rules: %d rules, at most %d" % (n_rules,
                                                           MAX_RULES))
    pos, rules = WIRE_LEN, []
    for i in range(n_rules):
        if len(body) - pos < RULE_HDR or \
                len(body) - pos < RULE_HDR + body[pos + 2]:
            raise PolicyError("rules: rule %d runs past the end of the body"
                              % (i + 1))
        t, level, n = body[pos:pos + 3]
        value = body[pos + 3:pos + 3 + n]
        name = RULE_TYPES[t - 1] if 1 <= t <= 3 else "?"
        if (t == 1 and n != 1) or (t == 2 and not 1 <= n <= MAX_KEYWORD) \
                or (t == 3 and n != 2):
            raise PolicyError("rules: rule %d (%s) has a value of %d bytes"
                              % (i + 1, name, n))
        if name == "?":
            raise PolicyError("rules: unknown rule type %d" % t)
        rules.append(Rule(name, value[0] if t == 1 else value if t == 2
                          else struct.unpack("!H", value)[0], level))
        pos += RULE_HDR + n
    if any(body[pos:]):
        raise PolicyError("rules: nonzero byte after the last rule")
    return tuple(rules)


def format_weight(w):
    """Hundredths as panda_policy_format() prints them: 2, 2.5, 2.25."""
    if not w % 100:
        return "%d" % (w // 100)
    if w % 10:
        return "%d.%02d" % (w // 100, w % 100)
    return "%d.%d" % (w // 100, w % 100 // 10)


def _weight_number(w):
    return w // 100 if not w % 100 else w / 100


# -- validation --------------------------------------------------------------
def _type_problem(p):
    """What C's field types rule out before panda_policy_validate() runs
    (message style of panda_policy_parse()'s range errors)."""
    def bad(field, v, lo, hi):
        if isinstance(v, bool) or not isinstance(v, int):
            return "%s: %r is not an integer" % (field, v)
        if not lo <= v <= hi:
            return "%s: %d out of range (%d..%d)" % (field, v, lo, hi)
        return None
    if p.kind not in KINDS:
        return ("kind: \"%s\" is not panda, pias, app, match, length or "
                "compose" % p.kind)
    err = bad("levels", p.levels, 1, MAX_LEVELS)
    if err:
        return err
    if len(p.rules) > MAX_RULES:
        return "rules: %d rules, at most %d" % (len(p.rules), MAX_RULES)
    for r in p.rules:
        if r.type not in RULE_TYPES:
            return "rules: unknown rule type %r" % (r.type,)
        err = bad(r.type, r.level, 0, U8)
        if r.type == "match":
            if not isinstance(r.value, bytes):
                return "match: keyword %r is not bytes" % (r.value,)
        else:
            err = err or bad(r.type, r.value, 0,
                             U8 if r.type == "app" else U16)
        if err:
            return err
    if len(p.thresholds) > MAX_LEVELS - 1:
        return ("thresholds: %d levels requested, must be 1 to %d (at most "
                "%d thresholds)" % (len(p.thresholds) + 1, MAX_LEVELS,
                                    MAX_LEVELS - 1))
    if len(p.weights) > MAX_WEIGHTS:
        return "weights: %d intervals, at most %d" % (len(p.weights),
                                                      MAX_WEIGHTS)
    checks = [("id", p.id, 0, U32), ("threshold", p.threshold, 0, U32),
              ("ctl_level", p.ctl_level, 0, U8),
              ("untracked_level", p.untracked_level, 0, U8),
              ("default_level", p.default_level, 0, U8),
              ("floor", p.floor, I64_MIN, I64_MAX),
              ("idle_reset", p.idle_reset, 0, MAX_DURATION_MS)]
    checks += [("thresholds", t, 0, U64) for t in p.thresholds]
    for a, w in p.weights:
        checks += [("weights", a, 0, U32), ("weights", w, 0, U16)]
    checks += [("dscp", d, 0, U8) for d in p.dscp]
    checks += [("queues", q, 0, U8) for q in p.queues]
    for c in checks:
        err = bad(*c)
        if err:
            return err
    for field, v in (("dscp", p.dscp), ("queues", p.queues)):
        if len(v) != p.n_levels:
            return ("%s: %d values for %d levels (give one per level: "
                    "thresholds + 1)" % (field, len(v), p.n_levels))
    return None


def _rules_problem(p):
    """check_rules() of lib/panda/policy.c, message for message."""
    only = p.kind if p.kind in RULE_TYPES else None
    if not only and p.kind != "compose":
        if p.rules:
            return ("%s: rules are not allowed with kind=%s"
                    % (p.rules[0].type, p.kind))
        if p.default_level:
            return ("default_level: not allowed with kind=%s (the counter "
                    "decides every level)" % p.kind)
        return None
    if only:
        if p.threshold or p.weights:
            return ("%s: not allowed with kind=%s (no counter)"
                    % ("threshold" if p.threshold else "weights", p.kind))
        if p.floor or p.idle_reset:
            return ("%s: not allowed with kind=%s (no counter)"
                    % ("floor" if p.floor else "idle_reset", p.kind))
        if p.ctl_level:
            return ("ctl_level: not allowed with kind=%s (rules decide every "
                    "packet; use default_level)" % p.kind)
        if p.untracked_level + 1 != p.n_levels:
            return ("untracked_level: not allowed with kind=%s (rules decide "
                    "every packet; use default_level)" % p.kind)
        if p.default_level >= p.n_levels:
            return ("default_level: %d but the policy has only %d levels"
                    % (p.default_level, p.n_levels))
    elif p.default_level:
        return ("default_level: not allowed with kind=compose (Panda decides "
                "the packets that no rule matches)")
    if not p.rules:
        return "%s: kind=%s needs at least one rule" % (only or "rules",
                                                        p.kind)
    for r in p.rules:
        if only and r.type != only:
            return ("%s: not allowed with kind=%s (use kind=compose to mix "
                    "rule types)" % (r.type, p.kind))
        if r.level >= p.n_levels:
            return ("%s: level %d but the policy has only %d levels"
                    % (r.type, r.level, p.n_levels))
        if r.type == "app" and r.value > MAX_DSCP:
            return "app: DSCP %d exceeds %d" % (r.value, MAX_DSCP)
        if r.type == "match" and not 1 <= len(r.value) <= MAX_KEYWORD:
            return ("match: keyword of %d bytes, must be 1 to %d"
                    % (len(r.value), MAX_KEYWORD))
        if r.type == "length" and not r.value:
            return ("length: minimum payload 0 matches every packet (use 1 "
                    "to %d, or default_level)" % MAX_PKT_SIZE)
    return None


def _rule_problem(p):
    """panda_policy_validate(), message for message."""
    alpha = p.thresholds
    if p.kind not in COUNTER_KINDS and alpha:
        return ("thresholds: not allowed with kind=%s (no counter; 'levels' "
                "gives K)" % p.kind)
    for i in range(len(alpha)):
        if i > 0 and alpha[i] <= alpha[i - 1]:
            return ("thresholds: not strictly ascending (%d after %d)"
                    % (alpha[i], alpha[i - 1]))
        if alpha[i] > I64_MAX:
            return "thresholds: %d too large" % alpha[i]
    if p.kind == "pias":
        if p.threshold:
            return ("threshold: must be 0 for kind=pias (PIAS has no "
                    "small-packet threshold)")
        if p.weights:
            return ("weights: not allowed with kind=pias (PIAS counts "
                    "bytes sent)")
    elif p.threshold > MAX_PKT_SIZE:
        return ("threshold: %d larger than the largest packet (%d)"
                % (p.threshold, MAX_PKT_SIZE))
    for i, (above, w) in enumerate(p.weights):
        if not i and above < p.threshold:
            return ("weights: interval bound %d is below the threshold "
                    "T=%d" % (above, p.threshold))
        if above > MAX_PKT_SIZE:
            # The text syntax bounds it too: a policy must print to a text
            # that parses back (found by tests/fuzz/fuzz-wire).
            return ("weights: interval bound %d larger than the largest "
                    "packet (%d)" % (above, MAX_PKT_SIZE))
        if i and above <= p.weights[i - 1][0]:
            return ("weights: interval bounds not strictly ascending (%d "
                    "after %d)" % (above, p.weights[i - 1][0]))
        if w < WEIGHT_ONE:
            return "weights: weight %d.%02d below 1" % (w // 100, w % 100)
        if w > MAX_WHOLE_WEIGHT * 100 + 99:
            return ("weights: weight %d.%02d above %d.99"
                    % (w // 100, w % 100, MAX_WHOLE_WEIGHT))
        if i and w < p.weights[i - 1][1]:
            return ("weights: weights must not decrease (1 = w0 <= w1 <= "
                    "...)")
    for i, d in enumerate(p.dscp):
        if d > MAX_DSCP:
            return "dscp: value %d for level %d exceeds %d" % (d, i,
                                                                MAX_DSCP)
    if p.ctl_level >= p.n_levels:
        return ("ctl_level: %d but the policy has only %d levels"
                % (p.ctl_level, p.n_levels))
    if p.untracked_level >= p.n_levels:
        return ("untracked_level: %d but the policy has only %d levels"
                % (p.untracked_level, p.n_levels))
    if p.floor > 0:
        return "floor: %d must be <= 0" % p.floor
    return _rules_problem(p)


# -- text syntax (panda_policy_parse) -----------------------------------------
_SPACE = " \t\n\v\f\r"


def _strtoull(s):
    """C's strtoull(s, &end, 10): (value, rest, ok); ok False where C sets
    errno or parses no digit.  A '-' after leading blanks negates modulo
    2^64, as in C."""
    i = len(s) - len(s.lstrip(_SPACE))
    neg = False
    if i < len(s) and s[i] in "+-":
        neg = s[i] == "-"
        i += 1
    j = i
    while j < len(s) and s[j] in "0123456789":
        j += 1
    if j == i:
        return 0, s, False
    v = int(s[i:j])
    if v > U64:
        return U64, s[j:], False
    return ((-v) & U64 if neg else v), s[j:], True


def _parse_u64(field, s, hi):
    if not s or s[0] == "-":
        raise PolicyError("%s: \"%s\" is not a nonnegative integer"
                          % (field, s))
    v, rest, ok = _strtoull(s)
    if not ok or rest:
        raise PolicyError("%s: \"%s\" is not a nonnegative integer"
                          % (field, s))
    if v > hi:
        raise PolicyError("%s: %s out of range (max %d)" % (field, s, hi))
    return v


def _parse_weight(s):
    """'2', '2.5', '2.25' -> hundredths."""
    dot = s.find(".")
    whole_text = s if dot < 0 else s[:dot]
    if not whole_text or len(whole_text) >= 32:
        raise PolicyError("weights: bad weight \"%s\"" % s)
    whole = _parse_u64("weights", whole_text, MAX_WHOLE_WEIGHT)
    frac = 0
    if dot >= 0:
        digits = s[dot + 1:]
        if not 1 <= len(digits) <= 2 or \
                any(c not in "0123456789" for c in digits):
            raise PolicyError("weights: weight \"%s\" needs 1 or 2 decimal "
                              "digits" % s)
        frac = int(digits) * (10 if len(digits) == 1 else 1)
    return whole * 100 + frac


def _parse_weight_item(item):
    colon = item.find(":")
    if colon <= 0 or colon >= 32:
        raise PolicyError("weights: \"%s\" is not <size>:<weight>" % item)
    return (_parse_u64("weights", item[:colon], MAX_PKT_SIZE),
            _parse_weight(item[colon + 1:]))


def _items(field, value, max_items, parse):
    """for_each_item(): '/'-separated items, each through 'parse'."""
    if value == "":
        return []
    if value.startswith("/") or value.endswith("/") or "//" in value:
        raise PolicyError("%s: empty item in \"%s\"" % (field, value))
    out = []
    for item in value.split("/"):
        if len(out) >= max_items:
            raise PolicyError("%s: more than %d items" % (field, max_items))
        out.append(parse(item))
    return out


def format_keyword(kw):
    """Keyword bytes as panda_policy_format() prints them."""
    return "".join(chr(c) if c in _KEYWORD_PLAIN else "\\x%02x" % c
                   for c in kw)


def parse_keyword(s):
    """parse_keyword() of policy.c: letters, digits, "-_.~" and \\xHH."""
    out = bytearray()
    i = 0
    while i < len(s):
        if len(out) >= MAX_KEYWORD:
            raise PolicyError("match: keyword longer than %d bytes"
                              % MAX_KEYWORD)
        c = s[i]
        if c == "\\":
            h = s[i + 2:i + 4]
            if s[i + 1:i + 2] != "x" or len(h) != 2 or \
                    any(x not in "0123456789abcdefABCDEF" for x in h):
                raise PolicyError("match: bad escape in \"%s\" (write a "
                                  "byte as \\xHH)" % s)
            out.append(int(h, 16))
            i += 4
        elif len(c.encode()) == 1 and ord(c) in _KEYWORD_PLAIN:
            out.append(ord(c))
            i += 1
        else:
            raise PolicyError("match: character '%s' in \"%s\" must be "
                              "written %s" % (c, s, "".join(
                                  "\\x%02x" % b for b in c.encode())))
    if not out:
        raise PolicyError("match: empty keyword")
    return bytes(out)


def _parse_rule(rtype, item):
    colon = item.rfind(":")
    if colon <= 0:
        raise PolicyError("%s: \"%s\" is not <%s>:<level>" % (
            rtype, item, {"app": "dscp", "match": "keyword",
                          "length": "min_payload"}[rtype]))
    level = _parse_u64(rtype, item[colon + 1:], MAX_LEVELS - 1)
    if rtype == "match":
        value = parse_keyword(item[:colon])
    else:
        value = _parse_u64(rtype, item[:colon],
                           MAX_DSCP if rtype == "app" else MAX_PKT_SIZE)
    return Rule(rtype, value, level)


def _parse_rules(rtype, value, room):
    """parse_rules(): '/'-separated rules appended to the policy's."""
    if value == "" or value.startswith("/") or value.endswith("/") or \
            "//" in value:
        raise PolicyError("%s: empty item in \"%s\"" % (rtype, value))
    out = []
    for item in value.split("/"):
        if len(out) >= room:
            raise PolicyError("%s: more than %d rules in the policy"
                              % (rtype, MAX_RULES))
        out.append(_parse_rule(rtype, item))
    return out


def _parse_floor(value):
    v, rest, ok = _strtoull(value)
    stripped = value.lstrip(_SPACE)
    neg = stripped.startswith("-")
    if ok:
        # strtoll: the magnitude must fit int64 (errno ERANGE otherwise).
        mag = (-v) & U64 if neg else v
        ok = mag <= (I64_MAX + 1 if neg else I64_MAX)
    if not ok or rest:
        raise PolicyError("floor: \"%s\" is not an integer" % value)
    return -mag if neg else mag


def _parse_text(text):
    """panda_policy_parse() up to (not including) validation: returns the
    keyword arguments of Policy."""
    kw = {"kind": "panda"}
    rules = []
    have_id = False
    n_dscp = n_queues = None
    # strtok_r(",") skips empty tokens.
    for tok in (t for t in text.split(",") if t):
        if "=" not in tok:
            raise PolicyError("%s: missing \"=<value>\""
                              % tok.lstrip(" \t"))
        key, value = tok.split("=", 1)
        key = key.lstrip(" \t")
        if key == "id":
            kw["id"] = _parse_u64("id", value, U32)
            have_id = True
        elif key == "kind":
            if value not in KINDS:
                raise PolicyError("kind: \"%s\" is not panda, pias, app, "
                                  "match, length or compose" % value)
            kw["kind"] = value
        elif key == "levels":
            kw["levels"] = _parse_u64("levels", value, MAX_LEVELS)
            if not kw["levels"]:
                raise PolicyError("levels: must be 1 to %d" % MAX_LEVELS)
        elif key == "default_level":
            kw["default_level"] = _parse_u64("default_level", value,
                                             MAX_LEVELS - 1)
        elif key in RULE_TYPES:
            rules.extend(_parse_rules(key, value, MAX_RULES - len(rules)))
        elif key in ("threshold", "T"):
            kw["threshold"] = _parse_u64("threshold", value, MAX_PKT_SIZE)
        elif key == "weights":
            kw["weights"] = _items("weights", value, MAX_WEIGHTS,
                                   _parse_weight_item)
        elif key == "thresholds":
            kw["thresholds"] = _items(
                "thresholds", value, MAX_LEVELS - 1,
                lambda s: _parse_u64("thresholds", s, I64_MAX))
        elif key == "dscp":
            kw["dscp"] = _items("dscp", value, MAX_LEVELS,
                                lambda s: _parse_u64("dscp", s, MAX_DSCP))
            n_dscp = len(kw["dscp"])
        elif key == "queues":
            kw["queues"] = _items("queues", value, MAX_LEVELS,
                                  lambda s: _parse_u64("queues", s, U8))
            n_queues = len(kw["queues"])
        elif key == "ctl_level":
            kw["ctl_level"] = _parse_u64("ctl_level", value, MAX_LEVELS - 1)
        elif key == "untracked_level":
            kw["untracked_level"] = _parse_u64("untracked_level", value,
                                               MAX_LEVELS - 1)
        elif key == "floor":
            kw["floor"] = _parse_floor(value)
        elif key == "idle_reset":
            kw["idle_reset"] = _parse_u64("idle_reset", value,
                                          MAX_DURATION_MS)
        else:
            raise PolicyError("%s: unknown field" % key)
    if not have_id:
        raise PolicyError("id: missing (every policy needs a stable id)")
    kind = kw["kind"]
    if "default_level" in kw and kind in COUNTER_KINDS:
        raise PolicyError("default_level: not allowed with kind=%s (%s)" % (
            kind, "Panda decides the packets that no rule matches"
            if kind == "compose" else "the counter decides every level"))
    kw["rules"] = tuple(rules)
    if kind not in COUNTER_KINDS:
        if kw.get("thresholds"):
            raise PolicyError("thresholds: not allowed with kind=%s (no "
                              "counter; 'levels' gives K)" % kind)
        if "levels" not in kw:
            kw["levels"] = max([r.level for r in rules]
                               + [kw.get("default_level", 0)]) + 1
        k = kw["levels"]
    elif "levels" in kw:
        raise PolicyError("levels: not allowed with kind=%s (the thresholds "
                          "give K)" % kind)
    else:
        k = len(kw.get("thresholds", ())) + 1
    for field, n in (("dscp", n_dscp), ("queues", n_queues)):
        if n is not None and n != k:
            raise PolicyError("%s: %d values for %d levels (give one per "
                              "level: thresholds + 1)" % (field, n, k))
    return kw


# -- JSON ----------------------------------------------------------------------
POLICY_KEYS = ("id", "kind", "threshold", "weights", "thresholds", "dscp",
               "queues", "ctl_level", "untracked_level", "floor",
               "idle_reset", "levels", "default_level", "priority_rules")
# Keys panda-model writes that are not part of the policy.
INFO_KEYS = ("version", "action", "model", "inputs", "flt", "fht",
             "comment", "controller")


def _where(src, field):
    return "%s: %s" % (src, field) if src else field


def json_int(src, field, v, lo, hi, error=PolicyError):
    """An integer of a JSON document in [lo, hi], else 'error' naming the
    source and the field (the controller's configuration uses it too)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise error("%s: expected an integer, got %s"
                    % (_where(src, field), json.dumps(v)))
    if not lo <= v <= hi:
        raise error("%s: %d out of range (%d..%d)"
                    % (_where(src, field), v, lo, hi))
    return v


def _json_int_list(src, field, v, lo, hi, maxlen):
    if not isinstance(v, list):
        raise PolicyError("%s: expected a list of integers, got %s"
                          % (_where(src, field), json.dumps(v)))
    if len(v) > maxlen:
        raise PolicyError("%s: %d values, at most %d allowed"
                          % (_where(src, field), len(v), maxlen))
    return [json_int(src, "%s[%d]" % (field, i), x, lo, hi)
            for i, x in enumerate(v)]


def _json_hundredths(src, field, v):
    """A JSON number with at most two decimals -> hundredths (int): the
    one place a float enters, and it leaves as an integer."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise PolicyError("%s: expected a number, got %s"
                          % (_where(src, field), json.dumps(v)))
    if isinstance(v, float) and not math.isfinite(v):
        raise PolicyError("%s: %s is not a finite number"
                          % (_where(src, field), v))
    h = round(v * 100) if isinstance(v, float) else v * 100
    if isinstance(v, float) and abs(h - v * 100) > 1e-6:
        raise PolicyError("%s: %s has more than two decimals"
                          % (_where(src, field), v))
    return json_int(src, field, int(h), 0, U16)


def _json_rules(src, rules):
    """'priority_rules': a list of {"app"|"match"|"length": value,
    "level": L}; a match value is the keyword as the text syntax writes it.
    (Not "rules": in the controller's configuration that names its flow
    rules.)"""
    if not isinstance(rules, list) or len(rules) > MAX_RULES:
        raise PolicyError("%s: expected a list of at most %d rules"
                          % (_where(src, "priority_rules"), MAX_RULES))
    out = []
    for i, r in enumerate(rules):
        f = "priority_rules[%d]" % i
        types = [t for t in RULE_TYPES if isinstance(r, dict) and t in r]
        if not isinstance(r, dict) or len(types) != 1 or \
                set(r) != {types[0], "level"}:
            raise PolicyError("%s: expected {\"app\"|\"match\"|\"length\": "
                              "value, \"level\": level}, got %s"
                              % (_where(src, f), json.dumps(r)))
        t = types[0]
        level = json_int(src, f + ".level", r["level"], 0, MAX_LEVELS - 1)
        if t == "match":
            if not isinstance(r[t], str):
                raise PolicyError("%s: expected a keyword string, got %s"
                                  % (_where(src, f + ".match"),
                                     json.dumps(r[t])))
            try:
                value = parse_keyword(r[t])
            except PolicyError as e:
                raise PolicyError("%s: %s" % (_where(src, f), e))
        else:
            value = json_int(src, "%s.%s" % (f, t), r[t], 0,
                             MAX_DSCP if t == "app" else MAX_PKT_SIZE)
        out.append(Rule(t, value, level))
    return out


def _from_json(cls, obj, src):
    if not isinstance(obj, dict):
        raise PolicyError("%s: a policy must be a JSON object"
                          % (src or "policy"))
    if "version" in obj and obj["version"] != 1:
        raise PolicyError("%s: unsupported version %s (expected 1)"
                          % (_where(src, "version"),
                             json.dumps(obj["version"])))
    if "id" not in obj:
        raise PolicyError("%s: missing (the policy id is required)"
                          % _where(src, "id"))
    unknown = sorted(set(obj) - set(POLICY_KEYS) - set(INFO_KEYS))
    if unknown:
        raise PolicyError("%s: unknown key%s %s (policy keys: %s)" % (
            src or "policy", "s" if len(unknown) > 1 else "",
            ", ".join(unknown), ", ".join(sorted(POLICY_KEYS))))
    kw = {"id": json_int(src, "id", obj["id"], 0, U32)}
    kind = obj.get("kind", "panda")
    if kind not in KINDS:
        raise PolicyError("%s: %s is not panda, pias, app, match, length or "
                          "compose" % (_where(src, "kind"), json.dumps(kind)))
    kw["kind"] = kind
    kw["threshold"] = json_int(src, "threshold", obj.get("threshold", 0),
                                0, U32)
    weights = obj.get("weights", [])
    if not isinstance(weights, list) or len(weights) > MAX_WEIGHTS:
        raise PolicyError("%s: expected a list of at most %d [above, "
                          "weight] pairs" % (_where(src, "weights"),
                                             MAX_WEIGHTS))
    wl = []
    for i, w in enumerate(weights):
        f = "weights[%d]" % i
        if not isinstance(w, list) or len(w) != 2:
            raise PolicyError("%s: expected [above_bytes, weight], got %s"
                              % (_where(src, f), json.dumps(w)))
        wl.append((json_int(src, f + "[0]", w[0], 0, U32),
                   _json_hundredths(src, f + "[1]", w[1])))
    kw["weights"] = wl
    kw["thresholds"] = _json_int_list(src, "thresholds",
                                      obj.get("thresholds", []), 0, U64,
                                      MAX_LEVELS - 1)
    kw["rules"] = _json_rules(src, obj.get("priority_rules", []))
    for key in ("levels", "default_level"):
        if key in obj:
            kw[key] = json_int(src, key, obj[key], 0, U8)
    if kind in COUNTER_KINDS:
        k = len(kw["thresholds"]) + 1
    else:
        k = kw.get("levels") or max([r.level for r in kw["rules"]] +
                                    [kw.get("default_level", 0)]) + 1
    for key, hi in (("dscp", MAX_DSCP), ("queues", U8)):
        if key in obj:
            v = _json_int_list(src, key, obj[key], 0, hi, MAX_LEVELS)
            if len(v) != k:
                raise PolicyError(
                    "%s: %d values for %d levels (%s)" % (
                        _where(src, key), len(v), k,
                        "one per level: thresholds has %d entries" % (k - 1)
                        if kind in COUNTER_KINDS else "one per level"))
            kw[key] = v
    kw["ctl_level"] = json_int(src, "ctl_level", obj.get("ctl_level", 0),
                                0, U8)
    if "untracked_level" in obj:
        kw["untracked_level"] = json_int(src, "untracked_level",
                                         obj["untracked_level"], 0, U8)
    kw["floor"] = json_int(src, "floor", obj.get("floor", 0), I64_MIN,
                            I64_MAX)
    kw["idle_reset"] = json_int(src, "idle_reset",
                                 obj.get("idle_reset", 0), 0,
                                 MAX_DURATION_MS)
    try:
        policy = cls(**kw)
    except PolicyError as e:
        raise PolicyError("%s: policy id %d: %s"
                          % (src or "policy", kw["id"], e))
    warnings = []
    action = obj.get("action")
    if action is not None and action != policy.text():
        warnings.append("%s: 'action' (%s) differs from the structured "
                        "fields (%s); the structured fields are used"
                        % (_where(src, "action"), action, policy.text()))
    return policy, warnings

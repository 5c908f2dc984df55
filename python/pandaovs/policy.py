"""One scheduling policy (Panda, PIAS or a rule kind), as lib/panda parses,
checks, prints and encodes it: a binding of libpanda-policy.so.1
(lib/panda/policy-api.h) with ctypes.  No policy logic lives here: every
key, range, default and message is the C library's, so the controller, the
testbed, ovs-ofctl and the datapath accept the same policies with the same
"field: problem" messages (tests/vectors/policies.txt is the contract).

    Policy.from_text("id=1,threshold=1460,thresholds=100000/1000000")
    Policy(id=1, threshold=1460, thresholds=(100000, 1000000))
    Policy.from_json(obj, src)          # panda-model's JSON -> (Policy,
                                        # warnings)
    policy.text()                       # panda_policy_format()
    policy.wire_body(), Policy.from_wire_body(body)
    policy.nx_action(), Policy.from_nx_action(action)
    policy.threshold, policy.dscp, ...  # the fields, read-only

The fields are the text syntax's keys in lib/panda's units (weights as
(above_bytes, hundredths) pairs, idle_reset in ms; 'levels' is K), read
from the library's JSON fields form, so a key added to lib/panda appears
here without a change.  Constants (MAX_LEVELS, WIRE_LEN, ...) come from the
library too.

ctypes rather than cffi: the standard library, nothing to build or install
with the package, and an API made for it (opaque handles, byte buffers,
malloc()ed strings; no struct crosses it).
"""

import ctypes
import json
import math
import struct

from . import paths

# The NXAST_PANDA action around the wire body: OpenFlow's framing (a
# Nicira vendor action, subtype 240; openflow/README.md), not policy.
OFPAT_VENDOR = 0xffff
NX_VENDOR_ID = 0x00002320
NXAST_PANDA = 240
NX_HEADER_LEN = 10          # type, len, vendor, subtype
_NX_HEADER = struct.Struct("!HHIH")

_DOC, _FIELDS = 0, 1        # The JSON forms of panda_api_from_json().


class PolicyError(ValueError):
    """A policy lib/panda refuses; str() is its message, which names the
    field."""


# -- the library --------------------------------------------------------------
_lib = None


def library():
    """The loaded libpanda-policy.so.1 (paths.policy_library()); raises
    PolicyError saying how to get it if it is missing."""
    global _lib
    if _lib is not None:
        return _lib
    path = paths.policy_library()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise PolicyError("cannot load the policy library %s (%s): build "
                          "the tree (./build.sh) or install panda-ovs-tools"
                          % (path, e))
    vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    out = ctypes.POINTER(ctypes.c_void_p)
    for name, res, args in (
            ("version", ctypes.c_int, []),
            ("constant", ctypes.c_int, [cp, ctypes.POINTER(ctypes.c_int64)]),
            ("constant_name", cp, [ctypes.c_int]),
            ("free", None, [vp]),
            ("parse", vp, [cp, out]),
            ("from_json", vp, [cp, cp, ctypes.c_int, out, out]),
            ("to_json", vp, [vp, ctypes.c_int]),
            ("format", vp, [vp]),
            ("wire_encode", sz, [vp, ctypes.c_char_p, sz]),
            ("wire_decode", vp, [cp, sz, out]),
            ("rule_level", ctypes.c_int,
             [vp, ctypes.c_uint8, cp, sz, ctypes.c_uint32]),
            ("format_weight", vp, [ctypes.c_uint16])):
        f = getattr(lib, "panda_api_" + name)
        f.restype, f.argtypes = res, args
    if lib.panda_api_version() != 1:
        raise PolicyError("%s: API version %d, this package needs 1"
                          % (path, lib.panda_api_version()))
    _lib = lib
    return lib


def _take(ptr):
    """A string the library returned (malloc()ed), freed; None for NULL."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode()
    finally:
        library().panda_api_free(ptr)


def _constants():
    lib, out, i = library(), {}, 0
    while True:
        name = lib.panda_api_constant_name(i)
        if name is None:
            return out
        v = ctypes.c_int64()
        lib.panda_api_constant(name, ctypes.byref(v))
        out[name.decode().upper()] = v.value
        i += 1


_CONSTANTS = None


def __getattr__(name):
    """The library's constants as module attributes (MAX_LEVELS, WIRE_LEN,
    WIRE_MAX_LEN, MAX_RULES, ...; NX_ACTION_LEN is the NX header plus
    WIRE_LEN), read when first asked for, so that importing this module
    needs no built library."""
    global _CONSTANTS
    if name.startswith("__"):
        raise AttributeError(name)
    if _CONSTANTS is None:
        _CONSTANTS = _constants()
        _CONSTANTS["NX_ACTION_LEN"] = NX_HEADER_LEN + _CONSTANTS["WIRE_LEN"]
    try:
        return _CONSTANTS[name]
    except KeyError:
        raise AttributeError("module %r has no attribute %r"
                             % (__name__, name)) from None


def _const(name):
    return __getattr__(name)


_NONE = object()


def _new(fn, *args, warning=_NONE):
    """Calls a constructor of the API (its arguments, then the error
    out-parameter, then for panda_api_from_json() the warning's): a
    handle, or PolicyError with the library's message."""
    err = ctypes.c_void_p()
    extra = () if warning is _NONE else (warning,)
    h = fn(*args, ctypes.byref(err), *extra)
    if not h:
        raise PolicyError(_take(err.value))
    return h


# -- values between JSON and Python ----------------------------------------------
def _to_json_value(v):
    """A field value as the fields form takes it: tuples as lists, bytes
    as lists of byte values, rules as [type, value, level]."""
    if isinstance(v, Rule):
        return [v.type, _to_json_value(v.value), v.level]
    if isinstance(v, (bytes, bytearray)):
        return list(v)
    if isinstance(v, (tuple, list)):
        return [_to_json_value(x) for x in v]
    return v


def _from_json_value(v):
    """Lists as tuples (the fields are immutable)."""
    if isinstance(v, list):
        return tuple(_from_json_value(x) for x in v)
    return v


def _nonfinite(v, path=""):
    """The path and value of the first NaN or infinity in a JSON-like
    value (Python's json reads them; JSON has none), or None."""
    if isinstance(v, float) and not math.isfinite(v):
        return path, v
    items = (v.items() if isinstance(v, dict) else enumerate(v)
             if isinstance(v, list) else ())
    for k, x in items:
        sub = ("%s[%d]" % (path, k) if isinstance(k, int)
               else "%s.%s" % (path, k) if path else k)
        found = _nonfinite(x, sub)
        if found:
            return found
    return None


class Rule(tuple):
    """One rule of a rule kind: type "app" (value: the DSCP), "match" (the
    keyword, bytes) or "length" (the minimum payload), and its level."""

    __slots__ = ()

    def __new__(cls, type, value, level):
        if isinstance(value, (list, tuple)):
            value = bytes(value)
        return super().__new__(cls, (type, value, level))

    type = property(lambda self: self[0])
    value = property(lambda self: self[1])
    level = property(lambda self: self[2])

    def __repr__(self):
        return "Rule(%r, %r, %r)" % tuple(self)


class Policy:
    """A valid policy (every constructor validates) and its fields, as
    read-only attributes.  Policy(**fields) takes the text syntax's keys
    (id is required; what is omitted takes lib/panda's defaults, e.g. dscp
    level i -> i + 1)."""

    __slots__ = ("_fields", "_text")

    def __init__(self, **fields):
        given = {k: _to_json_value(v) for k, v in fields.items()
                 if v is not None}
        try:
            doc = json.dumps(given)
        except (TypeError, ValueError) as e:
            raise PolicyError("policy fields: %s" % e)
        self._adopt(_new(library().panda_api_from_json, doc.encode(), None,
                         _FIELDS, warning=None))

    @classmethod
    def _from_handle(cls, h):
        p = cls.__new__(cls)
        p._adopt(h)
        return p

    def _adopt(self, h):
        lib = library()
        try:
            fields = json.loads(_take(lib.panda_api_to_json(h, _FIELDS)))
            text = _take(lib.panda_api_format(h))
        finally:
            lib.panda_api_free(h)
        fields["rules"] = tuple(Rule(*r) for r in fields.get("rules", ()))
        object.__setattr__(self, "_fields",
                           {k: _from_json_value(v)
                            for k, v in fields.items()})
        object.__setattr__(self, "_text", text)

    def __getattr__(self, name):
        try:
            return object.__getattribute__(self, "_fields")[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        raise AttributeError("a Policy is immutable (use replace())")

    def __eq__(self, other):
        return isinstance(other, Policy) and self._text == other._text

    def __hash__(self):
        return hash(self._text)

    def __repr__(self):
        return "Policy(%s)" % self._text

    def __reduce__(self):
        return (Policy.from_text, (self._text,))

    @property
    def n_levels(self):
        return self.levels

    def fields(self):
        """The fields as a dict: Policy(**p.fields()) == p."""
        return dict(self._fields)

    def replace(self, **changes):
        """A copy with some fields changed (validated again)."""
        return Policy(**dict(self._fields, **changes))

    # -- text -------------------------------------------------------------
    @classmethod
    def from_text(cls, text):
        """panda_policy_parse(): raises PolicyError with its message."""
        return cls._from_handle(_new(library().panda_api_parse,
                                     text.encode()))

    def text(self):
        """panda_policy_format(): the canonical text, which is what
        ovs-ofctl dump-flows prints inside panda(...)."""
        return self._text

    # -- JSON (panda-model's policy file) ---------------------------------
    @classmethod
    def from_json(cls, obj, src=""):
        """Reads panda-model's JSON (tools/README-panda-model.md): the
        structured fields are authoritative, 'action' (the text) is
        compared with them.  Returns (Policy, warnings).  Errors name 'src'
        and the field."""
        bad = _nonfinite(obj)
        if bad:
            raise PolicyError("%s%s: %s is not a finite number"
                              % (src + ": " if src else "", bad[0], bad[1]))
        try:
            doc = json.dumps(obj)
        except (TypeError, ValueError) as e:
            raise PolicyError("%s: not JSON: %s" % (src or "policy", e))
        warning = ctypes.c_void_p()
        h = _new(library().panda_api_from_json, doc.encode(),
                 src.encode() if src else None, _DOC,
                 warning=ctypes.byref(warning))
        warning = _take(warning.value)
        return cls._from_handle(h), [warning] if warning else []

    def to_json(self):
        """panda-model's JSON of the policy (weights as numbers, "action"
        the text)."""
        return json.loads(self._call(library().panda_api_to_json, _DOC))

    def _call(self, fn, *args):
        h = _new(library().panda_api_parse, self._text.encode())
        try:
            r = fn(h, *args)
        finally:
            library().panda_api_free(h)
        return _take(r) if fn.restype is ctypes.c_void_p else r

    # -- wire -------------------------------------------------------------
    def wire_body(self):
        """The wire body (bytes 10.. of NXAST_PANDA; lib/panda/wire.h)."""
        lib = library()
        h = _new(lib.panda_api_parse, self._text.encode())
        try:
            n = lib.panda_api_wire_encode(h, None, 0)
            buf = ctypes.create_string_buffer(n)
            lib.panda_api_wire_encode(h, buf, n)
        finally:
            lib.panda_api_free(h)
        return buf.raw

    @classmethod
    def from_wire_body(cls, body):
        """panda_wire_decode(): raises PolicyError with the decoder's
        message, as the switch refuses the action."""
        body = bytes(body)
        return cls._from_handle(_new(library().panda_api_wire_decode, body,
                                     len(body)))

    def nx_action(self):
        """The whole NXAST_PANDA action: the NX header, then the body."""
        body = self.wire_body()
        return _NX_HEADER.pack(OFPAT_VENDOR, NX_HEADER_LEN + len(body),
                               NX_VENDOR_ID, NXAST_PANDA) + body

    @classmethod
    def from_nx_action(cls, action):
        action = bytes(action)
        least = NX_HEADER_LEN + _const("WIRE_LEN")
        if len(action) < least:
            raise PolicyError("panda action: %d bytes, expected at least %d"
                              % (len(action), least))
        if _NX_HEADER.unpack_from(action) != (OFPAT_VENDOR, len(action),
                                              NX_VENDOR_ID, NXAST_PANDA):
            raise PolicyError("not an NXAST_PANDA action")
        return cls.from_wire_body(action[NX_HEADER_LEN:])

    # -- classification (lib/panda/classifier.h) --------------------------
    def rule_level(self, dscp=0, data=b"", payload=None):
        """panda_cls_rules(): the level of the first rule that a packet
        (its DSCP, first payload bytes, payload length) matches, or
        None."""
        data = bytes(data)
        payload = len(data) if payload is None else payload
        level = self._call(library().panda_api_rule_level, dscp, data,
                           len(data), payload)
        return None if level < 0 else level


def format_weight(w):
    """Hundredths as the text syntax writes them: 2, 2.5, 2.25."""
    return _take(library().panda_api_format_weight(w))


def json_int(src, field, v, lo, hi, error=PolicyError):
    """An integer of a JSON document in [lo, hi], else 'error' naming the
    source and the field (the controller's configuration uses it)."""
    where = "%s: %s" % (src, field) if src else field
    if isinstance(v, bool) or not isinstance(v, int):
        raise error("%s: expected an integer, got %s" % (where, json.dumps(v)))
    if not lo <= v <= hi:
        raise error("%s: %d out of range (%d..%d)" % (where, v, lo, hi))
    return v


def main(argv=None):
    """python3 -m pandaovs.policy (--text TEXT | --json FILE): prints the
    policy's canonical text, read by lib/panda (a panda-model JSON file's
    structured fields, '-' for standard input, as the controller reads
    them), or the refusal on standard error with exit status 1.  What the
    Ansible roles put into a flow table."""
    import sys
    from .cli import ArgumentParser
    p = ArgumentParser(prog="python3 -m pandaovs.policy",
                       description=main.__doc__.split(":")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--text", help="a policy in the text syntax")
    g.add_argument("--json", metavar="FILE",
                   help="panda-model's policy JSON ('-': standard input)")
    a = p.parse_args(argv)
    try:
        if a.text is not None:
            policy, warnings = Policy.from_text(a.text), []
        else:
            src = "<stdin>" if a.json == "-" else a.json
            try:
                if a.json == "-":
                    obj = json.load(sys.stdin)
                else:
                    with open(a.json) as f:
                        obj = json.load(f)
            except (OSError, ValueError) as e:
                raise PolicyError("%s: %s" % (src, e))
            policy, warnings = Policy.from_json(obj, src)
    except PolicyError as e:
        print("pandaovs.policy: %s" % e, file=sys.stderr)
        return 1
    for w in warnings:
        print("pandaovs.policy: warning: %s" % w, file=sys.stderr)
    print(policy.text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

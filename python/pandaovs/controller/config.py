"""Controller configuration and policy files for the Panda controller.

A configuration names, per bridge, the flows that run the panda action:

    {
      "cookie": "0x50414e4400000000",
      "rules": [
        {
          "name": "tenant-tcp",
          "dpids": "*",
          "table": 0,
          "priority": 100,
          "match": {"eth_type": "0x0800", "ip_proto": 6},
          "policy": "policy.json",
          "next": "normal"
        }
      ]
    }

- "cookie" (optional): the upper 32 bits mark the controller's flows; the
  lower 32 bits of each flow's cookie identify its rule.  Flows of other
  owners (other cookies) are never touched.
- "dpids": "*" (every bridge that connects) or a list of datapath ids
  (integers, "0x..." hex or "00:00:..:01" colon form).
- "match": os-ken OFPMatch field names (eth_type, ip_proto, in_port,
  ipv4_src, tcp_dst, ...); integers may be written as "0x.." strings; a
  masked field is [value, mask].  Default: {} (every packet).
- "policy": a policy file (path relative to the configuration) as written by
  tools/panda-model, or the same object inline, or null for a plain flow
  without the panda action (e.g. the bridge's priority-0 NORMAL flow, which
  a bridge in fail_mode=secure does not have by itself).
- "next": "normal" (panda, then NORMAL forwarding) or "goto_table:N"
  (panda, then the operator's pipeline in table N > table).

A policy file alone (panda-model's JSON) is also a valid configuration: one
rule for every bridge, table 0, priority 100, match {}, next normal; a
"controller" object in it can override those rule fields and names the
switches, which that rule for every bridge needs (panda-model --switches
writes them).

Forwarding (the decision): a configuration must not silently take away a
bridge's forwarding.  {"rules": []} deletes every flow the controller
installed, on every bridge, and a change that drops a catch-all rule (match
{}) from a bridge that had one leaves a fail_mode=secure bridge without a
path for the traffic it matched; both are refused unless the configuration
says "confirm_no_forwarding": true (CONFIRM_KEY).  load() refuses the empty
configuration, check_transition() a change that drops a catch-all, and the
controller checks every bridge's plan once more before it sends it
(diff.forwarding_removed), which also covers a controller restarted with
a new configuration.

Robustness: whatever is wrong with the files (not a regular file, larger
than MAX_FILE_BYTES, invalid UTF-8, NaN or Infinity, numbers beyond a
double, nesting deeper than the parser's stack, an ovs-ofctl that hangs),
load_checked() raises ConfigError with the file and the problem, never
another exception; ConfigWatcher tries a given
version of the files once, so a bad file is reported once, not every poll.

Policy files: panda-model's JSON (its keys: tools/README-panda-model.md),
read by lib/panda through pandaovs.policy.Policy.from_json: the structured
fields are authoritative; "action" (the policy text panda-model prints) is
compared with them and a mismatch is reported as a warning.

Validation (the decision): everything is checked here, when the files are
read, before anything is pushed -- the JSON structure (types, counts, the
value ranges the action can carry) and lib/panda's policy
rules (thresholds strictly ascending, weights >= 1 and non-decreasing,
t0 >= T, ctl_level < K, floor <= 0, PIAS with T = 0, ...), both by
lib/panda with its own messages, e.g. "policy.json: policy id 7: thresholds: not strictly
ascending (50000 after 500000)".  The switch applies the same rules when it
decodes the action; each switch gets its changes in one atomic OpenFlow
bundle, so a switch that refuses anything keeps the previous policy
entirely.  With --ofctl the controller also runs the encoded actions
through the patched 'ovs-ofctl parse-actions', a cross-check against the
switch's own build (e.g. a switch of another version).

Nothing here needs os-ken except checking the names and values of OpenFlow
match fields ("match"), which uses os-ken's own OFPMatch.
"""

import ipaddress
import json
import logging
import math
import os
import re
import secrets
import stat
import subprocess
import time
import zlib

from . import autotune
from . import switches as switches_mod
from ..policy import Policy, PolicyError, json_int

DEFAULT_COOKIE = 0x50414e4400000000     # "PAND"
COOKIE_PREFIX_MASK = 0xffffffff00000000
U16, U64 = 0xffff, 0xffffffffffffffff
RULE_KEYS = {"name", "dpids", "table", "priority", "match", "policy",
             "next"}
CONFIRM_KEY = "confirm_no_forwarding"
SWITCHES_KEY = "switches"           # pandaovs.controller.switches
BOUNDS_KEY = "auto_tune_bounds"     # pandaovs.controller.autotune
CONFIG_KEYS = {"cookie", "rules", "comment", CONFIRM_KEY, SWITCHES_KEY,
               BOUNDS_KEY}
# ovs-ofctl parse-actions answers in milliseconds; a hung one must not hang
# the controller's reload.
OFCTL_TIMEOUT = 30.0
# The largest configuration or policy file read: a policy is about 1 KB, a
# configuration of thousands of rules a few MB.  Regular files only, so that
# no name (/dev/zero, a FIFO) makes the controller read without end.
MAX_FILE_BYTES = 16 << 20


# How 'panda_controller.py run' hands its options to the os-ken
# application (os-ken's manager starts the app without arguments).
RUN_ENV = {
    "config": "PANDA_CONTROLLER_CONFIG",
    "rest": "PANDA_CONTROLLER_REST",
    "ofctl": "PANDA_CONTROLLER_OFCTL",
    "poll": "PANDA_CONTROLLER_POLL",
    "audit": "PANDA_CONTROLLER_AUDIT",
    "logfmt": "PANDA_CONTROLLER_LOG_FORMAT",
    "rest_token_file": "PANDA_CONTROLLER_REST_TOKEN_FILE",
    "autotune": "PANDA_CONTROLLER_AUTOTUNE",   # autotune.Settings, JSON
    "tls": "PANDA_CONTROLLER_TLS",             # "1": --listen ssl:
    "switch_identity": "PANDA_CONTROLLER_SWITCH_IDENTITY",
}


class ConfigError(Exception):
    """A configuration or policy file that cannot be used.  'files': the
    files read before the problem was found (watched for a fix)."""

    def __init__(self, msg, files=None):
        super(ConfigError, self).__init__(msg)
        self.files = list(files or [])


def split_hostport(s, default_port, default_host="127.0.0.1"):
    """'HOST:PORT', '[v6]:PORT', 'HOST' or 'PORT' -> (host, port).  Raises
    ValueError."""
    if s.isdigit():
        return default_host, int(s)
    if s.startswith("[") and "]" in s:
        host, _, rest = s[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else default_port
    if s.count(":") > 1:            # a bare IPv6 address
        return s, default_port
    host, _, port = s.rpartition(":")
    if not host:
        return s, default_port
    return host, int(port)


def is_loopback(host):
    """Whether listening on 'host' keeps a service on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_listen(s, default_port=6653):
    """The OpenFlow listen address, as OVS writes its own: "tcp:HOST:PORT",
    "ssl:HOST:PORT" or "HOST:PORT" (tcp) -> (proto, host, port).  Raises
    ValueError with a message."""
    proto = "tcp"
    m = re.match(r"^(tcp|ssl):(.*)$", s)
    if m:
        proto, s = m.group(1), m.group(2)
    try:
        host, port = split_hostport(s, default_port)
    except ValueError:
        raise ValueError("%r: expected [tcp:|ssl:]HOST[:PORT]" % s)
    bad = not host or not 0 < port < 65536
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            bad = True
    if bad:
        raise ValueError("%r: expected [tcp:|ssl:]HOST[:PORT]" % s)
    return proto, host, port


def read_file(path, limit=None, what="file"):
    """The bytes of 'path', a regular file of at most 'limit' bytes
    (default MAX_FILE_BYTES).
    Raises ConfigError naming the file: not a regular file (a FIFO, a
    device, a directory: refused without reading or blocking on it), over
    the limit, or unreadable."""
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise ConfigError("%s: cannot read: %s" % (path, e.strerror))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError("%s: not a regular file (%s): refused as a %s"
                              % (path, _file_kind(st.st_mode), what))
        if st.st_size > limit:
            raise ConfigError("%s: %d bytes, above the limit of %d bytes for "
                              "a %s" % (path, st.st_size, limit, what))
        chunks, n = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            n += len(chunk)
            if n > limit:       # it grew while read
                raise ConfigError("%s: more than %d bytes, the limit for a "
                                  "%s" % (path, limit, what))
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise ConfigError("%s: cannot read: %s" % (path, e.strerror))
    finally:
        os.close(fd)


def _file_kind(mode):
    for test, name in ((stat.S_ISDIR, "a directory"),
                       (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


def read_token(path, create=False):
    """The REST interface's bearer token: the first line of 'path'.  With
    'create', a missing file is made with a random token, readable by its
    owner only."""
    if create:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        except OSError as e:
            raise ConfigError("%s: cannot create the REST token file: %s"
                              % (path, e.strerror))
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
    try:
        token = read_file(path, 4096, "REST token file").decode()
        token = token.splitlines()[0].strip() if token else ""
        mode = os.stat(path).st_mode
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError("%s: cannot read the REST token: %s"
                          % (path, getattr(e, "strerror", e)))
    if len(token) < 16:
        raise ConfigError("%s: the REST token must be at least 16 "
                          "characters" % path)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        logging.getLogger("panda_controller").warning(
            "%s: the REST token file is readable by others (chmod 600)",
            path)
    return token


def _where(src, field):
    return "%s: %s" % (src, field) if src else field


def _int(src, field, v, lo, hi):
    return json_int(src, field, v, lo, hi, error=ConfigError)


def parse_policy(obj, src=""):
    """A policy object (panda-model's JSON) -> (Policy, warnings)."""
    try:
        return Policy.from_json(obj, src)
    except PolicyError as e:
        raise ConfigError(str(e))


def parse_dpid(src, v):
    if isinstance(v, int) and not isinstance(v, bool):
        return _int(src, "dpids", v, 0, U64)
    if isinstance(v, str):
        s = v.strip().lower()
        try:
            if ":" in s:
                parts = s.split(":")
                if len(parts) != 8 or any(len(p) != 2 for p in parts):
                    raise ValueError
                return int("".join(parts), 16)
            return int(s, 16) if s.startswith("0x") else int(s, 10)
        except ValueError:
            pass
    raise ConfigError("%s: %s is not a datapath id (integer, 0x hex or "
                      "xx:xx:xx:xx:xx:xx:xx:xx)"
                      % (_where(src, "dpids"), json.dumps(v)))


_NUM = re.compile(r"^(0x[0-9a-fA-F]+|[0-9]+)$")


def _match_value(v):
    if isinstance(v, str) and _NUM.match(v):
        return int(v, 0)
    return v


def parse_match(src, obj):
    """Returns os-ken OFPMatch keyword arguments, checked by building and
    serializing the match (the empty match needs no check, and no
    os-ken)."""
    if not isinstance(obj, dict):
        raise ConfigError("%s: expected an object of OpenFlow match fields"
                          % _where(src, "match"))
    if not obj:
        return {}
    try:
        from os_ken.ofproto import ofproto_v1_3_parser as parser
    except ImportError as e:
        raise ConfigError("%s: checking OpenFlow match fields needs os-ken "
                          "(python3-os-ken, /usr/bin/python3): %s"
                          % (_where(src, "match"), e))
    kw = {}
    for k, v in obj.items():
        if isinstance(v, list):
            if len(v) != 2:
                raise ConfigError("%s: a masked field is [value, mask]"
                                  % _where(src, "match." + k))
            v = (_match_value(v[0]), _match_value(v[1]))
        else:
            v = _match_value(v)
        kw[k] = v
    for k, v in kw.items():
        try:
            m = parser.OFPMatch(**{k: v})
            m.serialize(bytearray(), 0)
        except KeyError:
            raise ConfigError("%s: unknown OpenFlow 1.3 match field"
                              % _where(src, "match." + k))
        except Exception as e:
            raise ConfigError("%s: bad value %s (%s)" % (
                _where(src, "match." + k), json.dumps(obj[k]), e))
    return kw


class Rule(object):
    """One flow per matching bridge: match -> panda(policy), next."""

    def __init__(self, name, dpids, table, priority, match, policy,
                 policy_src, next_, cookie):
        self.name = name
        self.dpids = dpids          # None: every bridge
        self.table = table
        self.priority = priority
        self.match = match          # OFPMatch kwargs
        self.policy = policy
        self.policy_src = policy_src
        self.next = next_           # ("normal",) or ("goto_table", N)
        self.cookie = cookie

    def applies_to(self, dpid):
        return self.dpids is None or dpid in self.dpids

    def is_catch_all(self):
        """Matches every packet of its table: a bridge's path for whatever
        no more specific rule takes."""
        return not self.match

    def describe(self):
        nxt = ("normal" if self.next[0] == "normal"
               else "goto_table:%d" % self.next[1])
        if self.policy is None:
            pol = "no policy"
        else:
            pol = "policy id=%d from %s" % (self.policy.id, self.policy_src)
        return "rule '%s' (table=%d, priority=%d, match=%s, %s, then %s)" % (
            self.name, self.table, self.priority,
            json.dumps(self.match, sort_keys=True, default=str), pol, nxt)


class Config(object):
    def __init__(self, path, cookie, rules, files, warnings,
                 confirm_no_forwarding=False, switches=None, bounds=None):
        self.path = path
        self.cookie = cookie
        self.rules = rules
        self.files = files          # every file read, for change detection
        self.warnings = warnings
        self.confirm_no_forwarding = confirm_no_forwarding
        self.switches = switches    # switches.AllowList
        self.bounds = bounds or {}  # policy id -> autotune.Bounds

    def rules_for(self, dpid):
        return [r for r in self.rules if r.applies_to(dpid)]

    def summary(self):
        return [{"name": r.name, "table": r.table, "priority": r.priority,
                 "match": r.match,
                 "policy": r.policy.text() if r.policy else None,
                 "policy_file": r.policy_src,
                 "dpids": (None if r.dpids is None
                           else ["0x%016x" % d for d in sorted(r.dpids)]),
                 "next": r.next[0] if r.next[0] == "normal"
                 else "goto_table:%d" % r.next[1],
                 "cookie": "0x%016x" % r.cookie} for r in self.rules]


def _refuse_constant(name):
    raise ValueError("%s is not a number in JSON" % name)


def _finite_float(text):
    v = float(text)
    if not math.isfinite(v):
        raise ValueError("number %s is beyond a double's range" % text)
    return v


def _read_json(path):
    """The JSON document in 'path', strictly: a regular file of at most
    MAX_FILE_BYTES (read_file()), UTF-8, no NaN or Infinity, no number
    beyond a double, no nesting deeper than the parser can go."""
    data = read_file(path, what="configuration or policy file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError("%s: not UTF-8 text (byte 0x%02x at offset %d)"
                          % (path, data[e.start], e.start))
    try:
        return json.loads(text, parse_constant=_refuse_constant,
                          parse_float=_finite_float)
    except RecursionError:
        raise ConfigError("%s: not usable JSON: nested too deeply" % path)
    except ValueError as e:
        raise ConfigError("%s: not valid JSON: %s" % (path, e))


def read_policy_file(path):
    """(Policy, warnings) of a policy file (panda-model's JSON), read as
    the configuration's "policy" files are."""
    return parse_policy(_read_json(path), path)


def _parse_rule(src, i, obj, base_dir, cookie_base, files, warnings,
                inline_policy=None):
    where = "%s: rules[%d]" % (src, i)
    if not isinstance(obj, dict):
        raise ConfigError("%s: expected an object" % where)
    unknown = sorted(set(obj) - RULE_KEYS)
    if unknown:
        raise ConfigError("%s: unknown key%s %s (rule keys: %s)" % (
            where, "s" if len(unknown) > 1 else "", ", ".join(unknown),
            ", ".join(sorted(RULE_KEYS))))
    name = obj.get("name", "rule%d" % i)
    if not isinstance(name, str) or not name:
        raise ConfigError("%s.name: expected a non-empty string" % where)
    where = "%s: rule '%s'" % (src, name)
    dpids = obj.get("dpids", "*")
    if dpids == "*":
        dpids = None
    elif isinstance(dpids, list) and dpids:
        dpids = frozenset(parse_dpid(where, d) for d in dpids)
    else:
        raise ConfigError("%s: dpids: \"*\" or a non-empty list of datapath "
                          "ids" % where)
    table = _int(where, "table", obj.get("table", 0), 0, 254)
    priority = _int(where, "priority", obj.get("priority", 100), 0, U16)
    match = parse_match(where, obj.get("match", {}))
    nxt = obj.get("next", "normal")
    m = re.match(r"^goto_table:(\d+)$", nxt) if isinstance(nxt, str) \
        else None
    if nxt == "normal":
        nxt = ("normal",)
    elif m:
        t = int(m.group(1))
        if not table < t <= 254:
            raise ConfigError("%s: next: goto_table:%d must go to a later "
                              "table than %d (and at most 254)"
                              % (where, t, table))
        nxt = ("goto_table", t)
    else:
        raise ConfigError("%s: next: %s is not \"normal\" or "
                          "\"goto_table:N\"" % (where, json.dumps(nxt)))
    if inline_policy is not None:
        pobj, psrc = inline_policy
    else:
        if "policy" not in obj:
            raise ConfigError("%s: policy: missing (a policy file name, an "
                              "inline policy object, or null for a plain "
                              "forwarding flow)" % where)
        p = obj["policy"]
        if p is None:
            pobj = psrc = None
        elif isinstance(p, str):
            psrc = os.path.normpath(os.path.join(base_dir, p))
            files.append(psrc)
            pobj = _read_json(psrc)
        elif isinstance(p, dict):
            pobj, psrc = p, "%s.policy" % where
        else:
            raise ConfigError("%s: policy: expected a file name or an "
                              "object" % where)
    if pobj is None:
        policy = None
    else:
        policy, w = parse_policy(pobj, psrc)
        warnings.extend(w)
    cookie = cookie_base | (zlib.crc32(name.encode()) & 0xffffffff)
    return Rule(name, dpids, table, priority, match, policy, psrc, nxt,
                cookie)


def load(path, require_certificates=False):
    """Reads and checks a configuration (or a bare policy file).  Raises
    ConfigError with a message naming the file and field (and, in .files,
    the files read so far).  'require_certificates': every switch must
    name its certificate (switches.parse())."""
    path = os.path.abspath(path)
    files = [path]
    try:
        return _load(path, files, require_certificates)
    except ConfigError as e:
        e.files = list(files)
        raise


def _load(path, files, require_certificates=False):
    base = os.path.dirname(path)
    warnings = []
    obj = _read_json(path)
    if not isinstance(obj, dict):
        raise ConfigError("%s: expected a JSON object" % path)
    cookie = DEFAULT_COOKIE
    if "cookie" in obj:
        c = obj["cookie"]
        try:
            if isinstance(c, bool) or not isinstance(c, (int, str)):
                raise ValueError
            cookie = int(c, 0) if isinstance(c, str) else c
        except ValueError:
            raise ConfigError("%s: cookie: %s is not an integer"
                              % (path, json.dumps(c)))
        if not 0 < cookie <= U64 or cookie & ~COOKIE_PREFIX_MASK:
            raise ConfigError("%s: cookie: 0x%x must be nonzero in its "
                              "upper 32 bits and zero in the lower 32 (they "
                              "name the rule)" % (path, cookie))
    confirm = obj.get(CONFIRM_KEY, False)
    if not isinstance(confirm, bool):
        raise ConfigError("%s: %s: expected true or false, got %s"
                          % (path, CONFIRM_KEY, json.dumps(confirm)))
    if "rules" in obj:
        unknown = sorted(set(obj) - CONFIG_KEYS)
        if unknown:
            raise ConfigError("%s: unknown key%s %s (expected %s)"
                              % (path, "s" if len(unknown) > 1 else "",
                                 ", ".join(unknown),
                                 ", ".join(sorted(CONFIG_KEYS))))
        if not isinstance(obj["rules"], list):
            raise ConfigError("%s: rules: expected a list" % path)
        if not obj["rules"] and not confirm:
            raise ConfigError(
                "%s: rules: empty: this would delete every flow the "
                "controller installed on every bridge, catch-all included "
                "(a fail_mode=secure bridge then forwards nothing); set "
                "\"%s\": true to mean it" % (path, CONFIRM_KEY))
        rules = [_parse_rule(path, i, r, base, cookie, files, warnings)
                 for i, r in enumerate(obj["rules"])]
    elif "id" in obj:
        ctl = dict(obj.get("controller", {})) \
            if isinstance(obj.get("controller", {}), dict) else None
        if ctl is None or "policy" in ctl:
            raise ConfigError("%s: controller: expected an object of rule "
                              "fields (no 'policy': the file is the policy)"
                              % path)
        # The bare policy file's "controller" object also carries the
        # configuration-wide keys that name switches and bounds.
        extra = {k: ctl.pop(k) for k in (SWITCHES_KEY, BOUNDS_KEY)
                 if k in ctl}
        rules = [_parse_rule(path, 0, dict(ctl, name=ctl.get("name", "panda")),
                             base, cookie, files, warnings,
                             inline_policy=(obj, path))]
        obj = dict(obj, **extra)
    else:
        raise ConfigError("%s: neither a controller configuration (\"rules\")"
                          " nor a policy file (\"id\")" % path)
    _check_conflicts(path, rules)
    allow = switches_mod.parse(path, obj.get(SWITCHES_KEY), rules, base,
                               files, require_certificates)
    bounds = autotune.parse_bounds(path, obj.get(BOUNDS_KEY), rules)
    return Config(path, cookie, rules, files, warnings, confirm, allow,
                  bounds)


def load_checked(path, ofctl=None, require_certificates=False):
    """load(), then, with 'ofctl' (the patched ovs-ofctl), every policy
    through the switch build's own decoder (check_with_ofctl).  Raises
    ConfigError, and only ConfigError, for anything that makes the files
    unusable."""
    files = [os.path.abspath(path)]
    try:
        cfg = load(path, require_certificates)
        files = cfg.files
        if ofctl:
            check_with_ofctl(cfg, ofctl)
        return cfg
    except ConfigError as e:
        e.files = e.files or list(files)
        raise
    except Exception as e:  # a case the checks above missed: still clear
        raise ConfigError("%s: cannot be used: %s: %s"
                          % (path, type(e).__name__, e), files)


def check_transition(old, new, dpids):
    """Refuses (ConfigError) a change from configuration 'old' to 'new'
    that leaves one of the bridges 'dpids' (the connected ones) without the
    catch-all rule it had, unless 'new' confirms it (CONFIRM_KEY)."""
    if old is None or new.confirm_no_forwarding:
        return
    lost = []
    for dpid in sorted(dpids):
        had = [r for r in old.rules_for(dpid) if r.is_catch_all()]
        has = {r.table for r in new.rules_for(dpid) if r.is_catch_all()}
        for r in had:
            if r.table not in has:
                lost.append("bridge 0x%016x loses rule '%s' (table %d, "
                            "match {})" % (dpid, r.name, r.table))
    if lost:
        raise ConfigError(
            "%s: would remove forwarding: %s; on a fail_mode=secure bridge "
            "the traffic it matched then stops.  Keep a catch-all rule, or "
            "set \"%s\": true to mean it" % (new.path, "; ".join(lost),
                                               CONFIRM_KEY), new.files)


def _check_conflicts(path, rules):
    names, slots, ids = {}, {}, {}
    for r in rules:
        if r.name in names:
            raise ConfigError("%s: two rules are named '%s'" % (path, r.name))
        names[r.name] = r
        if r.cookie in {x.cookie for x in names.values() if x is not r}:
            raise ConfigError("%s: rule names '%s' and another hash to the "
                              "same cookie; rename one" % (path, r.name))
        key = (r.table, r.priority,
               json.dumps(r.match, sort_keys=True, default=str))
        for other in slots.get(key, []):
            if r.dpids is None or other.dpids is None \
                    or r.dpids & other.dpids:
                raise ConfigError(
                    "%s: rules '%s' and '%s' install the same flow (table, "
                    "priority and match) on the same bridge"
                    % (path, other.name, r.name))
        slots.setdefault(key, []).append(r)
        if r.policy is None:
            continue
        prev = ids.get(r.policy.id)
        if prev is not None and prev.policy != r.policy:
            raise ConfigError(
                "%s: policy id %d has two different definitions (%s in "
                "rule '%s', %s in rule '%s'); connection counters are kept "
                "per id, so one id must mean one policy"
                % (path, r.policy.id, prev.policy.text(), prev.name,
                   r.policy.text(), r.name))
        ids[r.policy.id] = r


def file_signature(files):
    """(path, mtime_ns, size) of each file, for change detection."""
    sig = []
    for f in files:
        try:
            st = os.stat(f)
            sig.append((f, st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            sig.append((f, None, None, None))
    return tuple(sig)


def check_with_ofctl(config, ofctl):
    """Runs lib/panda's policy validation (inside the patched ovs-ofctl's
    action decoder) over each rule's encoded action.  Raises ConfigError
    with ovs-ofctl's message when one is refused."""
    seen = set()
    for r in config.rules:
        if r.policy is None or r.policy in seen:
            continue
        seen.add(r.policy)
        hexa = r.policy.nx_action().hex()
        try:
            res = subprocess.run([ofctl, "parse-actions", "OpenFlow13"],
                                 input=hexa + "\n", capture_output=True,
                                 text=True, timeout=OFCTL_TIMEOUT)
        except OSError as e:
            raise ConfigError("--ofctl %s: cannot run: %s" % (ofctl, e))
        except subprocess.TimeoutExpired:
            raise ConfigError("--ofctl %s: no answer within %g s while "
                              "checking policy id %d from %s"
                              % (ofctl, OFCTL_TIMEOUT, r.policy.id,
                                 r.policy_src))
        out = res.stdout.strip()
        if "BAD_VENDOR_TYPE" in out or "BAD_EXP_TYPE" in out:
            raise ConfigError(
                "--ofctl %s does not know the panda action (not built with "
                "ovs-patches/panda.series?); cannot check policies with it"
                % ofctl)
        if res.returncode != 0 or "bad OpenFlow13 actions" in out \
                or "panda(" not in out:
            detail = [l.split("|")[-1].strip() for l in
                      res.stderr.splitlines() if "panda" in l]
            raise ConfigError(
                "%s: policy id %d refused by lib/panda: %s" % (
                    r.policy_src, r.policy.id,
                    "; ".join(detail) or out or res.stderr.strip()))


class ConfigWatcher(object):
    """The configuration in force and its reloads, without os-ken (the
    controller's app drives it).  A version of the files (their
    signature) is tried once: a refused one is reported once and tried
    again only when a file changes or a reload is forced (SIGHUP, REST
    /sync).  The files watched are the configuration's and, after a
    refusal, those the refused attempt read (a newly named policy file is
    watched for its fix)."""

    def __init__(self, path, ofctl=None, log=None,
                 require_certificates=False):
        self.path = path
        self.ofctl = ofctl
        self.require_certificates = require_certificates
        self.log = log or logging.getLogger("panda_controller")
        self.config = None
        self.generation = 0
        self.error = None
        self.loaded = None
        self.tried = None           # signature of the last attempt
        self.tried_files = [path]

    def watched_files(self):
        files = list(self.config.files) if self.config else []
        return files + [f for f in self.tried_files if f not in files]

    def changed(self):
        return file_signature(self.watched_files()) != self.tried

    def reload(self, reason, dpids=(), force=False):
        """Loads the files if they changed (or 'force').  Returns True when
        a new generation is in force; False when nothing changed or the
        files were refused (the previous generation stays)."""
        sig = file_signature(self.watched_files())
        if not force and sig == self.tried:
            return False
        try:
            cfg = load_checked(self.path, self.ofctl,
                               self.require_certificates)
            check_transition(self.config, cfg, dpids)
        except ConfigError as e:
            self.tried_files = e.files or [self.path]
            self.tried = file_signature(self.watched_files())
            self.error = str(e)
            self.log.error("refusing configuration (%s): %s; %s", reason, e,
                           "generation %d stays in force" % self.generation
                           if self.config else "no policy installed by "
                           "this controller yet")
            return False
        self.tried_files = cfg.files
        self.tried = file_signature(cfg.files)
        for w in cfg.warnings:
            self.log.warning("%s", w)
        if not cfg.rules or cfg.confirm_no_forwarding:
            self.log.warning("%s: %s is set: bridges may be left without "
                             "forwarding", cfg.path, CONFIRM_KEY)
        if cfg.switches.any:
            self.log.warning("%s: \"%s\": \"*\": any peer that reaches the "
                             "OpenFlow port is accepted as a switch",
                             cfg.path, SWITCHES_KEY)
        self.error = None
        self.config = cfg
        self.generation += 1
        self.loaded = time.time()
        self.log.info("configuration generation %d (%s): %d rule(s): %s",
                      self.generation, reason, len(cfg.rules),
                      "; ".join("%s: %s" % (r.name, r.policy.text()
                                            if r.policy else "no policy")
                                for r in cfg.rules))
        return True

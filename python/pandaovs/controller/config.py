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
"controller" object in it can override those rule fields.

Policy files: panda-model's JSON, read by pandaovs.policy.Policy.from_json:
the structured fields are authoritative -- "id", "kind", "threshold",
"weights" ([[above, weight], ...], weight a number with up to two
decimals), "thresholds", "dscp", "queues", and optionally "ctl_level",
"floor", "idle_reset".  "action" (the policy text panda-model prints) is
compared with them and a mismatch is reported as a warning.

Validation (the decision): everything is checked here, when the files are
read, before anything is pushed -- the JSON structure (types, counts, the
value ranges the fixed 160-byte action can carry) and lib/panda's policy
rules (thresholds strictly ascending, weights >= 1 and non-decreasing,
t0 >= T, ctl_level < K, floor <= 0, PIAS with T = 0, ...), which Policy
applies with lib/panda's own messages (tests/vectors/policies.txt keeps the
two in step), e.g. "policy.json: policy id 7: thresholds: not strictly
ascending (50000 after 500000)".  The switch applies the same rules when it
decodes the action; each switch gets its changes in one atomic OpenFlow
bundle, so a switch that refuses anything keeps the previous policy
entirely.  With --ofctl the controller also runs the encoded actions
through the patched 'ovs-ofctl parse-actions', a cross-check against the
switch's own build (e.g. a switch of another version).

Nothing here needs os-ken except checking the names and values of OpenFlow
match fields ("match"), which uses os-ken's own OFPMatch.
"""

import json
import os
import re
import subprocess
import zlib

from ..policy import Policy, PolicyError, json_int

DEFAULT_COOKIE = 0x50414e4400000000     # "PAND"
COOKIE_PREFIX_MASK = 0xffffffff00000000
U16, U64 = 0xffff, 0xffffffffffffffff
RULE_KEYS = {"name", "dpids", "table", "priority", "match", "policy",
             "next"}


# How 'panda_controller.py run' hands its options to the os-ken
# application (os-ken's manager starts the app without arguments).
RUN_ENV = {
    "config": "PANDA_CONTROLLER_CONFIG",
    "rest": "PANDA_CONTROLLER_REST",
    "ofctl": "PANDA_CONTROLLER_OFCTL",
    "poll": "PANDA_CONTROLLER_POLL",
    "audit": "PANDA_CONTROLLER_AUDIT",
    "logfmt": "PANDA_CONTROLLER_LOG_FORMAT",
}


class ConfigError(Exception):
    """A configuration or policy file that cannot be used."""


def split_hostport(s, default_port):
    """'HOST:PORT', '[v6]:PORT' or 'HOST' -> (host, port)."""
    host, _, port = s.rpartition(":")
    if not host:
        host, port = s, default_port
    return host.strip("[]"), int(port)


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
    def __init__(self, path, cookie, rules, files, warnings):
        self.path = path
        self.cookie = cookie
        self.rules = rules
        self.files = files          # every file read, for change detection
        self.warnings = warnings

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


def _read_json(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ConfigError("%s: cannot read: %s" % (path, e.strerror))
    try:
        return json.loads(text)
    except ValueError as e:
        raise ConfigError("%s: not valid JSON: %s" % (path, e))


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


def load(path):
    """Reads and checks a configuration (or a bare policy file).  Raises
    ConfigError with a message naming the file and field."""
    path = os.path.abspath(path)
    base = os.path.dirname(path)
    files = [path]
    warnings = []
    obj = _read_json(path)
    if not isinstance(obj, dict):
        raise ConfigError("%s: expected a JSON object" % path)
    cookie = DEFAULT_COOKIE
    if "cookie" in obj:
        c = obj["cookie"]
        try:
            cookie = int(c, 0) if isinstance(c, str) else int(c)
        except (TypeError, ValueError):
            raise ConfigError("%s: cookie: %s is not an integer"
                              % (path, json.dumps(c)))
        if not 0 < cookie <= U64 or cookie & ~COOKIE_PREFIX_MASK:
            raise ConfigError("%s: cookie: 0x%x must be nonzero in its "
                              "upper 32 bits and zero in the lower 32 (they "
                              "name the rule)" % (path, cookie))
    if "rules" in obj:
        unknown = sorted(set(obj) - {"cookie", "rules", "comment"})
        if unknown:
            raise ConfigError("%s: unknown key%s %s (expected cookie, rules)"
                              % (path, "s" if len(unknown) > 1 else "",
                                 ", ".join(unknown)))
        if not isinstance(obj["rules"], list):
            raise ConfigError("%s: rules: expected a list" % path)
        rules = [_parse_rule(path, i, r, base, cookie, files, warnings)
                 for i, r in enumerate(obj["rules"])]
    elif "id" in obj:
        ctl = obj.get("controller", {})
        if not isinstance(ctl, dict) or "policy" in ctl:
            raise ConfigError("%s: controller: expected an object of rule "
                              "fields (no 'policy': the file is the policy)"
                              % path)
        rules = [_parse_rule(path, 0, dict(ctl, name=ctl.get("name", "panda")),
                             base, cookie, files, warnings,
                             inline_policy=(obj, path))]
    else:
        raise ConfigError("%s: neither a controller configuration (\"rules\")"
                          " nor a policy file (\"id\")" % path)
    _check_conflicts(path, rules)
    return Config(path, cookie, rules, files, warnings)


def load_checked(path, ofctl=None):
    """load(), then, with 'ofctl' (the patched ovs-ofctl), every policy
    through the switch build's own decoder (check_with_ofctl)."""
    cfg = load(path)
    if ofctl:
        check_with_ofctl(cfg, ofctl)
    return cfg


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
                                 text=True, timeout=30)
        except OSError as e:
            raise ConfigError("--ofctl %s: cannot run: %s" % (ofctl, e))
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

"""Which switches the controller accepts: the configuration's "switches".

A peer that reaches the controller's OpenFlow port presents a datapath id
of its own choosing.  Accepting any id lets any peer take part: it gets a
session and the flows, answers bundles (a refusal used to roll a new
configuration back on every bridge) and serves histograms to auto-tune.
So the controller accepts only the bridges its configuration names:

    "switches": [
      "0xb1",
      {"dpid": "00:00:00:00:00:00:00:b2", "name": "hv2-br0",
       "certificate": "pki/hv2-cert.pem"},
      {"dpid": "0xb3", "certificate_sha256": "5f:0c:...:9a"}
    ]

- a datapath id (integer, "0x..." or "xx:...:xx"), or an object with
  "dpid", optionally "name" (for logs and status) and the switch's own
  certificate: "certificate" (a PEM file, relative to the configuration)
  or "certificate_sha256" (its SHA-256 fingerprint, hex, colons allowed);
- "*": any bridge that connects (the previous behaviour), accepted with a
  warning: an operator's explicit choice, e.g. on a loopback-only lab;
- absent: the bridges the rules name, when every rule names its bridges
  ("dpids" lists); a configuration with a rule for "*" (every bridge,
  the default) and no "switches" is refused, naming this key: which
  bridges "*" means must be said.

A rule's "dpids" list may only name allowed switches; "*" in a rule means
every allowed switch.

With --listen ssl: each switch presents a certificate that the switch CA
signed (os-ken checks it in the handshake); by default
(--ssl-switch-identity certificate) it must also be the certificate its
entry names, so that a switch cannot present another bridge's id: a
configuration with an entry without a certificate (or "*") is then
refused.  --ssl-switch-identity ca keeps the CA's word alone.

Pure Python (no os-ken): config.py parses, app.py asks admit() for every
connection.
"""

import hashlib
import hmac
import json
import os
import re
import ssl

KEY = "switches"
ENTRY_KEYS = {"dpid", "name", "certificate", "certificate_sha256"}
MAX_CERT_BYTES = 1 << 20
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class Switch(object):
    def __init__(self, dpid, name=None, fingerprint=None, cert_src=None):
        self.dpid = dpid
        self.name = name
        self.fingerprint = fingerprint      # SHA-256 of the DER, or None
        self.cert_src = cert_src

    def describe(self):
        return "0x%016x%s" % (self.dpid,
                              " (%s)" % self.name if self.name else "")

    def summary(self):
        return {"dpid": "0x%016x" % self.dpid, "name": self.name,
                "certificate_sha256": (self.fingerprint.hex()
                                       if self.fingerprint else None),
                "certificate": self.cert_src}


class AllowList(object):
    """The switches of a configuration: 'any' (switches "*") or the
    entries, by datapath id; 'source': where it came from ("switches",
    or "rules" when derived from the rules' dpids)."""

    def __init__(self, switches, any_=False, source=KEY):
        self.switches = switches
        self.any = any_
        self.source = source

    def allows(self, dpid):
        return self.any or dpid in self.switches

    def name_of(self, dpid):
        s = self.switches.get(dpid)
        return s.describe() if s else "0x%016x" % dpid

    def admit(self, dpid, peer_der=None, tls=False, by_certificate=True):
        """None if the peer presenting 'dpid' (with the TLS certificate
        'peer_der', DER bytes, or None) is one of the switches; else the
        reason it is refused."""
        if not self.allows(dpid):
            return ("datapath id 0x%016x is not among the configuration's "
                    "switches%s" % (dpid, " (from the rules' dpids)"
                                    if self.source == "rules" else ""))
        if not (tls and by_certificate):
            return None
        s = self.switches.get(dpid)
        if s is None or s.fingerprint is None:
            return ("no certificate is bound to datapath id 0x%016x in the "
                    "configuration's switches, and --ssl-switch-identity is "
                    "certificate" % dpid)
        if not peer_der:
            return "no client certificate presented"
        got = hashlib.sha256(peer_der).digest()
        if not hmac.compare_digest(got, s.fingerprint):
            return ("its certificate (SHA-256 %s) is not the one bound to "
                    "%s" % (got.hex(), s.describe()))
        return None

    def summary(self):
        if self.any:
            return "*"
        return [self.switches[d].summary() for d in sorted(self.switches)]


def fingerprint_of_pem(data, src):
    """SHA-256 of the DER of the first certificate in PEM 'data'."""
    from .config import ConfigError
    try:
        text = data.decode("ascii")
        begin = text.index("-----BEGIN CERTIFICATE-----")
        end = text.index("-----END CERTIFICATE-----", begin)
        der = ssl.PEM_cert_to_DER_cert(
            text[begin:end + len("-----END CERTIFICATE-----")])
    except (UnicodeDecodeError, ValueError) as e:
        raise ConfigError("%s: not a PEM certificate (%s)" % (src, e))
    return hashlib.sha256(der).digest()


def _fingerprint_text(where, v):
    from .config import ConfigError
    s = v.replace(":", "").strip().lower() if isinstance(v, str) else None
    if not s or not _HEX64.match(s):
        raise ConfigError("%s: certificate_sha256: %s is not a SHA-256 "
                          "fingerprint (64 hex digits, colons allowed)"
                          % (where, json.dumps(v)))
    return bytes.fromhex(s)


def _entry(src, i, obj, base_dir, files):
    from .config import ConfigError, parse_dpid, read_file
    where = "%s: %s[%d]" % (src, KEY, i)
    if not isinstance(obj, dict):
        return Switch(parse_dpid(where, obj))
    unknown = sorted(set(obj) - ENTRY_KEYS)
    if unknown:
        raise ConfigError("%s: unknown key%s %s (%s)" % (
            where, "s" if len(unknown) > 1 else "", ", ".join(unknown),
            ", ".join(sorted(ENTRY_KEYS))))
    if "dpid" not in obj:
        raise ConfigError("%s: dpid: missing" % where)
    dpid = parse_dpid(where, obj["dpid"])
    name = obj.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise ConfigError("%s: name: expected a non-empty string" % where)
    if "certificate" in obj and "certificate_sha256" in obj:
        raise ConfigError("%s: certificate and certificate_sha256: give one"
                          % where)
    fp = cert_src = None
    if "certificate" in obj:
        c = obj["certificate"]
        if not isinstance(c, str) or not c:
            raise ConfigError("%s: certificate: expected a file name"
                              % where)
        cert_src = os.path.normpath(os.path.join(base_dir, c))
        files.append(cert_src)
        fp = fingerprint_of_pem(read_file(cert_src, MAX_CERT_BYTES,
                                          "certificate"), cert_src)
    elif "certificate_sha256" in obj:
        fp = _fingerprint_text(where, obj["certificate_sha256"])
    return Switch(dpid, name, fp, cert_src)


def parse(src, obj, rules, base_dir, files, require_certificates=False):
    """The allow-list of a configuration: 'obj' is its "switches" value
    (None: absent), 'rules' its parsed rules.  Raises ConfigError."""
    from .config import ConfigError
    if obj == "*":
        allow = AllowList({}, any_=True)
    elif obj is None:
        star = [r.name for r in rules if r.dpids is None]
        if star or not rules:
            raise ConfigError(
                "%s: %s: missing, and %s: list the bridges allowed to "
                "connect (\"%s\": [datapath ids], with their certificates "
                "over TLS), or \"%s\": \"*\" to accept any peer that "
                "reaches the controller's port" % (
                    src, KEY, "rule%s %s %s for every bridge (\"dpids\": "
                    "\"*\")" % ("s" if len(star) > 1 else "",
                                ", ".join("'%s'" % n for n in star),
                                "are" if len(star) > 1 else "is")
                    if star else "no rule names a bridge", KEY, KEY))
        named = set()
        for r in rules:
            named |= r.dpids
        allow = AllowList({d: Switch(d) for d in named}, source="rules")
    elif isinstance(obj, list) and obj:
        entries = {}
        for i, e in enumerate(obj):
            s = _entry(src, i, e, base_dir, files)
            if s.dpid in entries:
                raise ConfigError("%s: %s[%d]: datapath id 0x%016x listed "
                                  "twice" % (src, KEY, i, s.dpid))
            entries[s.dpid] = s
        allow = AllowList(entries)
    else:
        raise ConfigError("%s: %s: \"*\" or a non-empty list of datapath ids "
                          "or {\"dpid\": ..., \"certificate\": ...} objects, "
                          "got %s" % (src, KEY, json.dumps(obj)[:80]))
    if not allow.any:
        for r in rules:
            extra = sorted((r.dpids or set()) - set(allow.switches))
            if extra:
                raise ConfigError(
                    "%s: rule '%s': dpids %s not among the configuration's "
                    "%s" % (src, r.name, ", ".join("0x%x" % d for d in extra),
                            KEY))
    if require_certificates:
        if allow.any:
            raise ConfigError(
                "%s: %s: \"*\" cannot bind certificates to switches, and "
                "--listen ssl: with --ssl-switch-identity certificate needs "
                "each switch's own (or --ssl-switch-identity ca)" % (src, KEY))
        unbound = [s.describe() for _, s in sorted(allow.switches.items())
                   if s.fingerprint is None]
        if unbound:
            raise ConfigError(
                "%s: %s: no certificate bound to %s: with --listen ssl: and "
                "--ssl-switch-identity certificate each switch names its own "
                "(\"certificate\": its PEM file, or \"certificate_sha256\")"
                % (src, KEY, ", ".join(unbound)))
    return allow

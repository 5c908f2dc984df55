"""The controller's configuration loading and flow diffing, without os-ken
and without a switch (the system test is tests/system/test_controller.py).
"""

import json
import os
import subprocess
import sys
import time

import pytest

from pandaovs import paths
from pandaovs.controller import config, diff
from pandaovs.policy import Policy


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)
    return str(path)


def test_imports_without_os_ken():
    code = ("import sys, pandaovs.controller.config, "
            "pandaovs.controller.diff, pandaovs.controller.cli\n"
            "assert not [m for m in sys.modules if m.startswith('os_ken')]")
    r = subprocess.run([sys.executable, "-c", code], env=paths.module_env(),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_policy_file_is_a_configuration(tmp_path):
    p = write(tmp_path / "p.json", {"id": 4, "thresholds": [10, 20],
                                    "controller": {"priority": 7,
                                                   "switches": ["0xb1"]}})
    cfg = config.load(p)
    assert len(cfg.rules) == 1
    r = cfg.rules[0]
    assert (r.name, r.table, r.priority, r.match, r.next) == (
        "panda", 0, 7, {}, ("normal",))
    assert r.policy == Policy.from_text("id=4,thresholds=10/20")
    assert r.cookie >> 32 == config.DEFAULT_COOKIE >> 32
    assert cfg.files == [p]
    assert cfg.summary()[0]["policy"] == "id=4,threshold=0,thresholds=" \
        "10/20,dscp=1/2/3,queues=0/1/2"
    assert cfg.switches.allows(0xb1) and not cfg.switches.allows(0xb2)


def test_rules_files_and_conflicts(tmp_path):
    write(tmp_path / "a.json", {"id": 1, "thresholds": [100]})
    cfg_path = tmp_path / "c.json"
    write(cfg_path, {"cookie": "0x1234567800000000", "switches": "*",
                     "rules": [
        {"name": "a", "policy": "a.json", "dpids": ["0xb1", 5]},
        {"name": "b", "priority": 5, "policy": None, "next": "goto_table:3"},
        {"name": "c", "priority": 6, "policy": {"id": 2, "kind": "pias"}}]})
    cfg = config.load(str(cfg_path))
    a, b, c = cfg.rules
    assert a.dpids == frozenset({0xb1, 5}) and a.applies_to(5)
    assert not a.applies_to(6) and b.applies_to(6)
    assert b.policy is None and b.next == ("goto_table", 3)
    assert c.policy.kind == "pias"
    assert {r.cookie >> 32 for r in cfg.rules} == {0x12345678}
    assert len({r.cookie for r in cfg.rules}) == 3
    assert str(tmp_path / "a.json") in cfg.files

    # One id, two policies: refused (counters are kept per id).
    write(cfg_path, {"switches": "*", "rules": [
        {"name": "a", "policy": {"id": 1, "thresholds": [100]}},
        {"name": "b", "priority": 5, "policy": {"id": 1}}]})
    with pytest.raises(config.ConfigError, match="policy id 1 has two"):
        config.load(str(cfg_path))
    # Two rules, one flow.
    write(cfg_path, {"switches": "*",
                     "rules": [{"name": "a", "policy": None},
                               {"name": "b", "policy": None}]})
    with pytest.raises(config.ConfigError, match="install the same flow"):
        config.load(str(cfg_path))


@pytest.mark.parametrize("obj,msg", [
    ({"rules": [{"name": "a"}]}, "policy: missing"),
    ({"rules": [{"name": "a", "policy": None, "next": "drop"}]},
     "next: \"drop\" is not"),
    ({"rules": [{"name": "a", "policy": None, "dpids": ["zz"]}]},
     "is not a datapath id"),
    ({"rules": [{"name": "a", "policy": None, "table": 255}]},
     "table: 255 out of range"),
    ({"rules": [{"name": "a", "policy": {"id": 1, "floor": 5}}]},
     "policy id 1: floor: 5 must be <= 0"),
    ({"rules": [], "cookie": "0x1"}, "must be nonzero in its upper"),
    ({"rules": [], "extra": 1}, "unknown key extra"),
    ({"thresholds": [1]}, "neither a controller configuration"),
])
def test_refusals_name_the_file_and_field(tmp_path, obj, msg):
    p = write(tmp_path / "c.json", obj)
    with pytest.raises(config.ConfigError) as e:
        config.load(p)
    assert msg in str(e.value) and p in str(e.value)


def test_file_signature_sees_changes(tmp_path):
    p = write(tmp_path / "p.json", {"id": 1})
    before = config.file_signature([p])
    write(tmp_path / "p.json.new", {"id": 2})
    os.replace(str(tmp_path / "p.json.new"), p)
    assert config.file_signature([p]) != before
    os.unlink(p)
    assert config.file_signature([p]) == ((p, None, None, None),)


def fake_ofctl(tmp_path, stdout, stderr="", rc=0):
    exe = tmp_path / "ofctl"
    exe.write_text("#!/bin/sh\ncat >/dev/null\nprintf '%%s\\n' '%s'\n"
                   "printf '%%s\\n' '%s' >&2\nexit %d\n"
                   % (stdout, stderr, rc))
    exe.chmod(0o755)
    return str(exe)


def test_check_with_ofctl(tmp_path):
    """--ofctl: the switch build's verdict on each encoded action."""
    cfg = config.load(write(tmp_path / "p.json", {
        "id": 3, "controller": {"switches": "*"}}))
    config.check_with_ofctl(cfg, fake_ofctl(tmp_path, "actions=panda(id=3)"))
    with pytest.raises(config.ConfigError,
                       match="policy id 3 refused by lib/panda: panda: "
                       "kind: must be"):
        config.check_with_ofctl(cfg, fake_ofctl(
            tmp_path, "bad OpenFlow13 actions: OFPBAC_BAD_ARGUMENT",
            "x|ofp_actions|WARN|panda: kind: must be 0 (panda) or 1 (pias)"))
    with pytest.raises(config.ConfigError, match="does not know the panda"):
        config.check_with_ofctl(cfg, fake_ofctl(
            tmp_path, "bad OpenFlow13 actions: OFPBAC_BAD_EXP_TYPE"))
    with pytest.raises(config.ConfigError, match="cannot run"):
        config.check_with_ofctl(cfg, str(tmp_path / "missing"))


class Flow:
    def __init__(self, key, cookie, ibytes):
        self.key, self.cookie, self.ibytes = key, cookie, ibytes


def test_plan():
    """keep identical flows, modify changed instructions, delete strangers
    and duplicates, add what is missing."""
    want = {k: Flow(k, c, i) for k, c, i in (
        ((0, 100, "m1"), 1, b"A"), ((0, 100, "m2"), 2, b"B"),
        ((0, 5, "m3"), 3, b"C"), ((1, 5, "m4"), 4, b"D"))}
    have = [Flow((0, 100, "m1"), 1, b"A"),       # keep
            Flow((0, 100, "m1"), 1, b"A"),       # duplicate: delete
            Flow((0, 100, "m2"), 2, b"X"),       # modify
            Flow((0, 5, "m3"), 9, b"C"),         # other rule's cookie
            Flow((2, 1, "m9"), 5, b"Z")]         # stale: delete
    keep, modify, delete, add = diff.plan(want, have)
    assert [d.key for d in keep] == [(0, 100, "m1")]
    assert [d.key for d in modify] == [(0, 100, "m2")]
    assert delete == [have[1], have[3], have[4]]
    assert sorted(d.key for d in add) == [(0, 5, "m3"), (1, 5, "m4")]
    assert diff.plan(want, [want[k] for k in want])[1:] == ([], [], [])


def oxm(*tlvs):
    body = b"".join(tlvs)
    length = 4 + len(body)
    return (b"\x00\x01" + length.to_bytes(2, "big") + body
            + b"\0" * ((8 - length % 8) % 8))


def tlv(field, payload, hasmask=False):
    return (b"\x80\x00" + bytes([field << 1 | hasmask, len(payload)])
            + payload)


def test_oxm_key_is_canonical():
    eth = tlv(5, b"\x08\x00")
    proto = tlv(10, b"\x06")
    a = diff.oxm_key(oxm(eth, proto))
    assert a == diff.oxm_key(oxm(proto, eth))                  # order
    # A full mask is no mask; bits outside a mask do not count; an
    # all-zero mask is no field.
    full = tlv(11, b"\x0a\x00\x00\x01" + b"\xff" * 4, True)
    assert diff.oxm_key(oxm(full)) == diff.oxm_key(
        oxm(tlv(11, b"\x0a\x00\x00\x01")))
    assert diff.oxm_key(oxm(tlv(11, b"\x0a\x00\x00\x01\xff\xff\xff\x00",
                                True))) == \
        diff.oxm_key(oxm(tlv(11, b"\x0a\x00\x00\x07\xff\xff\xff\x00", True)))
    assert diff.oxm_key(oxm(eth, tlv(11, b"\x0a\0\0\x01\0\0\0\0", True))) \
        == diff.oxm_key(oxm(eth))
    assert a != diff.oxm_key(oxm(eth))


# ---- Forwarding: a configuration must not silently remove it. ----

def test_empty_rules_need_confirmation(tmp_path):
    p = write(tmp_path / "c.json", {"rules": []})
    with pytest.raises(config.ConfigError,
                       match="rules: empty: this would delete every flow.*"
                             "confirm_no_forwarding"):
        config.load(p)
    write(p, {"rules": [], "confirm_no_forwarding": True, "switches": "*"})
    cfg = config.load(p)
    assert cfg.rules == [] and cfg.confirm_no_forwarding
    write(p, {"rules": [], "confirm_no_forwarding": "yes"})
    with pytest.raises(config.ConfigError, match="expected true or false"):
        config.load(p)


def _cfg(tmp_path, rules, **top):
    return config.load(write(tmp_path / "c.json", dict(rules=rules,
                                                       switches=[1, 2],
                                                       **top)))


def test_transition_that_drops_a_catch_all_is_refused(tmp_path):
    panda = {"name": "tcp", "match": {}, "policy": {"id": 1}}
    default = {"name": "default", "priority": 0, "policy": None}
    old = _cfg(tmp_path, [dict(panda, match={"eth_type": 2048}), default])
    # Same catch-all, other policy elsewhere: fine.
    config.check_transition(old, _cfg(tmp_path, [default]), [1, 2])
    # No catch-all any more for bridge 2.
    new = _cfg(tmp_path, [dict(default, dpids=[1])])
    with pytest.raises(config.ConfigError,
                       match="would remove forwarding: bridge "
                             "0x0000000000000002 loses rule 'default' "
                             r"\(table 0, match \{\}\)"):
        config.check_transition(old, new, [1, 2])
    # Bridges not connected are the sync check's business.
    config.check_transition(old, new, [1])
    # Confirmed.
    new = _cfg(tmp_path, [dict(default, dpids=[1])],
               confirm_no_forwarding=True)
    config.check_transition(old, new, [1, 2])
    # First configuration: nothing to lose.
    config.check_transition(None, new, [1, 2])


class _Flow:
    def __init__(self, table, match=()):
        self.key = (table, 0, match)


def test_plan_that_deletes_the_last_catch_all():
    catch0, catch1 = _Flow(0), _Flow(1)
    tcp = _Flow(0, ((0x8000, 10, b"\x08\x00"),))
    assert diff.forwarding_removed([], [], [catch0, tcp], []) == [catch0]
    # Replaced (another priority or cookie) in the same table: fine.
    assert diff.forwarding_removed([], [], [catch0], [_Flow(0)]) == []
    assert diff.forwarding_removed([_Flow(0)], [], [catch0], []) == []
    # A catch-all in another table does not forward table 0's traffic.
    assert diff.forwarding_removed([catch1], [], [catch0], []) == [catch0]
    assert diff.forwarding_removed([], [], [tcp], []) == []


# ---- Whatever is in the files: ConfigError, never another exception. ----

@pytest.mark.parametrize("content, msg", [
    (b'{"id": 1, "weights": [[1460, NaN]]}',
     "not valid JSON: NaN is not a number in JSON"),
    (b'{"cookie": Infinity, "rules": []}',
     "not valid JSON: Infinity is not a number in JSON"),
    (b'{"id": 1, "threshold": 1e999}',
     "not valid JSON: number 1e999 is beyond a double's range"),
    (b'{"id": 1, "comment": "\xff\xfe"}',
     r"not UTF-8 text \(byte 0xff at offset 22\)"),
    (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    (b'{"cookie": 1.5e19, "rules": []}', "cookie: 1.5e\\+19 is not an"),
    (b'{"cookie": true, "rules": []}', "cookie: true is not an integer"),
    (b'{"id": 1, "thresholds": [' + b"9" * 5000 + b"]}", "not valid JSON"),
])
def test_malformed_files_give_config_errors(tmp_path, content, msg):
    p = tmp_path / "c.json"
    p.write_bytes(content)
    with pytest.raises(config.ConfigError, match=msg):
        config.load_checked(str(p))


def test_unexpected_exception_becomes_config_error(tmp_path, monkeypatch):
    p = write(tmp_path / "c.json", {"id": 1})

    def broken(obj, src=""):
        raise KeyError("boom")
    monkeypatch.setattr(config, "parse_policy", broken)
    with pytest.raises(config.ConfigError,
                       match="c.json: cannot be used: KeyError: 'boom'"):
        config.load_checked(p)


def test_ofctl_that_hangs(tmp_path, monkeypatch):
    ofctl = tmp_path / "ovs-ofctl"
    ofctl.write_text("#!/bin/sh\nexec sleep 60\n")
    ofctl.chmod(0o755)
    monkeypatch.setattr(config, "OFCTL_TIMEOUT", 0.3)
    p = write(tmp_path / "c.json", {"id": 3,
                                    "controller": {"switches": "*"}})
    with pytest.raises(config.ConfigError,
                       match="--ofctl .*: no answer within 0.3 s while "
                             "checking policy id 3"):
        config.load_checked(p, str(ofctl))


def test_watcher_reports_a_bad_version_once(tmp_path, monkeypatch, caplog):
    """A refused version of the files is tried (and logged) once, however
    often the watcher polls; a fix of a policy file that only the refused
    configuration names is noticed."""
    good = write(tmp_path / "p1.json", {"id": 1})
    cfg = write(tmp_path / "c.json", {"switches": "*", "rules": [
        {"name": "a", "policy": "p1.json"}]})
    calls = []
    real = config.load_checked

    def counting(*a, **kw):
        calls.append(a)
        return real(*a, **kw)
    monkeypatch.setattr(config, "load_checked", counting)
    w = config.ConfigWatcher(cfg)
    assert w.reload("startup", force=True) and w.generation == 1
    assert good in w.watched_files()
    # The configuration now names p2.json, which is broken.
    (tmp_path / "p2.json").write_bytes(b'{"id": 2, "floor": NaN}')
    time.sleep(0.01)
    write(cfg, {"switches": "*",
                "rules": [{"name": "a", "policy": "p2.json"}]})
    caplog.clear()
    for _ in range(5):
        if w.changed():
            assert not w.reload("file changed")
    assert len(calls) == 2
    assert w.generation == 1 and "NaN is not a number" in w.error
    assert len([r for r in caplog.records
                if "refusing configuration" in r.getMessage()]) == 1
    # Fixing p2.json (not a file of the configuration in force) is seen.
    write(tmp_path / "p2.json", {"id": 2})
    assert w.changed()
    assert w.reload("file changed") and w.generation == 2
    assert w.error is None and not w.changed()


# ---- Listening: addresses and the REST token. ----

@pytest.mark.parametrize("s, want", [
    ("tcp:127.0.0.1:6653", ("tcp", "127.0.0.1", 6653)),
    ("127.0.0.1:7000", ("tcp", "127.0.0.1", 7000)),
    ("ssl:0.0.0.0:6653", ("ssl", "0.0.0.0", 6653)),
    ("ssl:[::1]:6653", ("ssl", "::1", 6653)),
    ("6654", ("tcp", "127.0.0.1", 6654)),
])
def test_parse_listen(s, want):
    assert config.parse_listen(s) == want


def test_loopback():
    assert config.is_loopback("127.0.0.1") and config.is_loopback("::1")
    assert config.is_loopback("localhost") and config.is_loopback("127.1.2.3")
    assert not config.is_loopback("0.0.0.0")
    assert not config.is_loopback("10.0.0.1")
    assert not config.is_loopback("::")


def test_rest_token_file(tmp_path, caplog):
    p = str(tmp_path / "token")
    t = config.read_token(p, create=True)
    assert len(t) == 64 and os.stat(p).st_mode & 0o777 == 0o600
    assert config.read_token(p, create=True) == t     # kept
    with open(p, "w") as f:
        f.write("short\n")
    with pytest.raises(config.ConfigError, match="at least 16"):
        config.read_token(p)
    with pytest.raises(config.ConfigError, match="cannot read"):
        config.read_token(str(tmp_path / "missing"))
    with open(p, "w") as f:
        f.write("x" * 20 + "\n")
    os.chmod(p, 0o644)
    caplog.clear()
    assert config.read_token(p) == "x" * 20
    assert "readable by others" in caplog.text


def test_run_option_errors(tmp_path):
    """'run' refuses bad listening options before starting os-ken."""
    p = write(tmp_path / "c.json", {"id": 1, "controller": {"switches": "*"}})
    for argv, msg in [
            (["--listen", "ssl:127.0.0.1:6653"], "needs --private-key"),
            (["--listen", "tcp:127.0.0.1:6653", "--ca-cert", p],
             "need --listen ssl:"),
            (["--listen", "ssl:127.0.0.1:6653", "--private-key", p,
              "--certificate", p, "--ca-cert", p], "--certificate"),
            (["--rest", "127.0.0.1:8181"], "--rest needs --rest-token-file"),
            (["--listen", "udp:x:y"], "--listen")]:
        r = subprocess.run(
            [sys.executable, "-c", "import sys; from pandaovs.controller "
             "import cli; sys.exit(cli.main(sys.argv[1:]))", "run",
             "--config", p] + argv, env=paths.module_env(),
            capture_output=True, text=True, timeout=60)
        assert r.returncode != 0, (argv, r.stderr)
        assert msg in r.stderr, (argv, r.stderr)


# ---- Which switches: the allow-list (pandaovs.controller.switches). ----

def _pem(tmp_path, name, seed):
    """A self-signed certificate made with openssl (a switch's own)."""
    key, cert = tmp_path / (name + ".key"), tmp_path / (name + ".pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=%s-%d" % (name, seed)],
                   check=True, capture_output=True, timeout=120)
    return cert


def test_switches_allow_list(tmp_path):
    """Only the configuration's switches are admitted: listed, derived
    from rules that all name their bridges, or "*" on purpose; a rule for
    every bridge needs the list; a rule's dpids must be among them."""
    def load(obj):
        return config.load(write(tmp_path / "c.json", obj))
    rule = {"name": "a", "policy": None}
    cfg = load({"switches": ["0xb1", 5], "rules": [rule]})
    sw = cfg.switches
    assert sw.allows(0xb1) and sw.allows(5) and not sw.allows(6)
    assert sw.admit(6) == "datapath id 0x0000000000000006 is not among " \
        "the configuration's switches"
    assert sw.admit(0xb1) is None
    # Every rule names its bridges: those are the switches.
    cfg = load({"rules": [dict(rule, dpids=[1]),
                          {"name": "b", "dpids": [2], "policy": None}]})
    assert cfg.switches.allows(2) and not cfg.switches.allows(3)
    assert "from the rules' dpids" in cfg.switches.admit(3)
    # "*" on purpose: anyone.
    assert load({"switches": "*", "rules": [rule]}).switches.allows(12345)
    for obj, msg in [
            ({"rules": [rule]}, "switches: missing, and rule 'a' is for "
             "every bridge"),
            ({"rules": [], "confirm_no_forwarding": True},
             "no rule names a bridge"),
            ({"switches": [1], "rules": [dict(rule, dpids=[2])]},
             "rule 'a': dpids 0x2 not among the configuration's switches"),
            ({"switches": [], "rules": [rule]}, "a non-empty list"),
            ({"switches": [1, "0x1"], "rules": [rule]}, "listed twice"),
            ({"switches": [{"dpid": 1, "cert": "x"}], "rules": [rule]},
             "unknown key cert"),
            ({"switches": [{"name": "x"}], "rules": [rule]},
             "dpid: missing"),
            ({"switches": [{"dpid": 1, "certificate_sha256": "ab"}],
              "rules": [rule]}, "not a SHA-256 fingerprint")]:
        with pytest.raises(config.ConfigError) as e:
            load(obj)
        assert msg in str(e.value), (obj, str(e.value))


def test_switch_certificates(tmp_path):
    """Over TLS (certificate identity) a switch is admitted only with the
    certificate its entry binds: a file or a fingerprint; an entry without
    one, or "*", refuses the configuration."""
    import hashlib
    import ssl
    c1, c2 = _pem(tmp_path, "sw1", 1), _pem(tmp_path, "sw2", 2)
    der1 = ssl.PEM_cert_to_DER_cert(c1.read_text())
    der2 = ssl.PEM_cert_to_DER_cert(c2.read_text())
    fp2 = ":".join("%02X" % b for b in hashlib.sha256(der2).digest())
    obj = {"switches": [{"dpid": 1, "name": "hv1", "certificate": "sw1.pem"},
                        {"dpid": 2, "certificate_sha256": fp2}],
           "rules": [{"name": "a", "policy": None}]}
    p = write(tmp_path / "c.json", obj)
    cfg = config.load(p, require_certificates=True)
    sw = cfg.switches
    assert str(c1) in cfg.files         # watched: a new certificate reloads
    assert sw.admit(1, der1, tls=True) is None
    assert sw.admit(2, der2, tls=True) is None
    # Switch 2's certificate presenting switch 1's id: refused.
    why = sw.admit(1, der2, tls=True)
    assert "is not the one bound to 0x0000000000000001 (hv1)" in why
    assert sw.admit(1, None, tls=True) == "no client certificate presented"
    # --ssl-switch-identity ca: the CA's word (os-ken's check) is enough.
    assert sw.admit(1, der2, tls=True, by_certificate=False) is None
    assert sw.summary()[0]["name"] == "hv1"
    # Entries without certificates, or "*": refused over TLS.
    for switches, msg in [([1, {"dpid": 2, "certificate_sha256": fp2}],
                           "no certificate bound to 0x0000000000000001"),
                          ("*", "\"*\" cannot bind certificates")]:
        write(tmp_path / "c.json", dict(obj, switches=switches))
        with pytest.raises(config.ConfigError, match=msg):
            config.load(p, require_certificates=True)
        config.load(p)                  # fine without TLS
    write(tmp_path / "bad.pem", "not a certificate\n")
    write(tmp_path / "c.json", dict(obj, switches=[
        {"dpid": 1, "certificate": "bad.pem"}]))
    with pytest.raises(config.ConfigError, match="bad.pem: not a PEM "
                       "certificate"):
        config.load(p)


# ---- Bounded reads: no file makes the controller read without end. ----

def test_bounded_reads(tmp_path, monkeypatch):
    """A configuration or policy file is read only if it is a regular file
    of at most MAX_FILE_BYTES: a file over it (written here), a FIFO
    (refused without blocking on it) and a character device are refused
    naming the file.  /dev/null, not /dev/zero, so that a broken check
    reads nothing rather than for ever; the REST token file likewise."""
    monkeypatch.setattr(config, "MAX_FILE_BYTES", 1000)
    pol = tmp_path / "p.json"
    pol.write_text('{"id": 1, "comment": "%s"}' % ("x" * 1000))
    c = write(tmp_path / "c.json", {"switches": "*", "rules": [
        {"name": "a", "policy": "p.json"}]})
    with pytest.raises(config.ConfigError) as e:
        config.load_checked(c)
    assert "%s: 1024 bytes, above the limit of 1000 bytes for a " \
        "configuration or policy file" % pol in str(e.value)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(str(fifo))
    for path, kind in ((fifo, "a FIFO"), ("/dev/null",
                                          "a character device")):
        write(c, {"switches": "*", "rules": [
            {"name": "a", "policy": str(path)}]})
        t0 = time.monotonic()
        with pytest.raises(config.ConfigError) as e:
            config.load_checked(c)
        assert "%s: not a regular file (%s): refused" % (path, kind) \
            in str(e.value)
        assert time.monotonic() - t0 < 10
    with pytest.raises(config.ConfigError, match="not a regular file"):
        config.read_token(str(fifo))
    # The configuration itself.
    with pytest.raises(config.ConfigError, match="not a regular file"):
        config.load_checked("/dev/null")

"""The controller's configuration loading and flow diffing, without os-ken
and without a switch (the system test is tests/system/test_controller.py).
"""

import json
import os
import subprocess
import sys

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
                                    "controller": {"priority": 7}})
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


def test_rules_files_and_conflicts(tmp_path):
    write(tmp_path / "a.json", {"id": 1, "thresholds": [100]})
    cfg_path = tmp_path / "c.json"
    write(cfg_path, {"cookie": "0x1234567800000000", "rules": [
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
    write(cfg_path, {"rules": [
        {"name": "a", "policy": {"id": 1, "thresholds": [100]}},
        {"name": "b", "priority": 5, "policy": {"id": 1}}]})
    with pytest.raises(config.ConfigError, match="policy id 1 has two"):
        config.load(str(cfg_path))
    # Two rules, one flow.
    write(cfg_path, {"rules": [{"name": "a", "policy": None},
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
    cfg = config.load(write(tmp_path / "p.json", {"id": 3}))
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

"""pandaovs.policy.Policy: the shared vectors (tests/vectors/policies.txt),
the NX action layout, JSON, and the invariants of text and wire."""

import json

import pytest

from pandaovs.policy import (NX_ACTION_LEN, WIRE_LEN, Policy, PolicyError,
                             format_weight)

THESIS = ("id=1,threshold=1460,weights=1460:1/9000:2,"
          "thresholds=100000/1000000/10000000,dscp=46/26/18/0,"
          "queues=0/1/2/3")


def test_vector(policy_vector):
    v = policy_vector
    if "canonical" in v:
        p = Policy.from_text(v["text"])
        assert p.text() == v["canonical"]
        assert p.wire_body() == v["wire"]
        assert Policy.from_wire_body(v["wire"]) == p
        # The canonical text is a fixed point.
        assert Policy.from_text(v["canonical"]) == p
    elif "text" in v:
        with pytest.raises(PolicyError) as e:
            Policy.from_text(v["text"])
        assert str(e.value) == v["error"]
    else:
        with pytest.raises(PolicyError) as e:
            Policy.from_wire_body(v["wire"])
        assert str(e.value) == v["error"]


def test_nx_action_layout():
    """The header and a few fields at the offsets of openflow/README.md,
    and the README's example, byte for byte."""
    p = Policy(id=0x01020304, threshold=5, thresholds=[9], dscp=[7, 8],
               queues=[1, 2])
    a = p.nx_action()
    assert len(a) == NX_ACTION_LEN == 10 + WIRE_LEN
    assert a[:12].hex() == "ffff00a000002320" "00f0" "0002"
    assert a[12:16] == bytes([1, 2, 3, 4])
    assert a[40:48] == (9).to_bytes(8, "big")
    assert a[144:146] == bytes([7, 8]) and a[152:154] == bytes([1, 2])
    assert Policy.from_nx_action(a) == p
    readme = ("ffff 00a0 00002320 00f0 00 04 00000001 000005b4 02 00 0000 "
              "00000000 00000000 0000000000000000 "
              "00000000000186a0 00000000000f4240 0000000000989680 "
              "0000000000000000 0000000000000000 0000000000000000 "
              "0000000000000000 "
              "000005b4 00002328 00000000 00000000 00000000 00000000 "
              "00000000 00000000 "
              "0064 00c8 0000 0000 0000 0000 0000 0000 "
              "2e 1a 12 00 00 00 00 00 "
              "00 01 02 03 00 00 00 00")
    assert Policy.from_text(THESIS).nx_action() == \
        bytes.fromhex(readme.replace(" ", ""))


def test_nx_action_refuses_other_actions():
    a = bytearray(Policy(id=1).nx_action())
    with pytest.raises(PolicyError, match="160"):
        Policy.from_nx_action(a[:-1])
    a[9] = 0xf1             # subtype 241
    with pytest.raises(PolicyError, match="not an NXAST_PANDA"):
        Policy.from_nx_action(a)
    b = bytearray(Policy(id=1).wire_body())
    b[13] = 1               # pad
    with pytest.raises(PolicyError, match="padding"):
        Policy.from_wire_body(b)


def test_weights_are_hundredths():
    p = Policy.from_text("id=1,threshold=10,weights=10:1/20:1.5/30:2.25")
    assert p.weights == ((10, 100), (20, 150), (30, 225))
    assert all(isinstance(w, int) for _, w in p.weights)
    assert [format_weight(w) for _, w in p.weights] == ["1", "1.5", "2.25"]
    assert p.text().endswith("weights=10:1/20:1.5/30:2.25,dscp=1,queues=0")


def test_defaults_and_equality():
    p = Policy(id=3, thresholds=(10, 20))
    assert p.dscp == (1, 2, 3) and p.queues == (0, 1, 2)
    assert p.n_levels == 3
    assert p == Policy.from_text("id=3,thresholds=10/20")
    assert hash(p) == hash(Policy.from_text("id=3,thresholds=10/20"))
    assert p != Policy(id=4, thresholds=(10, 20))
    # untracked_level: the lowest level unless given; equal when equal.
    assert p.untracked_level == 2
    assert Policy(id=3, thresholds=(10, 20), untracked_level=2) == p
    q = Policy(id=3, thresholds=(10, 20), untracked_level=0)
    assert q != p and q.text().endswith(",untracked_level=0")
    assert q.wire_body()[12] == 2 and p.wire_body()[12] == 0
    assert Policy.from_wire_body(q.wire_body()) == q


def test_tunnels():
    """The tunnels a policy declares: names in Python and JSON, byte 19
    of the wire body (which was padding: 0, none, is the default)."""
    p = Policy(id=3, thresholds=(10, 20))
    assert p.tunnels == () and p.wire_body()[19] == 0
    assert "tunnels" not in p.to_json()
    q = Policy(id=3, thresholds=(10, 20), tunnels=("vxlan", "geneve"))
    assert q.tunnels == ("geneve", "vxlan") and q != p
    assert q.text().endswith(",tunnels=geneve/vxlan")
    assert q.wire_body()[19] == 3
    assert Policy.from_wire_body(q.wire_body()) == q
    assert q.to_json()["tunnels"] == ["geneve", "vxlan"]
    assert Policy.from_json(q.to_json(), "f")[0] == q
    assert p.replace(tunnels=("vxlan",)).wire_body()[19] == 2
    with pytest.raises(PolicyError, match='tunnels: "gre" is not geneve'):
        Policy(id=1, tunnels=("gre",))
    with pytest.raises(PolicyError, match="tunnels: vxlan given twice"):
        Policy.from_text("id=1,tunnels=vxlan/vxlan")


def test_constructor_validates():
    with pytest.raises(PolicyError, match="thresholds: not strictly"):
        Policy(id=1, thresholds=(5, 5))
    with pytest.raises(PolicyError, match="queues: 300 out of range"):
        Policy(id=1, queues=(300,))
    with pytest.raises(PolicyError, match="dscp: 2 values for 1 levels"):
        Policy(id=1, dscp=(1, 2))
    with pytest.raises(PolicyError, match="kind"):
        Policy(id=1, kind="fifo")


def model_json(**kw):
    d = {"version": 1, "id": 1, "kind": "panda", "threshold": 1460,
         "weights": [[1460, 1], [9000, 2]],
         "thresholds": [100000, 1000000, 10000000],
         "dscp": [46, 26, 18, 0], "queues": [0, 1, 2, 3], "model": {},
         "action": THESIS}
    d.update(kw)
    return d


def test_from_json():
    p, warnings = Policy.from_json(model_json(), "p.json")
    assert p == Policy.from_text(THESIS) and warnings == []
    # The structured fields win over a stale 'action', with a warning.
    p, warnings = Policy.from_json(model_json(dscp=[46, 26, 10, 0]), "f")
    assert p.dscp == (46, 26, 10, 0)
    assert "differs from the structured fields" in warnings[0]
    # Weights: numbers with at most two decimals -> hundredths.
    p, _ = Policy.from_json(model_json(weights=[[1460, 1.25]],
                                       action=None), "f")
    assert p.weights == ((1460, 125),)
    # to_json round trip.
    q, warnings = Policy.from_json(json.loads(json.dumps(p.to_json())), "f")
    assert q == p and warnings == []
    # untracked_level: optional, written only when not the default.
    assert "untracked_level" not in p.to_json()
    p, _ = Policy.from_json(model_json(untracked_level=1, action=None), "f")
    assert p.untracked_level == 1 and p.to_json()["untracked_level"] == 1


@pytest.mark.parametrize("obj,msg", [
    ({"id": 1, "dscp": [64]}, "f: dscp[0]: 64 out of range (0..63)"),
    ({"id": 1, "thresholds": list(range(1, 9))},
     "f: thresholds: 8 values, at most 7 allowed"),
    ({"id": 1, "thresholds": [5], "dscp": [1]},
     "f: dscp: 1 values for 2 levels"),
    ({"id": 1, "treshold": 5}, "f: unknown key treshold"),
    ({"id": "1"}, "f: id: expected an integer, got \"1\""),
    ({"id": 1, "weights": [[100, 1.234]]},
     "f: weights[0][1]: 1.234 has more than two decimals"),
    ({"id": 1, "weights": [[100, float("nan")]]},
     "f: weights[0][1]: nan is not a finite number"),
    ({"id": 1, "weights": [[100, float("inf")]]},
     "f: weights[0][1]: inf is not a finite number"),
    ({"id": 1, "kind": "fifo"}, "f: kind: \"fifo\" is not panda, pias, app, match, length or compose"),
    ({"id": 7, "thresholds": [500000, 50000]},
     "f: policy id 7: thresholds: not strictly ascending (50000 after "
     "500000)"),
    ({"threshold": 5}, "f: id: missing"),
    ({"id": 1, "untracked_level": 1},
     "f: policy id 1: untracked_level: 1 but the policy has only 1 levels"),
    ({"id": 1, "idle_reset": 1 << 32},
     "f: idle_reset: 4294967296 out of range (0..4294967295)"),
    ({"id": 1, "version": 2}, "f: version: unsupported version 2"),
    ([1], "f: a policy must be a JSON object"),
])
def test_from_json_refuses(obj, msg):
    with pytest.raises(PolicyError) as e:
        Policy.from_json(obj, "f")
    assert msg in str(e.value)


# -- rule kinds ----------------------------------------------------
COMPOSE = ("id=24,kind=compose,app=46:0,match=GET\\x20\\x2fapi:1/PING:0,"
           "length=1000:2,threshold=1460,thresholds=10/20")


def test_rules_json_round_trip():
    for text in (COMPOSE, "id=20,kind=match,match=get\\x20:0/set\\x20:2,"
                 "levels=3", "id=23,kind=length,length=1400:1,"
                 "default_level=0"):
        p = Policy.from_text(text)
        obj = json.loads(json.dumps(p.to_json()))
        q, warnings = Policy.from_json(obj, "f")
        assert q == p and not warnings
    obj = Policy.from_text(COMPOSE).to_json()
    assert obj["priority_rules"][1] == {"match": "GET\\x20\\x2fapi",
                                        "level": 1}


@pytest.mark.parametrize("rules,msg", [
    ([{"match": "a b", "level": 0}], "f: priority_rules[0]: match: "
     "character ' ' in \"a b\" must be written \\x20"),
    ([{"match": "a", "app": 1, "level": 0}], "f: priority_rules[0]: "
     "expected {\"app\"|\"match\"|\"length\": value, \"level\": level}"),
    ([{"app": 64, "level": 0}], "f: priority_rules[0].app: 64 out of "
     "range (0..63)"),
    ([{"length": 10, "level": 9}], "f: priority_rules[0].level: 9 out of "
     "range (0..7)"),
    ([{"app": 1, "level": 0}], "f: policy id 1: app: not allowed with "
     "kind=match (use kind=compose to mix rule types)"),
])
def test_rules_json_refused(rules, msg):
    with pytest.raises(PolicyError) as e:
        Policy.from_json({"id": 1, "kind": "match",
                          "priority_rules": rules}, "f")
    assert str(e.value).startswith(msg), str(e.value)


def test_rule_level_known_packets():
    """panda_cls_rules() in Python: first matching rule, in text order."""
    p = Policy.from_text(COMPOSE)
    assert p.rule_level(dscp=46, data=b"PING") == 0     # app before match
    assert p.rule_level(data=b"GET /api/v1 HTTP/1.1") == 1
    assert p.rule_level(data=b"GET /index.html") is None
    assert p.rule_level(data=b"PUT x", payload=1400) == 2
    assert p.rule_level(data=b"PUT x", payload=999) is None


def test_rule_bodies_grow_by_eights():
    p = Policy.from_text(COMPOSE)
    a = p.nx_action()
    assert len(a) == 10 + len(p.wire_body()) and len(a) % 8 == 0
    assert int.from_bytes(a[2:4], "big") == len(a)
    assert Policy.from_nx_action(a) == p
    with pytest.raises(PolicyError, match="rule 4 runs past the end"):
        Policy.from_wire_body(p.wire_body()[:-8])
    with pytest.raises(PolicyError, match="length 190, but its 4 rules "
                       "take 182"):
        Policy.from_wire_body(p.wire_body() + bytes(8))
    with pytest.raises(PolicyError, match="length 183, expected 150 plus"):
        Policy.from_wire_body(p.wire_body() + bytes(1))


# -- the binding (libpanda-policy.so.1) -----------------------------------------
def test_library_exports_the_api_alone():
    """The shared library's dynamic symbols are panda_api_* under the
    version node PANDA_POLICY_1, and its soname carries the API version:
    the rest of lib/panda stays private."""
    import subprocess
    from pandaovs import paths
    lib = paths.policy_library()
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    names = [line.split()[-1] for line in out.splitlines()
             if line.split()[1] in "TtDdBbRr"]
    assert names and all(n.startswith("panda_api_")
                         and n.endswith("@@PANDA_POLICY_1") for n in names), \
        names
    dyn = subprocess.run(["readelf", "-d", lib], check=True,
                         capture_output=True, text=True).stdout
    assert "[libpanda-policy.so.1]" in dyn


def test_constants_come_from_the_library():
    import pandaovs.policy as pol
    assert pol.WIRE_LEN == 150 and pol.NX_ACTION_LEN == 160
    assert pol.MAX_LEVELS == 8 and pol.MAX_RULES == 16
    assert pol.WIRE_MAX_LEN == 150 + (16 * (3 + 32) + 7) // 8 * 8
    with pytest.raises(AttributeError):
        pol.NO_SUCH_CONSTANT


def test_fields_round_trip_and_replace():
    p = Policy.from_text(COMPOSE)
    assert Policy(**p.fields()) == p
    q = p.replace(floor=-10)
    assert q.floor == -10 and q.text().endswith(",floor=-10")
    assert p.floor == 0
    with pytest.raises(AttributeError):
        p.floor = 3
    with pytest.raises(PolicyError, match="floor: 5 must be <= 0"):
        p.replace(floor=5)


def test_cli_prints_the_canonical_text(tmp_path):
    import subprocess
    from pandaovs import paths
    run = lambda *a, **kw: subprocess.run(  # noqa: E731
        paths.module_cmd("policy", *a), env=paths.module_env(),
        capture_output=True, text=True, **kw)
    r = run("--text", "T=100,id=3,thresholds=10/20")
    assert r.returncode == 0 and r.stdout == \
        "id=3,threshold=100,thresholds=10/20,dscp=1/2/3,queues=0/1/2\n"
    f = tmp_path / "p.json"
    f.write_text(json.dumps(model_json()))
    r = run("--json", str(f))
    assert r.returncode == 0 and r.stdout == THESIS + "\n", r.stderr
    r = run("--json", "-", input=json.dumps({"id": 1, "dscp": [64]}))
    assert r.returncode == 1
    assert r.stderr == "pandaovs.policy: <stdin>: dscp[0]: 64 out of " \
        "range (0..63)\n"

"""The Python NXAST_PANDA encoder against the patched ovs-ofctl."""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import panda_nx  # noqa: E402

BUILD = os.environ.get("PANDA_BUILD_DIR", "/work/main/_build-panda")
OFCTL = os.path.join(BUILD, "ovs", "build", "utilities", "ovs-ofctl")

CASES = [
    (dict(id=1, threshold=1460, weights=[(1460, 1), (9000, 2)],
          thresholds=[100000, 1000000, 10000000],
          dscp=[46, 26, 18, 0], queues=[0, 1, 2, 3]),
     "panda(id=1,threshold=1460,weights=1460:1/9000:2,"
     "thresholds=100000/1000000/10000000,dscp=46/26/18/0,queues=0/1/2/3)"),
    (dict(id=7, kind="pias", thresholds=[5000], ctl_level=1, floor=-100,
          idle_reset=500),
     "panda(id=7,kind=pias,thresholds=5000,dscp=1/2,queues=0/1,"
     "ctl_level=1,floor=-100,idle_reset=500)"),
    (dict(id=4294967295),
     "panda(id=4294967295,threshold=0,dscp=1,queues=0)"),
]


@pytest.mark.parametrize("kw,text", CASES)
def test_round_trip(kw, text):
    body = panda_nx.encode(**kw)
    assert len(body) == 160
    back = panda_nx.decode(body)
    for k, v in kw.items():
        if k == "weights":
            v = [(a, float(w)) for a, w in v]
        assert back[k] == v, k


def test_layout():
    body = panda_nx.encode(id=0x01020304, threshold=5, thresholds=[9],
                           dscp=[7, 8], queues=[1, 2])
    assert body[:12].hex() == "ffff00a000002320" "00f0" "0002"
    assert body[12:16] == bytes([1, 2, 3, 4])
    assert body[40:48] == (9).to_bytes(8, "big")
    assert body[144:146] == bytes([7, 8]) and body[152:154] == bytes([1, 2])


@pytest.mark.skipif(not os.access(OFCTL, os.X_OK),
                    reason="no OVS build at %s (set PANDA_BUILD_DIR)" % BUILD)
@pytest.mark.parametrize("version", ["OpenFlow10", "OpenFlow13"])
def test_ovs_decodes_it(version):
    hexes = "\n".join(panda_nx.to_hex(panda_nx.encode(**kw))
                      for kw, _ in CASES) + "\n"
    out = subprocess.run([OFCTL, "parse-actions", version], input=hexes,
                         capture_output=True, text=True, check=True).stdout
    got = [line.split("actions=", 1)[1] for line in out.splitlines()
           if "actions=" in line]
    assert got == [text for _, text in CASES]


@pytest.mark.skipif(not os.access(OFCTL, os.X_OK),
                    reason="no OVS build at %s (set PANDA_BUILD_DIR)" % BUILD)
def test_ovs_refuses_bad_dscp():
    body = bytearray(panda_nx.encode(id=1, thresholds=[10], dscp=[64, 0]))
    res = subprocess.run([OFCTL, "parse-actions", "OpenFlow13"],
                         input=body.hex() + "\n", capture_output=True,
                         text=True)
    assert "OFPBAC_BAD_ARGUMENT" in res.stdout + res.stderr
    assert "panda: dscp" in res.stderr

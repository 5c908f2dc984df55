"""Only switches speak for switches: the controller against a fake OpenFlow
switch (tests/system/fake_switch.py) that reaches its port beside a real
bridge (patched OVS in a namespace, pandalab.controller_harness), vetoes
bundles and serves made-up histograms to auto-tune.

  - a peer whose datapath id the configuration does not name is refused
    (closed, counted in status), whatever it says: its veto does not roll
    the configuration back and its histograms are never read;
  - a switch the configuration does name that refuses its bundle fails
    alone: the real bridge keeps the new generation, the status says which
    switch refused what;
  - an allowed switch's histograms count only for the policy ids its own
    rules give it: made-up histograms of another id are not read.

Before, the fake peer's BAD_ARGUMENT rolled every new configuration back on
every bridge, and its made-up histograms made auto-tune push
threshold=8,thresholds=2/3 to the real bridge.  Needs root, os-ken, the
patched OVS.
"""

import json
import os
import select
import subprocess
import time

import pytest

from pandaovs import paths
from pandalab.controller_harness import OF_PORT, ControllerLab, write_json

from test_controller import (BUILD, DEFAULT_RULE, policy, skip_unless_lab,
                             text_of, wait_for)

PY = paths.PY
FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "fake_switch.py")
MODEL = os.path.join(BUILD, "tools", "panda-model")
CDF = paths.cdf("web-search.cdf")
BR0 = "0x00000000000000b1"
FAKE_DPID = "0x000000000000dead"
# What the attack served: tiny payloads on top, tiny finished flows.
MADE_UP = """policy 7
panda-histogram 1
payload 0 8 100000
payload 1 16 100000
payload 2 24 100000
flow 2 50000
flow 3 50000
policy 9
panda-histogram 1
payload 0 100 10
payload 1 1448 10
"""


class Fake:
    """fake_switch.py in the switch namespace; its stdout lines."""

    def __init__(self, lab, dpid, *opts):
        self.proc = lab.sb.ns.popen(PY, FAKE, "--dpid", dpid, "--port",
                                    str(OF_PORT), *opts,
                                    stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
        self.lines = []
        self.buf = b""

    def read(self, timeout=0.2):
        """The lines printed so far (reads what is there)."""
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            r, _, _ = select.select([fd], [], [], max(0, left))
            if not r:
                return self.lines
            data = os.read(fd, 65536)
            if not data:
                return self.lines
            self.buf += data
            *done, self.buf = self.buf.split(b"\n")
            self.lines += [l.decode().strip() for l in done]

    def saw(self, prefix):
        return any(l.startswith(prefix) for l in self.read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def lab(tmp_path):
    skip_unless_lab()
    lab = ControllerLab(tmp_path, bridges=(), build=BUILD)
    lab.fakes = []
    try:
        lab.add_bridge("br0", settings=[
            "other-config:datapath-id=00000000000000b1"])
        yield lab
    finally:
        for f in lab.fakes:
            f.stop()
        lab.stop()


def fake(lab, dpid, *opts):
    f = Fake(lab, dpid, *opts)
    lab.fakes.append(f)
    return f


def config(lab, switches, rules=None, pol=None):
    write_json(lab.policy_file, pol or policy())
    write_json(lab.config, {"switches": switches, "rules": rules or [
        {"name": "tcp4", "match": {"eth_type": 2048, "ip_proto": 6},
         "policy": "policy.json"}, DEFAULT_RULE]})


def autotune_args(tmp_path):
    return ["--auto-tune", "--auto-tune-cdf", CDF, "--auto-tune-load",
            "0.5", "--auto-tune-interval", "0.3",
            "--auto-tune-min-interval", "0", "--auto-tune-confirm", "1",
            "--auto-tune-min-packets", "1", "--auto-tune-margin", "0.01",
            "--auto-tune-model", MODEL]


def made_up(tmp_path):
    path = str(tmp_path / "made-up.hist")
    with open(path, "w") as f:
        f.write(MADE_UP)
    return path


def test_unknown_peer_refused(lab, tmp_path):
    """A peer presenting a datapath id the configuration does not name is
    closed: its bundle veto and its histograms have no effect, a new
    generation reaches the real bridge, auto-tune reads only the bridge
    (which is idle: it waits, it pushes nothing)."""
    config(lab, [BR0])
    lab.start_controller(*autotune_args(tmp_path))
    lab.wait_synced(1)
    f = fake(lab, FAKE_DPID, "--veto", "--histograms", made_up(tmp_path))
    st = wait_for(lambda: (lab.status() or {}).get("refused_peers"), 30,
                  "the fake peer's refusal")
    assert st[0]["dpid"] == FAKE_DPID and st[0]["count"] >= 1
    assert "not among the configuration's switches" in st[0]["reason"]
    wait_for(lambda: f.saw("closed"), 30, "the controller to close it")
    assert not any("bundle" in l or "histogram" in l for l in f.lines)
    assert "refusing the OpenFlow peer" in lab.log()
    # A new generation: the real bridge gets it, nothing refuses it.
    p2 = policy(thresholds=[60000, 600000])
    write_json(lab.policy_file, p2)
    st = lab.wait_synced(1, generation=2)
    assert st["config"]["error"] is None
    assert [f["panda"] for f in lab.flows()] == [text_of(p2)]
    assert [s["dpid"] for s in st["switches"]] == [BR0]
    # Auto-tune: rounds ran, on the real bridge only, and waited.
    decisions = wait_for(lambda: len((lab.status() or {}).get(
        "auto_tune", {}).get("decisions") or []) >= 3 and
        lab.status()["auto_tune"]["decisions"], 30, "auto-tune rounds")
    assert {d["action"] for d in decisions} == {"wait"}
    assert all(d["bridges"] in ([], [BR0]) for d in decisions)
    assert lab.status()["auto_tune"]["tuned"] == {}
    assert [f["panda"] for f in lab.flows()] == [text_of(p2)]


def test_allowed_switch_refusing_fails_alone(lab, tmp_path):
    """A switch the configuration names that vetoes its bundle: it alone
    fails (status "refused", the switch's message); the real bridge keeps
    the new generation, which stays in force."""
    config(lab, [BR0, FAKE_DPID])
    lab.start_controller()
    lab.wait_synced(1)
    f = fake(lab, FAKE_DPID, "--veto")
    st = wait_for(lambda: [s for s in (lab.status() or {}).get(
        "switches", []) if s["state"] == "refused"] and lab.status(), 30,
        "the fake switch to refuse")
    gen = st["config"]["generation"]
    sw = {s["dpid"]: s for s in st["switches"]}
    assert sw[FAKE_DPID]["refused_generation"] == gen
    assert "OFPBAC_BAD_ARGUMENT" in sw[FAKE_DPID]["last_error"]
    assert sw[BR0]["state"] == "synced"
    assert f.saw("bundle-add vetoed")
    # A new generation: br0 takes it; the fake refuses it; no revert.
    p2 = policy(thresholds=[60000, 600000])
    write_json(lab.policy_file, p2)
    st = wait_for(lambda: (lambda s: s and s["config"]["generation"] ==
                           gen + 1 and all(
                               x["synced_generation"] == gen + 1
                               or x["refused_generation"] == gen + 1
                               for x in s["switches"]) and s)(lab.status()),
                  30, "generation %d on both" % (gen + 1))
    sw = {s["dpid"]: s for s in st["switches"]}
    assert sw[BR0]["synced_generation"] == gen + 1
    assert sw[FAKE_DPID]["refused_generation"] == gen + 1
    assert st["config"]["error"] is None
    assert "reverting" not in lab.log()
    assert [x["panda"] for x in lab.flows()] == [text_of(p2)]
    rc, body = lab.rest("sync", check=False)
    assert rc == 1 and body["result"] == {
        "config_accepted": True, "switches_synced": 1,
        "switches_failed": 1}, body


def test_histograms_only_for_the_switch_s_own_ids(lab, tmp_path):
    """An allowed switch whose rules give it policy id 9 serves made-up
    histograms of id 7 (the real bridge's id) beside its id 9: those of
    id 7 are not read (status lists them as ignored), so id 7's windows
    hold only the real bridge's (no) packets and nothing is pushed; its
    id 9 counts for id 9, within that id's bounds."""
    config(lab, [BR0, FAKE_DPID], rules=[
        {"name": "tcp4", "dpids": [BR0],
         "match": {"eth_type": 2048, "ip_proto": 6},
         "policy": "policy.json"},
        {"name": "udp4", "dpids": [FAKE_DPID],
         "match": {"eth_type": 2048, "ip_proto": 17},
         "policy": {"id": 9, "threshold": 1000, "thresholds": [50000]}},
        DEFAULT_RULE])
    lab.start_controller(*autotune_args(tmp_path))
    lab.wait_synced(1)
    f = fake(lab, FAKE_DPID, "--histograms", made_up(tmp_path))
    lab.wait_synced(2)
    st = wait_for(lambda: (lab.status() or {}).get("auto_tune", {}).get(
        "ignored_histograms") and lab.status(), 30,
        "the fake's histograms to be ignored")
    assert st["auto_tune"]["ignored_histograms"] == {FAKE_DPID: ["7"]}
    assert f.saw("histogram served")
    time.sleep(2)
    st = lab.status()["auto_tune"]
    seven = [d for d in st["decisions"] if d["policy_id"] == 7]
    assert seven and {d["action"] for d in seven} == {"wait"}
    assert all(FAKE_DPID not in d["bridges"] for d in seven)
    assert all(d["flt_packets"] == 0 for d in seven)
    assert "7" not in st["tuned"]
    assert [x["panda"] for x in lab.flows()] == [text_of(policy())]
    nine = [d for d in st["decisions"] if d["policy_id"] == 9]
    assert all(d["bridges"] in ([], [FAKE_DPID]) for d in nine)
    assert any(d["bridges"] == [FAKE_DPID] for d in nine)
    assert "histograms of ids 7 not used" in lab.log()


def test_configuration_change_disconnects_a_switch_no_longer_named(lab):
    """Dropping a switch from "switches" closes its session."""
    config(lab, [BR0, FAKE_DPID])
    lab.start_controller()
    lab.wait_synced(1)
    fake(lab, FAKE_DPID)
    lab.wait_synced(2)
    with open(lab.config) as fh:
        cfg = json.load(fh)
    cfg["switches"] = [BR0]
    write_json(lab.config, cfg)
    st = wait_for(lambda: (lambda s: s and [x for x in s["switches"]
                                            if x["connected"]] and all(
        x["dpid"] == BR0 for x in s["switches"] if x["connected"]) and s)(
        lab.status()), 30, "the fake's session to be closed")
    assert "disconnecting: datapath id %s is not among" % FAKE_DPID \
        in lab.log()
    assert st["switches"][0]["state"] == "synced"

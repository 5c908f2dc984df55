"""The controller's exposure, against the patched OVS in namespaces
(pandalab.controller_harness): OpenFlow over TLS with OVS's PKI and a
certificate per switch, a second connection for a connected datapath id,
the REST token, and configurations that would remove a bridge's
forwarding.  test_controller_peers.py has the peers that are not switches.
"""

import json
import os
import subprocess
import time

import pytest

from pandaovs import paths
from pandalab.controller_harness import (OF_PORT, REST_PORT, ControllerLab,
                                         write_json)
from pandalab.sandbox import is_root

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "fake_switch.py")

BUILD = paths.build_dir()
OVS = os.path.join(BUILD, "ovs", "build")
OVS_PKI = os.path.join(OVS, "utilities", "ovs-pki")
PY = paths.PY

DEFAULT_RULE = {"name": "default", "priority": 0, "policy": None}
# Any switch: these tests are about other things (test_controller_peers.py
# and test_openflow_over_tls are about which switches).
ANY = {"switches": "*"}
TCP_RULE = {"name": "tcp4", "priority": 100,
            "match": {"eth_type": "0x0800", "ip_proto": 6},
            "policy": {"id": 7, "thresholds": [50000]}}


def _skip_unless_ready():
    if not is_root():
        pytest.skip("needs root (network namespaces, OVS)")
    if not os.access(os.path.join(OVS, "vswitchd", "ovs-vswitchd"),
                     os.X_OK):
        pytest.skip("no OVS build at %s" % BUILD)
    r = subprocess.run([PY, "-c", "import os_ken"], capture_output=True)
    if r.returncode:
        pytest.skip("%s cannot import os_ken" % PY)


@pytest.fixture
def lab(tmp_path):
    _skip_unless_ready()
    lab = ControllerLab(tmp_path, bridges=(), build=BUILD)
    yield lab
    lab.stop()


def wait_for(cond, what, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.1)


def in_ns(lab, code, timeout=60):
    """Runs Python 'code' in the switch namespace (where the controller
    listens); returns its stdout."""
    r = subprocess.run(lab.sb.ns.cmd(PY, "-c", code), capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def our_switches(lab):
    st = lab.status()
    return st["switches"] if st else []


# ---- TLS. ------------------------------------------------------------------

def make_pki(tmp):
    """A PKI as an operator makes one with ovs-pki: the controller CA signs
    the controller's certificate, the switch CA the switches' (sw, and
    sw2: another switch's)."""
    pki = os.path.join(tmp, "pki")

    def pki_run(*args):
        r = subprocess.run([OVS_PKI, "--dir=" + pki, "--force"] + list(args),
                           cwd=tmp, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
    pki_run("init")
    pki_run("req+sign", "ctl", "controller")
    pki_run("req+sign", "sw", "switch")
    pki_run("req+sign", "sw2", "switch")
    return pki


def test_openflow_over_tls(lab, tmp_path):
    """ssl: with OVS's PKI and the switch's own certificate bound to its
    datapath id in the configuration: the switch connects and is synced; a
    peer without a certificate, or speaking plain OpenFlow, gets no
    OpenFlow session; another switch's certificate (signed by the same
    CA) presenting the bridge's id is refused; a configuration that binds
    no certificate is refused at startup."""
    if not os.access(OVS_PKI, os.X_OK):
        pytest.skip("no ovs-pki in the build")
    tmp = str(tmp_path)
    pki = make_pki(tmp)
    listen = ["--listen", "ssl:127.0.0.1:%d" % OF_PORT,
              "--private-key", os.path.join(tmp, "ctl-privkey.pem"),
              "--certificate", os.path.join(tmp, "ctl-cert.pem"),
              "--ca-cert", os.path.join(pki, "switchca", "cacert.pem")]
    # No certificate bound to the switch: refused before starting.
    write_json(lab.config, {"switches": ["0xb1"],
                            "rules": [TCP_RULE, DEFAULT_RULE]})
    p = lab.start_controller(*listen)
    assert p.wait(timeout=60) == 1
    lab.ctl = None
    assert "no certificate bound to 0x00000000000000b1" in p.stderr.read()
    write_json(lab.config, {
        "switches": [{"dpid": "0xb1", "name": "br0",
                      "certificate": os.path.join(tmp, "sw-cert.pem")}],
        "rules": [TCP_RULE, DEFAULT_RULE]})
    lab.sb.vsctl("set-ssl", os.path.join(tmp, "sw-privkey.pem"),
                 os.path.join(tmp, "sw-cert.pem"),
                 os.path.join(pki, "controllerca", "cacert.pem"))
    lab.add_bridge("br0", target="ssl:127.0.0.1:%d" % OF_PORT, settings=[
        "other-config:datapath-id=00000000000000b1"])
    lab.start_controller(*listen)
    st = lab.wait_synced(1)
    assert st["switches"][0]["state"] == "synced"
    assert st["switches"][0]["name"] == "br0"
    assert st["config"]["tls_switch_identity"] == "certificate"
    # sw2's certificate (the same CA) presenting br0's id: refused.
    fake = subprocess.run(lab.sb.ns.cmd(
        paths.PY, FAKE, "--dpid", "0xb1", "--port", str(OF_PORT), "--tls",
        os.path.join(tmp, "sw2-cert.pem"),
        os.path.join(tmp, "sw2-privkey.pem"),
        os.path.join(pki, "controllerca", "cacert.pem")),
        capture_output=True, text=True, timeout=60)
    assert "features 0xb1" in fake.stdout and "closed" in fake.stdout, \
        fake.stdout + fake.stderr
    refused = wait_for(lambda: (lab.status() or {}).get("refused_peers"),
                       "the refusal of sw2's certificate")
    assert "is not the one bound to 0x00000000000000b1 (br0)" in \
        refused[0]["reason"]
    assert our_switches(lab)[0]["connected"]
    assert {f["priority"] for f in lab.our_flows("br0")} == {0, 100}
    # Plain OpenFlow HELLO on the TLS port: no OpenFlow answer.
    plain = in_ns(lab, """
import socket, struct
s = socket.create_connection(("127.0.0.1", %d), timeout=10)
s.sendall(struct.pack("!BBHI", 4, 0, 8, 1))
try:
    d = s.recv(8)
except OSError:
    d = b""
print("hello-reply" if d[:2] == bytes([4, 0]) else "refused")
""" % OF_PORT)
    assert plain == "refused"
    # TLS without a switch certificate: the handshake fails.
    nocert = in_ns(lab, """
import socket, ssl
ctx = ssl.create_default_context(cafile=%r)
ctx.check_hostname = False
s = socket.create_connection(("127.0.0.1", %d), timeout=10)
try:
    t = ctx.wrap_socket(s)
    t.sendall(b"\\x04\\x00\\x00\\x08\\x00\\x00\\x00\\x01")
    print("accepted" if t.recv(8) else "refused")
except (ssl.SSLError, OSError):
    print("refused")
""" % (os.path.join(pki, "controllerca", "cacert.pem"), OF_PORT))
    assert nocert == "refused"
    # Still one session, still synced.
    sw = our_switches(lab)
    assert len(sw) == 1 and sw[0]["connected"] and \
        sw[0]["state"] == "synced"


# ---- A second connection for a connected datapath id. -----------------------

def test_second_connection_for_a_dpid_is_refused(lab):
    """Another bridge (or a peer) presenting br0's datapath id neither
    takes br0's session nor gets its flows; br0 stays connected and
    synced."""
    write_json(lab.config, dict(ANY, rules=[TCP_RULE, DEFAULT_RULE]))
    dpid = ["other-config:datapath-id=00000000000000b1"]
    lab.add_bridge("br0", settings=dpid)
    lab.start_controller()
    st = lab.wait_synced(1)
    first = st["switches"][0]
    assert first["dpid"] == "0x00000000000000b1"
    lab.add_bridge("br1", settings=dpid)
    wait_for(lambda: "refusing a second connection" in lab.log(),
             "the controller to refuse br1")
    sw = our_switches(lab)
    assert len(sw) == 1
    assert sw[0]["address"] == first["address"]
    assert sw[0]["connected"] and sw[0]["state"] == "synced"
    assert sw[0]["duplicate_connections_refused"] >= 1
    assert lab.our_flows("br1") == []
    assert {f["priority"] for f in lab.our_flows("br0")} == {0, 100}
    # The first session still works: a change reaches br0.
    write_json(lab.config, dict(ANY, rules=[
        dict(TCP_RULE, policy={"id": 7, "thresholds": [60000]}),
        DEFAULT_RULE]))
    wait_for(lambda: any("thresholds=60000" in (f["panda"] or "")
                         for f in lab.our_flows("br0")),
             "the new policy on br0")
    assert lab.our_flows("br1") == []


# ---- REST authentication. ----------------------------------------------------

def test_rest_needs_the_token(lab):
    write_json(lab.config, dict(ANY, rules=[TCP_RULE, DEFAULT_RULE]))
    lab.start_controller()
    wait_for(lab.status, "the REST interface")
    code = """
import json, urllib.request, urllib.error
def get(headers):
    req = urllib.request.Request("http://127.0.0.1:%d/status",
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
token = open(%r).read().strip()
print(json.dumps([get({}), get({"Authorization": "Bearer " + "x" * 64}),
                  get({"Authorization": "Bearer " + token})]))
""" % (REST_PORT, lab.token_file)
    assert json.loads(in_ns(lab, code)) == [401, 401, 200]
    assert os.stat(lab.token_file).st_mode & 0o777 == 0o600


# ---- Forwarding. -----------------------------------------------------------------

def test_configuration_removing_forwarding_is_refused(lab):
    """{"rules": []} and a change dropping the catch-all are refused while
    the controller runs (flows kept); after a restart on such a
    configuration the bridge's plan is refused (nothing deleted); a
    confirmed one is applied."""
    write_json(lab.config, dict(ANY, rules=[TCP_RULE, DEFAULT_RULE]))
    lab.add_bridge("br0")
    lab.start_controller()
    gen = lab.wait_synced(1)["config"]["generation"]
    before = sorted(f["priority"] for f in lab.our_flows("br0"))
    assert before == [0, 100]

    write_json(lab.config, dict(ANY, rules=[]))
    st = wait_for(lambda: (lab.status() or {}).get("config", {})
                  .get("error"), "the empty configuration's refusal")
    assert "rules: empty" in st and "confirm_no_forwarding" in st

    write_json(lab.config, dict(ANY, rules=[TCP_RULE]))
    st = wait_for(lambda: "would remove forwarding" in (
        (lab.status() or {}).get("config", {}).get("error") or "")
        and lab.status(), "the refusal of the change")
    assert "loses rule 'default'" in st["config"]["error"]
    assert st["config"]["generation"] == gen
    assert sorted(f["priority"] for f in lab.our_flows("br0")) == before

    # Restarted on it: no previous generation to compare with, the
    # bridge's plan is what is refused.
    lab.kill_controller()
    lab.start_controller()
    sw = wait_for(lambda: [s for s in our_switches(lab)
                           if s["state"] == "refused"], "the bridge refusal")
    assert "would remove forwarding" in sw[0]["last_error"]
    assert "priority=0" in sw[0]["last_error"]
    assert sorted(f["priority"] for f in lab.our_flows("br0")) == before

    # Confirmed: applied.
    write_json(lab.config, dict(ANY, rules=[TCP_RULE],
                                confirm_no_forwarding=True))
    rc, body = lab.rest("sync", check=False)
    assert rc == 0, body
    assert [f["priority"] for f in lab.our_flows("br0")] == [100]
    assert "confirm_no_forwarding is set" in lab.log()

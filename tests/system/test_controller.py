"""The Panda OpenFlow controller (openflow/controller/).

The real controller (os-ken, /usr/bin/python3) against the patched
ovs-vswitchd in network namespaces (pandalab.controller_harness):

  - the NXAST_PANDA encoding of the controller is byte-exact with OVS's:
    the patched 'ovs-ofctl parse-actions' decodes it to the same policy
    text and re-encodes it to the same bytes;
  - on connect the bridge gets the configured flow (match, table, priority,
    panda action, normal / goto_table) and TCP traffic is marked;
  - a policy file change (same id) shows up in dump-flows while the
    connection counters in 'ovs-appctl panda/show' are unchanged and keep
    counting from where they were;
  - controller killed: fail_mode=secure keeps the flows, traffic is still
    marked; controller restarted: flows are reconciled (stale flows of the
    controller removed, changed policy pushed, unchanged flows untouched:
    their packet counters keep running), no duplicates;
  - a malformed policy file is refused with a clear message (by the
    controller's checks, which are lib/panda's, also through --ofctl) and
    the previous policy stays in force, also on bridges that connect later;
    a rule the switch refuses (a match) is refused atomically by that
    switch, which keeps its flows and says so in status;
  - several bridges with per-dpid rules; goto_table to the operator's table.

Build: $PANDA_BUILD_DIR (default <repo>/_build).  Needs root.
"""

import json
import os
import re
import signal
import subprocess
import time

import pytest

from pandaovs import paths
from pandalab.controller_harness import (OF_PORT, ControllerLab,
                                         write_json)
from pandalab.sandbox import OvsSandbox, end_process, is_root, run

CTL_DIR = os.path.join(paths.TOP, "openflow", "controller")
CTL = os.path.join(CTL_DIR, "panda_controller.py")     # the launcher
PYTHON = paths.PY               # Debian's, with python3-os-ken

BUILD = paths.build_dir()
OVS = os.path.join(BUILD, "ovs", "build")
OFCTL = os.path.join(OVS, "utilities", "ovs-ofctl")
VSWITCHD = os.path.join(OVS, "vswitchd", "ovs-vswitchd")


def _os_ken_ok():
    r = subprocess.run([PYTHON, "-c", "import os_ken.ofproto.nx_actions"],
                       capture_output=True)
    return r.returncode == 0


def _ofctl_has_panda():
    if not os.access(OFCTL, os.X_OK):
        return False
    r = subprocess.run([OFCTL, "parse-flow", "actions=panda(id=1)"],
                       capture_output=True, text=True)
    return r.returncode == 0


HAVE_OS_KEN = _os_ken_ok()
HAVE_PANDA = _ofctl_has_panda()

needs_ovs = [
    pytest.mark.skipif(not HAVE_OS_KEN, reason="%s cannot import os_ken "
                       "(apt-get install python3-os-ken)" % PYTHON),
    pytest.mark.skipif(not os.access(OFCTL, os.X_OK),
                       reason="no OVS build at %s (set PANDA_BUILD_DIR or "
                       "run make)" % BUILD),
    pytest.mark.skipif(os.access(OFCTL, os.X_OK) and not HAVE_PANDA,
                       reason="%s has no panda action (ovs-patches/"
                       "panda.series not applied?)" % OFCTL),
]


def skip_unless_lab():
    """For a test that runs OVS in a namespace with the controller: what
    needs_ovs needs, and root."""
    for mark in needs_ovs:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    if not is_root():
        pytest.skip("needs root (network namespaces, OVS)")


def needs_panda_ofctl(f):
    """The test needs os-ken and the patched ovs-ofctl, not root."""
    for mark in needs_ovs:
        f = mark(f)
    return f


def policy(pid=7, thresholds=(50000, 500000), **kw):
    """A policy in panda-model's JSON form.  T = 1000 so that full-sized
    segments (1448 bytes) count as large and bulk flows sink."""
    p = {"version": 1, "id": pid, "kind": "panda", "threshold": 1000,
         "weights": [[1000, 1], [9000, 2]], "thresholds": list(thresholds),
         "dscp": [46, 26, 10][:len(thresholds) + 1],
         "queues": [0, 1, 2][:len(thresholds) + 1]}
    p.update(kw)
    return p


def text_of(p):
    """The policy text lib/panda prints for policy(); written out by hand
    here so that the test does not trust the controller's formatter."""
    return "id=%d,threshold=%d,weights=1000:1/9000:2,thresholds=%s,dscp=%s," \
        "queues=%s" % (p["id"], p["threshold"],
                       "/".join(str(t) for t in p["thresholds"]),
                       "/".join(str(d) for d in p["dscp"]),
                       "/".join(str(q) for q in p["queues"]))


def wait_for(cond, timeout=20, what="condition", interval=0.2):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = cond()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("timed out after %ss waiting for %s (last: %r)"
                         % (timeout, what, last))


# ---------------------------------------------------------------------------
# Encoding: no root needed, only the patched ovs-ofctl.
# ---------------------------------------------------------------------------
ENCODING_CASES = [
    dict(id=1, threshold=1460, weights=[[1460, 1], [9000, 2]],
         thresholds=[100000, 1000000, 10000000], dscp=[46, 26, 18, 0],
         queues=[0, 1, 2, 3]),
    dict(id=4294967295, threshold=100, weights=[[200, 1.5], [300, 2.25],
                                                [65535, 9]],
         thresholds=[1, 2, 3, 4, 5, 6, 9223372036854775807],
         dscp=[63, 1, 2, 3, 4, 5, 6, 0], queues=[7, 6, 5, 4, 3, 2, 1, 0],
         ctl_level=7, floor=-5000, idle_reset=250),
    dict(id=3, kind="pias", thresholds=[10000, 20000]),
    dict(id=0),
    # Rule kinds: longer actions, the same bytes on both sides.
    dict(id=5, kind="compose", threshold=1460, thresholds=[100000],
         priority_rules=[{"match": "get\\x20", "level": 0},
                         {"app": 46, "level": 0},
                         {"length": 1400, "level": 1}]),
    dict(id=6, kind="match", levels=3, default_level=0,
         priority_rules=[{"match": "HB", "level": 2}]),
]


def _ofctl_decode(hex_actions):
    r = subprocess.run([OFCTL, "parse-actions", "OpenFlow13"],
                       input=hex_actions + "\n", capture_output=True,
                       text=True, timeout=30)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("case", ENCODING_CASES,
                         ids=["thesis", "extremes", "pias", "defaults",
                              "compose", "match"])
@needs_panda_ofctl
def test_encoding_is_byte_exact_with_ovs(case):
    """ovs-ofctl decodes the controller's bytes to the same policy text and
    re-encodes them identically (parse-actions prints any difference)."""
    code = """
import json, sys
from pandaovs.controller import config, ofp
from os_ken.ofproto import ofproto_v1_3_parser as p
pol, _ = config.parse_policy(json.loads(sys.argv[1]), "case")
raw = ofp.encode_action(pol)
act = p.OFPAction.parser(raw, 0)    # os-ken decodes its own bytes back
assert isinstance(act, ofp.NXActionPanda) and act.policy == pol
print(raw.hex()); print(pol.text())
"""
    r = subprocess.run([PYTHON, "-c", code, json.dumps(case)],
                       capture_output=True, text=True, timeout=60,
                       env=paths.module_env())
    assert r.returncode == 0, r.stderr
    hexa, text = r.stdout.split()
    # 160 bytes, more (by multiples of 8) with rules.
    assert len(hexa) == 2 * 160 if "priority_rules" not in case \
        else len(hexa) > 2 * 160 and len(hexa) % 16 == 0
    rc, out, err = _ofctl_decode(hexa)
    assert rc == 0, err
    lines = [l for l in out.splitlines() if l.strip()]
    # First line: the decoded actions; any further line is a re-encoding
    # difference ("expected/actual" hex dumps).
    assert lines == ["actions=panda(%s)" % text], out + err


def test_histogram_reply_of_any_length_parses():
    """An NXST_PANDA_HISTOGRAM reply parses whatever the length of its
    text (os-ken's own experimenter body parser fails on 7 lengths in 16,
    pandaovs.controller.ofp.ExperimenterMultipart)."""
    if not HAVE_OS_KEN:
        pytest.skip("%s cannot import os_ken" % PYTHON)
    code = """
import struct
from pandaovs.controller import ofp
from os_ken.ofproto import ofproto_v1_3_parser as p
text = b"policy 7\\npanda-histogram 1\\npayload 0 8 1\\n"
for extra in range(32):
    t = text + b"#" * extra
    body = struct.pack("!HH4xII", 0xffff, 0, 0x2320, 5) + t
    buf = struct.pack("!BBHI", 4, 19, 8 + len(body), 7) + body
    m = p.msg_parser(None, 4, 19, len(buf), 7, buf)
    assert bytes(m.body.data) == t, extra
print("ok")
"""
    r = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True,
                       timeout=60, env=paths.module_env())
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def of13_flow_stats_raw(sock_path, table):
    """Flow stats of 'table' straight from a bridge's management socket, as
    the raw OpenFlow 1.3 reply bodies (no OpenFlow library in between)."""
    import socket
    import struct
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sock_path)

    def recv_msg():
        hdr = b""
        while len(hdr) < 8:
            hdr += s.recv(8 - len(hdr))
        length = struct.unpack("!H", hdr[2:4])[0]
        body = b""
        while len(body) < length - 8:
            body += s.recv(length - 8 - len(body))
        return hdr[1], body

    s.sendall(struct.pack("!BBHI", 4, 0, 8, 1))             # HELLO
    assert recv_msg()[0] == 0
    # MULTIPART_REQUEST / OFPMP_FLOW for 'table', any cookie, empty match.
    req = struct.pack("!HH4x", 1, 0) + struct.pack(
        "!B3xII4xQQ", table, 0xffffffff, 0xffffffff, 0, 0) + \
        struct.pack("!HH4x", 1, 4)
    s.sendall(struct.pack("!BBHI", 4, 18, 8 + len(req), 2) + req)
    bodies = b""
    while True:
        mtype, body = recv_msg()
        if mtype == 19:                                     # REPLY
            flags = struct.unpack("!H", body[2:4])[0]
            bodies += body[8:]
            if not flags & 1:
                break
        elif mtype == 1:
            raise AssertionError("OpenFlow error %r" % body[:8])
    s.close()
    return bodies


def test_ovs_encoding_equals_controller_encoding(tmp_path):
    """The other direction: a flow added with ovs-ofctl's own text syntax
    comes out of the switch (raw OpenFlow 1.3 flow stats) with exactly the
    bytes the controller's encoder produces for that policy, and
    NXActionPanda decodes them to the same policy."""
    skip_unless_lab()
    cases = [
        ({"id": 9, "threshold": 1460, "weights": [[1460, 1], [9000, 2.5]],
          "thresholds": [100000, 1000000], "dscp": [46, 26, 0],
          "queues": [0, 1, 2], "floor": -100},
         "id=9,threshold=1460,weights=1460:1/9000:2.50,thresholds=100000/"
         "1000000,dscp=46/26/0,queues=0/1/2,floor=-100",
         "id=9,threshold=1460,weights=1460:1/9000:2.5,thresholds=100000/"
         "1000000,dscp=46/26/0,queues=0/1/2,floor=-100"),
        ({"id": 10, "kind": "pias", "thresholds": [5, 6, 7],
          "ctl_level": 3, "idle_reset": 20},
         "id=10,kind=pias,thresholds=5/6/7,ctl_level=3,idle_reset=20",
         "id=10,kind=pias,thresholds=5/6/7,dscp=1/2/3/4,queues=0/1/2/3,"
         "ctl_level=3,idle_reset=20"),
    ]
    with OvsSandbox(BUILD) as sb:
        sb.add_bridge("br0")
        for i, (obj, text, canonical) in enumerate(cases):
            sb.ofctl("-O", "OpenFlow13", "add-flow", "br0",
                     "table=%d,actions=panda(%s)" % (i + 5, text))
            raw = of13_flow_stats_raw(os.path.join(sb.dir, "br0.mgmt"),
                                      i + 5)
            ovs_hex = raw.hex()
            start = ovs_hex.find("ffff00a00000232000f0")
            assert start >= 0, ovs_hex
            ovs_action = ovs_hex[start:start + 320]
            code = """
import json, sys
from pandaovs.controller import config, ofp
from os_ken.ofproto import ofproto_v1_3_parser as p
pol, _ = config.parse_policy(json.loads(sys.argv[1]), "case")
print(ofp.encode_action(pol).hex())
a = p.OFPAction.parser(bytes.fromhex(sys.argv[2]), 0)
print(a.policy == pol, a.policy.text())
"""
            r = subprocess.run([PYTHON, "-c", code, json.dumps(obj),
                                ovs_action], capture_output=True, text=True,
                               timeout=60, env=paths.module_env())
            assert r.returncode == 0, r.stderr
            mine, decoded = r.stdout.splitlines()
            assert mine == ovs_action
            assert decoded == "True " + canonical


def test_check_refuses_bad_structure(tmp_path):
    """Structure errors are found before any switch is involved, and the
    message names the file and the field."""
    if not HAVE_OS_KEN:
        pytest.skip("%s cannot import os_ken" % PYTHON)
    cases = [
        ({"id": 1, "dscp": [64]}, "dscp[0]: 64 out of range (0..63)"),
        ({"id": 1, "thresholds": list(range(1, 9))},
         "thresholds: 8 values, at most 7 allowed"),
        ({"id": 1, "thresholds": [5], "dscp": [1]},
         "dscp: 1 values for 2 levels"),
        ({"id": 1, "treshold": 5}, "unknown key treshold"),
        ({"id": "1"}, "id: expected an integer"),
        ({"id": 1, "weights": [[100, 1.234]]},
         "weights[0][1]: 1.234 has more than two decimals"),
        ({"id": 1, "kind": "fifo"}, "kind: \"fifo\" is not panda, pias, app, match, length or compose"),
        ({"threshold": 5}, "neither a controller configuration"),
        ({"id": 1, "controller": {"next": "goto_table:0"}},
         "goto_table:0 must go to a later table"),
        ({"id": 1, "controller": {"match": {"no_such": 1}}},
         "match.no_such: unknown OpenFlow 1.3 match field"),
    ]
    for obj, msg in cases:
        path = str(tmp_path / "p.json")
        write_json(path, obj)
        r = subprocess.run([PYTHON, CTL, "check", "--config", path],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 1, (obj, r.stdout)
        assert msg in r.stderr and path in r.stderr, (obj, r.stderr)
    with open(path, "w") as f:
        f.write('{"id": 1,')
    r = subprocess.run([PYTHON, CTL, "check", "--config", path],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "not valid JSON" in r.stderr, r.stderr


@needs_panda_ofctl
def test_check_applies_lib_panda_rules(tmp_path):
    """The policy rules are lib/panda's, with lib/panda's message: the
    controller refuses what the patched ovs-ofctl refuses, saying the
    same (tests/vectors/policies.txt holds the cases)."""
    path = str(tmp_path / "p.json")
    bad = policy(thresholds=[500000, 50000])
    write_json(path, bad)
    ovs = subprocess.run([OFCTL, "parse-flow", "actions=panda(%s)"
                          % text_of(bad)], capture_output=True, text=True)
    msg = ovs.stderr.strip().split("ovs-ofctl: panda: ")[1]
    assert msg == "thresholds: not strictly ascending (50000 after 500000)"
    for extra in ([], ["--ofctl", OFCTL]):
        r = subprocess.run([PYTHON, CTL, "check", "--config", path] + extra,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 1
        assert "%s: policy id 7: %s" % (path, msg) in r.stderr, r.stderr
    write_json(path, dict(policy(), controller={"switches": "*"}))
    r = subprocess.run([PYTHON, CTL, "check", "--config", path, "--ofctl",
                        OFCTL], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "panda(%s)" % text_of(policy()) in r.stdout


def test_examples_are_valid():
    """The example configuration loads (it names its policy file,
    policy.json, which is checked with it), without a warning."""
    if not HAVE_OS_KEN:
        pytest.skip("%s cannot import os_ken" % PYTHON)
    cmd = [PYTHON, CTL, "check", "--config",
           os.path.join(CTL_DIR, "examples", "panda-controller.json")]
    if HAVE_PANDA:
        cmd += ["--ofctl", OFCTL]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert "from %s" % os.path.join(CTL_DIR, "examples", "policy.json") \
        in r.stdout


def test_panda_model_output_is_a_configuration(tmp_path):
    """panda-model's JSON, unchanged, is accepted as a configuration's
    policy file: its 'action' text equals the controller's own rendering
    of the structured fields (no warning), and lib/panda (through --ofctl,
    if built) accepts the encoded action."""
    model = os.path.join(BUILD, "tools", "panda-model")
    if not HAVE_OS_KEN:
        pytest.skip("%s cannot import os_ken" % PYTHON)
    if not os.access(model, os.X_OK):
        pytest.skip("no panda-model in %s" % BUILD)
    d = str(tmp_path)
    for name, text in (("flt.txt", "100 1000\n200 500\n"),
                       ("fht.txt", "1448 5000\n"),
                       ("web.cdf", "1000 0.5\n100000 0.9\n10000000 1\n")):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    out = os.path.join(d, "policy.json")
    run(model, "--flt", os.path.join(d, "flt.txt"), "--fht",
        os.path.join(d, "fht.txt"), "--cdf", os.path.join(d, "web.cdf"),
        "--load", "0.8", "--levels", "4", "--id", "3", "--dscp",
        "46/26/18/0", "-q", "-o", out)
    with open(out) as f:
        action = json.load(f)["action"]
    conf = os.path.join(d, "panda.json")
    write_json(conf, {"switches": "*", "rules": [
        {"name": "panda", "policy": "policy.json"}]})
    cmd = [PYTHON, CTL, "check", "--config", conf]
    if HAVE_PANDA:
        cmd += ["--ofctl", OFCTL]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    assert "    panda(%s)\n" % action in r.stdout, r.stdout
    # A hand edit of the fields without the text: warned, fields win.
    with open(out) as f:
        obj = json.load(f)
    obj["dscp"] = [46, 26, 10, 0]
    write_json(out, obj)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "differs from the structured fields" in r.stderr, r.stderr
    assert "dscp=46/26/10/0" in r.stdout


# ---------------------------------------------------------------------------
# System tests: OVS in namespaces, the controller in the OVS namespace.
# ---------------------------------------------------------------------------
SERVER = r"""
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(16)
print("listening", flush=True)
def drain(c):
    while c.recv(65536):
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=drain, args=(c,), daemon=True).start()
"""
CLIENT = r"""
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
print("connected %d" % s.getsockname()[1], flush=True)
for line in sys.stdin:
    n, size = map(int, line.split())
    for _ in range(n):
        s.sendall(b"x" * size)
    print("sent", flush=True)
s.close()
"""


class Lab(ControllerLab):
    """The controller's sandbox (pandalab.controller_harness) with hosts a
    and b on br0 and a TCP sink on b."""

    def __init__(self, tmp_path, bridges=("br0",)):
        super().__init__(tmp_path, bridges, build=BUILD)
        self.procs = []
        try:
            self.a = self.sb.add_host("a", "10.0.0.1/24")
            self.b = self.sb.add_host("b", "10.0.0.2/24")
            srv = self.b.popen(PYTHON, "-c", SERVER, "10.0.0.2", "5001",
                               stdout=subprocess.PIPE, text=True)
            self.procs.append(srv)
            assert srv.stdout.readline().strip() == "listening"
        except Exception:
            self.stop()
            raise

    def connections(self, pid=7):
        """{(src, dst): counter} from ovs-appctl panda/show ID."""
        out = self.sb.appctl("panda/show", str(pid))
        conns = {}
        for m in re.finditer(r"^\s+(\S+) > (\S+) counter=(-?\d+)", out,
                             re.M):
            conns[(m.group(1), m.group(2))] = int(m.group(3))
        return conns, out

    # -- traffic -------------------------------------------------------------
    def client(self):
        c = self.a.popen(PYTHON, "-c", CLIENT, "10.0.0.2", "5001",
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
        self.procs.append(c)
        line = c.stdout.readline().split()
        assert line and line[0] == "connected", line
        c.sport = int(line[1])
        return c

    @staticmethod
    def send(c, n, size):
        c.stdin.write("%d %d\n" % (n, size))
        c.stdin.flush()
        assert c.stdout.readline().strip() == "sent"

    def capture(self):
        """tcpdump on b's eth0 (TCP to port 5001); returns a stop(n) that
        waits until the capture holds 'n' payload bytes (what was sent
        meanwhile) and gives the DSCP values seen on data packets."""
        pcap = os.path.join(self.tmp, "b-%d.pcap" % len(self.procs))
        p = self.b.popen("tcpdump", "-i", "eth0", "-U", "--immediate-mode",
                         "-nn", "-w", pcap,
                         "tcp dst port 5001 and "
                         "(ip[2:2] - ((ip[0]&0xf)<<2) - ((tcp[12]&0xf0)>>2))"
                         " > 0",
                         stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        wait_for(lambda: "listening on" in (p.stderr.readline() or ""),
                 10, "tcpdump to start")

        def stop(want):
            # tcpdump -U writes each packet as it comes: wait until all
            # of them are in, however slow the machine.
            def payload():
                out = run("tcpdump", "-r", pcap, "-nn", check=False)
                return sum(int(n) for n in re.findall(r"length (\d+)$",
                                                      out, re.M))
            wait_for(lambda: payload() >= want, 60, "%d bytes in %s"
                     % (want, pcap))
            p.send_signal(signal.SIGINT)
            p.wait(timeout=10)
            out = run("tcpdump", "-r", pcap, "-nn", "-v")
            return [int(t, 16) >> 2
                    for t in re.findall(r"\btos 0x([0-9a-f]+)", out)]
        return stop

    def stop(self):
        for p in self.procs:
            end_process(p, signal.SIGKILL)
        super().stop()


@pytest.fixture
def lab(tmp_path):
    skip_unless_lab()
    lab = Lab(tmp_path)
    yield lab
    lab.stop()


# fail_mode=secure bridges have no flow of their own: the controller also
# installs the plain priority-0 NORMAL flow (a rule with "policy": null).
DEFAULT_RULE = {"name": "default", "priority": 0, "policy": None}
# These tests run the controller on loopback in a private namespace with
# bridges of whatever datapath id OVS gives them: any switch is accepted
# (test_controller_peers.py tests the allow-list).
ANY = {"switches": "*"}


def single_rule_config(lab, **rule):
    r = {"name": "tcp4", "dpids": "*", "table": 0, "priority": 100,
         "match": {"eth_type": "0x0800", "ip_proto": 6},
         "policy": "policy.json", "next": "normal"}
    r.update(rule)
    write_json(lab.config, dict(ANY, rules=[r, DEFAULT_RULE]))


def test_policy_lifecycle(lab):
    """Connect -> install; policy change keeps counters; kill -> still
    marked; restart -> reconciled without duplicates."""
    p1 = policy()
    write_json(lab.policy_file, p1)
    single_rule_config(lab)
    lab.start_controller()
    st = lab.wait_synced()
    assert st["switches"][0]["last_changes"] == {
        "added": 2, "deleted": 0, "modified": 0, "unchanged": 0}
    flows = lab.flows()
    assert len(flows) == 1, flows
    f = flows[0]
    assert f["panda"] == text_of(p1)
    assert f["priority"] == 100 and f["table"] == 0
    assert "tcp" in f["raw"] and f["actions"].endswith(",NORMAL")

    # Traffic: a bulk flow that sinks past the first threshold.
    stop = lab.capture()
    c = lab.client()
    lab.send(c, 10, 100)            # small: stays at the top (DSCP 46)
    lab.send(c, 100, 1448)          # bulk: 144800 bytes > 50000 (DSCP 26)
    dscps = stop(10 * 100 + 100 * 1448)
    assert 46 in dscps and 26 in dscps, dscps
    key = ("10.0.0.1:%d" % c.sport, "10.0.0.2:5001")
    conns, show = lab.connections()
    assert key in conns and conns[key] > 50000, show
    before = conns[key]
    n_before = lab.flows()[0]["n_packets"]
    assert n_before > 0

    # Policy change, same id: only the thresholds move.
    p2 = policy(thresholds=[60000, 600000])
    write_json(lab.policy_file, p2)
    st = lab.wait_synced(generation=2)
    assert st["switches"][0]["last_changes"] == {
        "added": 0, "deleted": 0, "modified": 1, "unchanged": 1}
    flows = lab.flows()
    assert len(flows) == 1 and flows[0]["panda"] == text_of(p2), flows
    # MODIFY_STRICT: the flow's own counters keep running too.
    assert flows[0]["n_packets"] >= n_before
    conns, show = lab.connections()
    assert conns.get(key) == before, show      # counters unchanged
    lab.send(c, 20, 1448)
    conns, show = lab.connections()
    assert conns[key] > before, show           # and continue from there
    assert "panda(%s)" % text_of(p2) in show   # datapath runs the new one

    # Controller killed: once the switch has noticed, it keeps the flows
    # (fail_mode=secure).
    lab.kill_controller()
    wait_for(lambda: "false" in lab.sb.vsctl("get", "controller", "br0",
                                             "is_connected"),
             60, "br0 to see the controller gone")
    assert [f["panda"] for f in lab.flows()] == [text_of(p2)]
    stop = lab.capture()
    c2 = lab.client()
    lab.send(c2, 20, 100)
    dscps = stop(20 * 100)
    assert dscps and set(dscps) == {46}, dscps
    conns, show = lab.connections()
    assert ("10.0.0.1:%d" % c2.sport, "10.0.0.2:5001") in conns, show
    n_killed = lab.flows()[0]["n_packets"]

    # Restart: nothing to change, nothing touched.
    lab.start_controller()
    st = lab.wait_synced()
    assert st["switches"][0]["last_changes"] == {
        "added": 0, "deleted": 0, "modified": 0, "unchanged": 2}
    flows = lab.flows()
    assert len(flows) == 1 and flows[0]["n_packets"] >= n_killed, flows

    # Controller down again; meanwhile the policy changes and a stale flow
    # of an old configuration is around (same cookie prefix).
    lab.kill_controller()
    lab.sb.ofctl("-O", "OpenFlow13", "add-flow", "br0",
                 "cookie=0x50414e4412345678,table=0,priority=100,ip,"
                 "nw_dst=10.9.9.9,actions=NORMAL")
    p3 = policy(thresholds=[70000, 700000])
    write_json(lab.policy_file, p3)
    assert len(lab.our_flows()) == 3
    lab.start_controller()
    st = lab.wait_synced()
    assert st["switches"][0]["last_changes"] == {
        "added": 0, "deleted": 1, "modified": 1, "unchanged": 1}
    flows = lab.flows()
    assert [f["panda"] for f in flows] == [text_of(p3)], flows
    assert len(lab.our_flows()) == 2
    conns, show = lab.connections()
    assert conns.get(key, 0) > before, show    # still the same counters

    # Bridge reconnect (controller alive): point the bridge elsewhere and
    # back (the controller set never becomes empty, which would make OVS
    # reset the flow table): re-sync, nothing to change, no duplicates.
    lab.sb.vsctl("set-controller", "br0", "tcp:127.0.0.1:%d" % (OF_PORT + 1))
    wait_for(lambda: not any(s["connected"] for s in
                             (lab.status() or {"switches": [{
                                 "connected": True}]})["switches"]),
             20, "the controller to see the disconnect")
    lab.sb.vsctl("set-controller", "br0", "tcp:127.0.0.1:%d" % OF_PORT)
    st = lab.wait_synced()
    assert st["switches"][0]["last_changes"]["unchanged"] == 2
    assert len(lab.our_flows()) == 2
    c.stdin.close()
    c2.stdin.close()


@pytest.mark.parametrize("mode", ["plain", "ofctl"])
def test_malformed_policy_keeps_previous(lab, mode):
    """A bad policy file is refused with a clear message (lib/panda's, for
    a broken policy rule); the flows keep the previous policy, on every
    bridge, also one that connects afterwards.  'ofctl': the controller
    also checks every action with the patched ovs-ofctl."""
    p1 = policy()
    write_json(lab.policy_file, p1)
    # A second rule with another policy, to check that the refusal is
    # whole (that flow must not change either).
    cfg = {"switches": "*", "rules": [
        {"name": "tcp4", "match": {"eth_type": 2048, "ip_proto": 6},
         "policy": "policy.json"},
        {"name": "udp4", "match": {"eth_type": 2048, "ip_proto": 17},
         "policy": {"id": 8, "kind": "pias", "thresholds": [1000]}}]}
    write_json(lab.config, cfg)
    lab.start_controller(*(["--ofctl", OFCTL] if mode == "ofctl" else []))
    lab.wait_synced()
    good = sorted(f["raw"].split("actions=")[1] for f in lab.flows())
    assert len(good) == 2

    # 1. Not JSON at all (an editor's half-written file).
    with open(lab.policy_file, "w") as f:
        f.write('{"id": 7, "thresholds": [')
    wait_for(lambda: (lab.status() or {}).get("config", {}).get("error"),
             20, "the configuration to be refused")
    st = lab.status()
    assert "not valid JSON" in st["config"]["error"]
    assert lab.policy_file in st["config"]["error"]
    assert st["config"]["generation"] == 1

    # 2. Valid structure, broken policy rule (thresholds not ascending),
    # together with a valid change of the other rule.
    cfg["rules"][1]["policy"]["thresholds"] = [2000]
    write_json(lab.config, cfg)
    write_json(lab.policy_file, policy(thresholds=[500000, 50000]))

    def refused():
        e = (lab.status() or {}).get("config", {}).get("error") or ""
        return "ascending" in e and e
    err = wait_for(refused, 20, "the policy to be refused")
    assert "%s: policy id 7: thresholds: not strictly ascending (50000 " \
        "after 500000)" % lab.policy_file in err, err
    assert lab.status()["config"]["generation"] == 1
    assert "refus" in lab.log()
    # A bridge that connects now gets generation 1 too.
    lab.sb.add_bridge("br1")
    lab.sb.vsctl("set-fail-mode", "br1", "secure", "--",
                 "set-controller", "br1", "tcp:127.0.0.1:%d" % OF_PORT)
    lab.wait_synced(n_switches=2, generation=1)
    for br in ("br0", "br1"):
        assert sorted(f["raw"].split("actions=")[1]
                      for f in lab.flows(br)) == good, br

    # REST sync reports the failure too (409).
    rc, body = lab.rest("sync", check=False)
    assert rc == 1 and body["result"]["config_accepted"] is False, body

    # 3. Fixed: pushed.
    p2 = policy(thresholds=[60000, 600000])
    write_json(lab.policy_file, p2)
    rc, body = lab.rest("sync")
    assert rc == 0, body
    assert body["result"] == {"config_accepted": True,
                              "switches_synced": 2,
                              "switches_failed": 0}, body
    texts = sorted(f["panda"] for f in lab.flows())
    assert texts == sorted([text_of(p2),
                            "id=8,kind=pias,thresholds=2000,dscp=1/2,"
                            "queues=0/1"]), texts


def test_match_refused_by_switch_fails_that_switch(lab):
    """A rule whose match OVS refuses (tcp_dst without ip_proto=6): the
    switch refuses the bundle, so nothing changes on it; it alone fails
    (its status says "refused", with the rule and the prerequisite), the
    generation stays in force (a switch's word does not decide for the
    others, test_controller_peers.py), and the audit does not ask it
    again; the next configuration is pushed to it as usual."""
    write_json(lab.policy_file, policy())
    single_rule_config(lab)
    lab.start_controller("--audit", "1")
    lab.wait_synced()
    before = sorted(f["raw"].split(" actions=")[1] for f in lab.our_flows())
    with open(lab.config) as f:
        cfg = json.load(f)
    good = json.loads(json.dumps(cfg))
    cfg["rules"][0]["match"] = {"eth_type": 2048, "tcp_dst": 80}
    cfg["rules"][1]["priority"] = 1         # a valid change alongside
    write_json(lab.config, cfg)

    def refused():
        st = lab.status() or {"switches": [{}]}
        sw = st["switches"][0]
        return sw.get("state") == "refused" and st
    st = wait_for(refused, 20, "the switch to refuse the match")
    sw = st["switches"][0]
    err = sw["last_error"]
    assert st["config"]["generation"] == 2 and st["config"]["error"] is None
    assert sw["refused_generation"] == 2 and sw["synced_generation"] == 1
    assert "generation 2 refused by switch %s" % sw["dpid"] in err, err
    assert "OFPET_BAD_MATCH/OFPBMC_BAD_PREREQ" in err, err
    assert "rule 'tcp4'" in err and "missing prerequisite" in err, err
    assert sorted(f["raw"].split(" actions=")[1]
                  for f in lab.our_flows()) == before
    # Audits (every second) leave it alone: one refusal logged (the
    # switch's error and the failed sync: two lines).
    time.sleep(2.5)
    assert lab.log().count("OFPBMC_BAD_PREREQ") == 2
    rc, body = lab.rest("sync", check=False)
    assert rc == 1 and body["result"]["switches_failed"] == 1, body
    # A fixed configuration reaches it ('sync' made generation 3 of the
    # same files, refused again).
    good["rules"][1]["priority"] = 1
    write_json(lab.config, good)
    st = lab.wait_synced(generation=4)
    assert st["switches"][0]["refused_generation"] is None
    assert sorted(f["priority"] for f in lab.our_flows()) == [1, 100]


def test_run_refuses_bad_config_at_startup(lab):
    write_json(lab.policy_file, policy(dscp=[46, 26]))
    single_rule_config(lab)
    p = lab.start_controller()
    rc = p.wait(timeout=60)
    lab.ctl = None
    err = p.stderr.read()
    assert rc == 1 and "dscp: 2 values for 3 levels" in err, err
    assert lab.flows() == []


def test_many_bridges_and_goto_table(tmp_path):
    skip_unless_lab()
    lab = Lab(tmp_path, bridges=("br0", "br1", "br2"))
    try:
        for br, dpid in (("br0", "a0"), ("br1", "b1"), ("br2", "b2")):
            lab.sb.vsctl("set", "bridge", br,
                         "other-config:datapath-id=00000000000000%s" % dpid)
        # The operator's own pipeline in br1 table 1 (cookie 0).
        lab.sb.ofctl("-O", "OpenFlow13", "add-flow", "br1",
                     "table=1,priority=0,actions=NORMAL")
        write_json(lab.policy_file, policy())
        switches = ["0xa0", "0xb1", "0xb2"]
        write_json(lab.config, {"switches": switches, "rules": [
            {"name": "all", "dpids": "*", "priority": 100,
             "match": {"eth_type": 2048}, "policy": "policy.json"},
            {"name": "web", "dpids": ["0xb1", "00:00:00:00:00:00:00:b2"],
             "priority": 200,
             "match": {"eth_type": 2048, "ip_proto": 6, "tcp_dst": 80},
             "policy": {"id": 8, "threshold": 500, "thresholds": [1000]},
             "next": "goto_table:1"}]})
        lab.start_controller("--audit", "1")
        st = lab.wait_synced(n_switches=3)
        assert sorted(s["dpid"] for s in st["switches"]) == [
            "0x00000000000000a0", "0x00000000000000b1",
            "0x00000000000000b2"]
        assert len(lab.flows("br0")) == 1
        for br in ("br1", "br2"):
            fl = sorted(lab.flows(br), key=lambda f: f["priority"])
            assert [f["priority"] for f in fl] == [100, 200], fl
            assert fl[1]["actions"] == \
                "panda(id=8,threshold=500,thresholds=1000,dscp=1/2," \
                "queues=0/1),goto_table:1", fl
        assert any(f["table"] == 1 and f["cookie"] == 0
                   for f in lab.all_flows("br1"))

        # Drop 'web' from the configuration: removed from br1 and br2
        # only; the operator's table 1 stays.
        write_json(lab.config, {"switches": switches, "rules": [
            {"name": "all", "dpids": "*", "priority": 100,
             "match": {"eth_type": 2048}, "policy": "policy.json"}]})
        lab.wait_synced(n_switches=3, generation=2)
        for br in ("br0", "br1", "br2"):
            assert [f["priority"] for f in lab.flows(br)] == [100], br
        assert any(f["table"] == 1 for f in lab.all_flows("br1"))

        # Changes behind the controller's back are repaired by the audit.
        lab.sb.ofctl("-O", "OpenFlow13", "del-flows", "br0",
                     "cookie=0x50414e4400000000/0xffffffff00000000")
        lab.sb.ofctl("-O", "OpenFlow13", "mod-flows", "br1",
                     "priority=100,ip,actions=drop")
        # (The audit runs every second: it may have repaired them already,
        # so what it did is read from its log.)
        wait_for(lambda: [f["priority"] for f in lab.flows("br0")] == [100]
                 and [f["priority"] for f in lab.flows("br1")] == [100],
                 20, "the audit to repair br0 and br1")
        wait_for(lambda: "switch 0x00000000000000a0: synced generation 2 "
                 "(audit): unchanged 0, modified 0, deleted 0, added 1"
                 in lab.log() and "switch 0x00000000000000b1: synced "
                 "generation 2 (audit): unchanged 0, modified 1, deleted 0, "
                 "added 0" in lab.log(), 20, "the audit's repairs logged")

        # SIGHUP: reload and re-sync, nothing to change.
        os.kill(lab.ctl.pid, signal.SIGHUP)
        st = lab.wait_synced(n_switches=3, generation=3)
        assert all(s["last_changes"] == {"added": 0, "deleted": 0,
                                         "modified": 0, "unchanged": 1}
                   for s in st["switches"]), st
    finally:
        lab.stop()

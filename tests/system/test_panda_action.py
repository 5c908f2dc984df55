"""System test of the OVS 'panda' action (ovs-patches/panda.series).

Runs the patched ovs-vswitchd (datapath_type=netdev) in network namespaces
with two hosts on one bridge, sends real TCP traffic through it and reads
the DSCP of every packet with tshark on the receiving veth:

  - panda policy: a bulk transfer steps down through the DSCPs of levels
    0..3 (46, 26, 18, 0) in that order; a small-message request/response
    connection keeps DSCP 46 (level 0) for its whole life;
  - PIAS policy, same run: both connections are demoted;
  - a tenant's fake VXLAN and Geneve datagrams (valid headers, the inner
    tuple of a small TCP segment) are UDP, the untracked level, unless the
    policy declares the tunnel;
  - ovs-ofctl dump-flows prints the action exactly as added (the issue's
    example, verbatim), bad arguments are refused naming the field, and
    ovs-appctl dpctl/dump-flows and panda/show show the action and its
    connection table.

Traffic: the load generator.  The bulk transfer is one panda-fg-client
flow answered by panda-fg-server on host a (data a -> b); the small-message
connection is 300 flows of 100 bytes on one pooled connection (a 24-byte
request, a 100-byte answer each: memcached-like).

Build: $PANDA_BUILD_DIR (default <repo>/_build).  Needs root.
"""

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time

import pytest

from pandaovs import paths
from pandalab import loadgen
from pandalab.loadgen import FgServer
from pandalab.sandbox import OvsSandbox, end_process

BUILD = paths.BuildTree()

pytestmark = [
    pytest.mark.usefixtures("ovs_ready"),
    pytest.mark.skipif(not shutil.which("tshark")
                       or not shutil.which("tcpdump"),
                       reason="needs tcpdump and tshark"),
]

# The example of the issue, verbatim.
ISSUE_EXAMPLE = ("panda(id=1,threshold=1460,weights=1460:1/9000:2,"
                 "thresholds=100000/1000000/10000000,dscp=46/26/18/0,"
                 "queues=0/1/2/3)")
# T below the MSS payload (1448 bytes with TCP timestamps), so that the
# bulk flow's full-sized segments count and small messages are compensated.
PANDA = ("panda(id=1,threshold=1000,thresholds=100000/1000000/10000000,"
         "dscp=46/26/18/0,queues=0/1/2/3)")
PIAS = ("panda(id=2,kind=pias,thresholds=10000/1000000/10000000,"
        "dscp=46/26/18/0,queues=0/1/2/3)")
DSCP_OF_LEVEL = [46, 26, 18, 0]

BULK_BYTES = 20 * 1000 * 1000
RR_COUNT = 300
RR_SIZE = 100
REQUEST_BYTES = 24          # a panda-fg-client request (load_generator)
PORTS = {"panda-bulk": 5001, "panda-rr": 5002,
         "pias-bulk": 5003, "pias-rr": 5004}


@pytest.fixture(scope="module")
def sb():
    with OvsSandbox(BUILD.root) as sb:
        sb.add_bridge("br0")
        sb.a = sb.add_host("a", "10.0.0.1/24")
        sb.b = sb.add_host("b", "10.0.0.2/24")
        yield sb


def dump_actions(sb, *args):
    out = sb.ofctl(*args, "dump-flows", "br0", "--no-stats")
    return [line.split("actions=", 1)[1] for line in out.splitlines()
            if "actions=" in line]


def test_ofctl_round_trip(sb):
    for version in ("OpenFlow10", "OpenFlow13", "OpenFlow15"):
        sb.ofctl("del-flows", "br0")
        sb.ofctl("-O", version, "add-flow", "br0",
                 "tcp,actions=%s,normal" % ISSUE_EXAMPLE)
        assert dump_actions(sb, "-O", version) == \
            [ISSUE_EXAMPLE + ",NORMAL"], version

    pias = "panda(id=7,kind=pias,thresholds=5000,dscp=1/2,queues=0/1," \
           "ctl_level=1,floor=-100,idle_reset=500)"
    sb.ofctl("del-flows", "br0")
    sb.ofctl("add-flow", "br0", "ip,actions=%s,normal" % pias)
    assert dump_actions(sb) == [pias + ",NORMAL"]
    sb.ofctl("del-flows", "br0")


@pytest.mark.parametrize("arg,field", [
    ("id=1,dscp=64/0,thresholds=10", "dscp"),
    ("id=1,thresholds=100/10", "thresholds"),
    ("threshold=10", "id"),
    ("id=1,kind=fifo", "kind"),
    ("id=1,weights=100:0.5", "weights"),
])
def test_ofctl_bad_argument(sb, arg, field):
    res = subprocess.run(sb.ns.cmd(sb.bin("utilities/ovs-ofctl"), "add-flow",
                                   "br0", "tcp,actions=panda(%s)" % arg),
                         env=sb.env, capture_output=True, text=True)
    assert res.returncode != 0
    assert "panda: %s" % field in res.stderr, res.stderr
    assert dump_actions(sb) == []


def capture_start(host, path):
    """tcpdump on host's eth0; returns once it says it is listening."""
    p = host.popen("tcpdump", "-i", "eth0", "-w", path, "-s", "128", "-U",
                   "-n", "tcp", stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, text=True)
    while True:
        line = p.stderr.readline()
        if "listening on" in line:
            return p
        if not line:
            end_process(p)
            raise RuntimeError("tcpdump did not start")


def run_connection(sb, tmp, mode, port, amount):
    """One connection through the switch: 'bulk' (one flow of 'amount'
    bytes) or 'rr' ('amount' exchanges of RR_SIZE bytes on one pooled
    connection); the server is on a, the client on b."""
    srv = FgServer(BUILD, tmp, host=sb.a, bind=sb.a.ip, port=port,
                   tag="fg-%d" % port, quiet=True)
    try:
        opts = ({"size": amount, "requests": 1} if mode == "bulk" else
                {"size": RR_SIZE, "requests": amount, "pool": True})
        c = loadgen.start_fg_client(BUILD, sb.a.ip, port, tmp, host=sb.b,
                                    tag="fg-client-%d" % port,
                                    connections=1, quiet=True, **opts)
        assert c.wait(timeout=300) == 0, c.error_tail()
        assert c.result()["flows_completed"] == opts["requests"]
    finally:
        srv.kill()


def capture_stop(p, pcap, host, want):
    """Stops the capture of 'host' once it holds the 'want' payload bytes
    the host received (tcpdump -U writes each packet as it comes), however
    slow the machine."""
    deadline = time.monotonic() + 120
    while received_bytes(pcap, host.ip) < want:
        assert time.monotonic() < deadline, "capture %s incomplete" % pcap
        time.sleep(0.2)
    end_process(p, signal.SIGINT)


def received_bytes(pcap, ip):
    """TCP payload bytes in 'pcap' from other addresses than 'ip'."""
    out = subprocess.run(["tshark", "-r", pcap, "-T", "fields", "-E",
                          "separator=,", "-e", "ip.src", "-e", "tcp.len"],
                         capture_output=True, text=True).stdout
    return sum(int(f[1]) for f in (line.split(",") for line in
                                   out.splitlines())
               if len(f) == 2 and f[1] and f[0] != ip)


def read_packets(pcap):
    """Returns [(src_ip, sport, dport, dscp, tcp_len)] in capture order,
    leaving out SYN, FIN and RST segments (they go at the policy's control
    level whatever the connection's counter)."""
    out = subprocess.run(
        ["tshark", "-r", pcap, "-T", "fields", "-E", "separator=,",
         "-e", "ip.src", "-e", "tcp.srcport", "-e", "tcp.dstport",
         "-e", "ip.dsfield.dscp", "-e", "tcp.len", "-e", "tcp.flags"],
        capture_output=True, text=True, check=True).stdout
    pkts = []
    for line in out.splitlines():
        f = line.split(",")
        if len(f) == 6 and all(f) and not int(f[5], 16) & 0x07:
            pkts.append((f[0], int(f[1]), int(f[2]), int(f[3]), int(f[4])))
    return pkts


def data_dscps(pkts, port, direction="from_server"):
    """DSCPs of the data packets of the connection to server 'port', in
    capture order: from the server (the bulk data, the answers), to it
    (the requests), or "both"."""
    return [p[3] for p in pkts if p[4] > 0 and
            ((direction in ("from_server", "both") and p[1] == port) or
             (direction in ("to_server", "both") and p[2] == port))]


def check_steps_down(dscps, what):
    """The DSCP of the bulk flow's data packets visits every level in
    order (46, 26, 18, 0) and ends at the lowest one."""
    assert dscps, "no data packets captured for %s" % what
    levels = [DSCP_OF_LEVEL.index(d) for d in dscps]
    firsts = [levels.index(lv) if lv in levels else None
              for lv in range(len(DSCP_OF_LEVEL))]
    assert None not in firsts, "%s: levels seen %s" % (what,
                                                        sorted(set(levels)))
    assert firsts == sorted(firsts), "%s: first packet of each level %s" % (
        what, firsts)
    assert levels[0] == 0 and levels[-1] == len(DSCP_OF_LEVEL) - 1, \
        "%s: first level %d, last levels %s" % (what, levels[0], levels[-20:])
    back = sum(1 for x, y in zip(levels, levels[1:]) if y < x)
    assert back <= len(levels) // 100, "%s: %d steps back up" % (what, back)


PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "udp_probe.py")
# A policy whose untracked level (1, DSCP 0) is what UDP gets, and whose
# top level (DSCP 46) is what a young TCP connection of small segments
# gets.
FAKE_POLICY = ("panda(id=9,threshold=1000,thresholds=100000,dscp=46/0,"
               "queues=0/1%s)")


def ip_checksum(header):
    s = sum(int.from_bytes(header[i:i + 2], "big")
            for i in range(0, len(header), 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def fake_tunnel_payload(port):
    """What a tenant sends to UDP port 'port' (4789 or 6081) to pass for a
    tunnel: a valid VXLAN or Geneve header, an Ethernet frame, and in it
    an IPv4 TCP segment of 60 bytes of a made-up connection."""
    tcp = struct.pack("!HHIIBBHHH", 40000, 11211, 1, 1, 5 << 4, 0x10,
                      65535, 0, 0) + b"g" * 60
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0,
                               0, 64, 6, 0, socket.inet_aton("10.9.0.1"),
                               socket.inet_aton("10.9.0.2")))
    ip[10:12] = struct.pack("!H", ip_checksum(bytes(ip)))
    inner = (bytes.fromhex("505400000002505400000001") + b"\x08\x00"
             + bytes(ip) + tcp)
    hdr = (struct.pack("!II", 0x08000000, 42 << 8) if port == 4789
           else struct.pack("!BBHI", 0, 0, 0x6558, 42 << 8))
    return hdr + inner


def fake_tunnels_dscps(sb, policy, n=20):
    """Host a sends 'n' fake VXLAN and 'n' fake Geneve datagrams to host b
    through br0, whose UDP flow runs 'policy'; returns the DSCP counts
    per port that b received ({port: {dscp: count}})."""
    sb.ofctl("del-flows", "br0")
    sb.ofctl("add-flows", "br0", "-",
             input="priority=0,actions=normal\n"
                   "priority=10,udp,actions=%s,normal\n" % policy)
    recv = sb.b.popen("/usr/bin/python3", PROBE, "udprecv", "--ports",
                      "4789,6081", "--expect", str(2 * n), "--duration",
                      "30", stdout=subprocess.PIPE, text=True)
    try:
        assert "listening" in recv.stdout.readline()
        for port in (4789, 6081):
            sb.a.run("/usr/bin/python3", PROBE, "udp", sb.b.ip, str(port),
                     "--count", str(n), "--pps", "200", "--payload-hex",
                     fake_tunnel_payload(port).hex())
        out, _ = recv.communicate(timeout=60)
    finally:
        end_process(recv)
    counts = json.loads(out.splitlines()[-1])["dscp_counts"]
    return {int(p): {int(d): c for d, c in per.items()}
            for p, per in counts.items()}


def test_fake_tunnel_is_udp(sb):
    """A tenant's UDP to the VXLAN or Geneve port, with a valid header and
    the inner tuple of a small TCP segment, is UDP -- the untracked level,
    DSCP 0 -- under a policy that declares no tunnel; only a declaring
    policy (which belongs on flows that match the host's own tunnels:
    docs/ovn.md) classifies it by the inner tuple (DSCP 46, what the
    attack bought before)."""
    n = 20
    got = fake_tunnels_dscps(sb, FAKE_POLICY % "", n)
    assert got == {4789: {0: n}, 6081: {0: n}}, got
    got = fake_tunnels_dscps(sb, FAKE_POLICY % ",tunnels=geneve/vxlan", n)
    assert got == {4789: {46: n}, 6081: {46: n}}, got
    got = fake_tunnels_dscps(sb, FAKE_POLICY % ",tunnels=vxlan", n)
    assert got == {4789: {46: n}, 6081: {0: n}}, got


def test_panda_and_pias_dscp(sb, tmp_path):
    sb.ofctl("del-flows", "br0")
    flows = ["priority=0,actions=normal",
             "priority=5,tcp,actions=%s,normal" % PANDA]
    for name in ("pias-bulk", "pias-rr"):
        for side in ("tp_dst", "tp_src"):
            flows.append("priority=10,tcp,%s=%d,actions=%s,normal"
                         % (side, PORTS[name], PIAS))
    sb.ofctl("add-flows", "br0", "-", input="\n".join(flows) + "\n")

    # Each host captures what it receives, i.e. packets after the switch
    # (its own packets, seen before the switch, are filtered out below).
    os.chmod(str(tmp_path), 0o777)
    pcaps = {h: str(tmp_path / ("%s.pcap" % h.name)) for h in (sb.a, sb.b)}
    caps = [capture_start(h, pcaps[h]) for h in (sb.a, sb.b)]
    tmp = str(tmp_path)
    try:
        run_connection(sb, tmp, "bulk", PORTS["panda-bulk"], BULK_BYTES)
        run_connection(sb, tmp, "rr", PORTS["panda-rr"], RR_COUNT)
        dp_flows = sb.appctl("dpctl/dump-flows")
        run_connection(sb, tmp, "bulk", PORTS["pias-bulk"], BULK_BYTES)
        run_connection(sb, tmp, "rr", PORTS["pias-rr"], RR_COUNT)
        # Every byte was received: b got both bulk flows and the answers,
        # a the requests (24 bytes each).
        capture_stop(caps[1], pcaps[sb.b], sb.b,
                     2 * (BULK_BYTES + RR_COUNT * RR_SIZE))
        capture_stop(caps[0], pcaps[sb.a], sb.a,
                     2 * (1 + RR_COUNT) * REQUEST_BYTES)
    finally:
        for cap in caps:
            end_process(cap, signal.SIGINT)

    # The datapath flows carry the action, policy parameters included.
    assert "panda(id=1,threshold=1000,thresholds=100000/1000000/10000000," \
        "dscp=46/26/18/0,queues=0/1/2/3)" in dp_flows, dp_flows

    pkts = [p for h in (sb.a, sb.b) for p in read_packets(pcaps[h])
            if p[0] != h.ip]
    # Each direction stays in capture order (one capture per direction).

    # Panda: the bulk flow steps down, the small-message flow stays on top
    # in both directions, and the bulk receiver's packets (its request and
    # pure ACKs) stay on top too.
    check_steps_down(data_dscps(pkts, PORTS["panda-bulk"]), "panda bulk")
    rr = data_dscps(pkts, PORTS["panda-rr"], "both")
    assert len(rr) >= 2 * RR_COUNT
    assert set(rr) == {46}, "panda rr DSCPs %s" % sorted(set(rr))
    acks = [p[3] for p in pkts if p[2] == PORTS["panda-bulk"]]
    assert acks and set(acks) == {46}

    # PIAS: counters are bytes sent, so both connections are demoted (the
    # answers: 300 x 100 bytes pass the first threshold, 10000).
    check_steps_down(data_dscps(pkts, PORTS["pias-bulk"]), "pias bulk")
    rr = data_dscps(pkts, PORTS["pias-rr"])
    assert rr[0] == 46 and rr[-1] == 26, \
        "pias rr DSCPs first %d last %d" % (rr[0], rr[-1])

    # The connection tables: both policies, packets at every level.
    show = sb.appctl("panda/show")
    assert "policy 1: panda(id=1,threshold=1000" in show, show
    assert "policy 2: panda(id=2,kind=pias" in show, show
    section = show.split("policy 1:")[1].split("policy 2:")[0] \
        if show.index("policy 1:") < show.index("policy 2:") \
        else show.split("policy 1:")[1]
    per_level = section.split("packets per level:")[1].splitlines()[0]
    counts = [int(x.split(":")[1]) for x in per_level.split()]
    assert len(counts) == 4 and all(counts), per_level

    # panda/flush empties the tables; an unknown policy is an error.
    sb.appctl("panda/flush")
    assert "connections: 0 " in sb.appctl("panda/show", "1")
    res = subprocess.run(sb.ns.cmd(sb.bin("utilities/ovs-appctl"),
                                   "panda/show", "99"),
                         env=sb.env, capture_output=True, text=True)
    assert res.returncode != 0 and "no such panda policy" in res.stderr

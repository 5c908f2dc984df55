"""Userspace TSO (the 10g profile's datapath): OVS 3.1 with
other_config:userspace-tso-enable=true, system (AF_PACKET) ports over veth,
the hosts' tx checksum, TSO, GSO and GRO on (sandbox.host_offloads).

One bulk TCP flow srv -> cli crosses the panda action.  Two captures in the
switch's namespace, both on ports of the bridge:

  - ingress: srv's port, direction in: the super-packets (up to 64 KB) as
    the datapath receives them;
  - wire: cli's port, direction out: the frames after the kernel segmented
    them behind the port's qdisc, where a NIC would (the switch side of the
    veth has TSO off, sandbox.SWITCH_PORT_OFFLOADS).  cli's own capture
    would show GRO's re-coalesced packets instead.

The test checks, against an independent replay of Algorithm 2 over the
ingress capture:

  - the action saw the pre-segmentation sizes: the connection's counter in
    panda/show equals sum(w(size) x size) over the super-packets (T, the
    size-interval weight and the compensation of small packets included),
    and super-packets above the weight's bound were there to count;
  - every segment on the wire is at most one MTU and carries the DSCP of
    the level its super-packet was given (the level after the update, as
    Algorithm 2 has it), and both levels occur;
  - the queue: the bytes of each HTB class of cli's port equal the wire
    bytes of the segments of that queue's level.

A second test runs a flow through panda-sched on cli's port: the
scheduler, which sees whole super-packets, must charge the bytes their
segments put on the wire (ovs-ext/lib/dpif-netdev-sched.c): its sent bytes against the
wire capture of the same packets.

Skips with the reason when the kernel cannot do it (veth without TSO, OVS
refusing userspace TSO).  Build: $PANDA_BUILD_DIR.  Needs root.
"""

import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from pandaovs import paths
from pandalab.lab import FG_PORT, Lab, LabError, PortConfig, wait_until
from pandalab.sandbox import end_process
from pandalab.testbed.pcap import packets, tcp_packets
from pandalab.testbed.topology import parse_panda_show
from pandalab.testbed.trial import tcpdump

BUILD = paths.BuildTree()

pytestmark = [
    pytest.mark.usefixtures("ovs_ready"),
    pytest.mark.skipif(not shutil.which("tcpdump"), reason="needs tcpdump"),
]

MTU = 1500
# T below the MSS, a weight of 3 for payloads above 8000 bytes (only a
# super-packet has them), and alpha_1 crossed after some 100 KB of them.
T = 1000
WEIGHT_ABOVE, WEIGHT = 8000, 300            # hundredths
ALPHA1 = 300000
DSCP = (46, 10)
POLICY = ("panda(id=7,threshold=%d,weights=%d:%d,thresholds=%d,"
          "dscp=%d/%d,queues=0/1)" % (T, WEIGHT_ABOVE, WEIGHT // 100, ALPHA1,
                                      DSCP[0], DSCP[1]))
BULK_BYTES = 4 * 1000 * 1000
HTB_RATE = 200000000        # cli's port: 2 levels, far above one flow's
                            # needs on this path, so it only classifies
SCHED_RATE = 100000000      # panda-sched: shapes the flow (the count it
SCHED_BYTES = 2 * 1000 * 1000   # checks is timing-free)
CONDITIONS = ("userspace TSO; hosts: tx checksum, TSO, GSO, GRO on; switch "
              "ports: TSO, tx checksum off (segmentation after the qdisc); "
              "MTU %d; TCP CUBIC; kernel %s" % (MTU, os.uname().release))


@pytest.fixture(scope="module")
def lab():
    lb = Lab(BUILD.root, [("cli", "10.0.0.1", 1), ("srv", "10.0.0.2", 2)],
             mtu=MTU, static_arp=True, ports=PortConfig(tso=True))
    try:
        lb.start()
    except LabError as e:
        pytest.skip("userspace TSO testbed unavailable: %s" % e)
    try:
        why = tso_unavailable(lb)
        if why:
            pytest.skip(why)
        yield lb
    finally:
        lb.stop()


def tso_unavailable(lb):
    """None if OVS runs userspace TSO and the hosts' veths offload, else
    why not."""
    if not re.search(r"Userspace TCP Segmentation Offloading support "
                     r"enabled", lb.sb.log()):
        return ("ovs-vswitchd did not enable userspace TSO (log: %s)"
                % lb.sb.log()[-500:])
    for h in (lb.cli, lb.srv):
        feats = h.run("ethtool", "-k", "eth0", check=False)
        for feat in ("tcp-segmentation-offload", "tx-checksumming",
                     "generic-receive-offload"):
            if not re.search(r"^%s: on" % feat, feats, re.M):
                return ("the kernel's veth keeps %s off (ethtool -k: %s)"
                        % (feat, feats[:300]))
    return None


def capture(lab, port, direction, path):
    """tcpdump of every frame on switch port 'port' (direction "in" or
    "out"); returns the process once it listens."""
    return tcpdump(lab.sb.ns, path, None, snaplen=128, iface=port,
                   direction=direction)


def stop_capture(p, path, want_payload):
    """Ends capture 'p' once 'path' holds 'want_payload' bytes of TCP
    payload from port FG_PORT (tcpdump -U writes each packet as it comes),
    however slow the machine; returns tcpdump's drop count."""
    wait_until(lambda: sum(x["payload"] for x in tcp_packets(path)
                           if x["sport"] == FG_PORT) >= want_payload,
               120, "%d payload bytes in %s" % (want_payload, path),
               interval=0.2)
    end_process(p, signal.SIGINT)
    err = p.stderr.read() or ""
    m = re.search(r"(\d+) packets? dropped by kernel", err)
    return int(m.group(1)) if m else 0


# One TCP connection that stays open after its data: panda/show lists live
# connections only, and a FIN would end the entry.  The server sends
# 'size' bytes and waits for the client's close; the client reads them,
# says so on stdout and closes when its stdin closes.
SERVER = """
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
print("listening", flush=True)
c, _ = s.accept()
c.sendall(b"x" * int(sys.argv[3]))
c.recv(1)
"""
CLIENT = """
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
left = int(sys.argv[3])
while left:
    b = c.recv(min(left, 1 << 20))
    assert b, "connection closed early"
    left -= len(b)
print("received", flush=True)
sys.stdin.read()
c.close()
"""


class Bulk:
    """One connection srv -> cli carrying 'size' bytes, open until
    close()."""

    def __init__(self, lab, size=BULK_BYTES):
        py = "/usr/bin/python3"
        self.srv = lab.srv.popen(py, "-c", SERVER, lab.srv.ip, FG_PORT, size,
                                 stdout=subprocess.PIPE, text=True)
        assert self.srv.stdout.readline().strip() == "listening"
        self.cli = lab.cli.popen(py, "-c", CLIENT, lab.srv.ip, FG_PORT, size,
                                 stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)

    def received(self):
        """Waits until the client has every byte."""
        line = self.cli.stdout.readline().strip()
        assert line == "received", "client: %r" % line

    def close(self):
        if self.cli.poll() is None:
            self.cli.stdin.close()
        assert self.cli.wait(timeout=60) == 0
        assert self.srv.wait(timeout=60) == 0


def replay(packets):
    """Algorithm 2 (lib/panda/policy.c) over the data packets of one
    connection, in the order the datapath received them: [(seq, end,
    level)] and the final counter."""
    counter = 0
    out = []
    for p in packets:
        size = p["payload"]
        if size < T:
            counter = max(0, counter - (T - size))
        else:
            w = WEIGHT if size > WEIGHT_ABOVE else 100
            counter += size * w // 100
        out.append((p["seq"], (p["seq"] + size) % 2 ** 32,
                    0 if counter <= ALPHA1 else 1))
    return out, counter


def covering(supers, seg):
    """Levels of the super-packets whose sequence range holds 'seg'
    (several after a retransmission)."""
    lo = seg["seq"]
    hi = (lo + seg["payload"]) % 2 ** 32
    return {lv for s, e, lv in supers
            if (lo - s) % 2 ** 32 <= (e - s) % 2 ** 32
            and (hi - s) % 2 ** 32 <= (e - s) % 2 ** 32}


def test_action_sees_super_packets_and_marks_every_segment(lab, tmp_path):
    print("conditions:", CONDITIONS)
    lab.shape(lab.cli.port, HTB_RATE, 2, queue_pkts=1000)
    lab.sb.ofctl("del-flows", "br0")
    lab.sb.ofctl("add-flows", "br0", "-", input="\n".join([
        "priority=1,in_port=1,actions=output:2",
        "priority=1,in_port=2,actions=output:1",
        "priority=10,tcp,in_port=2,actions=%s,output:1" % POLICY]) + "\n")
    before = lab.tc_classes(lab.cli.port)
    os.chmod(str(tmp_path), 0o777)
    ing, wire = str(tmp_path / "ingress.pcap"), str(tmp_path / "wire.pcap")
    caps = [capture(lab, lab.srv.port, "in", ing),
            capture(lab, lab.cli.port, "out", wire)]
    flow = Bulk(lab)
    try:
        flow.received()
        # While the connection is open: its counter, and every packet srv
        # sent it is in both captures and through cli's qdisc.
        show = parse_panda_show(lab.sb.appctl("panda/show", "7"))
        drops = [stop_capture(caps[0], ing, BULK_BYTES),
                 stop_capture(caps[1], wire, BULK_BYTES)]
        after = lab.tc_classes(lab.cli.port)
    finally:
        for p in caps:
            end_process(p, signal.SIGINT)
        flow.close()
    assert drops == [0, 0], "tcpdump lost packets: %s" % drops

    data = [p for p in tcp_packets(ing) if p["sport"] == FG_PORT
            and p["payload"]]
    supers, counter = replay(data)
    sizes = sorted(p["payload"] for p in data)
    heavy = sum(1 for s in sizes if s > WEIGHT_ABOVE)
    print("ingress: %d data packets, payload max %d, median %d, %d above "
          "%d bytes (weight %g); counter replayed %d"
          % (len(sizes), sizes[-1], sizes[len(sizes) // 2], heavy,
             WEIGHT_ABOVE, WEIGHT / 100, counter))
    # Super-packets crossed the datapath whole, and weighed more.
    assert sizes[-1] > 16 * (MTU - 40), sizes[-10:]
    assert heavy > 0
    conns = [c for c in show[7]["connections"] if c["sport"] == FG_PORT]
    assert len(conns) == 1, show
    assert conns[0]["counter"] == counter, (conns[0], counter)

    segs = [p for p in tcp_packets(wire) if p["sport"] == FG_PORT]
    assert max(p["ip_len"] for p in segs) <= MTU
    wire_bytes = [0, 0]
    wrong = []
    for s in segs:
        if not s["payload"]:
            # Bare SYN/FIN: the control level (0).
            assert s["dscp"] == DSCP[0], s
            wire_bytes[0] += s["ip_len"] + 14
            continue
        lv = DSCP.index(s["dscp"]) if s["dscp"] in DSCP else None
        if lv is None or lv not in covering(supers, s):
            wrong.append(s)
        else:
            wire_bytes[lv] += s["ip_len"] + 14
    # Frames of anything else (the switch-side veth's own IPv6 stack: a
    # router or neighbour solicitation) have no queue: class 1:1.
    other = sum(orig for _, _, orig in packets(wire)) - sum(wire_bytes)
    print("wire: %d segments, %d with a wrong DSCP; bytes per level %s; "
          "%d bytes of other frames" % (len(segs), len(wrong), wire_bytes,
                                        other))
    assert not wrong, wrong[:5]
    assert all(wire_bytes), wire_bytes
    wire_bytes[0] += other
    # Queue: level l's segments went through HTB class 1:l+1, as one
    # super-packet each; the class counts the bytes of its segments.
    got = [after["1:%d" % (q + 1)]["bytes"] - before["1:%d" % (q + 1)]["bytes"]
           for q in (0, 1)]
    print("HTB class bytes %s" % got)
    assert got == wire_bytes, (got, wire_bytes)


def test_sched_charges_the_wire_bytes(lab, tmp_path):
    """panda-sched on cli's port sees whole super-packets; it must count
    the bytes their segments put on the wire (ovs-ext/lib/dpif-netdev-sched.c): its
    sent bytes against the frames captured on the port, same packets."""
    print("conditions:", CONDITIONS)
    lab.shape(lab.cli.port, SCHED_RATE, 2, qos_type="panda-sched")
    lab.sb.ofctl("del-flows", "br0")
    lab.sb.ofctl("add-flows", "br0", "-", input="\n".join([
        "priority=1,in_port=1,actions=output:2",
        "priority=1,in_port=2,actions=output:1"]) + "\n")
    before = lab.sched_show(lab.cli.port)["levels"]
    os.chmod(str(tmp_path), 0o777)
    ing, wire = str(tmp_path / "ingress.pcap"), str(tmp_path / "wire.pcap")
    caps = [capture(lab, lab.srv.port, "in", ing),
            capture(lab, lab.cli.port, "out", wire)]
    flow = Bulk(lab, SCHED_BYTES)
    try:
        flow.received()
        wait_until(lambda: not lab.sched_show(lab.cli.port)["port"].get(
            "backlog_p"), 60, "the scheduler to drain")
        drops = [stop_capture(caps[0], ing, SCHED_BYTES),
                 stop_capture(caps[1], wire, SCHED_BYTES)]
        after = lab.sched_show(lab.cli.port)["levels"]
    finally:
        for p in caps:
            end_process(p, signal.SIGINT)
        flow.close()
    assert drops == [0, 0], "tcpdump lost packets: %s" % drops
    sent_b = sum(a["sent_b"] - b["sent_b"] for a, b in zip(after, before))
    sent_p = sum(a["sent_p"] - b["sent_p"] for a, b in zip(after, before))
    supers = [p for p in tcp_packets(ing) if p["sport"] == FG_PORT]
    segs = [p for p in tcp_packets(wire) if p["sport"] == FG_PORT]
    own = sum(p["ip_len"] + 14 for p in supers)
    # Only what srv sent crossed the scheduler (the switch-side veth's own
    # IPv6 stack may send a frame too, straight to the qdisc).
    on_wire = sum(p["ip_len"] + 14 for p in segs)
    big = sum(1 for p in supers if p["ip_len"] > MTU)
    print("panda-sched at %d Mbit/s: %d packets (%d above the MTU), %d "
          "bytes charged; their own size %d bytes; the wire %d segments, "
          "%d bytes" % (SCHED_RATE // 1000000, sent_p, big, sent_b, own,
                        len(segs), on_wire))
    assert big > 0 and sent_p == len(supers)
    # Charged the segments' headers (3-4% of the bytes), up to one
    # segment per super-packet: OVS 3.1's netdev-linux cuts segments 2
    # bytes short of the MSS, so the kernel may make one segment more.
    assert on_wire - big * 66 <= sent_b <= on_wire, (sent_b, on_wire)
    assert sent_b - own > (on_wire - own) / 2

"""The tc eBPF classifier (bpf/panda-cls.bpf.c) and its loader panda-bpf:

  - replay equivalence: the same capture through lib/panda's connection
    table (panda-bench --replay) and through the BPF program
    (panda-bpf replay, BPF_PROG_TEST_RUN) gives every packet the same
    level, DSCP and queue, for every policy kind; the capture mixes IPv4
    and IPv6 connections (SYN, data, FIN, RST, resumed ones), VLAN tags,
    Geneve and VXLAN packets (looked into only under a policy that
    declares the tunnels), UDP, fragments, ARP;
  - on veths between two network namespaces, with real TCP through the
    classes OVS's linux-htb makes (plain tc): a bulk connection descends,
    a request/response connection stays at level 0; the DSCP on the wire
    (ECN kept, IPv4 checksums right), the htb class counters and the
    program's counters agree packet for packet; the live marks are what a
    replay of the capture gives;
  - set-policy replaces the policy atomically and keeps the counters and
    the table; a bad policy is refused with lib/panda's message and the
    running one stays; the policy's idle_reset restarts a silent
    connection's counter;
  - a flood of distinct tuples through a small table keeps the established
    connections' counters (the LRU's doing; evictions counted);
  - detach removes the filter and the clsact qdisc it added; detach --all
    unloads.

Needs root (BPF, network namespaces); skips, saying why, where panda-bpf
is not built or the kernel cannot run the classifier.  About 20 s.
"""
import os
import random
import signal
import socket
import struct
import subprocess
import time

import pytest

from pandaovs import bpfcls, paths

BUILD = paths.BuildTree()
HERE = os.path.dirname(os.path.abspath(__file__))
TRAFFIC = os.path.join(HERE, "bpf_traffic.py")
PY = "/usr/bin/python3"

# Four levels, distinct DSCPs (the level can be read back from the wire),
# queue i = level i.
POLICY = ("id=7,threshold=1000,thresholds=20000/200000/2000000,"
          "dscp=46/26/18/8,queues=0/1/2/3")
POLICIES = {
    "panda": POLICY,
    "panda-tunnels": POLICY + ",tunnels=geneve/vxlan",
    "panda-weights": ("id=1,threshold=1200,weights=3000:2/9000:4,"
                      "thresholds=5000/50000/500000/5000000,ctl_level=1,"
                      "untracked_level=2,floor=-3000"),
    "pias": "id=2,kind=pias,thresholds=3000/30000/300000",
    "compose": ("id=3,kind=compose,match=get\\x20:0/set\\x20:2,app=46:1,"
                "length=1400:3,threshold=500,thresholds=5000/50000/500000"),
    "match": "id=4,kind=match,match=get\\x20:0/VALUE:1,levels=3",
    "app": "id=5,kind=app,app=46:0/10:1,levels=3",
    "length": "id=6,kind=length,length=1000:2/200:1,levels=3",
}


@pytest.fixture(scope="module")
def tools():
    if os.geteuid() != 0:
        pytest.skip("needs root (BPF, network namespaces)")
    why = bpfcls.missing(BUILD)
    if why:
        pytest.skip(why)
    if not BUILD.has("tools/panda-bench"):
        pytest.skip("tools/panda-bench is not built")
    probe = bpfcls.Classifier(BUILD).probe()
    if probe:
        pytest.skip("panda-bpf probe: %s" % probe)
    return BUILD.bin(bpfcls.LOADER), BUILD.tool("panda-bench")


# ---- Frames and captures. ----

def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def eth(payload, ethertype, vlans=()):
    hdr = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01"
    for tpid, vid in vlans:
        hdr += struct.pack("!HH", tpid, vid)
    return hdr + struct.pack("!H", ethertype) + payload


def ipv4(src, dst, proto, l4, tos=0, frag=0):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(l4), 1, frag, 64,
                    proto, 0, socket.inet_aton(src), socket.inet_aton(dst))
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + l4


def ipv6(src, dst, nxt, l4, tc=0):
    return struct.pack("!IHBB16s16s", 6 << 28 | tc << 20, len(l4), nxt, 64,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + l4


FIN, SYN, RST, PSH, ACK = 1, 2, 4, 8, 16


def tcp(sport, dport, flags, payload=b""):
    return struct.pack("!HHIIBBHHH", sport, dport, 1, 1, 5 << 4, flags,
                       65535, 0, 0) + payload


def udp(sport, dport, payload):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def geneve(inner):
    return struct.pack("!BBHI", 1, 0, 0x6558, 42 << 8) + b"\0" * 4 + inner


def vxlan(inner):
    return struct.pack("!II", 0x08000000, 42 << 8) + inner


def write_pcap(path, frames):
    """frames: [(seconds, bytes)]."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for ts, fr in frames:
            f.write(struct.pack("<IIII", int(ts), int(ts % 1 * 1e6),
                                len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    """[(seconds, bytes)] of a little- or big-endian microsecond pcap."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic == 0xa1b2c3d4 else ">"
    off, out = 24, []
    while off + 16 <= len(data):
        sec, usec, caplen, _ = struct.unpack(end + "IIII", data[off:off + 16])
        out.append((sec + usec / 1e6, data[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return out


def mixed_capture(path, seed=1):
    """A capture that exercises every path of the classifier: IPv4 and IPv6
    TCP connections of several kinds (requests, bulk, mixed; SYN, FIN, RST,
    data after FIN, a SYN after FIN), some with DSCP 46 or 10 set by the
    application, VLAN-tagged ones, connections inside Geneve and VXLAN,
    UDP, ICMP, IPv4 later fragments, ARP.  Timestamps 100 us apart."""
    rng = random.Random(seed)
    frames = []
    conns = []
    for i in range(40):
        fam = 6 if i % 5 == 4 else 4
        kind = ("rr", "bulk", "mixed", "get", "set")[i % 5 if i % 7 else 1]
        wrap = ("plain", "plain", "vlan", "geneve", "vxlan")[i % 5] \
            if i % 3 == 0 else "plain"
        conns.append({"fam": fam, "kind": kind, "wrap": wrap,
                      "sport": 20000 + i, "dport": 11211 if i % 2 else 80,
                      "src": ("10.1.%d.%d" % (i // 200, i % 200 + 1)
                              if fam == 4 else "2001:db8::%x" % (i + 1)),
                      "tos": (46 << 2 if i % 6 == 1
                              else 10 << 2 if i % 6 == 2 else 0) | i % 3,
                      "state": "new", "left": rng.randint(20, 120)})

    def frame(c, flags, payload=b""):
        l4 = tcp(c["sport"], c["dport"], flags, payload)
        if c["fam"] == 4:
            ip = ipv4(c["src"], "10.2.0.1", 6, l4, c["tos"])
            inner = eth(ip, 0x0800)
        else:
            ip = ipv6(c["src"], "2001:db8:ffff::1", 6, l4, c["tos"])
            inner = eth(ip, 0x86dd)
        if c["wrap"] == "vlan":
            return eth(ip, 0x0800 if c["fam"] == 4 else 0x86dd,
                       vlans=[(0x8100, 7)])
        if c["wrap"] in ("geneve", "vxlan"):
            port = 6081 if c["wrap"] == "geneve" else 4789
            tun = geneve(inner) if c["wrap"] == "geneve" else vxlan(inner)
            return eth(ipv4("192.168.0.1", "192.168.0.2", 17,
                            udp(33000 + c["sport"] % 100, port, tun)),
                       0x0800)
        return inner

    def payload(c):
        k = c["kind"]
        if k == "rr":
            return b"q" * rng.randint(20, 200)
        if k == "bulk":
            return b"b" * rng.choice((1448, 1448, 1448, 9000, 64000))
        if k == "get":
            return b"get key%d\r\n" % rng.randint(0, 999)
        if k == "set":
            return b"set key 0 0 1400\r\n" + b"v" * rng.randint(100, 1400)
        return b"m" * rng.choice((60, 300, 1448, 1448, 4000))

    live = list(range(len(conns)))
    while live:
        r = rng.random()
        if r < 0.03:
            frames.append(eth(b"\0\1\x08\0\6\4\0\1" + b"\0" * 20, 0x0806))
            continue
        if r < 0.06:
            frames.append(eth(ipv4("10.3.0.1", "10.3.0.2", 17,
                                   udp(53, 5353, b"u" * rng.randint(1, 900)),
                                   46 << 2), 0x0800))
            continue
        if r < 0.07:
            frames.append(eth(ipv4("10.3.0.1", "10.3.0.2", 6,
                                   b"f" * 200, 0, 0x2000 | 185), 0x0800))
            continue
        if r < 0.08:
            frames.append(eth(ipv4("10.3.0.1", "10.3.0.2", 1,
                                   b"\x08\0\0\0\0\0\0\0" + b"p" * 56),
                              0x0800))
            continue
        c = conns[rng.choice(live)]
        if c["state"] == "new":
            frames.append(frame(c, SYN))
            c["state"] = "open"
        elif c["left"] > 0:
            c["left"] -= 1
            frames.append(frame(c, ACK | PSH, payload(c)))
            if rng.random() < 0.3:
                frames.append(frame(c, ACK))
        elif c["state"] == "open":
            frames.append(frame(c, ACK | (RST if rng.random() < 0.2
                                          else FIN)))
            c["state"] = "ended"
            if rng.random() < 0.3:
                # A retransmission after the FIN, or the tuple reused.
                c["left"] = rng.randint(2, 10)
                if rng.random() < 0.5:
                    c["state"] = "new"
        else:
            live.remove(conns.index(c))
    write_pcap(path, [(1000 + i * 1e-4, f) for i, f in enumerate(frames)])
    return len(frames)


def replay_both(tools, pcap, policy, capacity=None):
    """The lines of panda-bench --replay and of panda-bpf replay, and the
    latter's summary (stderr)."""
    bpf, bench = tools
    extra = ["--capacity", str(capacity)] if capacity else []
    a = subprocess.run([bench, "--replay", pcap, "--policy", policy] + extra,
                       capture_output=True, text=True, timeout=300)
    assert a.returncode == 0, a.stderr
    b = subprocess.run([bpf, "replay", "--policy-text", policy, pcap]
                       + extra, capture_output=True, text=True, timeout=300)
    assert b.returncode == 0, b.stderr
    return a.stdout.splitlines(), b.stdout.splitlines(), b.stderr


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_replay_equivalence(tools, tmp_path, name):
    pcap = str(tmp_path / "mixed.pcap")
    n = mixed_capture(pcap)
    lib, bpf, _ = replay_both(tools, pcap, POLICIES[name])
    assert len(lib) == len(bpf) == n
    diff = [(x, y) for x, y in zip(lib, bpf) if x != y]
    assert not diff, "first differences (lib/panda, BPF): %s" % diff[:5]
    # The capture exercised what it is meant to: frames that are not IP,
    # and several levels.
    levels = {line.split()[1] for line in lib}
    assert "-" in levels
    assert len(levels - {"-"}) >= 2, levels


def tunnel_indexes(pcap):
    """The indexes (from 1, as the replays number packets) of the
    capture's frames that are UDP to the Geneve or the VXLAN port."""
    out = []
    for i, (_, fr) in enumerate(read_pcap(pcap), 1):
        if struct.unpack("!H", fr[12:14])[0] == 0x0800 and fr[23] == 17:
            ihl = (fr[14] & 0xf) * 4
            dport = struct.unpack("!H", fr[14 + ihl + 2:14 + ihl + 4])[0]
            if dport in (6081, 4789):
                out.append(i)
    return out


def test_tunnels_only_where_declared(tools, tmp_path):
    """The capture's Geneve and VXLAN packets are classified by their
    inner connection only under a policy that declares the tunnels; under
    the same policy without the declaration every one of them is UDP, the
    untracked level (3, DSCP 8, queue 3) -- in lib/panda's table and in
    the BPF program alike."""
    pcap = str(tmp_path / "mixed.pcap")
    mixed_capture(pcap)
    tunnelled = tunnel_indexes(pcap)
    assert len(tunnelled) > 50, len(tunnelled)
    lib, bpf, _ = replay_both(tools, pcap, POLICY)
    assert lib == bpf
    udp = [lib[i - 1] for i in tunnelled if lib[i - 1] != "%d 3 8 3" % i]
    assert not udp, udp[:5]
    lib, bpf, _ = replay_both(tools, pcap, POLICY + ",tunnels=geneve/vxlan")
    assert lib == bpf
    # Their inner connections are young (the capture's are far below the
    # first threshold): the top level, where UDP would be at the bottom.
    levels = {lib[i - 1].split()[1] for i in tunnelled}
    assert levels == {"0"}, levels


def test_flood_keeps_established(tools, tmp_path):
    """A table of 2048 connections; 200 established connections send a
    1448-byte segment each per round, 35 rounds; from the sixth round on,
    each round also brings 667 new tuples of a flood (20000 in all, one
    100-byte packet each).  Every established connection keeps its counter
    (its level in the last round is the one it has without the flood), in
    lib/panda's table (which refuses the flood's tuples a place among
    established ones) and in the BPF LRU (which evicts the flood's tuples
    as the least recently used; its evictions are counted)."""
    est, flood, cap, warm, rounds = 200, 20000, 2048, 5, 35

    def est_frame(i):
        return eth(ipv4("10.5.%d.%d" % (i // 250, i % 250 + 1), "10.6.0.1",
                        6, tcp(30000, 80, ACK, b"e" * 1448)), 0x0800)

    def flood_frame(j):
        return eth(ipv4("10.%d.%d.%d" % (100 + j // 65536, j // 256 % 256,
                                         j % 256), "10.7.0.1", 6,
                        tcp(40000 + j % 1000, 80, ACK, b"f" * 100)), 0x0800)

    def capture(path, with_flood):
        frames, last = [], 0
        n = rounds - warm
        for r in range(rounds):
            last = len(frames)
            frames += [est_frame(i) for i in range(est)]
            if with_flood and r >= warm:
                k = r - warm
                frames += [flood_frame(j) for j in
                           range(k * flood // n, (k + 1) * flood // n)]
        write_pcap(path, [(1000 + k * 1e-5, f) for k, f in
                          enumerate(frames)])
        return last             # Index of the last round's first frame.

    quiet, loud = str(tmp_path / "quiet.pcap"), str(tmp_path / "loud.pcap")
    q0 = capture(quiet, False)
    l0 = capture(loud, True)
    lib_q, bpf_q, _ = replay_both(tools, quiet, POLICY, cap)
    lib_l, bpf_l, summary = replay_both(tools, loud, POLICY, cap)
    want = [line.split()[1] for line in lib_q[q0:q0 + est]]
    assert set(want) == {"1"}, want     # 35 x 1448 B: above alpha_0.
    assert [line.split()[1] for line in bpf_q[q0:q0 + est]] == want
    assert [line.split()[1] for line in lib_l[l0:l0 + est]] == want
    assert [line.split()[1] for line in bpf_l[l0:l0 + est]] == want
    evicted = int(summary.split("evicted")[1].split()[0])
    print("\nflood through a %d-entry LRU: %s" % (cap, summary.strip()))
    assert evicted >= flood + est - cap


# ---- Veths with real TCP. ----

NS_A, NS_B = "bpfcls-a-%d" % os.getpid(), "bpfcls-b-%d" % os.getpid()
DEV_A, DEV_B = "bpfcls0", "bpfcls1"
RATE = 50000000
BULK_PORT, RR_PORT = 5801, 5802


def sh(*args, check=True):
    return subprocess.run(list(args), check=check, capture_output=True,
                          text=True)


def nsx(ns, *args, check=True):
    return sh("ip", "netns", "exec", ns, *args, check=check)


@pytest.fixture(scope="module")
def veths(tools):
    for ns in (NS_A, NS_B):
        sh("ip", "netns", "add", ns)
    try:
        sh("ip", "link", "add", DEV_A, "netns", NS_A, "type", "veth",
           "peer", "name", DEV_B, "netns", NS_B)
        for ns, dev, addr in ((NS_A, DEV_A, "10.77.0.1/24"),
                              (NS_B, DEV_B, "10.77.0.2/24")):
            nsx(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            nsx(ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
            nsx(ns, "sysctl", "-qw", "net.ipv4.tcp_ecn=1")
            nsx(ns, "ip", "addr", "add", addr, "dev", dev)
            nsx(ns, "ip", "link", "set", dev, "up")
            nsx(ns, "ip", "link", "set", "lo", "up")
            # A GSO packet crosses the veth whole (TSO on the sender, no
            # GRO on the receiver), so the capture holds the packets the
            # program saw, one for one.
            nsx(ns, "ethtool", "-K", dev, "gro", "off")
        bpfcls.install_htb(DEV_A, RATE, 4, netns=NS_A)
        server = subprocess.Popen(["ip", "netns", "exec", NS_B, PY, TRAFFIC,
                                   "serve", str(BULK_PORT), str(RR_PORT)])
        time.sleep(0.3)
        yield
        server.kill()
        server.wait()
    finally:
        for ns in (NS_A, NS_B):
            sh("ip", "netns", "del", ns, check=False)


@pytest.fixture
def classifier(veths, tmp_path):
    mnt = tmp_path / "bpffs"
    mnt.mkdir()
    sh("mount", "-t", "bpf", "bpf", str(mnt))
    c = bpfcls.Classifier(BUILD, pin_dir=str(mnt / "panda"))
    yield c
    c.run("detach", "--all", check=False)
    sh("umount", str(mnt), check=False)


class Capture:
    """tcpdump on DEV_B in NS_B, stopped by pid."""

    def __init__(self, path):
        self.path = path
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", NS_B, "tcpdump", "-i", DEV_B, "-U",
             "-B", "8192", "-s", "128", "-w", path],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)

    def stop(self):
        time.sleep(0.3)
        self.proc.send_signal(signal.SIGINT)
        err = self.proc.communicate(timeout=10)[1]
        assert "\n0 packets dropped by kernel" in err, err
        return read_pcap(self.path)


def from_a(frames):
    """The IPv4 packets that DEV_A sent: (dscp, ecn, sport, dport,
    payload, checksum ok)."""
    out = []
    for _, f in frames:
        if struct.unpack("!H", f[12:14])[0] != 0x0800:
            continue
        ip = f[14:34]
        if socket.inet_ntoa(ip[12:16]) != "10.77.0.1":
            continue
        ihl = (ip[0] & 15) * 4
        l4 = f[14 + ihl:]
        sport, dport = struct.unpack("!HH", l4[:4]) if ip[9] == 6 else (0, 0)
        doff = (l4[12] >> 4) * 4 if ip[9] == 6 else 0
        tot = struct.unpack("!H", ip[2:4])[0]
        out.append((ip[1] >> 2, ip[1] & 3, sport, dport, tot - ihl - doff,
                    csum(f[14:14 + ihl]) == 0))
    return out


def test_tcp_levels_dscp_and_classes(tools, classifier, tmp_path):
    pcap = str(tmp_path / "wire.pcap")
    cap = Capture(pcap)
    classifier.attach([DEV_A], netns=NS_A, policy_text=POLICY,
                      capacity=4096)
    res = nsx(NS_A, PY, TRAFFIC, "client", "10.77.0.2", str(BULK_PORT),
              str(6 * 1000 * 1000), str(RR_PORT), "300")
    print("\ntraffic: %s" % res.stdout.strip())
    time.sleep(1)
    show = classifier.show()
    classes = bpfcls.htb_class_packets(DEV_A, NS_A)
    frames = cap.stop()
    pkts = from_a(frames)

    dscp_level = {46: 0, 26: 1, 18: 2, 8: 3}
    # Every IPv4 packet the program saw went out marked, ECN kept, its
    # header checksum right.
    assert all(p[0] in dscp_level for p in pkts), \
        {p[0] for p in pkts} - set(dscp_level)
    assert all(p[5] for p in pkts), "IPv4 header checksum wrong"
    data = [p for p in pkts if p[4] > 0]
    assert sum(1 for p in data if p[1] == 2) > 0.9 * len(data), \
        "ECT(0) lost on data packets"
    # The program's counters, the wire and the htb classes agree: packets
    # per level as captured; segments (a GSO packet's, as the qdisc counts
    # them) per level in the classes (ARP, not IP, in the default class).
    wire = [0] * 4
    for p in pkts:
        wire[dscp_level[p[0]]] += 1
    assert show["packets"][:4] == wire, (show["packets"], wire)
    segs = show["segments"]
    assert show["counters"]["not_ip"] + segs[0] == classes.get(1, 0), \
        (classes, show)
    for lv in (1, 2, 3):
        assert classes.get(lv + 1, 0) == segs[lv], (lv, classes, segs)
    assert sum(segs) > sum(wire)        # GSO packets went through.
    # The bulk connection descended to the lowest level; the
    # request/response connection stayed on top.
    bulk = [dscp_level[p[0]] for p in data if p[3] == BULK_PORT]
    rr = [dscp_level[p[0]] for p in pkts if p[3] == RR_PORT]
    assert bulk and bulk[-1] == 3 and bulk[len(bulk) // 2] >= 2, bulk[-5:]
    assert rr.count(0) >= 0.95 * len(rr), rr
    assert show["table"]["entries4"] >= 2
    assert show["counters"]["dscp_written"] > 0

    # Live marks = replay.  The wire's order is not the program's: htb
    # serves a class within its guaranteed rate before one that borrows,
    # whatever their priorities.  A connection's packets reached the
    # program in the order of their TCP sequence numbers (no loss here, so
    # no retransmission), so DEV_A's packets sorted that way, connection by
    # connection, are the sequence the program classified; through
    # lib/panda's table and through the BPF program it gives every packet
    # the level it carried on the wire.
    lib_all, bpf_all, _ = replay_both(tools, pcap, POLICY)
    assert lib_all == bpf_all
    mine = [(t, f) for t, f in frames if f[12:14] == b"\x08\x00"
            and socket.inet_ntoa(f[26:30]) == "10.77.0.1" and f[23] == 6]

    def order(item):
        k, (t, f) = item
        l4 = f[14 + (f[14] & 15) * 4:]
        return (l4[:4], struct.unpack("!I", l4[4:8])[0], k)

    mine = [x for _, x in sorted(enumerate(mine), key=order)]
    sorted_pcap = str(tmp_path / "sorted.pcap")
    write_pcap(sorted_pcap, mine)
    lib, bpf, _ = replay_both(tools, sorted_pcap, POLICY)
    assert lib == bpf
    live = [(dscp_level[f[15] >> 2], int(line.split()[1]))
            for (_, f), line in zip(mine, lib)]
    assert len(live) == len(pkts)
    assert all(a == b for a, b in live), \
        [(i, x) for i, x in enumerate(live) if x[0] != x[1]][:5]

    # Histograms in ovs-appctl panda/histogram's text.
    from pandaovs import sizehist
    h = sizehist.parse(classifier.histogram())[7]
    assert h.packets() == sum(1 for p in pkts if p[2] and p[4] > 0)
    assert h.packets([3]) > 0 and h.packets([0]) > 0
    assert max(h.payload[3]) > 2048         # GSO packets, counted whole

    # panda-controller tune-bpf's round on this host: it reads the same
    # histogram, runs panda-model on it and pushes the proposal through
    # panda-bpf set-policy (same id: the counters and table stay).
    from pandaovs.controller import autotune, bpfhosts
    model = BUILD.bin("tools/panda-model")
    host = bpfhosts.Host("local", [classifier.program, "--pin-dir",
                                   classifier.pin_dir])
    assert host.histograms()[7].payload == h.payload
    st = autotune.Settings(model=model, cdf=paths.cdf("web-search.cdf"),
                           load=0.6, min_packets=10, confirm=1,
                           min_interval=0, margin=0.01, source_cap=1)
    d = bpfhosts.BpfTuner([host], st).round()
    assert d["action"] == "push" and d["pushed"] == ["local"], d
    now = classifier.show()["policy"]
    assert now["id"] == 7 and now["text"] == d["proposed"] != POLICY


def test_policy_replace_and_bad_policy(tools, classifier):
    classifier.attach([DEV_A], netns=NS_A, policy_text=POLICY)
    nsx(NS_A, PY, TRAFFIC, "bulk", "10.77.0.2", str(BULK_PORT),
        str(3 * 1000 * 1000))
    before = classifier.show()
    assert before["policy"]["generation"] == 1
    # Same id, other thresholds and DSCPs: counters and table kept.
    new = POLICY.replace("20000/200000/2000000", "10000/100000/1000000") \
        .replace("46/26/18/8", "46/26/18/10")
    out = classifier.set_policy(new)
    assert "policy 2:" in out
    after = classifier.show()
    assert after["policy"]["generation"] == 2
    assert "dscp=46/26/18/10" in after["policy"]["text"]
    assert after["packets"] == before["packets"]
    assert after["table"]["entries4"] == before["table"]["entries4"]
    # A bad policy: lib/panda's message, nothing changed.
    with pytest.raises(bpfcls.BpfError) as e:
        classifier.set_policy("id=7,thresholds=300/200")
    assert "bad policy, nothing changed" in str(e.value)
    assert "thresholds" in str(e.value)
    assert classifier.show()["policy"] == after["policy"]
    with pytest.raises(bpfcls.BpfError):
        classifier.set_policy("id=7,kind=nonsense")
    # The new policy runs: more bulk lands at the new lowest level's DSCP.
    nsx(NS_A, PY, TRAFFIC, "bulk", "10.77.0.2", str(BULK_PORT),
        str(2 * 1000 * 1000))
    assert classifier.show()["packets"][3] > after["packets"][3]


def test_idle_reset(tools, classifier):
    """idle_reset=300: a bulk connection silent for 0.6 s starts again at
    level 0 (the 15 kB it sends then stay below alpha_0); the silence of
    the table's idle timeout (2 minutes) is not needed."""
    policy = POLICY.replace("id=7,", "id=8,") + ",idle_reset=300"
    classifier.attach([DEV_A], netns=NS_A, policy_text=policy)
    nsx(NS_A, PY, TRAFFIC, "bulk", "10.77.0.2", str(BULK_PORT),
        str(3 * 1000 * 1000), "15000", "600")
    show = classifier.show()
    assert show["counters"]["idle_resets"] == 1
    assert show["counters"]["expired"] == 0
    assert show["segments"][0] >= 15000 // 1448, show["segments"]
    assert show["segments"][3] > 0


def test_detach_clean(tools, classifier):
    classifier.attach([DEV_A], netns=NS_A, policy_text=POLICY)
    assert "clsact" in nsx(NS_A, "tc", "qdisc", "show", "dev",
                           DEV_A).stdout
    assert classifier.show()["interfaces"][0]["attached"]
    out = classifier.detach([DEV_A], netns=NS_A)
    assert "detached" in out
    assert "bpf" not in nsx(NS_A, "tc", "filter", "show", "dev", DEV_A,
                            "egress").stdout
    assert "clsact" not in nsx(NS_A, "tc", "qdisc", "show", "dev",
                               DEV_A).stdout
    # Still loaded, with its counters, until detach --all.
    assert classifier.loaded()
    with pytest.raises(bpfcls.BpfError) as e:
        classifier.detach([DEV_A], netns=NS_A)
    assert "not attached" in str(e.value)
    classifier.attach([DEV_A], netns=NS_A)
    # A half-removed instance (a pin gone): other commands refuse it,
    # saying so; detach --all still detaches and removes the rest.
    os.unlink(os.path.join(classifier.pin_dir, "stats"))
    with pytest.raises(bpfcls.BpfError) as e:
        classifier.show()
    assert "detach --all cleans it up" in str(e.value)
    assert "unloaded" in classifier.detach_all()
    assert not classifier.loaded()
    assert not os.path.exists(classifier.pin_dir)
    assert "clsact" not in nsx(NS_A, "tc", "qdisc", "show", "dev",
                               DEV_A).stdout
    # The htb root the test made stays.
    assert "htb" in nsx(NS_A, "tc", "qdisc", "show", "dev", DEV_A).stdout

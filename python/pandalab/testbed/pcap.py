"""Minimal reader for the classic pcap files that tcpdump -w writes
(Ethernet link type): enough to histogram DSCP and TCP payload sizes of
IPv4/TCP packets without extra Python packages."""

import struct

LINKTYPE_ETHERNET = 1
LINKTYPE_LINUX_SLL = 113


class PcapError(ValueError):
    pass


def packets(path):
    """Yields (ts, frame bytes, original length) for each record."""
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            if not hdr:
                return
            raise PcapError("%s: truncated pcap header" % path)
        magic = hdr[:4]
        if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
            endian = "<"
        elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
            endian = ">"
        else:
            raise PcapError("%s: not a pcap file (magic %s)"
                            % (path, magic.hex()))
        nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
        linktype = struct.unpack(endian + "I", hdr[20:24])[0]
        if linktype not in (LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL):
            raise PcapError("%s: unsupported link type %d" % (path, linktype))
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, incl, orig = struct.unpack(endian + "IIII", rec)
            data = f.read(incl)
            if len(data) < incl:
                return          # capture cut while writing
            ts = sec + frac / (1e9 if nano else 1e6)
            if linktype == LINKTYPE_LINUX_SLL:
                data = b"\0" * 12 + data[14:16] + data[16:]
            yield ts, data, orig


def tcp_packets(path):
    """Yields dicts (ts, src, dst, sport, dport, dscp, ecn, ip_len, payload,
    seq, ack, flags) for the IPv4/TCP packets of a capture."""
    for ts, d, orig in packets(path):
        p = _tcp_packet(d)
        if p:
            p["ts"] = ts
            yield p


# UDP destination ports of the tunnels tunnel_packets() opens, and the
# length of their header before the inner Ethernet frame (Geneve's grows by
# its options).
GENEVE_PORT = 6081
VXLAN_PORT = 4789


def tunnel_packets(path):
    """Yields a dict for each Geneve or VXLAN packet over IPv4 whose inner
    frame is IPv4/TCP: the inner packet's fields as tcp_packets() gives
    them, plus "tunnel" ("geneve" or "vxlan"), "outer_src", "outer_dst",
    "outer_sport" and "outer_dscp"."""
    for ts, d, orig in packets(path):
        ip = ipv4_header(d)
        if ip is None or ip[9] != 17 or len(ip) < (ip[0] & 0x0f) * 4 + 16:
            continue
        udp = ip[(ip[0] & 0x0f) * 4:]
        sport, dport = struct.unpack("!HH", udp[0:4])
        tnl = udp[8:]
        if dport == GENEVE_PORT:
            kind, hlen = "geneve", 8 + (tnl[0] & 0x3f) * 4
        elif dport == VXLAN_PORT:
            kind, hlen = "vxlan", 8
        else:
            continue
        p = _tcp_packet(tnl[hlen:])
        if p:
            p.update(ts=ts, tunnel=kind, outer_sport=sport,
                     outer_dscp=ip[1] >> 2, outer_src=ip_str(ip[12:16]),
                     outer_dst=ip_str(ip[16:20]))
            yield p


def ip_str(b):
    """Dotted quad of the 4 bytes 'b'."""
    return ".".join(str(x) for x in b)


def ipv4_header(d):
    """The IPv4 header (and what follows) of Ethernet frame 'd', after any
    VLAN tags, or None if it is not IPv4."""
    off = 12
    if len(d) < off + 2:
        return None
    etype = struct.unpack("!H", d[off:off + 2])[0]
    off += 2
    while etype == 0x8100 and len(d) >= off + 4:
        etype = struct.unpack("!H", d[off + 2:off + 4])[0]
        off += 4
    if etype != 0x0800 or len(d) < off + 20:
        return None
    return d[off:]


def _tcp_packet(d):
    """The fields of Ethernet frame 'd' if it is IPv4/TCP, else None."""
    ip = ipv4_header(d)
    if ip is None:
        return None
    ihl = (ip[0] & 0x0f) * 4
    if ip[9] != 6 or len(ip) < ihl + 14:
        return None
    ip_len = struct.unpack("!H", ip[2:4])[0]
    tcp = ip[ihl:]
    doff = (tcp[12] >> 4) * 4
    return {
        "src": ip_str(ip[12:16]),
        "dst": ip_str(ip[16:20]),
        "sport": struct.unpack("!H", tcp[0:2])[0],
        "dport": struct.unpack("!H", tcp[2:4])[0],
        "dscp": ip[1] >> 2,
        "ip_len": ip_len,
        "payload": max(0, ip_len - ihl - doff),
        "seq": struct.unpack("!I", tcp[4:8])[0],
        "ack": struct.unpack("!I", tcp[8:12])[0],
        "flags": tcp[13],
        "ecn": ip[1] & 3,
    }

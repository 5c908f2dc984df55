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
    """Yields dicts (ts, src, dst, sport, dport, dscp, ip_len, payload, seq,
    flags) for the IPv4/TCP packets of a capture."""
    for ts, d, orig in packets(path):
        off = 12
        etype = struct.unpack("!H", d[off:off + 2])[0]
        off += 2
        while etype == 0x8100 and len(d) >= off + 4:
            etype = struct.unpack("!H", d[off + 2:off + 4])[0]
            off += 4
        if etype != 0x0800 or len(d) < off + 20:
            continue
        ip = d[off:]
        ihl = (ip[0] & 0x0f) * 4
        if ip[9] != 6 or len(ip) < ihl + 14:
            continue
        ip_len = struct.unpack("!H", ip[2:4])[0]
        tcp = ip[ihl:]
        doff = (tcp[12] >> 4) * 4
        yield {
            "ts": ts,
            "src": ".".join(str(b) for b in ip[12:16]),
            "dst": ".".join(str(b) for b in ip[16:20]),
            "sport": struct.unpack("!H", tcp[0:2])[0],
            "dport": struct.unpack("!H", tcp[2:4])[0],
            "dscp": ip[1] >> 2,
            "ip_len": ip_len,
            "payload": max(0, ip_len - ihl - doff),
            "seq": struct.unpack("!I", tcp[4:8])[0],
            "flags": tcp[13],
        }

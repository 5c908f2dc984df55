#!/usr/bin/python3
"""UDP probes of tests/system/test_qos.py, run inside host namespaces
(ip netns exec NS /usr/bin/python3 udp_probe.py CMD ...): datagram counts
per queue and DSCP, which the load generator (TCP flows and memcached) does
not measure.

    udp HOST PORT --count N [--pps R] [--size B | --payload-hex H]
                  [--tos T]          N UDP datagrams at R per second (of
                                     B bytes, or the bytes H; TOS byte T)
    udprecv --ports P1,P2.. [--duration S]
                                     counts datagrams per port and DSCP;
                                     prints {"listening"} when bound, then
                                     the counts on SIGINT

Every command prints one JSON object per line on stdout.
"""

import argparse
import json
import select
import socket
import sys
import time


def cmd_udp(args):
    """Sends --count datagrams (0: until SIGINT), paced at --pps if given;
    prints how many it sent."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if args.tos:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, args.tos)
    payload = (bytes.fromhex(args.payload_hex) if args.payload_hex
               else b"q" * args.size)
    gap = 1.0 / args.pps if args.pps else 0
    t_next = time.monotonic()
    sent = 0
    try:
        while not args.count or sent < args.count:
            try:
                s.sendto(payload, (args.host, args.port))
                sent += 1
            except OSError:         # ENOBUFS: the sender outruns its qdisc
                continue
            if gap:
                t_next += gap
                delay = t_next - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
    except KeyboardInterrupt:
        pass
    print(json.dumps({"sent": sent}), flush=True)


def cmd_udprecv(args):
    """Counts datagrams per port and DSCP until --expect datagrams arrived
    (then exits by itself: the caller waits for that, not for a guessed
    time), --duration passed, or SIGINT."""
    socks = {}
    for port in (int(p) for p in args.ports.split(",")):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
        s.bind(("0.0.0.0", port))
        socks[s] = port
    counts = {str(p): {} for p in socks.values()}
    total = 0
    print(json.dumps({"listening": list(socks.values())}), flush=True)
    stop = time.monotonic() + args.duration if args.duration else None
    try:
        while (stop is None or time.monotonic() < stop) and \
                (not args.expect or total < args.expect):
            ready, _, _ = select.select(list(socks), [], [], 0.2)
            for s in ready:
                _, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(4))
                tos = 0
                for level, kind, data in anc:
                    if level == socket.IPPROTO_IP and kind == socket.IP_TOS:
                        tos = data[0]
                per = counts[str(socks[s])]
                key = str(tos >> 2)
                per[key] = per.get(key, 0) + 1
                total += 1
    except KeyboardInterrupt:
        pass
    print(json.dumps({"dscp_counts": counts}), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("udp")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--count", type=int, default=0,
                   help="datagrams to send (default 0: until SIGINT)")
    p.add_argument("--pps", type=float, default=0)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--payload-hex", default="",
                   help="the datagrams' bytes, in hex (instead of --size)")
    p.add_argument("--tos", type=lambda v: int(v, 0), default=0,
                   help="the datagrams' TOS byte (DSCP << 2)")
    p = sub.add_parser("udprecv")
    p.add_argument("--ports", required=True)
    p.add_argument("--expect", type=int, default=0,
                   help="exit once this many datagrams arrived")
    p.add_argument("--duration", type=float, default=0)
    args = ap.parse_args(argv)
    return {"udprecv": cmd_udprecv, "udp": cmd_udp}[args.cmd](args) or 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Traffic generators for the QoS tests and benchmark, run inside host
namespaces (ip netns exec NS /usr/bin/python3 qos_traffic.py CMD ...).

    sink --port P [--duration S]     TCP sink; prints {"bytes", "seconds"}
    bulk HOST PORT --flows N --duration S
                                     N TCP flows sending as fast as they can
    memget HOST PORT [--count N] [--duration S] [--value-size B]
                                     memcached GET client, one request at a
                                     time; prints latency percentiles (ms)
    udp HOST PORT --count N [--pps R]
                                     N small UDP datagrams at R per second
    udprecv --ports P1,P2.. [--duration S]
                                     counts datagrams per port and DSCP

Every command prints one JSON object on stdout.
"""

import argparse
import json
import socket
import sys
import threading
import time

CHUNK = 65536


def percentile(sorted_vals, p):
    if not sorted_vals:
        return None
    k = min(len(sorted_vals) - 1, int(round(p / 100.0 * (len(sorted_vals)
                                                          - 1))))
    return sorted_vals[k]


def cmd_sink(args):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", args.port))
    srv.listen(64)
    total = [0]
    first = [None]
    lock = threading.Lock()

    def serve(conn):
        with conn:
            while True:
                try:
                    data = conn.recv(CHUNK)
                except OSError:
                    return
                if not data:
                    return
                with lock:
                    if first[0] is None:
                        first[0] = time.monotonic()
                    total[0] += len(data)

    def accept():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    print(json.dumps({"listening": args.port}), flush=True)
    try:
        if args.duration:
            time.sleep(args.duration)
        else:
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    with lock:
        secs = time.monotonic() - first[0] if first[0] else 0.0
        print(json.dumps({"bytes": total[0], "seconds": secs}), flush=True)


def cmd_bulk(args):
    stop = time.monotonic() + args.duration
    sent = [0] * args.flows
    errors = []
    buf = b"\0" * CHUNK

    def flow(i):
        try:
            s = socket.create_connection((args.host, args.port), timeout=10)
            s.settimeout(1.0)
            while time.monotonic() < stop:
                try:
                    sent[i] += s.send(buf)
                except socket.timeout:
                    continue
            s.close()
        except OSError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=flow, args=(i,))
               for i in range(args.flows)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"bytes": sum(sent), "flows": args.flows,
                      "errors": errors}), flush=True)
    return 1 if errors else 0


def recv_until(s, marker):
    data = b""
    while not data.endswith(marker):
        chunk = s.recv(CHUNK)
        if not chunk:
            raise OSError("connection closed by server")
        data += chunk
    return data


def cmd_memget(args):
    s = socket.create_connection((args.host, args.port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    value = b"v" * args.value_size
    s.sendall(b"set pandakey 0 0 %d\r\n%s\r\n" % (len(value), value))
    if recv_until(s, b"\r\n") != b"STORED\r\n":
        raise SystemExit("memcached did not store the key")
    lat = []
    stop = time.monotonic() + args.duration if args.duration else None
    req = b"get pandakey\r\n"
    while len(lat) < args.count and (stop is None or time.monotonic() < stop):
        t0 = time.perf_counter()
        s.sendall(req)
        reply = recv_until(s, b"END\r\n")
        lat.append((time.perf_counter() - t0) * 1000.0)
        if value not in reply:
            raise SystemExit("bad reply from memcached: %r" % reply[:80])
        if args.gap:
            time.sleep(args.gap / 1000.0)
    s.close()
    lat.sort()
    print(json.dumps({"n": len(lat), "p50": percentile(lat, 50),
                      "p99": percentile(lat, 99), "max": lat[-1] if lat
                      else None}), flush=True)


def cmd_udp(args):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = b"q" * args.size
    gap = 1.0 / args.pps if args.pps else 0
    t_next = time.monotonic()
    for _ in range(args.count):
        s.sendto(payload, (args.host, args.port))
        if gap:
            t_next += gap
            delay = t_next - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    print(json.dumps({"sent": args.count}), flush=True)


def cmd_udprecv(args):
    import select
    socks = {}
    for port in (int(p) for p in args.ports.split(",")):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
        s.bind(("0.0.0.0", port))
        socks[s] = port
    counts = {str(p): {} for p in socks.values()}
    print(json.dumps({"listening": list(socks.values())}), flush=True)
    stop = time.monotonic() + args.duration if args.duration else None
    try:
        while stop is None or time.monotonic() < stop:
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
    except KeyboardInterrupt:
        pass
    print(json.dumps({"dscp_counts": counts}), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("sink")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--duration", type=float, default=0)
    p = sub.add_parser("bulk")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--flows", type=int, default=1)
    p.add_argument("--duration", type=float, required=True)
    p = sub.add_parser("memget")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--duration", type=float, default=0)
    p.add_argument("--value-size", type=int, default=100)
    p.add_argument("--gap", type=float, default=0,
                   help="pause between requests, ms")
    p = sub.add_parser("udp")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--pps", type=float, default=0)
    p.add_argument("--size", type=int, default=64)
    p = sub.add_parser("udprecv")
    p.add_argument("--ports", required=True)
    p.add_argument("--duration", type=float, default=0)
    args = ap.parse_args(argv)
    return {"udprecv": cmd_udprecv, "sink": cmd_sink, "bulk": cmd_bulk, "memget": cmd_memget,
            "udp": cmd_udp}[args.cmd](args) or 0


if __name__ == "__main__":
    sys.exit(main())

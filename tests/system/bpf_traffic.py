"""Traffic for tests/system/test_bpf_classifier.py, run inside the test's
network namespaces (python3 bpf_traffic.py serve|client ...):

  serve BULK_PORT RR_PORT       a sink on BULK_PORT (reads everything) and
                                an echo of REQ-byte requests on RR_PORT
  client HOST BULK_PORT BYTES RR_PORT REQUESTS [PAUSE_MS]
                                one bulk connection sending BYTES, and at
                                the same time one request/response
                                connection doing REQUESTS round trips of
                                REQ bytes each way (a memcached GET's size),
                                PAUSE_MS apart; prints a JSON summary
  bulk HOST PORT BYTES [BYTES2 PAUSE_MS]
                                one connection: BYTES, then (if given) a
                                silence of PAUSE_MS and BYTES2 more
"""
import json
import socket
import sys
import threading
import time

REQ = 100


def serve(bulk_port, rr_port):
    def sink(conn):
        with conn:
            while conn.recv(1 << 16):
                pass

    def echo(conn):
        with conn:
            while True:
                buf = b""
                while len(buf) < REQ:
                    d = conn.recv(REQ - len(buf))
                    if not d:
                        return
                    buf += d
                conn.sendall(buf)

    def listen(port, handler):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", port))
        s.listen(16)
        while True:
            c, _ = s.accept()
            threading.Thread(target=handler, args=(c,), daemon=True).start()

    threading.Thread(target=listen, args=(bulk_port, sink),
                     daemon=True).start()
    listen(rr_port, echo)


def bulk(host, port, nbytes, nbytes2=0, pause_ms=0):
    s = socket.create_connection((host, port))
    chunk = b"x" * 65536
    for total in (nbytes, nbytes2):
        sent = 0
        while sent < total:
            n = min(len(chunk), total - sent)
            s.sendall(chunk[:n])
            sent += n
        if nbytes2:
            time.sleep(pause_ms / 1000.0)
            nbytes2 = 0
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
    s.close()


def client(host, bulk_port, nbytes, rr_port, requests, pause_ms=2):
    t = threading.Thread(target=bulk, args=(host, bulk_port, nbytes))
    t0 = time.monotonic()
    t.start()
    s = socket.create_connection((host, rr_port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    rtts = []
    for i in range(requests):
        a = time.monotonic()
        s.sendall(b"g" * REQ)
        got = 0
        while got < REQ:
            d = s.recv(REQ - got)
            if not d:
                raise SystemExit("rr connection closed early")
            got += len(d)
        rtts.append(time.monotonic() - a)
        time.sleep(pause_ms / 1000.0)
    s.close()
    t.join()
    rtts.sort()
    print(json.dumps({"seconds": time.monotonic() - t0,
                      "requests": requests,
                      "rtt_p50_ms": 1000 * rtts[len(rtts) // 2],
                      "rtt_max_ms": 1000 * rtts[-1]}))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "serve":
        serve(int(args[0]), int(args[1]))
    elif cmd == "client":
        client(args[0], int(args[1]), int(args[2]), int(args[3]),
               int(args[4]), *(int(a) for a in args[5:]))
    elif cmd == "bulk":
        bulk(args[0], int(args[1]), int(args[2]),
             *(int(a) for a in args[3:]))
    else:
        raise SystemExit("unknown command %s" % cmd)

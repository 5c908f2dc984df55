"""Traffic for tests/system/test_panda_action.py, run inside a namespace.

    panda_traffic.py server PORT bulk|rr     (prints "ready", serves once)
    panda_traffic.py client HOST PORT bulk BYTES
    panda_traffic.py client HOST PORT rr COUNT [SIZE]

bulk: the client sends BYTES and closes; the server reads to EOF.
rr: COUNT request/response exchanges of SIZE bytes (default 100) each way,
one at a time, on one connection (a memcached-like small-message flow).
"""

import socket
import sys


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed after %d of %d bytes"
                           % (len(buf), n))
        buf += chunk
    return buf


def server(port, mode):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    print("ready", flush=True)
    conn, _ = ls.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    total = 0
    while True:
        data = conn.recv(65536)
        if not data:
            break
        total += len(data)
        if mode == "rr":
            conn.sendall(data)
    conn.close()
    print("received %d" % total, flush=True)


def client(host, port, mode, amount, size=100):
    s = socket.create_connection((host, port), timeout=60)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if mode == "bulk":
        chunk = b"x" * 65536
        left = amount
        while left > 0:
            n = min(left, len(chunk))
            s.sendall(chunk[:n])
            left -= n
    else:
        msg = b"r" * size
        for _ in range(amount):
            s.sendall(msg)
            recv_exact(s, size)
    s.shutdown(socket.SHUT_WR)
    while s.recv(65536):
        pass
    s.close()
    print("done", flush=True)


def main(argv):
    if argv[1] == "server":
        server(int(argv[2]), argv[3])
    elif argv[1] == "client":
        size = int(argv[6]) if len(argv) > 6 else 100
        client(argv[2], int(argv[3]), argv[4], int(argv[5]), size)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)

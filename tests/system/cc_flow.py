#!/usr/bin/python3
"""A long TCP flow whose sender watches its own congestion window, for
tests/system/test_bpf_dctcp.py; run inside host namespaces (ip netns exec
NS /usr/bin/python3 cc_flow.py CMD ...).

    sink --bind IP --port P        accepts connections and discards what
                                   arrives; prints {"listening"} once bound
    send HOST PORT --seconds S [--cc NAME] [--interval MS]
                                   sends as fast as TCP lets it for S
                                   seconds while sampling TCP_INFO every
                                   MS milliseconds; prints one JSON object:
                                   {"cc", "netns_cookie", "samples": [[t,
                                   ca_state, cwnd, ssthresh, rtt_us,
                                   delivered, delivered_ce], ...]}

Sampling in the sending process itself (getsockopt on its own socket)
rather than with ss from outside: a sample costs microseconds, so every
reduction (one per round trip at most, a few ms here) falls between two
samples.
"""

import argparse
import json
import socket
import struct
import sys
import threading
import time

TCP_CONGESTION = 13
SO_NETNS_COOKIE = 71
# struct tcp_info (linux/tcp.h): the fields read here, by offset.
TCP_INFO_LEN = 200
CA_STATE = 1            # __u8 tcpi_ca_state
RTT = 68                # __u32 tcpi_rtt (us)
SND_SSTHRESH = 76       # __u32 tcpi_snd_ssthresh
SND_CWND = 80           # __u32 tcpi_snd_cwnd
DELIVERED = 192         # __u32 tcpi_delivered
DELIVERED_CE = 196      # __u32 tcpi_delivered_ce


def cmd_sink(args):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((args.bind, args.port))
    srv.listen(8)
    print(json.dumps({"listening": args.port}), flush=True)

    def drain(c):
        with c:
            while c.recv(1 << 16):
                pass
    while True:
        c, _ = srv.accept()
        threading.Thread(target=drain, args=(c,), daemon=True).start()


def sample(s, t0):
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
    u32 = lambda off: struct.unpack_from("=I", info, off)[0]  # noqa: E731
    return [round(time.monotonic() - t0, 6), info[CA_STATE], u32(SND_CWND),
            u32(SND_SSTHRESH), u32(RTT), u32(DELIVERED),
            u32(DELIVERED_CE)]


def cmd_send(args):
    s = socket.socket()
    if args.cc:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, args.cc.encode())
    s.connect((args.host, args.port))
    cc = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16)
    stop = threading.Event()

    def blast():
        buf = b"d" * (1 << 16)
        try:
            while not stop.is_set():
                s.send(buf)
        except OSError:
            pass
    t0 = time.monotonic()
    sender = threading.Thread(target=blast, daemon=True)
    sender.start()
    samples = []
    end = t0 + args.seconds
    while time.monotonic() < end:
        samples.append(sample(s, t0))
        time.sleep(args.interval / 1000.0)
    stop.set()
    cookie = int.from_bytes(s.getsockopt(socket.SOL_SOCKET,
                                         SO_NETNS_COOKIE, 8), "little")
    # Abortive close (RST): the switch that holds the flow's last packets
    # is stopped right after, and an orphaned socket retransmitting into a
    # deleted namespace would keep the congestion control (and, for the
    # BPF one, its unregistered struct_ops map) for minutes.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    print(json.dumps({"cc": cc.rstrip(b"\0").decode(),
                      "netns_cookie": cookie, "samples": samples}),
          flush=True)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("sink")
    k.add_argument("--bind", required=True)
    k.add_argument("--port", type=int, required=True)
    k.set_defaults(func=cmd_sink)
    d = sub.add_parser("send")
    d.add_argument("host")
    d.add_argument("port", type=int)
    d.add_argument("--seconds", type=float, required=True)
    d.add_argument("--cc")
    d.add_argument("--interval", type=float, default=0.5)
    d.set_defaults(func=cmd_send)
    args = p.parse_args()
    args.func(args)


if __name__ == "__main__":
    sys.exit(main())

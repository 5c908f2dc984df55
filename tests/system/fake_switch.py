"""A fake OpenFlow 1.3 switch for the controller's system tests: a peer
that reaches the controller's port and speaks just enough OpenFlow (hello,
features with a datapath id of its choosing, port description, echo,
barrier, empty flow stats, ONF bundles) to be taken for a bridge, and
then does what a hostile peer would:

  --veto           answers every message added to a bundle with
                   OFPET_BAD_ACTION/OFPBAC_BAD_ARGUMENT (what a switch
                   says of a policy it refuses);
  --histograms F   serves the text of file F (lib/panda's histogram text,
                   made up) to NXST_PANDA_HISTOGRAM requests;
  --tls CERT KEY CA  connects over TLS with that client certificate.

Without --veto it applies the flow-mods of a committed bundle to a flow
table of its own and returns them in flow stats, so that the controller
reads back what it wrote and takes it for a synced bridge.  Plain struct
packing, no OpenFlow library: the test does not trust the controller's
own encoder.  It prints one line per event on stdout
("connected", "features", "bundle-add vetoed", "histogram served",
"closed", ...) and exits when the controller closes the connection.

    /usr/bin/python3 fake_switch.py --dpid 0xdead --port 6653 [--veto]
        [--histograms FILE] [--tls CERT KEY CA]
"""

import argparse
import socket
import ssl
import struct
import sys

OFP_VERSION = 4
HELLO, ERROR, ECHO_REQUEST, ECHO_REPLY, EXPERIMENTER = 0, 1, 2, 3, 4
FEATURES_REQUEST, FEATURES_REPLY = 5, 6
GET_CONFIG_REQUEST, GET_CONFIG_REPLY = 7, 8
MULTIPART_REQUEST, MULTIPART_REPLY = 18, 19
BARRIER_REQUEST, BARRIER_REPLY = 20, 21
ROLE_REQUEST, ROLE_REPLY = 24, 25
MP_DESC, MP_FLOW, MP_PORT_DESC, MP_EXPERIMENTER = 0, 1, 13, 0xffff
ONF_ID, BUNDLE_CONTROL, BUNDLE_ADD = 0x4f4e4600, 2300, 2301
NX_ID, NXST_PANDA_HISTOGRAM = 0x00002320, 5
OFPET_BAD_ACTION, OFPBAC_BAD_ARGUMENT = 2, 5
FLOW_MOD = 14
OFPFC_ADD, OFPFC_MODIFY_STRICT, OFPFC_DELETE_STRICT = 0, 2, 4
BUNDLE_COMMIT, BUNDLE_DISCARD = 4, 6


def say(*words):
    print(" ".join(str(w) for w in words), flush=True)


def msg(mtype, xid, body=b""):
    return struct.pack("!BBHI", OFP_VERSION, mtype, 8 + len(body), xid) + body


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def multipart(xid, mtype, body=b""):
    return msg(MULTIPART_REPLY, xid, struct.pack("!HH4x", mtype, 0) + body)


class FlowTable:
    """The flows the controller committed: (table, priority, match bytes)
    -> (cookie, instruction bytes)."""

    def __init__(self):
        self.flows = {}

    def apply(self, fm):
        """'fm': a whole OFPT_FLOW_MOD message."""
        body = fm[8:]
        cookie, _, table, cmd, _, _, prio = struct.unpack(
            "!QQBBHHH", body[:24])
        mlen = struct.unpack("!H", body[42:44])[0]
        mend = 40 + (mlen + 7) // 8 * 8
        key = (table, prio, body[40:mend])
        if cmd == OFPFC_DELETE_STRICT:
            self.flows.pop(key, None)
        elif cmd in (OFPFC_ADD, OFPFC_MODIFY_STRICT):
            self.flows[key] = (cookie, body[mend:])

    def stats(self):
        out = b""
        for (table, prio, match), (cookie, inst) in self.flows.items():
            entry = struct.pack("!BxIIHHHH4xQQQ", table, 0, 0, prio, 0, 0,
                                0, cookie, 0, 0) + match + inst
            out += struct.pack("!H", 2 + len(entry)) + entry
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dpid", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=6653)
    ap.add_argument("--veto", action="store_true")
    ap.add_argument("--histograms", default=None)
    ap.add_argument("--tls", nargs=3, default=None,
                    metavar=("CERT", "KEY", "CA"))
    args = ap.parse_args()
    dpid = int(args.dpid, 0)
    hist = b""
    if args.histograms:
        with open(args.histograms, "rb") as f:
            hist = f.read()
    s = socket.create_connection((args.host, args.port), timeout=60)
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.load_cert_chain(args.tls[0], args.tls[1])
        ctx.load_verify_locations(args.tls[2])
        s = ctx.wrap_socket(s)
    s.settimeout(None)
    table, bundles = FlowTable(), {}
    say("connected")
    s.sendall(msg(HELLO, 1))
    try:
        while True:
            hdr = recv_exact(s, 8)
            _, mtype, length, xid = struct.unpack("!BBHI", hdr)
            body = recv_exact(s, length - 8)
            raw = hdr + body
            if mtype == ECHO_REQUEST:
                s.sendall(msg(ECHO_REPLY, xid, body))
            elif mtype == FEATURES_REQUEST:
                say("features", "0x%x" % dpid)
                s.sendall(msg(FEATURES_REPLY, xid, struct.pack(
                    "!QIBB2xII", dpid, 0, 254, 0, 0x4f, 0)))
            elif mtype == GET_CONFIG_REQUEST:
                s.sendall(msg(GET_CONFIG_REPLY, xid,
                              struct.pack("!HH", 0, 0xffff)))
            elif mtype == BARRIER_REQUEST:
                s.sendall(msg(BARRIER_REPLY, xid))
            elif mtype == ROLE_REQUEST:
                s.sendall(msg(ROLE_REPLY, xid, body))
            elif mtype == MULTIPART_REQUEST:
                mp = struct.unpack("!H", body[:2])[0]
                if mp == MP_DESC:
                    s.sendall(multipart(xid, mp, b"fake".ljust(256, b"\0")
                                        * 3 + b"\0" * 32
                                        + b"fake".ljust(256, b"\0")))
                elif mp == MP_EXPERIMENTER:
                    exp, etype = struct.unpack("!II", body[8:16])
                    data = hist if (exp, etype) == (
                        NX_ID, NXST_PANDA_HISTOGRAM) else b""
                    say("histogram served" if data else "experimenter stats",
                        len(data))
                    s.sendall(multipart(xid, mp, struct.pack(
                        "!II", exp, etype) + data))
                elif mp == MP_FLOW:
                    say("flow stats", len(table.flows))
                    s.sendall(multipart(xid, mp, table.stats()))
                else:
                    s.sendall(multipart(xid, mp))
            elif mtype == EXPERIMENTER:
                exp, etype = struct.unpack("!II", body[:8])
                if (exp, etype) == (ONF_ID, BUNDLE_CONTROL):
                    bid, btype, flags = struct.unpack("!IHH", body[8:16])
                    say("bundle-control", btype)
                    if btype == BUNDLE_COMMIT:
                        for fm in bundles.pop(bid, []):
                            table.apply(fm)
                    elif btype == BUNDLE_DISCARD:
                        bundles.pop(bid, None)
                    s.sendall(msg(EXPERIMENTER, xid, struct.pack(
                        "!IIIHH", ONF_ID, BUNDLE_CONTROL, bid, btype + 1,
                        flags)))
                elif (exp, etype) == (ONF_ID, BUNDLE_ADD) and args.veto:
                    say("bundle-add vetoed")
                    s.sendall(msg(ERROR, xid, struct.pack(
                        "!HH", OFPET_BAD_ACTION, OFPBAC_BAD_ARGUMENT)
                        + raw[:64]))
                elif (exp, etype) == (ONF_ID, BUNDLE_ADD):
                    bid = struct.unpack("!I", body[8:12])[0]
                    inner = body[16:]
                    if inner[1] == FLOW_MOD:
                        bundles.setdefault(bid, []).append(inner)
                    say("bundle-add")
    except (EOFError, OSError) as e:
        say("closed", type(e).__name__)
    return 0


if __name__ == "__main__":
    sys.exit(main())

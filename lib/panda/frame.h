/*
 * Frames: the one parser from the bytes of an Ethernet frame to what
 * lib/panda needs of a packet (struct panda_pkt, panda/packet.h) and where
 * the level's DSCP must be written.  Plain C, no OVS headers.
 *
 * Who uses it: the tc eBPF classifier (bpf/panda-cls.bpf.c), which sees a
 * frame as a struct __sk_buff, and the tools that classify captures with
 * lib/panda's connection table (panda-bench --replay), which see a frame
 * as bytes in memory.  One parser for both, so that a capture replayed
 * through the table and through the BPF program gives the same levels
 * (tests/system/test_bpf_classifier.py).  Open vSwitch's datapath keeps
 * its own parser (the datapath has parsed every packet already; ovs:
 * lib/dpif-netdev-panda.c, dp_panda_extract_marks()); this one follows
 * it: the same fields, the same tunnels, the same packets left untracked.
 *
 * What it reads: Ethernet with up to two VLAN tags; IPv4 (options
 * skipped, a later fragment has no L4 header: proto 0) or IPv6 (up to
 * PANDA_FRAME_MAX_EXT extension headers: hop-by-hop, routing, destination
 * options, AH, fragment; a later fragment, or a longer chain, is proto 0);
 * TCP (ports, flags, payload) or UDP (ports, payload); the first
 * PANDA_MAX_KEYWORD payload bytes, for the rule 'match'.  A UDP datagram
 * to the IANA port of Geneve (6081) or VXLAN (4789) whose header says an
 * Ethernet frame follows is classified by that inner frame, if it is IP,
 * when the policy declares that tunnel (panda_policy's 'tunnels'): behind
 * a tunnel every connection of the VMs shares the outer header, but the
 * port and a valid-looking header are no proof of a tunnel (anyone can
 * send them), so without the declaration the datagram is UDP.
 * The payload length comes from the IP header's length field (as the
 * datapath's parser does: Ethernet padding is not payload); a length field
 * of 0 (a GSO packet above 64 KiB, "BIG TCP") means the rest of the frame.
 *
 * How it reads.  The includer says how bytes are loaded, before including
 * this header: PANDA_FRAME_CTX is the type of the frame handle, a pointer
 * to a struct whose member 'len' is the frame's length, and
 * PANDA_FRAME_LOAD(CTX, OFF, DST, LEN) copies LEN bytes at offset OFF into
 * DST, evaluating to 0 on success and nonzero if the frame is shorter.  A
 * BPF program defines them as a struct __sk_buff * and bpf_skb_load_bytes()
 * (which also reads the paged part of a GSO packet); without them, a frame
 * is a struct panda_frame_buf, bytes in memory.  Everything here keeps to
 * panda/classifier.h's rules for the per-packet core (inline, fixed width,
 * no libc, loops bounded by constants), so that it compiles for BPF and
 * its verifier accepts it.  The steps that branch most (the headers of one
 * IP packet, a tunnel's header) are PANDA_FRAME_FN functions, inline
 * unless the includer defines it: a BPF program makes them global
 * functions, which its verifier checks once each instead of once for every
 * path that reaches them (a tunnel's inner packet would multiply the paths
 * of the outer one); they take at most five arguments, as BPF calls do,
 * and check their pointer arguments, as global BPF functions must.
 */
#ifndef PANDA_FRAME_H
#define PANDA_FRAME_H 1

#include <stdbool.h>
#include <stdint.h>

#include <panda/classifier.h>
#include <panda/packet.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef PANDA_FRAME_LOAD
/* A frame in memory: 'len' bytes at 'data' (a capture's record). */
struct panda_frame_buf {
    const uint8_t *data;
    uint32_t len;
};

static inline int
panda_frame_buf_load(const struct panda_frame_buf *b, uint32_t off,
                     void *dst, uint32_t len)
{
    uint8_t *d = (uint8_t *) dst;
    uint32_t i;

    if (off > b->len || len > b->len - off) {
        return -1;
    }
    for (i = 0; i < len; i++) {
        d[i] = b->data[off + i];
    }
    return 0;
}

#define PANDA_FRAME_CTX const struct panda_frame_buf *
#define PANDA_FRAME_LOAD(CTX, OFF, DST, LEN) \
    panda_frame_buf_load(CTX, OFF, DST, LEN)
#endif

#ifndef PANDA_FRAME_FN
#define PANDA_FRAME_FN PANDA_INLINE
#endif

/* The frame's length in bytes.  An includer whose handle's 'len' is not
 * the whole frame's defines it: a packet socket's fanout program sees the
 * skb with 'len' counted from the network header, the Ethernet header
 * already pulled (bpf/panda-rxsplit.bpf.c). */
#ifndef PANDA_FRAME_LEN
#define PANDA_FRAME_LEN(CTX) ((CTX)->len)
#endif

#define PANDA_FRAME_MAX_EXT 8       /* IPv6 extension headers followed. */

_Static_assert((PANDA_MAX_KEYWORD & (PANDA_MAX_KEYWORD - 1)) == 0,
               "panda_frame_load_data() masks with PANDA_MAX_KEYWORD - 1");

/* A parsed frame: the packet as the classifier sees it and where its marks
 * go.  'pkt.data' points into 'data' (also when 'pkt.data_len' is 0): do
 * not copy the struct and use the copy's 'pkt'. */
struct panda_frame {
    struct panda_pkt pkt;
    uint8_t data[PANDA_MAX_KEYWORD];    /* The payload's first bytes. */

    /* Offsets from the frame's start.  An IP header is never at offset 0
     * (an Ethernet header comes first), so 0 means "none". */
    uint16_t nh;                /* The IP header classified (inner, for a
                                 * tunnel). */
    uint16_t payload_off;       /* Its TCP or UDP payload, 0 if none. */
    uint16_t outer_nh;          /* A tunnel's outer IP header, or 0. */
    uint16_t udp_csum;          /* A tunnel's outer UDP checksum. */
    uint8_t outer_family;       /* 4 or 6, if 'outer_nh'. */
    uint8_t tos;                /* TOS / traffic class byte of 'nh', as
                                 * received (DSCP and ECN). */
    uint8_t outer_tos;          /* Same of 'outer_nh'. */
};

/* Big-endian loads from bytes already read. */
PANDA_INLINE uint16_t
panda_frame_be16(const uint8_t *p)
{
    return (uint16_t) (p[0] << 8 | p[1]);
}

PANDA_INLINE uint32_t
panda_frame_be32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16
           | (uint32_t) p[2] << 8 | p[3];
}

/* Reads the Ethernet header at 'off' (and up to two VLAN tags): returns
 * the offset of its payload and stores its EtherType in '*type', or
 * returns 0 if the frame is too short. */
PANDA_FRAME_FN uint32_t
panda_frame_parse_eth(PANDA_FRAME_CTX ctx, uint32_t off, uint16_t *type)
{
    uint8_t b[4];
    int i;

    if (!type || PANDA_FRAME_LOAD(ctx, off + 12, b, 2)) {
        return 0;
    }
    *type = panda_frame_be16(b);
    off += 14;
    for (i = 0; i < 2; i++) {
        if (*type != 0x8100 && *type != 0x88a8) {
            break;
        }
        if (PANDA_FRAME_LOAD(ctx, off, b, 4)) {
            return 0;
        }
        *type = panda_frame_be16(b + 2);
        off += 4;
    }
    return off;
}

/* True if a frame that is not IP, of EtherType 'type' (after up to two
 * VLAN tags; below 0x600, an 802.3 length) to Ethernet address 'dst', is
 * link control: ARP and RARP (a host that cannot resolve its neighbours
 * loses all its traffic), the slow protocols (LACP: a bond that misses
 * them takes its links down), LLDP, and STP's BPDUs (802.3 frames to the
 * bridge group address 01:80:c2:00:00:00).  A few small frames per second
 * per link, which must not wait behind an overload.  Every receive
 * priority asks this one function: OVS's ingress priority
 * (dpif-netdev-panda-ingress.c) and the kernel split of a port's receive
 * (bpf/panda-rxsplit.bpf.c). */
PANDA_INLINE bool
panda_frame_is_link_control(uint16_t type, const uint8_t dst[6])
{
    if (type == 0x0806 || type == 0x8035 || type == 0x8809
        || type == 0x88cc) {
        return true;
    }
    return (type < 0x600 && dst[0] == 0x01 && dst[1] == 0x80
            && dst[2] == 0xc2 && !dst[3] && !dst[4] && !dst[5]);
}

/* Copies the first bytes of the payload at 'off' (of 'f->pkt.payload'
 * bytes, not all of them necessarily in the frame) into 'f''s buffer. */
PANDA_INLINE void
panda_frame_load_data(PANDA_FRAME_CTX ctx, uint32_t off,
                      struct panda_frame *f)
{
    uint32_t n = f->pkt.payload;

    if (off >= PANDA_FRAME_LEN(ctx)) {
        return;
    }
    if (n > PANDA_FRAME_LEN(ctx) - off) {
        n = PANDA_FRAME_LEN(ctx) - off;
    }
    if (n > PANDA_MAX_KEYWORD) {
        n = PANDA_MAX_KEYWORD;
    }
    if (!n) {
        return;
    }
    if (PANDA_FRAME_LEN(ctx) - off >= PANDA_MAX_KEYWORD) {
        /* A whole buffer's worth, a length known at compile time (cheaper
         * for a BPF program to read); the bytes past the payload are
         * never looked at. */
        if (!PANDA_FRAME_LOAD(ctx, off, f->data, PANDA_MAX_KEYWORD)) {
            f->pkt.data_len = n;
        }
        return;
    }
    /* The same n, 1..PANDA_MAX_KEYWORD, written so that a BPF verifier
     * sees its bounds (a power of two: above). */
    n = ((n - 1) & (PANDA_MAX_KEYWORD - 1)) + 1;
    if (!PANDA_FRAME_LOAD(ctx, off, f->data, n)) {
        f->pkt.data_len = n;
    }
}

/* Reads the transport header of protocol 'f->pkt.proto' at 'off', 'l4_len'
 * bytes long by its IP header: ports, TCP flags, payload length and first
 * bytes, and 'f->payload_off'.  A TCP header that does not fit makes the
 * packet untracked (proto 0), as in the datapath.  Returns 0. */
PANDA_FRAME_FN int
panda_frame_parse_l4(PANDA_FRAME_CTX ctx, uint32_t off, uint32_t l4_len,
                     struct panda_frame *f)
{
    uint8_t b[14];
    uint32_t hlen;

    if (!f) {
        return 0;
    }
    if (f->pkt.proto == PANDA_IPPROTO_TCP) {
        if (l4_len < 20 || PANDA_FRAME_LOAD(ctx, off, b, 14)) {
            f->pkt.proto = 0;
            return 0;
        }
        hlen = (uint32_t) (b[12] >> 4) * 4;
        f->pkt.tcp_flags = b[13];
        f->pkt.hdr_len = off + hlen - f->nh;
    } else if (f->pkt.proto == 17) {
        if (l4_len <= 8 || PANDA_FRAME_LOAD(ctx, off, b, 4)) {
            return 0;
        }
        hlen = 8;
    } else {
        return 0;
    }
    __builtin_memcpy(&f->pkt.sport, b, 2);
    __builtin_memcpy(&f->pkt.dport, b + 2, 2);
    if (l4_len > hlen) {
        f->pkt.payload = l4_len - hlen;
        f->payload_off = (uint16_t) (off + hlen);
        panda_frame_load_data(ctx, off + hlen, f);
    }
    return 0;
}

/* True for the IPv6 extension headers that are followed: hop-by-hop,
 * routing, destination options, AH, fragment. */
PANDA_INLINE bool
panda_frame_ipv6_ext(uint8_t proto)
{
    return proto == 0 || proto == 43 || proto == 60 || proto == 51
           || proto == 44;
}

/* Reads the IP packet at 'off' (EtherType 'type') into 'f' (zeroed by the
 * caller), its transport header included.  Returns its family (4 or 6),
 * or 0 if it is not an IP packet. */
PANDA_FRAME_FN uint8_t
panda_frame_parse_ip(PANDA_FRAME_CTX ctx, uint32_t off, uint32_t type,
                     struct panda_frame *f)
{
    uint8_t b[40];
    uint32_t l4_len, hlen;
    uint8_t proto;
    int i;

    if (!f) {
        return 0;
    }
    if (type == 0x0800) {
        uint32_t tot_len;

        if (PANDA_FRAME_LOAD(ctx, off, b, 20) || b[0] >> 4 != 4) {
            return 0;
        }
        hlen = (uint32_t) (b[0] & 0xf) * 4;
        tot_len = panda_frame_be16(b + 2);
        if (!tot_len && off < PANDA_FRAME_LEN(ctx)) {
            tot_len = PANDA_FRAME_LEN(ctx) - off;           /* BIG TCP. */
        }
        if (hlen < 20 || tot_len < hlen) {
            return 0;
        }
        f->pkt.family = 4;
        f->tos = b[1];
        f->pkt.dscp = b[1] >> 2;
        f->pkt.proto = b[9];
        __builtin_memcpy(&f->pkt.src.v4, b + 12, 4);
        __builtin_memcpy(&f->pkt.dst.v4, b + 16, 4);
        f->nh = (uint16_t) off;
        if (panda_frame_be16(b + 6) & 0x1fff) {
            f->pkt.proto = 0;                   /* A later fragment. */
            return 4;
        }
        panda_frame_parse_l4(ctx, off + hlen, tot_len - hlen, f);
        return 4;
    }
    if (type != 0x86dd) {
        return 0;
    }
    if (PANDA_FRAME_LOAD(ctx, off, b, 40) || b[0] >> 4 != 6) {
        return 0;
    }
    l4_len = panda_frame_be16(b + 4);
    if (!l4_len && off + 40 < PANDA_FRAME_LEN(ctx)) {
        l4_len = PANDA_FRAME_LEN(ctx) - off - 40;           /* BIG TCP. */
    }
    f->pkt.family = 6;
    f->tos = (uint8_t) ((b[0] & 0xf) << 4 | b[1] >> 4);
    f->pkt.dscp = f->tos >> 2;
    __builtin_memcpy(f->pkt.src.v6, b + 8, 16);
    __builtin_memcpy(f->pkt.dst.v6, b + 24, 16);
    f->nh = (uint16_t) off;
    proto = b[6];
    off += 40;
    for (i = 0; i < PANDA_FRAME_MAX_EXT && panda_frame_ipv6_ext(proto);
         i++) {
        /* Every extension header has at least 8 bytes. */
        if (l4_len < 8 || PANDA_FRAME_LOAD(ctx, off, b, 8)) {
            f->pkt.proto = 0;
            return 6;
        }
        if (proto == 44) {
            hlen = 8;
            if (panda_frame_be16(b + 2) & 0xfff8) {
                f->pkt.proto = 0;               /* A later fragment. */
                return 6;
            }
        } else if (proto == 51) {
            hlen = ((uint32_t) b[1] + 2) * 4;   /* AH. */
        } else {
            hlen = ((uint32_t) b[1] + 1) * 8;
        }
        if (hlen > l4_len) {
            f->pkt.proto = 0;
            return 6;
        }
        proto = b[0];
        off += hlen;
        l4_len -= hlen;
    }
    /* A chain longer than we follow: untracked. */
    f->pkt.proto = panda_frame_ipv6_ext(proto) ? 0 : proto;
    panda_frame_parse_l4(ctx, off, l4_len, f);
    return 6;
}

/* The length of the header of 'tunnel' (one enum panda_tunnel bit) at
 * 'off' of a UDP datagram with 'size' payload bytes, if it says an
 * Ethernet frame follows, else 0. */
PANDA_FRAME_FN uint32_t
panda_frame_tunnel_hlen(PANDA_FRAME_CTX ctx, uint32_t off, uint32_t tunnel,
                        uint32_t size)
{
    uint8_t b[8];
    uint32_t hlen;

    if (size < 8 || PANDA_FRAME_LOAD(ctx, off, b, 8)) {
        return 0;
    }
    if (tunnel == PANDA_TUNNEL_GENEVE) {
        /* Version 0, protocol "transparent Ethernet bridging". */
        if (b[0] >> 6 || panda_frame_be16(b + 2) != 0x6558) {
            return 0;
        }
        hlen = 8 + (uint32_t) (b[0] & 0x3f) * 4;
        return hlen <= size ? hlen : 0;
    }
    if (tunnel == PANDA_TUNNEL_VXLAN) {
        uint32_t flags = panda_frame_be32(b);

        /* The I flag set, not VXLAN-GPE. */
        return flags & 0x08000000 && !(flags & 0x04000000) ? 8 : 0;
    }
    return 0;
}

/* Parses the Ethernet frame 'ctx' into 'f' ('inner' is scratch space, for
 * a tunnel's inner frame), looking into the tunnels of 'tunnels' (a
 * policy's declaration, enum panda_tunnel bits; 0: none, every datagram is
 * UDP).  Returns the family of the IP packet classified
 * (4 or 6), or 0 if the frame is not IP (then 'f' means nothing).  A
 * packet that is IP but that the table cannot track (not TCP, a later
 * fragment, a TCP header that does not fit) has 'pkt.proto' other than 6:
 * the policy's untracked level. */
PANDA_INLINE uint8_t
panda_frame_parse(PANDA_FRAME_CTX ctx, struct panda_frame *f,
                  struct panda_frame *inner, uint8_t tunnels)
{
    uint32_t off, hlen, udp_payload, tunnel;
    uint16_t type = 0;
    uint8_t family;

    __builtin_memset(f, 0, sizeof *f);
    off = panda_frame_parse_eth(ctx, 0, &type);
    family = off ? panda_frame_parse_ip(ctx, off, type, f) : 0;
    tunnel = panda_policy_tunnel(
        tunnels, panda_frame_be16((const uint8_t *) &f->pkt.dport));
    if (family && f->pkt.proto == 17 && f->payload_off && tunnel) {
        udp_payload = f->payload_off;
        hlen = panda_frame_tunnel_hlen(ctx, udp_payload, tunnel,
                                       f->pkt.payload);
        if (hlen && f->pkt.payload - hlen >= 14) {
            __builtin_memset(inner, 0, sizeof *inner);
            off = panda_frame_parse_eth(ctx, udp_payload + hlen, &type);
            if (off && panda_frame_parse_ip(ctx, off, type, inner)) {
                inner->outer_nh = f->nh;
                inner->outer_family = family;
                inner->outer_tos = f->tos;
                /* The outer UDP header is the 8 bytes before its payload,
                 * its checksum at byte 6. */
                inner->udp_csum = (uint16_t) (udp_payload - 2);
                *f = *inner;
            }
        }
    }
    /* Never NULL, even without payload bytes: a BPF verifier cannot tie
     * 'data_len' to it, and a rule reads at most 'data_len' bytes. */
    f->pkt.data = f->data;
    return f->pkt.family;
}

#ifdef __cplusplus
}
#endif

#endif /* panda/frame.h */

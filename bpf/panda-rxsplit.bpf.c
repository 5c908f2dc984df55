// SPDX-License-Identifier: Apache-2.0
/*
 * panda_rxsplit: the kernel half of a port's receive priority.  Open
 * vSwitch reads a "system" port (netdev-linux) through a packet socket;
 * when the thread that reads it is overloaded, the socket's receive queue
 * fills and the kernel drops whatever arrives next, high or low, before
 * OVS sees it, so no order OVS applies afterwards can save a high packet.
 * With the split, the port is read through two packet sockets in one
 * fanout group (PACKET_FANOUT_EBPF), and this program, the group's
 * demultiplexer, sends each packet to socket 0 if it is high and to
 * socket 1 if not.  OVS reads socket 0 first on every poll; the flood
 * overflows socket 1's queue while socket 0's stays short.
 *
 * The decision is lib/panda's, compiled here from the same headers the
 * datapath and the tc classifier use: panda/frame.h parses the frame,
 * panda_cls_level() of the port's policy (a rule kind, classified without
 * connection state) gives the level, and level 0 is high; of the frames
 * that are not IP, panda_frame_is_link_control() is high and the rest low,
 * as in OVS's own ingress priority (dpif-netdev-panda-ingress.c).
 *
 * Where the frame starts.  A fanout program runs before the socket's own
 * filter, on the skb as the receive path hands it to the packet taps
 * (net/packet/af_packet.c: packet_rcv_fanout() -> fanout_demux_bpf()),
 * which has already pulled the Ethernet header: skb->data is the network
 * header, skb->len counts from there, and a VLAN tag the device or the
 * stack took out is in the skb's metadata (OVS puts it back from the
 * socket's auxiliary data).  So the Ethernet header, 14 bytes before the
 * network header, is read relative to the MAC header
 * (bpf_skb_load_bytes_relative(), linear data only, where the Ethernet
 * header always is), the rest relative to skb->data with
 * bpf_skb_load_bytes(), which also reads paged data, and the frame's
 * length is skb->len + 14.  The loader splits Ethernet devices only.
 * Packets the host sends (PACKET_OUTGOING) reach the taps with skb->data
 * at the MAC header; OVS's sockets drop them anyway, so they go to socket
 * 1 unparsed.
 *
 * The policy sits in a one-element array that the loader fills before it
 * attaches the program (one program per receive queue; a new policy is a
 * new program).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>
#include <linux/if_packet.h>
#include <bpf/bpf_helpers.h>

#include <panda/policy.h>
#include <panda/rxsplit.h>

#define RXS_ETH_HLEN 14

#define RXS_HIGH PANDA_RXSPLIT_HIGH
#define RXS_LOW PANDA_RXSPLIT_LOW

static __always_inline int
rxs_load(struct __sk_buff *skb, uint32_t off, void *dst, uint32_t len)
{
    if (off >= RXS_ETH_HLEN) {
        return bpf_skb_load_bytes(skb, off - RXS_ETH_HLEN, dst, len);
    }
    return bpf_skb_load_bytes_relative(skb, off, dst, len, BPF_HDR_START_MAC);
}

#define PANDA_FRAME_CTX struct __sk_buff *
#define PANDA_FRAME_LEN(CTX) ((CTX)->len + RXS_ETH_HLEN)
#define PANDA_FRAME_LOAD(CTX, OFF, DST, LEN) rxs_load(CTX, OFF, DST, LEN)
/* The parser's steps as global functions, each verified once. */
#define PANDA_FRAME_FN __attribute__((noinline))
#include <panda/frame.h>

char LICENSE[] SEC("license") = "Apache-2.0";

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, uint32_t);
    __type(value, struct panda_policy);
} policy SEC(".maps");

/* A tunnel's inner frame, off the stack (the verifier's 512 bytes are for
 * the whole chain of calls).  Fanout runs in the receive softirq, or with
 * bottom halves off for the packets the host sends, so one buffer per CPU
 * is enough. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, uint32_t);
    __type(value, struct panda_frame);
} scratch SEC(".maps");

/* The socket for one received frame.  Global, so verified once. */
__attribute__((noinline)) int
rxs_classify(struct __sk_buff *skb)
{
    const struct panda_policy *p;
    struct panda_frame f, *inner;
    uint32_t zero = 0;
    uint8_t dst[6];
    uint16_t type;

    if (!skb) {
        return RXS_LOW;
    }
    p = bpf_map_lookup_elem(&policy, &zero);
    inner = bpf_map_lookup_elem(&scratch, &zero);
    if (!p || !inner) {
        return RXS_LOW;
    }
    if (!panda_frame_parse(skb, &f, inner, p->tunnels)) {
        type = 0;
        if (!panda_frame_parse_eth(skb, 0, &type)
            || rxs_load(skb, 0, dst, sizeof dst)
            || !panda_frame_is_link_control(type, dst)) {
            return RXS_LOW;
        }
        return RXS_HIGH;
    }
    if (panda_cls_level(p, NULL, &f.pkt)) {
        return RXS_LOW;
    }
    return RXS_HIGH;
}

SEC("socket")
int
panda_rxsplit(struct __sk_buff *skb)
{
    if (skb->pkt_type == PACKET_OUTGOING) {
        return RXS_LOW;
    }
    return rxs_classify(skb);
}

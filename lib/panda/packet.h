/*
 * What lib/panda needs to know of a packet, and the one header rewrite it
 * asks of its caller (the DSCP, keeping ECN).  Plain C, no OVS headers.
 */
#ifndef PANDA_PACKET_H
#define PANDA_PACKET_H 1

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PANDA_TCP_FIN 0x01
#define PANDA_TCP_SYN 0x02
#define PANDA_TCP_RST 0x04
#define PANDA_TCP_ACK 0x10

/* A packet as the classifier sees it.  Addresses and ports are in network
 * byte order (they are only compared and hashed). */
struct panda_pkt {
    uint8_t family;         /* 4 or 6. */
    uint8_t proto;          /* IP protocol; only 6 (TCP) keeps state. */
    uint8_t tcp_flags;      /* PANDA_TCP_* */
    uint8_t dscp;           /* As received (the rule 'app' reads it). */
    uint16_t sport, dport;
    union {
        uint32_t v4;
        uint8_t v6[16];
    } src, dst;
    uint32_t payload;       /* TCP (or UDP) payload bytes, before
                             * segmentation. */
    uint32_t data_len;      /* Bytes at 'data' (at most 'payload'); a
                             * caller may give fewer than PANDA_MAX_KEYWORD
                             * only when the payload is shorter. */
    const uint8_t *data;    /* The first bytes of the payload, for the rule
                             * 'match'; NULL if 'data_len' is 0. */
    uint32_t hdr_len;       /* TCP: bytes of the IP header, its options or
                             * extension headers, and the TCP header with
                             * its options (0: not known).  Headers longer
                             * than any a TCP stack sends count as payload
                             * (panda_cls_level()). */
};

/* Returns the IPv4 TOS / IPv6 traffic class byte 'tos' with its DSCP
 * replaced by 'dscp' and its ECN bits kept. */
static inline uint8_t
panda_pkt_tos_set_dscp(uint8_t tos, uint8_t dscp)
{
    return (uint8_t) ((dscp << 2) | (tos & 0x03));
}

#ifdef __cplusplus
}
#endif

#endif /* panda/packet.h */

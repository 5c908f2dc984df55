/* Unit tests: the frame parser (panda/frame.h), on frames built byte by
 * byte: what it reads of IPv4, IPv6, VLAN, TCP, UDP and Geneve/VXLAN
 * tunnels, and what it leaves untracked. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include <panda/frame.h>

#include "frame-builder.h"

static void
eth(struct fb *f, uint16_t type)
{
    put_zeros(f, 12);
    put16(f, type);
}

/* An IPv4 header with 'opt' bytes of options (a multiple of 4). */
static void
ipv4(struct fb *f, uint8_t tos, uint8_t proto, uint16_t l4_len,
     uint16_t frag, uint32_t opt)
{
    put8(f, 0x45 + opt / 4);
    put8(f, tos);
    put16(f, 20 + opt + l4_len);
    put16(f, 0);
    put16(f, frag);
    put8(f, 64);
    put8(f, proto);
    put16(f, 0);
    put32(f, 0x0a000001);
    put32(f, 0x0a000002);
    put_zeros(f, opt);
}

static void
ipv6(struct fb *f, uint8_t tc, uint8_t nxt, uint16_t payload_len)
{
    put32(f, 6u << 28 | (uint32_t) tc << 20 | 0x12345);
    put16(f, payload_len);
    put8(f, nxt);
    put8(f, 64);
    put32(f, 0x20010db8);
    put_zeros(f, 11);
    put8(f, 1);
    put32(f, 0x20010db8);
    put_zeros(f, 11);
    put8(f, 2);
}

static void
tcp(struct fb *f, uint16_t sport, uint16_t dport, uint8_t flags,
    const char *payload)
{
    put16(f, sport);
    put16(f, dport);
    put_zeros(f, 8);
    put8(f, 5 << 4);
    put8(f, flags);
    put_zeros(f, 6);
    put(f, payload, strlen(payload));
}

static void
udp(struct fb *f, uint16_t sport, uint16_t dport, uint16_t payload_len)
{
    put16(f, sport);
    put16(f, dport);
    put16(f, 8 + payload_len);
    put16(f, 0x1234);
}

/* Parses 'fb' into 'f' under a policy that declares the tunnels
 * 'tunnels'. */
static uint8_t
parse_tunnels(const struct fb *fb, struct panda_frame *f, uint8_t tunnels)
{
    struct panda_frame_buf buf = { fb->b, fb->len };
    struct panda_frame scratch;

    return panda_frame_parse(&buf, f, &scratch, tunnels);
}

/* Parses 'fb' into 'f' under a policy that declares both tunnels (the
 * tests of what is read; test_undeclared_tunnels() of what is not). */
static uint8_t
parse(const struct fb *fb, struct panda_frame *f)
{
    return parse_tunnels(fb, f, PANDA_TUNNELS_ALL);
}

static void
test_ipv4_tcp(void **state)
{
    static const char req[] = "get key:0123456789abcdefghijklmnopqrstuvwxyz";
    struct panda_frame f;
    struct fb fb = { .len = 0 };

    (void) state;
    eth(&fb, 0x0800);
    ipv4(&fb, 46 << 2 | 1, 6, 20 + strlen(req), 0, 0);
    tcp(&fb, 40000, 11211, PANDA_TCP_ACK | 0x08, req);
    put_zeros(&fb, 4);          /* Ethernet padding: not payload. */
    assert_int_equal(parse(&fb, &f), 4);
    assert_int_equal(f.pkt.proto, 6);
    assert_int_equal(f.pkt.src.v4, htonl(0x0a000001));
    assert_int_equal(f.pkt.dst.v4, htonl(0x0a000002));
    assert_int_equal(ntohs(f.pkt.sport), 40000);
    assert_int_equal(ntohs(f.pkt.dport), 11211);
    assert_int_equal(f.pkt.tcp_flags, PANDA_TCP_ACK | 0x08);
    assert_int_equal(f.pkt.dscp, 46);
    assert_int_equal(f.tos, 46 << 2 | 1);
    assert_int_equal(f.pkt.payload, strlen(req));
    assert_int_equal(f.pkt.data_len, PANDA_MAX_KEYWORD);
    assert_memory_equal(f.pkt.data, req, PANDA_MAX_KEYWORD);
    assert_int_equal(f.nh, 14);
    assert_int_equal(f.payload_off, 14 + 20 + 20);
    assert_int_equal(f.outer_nh, 0);
}

/* Options, VLAN tags, a bare SYN, a short payload. */
static void
test_ipv4_variants(void **state)
{
    struct panda_frame f;
    struct fb fb = { .len = 0 };

    (void) state;
    eth(&fb, 0x8100);
    put16(&fb, 100);
    put16(&fb, 0x88a8);
    put16(&fb, 200);
    put16(&fb, 0x0800);
    ipv4(&fb, 0, 6, 20 + 3, 0, 8);
    tcp(&fb, 1, 2, PANDA_TCP_SYN, "abc");
    assert_int_equal(parse(&fb, &f), 4);
    assert_int_equal(f.nh, 14 + 8);
    assert_int_equal(f.pkt.payload, 3);
    assert_int_equal(f.pkt.data_len, 3);
    assert_memory_equal(f.pkt.data, "abc", 3);
    assert_int_equal(f.pkt.tcp_flags, PANDA_TCP_SYN);

    fb.len = 0;
    eth(&fb, 0x0800);
    ipv4(&fb, 0, 6, 20, 0, 0);
    tcp(&fb, 1, 2, PANDA_TCP_SYN, "");
    assert_int_equal(parse(&fb, &f), 4);
    assert_int_equal(f.pkt.proto, 6);
    assert_int_equal(f.pkt.payload, 0);
    assert_int_equal(f.pkt.data_len, 0);
    assert_non_null(f.pkt.data);
}

/* What cannot be tracked: a later fragment, a TCP header that does not
 * fit; what is not IP at all. */
static void
test_untracked(void **state)
{
    struct panda_frame f;
    struct fb fb = { .len = 0 };

    (void) state;
    eth(&fb, 0x0800);
    ipv4(&fb, 0, 6, 100, 0x2000 | 100, 0);
    put_zeros(&fb, 100);
    assert_int_equal(parse(&fb, &f), 4);
    assert_int_equal(f.pkt.proto, 0);

    fb.len = 0;
    eth(&fb, 0x0800);
    ipv4(&fb, 0, 6, 12, 0, 0);
    put_zeros(&fb, 12);
    assert_int_equal(parse(&fb, &f), 4);
    assert_int_equal(f.pkt.proto, 0);

    fb.len = 0;
    eth(&fb, 0x0806);           /* ARP. */
    put_zeros(&fb, 28);
    assert_int_equal(parse(&fb, &f), 0);

    fb.len = 0;
    eth(&fb, 0x0800);
    put8(&fb, 0x45);            /* Truncated IPv4 header. */
    assert_int_equal(parse(&fb, &f), 0);

    fb.len = 0;
    eth(&fb, 0x0800);
    ipv4(&fb, 0, 6, 0, 0, 0);
    fb.b[14] = 0x65;            /* Version 6 in an IPv4 EtherType. */
    assert_int_equal(parse(&fb, &f), 0);
}

/* A GSO packet above 64 KiB has IP total length 0: the rest of the frame
 * is the packet. */
static void
test_big_tcp(void **state)
{
    struct panda_frame f;
    struct fb fb = { .len = 0 };

    (void) state;
    eth(&fb, 0x0800);
    ipv4(&fb, 0, 6, 0, 0, 0);
    fb.b[16] = fb.b[17] = 0;
    tcp(&fb, 1, 2, PANDA_TCP_ACK, "0123456789");
    assert_int_equal(parse(&fb, &f), 4);
    assert_int_equal(f.pkt.payload, 10);
}

static void
test_ipv6(void **state)
{
    struct panda_frame f;
    struct fb fb = { .len = 0 };

    (void) state;
    eth(&fb, 0x86dd);
    ipv6(&fb, 10 << 2 | 2, 6, 20 + 5);
    tcp(&fb, 7, 8, PANDA_TCP_ACK, "hello");
    assert_int_equal(parse(&fb, &f), 6);
    assert_int_equal(f.pkt.proto, 6);
    assert_int_equal(f.pkt.dscp, 10);
    assert_int_equal(f.tos, 10 << 2 | 2);
    assert_int_equal(f.pkt.src.v6[0], 0x20);
    assert_int_equal(f.pkt.src.v6[15], 1);
    assert_int_equal(f.pkt.dst.v6[15], 2);
    assert_int_equal(f.pkt.payload, 5);

    /* Hop-by-hop (8 bytes), then a first fragment (8 bytes): followed. */
    fb.len = 0;
    eth(&fb, 0x86dd);
    ipv6(&fb, 0, 0, 8 + 8 + 20 + 5);
    put8(&fb, 44);
    put8(&fb, 0);
    put_zeros(&fb, 6);
    put8(&fb, 6);
    put8(&fb, 0);
    put16(&fb, 1);              /* Offset 0, more fragments. */
    put32(&fb, 99);
    tcp(&fb, 7, 8, PANDA_TCP_ACK, "hello");
    assert_int_equal(parse(&fb, &f), 6);
    assert_int_equal(f.pkt.proto, 6);
    assert_int_equal(f.pkt.payload, 5);
    assert_int_equal(ntohs(f.pkt.dport), 8);

    /* A later fragment: untracked. */
    fb.b[14 + 40 + 8 + 2] = 0;
    fb.b[14 + 40 + 8 + 3] = 8;
    assert_int_equal(parse(&fb, &f), 6);
    assert_int_equal(f.pkt.proto, 0);

    /* More extension headers than are followed: untracked. */
    fb.len = 0;
    eth(&fb, 0x86dd);
    ipv6(&fb, 0, 60, (PANDA_FRAME_MAX_EXT + 1) * 8 + 20);
    for (int i = 0; i <= PANDA_FRAME_MAX_EXT; i++) {
        put8(&fb, i < PANDA_FRAME_MAX_EXT ? 60 : 6);
        put_zeros(&fb, 7);
    }
    tcp(&fb, 7, 8, PANDA_TCP_ACK, "");
    assert_int_equal(parse(&fb, &f), 6);
    assert_int_equal(f.pkt.proto, 0);
}

static void
test_udp(void **state)
{
    struct panda_frame f;
    struct fb fb = { .len = 0 };

    (void) state;
    eth(&fb, 0x0800);
    ipv4(&fb, 0, 17, 8 + 4, 0, 0);
    udp(&fb, 53, 5353, 4);
    put(&fb, "ping", 4);
    assert_int_equal(parse(&fb, &f), 4);
    assert_int_equal(f.pkt.proto, 17);
    assert_int_equal(ntohs(f.pkt.dport), 5353);
    assert_int_equal(f.pkt.payload, 4);
    assert_memory_equal(f.pkt.data, "ping", 4);
}

/* A Geneve packet (with 8 bytes of options) carrying an IPv4 TCP frame is
 * classified by the inner frame; the marks go to both IP headers. */
static void
test_geneve(void **state)
{
    struct panda_frame f;
    struct fb fb = { .len = 0 };
    uint16_t inner_len = 14 + 20 + 20 + 4;

    (void) state;
    eth(&fb, 0x0800);
    ipv4(&fb, 0x02, 17, 8 + 16 + inner_len, 0, 0);
    udp(&fb, 33333, PANDA_GENEVE_PORT, 16 + inner_len);
    put8(&fb, 2);               /* Version 0, 2 words of options. */
    put8(&fb, 0);
    put16(&fb, 0x6558);
    put32(&fb, 0x00001200);
    put_zeros(&fb, 8);
    eth(&fb, 0x0800);
    ipv4(&fb, 0x01, 6, 20 + 4, 0, 0);
    fb.b[fb.len - 8] = 192;     /* Inner source 192.0.0.1. */
    tcp(&fb, 5000, 6000, PANDA_TCP_ACK, "data");
    assert_int_equal(parse(&fb, &f), 4);
    assert_int_equal(f.pkt.proto, 6);
    assert_int_equal(ntohs(f.pkt.dport), 6000);
    assert_int_equal(f.pkt.src.v4, htonl(0xc0000001));
    assert_int_equal(f.pkt.payload, 4);
    assert_int_equal(f.outer_nh, 14);
    assert_int_equal(f.outer_family, 4);
    assert_int_equal(f.outer_tos, 0x02);
    assert_int_equal(f.tos, 0x01);
    assert_int_equal(f.udp_csum, 14 + 20 + 6);
    assert_int_equal(f.nh, 14 + 20 + 8 + 16 + 14);

    /* Another protocol than Ethernet behind Geneve: the outer packet. */
    fb.b[14 + 20 + 8 + 2] = 0x08;
    fb.b[14 + 20 + 8 + 3] = 0x00;
    assert_int_equal(parse(&fb, &f), 4);
    assert_int_equal(f.pkt.proto, 17);
    assert_int_equal(f.outer_nh, 0);
}

/* VXLAN (the I flag) with an inner IPv6 frame; VXLAN-GPE is not
 * followed. */
static void
test_vxlan(void **state)
{
    struct panda_frame f;
    struct fb fb = { .len = 0 };
    uint16_t inner_len = 14 + 40 + 20;

    (void) state;
    eth(&fb, 0x86dd);
    ipv6(&fb, 0, 17, 8 + 8 + inner_len);
    udp(&fb, 33333, PANDA_VXLAN_PORT, 8 + inner_len);
    put32(&fb, 0x08000000);
    put32(&fb, 42 << 8);
    eth(&fb, 0x86dd);
    ipv6(&fb, 0, 6, 20);
    tcp(&fb, 1, 2, PANDA_TCP_FIN, "");
    assert_int_equal(parse(&fb, &f), 6);
    assert_int_equal(f.pkt.proto, 6);
    assert_int_equal(f.pkt.tcp_flags, PANDA_TCP_FIN);
    assert_int_equal(f.outer_family, 6);
    assert_int_equal(f.outer_nh, 14);
    assert_int_equal(f.udp_csum, 14 + 40 + 6);

    fb.b[14 + 40 + 8] = 0x0c;   /* GPE. */
    assert_int_equal(parse(&fb, &f), 6);
    assert_int_equal(f.pkt.proto, 17);
    assert_int_equal(f.outer_nh, 0);
}

/* A Geneve or VXLAN datagram is looked into only where the policy declares
 * that tunnel: under any other policy it is UDP (the untracked level),
 * whatever its header and inner frame say -- a tenant can send a made-up
 * VXLAN header with the inner tuple of a small TCP connection. */
static void
test_undeclared_tunnels(void **state)
{
    static const uint16_t ports[] = { PANDA_GENEVE_PORT,
                                      PANDA_VXLAN_PORT };
    static const uint8_t declared[] = { PANDA_TUNNEL_GENEVE,
                                        PANDA_TUNNEL_VXLAN };
    uint16_t inner_len = 14 + 20 + 20 + 4;
    size_t i;

    (void) state;
    for (i = 0; i < 2; i++) {
        struct panda_frame f;
        struct fb fb = { .len = 0 };

        eth(&fb, 0x0800);
        ipv4(&fb, 0, 17, 8 + 8 + inner_len, 0, 0);
        udp(&fb, 33333, ports[i], 8 + inner_len);
        if (ports[i] == PANDA_GENEVE_PORT) {
            put32(&fb, 0x00006558);     /* Version 0, no options, TEB. */
            put32(&fb, 0);
        } else {
            put32(&fb, 0x08000000);     /* The I flag. */
            put32(&fb, 42 << 8);
        }
        eth(&fb, 0x0800);
        ipv4(&fb, 0, 6, 20 + 4, 0, 0);
        tcp(&fb, 5000, 6000, PANDA_TCP_ACK, "data");

        /* Declared (alone or with the other): the inner TCP packet. */
        assert_int_equal(parse_tunnels(&fb, &f, declared[i]), 4);
        assert_int_equal(f.pkt.proto, 6);
        assert_int_equal(ntohs(f.pkt.dport), 6000);
        assert_int_equal(f.outer_nh, 14);
        assert_int_equal(parse_tunnels(&fb, &f, PANDA_TUNNELS_ALL), 4);
        assert_int_equal(f.pkt.proto, 6);

        /* Not declared (none, or only the other tunnel): the outer UDP
         * datagram, marked alone. */
        assert_int_equal(parse_tunnels(&fb, &f, 0), 4);
        assert_int_equal(f.pkt.proto, 17);
        assert_int_equal(ntohs(f.pkt.dport), ports[i]);
        assert_int_equal(f.pkt.payload, 8 + inner_len);
        assert_int_equal(f.nh, 14);
        assert_int_equal(f.outer_nh, 0);
        assert_int_equal(parse_tunnels(&fb, &f, declared[1 - i]), 4);
        assert_int_equal(f.pkt.proto, 17);
        assert_int_equal(f.outer_nh, 0);
    }
}

/* A capture's record may hold fewer bytes than the packet: the IP header's
 * length still gives the payload, the bytes present give the data. */
static void
test_truncated_capture(void **state)
{
    struct panda_frame f;
    struct fb fb = { .len = 0 };

    (void) state;
    eth(&fb, 0x0800);
    ipv4(&fb, 0, 6, 20 + 1448, 0, 0);
    tcp(&fb, 1, 2, PANDA_TCP_ACK, "0123456789");
    assert_int_equal(parse(&fb, &f), 4);
    assert_int_equal(f.pkt.payload, 1448);
    assert_int_equal(f.pkt.data_len, 10);
}

/* Link control is high on every receive path: ARP, RARP, the slow
 * protocols, LLDP, and 802.3 frames to the STP group address; other
 * frames that are not IP, and 802.3 frames to other addresses, are not. */
static void
test_link_control(void **state)
{
    static const uint8_t stp[6] = { 0x01, 0x80, 0xc2, 0, 0, 0 };
    static const uint8_t lldp[6] = { 0x01, 0x80, 0xc2, 0, 0, 0x0e };
    static const uint8_t host[6] = { 0x50, 0x54, 0, 0, 0, 2 };

    (void) state;
    assert_true(panda_frame_is_link_control(0x0806, host));
    assert_true(panda_frame_is_link_control(0x8035, host));
    assert_true(panda_frame_is_link_control(0x8809, stp));
    assert_true(panda_frame_is_link_control(0x88cc, lldp));
    assert_true(panda_frame_is_link_control(38, stp));
    assert_false(panda_frame_is_link_control(38, lldp));
    assert_false(panda_frame_is_link_control(38, host));
    assert_false(panda_frame_is_link_control(0x88b5, host));
    assert_false(panda_frame_is_link_control(0x88b5, stp));
    assert_false(panda_frame_is_link_control(0x0800, host));
    assert_false(panda_frame_is_link_control(0x86dd, stp));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipv4_tcp),
        cmocka_unit_test(test_ipv4_variants),
        cmocka_unit_test(test_untracked),
        cmocka_unit_test(test_big_tcp),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_udp),
        cmocka_unit_test(test_geneve),
        cmocka_unit_test(test_vxlan),
        cmocka_unit_test(test_undeclared_tunnels),
        cmocka_unit_test(test_truncated_capture),
        cmocka_unit_test(test_link_control),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

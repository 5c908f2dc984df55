/* Unit tests: the kernel split of a port's receive (panda/rxsplit.h).
 * The program is run on frames built byte by byte with BPF_PROG_TEST_RUN,
 * which hands a socket program the skb as packet fanout does (the
 * Ethernet header pulled, skb->data at the network header), and its
 * socket is compared with what lib/panda decides for the same frame in
 * memory (panda/frame.h, panda_cls_level(), panda_frame_is_link_control()),
 * and with the socket each frame must go to.  Loading needs CAP_BPF: as
 * another user the program tests are reported and pass without running
 * (the system test tests/system/test_rx_split.py runs as root). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <panda/frame.h>
#include <panda/policy.h>
#include <panda/rxsplit.h>

#include "frame-builder.h"

static void
eth(struct fb *f, const uint8_t dst[6], uint16_t type)
{
    static const uint8_t src[6] = { 0x50, 0x54, 0, 0, 0, 1 };

    put(f, dst, 6);
    put(f, src, 6);
    put16(f, type);
}

/* IPv4 with a UDP or TCP header and 'payload' zero bytes. */
static void
ipv4(struct fb *f, uint8_t tos, uint8_t proto, uint16_t payload)
{
    uint16_t l4 = proto == 6 ? 20 : 8;
    uint8_t h[20] = { 0x45, tos, 0, 0, 0, 0, 0x40, 0, 64, proto, 0, 0,
                      10, 0, 0, 1, 10, 0, 0, 2 };
    uint8_t t[20] = { 0x30, 0x39, 0x1b, 0x58 };

    h[2] = (uint8_t) ((20 + l4 + payload) >> 8);
    h[3] = (uint8_t) (20 + l4 + payload);
    put(f, h, 20);
    if (proto == 6) {
        t[12] = 5 << 4;
        t[13] = 0x10;
    } else {
        t[4] = (uint8_t) ((8 + payload) >> 8);
        t[5] = (uint8_t) (8 + payload);
    }
    put(f, t, l4);
    put_zeros(f, payload);
}

static const uint8_t HOST[6] = { 0x50, 0x54, 0, 0, 0, 2 };
static const uint8_t STP[6] = { 0x01, 0x80, 0xc2, 0, 0, 0 };
static const uint8_t LLDP[6] = { 0x01, 0x80, 0xc2, 0, 0, 0x0e };

/* What lib/panda decides for 'fb' under 'p': the socket. */
static int
lib_socket(const struct panda_policy *p, const struct fb *fb)
{
    struct panda_frame_buf buf = { fb->b, fb->len };
    struct panda_frame f, scratch;
    uint16_t type;

    if (!panda_frame_parse(&buf, &f, &scratch, p->tunnels)) {
        return (panda_frame_parse_eth(&buf, 0, &type)
                && panda_frame_is_link_control(type, fb->b)
                ? PANDA_RXSPLIT_HIGH : PANDA_RXSPLIT_LOW);
    }
    return (panda_cls_level(p, NULL, &f.pkt)
            ? PANDA_RXSPLIT_LOW : PANDA_RXSPLIT_HIGH);
}

/* The program's socket for 'fb', by BPF_PROG_TEST_RUN. */
static int
prog_socket(int prog_fd, const struct fb *fb)
{
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = fb->b,
                .data_size_in = fb->len, .repeat = 1);

    assert_int_equal(bpf_prog_test_run_opts(prog_fd, &opts), 0);
    return (int) opts.retval;
}

static void
test_refuses_counter_kinds(void **state)
{
    struct panda_policy p;
    char *reason = NULL;

    (void) state;
    assert_null(panda_policy_parse("id=1,thresholds=10", &p));
    assert_int_equal(panda_rxsplit_load(&p, &reason), -1);
    assert_non_null(strstr(reason, "kind=panda keeps connection state"));
    free(reason);
}

/* Loads the program for 'text', or NULL with the reason printed if this
 * process cannot (not root). */
static int
load(const char *text, struct panda_policy *p)
{
    char *reason = NULL;
    int fd;

    assert_null(panda_policy_parse(text, p));
    fd = panda_rxsplit_load(p, &reason);
    if (fd < 0) {
        assert_non_null(reason);
        assert_true(geteuid() != 0);
        printf("# not run: %s\n", reason);
        free(reason);
    }
    return fd;
}

/* A DSCP rule: the probes of the benchmark and the system test high, a
 * flood of the same size without the DSCP low; link control high, other
 * frames that are not IP low, as the userspace ingress priority decides. */
static void
test_app_rule(void **state)
{
    struct panda_policy p;
    struct {
        const char *what;
        struct fb fb;
        int socket;
    } cases[10];
    int fd, n = 0, i;

    (void) state;
    fd = load("id=1,kind=app,app=46:0,levels=2,default_level=1", &p);
    if (fd < 0) {
        return;
    }
    memset(cases, 0, sizeof cases);
    cases[n].what = "UDP, DSCP 46";
    eth(&cases[n].fb, HOST, 0x0800);
    ipv4(&cases[n].fb, 46 << 2, 17, 22);
    cases[n++].socket = PANDA_RXSPLIT_HIGH;
    cases[n].what = "UDP, DSCP 0";
    eth(&cases[n].fb, HOST, 0x0800);
    ipv4(&cases[n].fb, 0, 17, 22);
    cases[n++].socket = PANDA_RXSPLIT_LOW;
    cases[n].what = "TCP, DSCP 46, ECN";
    eth(&cases[n].fb, HOST, 0x0800);
    ipv4(&cases[n].fb, 46 << 2 | 1, 6, 100);
    cases[n++].socket = PANDA_RXSPLIT_HIGH;
    cases[n].what = "TCP, DSCP 10";
    eth(&cases[n].fb, HOST, 0x0800);
    ipv4(&cases[n].fb, 10 << 2, 6, 1400);
    cases[n++].socket = PANDA_RXSPLIT_LOW;
    cases[n].what = "VLAN, UDP, DSCP 46";
    eth(&cases[n].fb, HOST, 0x8100);
    put16(&cases[n].fb, 7);
    put16(&cases[n].fb, 0x0800);
    ipv4(&cases[n].fb, 46 << 2, 17, 22);
    cases[n++].socket = PANDA_RXSPLIT_HIGH;
    cases[n].what = "ARP";
    eth(&cases[n].fb, HOST, 0x0806);
    memset(cases[n].fb.b + 14, 0, 46);
    cases[n].fb.len += 46;
    cases[n++].socket = PANDA_RXSPLIT_HIGH;
    cases[n].what = "LLDP";
    eth(&cases[n].fb, LLDP, 0x88cc);
    memset(cases[n].fb.b + 14, 0, 46);
    cases[n].fb.len += 46;
    cases[n++].socket = PANDA_RXSPLIT_HIGH;
    cases[n].what = "STP BPDU (802.3)";
    eth(&cases[n].fb, STP, 38);
    memset(cases[n].fb.b + 14, 0, 46);
    cases[n].fb.len += 46;
    cases[n++].socket = PANDA_RXSPLIT_HIGH;
    cases[n].what = "802.3 to a host";
    eth(&cases[n].fb, HOST, 38);
    memset(cases[n].fb.b + 14, 0, 46);
    cases[n].fb.len += 46;
    cases[n++].socket = PANDA_RXSPLIT_LOW;
    cases[n].what = "EtherType 0x88b5";
    eth(&cases[n].fb, HOST, 0x88b5);
    memset(cases[n].fb.b + 14, 0, 46);
    cases[n].fb.len += 46;
    cases[n++].socket = PANDA_RXSPLIT_LOW;

    for (i = 0; i < n; i++) {
        int lib = lib_socket(&p, &cases[i].fb);
        int prog = prog_socket(fd, &cases[i].fb);

        printf("# %-20s lib/panda %d, program %d, expected %d\n",
               cases[i].what, lib, prog, cases[i].socket);
        assert_int_equal(lib, cases[i].socket);
        assert_int_equal(prog, cases[i].socket);
    }
    close(fd);
}

/* A length rule reads the payload length from the IP header, which the
 * program finds behind the Ethernet header it did not see in skb->data. */
static void
test_length_rule(void **state)
{
    static const uint16_t sizes[] = { 0, 1, 499, 500, 501, 1400 };
    struct panda_policy p;
    size_t i;
    int fd;

    (void) state;
    fd = load("id=2,kind=length,length=500:1,default_level=0", &p);
    if (fd < 0) {
        return;
    }
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct fb fb;

        memset(&fb, 0, sizeof fb);
        eth(&fb, HOST, 0x0800);
        ipv4(&fb, 0, 6, sizes[i] > 200 ? 200 : sizes[i]);
        /* The length field says 'sizes[i]' (a capture's snap length:
         * the program must not need the bytes). */
        fb.b[14 + 2] = (uint8_t) ((40 + sizes[i]) >> 8);
        fb.b[14 + 3] = (uint8_t) (40 + sizes[i]);
        assert_int_equal(prog_socket(fd, &fb), lib_socket(&p, &fb));
        assert_int_equal(prog_socket(fd, &fb), sizes[i] >= 500
                         ? PANDA_RXSPLIT_LOW : PANDA_RXSPLIT_HIGH);
    }
    close(fd);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refuses_counter_kinds),
        cmocka_unit_test(test_app_rule),
        cmocka_unit_test(test_length_rule),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

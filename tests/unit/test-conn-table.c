/* Unit tests: the connection table and per-packet classification. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>

#include <panda/conn-table.h>
#include <panda/rng.h>
#include <panda/sizehist.h>

#include "policy-util.h"

/* 4 levels, T = 1000 payload bytes. */
#define POLICY "id=1,threshold=1000,thresholds=10000/100000/1000000," \
               "dscp=46/26/18/0,queues=0/1/2/3"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static struct panda_policy
policy(const char *s)
{
    struct panda_policy p;

    parse_ok(s, &p);
    return p;
}

static struct panda_table *
table(uint32_t capacity, panda_msec_t idle_ms)
{
    /* A fixed seed: every run places the same tuples in the same slots. */
    struct panda_table_config cfg = { capacity, idle_ms, 0, 0x5eed };
    char *err;
    struct panda_table *t = panda_table_create(&cfg, &err);

    assert_non_null(t);
    return t;
}

static struct panda_pkt
tcp4(const char *src, uint16_t sport, const char *dst, uint16_t dport,
     uint8_t flags, uint32_t payload)
{
    struct panda_pkt k;

    memset(&k, 0, sizeof k);
    k.family = 4;
    k.proto = 6;
    inet_pton(AF_INET, src, &k.src.v4);
    inet_pton(AF_INET, dst, &k.dst.v4);
    k.sport = htons(sport);
    k.dport = htons(dport);
    k.tcp_flags = flags;
    k.payload = payload;
    return k;
}

static struct panda_table_verdict
send_pkt(struct panda_table *t, const struct panda_policy *p,
         struct panda_pkt *k, uint32_t payload, panda_msec_t now)
{
    struct panda_table_verdict v;

    k->payload = payload;
    panda_table_classify(t, p, k, now, &v);
    return v;
}

/* A packet with a known 5-tuple and size gets a known DSCP and queue. */
static void
test_known_packet_dscp_queue(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(1024, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 40000, "10.0.0.2", 80,
                              PANDA_TCP_ACK, 0);
    struct panda_table_verdict v;
    int64_t counter;
    int i;

    (void) state;
    /* 9 full-size packets: counter 9 x 1448 = 13032 > 10000: level 1. */
    for (i = 0; i < 9; i++) {
        v = send_pkt(t, &p, &k, 1448, i);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 9 * 1448);
    assert_int_equal(v.level, 1);
    assert_int_equal(v.dscp, 26);
    assert_int_equal(v.queue, 1);
    assert_true(v.stateful);

    /* The reverse direction is another connection, still on top. */
    k = tcp4("10.0.0.2", 80, "10.0.0.1", 40000, PANDA_TCP_ACK, 0);
    v = send_pkt(t, &p, &k, 1448, 10);
    assert_int_equal(v.level, 0);
    assert_int_equal(v.dscp, 46);
    assert_int_equal(v.queue, 0);
    panda_table_destroy(t);
}

/* A bulk flow sinks through every level, in order, at the thresholds. */
static void
test_bulk_flow_sinks_in_order(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(1024, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    uint8_t last = 0;
    uint64_t sent = 0;
    int crossings = 0, i;

    (void) state;
    for (i = 0; i < 2000; i++) {
        struct panda_table_verdict v = send_pkt(t, &p, &k, 1448, i);

        sent += 1448;
        assert_true(v.level == last || v.level == last + 1);
        if (v.level != last) {
            /* The packet that crosses alpha[level-1] is the first one
             * marked lower. */
            assert_true(sent > p.alpha[v.level - 1]);
            assert_true(sent - 1448 <= p.alpha[v.level - 1]);
            assert_int_equal(v.dscp, p.dscp[v.level]);
            crossings++;
        }
        last = v.level;
    }
    assert_int_equal(crossings, 3);
    assert_int_equal(last, 3);
    panda_table_destroy(t);
}

/* Large packets first, then only small ones: back to the top level. */
static void
test_flow_climbs_back(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(1024, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 5, "10.0.0.2", 6, 0, 0);
    struct panda_table_verdict v;
    int i, small = 0;

    (void) state;
    for (i = 0; i < 100; i++) {                 /* 144800 bytes: level 2. */
        v = send_pkt(t, &p, &k, 1448, i);
    }
    assert_int_equal(v.level, 2);
    do {
        v = send_pkt(t, &p, &k, 100, 100 + small);
        small++;
        assert_true(small < 1000);
    } while (v.level != 0);
    /* Counter 144800 drops 900 per small packet: 10000 reached after
     * ceil((144800 - 10000) / 900) = 150 packets. */
    assert_int_equal(small, 150);
    assert_int_equal(v.dscp, 46);
    panda_table_destroy(t);
}

/* With the default floor 0, small packets bank no credit: a flow that sent
 * a long run of small packets is demoted after the same number of bulk
 * bytes as a fresh flow.  A negative floor is the explicit opt-in. */
static void
test_floor_prevents_banking(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_policy lax = policy(POLICY ",floor=-100000000");
    struct panda_table *t = table(1024, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 7, "10.0.0.2", 8, 0, 0);
    int i, bulk;
    int64_t counter;

    (void) state;
    for (i = 0; i < 10000; i++) {
        send_pkt(t, &p, &k, 64, i);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 0);
    for (bulk = 1; send_pkt(t, &p, &k, 1448, 20000 + bulk).level == 0;
         bulk++) {
        continue;
    }
    assert_int_equal(bulk, 7);          /* 7 x 1448 > 10000, as fresh. */

    k = tcp4("10.0.0.1", 9, "10.0.0.2", 8, 0, 0);
    for (i = 0; i < 10000; i++) {
        send_pkt(t, &lax, &k, 64, i);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, -9360000);
    for (bulk = 1; send_pkt(t, &lax, &k, 1448, 20000 + bulk).level == 0;
         bulk++) {
        continue;
    }
    assert_true(bulk > 6000);           /* Banked credit: bulk on top. */
    panda_table_destroy(t);
}

static void
test_pure_acks_and_control(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(1024, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 11, "10.0.0.2", 12, 0, 0);
    struct panda_table_stats s;
    struct panda_table_verdict v;
    int64_t counter;
    int i;

    (void) state;
    for (i = 0; i < 10; i++) {
        send_pkt(t, &p, &k, 1448, i);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 14480);
    /* Pure ACKs keep the counter and the level. */
    k.tcp_flags = PANDA_TCP_ACK;
    for (i = 0; i < 50; i++) {
        v = send_pkt(t, &p, &k, 0, 20 + i);
        assert_int_equal(v.level, 1);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 14480);
    /* A bare FIN: control level (top), connection ended. */
    k.tcp_flags = PANDA_TCP_FIN | PANDA_TCP_ACK;
    v = send_pkt(t, &p, &k, 0, 100);
    assert_int_equal(v.level, 0);
    assert_true(v.stateful);
    assert_false(panda_table_lookup(t, &k, NULL));
    /* RST likewise (another connection). */
    k.sport = htons(13);
    k.tcp_flags = 0;
    send_pkt(t, &p, &k, 1448, 101);
    assert_true(panda_table_lookup(t, &k, NULL));
    k.tcp_flags = PANDA_TCP_RST;
    assert_int_equal(send_pkt(t, &p, &k, 0, 102).level, 0);
    assert_false(panda_table_lookup(t, &k, NULL));
    panda_table_stats(t, &s);
    assert_int_equal(s.connections, 0);
    assert_int_equal(s.removed, 2);
    panda_table_destroy(t);
}

/* Packets without payload create no entry (handshakes, pure ACKs of the
 * receiving side, stray RSTs): their verdict is what a new entry would give
 * (the control level for a bare SYN/FIN/RST, counter 0's level otherwise),
 * and they take no slot. */
static void
test_bare_packets_insert_nothing(void **state)
{
    struct panda_policy p = policy(POLICY ",ctl_level=2");
    struct panda_table *t = table(1024, 0);
    struct panda_table_stats s;
    uint8_t flags[] = { PANDA_TCP_SYN, PANDA_TCP_SYN | PANDA_TCP_ACK,
                        PANDA_TCP_ACK, PANDA_TCP_RST, PANDA_TCP_FIN };
    uint8_t want[] = { 2, 2, 0, 2, 2 };
    size_t i;

    (void) state;
    for (i = 0; i < sizeof flags; i++) {
        struct panda_pkt k = tcp4("10.0.0.1", 100 + i, "10.0.0.2", 80,
                                  flags[i], 0);
        struct panda_table_verdict v = send_pkt(t, &p, &k, 0, i);

        assert_int_equal(v.level, want[i]);
        assert_false(v.stateful);
        assert_false(panda_table_lookup(t, &k, NULL));
    }
    panda_table_stats(t, &s);
    assert_int_equal(s.inserted, 0);
    assert_int_equal(s.packets[0], 1);
    assert_int_equal(s.packets[2], 4);
    /* Not even the slots of the family were allocated. */
    {
        struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 80, 0, 0);
        struct panda_table_stats s2;

        send_pkt(t, &p, &k, 100, 10);
        panda_table_stats(t, &s2);
        assert_true(s2.bytes_allocated
                    >= s.bytes_allocated + 1024 * panda_table_entry_size(4));
        assert_int_equal(s2.inserted, 1);
    }
    panda_table_destroy(t);
}

/* Data the sender retransmits after its FIN keeps the connection's level;
 * the ended entry's slot is reusable, and the data takes it up again. */
static void
test_data_after_fin(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(64, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    struct panda_table_stats s;
    uint32_t i;

    (void) state;
    for (i = 0; i < 100; i++) {
        send_pkt(t, &p, &k, 1448, i);
    }
    k.tcp_flags = PANDA_TCP_FIN | PANDA_TCP_ACK;
    assert_int_equal(send_pkt(t, &p, &k, 0, 100).level, 0);
    assert_false(panda_table_lookup(t, &k, NULL));
    panda_table_stats(t, &s);
    assert_int_equal(s.connections, 0);
    assert_int_equal(s.removed, 1);
    /* A retransmission of earlier data: still level 2, not a new flow. */
    k.tcp_flags = PANDA_TCP_ACK;
    assert_int_equal(send_pkt(t, &p, &k, 1448, 101).level, 2);
    panda_table_stats(t, &s);
    assert_int_equal(s.connections, 1);
    assert_int_equal(s.inserted, 1);
    assert_int_equal(s.resumed, 1);
    /* A FIN that carries the last segment is data: it counts and takes
     * the connection's level. */
    k.tcp_flags = PANDA_TCP_FIN | PANDA_TCP_ACK;
    assert_int_equal(send_pkt(t, &p, &k, 1448, 102).level, 2);
    assert_false(panda_table_lookup(t, &k, NULL));
    /* Ended entries make room for new connections without evictions. */
    for (i = 0; i < 64; i++) {
        struct panda_pkt n = tcp4("10.0.0.9", i + 1, "10.0.0.2", 80, 0, 0);

        send_pkt(t, &p, &n, 100, 200);
        n.tcp_flags = PANDA_TCP_FIN;
        send_pkt(t, &p, &n, 0, 200);
    }
    panda_table_stats(t, &s);
    assert_int_equal(s.evicted, 0);
    panda_table_destroy(t);
}

/* Issue 14, item 3: a sender cannot reset its own priority.  A demoted bulk
 * connection sends what its receiver ignores (a bare RST or SYN: RFC 5961)
 * or even really closes and reopens the tuple: it keeps its counter.  Only
 * silence restarts it: the idle timeout here (1 s), or idle_reset. */
static void
test_sender_cannot_reset_itself(void **state)
{
    static const uint8_t attacks[][2] = {
        { PANDA_TCP_RST, 0 },
        { PANDA_TCP_SYN, 0 },
        { PANDA_TCP_RST, PANDA_TCP_SYN },
        { PANDA_TCP_FIN | PANDA_TCP_ACK, PANDA_TCP_SYN },
        { PANDA_TCP_RST | PANDA_TCP_ACK, PANDA_TCP_SYN | PANDA_TCP_ACK },
    };
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(1024, 1000);
    struct panda_pkt k = tcp4("10.0.0.1", 5000, "10.0.0.2", 80, 0, 0);
    panda_msec_t now = 0;
    struct panda_table_stats s;
    int64_t before, after;
    size_t a;
    int i;

    (void) state;
    for (i = 0; i < 1000; i++) {        /* 1.4 MB: level 3. */
        send_pkt(t, &p, &k, 1448, now);
    }
    assert_int_equal(send_pkt(t, &p, &k, 1448, now).level, 3);
    for (a = 0; a < sizeof attacks / sizeof *attacks; a++) {
        assert_true(panda_table_lookup(t, &k, &before));
        for (i = 0; i < 2 && attacks[a][i]; i++) {
            k.tcp_flags = attacks[a][i];
            /* The bare control packet itself: control level. */
            assert_int_equal(send_pkt(t, &p, &k, 0, ++now).level, 0);
        }
        k.tcp_flags = PANDA_TCP_ACK;
        assert_int_equal(send_pkt(t, &p, &k, 1448, ++now).level, 3);
        assert_true(panda_table_lookup(t, &k, &after));
        assert_int_equal(after, before + 1448);
    }
    panda_table_stats(t, &s);
    assert_int_equal(s.inserted, 1);
    assert_int_equal(s.resumed, 4);
    assert_int_equal(s.connections, 1);

    /* Silence does restart it: after the idle timeout, a SYN (or data)
     * starts a new connection on top. */
    now += 1001;
    k.tcp_flags = PANDA_TCP_SYN;
    send_pkt(t, &p, &k, 0, now);
    k.tcp_flags = PANDA_TCP_ACK;
    assert_int_equal(send_pkt(t, &p, &k, 1448, now + 1).level, 0);
    assert_true(panda_table_lookup(t, &k, &after));
    assert_int_equal(after, 1448);
    panda_table_destroy(t);
}

/* Non-TCP packets and later fragments (no TCP header: proto 0 in the
 * extracted packet) cannot be tracked: they take untracked_level, by
 * default the lowest, so bulk UDP does not ride on top.  The operator can
 * set it (here: level 1, or the top). */
static void
test_untracked_level(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_policy mid = policy(POLICY ",untracked_level=1");
    struct panda_policy top = policy(POLICY ",untracked_level=0");
    struct panda_table *t = table(64, 0);
    struct panda_pkt udp = tcp4("10.0.0.1", 53, "10.0.0.2", 4000, 0, 0);
    struct panda_pkt frag = udp;
    struct panda_table_stats s;
    struct panda_table_verdict v;
    int i;

    (void) state;
    udp.proto = 17;
    frag.proto = 0;
    assert_int_equal(p.untracked_level, 3);
    for (i = 0; i < 100; i++) {
        v = send_pkt(t, &p, &udp, 1472, i);
        assert_int_equal(v.level, 3);
        assert_int_equal(v.dscp, 0);
        assert_int_equal(v.queue, 3);
        assert_false(v.stateful);
    }
    assert_int_equal(send_pkt(t, &p, &frag, 1480, 100).queue, 3);
    assert_int_equal(send_pkt(t, &mid, &udp, 1472, 101).dscp, 26);
    assert_int_equal(send_pkt(t, &top, &frag, 1480, 102).dscp, 46);
    panda_table_stats(t, &s);
    assert_int_equal(s.inserted, 0);
    assert_int_equal(s.packets[3], 101);
    panda_table_destroy(t);
}

static void
test_ctl_level_configurable(void **state)
{
    struct panda_policy p = policy(POLICY ",ctl_level=1");
    struct panda_table *t = table(64, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2,
                              PANDA_TCP_SYN, 0);

    (void) state;
    assert_int_equal(send_pkt(t, &p, &k, 0, 0).dscp, 26);
    k.tcp_flags = PANDA_TCP_RST;
    assert_int_equal(send_pkt(t, &p, &k, 0, 0).queue, 1);
    panda_table_destroy(t);
}

/* At capacity, new connections evict old ones (counted); memory is fixed. */
static void
test_capacity_evicts(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(64, 0);
    struct panda_table_stats before, after;
    uint32_t i;

    (void) state;
    for (i = 0; i < 5000; i++) {
        if (i == 1) {
            /* Slots are allocated on the first packet of a family. */
            panda_table_stats(t, &before);
            assert_true(before.capacity >= 64 && before.capacity <= 128);
        }
        struct panda_pkt k = tcp4("10.0.0.1", 0, "10.0.0.2", 80, 0, 100);

        k.sport = htons(i + 1);
        send_pkt(t, &p, &k, 100, i);
    }
    panda_table_stats(t, &after);
    assert_true(after.connections <= after.capacity);
    assert_true(after.connections >= after.capacity * 3 / 4);
    assert_int_equal(after.inserted, 5000);
    assert_int_equal(after.evicted + after.connections, 5000);
    assert_int_equal(after.bytes_allocated, before.bytes_allocated);
    /* The most recent connection survived. */
    {
        struct panda_pkt k = tcp4("10.0.0.1", 5000, "10.0.0.2", 80, 0, 0);

        assert_true(panda_table_lookup(t, &k, NULL));
    }
    panda_table_destroy(t);
}

/* Issue 14, item 4: a flood of distinct tuples (one packet each, 100 times
 * the table's capacity) replaces only its own kind.  Every established
 * connection keeps its counter and level, evictions are counted, memory
 * does not grow. */
static void
test_flood_keeps_established(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(1024, 120 * 1000);
    struct panda_table_stats before, after;
    const int n_est = 100;
    panda_msec_t now = 0;
    uint32_t i;
    int c, j;

    (void) state;
    for (c = 0; c < n_est; c++) {       /* 100 x 1448: level 2. */
        struct panda_pkt k = tcp4("10.0.0.1", 1000 + c, "10.0.0.2", 80, 0, 0);

        for (j = 0; j < 100; j++) {
            assert_true(send_pkt(t, &p, &k, 1448, now).stateful);
        }
    }
    panda_table_stats(t, &before);
    for (i = 0; i < 100 * 1024; i++) {
        struct panda_pkt k = tcp4("10.9.0.1", 0, "10.0.0.2", 80, 0, 0);

        k.src.v4 = htonl(0x0a090000 + (i >> 16));
        k.sport = htons(i & 0xffff);
        send_pkt(t, &p, &k, 100, now + i / 1000);
    }
    now += 100 * 1024 / 1000 + 1;
    for (c = 0; c < n_est; c++) {
        struct panda_pkt k = tcp4("10.0.0.1", 1000 + c, "10.0.0.2", 80, 0, 0);
        int64_t counter;

        assert_true(panda_table_lookup(t, &k, &counter));
        assert_int_equal(counter, 100 * 1448);
        assert_int_equal(send_pkt(t, &p, &k, 1448, now).level, 2);
    }
    panda_table_stats(t, &after);
    assert_true(after.evicted > 90 * 1024);
    assert_int_equal(after.evicted_established, 0);
    assert_true(after.connections <= after.capacity);
    assert_int_equal(after.bytes_allocated, before.bytes_allocated);
    panda_table_destroy(t);
}

/* Opens established connections (4 packets each) from port 1000 up until
 * one is refused; returns that packet's verdict, the tuple in '*refused'. */
static struct panda_table_verdict
fill_with_established(struct panda_table *t, const struct panda_policy *p,
                      struct panda_pkt *refused)
{
    struct panda_table_verdict v;
    uint32_t i;
    int j;

    for (i = 0; ; i++) {
        struct panda_pkt k = tcp4("10.0.0.1", 1000 + i, "10.0.0.2", 80, 0, 0);

        assert_true(i < 10000);
        v = send_pkt(t, p, &k, 100, 0);
        if (!v.stateful) {
            *refused = k;
            return v;
        }
        for (j = 0; j < 3; j++) {
            send_pkt(t, p, &k, 100, 0);
        }
    }
}

/* When every candidate slot of a new connection holds an established
 * connection that has sent in the last second, the newcomer is refused
 * (counted; its FLT packets at level 0, its FHT packets at
 * untracked_level); once they have been silent for a second, it gets in
 * after a few packets (admitted with probability 1/16 per packet), in the
 * slot of the one silent longest. */
static void
test_full_of_established(void **state)
{
    struct panda_policy p = policy(POLICY ",untracked_level=1");
    struct panda_table *t = table(64, 0);
    struct panda_table_stats s;
    struct panda_table_verdict v;
    struct panda_pkt refused;
    panda_msec_t now = 0;
    int j;

    (void) state;
    v = fill_with_established(t, &p, &refused);
    assert_false(v.stateful);
    assert_int_equal(v.level, 0);           /* 100 bytes < T: FLT */
    assert_int_equal(v.dscp, 46);
    v = send_pkt(t, &p, &refused, 1448, now);
    assert_false(v.stateful);
    assert_int_equal(v.level, 1);           /* FHT: untracked_level */
    assert_int_equal(v.dscp, 26);
    panda_table_stats(t, &s);
    assert_int_equal(s.refused, 2);
    assert_int_equal(s.evicted, 0);
    /* Within the second, however many packets it sends. */
    for (j = 0; j < 200; j++) {
        assert_false(send_pkt(t, &p, &refused, 100, now + 999).stateful);
    }
    /* A second later it gets in, soon: (15/16)^500 < 1e-14. */
    for (j = 0; !send_pkt(t, &p, &refused, 100, now + 1000).stateful; j++) {
        assert_true(j < 500);
    }
    assert_true(panda_table_lookup(t, &refused, NULL));
    panda_table_stats(t, &s);
    assert_int_equal(s.evicted, 1);
    assert_int_equal(s.evicted_established, 1);
    assert_int_equal(s.refused, 2 + 200 + j);
    panda_table_destroy(t);
}

/* Admission when full: a table kept full of active established tuples (an
 * attacker's, sending small packets: level 0) refuses newcomers, and what
 * the newcomers get then is what a new connection's packet gets by its
 * size: request/response traffic (payloads below T) level 0, as the
 * attacker's own; bulk packets the untracked level (here the lowest), so
 * that filling the table buys no one a bulk transfer on top.  PIAS, whose
 * signal is the bytes sent, has nothing to judge a packet by without its
 * counter: every refused data packet takes the untracked level. */
static void
test_full_table_admission(void **state)
{
    struct panda_policy pias = policy("id=2,kind=pias,"
                                      "thresholds=10000/100000/1000000");
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(1024, 0);
    struct panda_table_stats before, s;
    int levels[2][4] = { { 0 } };
    uint32_t i;
    int j;

    (void) state;
    /* The attacker offers four times the table's size of tuples, four
     * small packets each, so that every bucket is full. */
    for (i = 0; i < 4096; i++) {
        struct panda_pkt k = tcp4("10.0.0.1", 0, "10.0.0.2", 80, 0, 0);

        k.sport = htons(1000 + i);
        for (j = 0; j < 4; j++) {
            send_pkt(t, &p, &k, 100, 0);
        }
    }
    panda_table_stats(t, &before);
    assert_true(before.connections >= 1000);
    /* 20 newcomers, 5 request-sized packets and 5 bulk packets each. */
    for (i = 0; i < 20; i++) {
        struct panda_pkt k = tcp4("10.7.0.1", 2000 + i, "10.0.0.2", 11211,
                                  0, 0);

        for (j = 0; j < 5; j++) {
            struct panda_table_verdict v = send_pkt(t, &p, &k, 60, 0);

            levels[v.stateful][v.level]++;
            v = send_pkt(t, &p, &k, 1448, 0);
            levels[v.stateful][v.level]++;
        }
    }
    panda_table_stats(t, &s);
    /* Every slot the newcomers could take is held: all refused. */
    assert_int_equal(levels[1][0] + levels[1][1] + levels[1][2]
                     + levels[1][3], 0);
    assert_int_equal(levels[0][0], 100);    /* the 60-byte ones */
    assert_int_equal(levels[0][3], 100);    /* the 1448-byte ones */
    assert_int_equal(s.refused - before.refused, 200);
    /* PIAS: both kinds at the untracked level. */
    for (i = 0; i < 20; i++) {
        struct panda_pkt k = tcp4("10.7.0.1", 2000 + i, "10.0.0.2", 11211,
                                  0, 0);

        assert_int_equal(send_pkt(t, &pias, &k, 60, 0).level, 3);
        assert_int_equal(send_pkt(t, &pias, &k, 1448, 0).level, 3);
        /* Bare control packets as with a counter of 0. */
        k.tcp_flags = 0x02;                 /* SYN */
        assert_int_equal(send_pkt(t, &p, &k, 0, 0).level, p.ctl_level);
    }
    panda_table_destroy(t);
}

/* How full a table gets before the first refusal.  64 slots (16 buckets of
 * 4); displacement moves entries between their two buckets until 15/16 of
 * the slots (60) are live, so most tables refuse only from there, and the
 * rest (a displacement path not found in its bounded search) not much
 * earlier.  Where exactly depends on the hash seed, so this looks at 100
 * seeds rather than one; each is fixed, so a run is reproducible (measured
 * over seeds 1..5000: 92% at 60-64, none below 50).  The same seed places
 * the same tuples: two tables refuse the same one. */
static void
test_fill_before_refusal(void **state)
{
    struct panda_policy p = policy(POLICY);
    unsigned int full = 0, least = 64;
    uint64_t seed;

    (void) state;
    for (seed = 1; seed <= 100; seed++) {
        struct panda_table_config cfg = { 64, 0, 0, seed };
        struct panda_pkt refused[2];
        struct panda_table_stats s[2];
        int i;

        for (i = 0; i < 2; i++) {
            struct panda_table *t = panda_table_create(&cfg, NULL);

            assert_non_null(t);
            fill_with_established(t, &p, &refused[i]);
            panda_table_stats(t, &s[i]);
            panda_table_destroy(t);
        }
        assert_int_equal(refused[0].sport, refused[1].sport);
        assert_int_equal(s[0].connections, s[1].connections);
        full += s[0].connections >= 60;
        least = s[0].connections < least ? s[0].connections : least;
    }
    assert_true(full >= 85);
    assert_true(least >= 48);
}

/* Idle connections are reclaimed: they restart from zero. */
static void
test_idle_expiry(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(64, 1000);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    struct panda_table_stats s;
    int i;

    (void) state;
    for (i = 0; i < 100; i++) {
        send_pkt(t, &p, &k, 1448, i);
    }
    assert_int_equal(send_pkt(t, &p, &k, 1448, 500).level, 2);
    /* 2 s later: expired, restarts at one packet's worth. */
    assert_int_equal(send_pkt(t, &p, &k, 1448, 2600).level, 0);
    panda_table_stats(t, &s);
    assert_int_equal(s.expired, 1);
    panda_table_destroy(t);
}

/* Issue 14, item 5: time is 64-bit milliseconds everywhere.  A connection
 * idle for 2^31 + 5 ms (24.8 days) or 2^32 + 5 ms (which a 32-bit clock
 * sees as 5 ms) is idle; crossing 2^32 or the 40-bit wrap of the stored
 * timestamp is not a gap; a thread whose clock lags a little does not make
 * an entry look idle. */
static void
test_idle_long_gaps(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(64, 120 * 1000);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    const panda_msec_t t0 = 1000, t1 = t0 + (UINT64_C(1) << 31) + 5;
    const panda_msec_t wrap40 = UINT64_C(1) << 40;
    struct panda_table_stats s;
    int i;

    (void) state;
    for (i = 0; i < 100; i++) {
        send_pkt(t, &p, &k, 1448, t0);
    }
    assert_int_equal(send_pkt(t, &p, &k, 1448, t0).level, 2);
    /* 24.8 days and 5 ms later: idle, restarts from one packet. */
    assert_int_equal(send_pkt(t, &p, &k, 1448, t1).level, 0);
    for (i = 0; i < 100; i++) {
        send_pkt(t, &p, &k, 1448, t1);
    }
    /* 2^32 + 5 ms later (5 ms for a 32-bit clock): idle too. */
    assert_int_equal(send_pkt(t, &p, &k, 1448,
                              t1 + (UINT64_C(1) << 32) + 5).level, 0);
    panda_table_stats(t, &s);
    assert_int_equal(s.expired, 2);

    /* Crossing 2^32 and 2^40 are 15 ms gaps, not idle ones. */
    for (i = 0; i < 100; i++) {
        send_pkt(t, &p, &k, 1448, UINT32_MAX - 10);
    }
    assert_int_equal(send_pkt(t, &p, &k, 1448,
                              (UINT64_C(1) << 32) + 5).level, 2);
    send_pkt(t, &p, &k, 1448, wrap40 - 10);
    assert_int_equal(send_pkt(t, &p, &k, 1448, wrap40 + 5).level, 2);
    /* A packet stamped 3 ms earlier than the entry (another thread). */
    assert_int_equal(send_pkt(t, &p, &k, 1448, wrap40 + 2).level, 2);
    panda_table_stats(t, &s);
    assert_int_equal(s.expired, 2);
    assert_int_equal(panda_table_age(wrap40 + 5, wrap40 - 10), 15);
    assert_int_equal(panda_table_age(100, 103), 0);
    panda_table_destroy(t);
}

/* Durations at the top of their range: PANDA_MAX_DURATION_MS (2^32 - 1) is
 * accepted and compared as what it is (a signed 32-bit comparison saw it
 * as -1 and reset the counter on every packet); one more is refused. */
static void
test_duration_boundaries(void **state)
{
    struct panda_policy p = policy(POLICY ",idle_reset=4294967295");
    struct panda_table_config cfg = { 64, PANDA_MAX_DURATION_MS, 0, 1 };
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    const panda_msec_t t0 = 5000;
    struct panda_table_stats s;
    struct panda_table *t;
    char *err = NULL;
    int64_t counter;
    int i;

    (void) state;
    assert_int_equal(p.idle_reset_ms, PANDA_MAX_DURATION_MS);
    t = panda_table_create(&cfg, &err);
    assert_non_null(t);
    for (i = 0; i < 10; i++) {
        send_pkt(t, &p, &k, 1448, t0 + i);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 10 * 1448);
    /* Exactly the maximum gap: neither the idle reset nor the timeout. */
    send_pkt(t, &p, &k, 1448, t0 + 9 + PANDA_MAX_DURATION_MS);
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 11 * 1448);
    /* One more millisecond: both. */
    send_pkt(t, &p, &k, 1448, t0 + 10 + 2 * PANDA_MAX_DURATION_MS);
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 1448);
    panda_table_stats(t, &s);
    assert_int_equal(s.expired, 1);
    panda_table_destroy(t);

    cfg.idle_timeout_ms = PANDA_MAX_DURATION_MS + UINT64_C(1);
    assert_null(panda_table_create(&cfg, &err));
    assert_string_equal(err, "idle_timeout: 4294967296 ms out of range"
                        " (max 4294967295)");
    free(err);
}

static void
test_pias_policy(void **state)
{
    struct panda_policy pias = policy("id=2,kind=pias,thresholds=1000/5000,"
                                      "dscp=1/2/3,queues=0/1/2");
    struct panda_policy reset = policy("id=2,kind=pias,thresholds=1000/5000,"
                                       "dscp=1/2/3,queues=0/1/2,"
                                       "idle_reset=50");
    struct panda_table *t = table(64, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    int64_t counter;
    int i;

    (void) state;
    /* Small packets demote under PIAS: bytes are bytes. */
    for (i = 0; i < 60; i++) {
        send_pkt(t, &pias, &k, 100, i);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 6000);
    assert_int_equal(send_pkt(t, &pias, &k, 100, 61).level, 2);
    /* Idle reset off: a pause changes nothing. */
    assert_int_equal(send_pkt(t, &pias, &k, 100, 10000).level, 2);
    /* Idle reset on: a gap of more than 50 ms starts a new message. */
    assert_int_equal(send_pkt(t, &reset, &k, 100, 10020).level, 2);
    assert_int_equal(send_pkt(t, &reset, &k, 100, 10100).level, 0);
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 100);
    panda_table_destroy(t);
}

/* Changing a policy's thresholds keeps the counters (same table). */
static void
test_policy_update_keeps_counters(void **state)
{
    struct panda_policy a = policy(POLICY);
    struct panda_policy b = policy("id=1,threshold=1000,"
                                   "thresholds=50000/100000/1000000");
    struct panda_table *t = table(64, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    int64_t counter;
    int i;

    (void) state;
    for (i = 0; i < 20; i++) {
        send_pkt(t, &a, &k, 1448, i);
    }
    assert_int_equal(send_pkt(t, &a, &k, 1448, 20).level, 1);
    assert_int_equal(send_pkt(t, &b, &k, 1448, 21).level, 0);
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 22 * 1448);
    panda_table_destroy(t);
}

static void
test_ipv6(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(64, 0);
    struct panda_pkt k, k4;
    struct panda_table_stats s;
    int64_t counter;
    int i;

    (void) state;
    memset(&k, 0, sizeof k);
    k.family = 6;
    k.proto = 6;
    inet_pton(AF_INET6, "2001:db8::1", k.src.v6);
    inet_pton(AF_INET6, "2001:db8::2", k.dst.v6);
    k.sport = htons(1);
    k.dport = htons(2);
    for (i = 0; i < 10; i++) {
        send_pkt(t, &p, &k, 1448, i);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 14480);
    /* Same ports, different family: a separate connection. */
    k4 = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    assert_false(panda_table_lookup(t, &k4, NULL));
    /* Differs only in the last address byte: separate too. */
    k.dst.v6[15] = 3;
    assert_false(panda_table_lookup(t, &k, NULL));
    panda_table_stats(t, &s);
    assert_int_equal(s.connections, 1);
    assert_int_equal(panda_table_entry_size(4), 24);
    assert_int_equal(panda_table_entry_size(6), 48);
    panda_table_destroy(t);
}

/* panda_table_max_bytes(), what the datapath reserves of its memory budget
 * per table, is what a table holds once both families are in use, and
 * about 72 bytes per connection (24 for IPv4, 48 for IPv6). */
static void
test_max_bytes(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table_config cfg = { 100000, 0, 0, 1 };
    struct panda_table_stats s;
    struct panda_table *t;
    struct panda_pkt k;
    uint64_t max;
    char *err;

    (void) state;
    max = panda_table_max_bytes(&cfg);
    assert_true(max >= 72 * 100000 && max <= 72 * 100000 + 64 * 1024);
    t = panda_table_create(&cfg, &err);
    panda_table_stats(t, &s);
    assert_true(s.bytes_allocated < max / 100);
    k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    send_pkt(t, &p, &k, 100, 0);
    k.family = 6;
    send_pkt(t, &p, &k, 100, 0);
    panda_table_stats(t, &s);
    assert_int_equal(s.bytes_allocated, max);
    panda_table_destroy(t);
}

struct thread_arg {
    struct panda_table *t;
    const struct panda_policy *p;
    int n;
    pthread_barrier_t *start;   /* So that the threads overlap. */
};

static void *
hammer(void *arg_)
{
    struct thread_arg *arg = arg_;
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    int i;

    pthread_barrier_wait(arg->start);
    for (i = 0; i < arg->n; i++) {
        send_pkt(arg->t, arg->p, &k, 1000, i);
    }
    return NULL;
}

/* Two threads updating one connection lose no update.  Enough updates
 * (0.1-0.2 s) that the two threads run at the same time even on a loaded
 * machine: a plain store instead of the compare-and-swap loses about a
 * third of them here. */
static void
test_concurrent_updates(void **state)
{
    struct panda_policy p = policy("id=1,kind=pias");
    struct panda_table *t = table(1 << 16, 0);
    pthread_barrier_t start;
    struct thread_arg arg = { t, &p, UNDER_ASAN ? 300000 : 1500000,
                              &start };
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    pthread_t th[2];
    int64_t counter;
    int i;

    (void) state;
    pthread_barrier_init(&start, NULL, 2);
    for (i = 0; i < 2; i++) {
        pthread_create(&th[i], NULL, hammer, &arg);
    }
    for (i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 2 * (int64_t) arg.n * 1000);
    pthread_barrier_destroy(&start);
    panda_table_destroy(t);
}

/* Updates without a lock beside what moves keys: one thread keeps
 * sending on 4 established connections while another fills the same
 * small table with new connections and ends them, round after round, so
 * that insertions, cuckoo displacements (which move entries the first
 * thread is updating) and ends run all the time.  The 4 counters come out
 * exact: no update lost, none applied to another connection. */
/* New connections per round in a table of 64: with the 4 steady ones,
 * 54 of 64 slots, below the displacement limit (60) but full enough that
 * most insertions move entries. */
#define CHURN_NEW 50

struct churn_arg {
    struct panda_table *t;
    const struct panda_policy *p;
    int n;
    /* Atomic, not volatile: the two threads share it, and a plain flag
     * is a data race that ThreadSanitizer reports. */
    atomic_bool *stop;
    pthread_barrier_t *start;
};

static void *
churn_steady(void *arg_)
{
    struct churn_arg *arg = arg_;
    int i, c;

    pthread_barrier_wait(arg->start);
    for (i = 0; i < arg->n; i++) {
        for (c = 0; c < 4; c++) {
            struct panda_pkt k = tcp4("10.0.0.1", 1 + c, "10.0.0.2", 2, 0,
                                      0);

            send_pkt(arg->t, arg->p, &k, 1000, 0);
        }
    }
    atomic_store(arg->stop, true);
    return NULL;
}

static void *
churn_new(void *arg_)
{
    struct churn_arg *arg = arg_;
    uint16_t port = 1000;
    int i;

    pthread_barrier_wait(arg->start);
    while (!atomic_load(arg->stop)) {
        for (i = 0; i < CHURN_NEW; i++) {
            struct panda_pkt k = tcp4("10.9.0.1", port + i, "10.0.0.2", 2,
                                      0, 0);

            send_pkt(arg->t, arg->p, &k, 100, 0);
        }
        for (i = 0; i < CHURN_NEW; i++) {
            struct panda_pkt k = tcp4("10.9.0.1", port + i, "10.0.0.2", 2,
                                      PANDA_TCP_FIN, 0);

            send_pkt(arg->t, arg->p, &k, 0, 0);
        }
        port = port < 60000 ? port + CHURN_NEW : 1000;
    }
    return NULL;
}

static void
test_concurrent_churn(void **state)
{
    struct panda_policy p = policy("id=1,kind=pias");
    struct panda_table *t = table(64, 0);
    atomic_bool stop = false;
    const int n = UNDER_ASAN ? 100000 : 400000;
    pthread_barrier_t start;
    struct churn_arg arg = { t, &p, n, &stop, &start };
    struct panda_table_stats s;
    pthread_t th[2];
    int64_t counter;
    int c;

    (void) state;
    /* The steady connections established first (ESTABLISHED_PACKETS, 4,
     * in conn-table.c): a connection that has sent fewer packets is one a
     * new tuple may evict, and the churn would then restart its counter
     * whenever the steady thread starts late.  Their first payloads differ
     * (1000 + c), so that no two of them ever have the same state word:
     * two connections in the same state are the one case in which an
     * update without the lock can land on the other (conn-table.c,
     * "Concurrency"). */
    for (c = 0; c < 4; c++) {
        struct panda_pkt k = tcp4("10.0.0.1", 1 + c, "10.0.0.2", 2, 0, 0);
        int i;

        for (i = 0; i < 4; i++) {
            send_pkt(t, &p, &k, i ? 1000 : 1000 + c, 0);
        }
    }
    pthread_barrier_init(&start, NULL, 2);
    pthread_create(&th[0], NULL, churn_new, &arg);
    pthread_create(&th[1], NULL, churn_steady, &arg);
    pthread_join(th[1], NULL);
    pthread_join(th[0], NULL);
    for (c = 0; c < 4; c++) {
        struct panda_pkt k = tcp4("10.0.0.1", 1 + c, "10.0.0.2", 2, 0, 0);

        assert_true(panda_table_lookup(t, &k, &counter));
        assert_int_equal(counter, (int64_t) (n + 4) * 1000 + c);
    }
    panda_table_stats(t, &s);
    print_message("churn: %" PRIu64 " inserted, %" PRIu64 " ended beside "
                  "%d x 4 updates\n", s.inserted, s.removed, n);
    assert_true(s.inserted > CHURN_NEW);
    pthread_barrier_destroy(&start);
    panda_table_destroy(t);
}

/* One packet of the mixed sequence of test_batch_equals_one_by_one(). */
static struct panda_pkt
mixed_pkt(struct panda_rng *r)
{
    static const uint32_t payloads[] = { 0, 100, 1448 };
    uint64_t x = panda_rng_next(r);
    struct panda_pkt k = tcp4("10.0.0.1", 1 + x % 40, "10.0.0.2", 80, 0,
                              payloads[(x >> 8) % 3]);

    switch ((x >> 16) % 32) {
    case 0:
        k.tcp_flags = PANDA_TCP_SYN;
        break;
    case 1:
        k.tcp_flags = PANDA_TCP_FIN;
        break;
    case 2:
        k.proto = 17;           /* Not TCP: untracked. */
        break;
    case 6:
        /* Headers longer than PANDA_MAX_HDR_LEN count as payload. */
        k.hdr_len = 1480;
        break;
    case 3: case 4: case 5:
        /* IPv6, whose slots the batch path reaches by the general case. */
        k.family = 6;
        memset(&k.src.v6, 0, sizeof k.src.v6);
        memset(&k.dst.v6, 0, sizeof k.dst.v6);
        k.src.v6[0] = 0x20;
        k.dst.v6[0] = 0x20;
        k.dst.v6[15] = 2;
        break;
    }
    return k;
}

/* panda_table_classify_batch() decides what panda_table_classify() of the
 * same packets one by one decides, verdict by verdict, and leaves the same
 * counters and statistics: batches of every size from 1 to 70 (more than
 * one chunk of 32), one connection several times in a batch, SYN, FIN,
 * long headers, IPv6, not TCP, the first packets before the slots
 * exist. */
static void
test_batch_equals_one_by_one(void **state)
{
    enum { N = 20000, MAX_B = 70 };
    struct panda_policy p = policy(POLICY);
    struct panda_table *one = table(1024, 50);
    struct panda_table *bat = table(1024, 50);
    struct panda_table_stats s1, s2;
    static struct panda_pkt pkts[N];
    static struct panda_table_verdict v1[N], v2[N];
    struct panda_rng r;
    size_t i, b = 1, n_batches = 0;
    panda_msec_t now = 0;
    int c;

    (void) state;
    panda_rng_seed(&r, 7);
    for (i = 0; i < N; i++) {
        pkts[i] = mixed_pkt(&r);
    }
    for (i = 0; i < N; i += b) {
        size_t m = N - i < b ? N - i : b, j;

        /* A batch shares one time, 1 ms after the last; one in 40, 60 ms
         * after it, beyond the idle timeout. */
        now += ++n_batches % 40 ? 1 : 60;
        for (j = 0; j < m; j++) {
            panda_table_classify(one, &p, &pkts[i + j], now, &v1[i + j]);
        }
        panda_table_classify_batch(bat, &p, &pkts[i], m, now, &v2[i]);
        b = b % MAX_B + 1;
    }
    for (i = 0; i < N; i++) {
        assert_int_equal(v1[i].level, v2[i].level);
        assert_int_equal(v1[i].dscp, v2[i].dscp);
        assert_int_equal(v1[i].queue, v2[i].queue);
        assert_int_equal(v1[i].stateful, v2[i].stateful);
    }
    for (c = 0; c < 40; c++) {
        struct panda_pkt k = tcp4("10.0.0.1", 1 + c, "10.0.0.2", 80, 0, 0);
        int64_t c1 = -1, c2 = -1;
        bool f1 = panda_table_lookup(one, &k, &c1);

        assert_int_equal(f1, panda_table_lookup(bat, &k, &c2));
        assert_int_equal(c1, c2);
    }
    panda_table_stats(one, &s1);
    panda_table_stats(bat, &s2);
    assert_true(s1.inserted > 40);      /* Ended and expired ones came back. */
    assert_int_equal(s1.connections, s2.connections);
    assert_int_equal(s1.inserted, s2.inserted);
    assert_int_equal(s1.removed, s2.removed);
    assert_int_equal(s1.resumed, s2.resumed);
    assert_int_equal(s1.expired, s2.expired);
    assert_memory_equal(s1.packets, s2.packets, sizeof s1.packets);
    panda_table_destroy(one);
    panda_table_destroy(bat);
}

static void *
hammer_batch(void *arg_)
{
    struct thread_arg *arg = arg_;
    struct panda_pkt b[32];
    struct panda_table_verdict v[32];
    int i;

    /* Two connections, alternating, so that each appears 16 times in a
     * batch. */
    for (i = 0; i < 32; i++) {
        b[i] = tcp4("10.0.0.1", 1 + i % 2, "10.0.0.2", 2, 0, 1000);
    }
    pthread_barrier_wait(arg->start);
    for (i = 0; i < arg->n; i++) {
        panda_table_classify_batch(arg->t, arg->p, b, 32, i, v);
    }
    return NULL;
}

/* Two threads classifying batches in which the same two connections recur
 * keep one counter per connection: no update lost. */
static void
test_concurrent_batches(void **state)
{
    struct panda_policy p = policy("id=1,kind=pias");
    struct panda_table *t = table(1 << 16, 0);
    pthread_barrier_t start;
    struct thread_arg arg = { t, &p, UNDER_ASAN ? 10000 : 50000, &start };
    pthread_t th[2];
    int i;

    (void) state;
    pthread_barrier_init(&start, NULL, 2);
    for (i = 0; i < 2; i++) {
        pthread_create(&th[i], NULL, hammer_batch, &arg);
    }
    for (i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    for (i = 0; i < 2; i++) {
        struct panda_pkt k = tcp4("10.0.0.1", 1 + i, "10.0.0.2", 2, 0, 0);
        int64_t counter;

        assert_true(panda_table_lookup(t, &k, &counter));
        assert_int_equal(counter, 2 * (int64_t) arg.n * 16 * 1000);
    }
    pthread_barrier_destroy(&start);
    panda_table_destroy(t);
}

/* The counter saturates at 2^34 - 1 (the entry keeps 35 bits): a PIAS
 * connection past 17 GB stays at the top level and its counter stops
 * there; going down again (Panda's compensation) starts from it. */
static void
test_counter_saturates(void **state)
{
    struct panda_policy pias = policy("id=2,kind=pias,thresholds=1000/5000,"
                                      "dscp=1/2/3,queues=0/1/2");
    struct panda_policy panda = policy("id=2,threshold=1000,"
                                       "thresholds=1000/5000,"
                                       "dscp=1/2/3,queues=0/1/2");
    struct panda_table *t = table(64, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    const int64_t max = (INT64_C(1) << 34) - 1;
    int64_t counter;
    int i;

    (void) state;
    for (i = 0; i < (1 << 18) + 10; i++) {
        send_pkt(t, &pias, &k, 65535, i);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, max);
    assert_int_equal(send_pkt(t, &pias, &k, 65535, i).level, 2);
    /* 100 small packets take 100 x 900 off the saturated counter. */
    for (i = 0; i < 100; i++) {
        send_pkt(t, &panda, &k, 100, 1 << 20);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, max - 100 * 900);
    panda_table_destroy(t);
}

static void
test_flush_and_foreach(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(256, 0);
    struct panda_table_stats s;
    int i;

    (void) state;
    for (i = 0; i < 10; i++) {
        struct panda_pkt k = tcp4("10.0.0.1", i + 1, "10.0.0.2", 80, 0, 0);

        send_pkt(t, &p, &k, 500 + i, i);
    }
    panda_table_stats(t, &s);
    assert_int_equal(s.connections, 10);
    panda_table_flush(t);
    panda_table_stats(t, &s);
    assert_int_equal(s.connections, 0);
    panda_table_destroy(t);
}

/* ---- Flow sizes: bytes per connection, counted once. ---- */

static bool
first_bytes(const struct panda_table_conn_info *ci, void *aux)
{
    *(uint64_t *) aux = ci->bytes;
    return false;
}

/* The bytes of the only connection of 't'. */
static uint64_t
conn_bytes(struct panda_table *t)
{
    uint64_t bytes = UINT64_MAX;

    panda_table_foreach(t, first_bytes, &bytes);
    return bytes;
}

/* The one nonzero flow bucket of 'h' (asserted), as its lower edge. */
static uint64_t
only_flow_lower(const struct panda_sizehist *h)
{
    size_t b, found = SIZE_MAX;

    for (b = 0; b < PANDA_SIZEHIST_FLOW_BUCKETS; b++) {
        if (h->flow[b]) {
            assert_int_equal(found, SIZE_MAX);
            assert_int_equal(h->flow[b], 1);
            found = b;
        }
    }
    assert_int_not_equal(found, SIZE_MAX);
    return panda_sizehist_lower(PANDA_SIZEHIST_FLOW, found);
}

/* Known byte sequences give known bytes and a known bucket: exact below
 * 64 KiB (100 + 200 + 300 = 600 -> [512, 639]); 44 x 1448 = 63712 exact
 * too, in [57344, 65535]; a FIN counts the flow at once. */
static void
test_flow_bytes_known(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(64, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    struct panda_sizehist *h = calloc(1, sizeof *h);
    int i;

    (void) state;
    panda_table_set_flow_hist(t, h);
    send_pkt(t, &p, &k, 100, 1);
    send_pkt(t, &p, &k, 200, 2);
    send_pkt(t, &p, &k, 300, 3);
    assert_int_equal(conn_bytes(t), 600);
    assert_int_equal(panda_sizehist_flows(h), 0);
    k.tcp_flags = PANDA_TCP_FIN | PANDA_TCP_ACK;
    send_pkt(t, &p, &k, 0, 4);
    assert_int_equal(panda_sizehist_flows(h), 1);
    assert_int_equal(only_flow_lower(h), 512);

    panda_sizehist_reset(h);
    k = tcp4("10.0.0.1", 2, "10.0.0.2", 2, 0, 0);
    for (i = 0; i < 44; i++) {
        send_pkt(t, &p, &k, 1448, 10);
    }
    assert_int_equal(conn_bytes(t), 63712);
    k.tcp_flags = PANDA_TCP_RST;
    send_pkt(t, &p, &k, 0, 11);
    assert_int_equal(only_flow_lower(h), 57344);
    panda_table_destroy(t);
    free(h);
}

/* The error bound of conn-table.c ("Flow bytes"): over many random flows
 * (1 to 20000 packets of 1 to 65535 bytes, up to 1.3 GB), every estimate
 * is within 5 standard deviations (5 x 2^-7.5 of the size) and the mean
 * relative error is within 3 standard errors of 0 (unbiased); fixed seeds,
 * so the run is the same every time. */
static void
test_flow_bytes_error_bound(void **state)
{
    const double sd = 0.0055242717280199;      /* 2^-7.5 */
    struct panda_policy p = policy(POLICY);
    struct panda_table *t = table(4096, 0);
    struct panda_rng rng;
    double sum = 0, max = 0;
    const int n_flows = UNDER_ASAN ? 100 : 400;
    struct panda_sizehist *h = calloc(1, sizeof *h);
    int f, inexact = 0;

    (void) state;
    panda_table_set_flow_hist(t, h);
    panda_rng_seed(&rng, 19);
    for (f = 0; f < n_flows; f++) {
        struct panda_pkt k = tcp4("10.0.0.1", f + 1, "10.0.0.2", 80, 0, 0);
        uint32_t n = 1 + panda_rng_next(&rng) % 20000, i;
        uint64_t exact = 0, est;
        double rel;

        for (i = 0; i < n; i++) {
            uint32_t x = 1 + panda_rng_next(&rng) % 65535;

            exact += x;
            send_pkt(t, &p, &k, x, f);
        }
        est = 0;
        panda_table_foreach(t, first_bytes, &est);
        k.tcp_flags = PANDA_TCP_FIN;
        send_pkt(t, &p, &k, 0, f);
        rel = ((double) est - (double) exact) / (double) exact;
        if (exact < 65536) {
            assert_int_equal(est, exact);
        } else {
            inexact++;
        }
        sum += rel;
        max = rel > max ? rel : -rel > max ? -rel : max;
        assert_true(rel < 5 * sd && rel > -5 * sd);
    }
    /* The mean of 'inexact' errors of sd at most: 3 standard errors. */
    assert_true(inexact > n_flows / 2);
    {
        const double se = sd / (UNDER_ASAN ? 10 : 20);  /* sqrt(n_flows) */

        assert_true(sum / n_flows < 3 * se && sum / n_flows > -3 * se);
    }
    print_message("flow bytes: %d flows, max |error| %.4f%%, mean %.5f%%\n",
                  n_flows, max * 100, sum / n_flows * 100);
    assert_int_equal(panda_sizehist_flows(h), n_flows);
    panda_table_destroy(t);
    free(h);
}

/* Each way a flow ends is counted once, never twice: FIN then a FIN
 * retransmission and data after it (the same flow); RST; expiry (found
 * by its own next packet, and reused by a new connection); flush.  An
 * evicted flow is not counted.  A SYN on the ended tuple is a new flow,
 * counted when it ends if it sent anything. */
static void
test_flow_counted_once(void **state)
{
    struct panda_policy p = policy(POLICY);
    struct panda_sizehist *h = calloc(1, sizeof *h);
    struct panda_table *t = table(64, 1000);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    struct panda_table_stats s, s0;
    int i;

    (void) state;
    panda_table_set_flow_hist(t, h);

    /* FIN, then the FIN again, data after it, a RST: one flow, 3000. */
    send_pkt(t, &p, &k, 1000, 0);
    send_pkt(t, &p, &k, 2000, 1);
    k.tcp_flags = PANDA_TCP_FIN | PANDA_TCP_ACK;
    send_pkt(t, &p, &k, 0, 2);
    send_pkt(t, &p, &k, 0, 3);
    k.tcp_flags = PANDA_TCP_ACK;
    send_pkt(t, &p, &k, 500, 4);
    k.tcp_flags = PANDA_TCP_RST;
    send_pkt(t, &p, &k, 0, 5);
    assert_int_equal(panda_sizehist_flows(h), 1);
    assert_int_equal(only_flow_lower(h), 2560);     /* [2560, 3071] */

    /* A SYN resumes the tuple as a new flow: 700 bytes, ended by RST. */
    panda_sizehist_reset(h);
    k.tcp_flags = PANDA_TCP_SYN;
    send_pkt(t, &p, &k, 0, 6);
    k.tcp_flags = PANDA_TCP_ACK;
    send_pkt(t, &p, &k, 700, 7);
    k.tcp_flags = PANDA_TCP_RST;
    send_pkt(t, &p, &k, 0, 8);
    assert_int_equal(only_flow_lower(h), 640);      /* [640, 767] */
    /* Resumed by a SYN and closed without data: not a flow. */
    k.tcp_flags = PANDA_TCP_SYN;
    send_pkt(t, &p, &k, 0, 8);
    k.tcp_flags = PANDA_TCP_RST;
    send_pkt(t, &p, &k, 0, 8);
    assert_int_equal(panda_sizehist_flows(h), 1);

    /* Expiry found by the flow's own next packet: 100 bytes counted, the
     * packet starts a new flow (counted later by the flush). */
    panda_sizehist_reset(h);
    k = tcp4("10.0.0.1", 2, "10.0.0.2", 2, 0, 0);
    send_pkt(t, &p, &k, 60, 10);
    send_pkt(t, &p, &k, 40, 11);
    send_pkt(t, &p, &k, 3, 3000);
    send_pkt(t, &p, &k, 2, 3001);
    assert_int_equal(only_flow_lower(h), 96);       /* [96, 127] */
    panda_sizehist_reset(h);
    panda_table_flush(t);
    assert_int_equal(only_flow_lower(h), 5);
    panda_table_flush(t);                           /* Nothing left. */
    assert_int_equal(panda_sizehist_flows(h), 1);

    /* Expiry by reuse, and eviction: 64 slots hold the connections of 9
     * bytes in two packets sent at 5 s; those of 8 s expire them (each
     * counted) and then evict one another, not established (none
     * counted). */
    panda_sizehist_reset(h);
    panda_table_stats(t, &s0);
    for (i = 0; i < 3 * 64; i++) {
        struct panda_pkt n = tcp4("10.0.1.1", i + 1, "10.0.0.2", 80, 0, 0);
        panda_msec_t now = i < 64 ? 5000 : 8000;

        send_pkt(t, &p, &n, 4, now);
        send_pkt(t, &p, &n, 5, now);
    }
    panda_table_stats(t, &s);
    assert_true(s.expired - s0.expired >= 32);
    assert_true(s.evicted - s0.evicted >= 32);
    assert_int_equal(panda_sizehist_flows(h), s.expired - s0.expired);
    assert_int_equal(h->flow[panda_sizehist_bucket(PANDA_SIZEHIST_FLOW, 9)],
                     panda_sizehist_flows(h));
    /* What is left is counted by the flush, and no more. */
    panda_table_flush(t);
    assert_int_equal(panda_sizehist_flows(h),
                     s.expired - s0.expired + s.connections);

    /* No histogram: no bytes kept, nothing counted, nothing breaks; a
     * flow live when one is set again is counted with what it sent since. */
    panda_sizehist_reset(h);
    panda_table_set_flow_hist(t, NULL);
    k = tcp4("10.0.2.1", 1, "10.0.0.2", 2, 0, 0);
    send_pkt(t, &p, &k, 1000, 9000);
    assert_int_equal(conn_bytes(t), 0);
    k.tcp_flags = PANDA_TCP_FIN;
    send_pkt(t, &p, &k, 10, 9000);
    assert_int_equal(panda_sizehist_flows(h), 0);
    k = tcp4("10.0.2.1", 2, "10.0.0.2", 2, 0, 0);
    send_pkt(t, &p, &k, 1000, 9000);
    panda_table_set_flow_hist(t, h);
    send_pkt(t, &p, &k, 100, 9000);
    k.tcp_flags = PANDA_TCP_FIN;
    send_pkt(t, &p, &k, 0, 9000);
    assert_int_equal(only_flow_lower(h), 96);
    panda_table_destroy(t);
    free(h);
}

/* The flows a sender can mint at one packet a tuple are not flows of the
 * flow-size CDF (conn-table.c, entry_count_flow()): 50,000 tuples of one
 * data + FIN packet each (the attack that added 50,000 flows of 10 bytes)
 * count nothing, nor do one-packet tuples that go silent and expire, nor
 * flows evicted by a flood (test_flow_counted_once()); a flow of two
 * packets or more counts, once, however it ends.  A flush (an operator's
 * action) counts the live flows as they stand. */
static void
test_flow_count_rule(void **state)
{
    const int n_flood = UNDER_ASAN ? 5000 : 50000;
    struct panda_policy p = policy(POLICY);
    struct panda_sizehist *h = calloc(1, sizeof *h);
    struct panda_table *t = table(1 << 17, 1000);
    struct panda_table_stats s;
    struct panda_pkt k;
    int i;

    (void) state;
    panda_table_set_flow_hist(t, h);

    /* Single-packet data + FIN tuples. */
    for (i = 0; i < n_flood; i++) {
        k = tcp4("10.9.0.1", 1 + i % 60000, "10.0.0.2", 80 + i / 60000,
                 PANDA_TCP_FIN | PANDA_TCP_ACK, 0);
        send_pkt(t, &p, &k, 10, 100);
    }
    panda_table_stats(t, &s);
    assert_int_equal(s.inserted, n_flood);
    assert_int_equal(panda_sizehist_flows(h), 0);

    /* Single-packet data tuples that go silent: not counted when they
     * expire (found by their own next packet, a new one-packet flow). */
    for (i = 0; i < 1000; i++) {
        k = tcp4("10.9.1.1", 1 + i, "10.0.0.2", 80, PANDA_TCP_ACK, 0);
        send_pkt(t, &p, &k, 10, 200);
    }
    for (i = 0; i < 1000; i++) {
        k = tcp4("10.9.1.1", 1 + i, "10.0.0.2", 80, PANDA_TCP_ACK, 0);
        send_pkt(t, &p, &k, 10, 5000);
    }
    panda_table_stats(t, &s);
    assert_int_equal(s.expired, 1000);
    assert_int_equal(panda_sizehist_flows(h), 0);
    /* The flush counts what is live (the 1000 new one-packet flows). */
    panda_table_flush(t);
    assert_int_equal(panda_sizehist_flows(h), 1000);
    panda_sizehist_reset(h);

    /* Real flows: data then a bare FIN (2 packets); data, pure ACKs of
     * the other side's data, RST; data in two packets that goes silent
     * (expiry); each counted once with its bytes. */
    k = tcp4("10.0.0.1", 1, "10.0.0.2", 80, PANDA_TCP_ACK, 0);
    send_pkt(t, &p, &k, 100, 6000);
    k.tcp_flags = PANDA_TCP_FIN | PANDA_TCP_ACK;
    send_pkt(t, &p, &k, 0, 6001);
    send_pkt(t, &p, &k, 0, 6002);                   /* Retransmitted. */
    assert_int_equal(only_flow_lower(h), 96);       /* [96, 127] */
    panda_sizehist_reset(h);
    k = tcp4("10.0.0.1", 2, "10.0.0.2", 80, PANDA_TCP_ACK, 0);
    send_pkt(t, &p, &k, 700, 6000);
    send_pkt(t, &p, &k, 0, 6001);
    k.tcp_flags = PANDA_TCP_RST;
    send_pkt(t, &p, &k, 0, 6002);
    assert_int_equal(only_flow_lower(h), 640);      /* [640, 767] */
    panda_sizehist_reset(h);
    k = tcp4("10.0.0.1", 3, "10.0.0.2", 80, PANDA_TCP_ACK, 0);
    send_pkt(t, &p, &k, 50, 6000);
    send_pkt(t, &p, &k, 50, 6001);
    send_pkt(t, &p, &k, 1, 9000);       /* Expired: a new flow begins. */
    assert_int_equal(only_flow_lower(h), 96);

    /* What a one-packet flow loses: a single segment carrying its data
     * and its FIN is not told apart from the flood above. */
    panda_sizehist_reset(h);
    k = tcp4("10.0.0.1", 4, "10.0.0.2", 80, PANDA_TCP_FIN | PANDA_TCP_ACK,
             0);
    send_pkt(t, &p, &k, 1448, 9000);
    assert_int_equal(panda_sizehist_flows(h), 0);
    panda_table_destroy(t);
    free(h);
}

static void
test_bad_config(void **state)
{
    struct panda_table_config cfg = { 0, 0, 0, 1 };
    char *err = NULL;

    (void) state;
    assert_null(panda_table_create(&cfg, &err));
    assert_non_null(err);
    assert_non_null(strstr(err, "capacity"));
    free(err);
    cfg.capacity = 2u << 30;
    assert_null(panda_table_create(&cfg, &err));
    assert_non_null(strstr(err, "capacity"));
    free(err);
}

/* When a family's slots cannot be allocated (here: an address-space limit
 * far below the table's size), packets are untracked (untracked_level) and
 * counted, nothing aborts, and the allocation is tried again once the retry
 * interval has passed. */
#if !UNDER_ASAN
static void
test_allocation_failure(void **state)
{
    struct panda_policy p = policy(POLICY ",untracked_level=1");
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    struct panda_table *t;
    struct panda_table_verdict v;
    struct panda_table_stats s;
    struct rlimit old, low;
    void *probe;

    (void) state;
    /* 2^22 IPv4 entries: 128 MiB of slots. */
    t = table(1u << 22, 0);
    assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
    low = old;
    low.rlim_cur = 64u << 20;       /* Below what the process has mapped. */
    assert_int_equal(setrlimit(RLIMIT_AS, &low), 0);
    probe = malloc(128u << 20);     /* The limit does bite. */
    assert_null(probe);

    v = send_pkt(t, &p, &k, 1448, 1000);
    assert_false(v.stateful);
    assert_int_equal(v.level, 1);
    assert_int_equal(v.dscp, 26);
    v = send_pkt(t, &p, &k, 1448, 1500);
    assert_false(v.stateful);
    panda_table_stats(t, &s);
    assert_int_equal(s.alloc_failures, 2);
    assert_int_equal(s.connections, 0);

    /* Memory again: within the retry interval nothing is tried... */
    assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
    assert_false(send_pkt(t, &p, &k, 1448, 1999).stateful);
    /* ...after it, the slots are allocated and the connection tracked. */
    v = send_pkt(t, &p, &k, 1448, 2000);
    assert_true(v.stateful);
    assert_int_equal(v.level, 0);
    panda_table_stats(t, &s);
    assert_int_equal(s.alloc_failures, 3);
    assert_int_equal(s.connections, 1);
    panda_table_destroy(t);
}
#endif

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_packet_dscp_queue),
        cmocka_unit_test(test_bulk_flow_sinks_in_order),
        cmocka_unit_test(test_flow_climbs_back),
        cmocka_unit_test(test_floor_prevents_banking),
        cmocka_unit_test(test_pure_acks_and_control),
        cmocka_unit_test(test_bare_packets_insert_nothing),
        cmocka_unit_test(test_data_after_fin),
        cmocka_unit_test(test_sender_cannot_reset_itself),
        cmocka_unit_test(test_untracked_level),
        cmocka_unit_test(test_ctl_level_configurable),
        cmocka_unit_test(test_capacity_evicts),
        cmocka_unit_test(test_flood_keeps_established),
        cmocka_unit_test(test_full_of_established),
        cmocka_unit_test(test_full_table_admission),
        cmocka_unit_test(test_fill_before_refusal),
        cmocka_unit_test(test_idle_expiry),
        cmocka_unit_test(test_idle_long_gaps),
        cmocka_unit_test(test_duration_boundaries),
        cmocka_unit_test(test_pias_policy),
        cmocka_unit_test(test_policy_update_keeps_counters),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_max_bytes),
        cmocka_unit_test(test_concurrent_updates),
        cmocka_unit_test(test_concurrent_churn),
        cmocka_unit_test(test_batch_equals_one_by_one),
        cmocka_unit_test(test_concurrent_batches),
        cmocka_unit_test(test_counter_saturates),
        cmocka_unit_test(test_flush_and_foreach),
        cmocka_unit_test(test_flow_bytes_known),
        cmocka_unit_test(test_flow_bytes_error_bound),
        cmocka_unit_test(test_flow_counted_once),
        cmocka_unit_test(test_flow_count_rule),
        cmocka_unit_test(test_bad_config),
#if !UNDER_ASAN
        /* RLIMIT_AS cannot make allocations fail under AddressSanitizer,
         * which reserves its address space up front: not in the sanitizer
         * build. */
        cmocka_unit_test(test_allocation_failure),
#endif
    };

    return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}

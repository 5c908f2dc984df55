/* Unit tests: the connection table and per-packet classification. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>

#include <panda/conn-table.h>

/* 4 levels, T = 1000 payload bytes. */
#define POLICY "id=1,threshold=1000,thresholds=10000/100000/1000000," \
               "dscp=46/26/18/0,queues=0/1/2/3"

static struct panda_policy
policy(const char *s)
{
    struct panda_policy p;
    char *err = panda_policy_parse(s, &p);

    if (err) {
        fail_msg("%s", err);
    }
    return p;
}

static struct panda_table *
table(uint32_t capacity, uint32_t idle_ms)
{
    struct panda_table_config cfg = { capacity, idle_ms, 0 };
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
         struct panda_pkt *k, uint32_t payload, uint32_t now)
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
    struct panda_pkt udp = k;
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
    /* FIN: top level, connection forgotten. */
    k.tcp_flags = PANDA_TCP_FIN | PANDA_TCP_ACK;
    v = send_pkt(t, &p, &k, 0, 100);
    assert_int_equal(v.level, 0);
    assert_false(panda_table_lookup(t, &k, NULL));
    /* RST likewise (another connection), even with payload. */
    k.sport = htons(13);
    k.tcp_flags = 0;
    send_pkt(t, &p, &k, 1448, 101);
    assert_true(panda_table_lookup(t, &k, NULL));
    k.tcp_flags = PANDA_TCP_RST;
    assert_int_equal(send_pkt(t, &p, &k, 0, 102).level, 0);
    assert_false(panda_table_lookup(t, &k, NULL));
    /* SYN creates the entry, at counter 0, on top. */
    k.tcp_flags = PANDA_TCP_SYN;
    assert_int_equal(send_pkt(t, &p, &k, 0, 103).dscp, 46);
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 0);
    /* Non-TCP: top level, no state. */
    udp.proto = 17;
    v = send_pkt(t, &p, &udp, 60000, 104);
    assert_int_equal(v.level, 0);
    assert_false(v.stateful);
    panda_table_stats(t, &s);
    assert_int_equal(s.connections, 1);
    assert_int_equal(s.removed, 2);
    panda_table_destroy(t);
}

/* Data the sender retransmits after its FIN keeps the connection's level;
 * the entry no longer counts as live and its slot is reusable. */
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
    assert_int_equal(s.connections, 0);
    assert_int_equal(s.inserted, 1);
    /* A SYN on the same tuple starts a new connection from zero. */
    k.tcp_flags = PANDA_TCP_SYN;
    send_pkt(t, &p, &k, 0, 102);
    k.tcp_flags = PANDA_TCP_ACK;
    assert_int_equal(send_pkt(t, &p, &k, 1448, 103).level, 0);
    panda_table_stats(t, &s);
    assert_int_equal(s.connections, 1);
    /* Ended entries make room for new connections without evictions. */
    k.tcp_flags = PANDA_TCP_FIN;
    send_pkt(t, &p, &k, 0, 104);
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

static void
test_ctl_level_configurable(void **state)
{
    struct panda_policy p = policy(POLICY ",ctl_level=1");
    struct panda_table *t = table(64, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2,
                              PANDA_TCP_SYN, 0);

    (void) state;
    assert_int_equal(send_pkt(t, &p, &k, 0, 0).dscp, 26);
    k.proto = 1;
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
    /* Timestamps near the 32-bit wrap still compare right. */
    send_pkt(t, &p, &k, 1448, UINT32_MAX - 10);
    assert_int_equal(send_pkt(t, &p, &k, 1448, 5).level, 0);
    panda_table_stats(t, &s);
    assert_int_equal(s.expired, 1);
    panda_table_destroy(t);
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
    assert_int_equal(panda_table_entry_size(4), 32);
    assert_int_equal(panda_table_entry_size(6), 64);
    panda_table_destroy(t);
}

struct thread_arg {
    struct panda_table *t;
    const struct panda_policy *p;
    int n;
};

static void *
hammer(void *arg_)
{
    struct thread_arg *arg = arg_;
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    int i;

    for (i = 0; i < arg->n; i++) {
        send_pkt(arg->t, arg->p, &k, 1000, i);
    }
    return NULL;
}

/* Two threads updating one connection lose no update. */
static void
test_concurrent_updates(void **state)
{
    struct panda_policy p = policy("id=1,kind=pias");
    struct panda_table *t = table(1 << 16, 0);
    struct thread_arg arg = { t, &p, 200000 };
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    pthread_t th[2];
    int64_t counter;
    int i;

    (void) state;
    for (i = 0; i < 2; i++) {
        pthread_create(&th[i], NULL, hammer, &arg);
    }
    for (i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    assert_true(panda_table_lookup(t, &k, &counter));
    assert_int_equal(counter, 2 * 200000 * 1000LL);
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

static void
test_bad_config(void **state)
{
    struct panda_table_config cfg = { 0, 0, 0 };
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
 * far below the table's size), packets are classified statelessly at the
 * control level and counted, nothing aborts, and the allocation is tried
 * again once the retry interval has passed. */
static void
test_allocation_failure(void **state)
{
    struct panda_policy p = policy(POLICY ",ctl_level=1");
    /* 2^22 IPv4 entries: 128 MiB of slots. */
    struct panda_table *t = table(1u << 22, 0);
    struct panda_pkt k = tcp4("10.0.0.1", 1, "10.0.0.2", 2, 0, 0);
    struct panda_table_verdict v;
    struct panda_table_stats s;
    struct rlimit old, low;
    void *probe;

    (void) state;
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_packet_dscp_queue),
        cmocka_unit_test(test_bulk_flow_sinks_in_order),
        cmocka_unit_test(test_flow_climbs_back),
        cmocka_unit_test(test_floor_prevents_banking),
        cmocka_unit_test(test_pure_acks_and_control),
        cmocka_unit_test(test_data_after_fin),
        cmocka_unit_test(test_ctl_level_configurable),
        cmocka_unit_test(test_capacity_evicts),
        cmocka_unit_test(test_idle_expiry),
        cmocka_unit_test(test_pias_policy),
        cmocka_unit_test(test_policy_update_keeps_counters),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_concurrent_updates),
        cmocka_unit_test(test_flush_and_foreach),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_allocation_failure),
    };

    return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}

/* Unit tests: the classifier interface and its built-ins: known
 * packets give known levels, directly and through the connection table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/classifier.h>
#include <panda/conn-table.h>
#include <panda/policy.h>
#include <panda/wire.h>

#include "policy-util.h"

/* A TCP packet from 10.0.0.1:'sport' to 10.0.0.2:11211 with 'data' as its
 * payload (its first 'payload' bytes, or all of them if shorter). */
static struct panda_pkt
tcp(uint16_t sport, uint8_t dscp, const char *data, uint32_t payload)
{
    struct panda_pkt pkt;

    memset(&pkt, 0, sizeof pkt);
    pkt.family = 4;
    pkt.proto = 6;
    pkt.tcp_flags = PANDA_TCP_ACK;
    pkt.dscp = dscp;
    pkt.sport = htons(sport);
    pkt.dport = htons(11211);
    pkt.src.v4 = htonl(0x0a000001);
    pkt.dst.v4 = htonl(0x0a000002);
    pkt.payload = payload;
    pkt.data = (const uint8_t *) data;
    pkt.data_len = data ? strlen(data) : 0;
    if (pkt.data_len > payload) {
        pkt.data_len = payload;
    }
    return pkt;
}

static uint8_t
classify(const struct panda_policy *p, union panda_cls_state *st,
         struct panda_pkt pkt)
{
    struct panda_classifier cls;

    panda_cls_init(&cls, p);
    return panda_cls_classify(&cls, st, &pkt);
}

static void
test_match(void **state)
{
    union panda_cls_state st;
    struct panda_policy p;

    (void) state;
    /* memcached: gets are latency-sensitive, sets bulk; the rest between. */
    parse_ok("id=1,kind=match,match=get\\x20:0/set\\x20:2,levels=3,"
             "default_level=1", &p);
    assert_int_equal(p.n_rules, 2);
    assert_int_equal(p.rules[0].len, 4);
    assert_memory_equal(p.rules[0].keyword, "get ", 4);
    memset(&st, 0, sizeof st);
    assert_int_equal(classify(&p, &st, tcp(1, 0, "get key1\r\n", 10)), 0);
    assert_int_equal(classify(&p, &st, tcp(1, 0, "set key1 0 0 5\r\n", 900)),
                     2);
    assert_int_equal(classify(&p, &st, tcp(1, 0, "delete k\r\n", 10)), 1);
    /* "get" without the space is another command ("gets"? no: "getx"). */
    assert_int_equal(classify(&p, &st, tcp(1, 0, "getx", 4)), 1);
    /* Too few bytes captured to decide: no match. */
    assert_int_equal(classify(&p, &st, tcp(1, 0, "ge", 2)), 1);
    /* No payload (a pure ACK). */
    assert_int_equal(classify(&p, &st, tcp(1, 0, NULL, 0)), 1);
    /* Keywords are bytes: a rule may name a binary header. */
    parse_ok("id=2,kind=match,match=\\x80\\x01:0,levels=2", &p);
    assert_int_equal(classify(&p, &st, tcp(1, 0, "\x80\x01xx", 4)), 0);
    assert_int_equal(classify(&p, &st, tcp(1, 0, "\x80\x02xx", 4)), 1);
}

static void
test_app_and_length(void **state)
{
    union panda_cls_state st;
    struct panda_policy p;

    (void) state;
    /* The operator honours EF (46) as level 0 and AF31 (26) as level 1;
     * anything else the application writes (e.g. 48, "network control")
     * is not honoured: the default. */
    parse_ok("id=3,kind=app,app=46:0/26:1,levels=3", &p);
    assert_int_equal(p.default_level, 2);
    memset(&st, 0, sizeof st);
    assert_int_equal(classify(&p, &st, tcp(1, 46, NULL, 0)), 0);
    assert_int_equal(classify(&p, &st, tcp(1, 26, "x", 1)), 1);
    assert_int_equal(classify(&p, &st, tcp(1, 48, "x", 1)), 2);
    assert_int_equal(classify(&p, &st, tcp(1, 0, "x", 1)), 2);

    /* ADPS's length filter: full-MTU payloads are bulk. */
    parse_ok("id=4,kind=length,length=1400:1,default_level=0", &p);
    assert_int_equal(p.n_levels, 2);
    assert_int_equal(classify(&p, &st, tcp(1, 0, NULL, 1448)), 1);
    assert_int_equal(classify(&p, &st, tcp(1, 0, NULL, 1400)), 1);
    assert_int_equal(classify(&p, &st, tcp(1, 0, NULL, 1399)), 0);
    assert_int_equal(classify(&p, &st, tcp(1, 0, NULL, 0)), 0);
}

static void
test_compose(void **state)
{
    union panda_cls_state st;
    struct panda_policy p, panda;
    int64_t want = 0;
    int i;

    (void) state;
    /* Heartbeats to the top, the rest by Panda (T = 100, alpha = 1000). */
    parse_ok("id=5,kind=compose,match=PING:0,threshold=100,"
             "thresholds=1000,dscp=46/0", &p);
    parse_ok("id=5,threshold=100,thresholds=1000,dscp=46/0", &panda);
    memset(&st, 0, sizeof st);
    /* Large packets push the counter over alpha: level 1... */
    for (i = 0; i < 3; i++) {
        assert_int_equal(classify(&p, &st, tcp(1, 0, "DATA", 600)),
                         i ? 1 : 0);
        want = panda_policy_update(&panda, want, 600);
    }
    assert_int_equal(st.counter, want);
    /* ...but a heartbeat still goes first, and still counts. */
    assert_int_equal(classify(&p, &st, tcp(1, 0, "PING\r\n", 600)), 0);
    want = panda_policy_update(&panda, want, 600);
    assert_int_equal(st.counter, want);
    assert_int_equal(classify(&p, &st, tcp(1, 0, "DATA", 600)), 1);

    /* First rule that matches wins, in the order written. */
    parse_ok("id=6,kind=compose,length=1000:1,match=PING:0,thresholds=5000",
             &p);
    memset(&st, 0, sizeof st);
    assert_int_equal(classify(&p, &st, tcp(1, 0, "PING", 1200)), 1);
    parse_ok("id=6,kind=compose,match=PING:0,length=1000:1,thresholds=5000",
             &p);
    memset(&st, 0, sizeof st);
    assert_int_equal(classify(&p, &st, tcp(1, 0, "PING", 1200)), 0);
}

/* Panda and PIAS as classifiers give what Algorithm 2 gives. */
static void
test_counter_kinds(void **state)
{
    static const char *texts[] = {
        "id=7,threshold=1460,weights=1460:1/9000:2,thresholds=3000/30000",
        "id=8,kind=pias,thresholds=3000/30000",
    };
    static const uint32_t sizes[] = { 100, 1460, 64000, 10, 0, 9000, 500 };
    size_t i, j;

    (void) state;
    for (i = 0; i < 2; i++) {
        union panda_cls_state st;
        struct panda_policy p;
        int64_t counter = 0;

        parse_ok(texts[i], &p);
        memset(&st, 0, sizeof st);
        for (j = 0; j < sizeof sizes / sizeof *sizes; j++) {
            uint8_t got = classify(&p, &st, tcp(1, 0, NULL, sizes[j]));

            if (sizes[j]) {
                counter = panda_policy_update(&p, counter, sizes[j]);
            }
            assert_int_equal(st.counter, counter);
            assert_int_equal(got, panda_policy_level(&p, counter));
        }
    }
}

/* Headers longer than any a TCP stack sends count as payload: a bare SYN,
 * FIN, RST or ACK with 1400 bytes of IPv6 destination options is a packet
 * of its size on the wire, not a control packet; one with the headers of
 * a real SYN (IPv6, TCP with options: 80 bytes; up to the bound) is. */
static void
test_long_headers_count(void **state)
{
    static const char *texts[] = {
        "id=7,threshold=1460,weights=1460:1/9000:2,thresholds=3000/30000",
        "id=8,kind=pias,thresholds=3000/30000",
    };
    static const uint8_t flags[] = {
        PANDA_TCP_SYN, PANDA_TCP_FIN | PANDA_TCP_ACK, PANDA_TCP_RST,
        PANDA_TCP_ACK,
    };
    size_t i, j, k;

    (void) state;
    for (i = 0; i < 2; i++) {
        struct panda_policy p;

        parse_ok(texts[i], &p);
        for (j = 0; j < sizeof flags / sizeof *flags; j++) {
            int64_t counter = 0, expected = 0;
            struct panda_pkt pkt = tcp(1, 0, NULL, 0);
            uint8_t level = 0;

            /* Real headers: the control level, the counter untouched. */
            pkt.tcp_flags = flags[j];
            for (k = 0; k < 2; k++) {
                pkt.hdr_len = k ? PANDA_MAX_HDR_LEN : 80;
                level = panda_cls_level(&p, &counter, &pkt);
                assert_int_equal(counter, 0);
                assert_int_equal(level, flags[j] == PANDA_TCP_ACK
                                        ? panda_policy_level(&p, 0)
                                        : p.ctl_level);
            }

            /* Long headers: counted as a 1480-byte packet each, so that a
             * run of them goes down to the lowest level. */
            pkt.hdr_len = 1480;
            for (k = 0; k < 50; k++) {
                level = panda_cls_level(&p, &counter, &pkt);
                expected = panda_policy_update(&p, expected, 1480);
                assert_int_equal(counter, expected);
                assert_int_equal(level, panda_policy_level(&p, expected));
            }
            assert_int_equal(level, p.n_levels - 1);

            /* With payload: the payload and the headers. */
            counter = expected = 0;
            pkt.payload = 1;
            level = panda_cls_level(&p, &counter, &pkt);
            assert_int_equal(counter, panda_policy_update(&p, 0, 1481));
        }
    }
}

/* The connection table applies the same classifiers: rule kinds keep no
 * entries, compose keeps the counter. */
static void
test_table(void **state)
{
    struct panda_table_config cfg = { 1024, 0, 1, 1 };
    struct panda_table *t = panda_table_create(&cfg, NULL);
    struct panda_table_verdict v;
    struct panda_table_stats s;
    struct panda_policy p;
    struct panda_pkt pkt;
    int64_t counter;

    (void) state;
    assert_non_null(t);
    parse_ok("id=9,kind=match,match=get\\x20:0,levels=2,dscp=46/0", &p);
    pkt = tcp(1, 0, "get a\r\n", 7);
    panda_table_classify(t, &p, &pkt, 1, &v);
    assert_int_equal(v.level, 0);
    assert_int_equal(v.dscp, 46);
    assert_false(v.stateful);
    pkt = tcp(1, 0, "set a 0 0 1\r\n", 13);
    panda_table_classify(t, &p, &pkt, 1, &v);
    assert_int_equal(v.level, 1);
    assert_int_equal(v.dscp, 0);
    panda_table_stats(t, &s);
    assert_int_equal(s.connections, 0);
    assert_int_equal(s.packets[0], 1);
    assert_int_equal(s.packets[1], 1);

    parse_ok("id=10,kind=compose,match=PING:0,thresholds=1000,queues=3/4",
             &p);
    pkt = tcp(2, 0, "DATA", 1400);
    panda_table_classify(t, &p, &pkt, 1, &v);
    assert_int_equal(v.level, 1);
    assert_int_equal(v.queue, 4);
    assert_true(v.stateful);
    pkt = tcp(2, 0, "PING", 1400);
    panda_table_classify(t, &p, &pkt, 2, &v);
    assert_int_equal(v.level, 0);
    assert_int_equal(v.queue, 3);
    assert_true(panda_table_lookup(t, &pkt, &counter));
    assert_int_equal(counter, 2800);
    /* UDP: the rule still applies; the rest is untracked (lowest). */
    pkt = tcp(3, 0, "PING", 4);
    pkt.proto = 17;
    panda_table_classify(t, &p, &pkt, 3, &v);
    assert_int_equal(v.level, 0);
    pkt.data = (const uint8_t *) "PONG";
    panda_table_classify(t, &p, &pkt, 3, &v);
    assert_int_equal(v.level, 1);
    panda_table_destroy(t);
}

/* One decision: the connection table (the datapath's path), the classifier
 * interface (the event loop's) and panda_cls_level() with a counter of its
 * own give every packet of a connection's life the same level, for every
 * kind; the table's DSCP and queue are the policy's for that level. */
static void
test_one_decision(void **state)
{
    static const char *const policies[] = {
        "id=1,threshold=1000,weights=1460:2,thresholds=500/3000/9000,"
        "ctl_level=1,floor=-2000",
        "id=2,kind=pias,thresholds=1000/5000,dscp=46/26/0,queues=5/6/7",
        "id=3,kind=compose,match=PING:0,length=1400:2,threshold=100,"
        "thresholds=200/4000,untracked_level=1",
        "id=4,kind=match,match=get\\x20:0/set\\x20:2,levels=3",
        "id=5,kind=app,app=46:0/10:1,default_level=2",
        "id=6,kind=length,length=1000:2/100:1,default_level=0",
    };
    /* A connection's life: SYN, data of every size, pure ACKs, FIN, data
     * after FIN, RST; then the same from a UDP socket and a later
     * fragment (no L4: proto 0). */
    static const struct {
        uint8_t proto, flags, dscp;
        const char *data;
        uint32_t payload;
        uint32_t hdr_len;       /* 0: not given. */
    } seq[] = {
        { 6, PANDA_TCP_SYN, 0, NULL, 0, 60 },
        { 6, PANDA_TCP_SYN, 0, NULL, 0, 1480 },
        { 6, PANDA_TCP_ACK, 0, "get k\r\n", 7 },
        { 6, PANDA_TCP_ACK, 46, "PING", 60 },
        { 6, PANDA_TCP_ACK, 0, "set k 0 0 2000\r\n", 1448 },
        { 6, PANDA_TCP_ACK, 10, "DATA", 1448 },
        { 6, PANDA_TCP_ACK, 0, NULL, 0 },
        { 6, PANDA_TCP_ACK, 0, "DATA", 9000 },
        { 6, PANDA_TCP_ACK, 0, "x", 1 },
        { 6, PANDA_TCP_ACK, 0, NULL, 0, 1480 },
        { 6, PANDA_TCP_ACK, 0, "x", 1, 1480 },
        { 6, PANDA_TCP_FIN | PANDA_TCP_ACK, 0, NULL, 0, 1480 },
        { 6, PANDA_TCP_FIN | PANDA_TCP_ACK, 0, NULL, 0 },
        { 6, PANDA_TCP_ACK, 0, "DATA", 1448 },
        { 6, PANDA_TCP_RST, 0, NULL, 0 },
        { 17, 0, 0, "PING", 40 },
        { 17, 0, 46, "get k", 1200 },
        { 0, 0, 0, NULL, 0 },
    };
    size_t i, j;

    (void) state;
    for (i = 0; i < sizeof policies / sizeof *policies; i++) {
        struct panda_table_config cfg = { 1024, 0, 1, 1 };
        struct panda_table *t = panda_table_create(&cfg, NULL);
        union panda_cls_state st;
        struct panda_classifier cls;
        struct panda_policy p;
        int64_t counter = 0;

        assert_non_null(t);
        parse_ok(policies[i], &p);
        panda_cls_init(&cls, &p);
        memset(&st, 0, sizeof st);
        for (j = 0; j < sizeof seq / sizeof *seq; j++) {
            struct panda_pkt pkt = tcp(40000, seq[j].dscp, seq[j].data,
                                       seq[j].payload);
            struct panda_table_verdict v;
            uint8_t via_cls, direct;

            pkt.proto = seq[j].proto;
            pkt.tcp_flags = seq[j].flags;
            pkt.hdr_len = seq[j].hdr_len;
            panda_table_classify(t, &p, &pkt, 1, &v);
            via_cls = panda_cls_classify(&cls, &st, &pkt);
            direct = panda_cls_level(&p, &counter, &pkt);
            if (v.level != via_cls || v.level != direct) {
                fail_msg("%s, packet %zu: table %u, classifier %u, "
                         "panda_cls_level %u", policies[i], j, v.level,
                         via_cls, direct);
            }
            assert_in_range(v.level, 0, p.n_levels - 1);
            assert_int_equal(v.dscp, p.dscp[v.level]);
            assert_int_equal(v.queue, p.queue[v.level]);
        }
        panda_table_destroy(t);
    }
}

/* A caller without a table (the datapath, when a policy id gets none)
 * gets lib/panda's verdict for packets it cannot track: the rules, else
 * the untracked level (counter kinds) or the default level (rule kinds),
 * with that level's DSCP and queue. */
static void
test_no_table(void **state)
{
    struct panda_table_verdict v;
    struct panda_policy p;
    struct panda_pkt pkt;

    (void) state;
    parse_ok("id=1,thresholds=1000/2000,dscp=46/26/0,queues=4/5/6,"
             "untracked_level=1", &p);
    pkt = tcp(1, 0, "DATA", 100);
    panda_table_classify(NULL, &p, &pkt, 1, &v);
    assert_int_equal(v.level, 1);
    assert_int_equal(v.dscp, 26);
    assert_int_equal(v.queue, 5);
    assert_false(v.stateful);

    /* Compose: a rule still decides; the rest is untracked (here K-1). */
    parse_ok("id=2,kind=compose,match=PING:0,thresholds=1000,dscp=46/0",
             &p);
    pkt = tcp(1, 0, "PING", 4);
    panda_table_classify(NULL, &p, &pkt, 1, &v);
    assert_int_equal(v.level, 0);
    assert_int_equal(v.dscp, 46);
    pkt = tcp(1, 0, "PONG", 4);
    panda_table_classify(NULL, &p, &pkt, 1, &v);
    assert_int_equal(v.level, 1);
    assert_int_equal(v.dscp, 0);

    /* Rule kinds need no table. */
    parse_ok("id=3,kind=length,length=1000:2,default_level=1,queues=7/8/9",
             &p);
    pkt = tcp(1, 0, NULL, 1200);
    panda_table_classify(NULL, &p, &pkt, 1, &v);
    assert_int_equal(v.level, 2);
    assert_int_equal(v.queue, 9);
    pkt = tcp(1, 0, NULL, 999);
    panda_table_classify(NULL, &p, &pkt, 1, &v);
    assert_int_equal(v.level, 1);
    assert_int_equal(v.queue, 8);
}

/* Keywords are compared byte by byte up to the rule's length, wherever
 * the difference is, and never past the packet's data. */
static void
test_keyword_bytes(void **state)
{
    static const char kw32[] = "0123456789abcdefghijklmnopqrstuv";
    char data[40];
    struct panda_policy p;
    struct panda_pkt pkt;
    size_t i;

    (void) state;
    parse_ok("id=1,kind=match,match=0123456789abcdefghijklmnopqrstuv:0,"
             "levels=2", &p);
    assert_int_equal(p.rules[0].len, 32);
    memcpy(data, kw32, 32);
    strcpy(data + 32, "tail");
    pkt = tcp(1, 0, data, 36);
    assert_int_equal(panda_cls_level(&p, NULL, &pkt), 0);
    for (i = 0; i < 32; i++) {
        data[i] ^= 0x20;
        pkt = tcp(1, 0, data, 36);
        assert_int_equal(panda_cls_level(&p, NULL, &pkt), 1);
        data[i] ^= 0x20;
    }
    /* 31 bytes of data: too short for the keyword. */
    pkt = tcp(1, 0, data, 31);
    assert_int_equal(pkt.data_len, 31);
    assert_int_equal(panda_cls_level(&p, NULL, &pkt), 1);
}

static void
test_syntax(void **state)
{
    struct panda_policy p, q;
    char buf[512];

    (void) state;
    parse_ok("id=11,kind=compose,app=46:0,match=GET\\x20\\x2fapi:1/PING:0,"
             "length=1000:2,match=x:1,thresholds=10/20", &p);
    assert_int_equal(p.n_rules, 5);
    assert_int_equal(p.rules[4].type, PANDA_RULE_MATCH);
    panda_policy_format(&p, buf, sizeof buf);
    assert_string_equal(buf, "id=11,kind=compose,threshold=0,"
                        "thresholds=10/20,app=46:0,"
                        "match=GET\\x20\\x2fapi:1/PING:0,length=1000:2,"
                        "match=x:1,dscp=1/2/3,queues=0/1/2");
    parse_ok(buf, &q);
    assert_true(panda_policy_equal(&p, &q));

    parse_err_exact("id=1,kind=foo", "kind: \"foo\" is not panda, pias, app, "
              "match, length or compose");
    parse_err_exact("id=1,kind=match", "match: kind=match needs at least one rule");
    parse_err_exact("id=1,kind=match,app=1:0", "app: not allowed with kind=match "
              "(use kind=compose to mix rule types)");
    parse_err_exact("id=1,app=1:0", "app: rules are not allowed with kind=panda");
    parse_err_exact("id=1,kind=match,match=a:0,thresholds=5",
              "thresholds: not allowed with kind=match (no counter; "
              "'levels' gives K)");
    parse_err_exact("id=1,kind=match,match=a:2,levels=2",
              "match: level 2 but the policy has only 2 levels");
    parse_err_exact("id=1,kind=match,match=a b:0",
              "match: character ' ' in \"a b\" must be written \\x20");
    parse_err_exact("id=1,kind=match,match=a\\x2:0",
              "match: bad escape in \"a\\x2\" (write a byte as \\xHH)");
    parse_err_exact("id=1,kind=match,match=:0",
              "match: \":0\" is not <keyword>:<level>");
    parse_err_exact("id=1,kind=match,match="
              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:0",
              "match: keyword longer than 32 bytes");
    parse_err_exact("id=1,kind=app,app=64:0", "app: 64 out of range (max 63)");
    parse_err_exact("id=1,kind=length,length=0:1",
              "length: minimum payload 0 matches every packet (use 1 to "
              "65535, or default_level)");
    parse_err_exact("id=1,kind=length,length=10:1,ctl_level=1",
              "ctl_level: not allowed with kind=length (rules decide every "
              "packet; use default_level)");
    parse_err_exact("id=1,thresholds=10,levels=2", "levels: not allowed with "
              "kind=panda (the thresholds give K)");
    parse_err_exact("id=1,kind=compose,match=a:0,default_level=0,thresholds=1",
              "default_level: not allowed with kind=compose (Panda decides "
              "the packets that no rule matches)");
}

static void
test_wire(void **state)
{
    static const char *texts[] = {
        "id=12,kind=match,match=get\\x20:0/set\\x20:2,levels=3",
        "id=13,kind=compose,app=46:0,length=1000:2,thresholds=10/20",
        "id=14,kind=app,app=1:0/2:0/3:0/4:0/5:0/6:0/7:0/8:0/9:0/10:0/11:0/"
        "12:0/13:0/14:0/15:0/16:0,levels=2,default_level=0",
    };
    uint8_t body[PANDA_WIRE_MAX_LEN + 8];
    char msg[PANDA_WIRE_MSG_SIZE];
    size_t i, len;

    (void) state;
    for (i = 0; i < sizeof texts / sizeof *texts; i++) {
        struct panda_policy p, q;

        parse_ok(texts[i], &p);
        len = panda_wire_encode(&p, body);
        assert_int_equal(len, panda_wire_len(&p));
        assert_int_equal((len - PANDA_WIRE_LEN) % 8, 0);
        assert_true(len <= PANDA_WIRE_MAX_LEN);
        assert_int_equal(panda_wire_decode(body, len, &q, msg),
                         PANDA_WIRE_OK);
        assert_true(panda_policy_equal(&p, &q));
        /* Truncated, or a stray byte in the tail's padding. */
        assert_int_equal(panda_wire_decode(body, len - 8, &q, msg),
                         PANDA_WIRE_BAD_ARGUMENT);
        memset(body + len, 0, 8);
        assert_int_equal(panda_wire_decode(body, len + 8, &q, msg),
                         PANDA_WIRE_BAD_LEN);
    }
    /* A panda body is still exactly 150 bytes. */
    {
        struct panda_policy p;

        parse_ok("id=1,thresholds=5", &p);
        assert_int_equal(panda_wire_len(&p), PANDA_WIRE_LEN);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_app_and_length),
        cmocka_unit_test(test_compose),
        cmocka_unit_test(test_counter_kinds),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_long_headers_count),
        cmocka_unit_test(test_one_decision),
        cmocka_unit_test(test_no_table),
        cmocka_unit_test(test_keyword_bytes),
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_wire),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

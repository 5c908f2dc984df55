/* Unit tests: the wire form of a policy (panda/wire.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/wire.h>

#include "policy-util.h"

/* The body of the NXAST_PANDA example in openflow/README.md (bytes 10..159
 * of the action), which the OVS autotest "ofp-actions - panda" and the
 * controller's tests also use. */
#define README_POLICY "id=1,threshold=1460,weights=1460:1/9000:2," \
                      "thresholds=100000/1000000/10000000," \
                      "dscp=46/26/18/0,queues=0/1/2/3"
/* Written as in the autotest's input, minus the 10-byte action header. */
static const char readme_hex_at[] =
    "000400000001 000005b402000000 0000000000000000 0000000000000000"
    " 00000000000186a0 00000000000f4240 0000000000989680 0000000000000000"
    " 0000000000000000 0000000000000000 0000000000000000 000005b400002328"
    " 0000000000000000 0000000000000000 0000000000000000 006400c800000000"
    " 0000000000000000 2e1a120000000000 0001020300000000";

/* The second autotest vector: PIAS, control level 1, floor -100, idle reset
 * 500 ms. */
#define PIAS_POLICY "id=7,kind=pias,thresholds=5000,dscp=1/2,queues=0/1," \
                    "ctl_level=1,floor=-100,idle_reset=500"
static const char pias_hex_at[] =
    "010200000007 0000000000010000 000001f400000000 ffffffffffffff9c"
    " 0000000000001388 0000000000000000 0000000000000000 0000000000000000"
    " 0000000000000000 0000000000000000 0000000000000000 0000000000000000"
    " 0000000000000000 0000000000000000 0000000000000000 0000000000000000"
    " 0000000000000000 0102000000000000 0001000000000000";

/* Parses hex digits (spaces ignored) into 'out'; returns the byte count. */
static size_t
hex_body(const char *hex, uint8_t *out, size_t max)
{
    size_t n = 0;
    int half = -1;

    for (; *hex; hex++) {
        int v;

        if (*hex == ' ') {
            continue;
        }
        if (sscanf((char[]) { *hex, '\0' }, "%x", &v) != 1) {
            fail_msg("bad hex digit '%c'", *hex);
        }
        if (half < 0) {
            half = v;
        } else {
            assert_true(n < max);
            out[n++] = (uint8_t) (half << 4 | v);
            half = -1;
        }
    }
    assert_int_equal(half, -1);
    return n;
}

static void
expect_bytes(const char *policy, const char *hex)
{
    uint8_t want[PANDA_WIRE_LEN + 8], got[PANDA_WIRE_LEN];
    char msg[PANDA_WIRE_MSG_SIZE], text[512];
    struct panda_policy p, back;

    assert_int_equal(hex_body(hex, want, sizeof want), PANDA_WIRE_LEN);
    parse_ok(policy, &p);
    panda_wire_encode(&p, got);
    assert_memory_equal(got, want, PANDA_WIRE_LEN);

    assert_int_equal(panda_wire_decode(want, PANDA_WIRE_LEN, &back, msg),
                     PANDA_WIRE_OK);
    assert_true(panda_policy_equal(&p, &back));
    panda_policy_format(&back, text, sizeof text);
    assert_string_equal(text, policy);
    assert_int_equal(panda_wire_id(want), p.id);
}

static void
test_readme_example(void **state)
{
    (void) state;
    expect_bytes(README_POLICY, readme_hex_at);
    expect_bytes(PIAS_POLICY, pias_hex_at);
}

static void
test_round_trip(void **state)
{
    static const char *const policies[] = {
        "id=0,threshold=0,dscp=1,queues=0",
        "id=4294967295,threshold=100,weights=200:1.5/400:2.25,"
        "thresholds=1/2/3/4/5/6/7,dscp=63/62/61/60/59/58/57/56,"
        "queues=7/6/5/4/3/2/1/0,ctl_level=1,floor=-5000,idle_reset=200",
        "id=5,threshold=10,thresholds=1/2,dscp=1/2/3,queues=0/1/2,"
        "untracked_level=0",
        "id=6,threshold=10,thresholds=1/2,dscp=1/2/3,queues=0/1/2,"
        "ctl_level=2,untracked_level=1",
        "id=9,kind=pias,thresholds=9223372036854775807,dscp=10/20,"
        "queues=255/0,floor=-9223372036854775808",
        README_POLICY,
    };
    size_t i;

    (void) state;
    for (i = 0; i < sizeof policies / sizeof *policies; i++) {
        uint8_t body[PANDA_WIRE_LEN], again[PANDA_WIRE_LEN];
        char msg[PANDA_WIRE_MSG_SIZE], text[512];
        struct panda_policy p, back;

        parse_ok(policies[i], &p);
        panda_wire_encode(&p, body);
        if (panda_wire_decode(body, sizeof body, &back, msg)) {
            fail_msg("%s: %s", policies[i], msg);
        }
        assert_true(panda_policy_equal(&p, &back));
        panda_policy_format(&back, text, sizeof text);
        assert_string_equal(text, policies[i]);
        panda_wire_encode(&back, again);
        assert_memory_equal(body, again, PANDA_WIRE_LEN);
    }
}

/* Byte 12 was padding before untracked_level: its 0 is the default (the
 * lowest level), so a body from before decodes to the same policy; the
 * level is counted from the lowest, so there is one body per policy. */
static void
test_untracked_byte(void **state)
{
    uint8_t body[PANDA_WIRE_LEN];
    char msg[PANDA_WIRE_MSG_SIZE];
    struct panda_policy p, back;

    (void) state;
    parse_ok(README_POLICY, &p);
    assert_int_equal(p.untracked_level, 3);
    panda_wire_encode(&p, body);
    assert_int_equal(body[12], 0);
    p.untracked_level = 1;
    panda_wire_encode(&p, body);
    assert_int_equal(body[12], 2);
    assert_int_equal(panda_wire_decode(body, sizeof body, &back, msg),
                     PANDA_WIRE_OK);
    assert_int_equal(back.untracked_level, 1);
}

/* Byte 19 was padding before the tunnels: its 0 is the default (no
 * tunnels), so a body from before decodes to the same policy, and the
 * declaration goes through the wire as one byte of flags. */
static void
test_tunnels_byte(void **state)
{
    uint8_t body[PANDA_WIRE_LEN];
    char msg[PANDA_WIRE_MSG_SIZE];
    struct panda_policy p, back;

    (void) state;
    parse_ok(README_POLICY, &p);
    assert_int_equal(p.tunnels, 0);
    panda_wire_encode(&p, body);
    assert_int_equal(body[19], 0);

    parse_ok(README_POLICY ",tunnels=geneve", &p);
    panda_wire_encode(&p, body);
    assert_int_equal(body[19], 0x01);
    parse_ok(README_POLICY ",tunnels=vxlan", &p);
    panda_wire_encode(&p, body);
    assert_int_equal(body[19], 0x02);
    parse_ok(README_POLICY ",tunnels=geneve/vxlan", &p);
    panda_wire_encode(&p, body);
    assert_int_equal(body[19], 0x03);
    assert_int_equal(body[20], 0);
    assert_int_equal(body[21], 0);
    assert_int_equal(panda_wire_decode(body, sizeof body, &back, msg),
                     PANDA_WIRE_OK);
    assert_int_equal(back.tunnels, PANDA_TUNNELS_ALL);
    assert_true(panda_policy_equal(&p, &back));

    body[19] = 0x04;
    assert_int_equal(panda_wire_decode(body, sizeof body, &back, msg),
                     PANDA_WIRE_BAD_ARGUMENT);
    assert_string_equal(msg, "tunnels: unknown tunnel bits 0x04 (geneve is "
                        "0x01, vxlan 0x02)");
}

/* Entries past n_levels and n_weights do not reach the body: equal policies
 * give equal bytes, which is what the datapath's memcmp relies on. */
static void
test_canonical(void **state)
{
    uint8_t a[PANDA_WIRE_LEN], b[PANDA_WIRE_LEN];
    struct panda_policy p, q;

    (void) state;
    parse_ok("id=3,threshold=10,weights=20:2,thresholds=100,dscp=1/2", &p);
    q = p;
    q.alpha[5] = 77;
    q.weights[3].above = 5;
    q.weights[3].weight = 900;
    q.dscp[7] = 9;
    q.queue[6] = 3;
    assert_true(panda_policy_equal(&p, &q));
    panda_wire_encode(&p, a);
    panda_wire_encode(&q, b);
    assert_memory_equal(a, b, PANDA_WIRE_LEN);
}

static void
expect_error(const uint8_t *body, size_t len, enum panda_wire_error want,
             const char *message)
{
    char msg[PANDA_WIRE_MSG_SIZE];
    struct panda_policy p;
    enum panda_wire_error got = panda_wire_decode(body, len, &p, msg);

    if (got != want) {
        fail_msg("decode gave %s, expected %s (%s)",
                 panda_wire_error_name(got), panda_wire_error_name(want),
                 got ? msg : "no message");
    }
    if (strcmp(msg, message)) {
        fail_msg("message \"%s\", expected \"%s\"", msg, message);
    }
}

static void
test_errors(void **state)
{
    uint8_t good[PANDA_WIRE_LEN + 1], bad[PANDA_WIRE_LEN + 1];
    struct panda_policy p;

    (void) state;
    parse_ok(README_POLICY, &p);
    panda_wire_encode(&p, good);
    good[PANDA_WIRE_LEN] = 0;

    expect_error(good, PANDA_WIRE_LEN - 1, PANDA_WIRE_BAD_LEN,
                 "length 149, expected 150 plus a multiple of 8, at most "
                 "710");
    expect_error(good, PANDA_WIRE_LEN + 1, PANDA_WIRE_BAD_LEN,
                 "length 151, expected 150 plus a multiple of 8, at most "
                 "710");

    memcpy(bad, good, sizeof bad);
    bad[13] = 1;                    /* default_level: pad for panda */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_NONZERO_PAD,
                 "padding: nonzero byte");
    memcpy(bad, good, sizeof bad);
    bad[21] = 0x80;                             /* pad2 */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_NONZERO_PAD,
                 "padding: nonzero byte");
    memcpy(bad, good, sizeof bad);
    bad[20] = 0x01;                             /* pad2 */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_NONZERO_PAD,
                 "padding: nonzero byte");

    memcpy(bad, good, sizeof bad);
    bad[0] = 6;                                 /* kind */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "kind: must be 0 (panda) to 5 (compose)");
    memcpy(bad, good, sizeof bad);
    bad[0] = 3;                                 /* match, no rules */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "thresholds: not allowed with kind=match (no counter; "
                 "'levels' gives K)");
    memcpy(bad, good, sizeof bad);
    bad[1] = 9;                                 /* n_levels */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "thresholds: 1 to 8 levels required");
    memcpy(bad, good, sizeof bad);
    bad[10] = 9;                                /* n_weights */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "weights: at most 8 intervals");
    memcpy(bad, good, sizeof bad);
    bad[30 + 8 * 3 + 7] = 1;                    /* thresholds[3], K = 4 */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "thresholds: nonzero entry past the last level");
    memcpy(bad, good, sizeof bad);
    bad[118 + 2 * 2 + 1] = 1;                   /* weights[2], 2 used */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "weights: nonzero entry past the last interval");
    memcpy(bad, good, sizeof bad);
    bad[142 + 5] = 1;                           /* queue[5], K = 4 */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "dscp, queues: nonzero entry past the last level");

    /* What panda_policy_check() refuses, with its message. */
    memcpy(bad, good, sizeof bad);
    bad[134] = 64;                              /* dscp[0] */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "dscp: value 64 for level 0 exceeds 63");
    memcpy(bad, good, sizeof bad);
    bad[30 + 8 + 7] = 0x01;                     /* thresholds[1] = ...01 */
    bad[30 + 8 + 6] = 0x00;
    bad[30 + 8 + 5] = 0x00;
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "thresholds: not strictly ascending (1 after 100000)");
    memcpy(bad, good, sizeof bad);
    bad[11] = 4;                                /* ctl_level */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "ctl_level: 4 but the policy has only 4 levels");
    memcpy(bad, good, sizeof bad);
    bad[12] = 4;                                /* untracked, K = 4 */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "untracked_level: 4 levels above the lowest, but the"
                 " policy has only 4 levels");
    memcpy(bad, good, sizeof bad);
    bad[29] = 1;                                /* floor = 1 */
    expect_error(bad, PANDA_WIRE_LEN, PANDA_WIRE_BAD_ARGUMENT,
                 "floor: 1 must be <= 0");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readme_example),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_untracked_byte),
        cmocka_unit_test(test_tunnels_byte),
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_errors),
    };

    return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}

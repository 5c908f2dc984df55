/* Unit tests: live size histograms (panda/sizehist.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <panda/sizehist.h>

#define P PANDA_SIZEHIST_PAYLOAD
#define F PANDA_SIZEHIST_FLOW

/* Known values fall in known buckets, with known edges. */
static void
test_edges(void **state)
{
    (void) state;
    /* Payload: 8-byte buckets below 2048, bucket 0 starting at 1. */
    assert_int_equal(panda_sizehist_bucket(P, 1), 0);
    assert_int_equal(panda_sizehist_bucket(P, 7), 0);
    assert_int_equal(panda_sizehist_bucket(P, 8), 1);
    assert_int_equal(panda_sizehist_bucket(P, 1448), 181);
    assert_int_equal(panda_sizehist_bucket(P, 2047), 255);
    assert_int_equal(panda_sizehist_lower(P, 0), 1);
    assert_int_equal(panda_sizehist_lower(P, 181), 1448);
    assert_int_equal(panda_sizehist_upper(P, 181), 1455);
    /* Then 4 per power of two: [2048, 2559], ..., [57344, 65535]. */
    assert_int_equal(panda_sizehist_bucket(P, 2048), 256);
    assert_int_equal(panda_sizehist_upper(P, 256), 2559);
    assert_int_equal(panda_sizehist_bucket(P, 2560), 257);
    assert_int_equal(panda_sizehist_bucket(P, 65535), 275);
    assert_int_equal(panda_sizehist_bucket(P, 1000000), 275);
    assert_int_equal(panda_sizehist_lower(P, 275), 57344);
    assert_int_equal(panda_sizehist_upper(P, 275), 65535);
    /* Flow: exact below 8, then 4 per power of two up to 2^64 - 1. */
    assert_int_equal(panda_sizehist_bucket(F, 5), 5);
    assert_int_equal(panda_sizehist_bucket(F, 8), 8);
    assert_int_equal(panda_sizehist_bucket(F, 9), 8);
    assert_int_equal(panda_sizehist_bucket(F, 10), 9);
    assert_int_equal(panda_sizehist_bucket(F, 100000), 8 + 13 * 4 + 2);
    assert_int_equal(panda_sizehist_lower(F, 8 + 13 * 4 + 2), 98304);
    assert_int_equal(panda_sizehist_bucket(F, UINT64_MAX), 251);
    assert_true(panda_sizehist_upper(F, 251) == UINT64_MAX);
}

/* Every value is in the bucket whose edges enclose it; buckets tile the
 * range with no gap. */
static void
test_tiling(void **state)
{
    size_t b;

    (void) state;
    for (b = 0; b + 1 < PANDA_SIZEHIST_PAYLOAD_BUCKETS; b++) {
        assert_true(panda_sizehist_upper(P, b) + 1
                    == panda_sizehist_lower(P, b + 1));
        assert_int_equal(panda_sizehist_bucket(P, panda_sizehist_lower(P, b)),
                         b);
        assert_int_equal(panda_sizehist_bucket(P, panda_sizehist_upper(P, b)),
                         b);
    }
    for (b = 0; b + 1 < PANDA_SIZEHIST_FLOW_BUCKETS; b++) {
        assert_true(panda_sizehist_upper(F, b) + 1
                    == panda_sizehist_lower(F, b + 1));
        assert_int_equal(panda_sizehist_bucket(F, panda_sizehist_upper(F, b)),
                         b);
    }
}

static struct panda_sizehist *
new_hist(void)
{
    struct panda_sizehist *h = malloc(sizeof *h);

    assert_non_null(h);
    panda_sizehist_reset(h);
    return h;
}

/* Counting into buckets, levels above 7 clamped, and the flow sum. */
static void
test_count(void **state)
{
    struct panda_sizehist *a = new_hist();
    int i;

    (void) state;
    for (i = 0; i < 10; i++) {
        panda_sizehist_count_payload(a, 0, 30);     /* Bucket [24, 31]. */
    }
    panda_sizehist_count_payload(a, 1, 1448);
    panda_sizehist_count_payload(a, 1, 1450);
    panda_sizehist_count_payload(a, 9, 100);        /* Clamped to level 7. */
    panda_sizehist_count_flow(a, 100000);
    panda_sizehist_count_flow(a, 99000);

    assert_int_equal(a->payload[0][3], 10);
    assert_int_equal(a->payload[1][181], 2);
    assert_int_equal(a->payload[7][12], 1);
    assert_int_equal(a->flow[8 + 13 * 4 + 2], 2);
    assert_int_equal(panda_sizehist_flows(a), 2);

    /* Saturation instead of wrapping. */
    a->flow[0] = UINT64_MAX;
    assert_true(panda_sizehist_flows(a) == UINT64_MAX);
    free(a);
}

/* Counting a batch in runs (packets of one bucket and level share one
 * addition) gives what counting its packets one by one gives, whatever
 * the order: same buckets, same levels, levels past the last clamped. */
static void
test_count_batch(void **state)
{
    static const uint32_t payloads[] = {
        6, 6, 6, 1448, 1448, 6, 100, 100, 65535, 70000, 1, 1, 1448, 6,
    };
    static const uint8_t levels[] = {
        0, 0, 1, 1, 1, 0, 3, 3, 7, 9, 0, 0, 2, 0,
    };
    struct panda_sizehist *one = calloc(1, sizeof *one);
    struct panda_sizehist *batch = calloc(1, sizeof *batch);
    size_t n = sizeof payloads / sizeof *payloads, i;
    struct panda_sizehist_run run;

    (void) state;
    for (i = 0; i < n; i++) {
        panda_sizehist_count_payload(one, levels[i], payloads[i]);
    }
    panda_sizehist_run_init(&run);
    for (i = 0; i < n; i++) {
        panda_sizehist_run_add(batch, &run, levels[i], payloads[i]);
    }
    panda_sizehist_run_end(&run);
    /* An ended run adds nothing more, and an empty one counts nothing. */
    panda_sizehist_run_end(&run);
    panda_sizehist_run_init(&run);
    panda_sizehist_run_end(&run);
    assert_memory_equal(one, batch, sizeof *one);
    /* Level 0, payloads of 1 and 6 bytes: one bucket. */
    assert_int_equal(batch->payload[0][panda_sizehist_bucket(
                         PANDA_SIZEHIST_PAYLOAD, 6)], 6);
    free(one);
    free(batch);
}

/* The text is the documented one. */
static void
test_text(void **state)
{
    struct panda_sizehist *a = new_hist();
    char *text;

    (void) state;
    panda_sizehist_count_payload(a, 0, 30);
    panda_sizehist_count_payload(a, 2, 60000);
    panda_sizehist_count_flow(a, 3);
    a->flow[251] = UINT64_MAX;
    text = panda_sizehist_format(a);
    assert_string_equal(text, "panda-histogram 1\n"
                              "payload 0 24 1\n"
                              "payload 2 57344 1\n"
                              "flow 3 1\n"
                              "flow 16140901064495857664 "
                              "18446744073709551615\n");
    free(text);
    free(a);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_tiling),
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_count_batch),
        cmocka_unit_test(test_text),
    };

    return cmocka_run_group_tests_name("sizehist", tests, NULL, NULL);
}

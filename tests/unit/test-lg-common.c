/* Unit tests for load_generator/lg-common.c: percentiles, summaries, JSON
 * output, the flow request encoding and option parsing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lg-common.h"

/* 1..n in a shuffled order. */
static double *
shuffled(size_t n)
{
    double *v = malloc(n * sizeof *v);
    size_t i;

    for (i = 0; i < n; i++) {
        v[i] = i + 1;
    }
    for (i = n - 1; i > 0; i--) {
        size_t k = (i * 7919 + 13) % (i + 1);
        double t = v[i];

        v[i] = v[k];
        v[k] = t;
    }
    return v;
}

static void
test_percentile_small(void **state)
{
    const double one[] = { 42 };
    const double four[] = { 10, 20, 30, 40 };
    const double five[] = { 1, 2, 3, 4, 5 };

    (void) state;
    assert_true(isnan(lg_percentile(one, 0, 50)));
    assert_true(lg_percentile(one, 1, 0) == 42);
    assert_true(lg_percentile(one, 1, 50) == 42);
    assert_true(lg_percentile(one, 1, 100) == 42);

    /* Nearest rank: ceil(p/100 * n). */
    assert_true(lg_percentile(four, 4, 0) == 10);
    assert_true(lg_percentile(four, 4, 25) == 10);
    assert_true(lg_percentile(four, 4, 26) == 20);
    assert_true(lg_percentile(four, 4, 50) == 20);
    assert_true(lg_percentile(four, 4, 50.1) == 30);
    assert_true(lg_percentile(four, 4, 75) == 30);
    assert_true(lg_percentile(four, 4, 99) == 40);
    assert_true(lg_percentile(four, 4, 100) == 40);

    assert_true(lg_percentile(five, 5, 20) == 1);
    assert_true(lg_percentile(five, 5, 40) == 2);
    assert_true(lg_percentile(five, 5, 50) == 3);
    assert_true(lg_percentile(five, 5, 90) == 5);
}

/* On 1..n, the p-th percentile is ceil(p * n / 100), for any n: this is
 * where floating-point rounding (e.g. 99.9 * 1000) would bite. */
static void
test_percentile_exact_ranks(void **state)
{
    static const size_t sizes[] = { 10, 100, 101, 1000, 1001, 9999, 10000 };
    size_t i;

    (void) state;
    for (i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i];
        double *v = shuffled(n);
        struct lg_summary s;

        lg_summarize(v, n, &s);
        assert_int_equal(s.n, n);
        assert_true(s.min == 1 && s.max == n);
        assert_true(fabs(s.mean - (n + 1) / 2.0) < 1e-9);
        assert_true(s.p50 == ceil(n * 0.5));
        assert_true(s.p90 == ceil(n * 90 / 100.0 - 1e-9));
        assert_true(s.p99 == ceil(n * 99 / 100.0 - 1e-9));
        assert_true(s.p999 == ceil(n * 999 / 1000.0 - 1e-9));
        free(v);
    }
    /* Spot checks written out by hand. */
    {
        double *v = shuffled(1000);
        struct lg_summary s;

        lg_summarize(v, 1000, &s);
        assert_true(s.p50 == 500);
        assert_true(s.p90 == 900);
        assert_true(s.p99 == 990);
        assert_true(s.p999 == 999);
        free(v);
    }
}

static void
test_percentile_skewed(void **state)
{
    /* 98 fast samples and 2 RTO-scale outliers: p99 must see an outlier,
     * p90 must not. */
    double v[100];
    struct lg_summary s;
    int i;

    (void) state;
    for (i = 0; i < 100; i++) {
        v[i] = i < 98 ? 100 + i % 7 : 200000;
    }
    lg_summarize(v, 100, &s);
    assert_true(s.p90 < 200);
    assert_true(s.p99 == 200000);
    assert_true(s.max == 200000);
    assert_true(s.min == 100);
}

static void
test_summary_empty(void **state)
{
    struct lg_summary s;

    (void) state;
    lg_summarize(NULL, 0, &s);
    assert_int_equal(s.n, 0);
    assert_true(isnan(s.mean) && isnan(s.p50) && isnan(s.p99));
}

static void
test_json(void **state)
{
    struct lg_summary s;
    struct cli_json j;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    (void) state;
    lg_summarize(NULL, 0, &s);
    cli_json_start(&j, f);
    cli_json_str(&j, "name", "a\"b\\c\n");
    cli_json_double(&j, "half", 0.5);
    cli_json_double(&j, "nan", NAN);
    cli_json_u64(&j, "big", UINT64_MAX);
    cli_json_array(&j, "list");
    cli_json_double(&j, NULL, 1);
    cli_json_null(&j, NULL);
    cli_json_end_array(&j);
    lg_json_summary(&j, "empty", &s);
    cli_json_object(&j, "nothing");
    cli_json_end_object(&j);
    cli_json_finish(&j);
    fclose(f);
    assert_non_null(strstr(buf, "\"name\": \"a\\\"b\\\\c\\n\""));
    assert_non_null(strstr(buf, "\"half\": 0.5,"));
    assert_non_null(strstr(buf, "\"nan\": null"));
    assert_non_null(strstr(buf, "\"big\": 18446744073709551615"));
    assert_non_null(strstr(buf, "1,\n    null\n  ]"));
    assert_non_null(strstr(buf, "\"p99\": null"));
    assert_non_null(strstr(buf, "\"nothing\": {}"));
    assert_true(buf[0] == '{' && buf[len - 2] == '}' && buf[len - 1] == '\n');
    free(buf);
}

static void
test_request_roundtrip(void **state)
{
    struct lg_fg_req in = { .flags = LG_FG_CLOSE | LG_FG_DSCP, .dscp = 46,
                            .flow_id = UINT64_C(0x0102030405060708),
                            .size = UINT64_C(10000000000) };
    struct lg_fg_req out;
    uint8_t buf[LG_FG_REQ_LEN];

    (void) state;
    lg_fg_req_encode(&in, buf);
    assert_memory_equal(buf, "PFG1", 4);
    assert_null(lg_fg_req_decode(buf, &out));
    assert_int_equal(out.flags, in.flags);
    assert_int_equal(out.dscp, 46);
    assert_true(out.flow_id == in.flow_id);
    assert_true(out.size == in.size);

    buf[0] = 'X';
    assert_non_null(lg_fg_req_decode(buf, &out));
    in.size = 0;
    lg_fg_req_encode(&in, buf);
    assert_non_null(lg_fg_req_decode(buf, &out));
    in.size = 1;
    in.flags = 0x80;
    lg_fg_req_encode(&in, buf);
    assert_non_null(lg_fg_req_decode(buf, &out));
}

static void
test_parse_bytes(void **state)
{
    (void) state;
    assert_true(cli_parse_bytes("--size", "10K", 1, UINT64_MAX) == 10000);
    assert_true(cli_parse_bytes("--size", "10MB", 1, UINT64_MAX)
                == 10000000);
    assert_true(cli_parse_bytes("--size", "64KiB", 1, UINT64_MAX) == 65536);
    assert_true(cli_parse_bytes("--size", "1500", 1, UINT64_MAX) == 1500);
    assert_true(cli_parse_u64("--n", "14", 1, 20) == 14);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentile_small),
        cmocka_unit_test(test_percentile_exact_ranks),
        cmocka_unit_test(test_percentile_skewed),
        cmocka_unit_test(test_summary_empty),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_request_roundtrip),
        cmocka_unit_test(test_parse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests: CDF files and the seeded generator. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/cdf.h>

static void
expect_error(const char *text, const char *needle)
{
    struct panda_cdf cdf;
    char *err = panda_cdf_parse(&cdf, text, "t.cdf");

    if (!err) {
        fail_msg("accepted: %s", text);
    }
    if (!strstr(err, needle)) {
        fail_msg("error \"%s\" lacks \"%s\"", err, needle);
    }
    assert_int_equal(cdf.n, 0);
    free(err);
}

static void
test_parse_and_eval(void **state)
{
    struct panda_cdf cdf;
    char *err;

    (void) state;
    err = panda_cdf_parse(&cdf, "# web-ish\n\n100 0.5\n1000 0.75  # c\n"
                          "10000 1\n", "t.cdf");
    assert_null(err);
    assert_int_equal(cdf.n, 3);
    assert_true(panda_cdf_quantile(&cdf, 0.2) == 100);
    assert_true(panda_cdf_quantile(&cdf, 0.5) == 100);
    assert_true(fabs(panda_cdf_quantile(&cdf, 0.625) - 550) < 1e-9);
    assert_true(fabs(panda_cdf_quantile(&cdf, 0.875) - 5500) < 1e-9);
    assert_true(panda_cdf_quantile(&cdf, 1.0) == 10000);
    assert_true(panda_cdf_eval(&cdf, 50) == 0);
    assert_true(fabs(panda_cdf_eval(&cdf, 550) - 0.625) < 1e-12);
    assert_true(panda_cdf_eval(&cdf, 20000) == 1);
    /* 0.5 x 100 + 0.25 x 550 + 0.25 x 5500 */
    assert_true(fabs(panda_cdf_mean(&cdf) - 1562.5) < 1e-9);
    panda_cdf_destroy(&cdf);
}

/* Segments whose width underflows into the subnormal range: the quantile
 * stays within its segment (the fuzzer found one above the last value). */
static void
test_tiny_segments(void **state)
{
    struct panda_cdf cdf;
    double prev = 0;
    char *err;
    int i;

    (void) state;
    err = panda_cdf_parse(&cdf, "0 0\n5.441770474293208e-301 "
                          "0.8749999999999999\n1.0462443396743566e-300 "
                          "0.875\n1.0462443396743566e-300 1.0000005\n",
                          "t.cdf");
    assert_null(err);
    for (i = 0; i <= 16; i++) {
        double q = panda_cdf_quantile(&cdf, i / 16.0);

        assert_true(q >= prev && q <= cdf.value[cdf.n - 1]);
        prev = q;
        assert_true(panda_cdf_eval(&cdf, q) <= 1);
    }
    assert_true(panda_cdf_eval(&cdf, 1e-300) <= 1);
    panda_cdf_destroy(&cdf);
}

static void
test_bad_files(void **state)
{
    struct panda_cdf cdf;
    char *err;

    (void) state;
    expect_error("", "no data points");
    expect_error("# only comments\n", "no data points");
    expect_error("100 0.5\n50 1\n", "t.cdf:2: values not sorted");
    expect_error("100 0.5\n200 0.4\n300 1\n", "t.cdf:2: probabilities");
    expect_error("100 0.5\n200 0.9\n", "not 1");
    expect_error("100 1.5\n", "outside [0, 1]");
    expect_error("abc 0.5\n", "t.cdf:1: expected");
    expect_error("100\n", "missing cumulative probability");
    expect_error("100 0.5 7\n", "trailing text");
    expect_error("-5 1\n", "negative value");
    /* Values near DBL_MAX made the mean inf (then NaN): refused, with the
     * line, and so is anything above 2^40; 2^40 itself is fine. */
    expect_error("1 0.5\n1.7e308 1\n",
                 "t.cdf:2: value 1.7e+308 above the largest supported, "
                 "1099511627776 (2^40)");
    expect_error("1099511627777 1\n", "t.cdf:1: value");
    err = panda_cdf_parse(&cdf, "0 0\n1099511627776 1\n", "t.cdf");
    assert_null(err);
    assert_true(isfinite(panda_cdf_mean(&cdf)));
    assert_true(panda_cdf_mean(&cdf) == 549755813888.0);
    /* An in-memory CDF is held to the same rule. */
    cdf.value[1] = 1e300;
    err = panda_cdf_check(&cdf);
    assert_non_null(err);
    assert_non_null(strstr(err, "point 2: value 1e+300 above"));
    free(err);
    panda_cdf_destroy(&cdf);
    err = panda_cdf_load(&cdf, "/nonexistent/web.cdf");
    assert_non_null(err);
    assert_non_null(strstr(err, "/nonexistent/web.cdf: cannot open"));
    free(err);
}

static void
test_sampling_follows_cdf(void **state)
{
    struct panda_cdf cdf;
    struct panda_rng rng;
    int below = 0, i, n = 200000;
    double sum = 0;

    (void) state;
    assert_null(panda_cdf_parse(&cdf, "100 0.5\n1000 0.75\n10000 1\n", "t"));
    panda_rng_seed(&rng, 42);
    for (i = 0; i < n; i++) {
        double x = panda_cdf_sample(&cdf, &rng);

        sum += x;
        below += x <= 1000;
    }
    assert_true(fabs((double) below / n - 0.75) < 0.01);
    assert_true(fabs(sum / n / panda_cdf_mean(&cdf) - 1) < 0.02);
    panda_cdf_destroy(&cdf);
}

static void
test_rng_deterministic(void **state)
{
    struct panda_rng a, b, c;
    int i, same = 0;

    (void) state;
    panda_rng_seed(&a, 7);
    panda_rng_seed(&b, 7);
    panda_rng_seed(&c, 8);
    for (i = 0; i < 1000; i++) {
        uint64_t x = panda_rng_next(&a);

        assert_true(x == panda_rng_next(&b));
        same += x == panda_rng_next(&c);
    }
    assert_true(same < 2);
    for (i = 0; i < 1000; i++) {
        double u = panda_rng_uniform(&a);

        assert_true(u >= 0 && u < 1);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_eval),
        cmocka_unit_test(test_tiny_segments),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_sampling_follows_cdf),
        cmocka_unit_test(test_rng_deterministic),
    };

    return cmocka_run_group_tests_name("cdf", tests, NULL, NULL);
}

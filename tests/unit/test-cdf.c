/* Unit tests: CDF files and the seeded generator. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <panda/cdf.h>
#include <panda/rng.h>

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

/* panda_cdf_load() reads regular files of at most 64 MiB: a FIFO (refused
 * without blocking on it: no writer), a character device (/dev/null, so
 * that a broken check reads nothing rather than for ever) and a sparse
 * file one byte over the limit are refused with the file's name; a file
 * at the limit is read (and refused for its text, not its size). */
static void
test_load_bounded(void **state)
{
    char dir[] = "/tmp/test-cdf-XXXXXX", path[64];
    struct panda_cdf cdf;
    char *err;
    FILE *f;

    (void) state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    err = panda_cdf_load(&cdf, path);
    assert_non_null(err);
    assert_non_null(strstr(err, "fifo: not a regular file (a FIFO)"));
    free(err);
    unlink(path);
    err = panda_cdf_load(&cdf, "/dev/null");
    assert_non_null(err);
    assert_non_null(strstr(err, "/dev/null: not a regular file (a character "
                            "device)"));
    free(err);
    snprintf(path, sizeof path, "%s/big.cdf", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), PANDA_CDF_MAX_FILE_BYTES + 1), 0);
    fclose(f);
    err = panda_cdf_load(&cdf, path);
    assert_non_null(err);
    assert_non_null(strstr(err, "big.cdf: 67108865 bytes, above the limit "
                            "of 67108864 bytes"));
    free(err);
    assert_int_equal(truncate(path, PANDA_CDF_MAX_FILE_BYTES), 0);
    err = panda_cdf_load(&cdf, path);
    assert_non_null(err);
    assert_non_null(strstr(err, "not a text file"));
    free(err);
    unlink(path);
    rmdir(dir);
}

/* panda_cdf_eval_near() is panda_cdf_eval() whatever the hint, also on
 * repeated values (atoms) and outside the points. */
static void
test_eval_near(void **state)
{
    struct panda_cdf cdf;
    struct panda_rng rng;
    size_t hint = 0;
    int i;

    (void) state;
    assert_null(panda_cdf_parse(&cdf, "10 0\n10 0.2\n20 0.3\n20 0.5\n"
                                "35 0.6\n100 0.9\n100 1\n", "t"));
    panda_rng_seed(&rng, 7);
    for (i = 0; i < 20000; i++) {
        double x = (double) (panda_rng_next(&rng) % 1200) / 10.0;
        double a = panda_cdf_eval(&cdf, x);
        double b;

        if (i % 3 == 0) {
            hint = panda_rng_next(&rng) % (cdf.n + 3);     /* Any hint. */
        }
        b = panda_cdf_eval_near(&cdf, x, &hint);
        assert_true(a == b);
        assert_true(hint >= 1 && hint <= cdf.n);
    }
    panda_cdf_destroy(&cdf);
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
        cmocka_unit_test(test_load_bounded),
        cmocka_unit_test(test_eval_near),
        cmocka_unit_test(test_sampling_follows_cdf),
        cmocka_unit_test(test_rng_deterministic),
    };

    return cmocka_run_group_tests_name("cdf", tests, NULL, NULL);
}

/* Unit tests: the thesis's model helpers (eqs. 3-6, 3-13, 3-20). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include <panda/model.h>

static void
test_map_vectors(void **state)
{
    (void) state;
    /* Thesis vectors: MSS 1460, 40-byte headers. */
    assert_int_equal(panda_model_map(100, 1460, 40), 1);
    assert_int_equal(panda_model_map(1400, 1460, 40), 1);
    assert_int_equal(panda_model_map(2000, 1460, 40), 2);
    assert_int_equal(panda_model_map(10000, 1460, 40), 7);
    /* Edges: exactly one MTU is one segment, one byte more is two. */
    assert_int_equal(panda_model_map(1500, 1460, 40), 1);
    assert_int_equal(panda_model_map(1501, 1460, 40), 2);
    assert_int_equal(panda_model_map(65535, 1460, 40), 45);
    assert_int_equal(panda_model_map(0, 1460, 40), 1);
}

static void
hist(struct panda_hist *h, const uint32_t *size, const double *w, int n)
{
    int i;

    panda_hist_init(h);
    for (i = 0; i < n; i++) {
        panda_hist_add(h, size[i], w[i]);
    }
}

/* Thesis eq. 3-11: FLT {1000 B: 95%, 1500 B: 5%}, FHT {1000 B: 10%,
 * 1500 B: 90%}, T = 1200, non-compensating g: E = 12.7. */
static void
test_data_ratio_thesis_example(void **state)
{
    struct panda_hist flt, fht;
    double e;

    (void) state;
    hist(&flt, (uint32_t[]) { 1000, 1500 }, (double[]) { 95, 5 }, 2);
    hist(&fht, (uint32_t[]) { 1500, 1000 }, (double[]) { 0.9, 0.1 }, 2);
    e = panda_model_data_ratio_noncomp(&flt, &fht, 1200);
    assert_true(fabs(e - 12.7) < 0.05);
    /* (1025 / 1450) x (1500 / 1500) x (0.9 / 0.05) */
    assert_true(fabs(e - 1025.0 / 1450.0 * 18.0) < 1e-9);

    /* Compensating g (eq. 3-20): FLT grows 1025 - 1200 x 0.95 < 0 per
     * packet, so it never sinks at all. */
    assert_true(isinf(panda_model_data_ratio_comp(&flt, &fht, 1200)));
    /* At T = 1050 it does sink, slower than with the non-compensating g:
     * (1025 / 1450) x (1450 - 105) / (1025 - 997.5). */
    e = panda_model_data_ratio_comp(&flt, &fht, 1050);
    assert_true(fabs(e - 1025.0 / 1450.0 * 1345.0 / 27.5) < 1e-9);
    assert_true(e > panda_model_data_ratio_noncomp(&flt, &fht, 1050));
    panda_hist_destroy(&flt);
    panda_hist_destroy(&fht);
}

/* PIAS (T = 0, all bytes count) treats both alike: E_0 = 1 (eq. 3-10). */
static void
test_data_ratio_pias_is_one(void **state)
{
    struct panda_hist flt, fht;

    (void) state;
    hist(&flt, (uint32_t[]) { 100, 1500 }, (double[]) { 95, 5 }, 2);
    hist(&fht, (uint32_t[]) { 1000, 1500 }, (double[]) { 10, 90 }, 2);
    assert_true(fabs(panda_model_data_ratio_comp(&flt, &fht, 0) - 1.0) < 1e-12);
    panda_hist_destroy(&flt);
    panda_hist_destroy(&fht);
}

/* Eq. 3-6 example: 100 B 95%, MTU 4%, 10 MTU 1% map 95:4:10. */
static void
test_small_ratio(void **state)
{
    struct panda_hist h;
    double r;

    (void) state;
    hist(&h, (uint32_t[]) { 100, 1500, 15000 }, (double[]) { 95, 4, 1 }, 3);
    r = panda_model_small_ratio(&h, 1000, 1460, 40);
    /* 10 x MTU = 15000 B maps to ceil(14960 / 1460) = 11 segments. */
    assert_true(fabs(r - 95.0 / (95 + 4 + 11)) < 1e-12);
    assert_true(fabs(panda_model_small_ratio(&h, 100, 1460, 40)) < 1e-12);
    assert_true(fabs(panda_model_small_ratio(&h, 65536, 1460, 40) - 1) < 1e-12);
    panda_hist_destroy(&h);
}

static void
test_hist_sorted_merge(void **state)
{
    struct panda_hist h;

    (void) state;
    panda_hist_init(&h);
    panda_hist_add(&h, 1500, 1);
    panda_hist_add(&h, 100, 2);
    panda_hist_add(&h, 700, 3);
    panda_hist_add(&h, 100, 4);
    panda_hist_add(&h, 1500, 5);
    assert_int_equal(h.n, 3);
    assert_int_equal(h.size[0], 100);
    assert_int_equal(h.size[1], 700);
    assert_int_equal(h.size[2], 1500);
    assert_true(h.weight[0] == 6 && h.weight[1] == 3 && h.weight[2] == 6);
    assert_true(panda_hist_total(&h) == 15);
    panda_hist_destroy(&h);
}

static void
test_split(void **state)
{
    struct panda_hist h;
    struct panda_model_split s;

    (void) state;
    hist(&h, (uint32_t[]) { 100, 1200, 1500 }, (double[]) { 2, 1, 1 }, 3);
    panda_model_split(&h, 1200, 1, &s);          /* 1200 is large. */
    assert_true(s.pr_small == 0.5 && s.avg_small == 100);
    assert_true(s.avg_large == 1350 && s.avg == 725);
    panda_model_split(&h, 1200, 0, &s);          /* 1200 is small. */
    assert_true(s.pr_small == 0.75 && s.pr_large == 0.25);
    assert_true(s.avg_large == 1500);
    panda_hist_destroy(&h);
}

/* Size-interval weights: each interval's mean over the base interval's
 * [T, t_0] mean; packets below T do not count. */
static void
test_size_weights(void **state)
{
    struct panda_hist h;
    double w[3];

    (void) state;
    /* Base [1000, 1448]: mean 1400 (1352 x 1, 1448 x 1); (1448, 16000]:
     * 7000 (x2) and 14000 (x1) -> mean 9333.3; above 16000: 63000. */
    hist(&h, (uint32_t[]) { 100, 1352, 1448, 7000, 14000, 63000 },
         (double[]) { 50, 1, 1, 2, 1, 4 }, 6);
    assert_true(panda_model_size_weights(&h, 1000, (uint32_t[]) { 1448,
                                         16000 }, 2, 600, w));
    assert_true(fabs(w[0] - 28000.0 / 3 / 1400) < 1e-9);
    assert_true(fabs(w[1] - 45.0) < 1e-9);
    /* Capped, and an empty interval takes the weight below it. */
    assert_true(panda_model_size_weights(&h, 1000, (uint32_t[]) { 1448,
                                         15000, 16000 }, 3, 6, w));
    assert_true(w[0] == 6 && w[1] == 6 && w[2] == 6);
    /* No FHT packet in [T, t_0]: every weight 1. */
    assert_false(panda_model_size_weights(&h, 1500, (uint32_t[]) { 2000 },
                                          1, 600, w));
    assert_true(w[0] == 1);
    panda_hist_destroy(&h);

    /* Never below 1 or the interval before, whatever the means. */
    hist(&h, (uint32_t[]) { 1000, 1400, 1500 }, (double[]) { 0, 1, 1 }, 3);
    assert_true(panda_model_size_weights(&h, 1000, (uint32_t[]) { 1450 },
                                         1, 600, w));
    assert_true(fabs(w[0] - 1500.0 / 1400) < 1e-9);
    panda_hist_destroy(&h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_vectors),
        cmocka_unit_test(test_data_ratio_thesis_example),
        cmocka_unit_test(test_data_ratio_pias_is_one),
        cmocka_unit_test(test_small_ratio),
        cmocka_unit_test(test_hist_sorted_merge),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_size_weights),
    };

    return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}

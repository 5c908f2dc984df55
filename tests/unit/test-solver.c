/* Unit tests for lib/panda/solver.c: eq. 3-9, eq. 3-23 and Appendix B. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/cdf.h>
#include <panda/model.h>
#include <panda/policy.h>
#include <panda/solver.h>

/* Adds a flow with 'n' (size, count) pairs to 's'. */
static size_t
add_flow(struct panda_samples *s, uint32_t header_len, int n, ...)
{
    size_t f = panda_samples_new_flow(s);
    va_list args;
    int i;

    va_start(args, n);
    for (i = 0; i < n; i++) {
        uint32_t size = va_arg(args, uint32_t);
        double count = va_arg(args, double);

        panda_samples_add(s, f, size, count, header_len);
    }
    va_end(args);
    return f;
}

static void
assert_contains(const char *msg, const char *needle)
{
    if (!msg || !strstr(msg, needle)) {
        fail_msg("message \"%s\" lacks \"%s\"", msg ? msg : "(null)",
                 needle);
    }
}

/* ---- Samples. ---- */

/* Buffered ingestion (push + flush, radix sorted) gives exactly the
 * histograms, packet and byte counts of one-by-one ingestion. */
static void
test_samples_push_matches_add(void **state)
{
    struct panda_samples a, b;
    struct panda_rng rng;
    size_t i, f;

    (void) state;
    panda_samples_init(&a);
    panda_samples_init(&b);
    for (f = 0; f < 300; f++) {
        panda_samples_new_flow(&a);
        panda_samples_new_flow(&b);
    }
    panda_rng_seed(&rng, 11);
    for (i = 0; i < 200000; i++) {
        size_t flow = panda_rng_next(&rng) % 300;
        uint32_t size = 1 + panda_rng_next(&rng) % (flow % 7 ? 1500 : 70000);

        panda_samples_add(&a, flow, size, 1, 40);
        panda_samples_push(&b, flow, size, 40);
    }
    /* Too large to encode in a pending key: taken directly. */
    panda_samples_add(&a, 5, 200000, 1, 40);
    panda_samples_push(&b, 5, 200000, 40);
    /* A flow that only gets packets after a flush. */
    panda_samples_flush(&b);
    panda_samples_add(&a, 299, 1000, 1, 40);
    panda_samples_push(&b, 299, 1000, 40);
    assert_int_equal(panda_samples_prune(&b), 0);
    assert_int_equal(b.n_pending, 0);
    for (f = 0; f < 300; f++) {
        const struct panda_samples_flow *x = &a.flows[f], *y = &b.flows[f];

        assert_int_equal(x->hist.n, y->hist.n);
        assert_memory_equal(x->hist.size, y->hist.size,
                            x->hist.n * sizeof *x->hist.size);
        assert_memory_equal(x->hist.weight, y->hist.weight,
                            x->hist.n * sizeof *x->hist.weight);
        assert_true(x->packets == y->packets);
        assert_true(x->bytes == y->bytes);
    }
    assert_true(panda_samples_packets(&b) == 200002);
    panda_samples_destroy(&a);
    panda_samples_destroy(&b);
}

/* ---- Eq. 3-9. ---- */

/* §3.2.1's FLT example: 95% 100 B, 4% MTU, 1% 10 MTU, which map to
 * 95:4:10 segments (header 0, MSS 1500 as in the text).  Against an FHT of
 * MTU packets, every T in (100, 1500] keeps R_FLT = 95/109 and R_FHT = 0. */
static void
test_T_thesis_example(void **state)
{
    struct panda_samples flt, fht;
    struct panda_solver_separation sep;
    char *err;

    (void) state;
    panda_samples_init(&flt);
    panda_samples_init(&fht);
    add_flow(&flt, 0, 3, 100u, 95.0, 1500u, 4.0, 15000u, 1.0);
    add_flow(&fht, 0, 1, 1500u, 100.0);

    err = panda_solver_find_T(&flt, &fht, 1500, 0, PANDA_SOLVER_TIE_HIGH, &sep);
    assert_null(err);
    assert_int_equal(sep.x, 1500);
    assert_int_equal(sep.plateau_lo, 101);
    assert_int_equal(sep.plateau_hi, 1500);
    assert_true(fabs(sep.t - 95.0 / 109) < 1e-12);
    assert_true(fabs(sep.r_a - 95.0 / 109) < 1e-12);
    assert_true(fabs(sep.r_b) < 1e-12);
    assert_int_equal(sep.s_min, 100);
    assert_int_equal(sep.s_max, 15000);

    /* The byte-based R of eq. 3-5 would give only ~31%: check that the
     * solver really uses map(k) by evaluating t at T = 1500 directly. */
    assert_true(fabs(panda_solver_t_of(&flt, &fht, 1500, 1500, 0) - 95.0 / 109)
                < 1e-12);
    /* Above MTU the FHT's packets turn small: t drops to 99/109 - 1. */
    assert_true(fabs(panda_solver_t_of(&flt, &fht, 1501, 1500, 0)
                     - (99.0 / 109 - 1)) < 1e-12);

    panda_samples_destroy(&flt);
    panda_samples_destroy(&fht);
}

/* FLT all 100 B and FHT all 1500 B: t = 1 on exactly (100, 1500]. */
static void
test_T_hand_optimum_ties(void **state)
{
    struct panda_samples flt, fht;
    struct panda_solver_separation sep;

    (void) state;
    panda_samples_init(&flt);
    panda_samples_init(&fht);
    add_flow(&flt, 40, 1, 100u, 1000.0);
    add_flow(&fht, 40, 1, 1500u, 1000.0);

    assert_null(panda_solver_find_T(&flt, &fht, 1460, 40, PANDA_SOLVER_TIE_HIGH, &sep));
    assert_int_equal(sep.x, 1500);
    assert_true(fabs(sep.t - 1.0) < 1e-12);
    assert_int_equal(sep.plateau_lo, 101);
    assert_int_equal(sep.plateau_hi, 1500);

    assert_null(panda_solver_find_T(&flt, &fht, 1460, 40, PANDA_SOLVER_TIE_LOW, &sep));
    assert_int_equal(sep.x, 101);
    assert_true(fabs(sep.t - 1.0) < 1e-12);

    assert_null(panda_solver_find_T(&flt, &fht, 1460, 40, PANDA_SOLVER_TIE_MID, &sep));
    assert_int_equal(sep.x, 800);

    panda_samples_destroy(&flt);
    panda_samples_destroy(&fht);
}

/* Per-flow weights (eq. 3-8): flow A sends 90 small packets, flow B 10 MTU
 * packets.  By packet count R_L = 0.9 on (100, 1500]; with equal weights
 * 0.5. */
static void
test_T_flow_weights(void **state)
{
    struct panda_samples flt, fht;
    struct panda_solver_separation sep;

    (void) state;
    panda_samples_init(&flt);
    panda_samples_init(&fht);
    add_flow(&flt, 40, 1, 100u, 90.0);
    add_flow(&flt, 40, 1, 1500u, 10.0);
    add_flow(&fht, 40, 1, 1500u, 50.0);
    add_flow(&fht, 40, 2, 100u, 10.0, 1500u, 90.0);

    panda_samples_set_weights(&flt, PANDA_SAMPLES_WEIGH_PACKETS);
    panda_samples_set_weights(&fht, PANDA_SAMPLES_WEIGH_PACKETS);
    assert_null(panda_solver_find_T(&flt, &fht, 1460, 40, PANDA_SOLVER_TIE_HIGH, &sep));
    assert_int_equal(sep.x, 1500);
    /* FHT: (50 x 0 + 100 x 0.1) / 150. */
    assert_true(fabs(sep.r_b - 10.0 / 150) < 1e-12);
    assert_true(fabs(sep.t - (0.9 - 10.0 / 150)) < 1e-12);

    panda_samples_set_weights(&flt, PANDA_SAMPLES_WEIGH_EQUAL);
    panda_samples_set_weights(&fht, PANDA_SAMPLES_WEIGH_EQUAL);
    assert_null(panda_solver_find_T(&flt, &fht, 1460, 40, PANDA_SOLVER_TIE_HIGH, &sep));
    assert_true(fabs(sep.t - (0.5 - 0.05)) < 1e-12);

    panda_samples_destroy(&flt);
    panda_samples_destroy(&fht);
}

/* The prefix-sum search agrees with the definition of t(T) everywhere. */
static void
test_T_matches_brute_force(void **state)
{
    struct panda_samples flt, fht;
    struct panda_solver_separation sep;
    struct panda_rng rng;
    int round;

    (void) state;
    panda_rng_seed(&rng, 7);
    for (round = 0; round < 5; round++) {
        double best = -HUGE_VAL;
        uint32_t x, best_hi = 0;
        int f, i;

        panda_samples_init(&flt);
        panda_samples_init(&fht);
        for (f = 0; f < 6; f++) {
            size_t a = panda_samples_new_flow(&flt);
            size_t b = panda_samples_new_flow(&fht);

            for (i = 0; i < 40; i++) {
                uint32_t s1 = 41 + panda_rng_next(&rng) % 3000;
                uint32_t s2 = 41 + panda_rng_next(&rng) % 9000;

                panda_samples_add(&flt, a, s1, 1 + f, 40);
                panda_samples_add(&fht, b, s2, 1, 40);
            }
        }
        panda_samples_set_weights(&flt, PANDA_SAMPLES_WEIGH_PACKETS);
        panda_samples_set_weights(&fht, PANDA_SAMPLES_WEIGH_BYTES);
        assert_null(panda_solver_find_T(&flt, &fht, 1460, 40, PANDA_SOLVER_TIE_HIGH,
                                  &sep));
        for (x = sep.s_min; x <= sep.s_max; x++) {
            double t = panda_solver_t_of(&flt, &fht, x, 1460, 40);

            if (t > best + 1e-9) {
                best = t;
            }
        }
        for (x = sep.s_min; x <= sep.s_max; x++) {
            if (panda_solver_t_of(&flt, &fht, x, 1460, 40) >= best - 1e-9) {
                best_hi = x;
            }
        }
        assert_true(fabs(sep.t - best) < 1e-9);
        assert_int_equal(sep.x, best_hi);
        assert_true(fabs(panda_solver_t_of(&flt, &fht, sep.x, 1460, 40) - sep.t)
                    < 1e-9);
        panda_samples_destroy(&flt);
        panda_samples_destroy(&fht);
    }
}

static void
test_T_errors(void **state)
{
    struct panda_samples flt, fht;
    struct panda_solver_separation sep;
    char *err;

    (void) state;
    panda_samples_init(&flt);
    panda_samples_init(&fht);
    add_flow(&fht, 40, 1, 1500u, 10.0);
    err = panda_solver_find_T(&flt, &fht, 1460, 40, PANDA_SOLVER_TIE_HIGH, &sep);
    assert_contains(err, "no FLT samples");
    free(err);

    add_flow(&flt, 40, 1, 100u, 10.0);
    err = panda_solver_find_T(&flt, &fht, 0, 40, PANDA_SOLVER_TIE_HIGH, &sep);
    assert_contains(err, "mss");
    free(err);

    panda_samples_destroy(&fht);
    panda_samples_init(&fht);
    err = panda_solver_find_T(&flt, &fht, 1460, 40, PANDA_SOLVER_TIE_HIGH, &sep);
    assert_contains(err, "no FHT samples");
    free(err);

    add_flow(&fht, 40, 1, PANDA_SOLVER_MAX_SIZE + 1u, 1.0);
    err = panda_solver_find_T(&flt, &fht, 1460, 40, PANDA_SOLVER_TIE_HIGH, &sep);
    assert_contains(err, "too large");
    free(err);

    panda_samples_destroy(&flt);
    panda_samples_destroy(&fht);
}

/* §3.2.2's worked example: T = 1200, FLT 95% 1000 B + 5% 1500 B, FHT 10%
 * 1000 B + 90% 1500 B: E_1200(g(k) = k) = 12.7 (eq. 3-11). */
static void
test_data_ratio_thesis_example(void **state)
{
    struct panda_hist a, b;
    double e, comp;

    (void) state;
    panda_hist_init(&a);
    panda_hist_init(&b);
    panda_hist_add(&a, 1000, 95);
    panda_hist_add(&a, 1500, 5);
    panda_hist_add(&b, 1000, 10);
    panda_hist_add(&b, 1500, 90);
    e = panda_model_data_ratio_noncomp(&a, &b, 1200);
    assert_true(fabs(e - 12.7) < 0.05);
    /* The compensating g: avg_a - T Pr_a^s = 1025 - 1140 < 0, the FLT flow
     * never sinks (eq. 3-19 discussion). */
    comp = panda_model_data_ratio_comp(&a, &b, 1200);
    assert_true(isinf(comp));
    panda_hist_destroy(&a);
    panda_hist_destroy(&b);
}

/* ---- Eq. 3-23. ---- */

static void
test_subthresholds(void **state)
{
    struct panda_samples fht;
    struct panda_solver_subthresholds sub;
    struct panda_policy p;
    double bounds[2] = { 100e3, 10e6 }, eta[3];
    int i;

    (void) state;
    panda_samples_init(&fht);
    for (i = 0; i < 3; i++) {
        /* Small flows: 50 MTU packets (73 KB). */
        add_flow(&fht, 40, 2, 200u, 2.0, 1500u, 50.0);
        /* Medium: 8000-byte super-packets (1.6 MB). */
        add_flow(&fht, 40, 2, 1500u, 5.0, 8000u, 200.0);
        /* Large: 64 KB super-packets (32 MB). */
        add_flow(&fht, 40, 2, 8000u, 3.0, 65000u, 500.0);
    }
    panda_samples_set_weights(&fht, PANDA_SAMPLES_WEIGH_PACKETS);
    assert_null(panda_solver_find_subthresholds(&fht, bounds, 2, 1000, 1460, 40,
                                          PANDA_SOLVER_TIE_HIGH, &sub));
    assert_int_equal(sub.m, 3);
    assert_int_equal(sub.n_flows[0], 3);
    assert_int_equal(sub.n_flows[1], 3);
    assert_int_equal(sub.n_flows[2], 3);
    assert_int_equal(sub.n, 2);
    assert_null(sub.notes);
    /* d_1 in (1500, 8000], d_2 in (8000, 65000]: both ascending, above T. */
    assert_int_equal(sub.sub[0].sep.x, 8000);
    assert_int_equal(sub.sub[1].sep.x, 65000);
    assert_true(sub.sub[0].sep.plateau_lo == 1501);
    assert_true(sub.sub[1].sep.plateau_lo == 8001);
    assert_true(sub.sub[0].sep.t > 0.9 && sub.sub[1].sep.t > 0.9);

    /* eta with weights 2 for payload > 7959 and 4 for > 64959: the medium
     * class's big packets weigh 2, the large class's 4. */
    panda_policy_init(&p, PANDA_KIND_PANDA);
    p.threshold = 960;
    p.n_weights = 2;
    p.weights[0].above = 7959;
    p.weights[0].weight = 200;
    p.weights[1].above = 64959;
    p.weights[1].weight = 400;
    panda_solver_class_eta(&fht, bounds, 2, &p, 40, eta);
    assert_true(fabs(eta[0] - 1.0) < 1e-12);
    {
        double m_bytes = 5 * 1460.0 + 200 * 7960.0;
        double m_x = 5 * 1460.0 + 200 * 7960.0 * 2;
        double l_bytes = 3 * 7960.0 + 500 * 64960.0;
        double l_x = 3 * 7960.0 * 2 + 500 * 64960.0 * 4;

        assert_true(fabs(eta[1] - m_bytes / m_x) < 1e-12);
        assert_true(fabs(eta[2] - l_bytes / l_x) < 1e-12);
    }
    panda_solver_subthresholds_destroy(&sub);

    /* An empty class is skipped with a note. */
    bounds[1] = 1e9;
    assert_null(panda_solver_find_subthresholds(&fht, bounds, 2, 1000, 1460, 40,
                                          PANDA_SOLVER_TIE_HIGH, &sub));
    assert_int_equal(sub.n, 1);
    assert_contains(sub.notes, "class 3 has no flows");
    panda_solver_subthresholds_destroy(&sub);

    /* Bad bounds. */
    bounds[0] = 5e6;
    bounds[1] = 1e6;
    {
        char *err = panda_solver_find_subthresholds(&fht, bounds, 2, 1000, 1460,
                                              40, PANDA_SOLVER_TIE_HIGH, &sub);
        assert_contains(err, "not strictly ascending");
        free(err);
    }
    panda_samples_destroy(&fht);
}

/* ---- Appendix B. ---- */

static void
load_cdf(struct panda_cdf *cdf, const char *text)
{
    char *err = panda_cdf_parse(cdf, text, "test");

    if (err) {
        fail_msg("%s", err);
    }
}

static void
assert_ascending(const uint64_t *alpha, int n)
{
    int j;

    for (j = 0; j < n; j++) {
        assert_true(alpha[j] >= 1);
        if (j) {
            assert_true(alpha[j] > alpha[j - 1]);
        }
    }
}

/* K = 2 by hand: B(s) = rho (s + (1 - s)^2 / (1 - rho s)), minimal at
 * (1 - rho s)^2 = 1 - rho, s = (1 - sqrt(1 - rho)) / rho. */
static void
test_alpha_closed_form_k2(void **state)
{
    double S[1], rho;

    (void) state;
    for (rho = 0.1; rho < 0.95; rho += 0.2) {
        double s = (1 - sqrt(1 - rho)) / rho, d;

        panda_solver_alpha_closed_form(2, rho, S);
        assert_true(fabs(S[0] - s) < 1e-12);
        for (d = -0.05; d <= 0.05; d += 0.01) {
            double T = s + d;

            if (fabs(d) < 1e-9) {
                continue;
            }
            assert_true(panda_solver_alpha_objective(&T, 2, rho)
                        > panda_solver_alpha_objective(S, 2, rho));
        }
        /* Closed form of the direct expression. */
        assert_true(fabs(panda_solver_alpha_objective(S, 2, rho)
                         - rho * (s + (1 - s) * (1 - s) / (1 - rho * s)))
                    < 1e-12);
    }
}

/* All K ratios theta_l / (1 - rho S_l-1) are equal, S is ascending in
 * (0, 1), and random perturbations never do better. */
static void
test_alpha_closed_form_equal_ratios(void **state)
{
    struct panda_rng rng;
    double S[PANDA_MAX_LEVELS - 1], rho = 0.8;
    int K, l, trial;

    (void) state;
    panda_rng_seed(&rng, 3);
    for (K = 2; K <= PANDA_MAX_LEVELS; K++) {
        double ratio0 = 0, best;

        panda_solver_alpha_closed_form(K, rho, S);
        for (l = 1; l <= K; l++) {
            double prev = l > 1 ? S[l - 2] : 0, cur = l < K ? S[l - 1] : 1;
            double ratio = (cur - prev) / (1 - rho * prev);

            assert_true(cur > prev);
            if (l == 1) {
                ratio0 = ratio;
            } else {
                assert_true(fabs(ratio - ratio0) < 1e-12);
            }
        }
        best = panda_solver_alpha_objective(S, K, rho);
        for (trial = 0; trial < 200; trial++) {
            double P[PANDA_MAX_LEVELS - 1];
            int ok = 1;

            for (l = 0; l < K - 1; l++) {
                P[l] = S[l] + (panda_rng_uniform(&rng) - 0.5) * 0.02;
                if (P[l] <= (l ? P[l - 1] : 0) || P[l] >= 1) {
                    ok = 0;
                }
            }
            if (ok) {
                assert_true(panda_solver_alpha_objective(P, K, rho) >= best);
            }
        }
    }
}

/* A uniform flow-size CDF on [0, 1 MB]: alpha_1 = S_1 x 1 MB, by hand. */
static void
test_alpha_uniform_cdf(void **state)
{
    struct panda_solver_alpha r;
    struct panda_cdf cdf;
    double s = (1 - sqrt(0.5)) / 0.5;

    (void) state;
    load_cdf(&cdf, "0 0\n1000000 1\n");
    assert_null(panda_solver_find_alpha(&cdf, 1.0, 0.5, 2, &r));
    assert_true(llabs((long long) r.alpha_cf[0]
                      - llround(s * 1e6)) <= 1);
    assert_true(llabs((long long) r.alpha[0] - llround(s * 1e6)) <= 1);
    assert_true(r.obj_num <= r.obj_cf);
    assert_int_equal(r.n_adjusted, 0);
    panda_solver_alpha_destroy(&r);

    /* Flow sizes x scale beyond what uint64_t byte thresholds can hold are
     * refused (converting them was undefined behaviour). */
    {
        char *err = panda_solver_find_alpha(&cdf, 1e13, 0.5, 2, &r);

        assert_non_null(err);
        assert_non_null(strstr(err, "flow-size CDF: point 2: largest flow "
                               "size 1e+06 x 1e+13 bytes per unit"));
        assert_non_null(strstr(err, "above the largest supported, 2^62"));
        free(err);
    }

    /* The same CDF in packets of 1000 bytes gives the same bytes. */
    panda_cdf_destroy(&cdf);
    load_cdf(&cdf, "0 0\n1000 1\n");
    assert_null(panda_solver_find_alpha(&cdf, 1000.0, 0.5, 2, &r));
    assert_true(llabs((long long) r.alpha[0] - llround(s * 1e6)) <= 1);
    panda_solver_alpha_destroy(&r);
    panda_cdf_destroy(&cdf);
}

static const char *const test_cdfs[] = {
    /* Web search (DCTCP), bytes. */
    "6000 0.15\n13000 0.2\n19000 0.3\n33000 0.4\n53000 0.53\n133000 0.6\n"
    "667000 0.7\n1333000 0.8\n3333000 0.9\n6667000 0.97\n20000000 1\n",
    /* Data mining (VL2-like), bytes. */
    "100 0.5\n1000 0.6\n10000 0.7\n100000 0.8\n1000000 0.9\n"
    "10000000 0.97\n100000000 1\n",
    /* Heavy atoms: half the flows are exactly 1000 bytes. */
    "1000 0.5\n1000 0.5\n2000 0.6\n100000 1\n",
    /* Tiny range: quantiles must collide. */
    "1 0.3\n3 0.6\n4 1\n",
};

/* Numeric optimum never worse than the closed form; thresholds strictly
 * ascending; the chosen thresholds are the better ones. */
static void
test_alpha_numeric_never_worse(void **state)
{
    double rhos[] = { 0.1, 0.5, 0.8, 0.95 };
    size_t c, i;
    int K;

    (void) state;
    for (c = 0; c < sizeof test_cdfs / sizeof test_cdfs[0]; c++) {
        struct panda_cdf cdf;

        load_cdf(&cdf, test_cdfs[c]);
        for (i = 0; i < sizeof rhos / sizeof rhos[0]; i++) {
            for (K = 1; K <= PANDA_MAX_LEVELS; K++) {
                struct panda_solver_alpha r;

                assert_null(panda_solver_find_alpha(&cdf, 1.0, rhos[i], K, &r));
                assert_true(r.obj_num <= r.obj_cf);
                assert_true(r.obj_num <= r.obj_num_uniform);
                assert_ascending(r.alpha_cf, K - 1);
                assert_ascending(r.alpha_num, K - 1);
                assert_ascending(r.alpha, K - 1);
                assert_memory_equal(r.alpha, r.numeric_chosen
                                    ? r.alpha_num : r.alpha_cf,
                                    (K - 1) * sizeof r.alpha[0]);
                /* Nothing beats the continuous optimum. */
                assert_true(r.obj_num >= r.obj_ideal - 1e-12);
                panda_solver_alpha_destroy(&r);
            }
        }
        panda_cdf_destroy(&cdf);
    }
}

/* alpha_1 >= a bound (the FLT counter's excursions): a bound
 * below the free optimum changes nothing; one above it puts alpha_1 on
 * the bound and re-optimises the rest, never better than the free
 * optimum and as good as any other choice of the rest. */
static void
test_alpha_bounded(void **state)
{
    struct panda_solver_alpha free_, r;
    struct panda_cdf cdf;
    uint64_t a2;
    double best = HUGE_VAL;
    int K;

    (void) state;
    load_cdf(&cdf, "0 0\n1000000 1\n");
    assert_null(panda_solver_find_alpha(&cdf, 1.0, 0.5, 2, &free_));
    assert_null(panda_solver_find_alpha_bounded(&cdf, 1.0, 0.5, 2, 100, &r));
    assert_false(r.bound_active);
    assert_memory_equal(r.alpha, free_.alpha, sizeof r.alpha);
    assert_int_equal(r.alpha1_min, 100);
    panda_solver_alpha_destroy(&r);
    assert_null(panda_solver_find_alpha_bounded(&cdf, 1.0, 0.5, 2, 800000,
                                                &r));
    assert_true(r.bound_active);
    assert_int_equal(r.alpha[0], 800000);
    assert_int_equal(r.alpha_free[0], free_.alpha[0]);
    assert_true(r.obj_num > r.obj_free);
    assert_contains(r.notes, "alpha_1 raised to its lower bound 800000");
    panda_solver_alpha_destroy(&r);
    panda_solver_alpha_destroy(&free_);

    /* K = 3 (free alpha_1 = 519 KB), the bound binding: alpha_2 by brute
     * force over a grid. */
    assert_null(panda_solver_find_alpha_bounded(&cdf, 1.0, 0.8, 3, 700000,
                                                &r));
    assert_true(r.bound_active);
    assert_int_equal(r.alpha[0], 700000);
    for (a2 = 700001; a2 < 1000000; a2 += 997) {
        double S[2] = { 0.7, a2 / 1e6 };
        double v = panda_solver_alpha_objective(S, 3, 0.8);

        best = v < best ? v : best;
    }
    assert_true(fmin(r.obj_cf, r.obj_num) <= best + 1e-9);
    panda_solver_alpha_destroy(&r);
    panda_cdf_destroy(&cdf);

    /* Data-mining-like CDF (alpha_1 free is small), every K. */
    load_cdf(&cdf, test_cdfs[1]);
    for (K = 2; K <= PANDA_MAX_LEVELS; K++) {
        assert_null(panda_solver_find_alpha_bounded(&cdf, 1.0, 0.8, K, 15000,
                                                    &r));
        assert_true(r.bound_active);
        assert_true(r.alpha[0] >= 15000);
        assert_true(r.alpha_free[0] < 15000);
        assert_ascending(r.alpha, K - 1);
        assert_true(fmin(r.obj_cf, r.obj_num) >= r.obj_free);
        panda_solver_alpha_destroy(&r);
    }
    panda_cdf_destroy(&cdf);
}

/* Algorithm 2 replayed over packets in order: each flow its own counter
 * from 0, zero-payload packets skipped, the quantile and the share at
 * level 0 counted per packet, by hand. */
static void
test_excursion(void **state)
{
    static const struct panda_model_pkt pkts[] = {
        { 7, 1448 }, { 9, 100 }, { 7, 1448 }, { 7, 0 }, { 7, 100 },
        { 7, 100 }, { 7, 1448 },
    };
    struct panda_model_excursion e;
    struct panda_policy p;

    (void) state;
    panda_policy_init(&p, PANDA_KIND_PANDA);
    p.threshold = 1000;
    /* Counters after each packet with payload: 1448, 0 (flow 9 at the
     * floor), 2896, 1996, 1096, 2544. */
    panda_model_excursion(&p, pkts, 7, 0.5, &e);
    assert_int_equal(e.packets, 6);
    assert_int_equal(e.flows, 2);
    assert_int_equal(e.quantile, 1448);
    assert_int_equal(e.max, 2896);
    panda_model_excursion(&p, pkts, 7, 1.0, &e);
    assert_int_equal(e.quantile, 2896);
    panda_model_excursion(&p, pkts, 7, 0.01, &e);
    assert_int_equal(e.quantile, 0);
    assert_true(fabs(panda_model_level0_share(&p, pkts, 7, 1448) - 0.5)
                < 1e-12);
    assert_true(fabs(panda_model_level0_share(&p, pkts, 7, 2896) - 1)
                < 1e-12);
    assert_true(fabs(panda_model_level0_share(&p, pkts, 7, 1) - 1 / 6.0)
                < 1e-12);
    panda_model_excursion(&p, pkts, 0, 0.99, &e);
    assert_int_equal(e.packets, 0);
    assert_int_equal(e.quantile, 0);
}

/* With an atom the closed form's quantiles collide: they are moved apart
 * (and said so), and the numerical search does strictly better. */
static void
test_alpha_atoms(void **state)
{
    struct panda_solver_alpha r;
    struct panda_cdf cdf;

    (void) state;
    load_cdf(&cdf, test_cdfs[2]);
    assert_null(panda_solver_find_alpha(&cdf, 1.0, 0.8, 8, &r));
    assert_true(r.n_adjusted > 0);
    assert_contains(r.notes, "collide");
    assert_ascending(r.alpha_cf, 7);
    assert_true(r.obj_num < r.obj_cf - 1e-6);
    assert_true(r.numeric_chosen);
    panda_solver_alpha_destroy(&r);
    panda_cdf_destroy(&cdf);
}

static void
test_alpha_errors(void **state)
{
    struct panda_solver_alpha r;
    struct panda_cdf cdf, bad;
    double rhos[] = { 0, 1, -0.1, 1.5, NAN };
    double values[] = { 10, 5 }, probs[] = { 0.5, 1 };
    size_t i;
    char *err;

    (void) state;
    load_cdf(&cdf, test_cdfs[0]);
    for (i = 0; i < sizeof rhos / sizeof rhos[0]; i++) {
        err = panda_solver_find_alpha(&cdf, 1.0, rhos[i], 8, &r);
        assert_contains(err, "rho");
        free(err);
    }
    err = panda_solver_find_alpha(&cdf, 1.0, 0.5, 0, &r);
    assert_contains(err, "K = 0");
    free(err);
    err = panda_solver_find_alpha(&cdf, 1.0, 0.5, 9, &r);
    assert_contains(err, "K = 9");
    free(err);

    memset(&bad, 0, sizeof bad);
    err = panda_solver_find_alpha(&bad, 1.0, 0.5, 8, &r);
    assert_contains(err, "empty");
    free(err);

    bad.n = 2;
    bad.value = values;
    bad.prob = probs;
    err = panda_solver_find_alpha(&bad, 1.0, 0.5, 8, &r);
    assert_contains(err, "not sorted");
    free(err);

    /* The CDF reader rejects the same inputs with file and line. */
    err = panda_cdf_parse(&bad, "10 0.5\n5 1\n", "x.cdf");
    assert_contains(err, "not sorted");
    free(err);
    err = panda_cdf_parse(&bad, "# nothing\n", "x.cdf");
    assert_contains(err, "no data points");
    free(err);
    panda_cdf_destroy(&cdf);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_push_matches_add),
        cmocka_unit_test(test_T_thesis_example),
        cmocka_unit_test(test_T_hand_optimum_ties),
        cmocka_unit_test(test_T_flow_weights),
        cmocka_unit_test(test_T_matches_brute_force),
        cmocka_unit_test(test_T_errors),
        cmocka_unit_test(test_data_ratio_thesis_example),
        cmocka_unit_test(test_subthresholds),
        cmocka_unit_test(test_alpha_closed_form_k2),
        cmocka_unit_test(test_alpha_closed_form_equal_ratios),
        cmocka_unit_test(test_alpha_uniform_cdf),
        cmocka_unit_test(test_alpha_numeric_never_worse),
        cmocka_unit_test(test_alpha_atoms),
        cmocka_unit_test(test_alpha_bounded),
        cmocka_unit_test(test_excursion),
        cmocka_unit_test(test_alpha_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

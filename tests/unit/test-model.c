/* Unit tests: the thesis's model helpers (eqs. 3-6, 3-13, 3-20). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include <panda/model.h>

#include "policy-util.h"

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

/* C(b): each byte weighs its packet's weight; past the sequence the last
 * size repeats. */
static void
test_counter_at(void **state)
{
    struct panda_policy p;
    const uint32_t seq[] = { 5000, 20000, 50000 };

    (void) state;
    /* Payload > 10000 weighs 2, > 40000 weighs 4. */
    parse_ok("id=1,threshold=1000,weights=10000:2/40000:4,"
             "thresholds=100/200", &p);
    assert_true(panda_model_counter_at(&p, seq, 3, 0) == 0);
    assert_true(panda_model_counter_at(&p, seq, 3, 5000) == 5000);
    assert_true(panda_model_counter_at(&p, seq, 3, 15000) == 25000);
    assert_true(panda_model_counter_at(&p, seq, 3, 25000) == 45000);
    assert_true(panda_model_counter_at(&p, seq, 3, 75000) == 245000);
    assert_true(panda_model_counter_at(&p, seq, 3, 175000) == 645000);
    /* All ones: the counter is the bytes. */
    parse_ok("id=1,threshold=1000,thresholds=100/200", &p);
    assert_true(panda_model_counter_at(&p, seq, 3, 175000) == 175000);
}

static void
test_slow_start_sizes(void **state)
{
    uint32_t s[8];

    (void) state;
    /* 10 x 1460 doubling to the 10g collection's largest packet. */
    assert_int_equal(panda_model_slow_start_sizes(14600, 65160, s, 8), 4);
    assert_int_equal(s[0], 14600);
    assert_int_equal(s[1], 29200);
    assert_int_equal(s[2], 58400);
    assert_int_equal(s[3], 65160);
    /* No TSO (packets of one MSS): the window never fits one packet. */
    assert_int_equal(panda_model_slow_start_sizes(14600, 1460, s, 8), 1);
    assert_int_equal(s[0], 1460);
    /* Room for fewer: the last is still tso_max. */
    assert_int_equal(panda_model_slow_start_sizes(14600, 65160, s, 2), 2);
    assert_int_equal(s[0], 14600);
    assert_int_equal(s[1], 65160);
}

/* The level a flow of 'bytes' bytes ends at when it sends the sequence
 * through the datapath's own counter update. */
static int
level_after(const struct panda_policy *p, const uint32_t *seq, size_t n,
            uint64_t bytes)
{
    int64_t c = 0;
    size_t i;

    for (i = 0; bytes; i++) {
        uint32_t s = seq[i < n ? i : n - 1];

        s = bytes < s ? (uint32_t) bytes : s;
        c = panda_policy_update(p, c, s);
        bytes -= s;
    }
    return panda_policy_level(p, c);
}

static void
test_counter_thresholds(void **state)
{
    /* The web-search CDF's PIAS thresholds at rho 0.8, K = 8 (10g run). */
    const uint64_t bytes[7] = { 21415, 51341, 138131, 903520, 1876707,
                                4170134, 7945926 };
    const uint64_t medium[] = { 100000, 300000, 1000000, 2500000, 5000000,
                                9000000 };
    struct panda_policy w1, w, pias;
    uint32_t seq[16];
    uint64_t out[7];
    double ratio[7];
    size_t n_seq, i;
    int j;

    (void) state;
    n_seq = panda_model_slow_start_sizes(14600, 65160, seq, 16);

    /* All-ones weights: the identity, whatever raw_from. */
    parse_ok("id=1,threshold=1158,thresholds=1/2/3/4/5/6/7", &w1);
    assert_int_equal(panda_model_counter_thresholds(&w1, seq, n_seq, bytes,
                                                    7, UINT64_MAX, out,
                                                    ratio), 0);
    for (j = 0; j < 7; j++) {
        assert_true(out[j] == bytes[j]);
        assert_true(ratio[j] == 1);
    }

    /* The 10g profile's weight: 7.2 above 14767 bytes.  C(b) = 14600 +
     * 7.2 (b - 14600) once past the first packet. */
    parse_ok("id=1,threshold=1158,weights=14767:7.2,"
             "thresholds=1/2/3/4/5/6/7", &w);
    panda_model_counter_thresholds(&w, seq, n_seq, bytes, 7, 10000000,
                                   out, ratio);
    for (j = 0; j < 7; j++) {
        double c = 14600 + 7.2 * (double) (bytes[j] - 14600);

        assert_true(fabs((double) out[j] - c) <= 1);
        assert_true(ratio[j] > 1 && ratio[j] < 7.2);
        if (j) {
            assert_true(out[j] > out[j - 1]);
            assert_true(ratio[j] >= ratio[j - 1]);
        }
    }

    /* A flow of that sequence ends at the level PIAS gives its size with
     * the mapped thresholds, and sinks below it with byte thresholds
     * (the measured 10g problem) unless PIAS has it at the bottom already. */
    parse_ok("id=2,kind=pias,thresholds=1/2/3/4/5/6/7", &pias);
    memcpy(pias.alpha, bytes, sizeof bytes);
    memcpy(w.alpha, out, sizeof out);
    for (i = 0; i < sizeof medium / sizeof medium[0]; i++) {
        struct panda_policy wb = w;
        int lp = level_after(&pias, seq, n_seq, medium[i]);

        assert_int_equal(level_after(&w, seq, n_seq, medium[i]), lp);
        memcpy(wb.alpha, bytes, sizeof bytes);
        assert_true(level_after(&wb, seq, n_seq, medium[i])
                    > (lp < 7 ? lp : 6));
    }

    /* Thresholds from raw_from on stay bytes, raised to stay ascending
     * (the large class sinks sooner than with all ones). */
    assert_int_equal(panda_model_counter_thresholds(&w, seq, n_seq, bytes,
                                                    7, 1000000, out,
                                                    ratio), 2);
    assert_true(out[3] > bytes[3] * 7);
    assert_true(out[4] == out[3] + 1 && out[5] == out[3] + 2);
    assert_true(out[6] == bytes[6]);
    /* Every threshold in bytes: unchanged. */
    panda_model_counter_thresholds(&w, seq, n_seq, bytes, 7, 0, out, NULL);
    assert_memory_equal(out, bytes, sizeof bytes);
}

/* C measured: per flow, the weighted bytes at each point; the median over
 * the flows that got there. */
static void
test_counter_replay(void **state)
{
    struct panda_policy p;
    /* Flow 0: 10000 x 1 then 20000-byte packets (weight 2); flow 1: all
     * 1000-byte packets; flow 2: 50000 at once (weight 2), interleaved. */
    struct panda_model_pkt pk[64];
    const uint64_t pts[3] = { 5000, 30000, 60000 };
    double med[3];
    size_t flows[3], n = 0, i;

    (void) state;
    parse_ok("id=1,threshold=100,weights=10000:2,thresholds=1/2", &p);
    pk[n++] = (struct panda_model_pkt) { 0, 10000 };
    pk[n++] = (struct panda_model_pkt) { 2, 50000 };
    pk[n++] = (struct panda_model_pkt) { 1, 0 };     /* an ACK: ignored */
    for (i = 0; i < 40; i++) {
        pk[n++] = (struct panda_model_pkt) { 1, 1000 };
    }
    pk[n++] = (struct panda_model_pkt) { 0, 20000 };
    pk[n++] = (struct panda_model_pkt) { 0, 20000 };
    panda_model_counter_replay(&p, pk, n, pts, 3, med, flows);
    /* 5000: flow 0 5000, flow 1 5000, flow 2 10000 -> median 5000. */
    assert_int_equal(flows[0], 3);
    assert_true(med[0] == 5000);
    /* 30000: flow 0 10000 + 2 x 20000 = 50000, flow 1 30000, flow 2 60000
     * -> 50000. */
    assert_int_equal(flows[1], 3);
    assert_true(med[1] == 50000);
    /* 60000: only flow 0 reached 50000 bytes... none reached 60000. */
    assert_int_equal(flows[2], 0);
    assert_true(med[2] == 0);

    /* All ones: the bytes themselves. */
    parse_ok("id=1,threshold=100,thresholds=1/2", &p);
    panda_model_counter_replay(&p, pk, n, pts, 2, med, flows);
    assert_true(med[0] == 5000 && med[1] == 30000);
}

static void
test_map_thresholds(void **state)
{
    const uint64_t bytes[4] = { 1000, 2000, 3000, 4000 };
    const double c[4] = { 1500.2, 1800, 9000, 9000 };
    uint64_t out[4];

    (void) state;
    /* Rounded up; never below the bytes; ascending. */
    assert_int_equal(panda_model_map_thresholds(bytes, c, 4, UINT64_MAX,
                                                out), 1);
    assert_true(out[0] == 1501 && out[1] == 2000 && out[2] == 9000
                && out[3] == 9001);
    /* From raw_from on: bytes, raised above the mapped one. */
    assert_int_equal(panda_model_map_thresholds(bytes, c, 4, 3000, out), 0);
    assert_true(out[2] == 3000 && out[3] == 4000);
    assert_int_equal(panda_model_map_thresholds(bytes, (double[]) { 1000,
                                                5000, 0, 0 }, 4, 3000,
                                                out), 2);
    assert_true(out[1] == 5000 && out[2] == 5001 && out[3] == 5002);
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
        cmocka_unit_test(test_counter_at),
        cmocka_unit_test(test_slow_start_sizes),
        cmocka_unit_test(test_counter_thresholds),
        cmocka_unit_test(test_counter_replay),
        cmocka_unit_test(test_map_thresholds),
    };

    return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}

/*
 * panda-model-bench: how fast the offline model handles large samples.
 *
 * Generates N synthetic packet-size samples (FLT and FHT flows, seeded),
 * then times each stage of panda-model on them: ingest into per-flow
 * histograms, the T search of eq. 3-9, the d_i of eq. 3-23, the data ratios
 * and the Appendix B thresholds; then writes a pcap of P packets and times
 * reading it back through panda-model's capture reader.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <panda/cdf.h>
#include "model-input.h"
#include <panda/model.h>
#include <panda/solver.h>
#include <panda/base.h>

#include <cli/clock.h>
#include <cli/log.h>
#include <cli/parse.h>

/* A web-search-like flow-size CDF in bytes. */
static const char web_cdf[] =
    "6000 0.15\n13000 0.2\n19000 0.3\n33000 0.4\n53000 0.53\n"
    "133000 0.6\n667000 0.7\n1333000 0.8\n3333000 0.9\n6667000 0.97\n"
    "20000000 1\n";

static uint32_t
draw_size(struct panda_rng *rng, bool flt)
{
    double u = panda_rng_uniform(rng);

    if (flt) {
        if (u < 0.95) {
            return 60 + (uint32_t) (panda_rng_uniform(rng) * 240);
        }
        return 1500;
    }
    if (u < 0.02) {
        return 52 + (uint32_t) (panda_rng_uniform(rng) * 400);
    } else if (u < 0.90) {
        return 1500;
    }
    return 40 + 1460 * (2 + (uint32_t) (panda_rng_uniform(rng) * 43));
}

static void
usage(void)
{
    printf("Usage: panda-model-bench [--samples N] [--flows N]"
           " [--pcap-packets N] [--cdf-points N] [--dir DIR]\n"
           "Defaults: 10000000 samples over 4000 flows, a 10000000-packet"
           " pcap in $TMPDIR,\nthe thresholds on the web-search CDF refined"
           " to 50000 points (0: skip).\n");
}

/* 'cdf' with about 'n' points: extra points on its segments, so the same
 * (piecewise-linear) distribution. */
static void
refine(const struct panda_cdf *cdf, size_t n, struct panda_cdf *out)
{
    double span = cdf->value[cdf->n - 1] - cdf->value[0];
    size_t i, k, j, cap = n + 2 * cdf->n;

    out->value = panda_xmalloc(cap * sizeof *out->value);
    out->prob = panda_xmalloc(cap * sizeof *out->prob);
    out->value[0] = cdf->value[0];
    out->prob[0] = cdf->prob[0];
    out->n = 1;
    for (i = 1; i < cdf->n; i++) {
        double v0 = cdf->value[i - 1], v1 = cdf->value[i];
        double p0 = cdf->prob[i - 1], p1 = cdf->prob[i];

        k = (size_t) (n * (v1 - v0) / span);
        k = k < 1 ? 1 : k;
        for (j = 1; j <= k && out->n < cap; j++) {
            out->value[out->n] = v0 + (v1 - v0) * j / k;
            out->prob[out->n] = j == k ? p1 : p0 + (p1 - p0) * j / k;
            out->n++;
        }
    }
}

int
main(int argc, char *argv[])
{
    size_t n = 10000000, n_flows = 4000, n_pcap = 10000000, n_cdf = 50000;
    size_t i;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    struct panda_samples flt, fht;
    struct panda_solver_separation sep;
    struct panda_solver_subthresholds sub;
    struct panda_solver_alpha alpha;
    struct panda_hist ha, hb;
    struct panda_cdf cdf;
    struct panda_rng rng;
    uint32_t *size, *flow;
    double bounds[2] = { 100e3, 10e6 };
    double t0, c0, t_ingest, c_ingest, t_T, t_sub, t_et, t_alpha, et_c, et_n;
    char *err;
    int a;

    cli_log_set_program("panda-model-bench");
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--samples") && a + 1 < argc) {
            n = cli_parse_u64("--samples", argv[++a], 1, SIZE_MAX);
        } else if (!strcmp(argv[a], "--flows") && a + 1 < argc) {
            n_flows = cli_parse_u64("--flows", argv[++a], 2, SIZE_MAX);
        } else if (!strcmp(argv[a], "--pcap-packets") && a + 1 < argc) {
            n_pcap = cli_parse_u64("--pcap-packets", argv[++a], 0, SIZE_MAX);
        } else if (!strcmp(argv[a], "--cdf-points") && a + 1 < argc) {
            n_cdf = cli_parse_u64("--cdf-points", argv[++a], 0, 10000000);
        } else if (!strcmp(argv[a], "--dir") && a + 1 < argc) {
            dir = argv[++a];
        } else {
            usage();
            return !strcmp(argv[a], "--help") ? 0 : 1;
        }
    }
    /* Synthetic samples: the first half of the flows are FLT. */
    size = panda_xmalloc(n * sizeof *size);
    flow = panda_xmalloc(n * sizeof *flow);
    panda_rng_seed(&rng, 42);
    for (i = 0; i < n; i++) {
        flow[i] = (uint32_t) (panda_rng_next(&rng) % n_flows);
        size[i] = draw_size(&rng, flow[i] < n_flows / 2);
    }

    printf("panda-model-bench: %zu samples, %zu flows\n", n, n_flows);
    t0 = cli_clock_mono_s();
    c0 = cli_clock_cpu_s();
    panda_samples_init(&flt);
    panda_samples_init(&fht);
    for (i = 0; i < n_flows; i++) {
        panda_samples_new_flow(i < n_flows / 2 ? &flt : &fht);
    }
    for (i = 0; i < n; i++) {
        if (flow[i] < n_flows / 2) {
            panda_samples_push(&flt, flow[i], size[i], 40);
        } else {
            panda_samples_push(&fht, flow[i] - n_flows / 2, size[i], 40);
        }
    }
    panda_samples_prune(&flt);
    panda_samples_prune(&fht);
    panda_samples_set_weights(&flt, PANDA_SAMPLES_WEIGH_PACKETS);
    panda_samples_set_weights(&fht, PANDA_SAMPLES_WEIGH_PACKETS);
    t_ingest = cli_clock_mono_s() - t0;
    c_ingest = cli_clock_cpu_s() - c0;

    t0 = cli_clock_mono_s();
    err = panda_solver_find_T(&flt, &fht, 1460, 40, PANDA_SOLVER_TIE_HIGH, &sep);
    t_T = cli_clock_mono_s() - t0;
    if (err) {
        cli_log_fatal("%s", err);
    }

    /* Give FHT flows a spread of sizes for the classes: scale each flow's
     * byte count (the solver only looks at 'bytes' for the class). */
    for (i = 0; i < fht.n; i++) {
        fht.flows[i].bytes *= (double) (i % 100) * (i % 100) / 10.0;
    }
    t0 = cli_clock_mono_s();
    err = panda_solver_find_subthresholds(&fht, bounds, 2, sep.x, 1460, 40,
                                    PANDA_SOLVER_TIE_HIGH, &sub);
    t_sub = cli_clock_mono_s() - t0;
    if (err) {
        cli_log_fatal("%s", err);
    }

    t0 = cli_clock_mono_s();
    panda_hist_init(&ha);
    panda_hist_init(&hb);
    panda_samples_aggregate(&flt, &ha);
    panda_samples_aggregate(&fht, &hb);
    et_c = panda_model_data_ratio_comp(&ha, &hb, sep.x);
    et_n = panda_model_data_ratio_noncomp(&ha, &hb, sep.x);
    t_et = cli_clock_mono_s() - t0;

    err = panda_cdf_parse(&cdf, web_cdf, "web-search (builtin)");
    if (err) {
        cli_log_fatal("%s", err);
    }
    t0 = cli_clock_mono_s();
    err = panda_solver_find_alpha(&cdf, 1.0, 0.8, 8, &alpha);
    t_alpha = cli_clock_mono_s() - t0;
    if (err) {
        cli_log_fatal("%s", err);
    }

    printf("  %-34s %9.3f s  %7.1f M samples/s (CPU %.3f s: %.1f M/s)\n",
           "ingest (per-flow histograms)", t_ingest, n / t_ingest / 1e6,
           c_ingest, n / c_ingest / 1e6);
    printf("  %-34s %9.3f s  T = %" PRIu32 ", t(T) = %.4f\n",
           "T search (eq. 3-9)", t_T, sep.x, sep.t);
    printf("  %-34s %9.3f s  %zu sub-threshold(s)\n",
           "sub-thresholds (eq. 3-23)", t_sub, sub.n);
    printf("  %-34s %9.3f s  comp %.3g, noncomp %.3g\n",
           "data ratios E_T", t_et, et_c, et_n);
    printf("  %-34s %9.3f s  closed %.6f, numeric %.6f\n",
           "alpha (Appendix B, K=8, rho=0.8)", t_alpha, alpha.obj_cf,
           alpha.obj_num);
    printf("  %-34s %9.3f s  (wall clock)\n", "total model time",
           t_ingest + t_T + t_sub + t_et + t_alpha);

    if (n_cdf) {
        /* The same distribution with many points: the threshold search's
         * cost in CDF points, against the builtin's 11 in the same run;
         * the thresholds must be the same (to the rounding of the
         * refined points). */
        struct panda_solver_alpha fine_alpha;
        struct panda_cdf fine;
        double t_fine;
        int j;

        refine(&cdf, n_cdf, &fine);
        t0 = cli_clock_mono_s();
        err = panda_solver_find_alpha(&fine, 1.0, 0.8, 8, &fine_alpha);
        t_fine = cli_clock_mono_s() - t0;
        if (err) {
            cli_log_fatal("%s", err);
        }
        for (j = 0; j < 7; j++) {
            int64_t d = (int64_t) fine_alpha.alpha[j]
                        - (int64_t) alpha.alpha[j];

            if (d > 2 || d < -2) {
                cli_log_fatal("alpha_%d: %" PRIu64 " on %zu points, %" PRIu64
                              " on %zu", j + 1, fine_alpha.alpha[j], fine.n,
                              alpha.alpha[j], cdf.n);
            }
        }
        printf("  %-34s %9.3f s  %zu points: %.0fx the %zu-point CDF's"
               " time, same thresholds\n", "alpha on a refined CDF", t_fine,
               fine.n, t_fine / t_alpha, cdf.n);
        panda_solver_alpha_destroy(&fine_alpha);
        panda_cdf_destroy(&fine);
    }

    if (n_pcap && model_have_pcap()) {
        char *file = panda_asprintf("%s/panda-model-bench-%ld.pcap", dir,
                                    (long) getpid());
        uint32_t *pf = panda_xmalloc(n_pcap * sizeof *pf);
        uint32_t *pp = panda_xmalloc(n_pcap * sizeof *pp);
        struct model_input_opts io = { .header_len = 40 };
        struct model_input_stats st;
        struct panda_samples ps;
        double t_write, t_read, c_read;

        for (i = 0; i < n_pcap; i++) {
            pf[i] = (uint32_t) (panda_rng_next(&rng) % n_flows);
            pp[i] = draw_size(&rng, pf[i] < n_flows / 2) - 40;
        }
        t0 = cli_clock_mono_s();
        err = model_write_pcap(file, pf, pp, n_pcap);
        t_write = cli_clock_mono_s() - t0;
        if (err) {
            fprintf(stderr, "panda-model-bench: %s\n", err);
            unlink(file);
            return 1;
        }
        panda_samples_init(&ps);
        t0 = cli_clock_mono_s();
        c0 = cli_clock_cpu_s();
        err = model_read_samples(file, &io, &ps, &st);
        t_read = cli_clock_mono_s() - t0;
        c_read = cli_clock_cpu_s() - c0;
        unlink(file);
        if (err) {
            fprintf(stderr, "panda-model-bench: %s\n", err);
            return 1;
        }
        printf("  %-34s %9.3f s  (%zu packets, not part of the model)\n",
               "pcap write", t_write, n_pcap);
        printf("  %-34s %9.3f s  %7.2f M packets/s (CPU %.3f s: %.2f M/s),"
               " %" PRIu64 " flows\n", "pcap read (libpcap + flow table)",
               t_read, n_pcap / t_read / 1e6, c_read, n_pcap / c_read / 1e6,
               st.flows);
        panda_samples_destroy(&ps);
        free(pf);
        free(pp);
        free(file);
    } else if (n_pcap) {
        printf("  pcap: skipped (built without libpcap)\n");
    }

    panda_solver_alpha_destroy(&alpha);
    panda_solver_subthresholds_destroy(&sub);
    panda_cdf_destroy(&cdf);
    panda_hist_destroy(&ha);
    panda_hist_destroy(&hb);
    panda_samples_destroy(&flt);
    panda_samples_destroy(&fht);
    free(size);
    free(flow);
    return 0;
}

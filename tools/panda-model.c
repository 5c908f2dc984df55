/*
 * panda-model: derives Panda's parameters (T, size weights, priority
 * thresholds) from measured traffic, following the offline model of the
 * thesis (§3.2, Appendix B), and the PIAS baseline's thresholds.
 *
 * See tools/README-panda-model.md.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/cdf.h>
#include "model-input.h"
#include "model-json.h"
#include <panda/model.h>
#include <panda/policy.h>
#include <panda/solver.h>
#include <panda/base.h>

#define MAX_FILES 64

struct options {
    const char *flt[MAX_FILES], *fht[MAX_FILES];
    size_t n_flt, n_fht;
    const char *flt_filter, *fht_filter;
    const char *cdf_file;
    const char *cdf_unit;       /* "bytes" or "packets". */
    double rho;                 /* NAN: not given. */
    int K;
    uint32_t mss, header_len;
    double bounds[PANDA_MAX_WEIGHTS];
    size_t n_bounds;
    bool subthresholds;
    double weight_values[PANDA_MAX_WEIGHTS];
    size_t n_weight_values;
    enum panda_samples_weighting weighting;
    bool keep_acks;
    enum panda_solver_tie tie;
    uint32_t id;
    uint8_t dscp[PANDA_MAX_LEVELS], queue[PANDA_MAX_LEVELS];
    int n_dscp, n_queues;       /* -1: defaults. */
    enum panda_kind kind;
    const char *output;
    bool json_stdout, action_only, quiet;
};

struct input_summary {
    struct panda_samples samples;
    double packets, zero_payload;
    uint64_t records, non_tcp, fragments, truncated;
    bool labelled, any_pcap;
    uint32_t s_min, s_max;
    double avg;
};

struct result {
    struct panda_policy policy;
    char action[1024];

    /* Panda only. */
    bool have_T;
    struct panda_solver_separation sep;
    uint32_t T_model;
    double et_comp, et_noncomp, et_comp_pkt, et_noncomp_pkt;
    struct {
        uint32_t T_model;
        double comp, noncomp;
    } et_plateau[3];            /* Payload-unit E_T at the plateau's low,
                                 * middle and high end. */
    bool have_sub;
    struct panda_solver_subthresholds sub;
    double eta[PANDA_SOLVER_MAX_CLASSES];
    size_t n_eta;

    /* Alpha. */
    bool have_alpha;
    struct panda_solver_alpha alpha;
    struct panda_cdf cdf;
    double cdf_scale;
    uint64_t alpha_bytes[PANDA_MAX_LEVELS - 1];

    char *notes;
};

static void PANDA_PRINTF(2, 3)
note(struct result *r, const char *fmt, ...)
{
    va_list args;
    char *msg, *joined;

    va_start(args, fmt);
    msg = panda_vasprintf(fmt, args);
    va_end(args);
    if (r->notes) {
        joined = panda_asprintf("%s\n%s", r->notes, msg);
        free(r->notes);
        free(msg);
        r->notes = joined;
    } else {
        r->notes = msg;
    }
}

static void PANDA_PRINTF(1, 2)
fatal(const char *fmt, ...)
{
    va_list args;

    fputs("panda-model: ", stderr);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    exit(1);
}

static void
usage(void)
{
    printf("\
Usage: panda-model [OPTIONS]\n\
Derives Panda's packet threshold T, size weights and priority thresholds\n\
from measured traffic (thesis §3.2, Appendix B), or PIAS's thresholds.\n\
\n\
Inputs:\n\
  --flt FILE          latency-sensitive (FLT) samples: a pcap/pcapng capture\n\
                      or a \"size count [flow]\" histogram (repeatable)\n\
  --fht FILE          throughput (FHT) samples, same formats (repeatable)\n\
  --flt-filter BPF    pcap filter applied to --flt captures\n\
  --fht-filter BPF    pcap filter applied to --fht captures\n\
  --cdf FILE          flow-size CDF (\"<size> <cumulative probability>\")\n\
  --cdf-unit U        bytes (default) or packets (x MSS bytes)\n\
  --load RHO          link load, 0 < RHO < 1 (needed when K > 1)\n\
  --levels K          priority levels, 1..%d (default 8)\n\
  --mss N             MSS in bytes (default %d)\n\
  --header-len N      header bytes in a packet size (default %d)\n\
  --class-bounds LIST FHT flow-size class bounds in bytes, comma separated\n\
                      (default 100000,10000000)\n\
  --no-subthresholds  do not compute the d_i of eq. 3-23\n\
  --weight-values LIST  weights w^1,w^2,... for the intervals above d_1,\n\
                      d_2,... (default: none, all packets weigh 1)\n\
  --flow-weight W     per-flow weight in eqs. 3-8/3-9: packets (default),\n\
                      equal or bytes\n\
  --keep-acks         keep zero-payload packets (dropped by default: they do\n\
                      not move the datapath counter)\n\
  --tie high|low|mid  which T of the best plateau of t(T) (default high)\n\
Policy:\n\
  --id N              policy id (default 1)\n\
  --dscp LIST         per-level DSCP values, '/' or ',' separated\n\
  --queues LIST       per-level queue ids, '/' or ',' separated\n\
  --kind panda|pias   policy kind (default panda)\n\
  --pias              same as --kind pias: the PIAS baseline (T = 0)\n\
Output:\n\
  -o, --output FILE   write the policy JSON to FILE\n\
  --json              print the policy JSON on stdout (no summary)\n\
  --action            print only the panda(...) action arguments\n\
  -q, --quiet         no summary\n\
  -h, --help          this help\n",
           PANDA_MAX_LEVELS, PANDA_DEFAULT_MSS, PANDA_DEFAULT_HEADER_LEN);
}

static uint64_t
parse_uint(const char *opt, const char *s, uint64_t max)
{
    char *end;
    unsigned long long v;

    errno = 0;
    if (*s == '-' || !*s) {
        fatal("%s: \"%s\" is not a nonnegative integer", opt, s);
    }
    v = strtoull(s, &end, 10);
    if (errno || *end) {
        fatal("%s: \"%s\" is not a nonnegative integer", opt, s);
    }
    if (v > max) {
        fatal("%s: %s is too large (max %" PRIu64 ")", opt, s, max);
    }
    return v;
}

static double
parse_double(const char *opt, const char *s)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) {
        fatal("%s: \"%s\" is not a number", opt, s);
    }
    return v;
}

/* Splits a list on ',' or '/'. */
static size_t
parse_list(const char *opt, const char *s, double *out, size_t max)
{
    char *copy = panda_asprintf("%s", s), *save = NULL, *tok;
    size_t n = 0;

    for (tok = strtok_r(copy, ",/", &save); tok;
         tok = strtok_r(NULL, ",/", &save)) {
        if (n == max) {
            fatal("%s: more than %zu values", opt, max);
        }
        out[n++] = parse_double(opt, tok);
    }
    free(copy);
    return n;
}

static int
parse_u8_list(const char *opt, const char *s, uint8_t *out, unsigned max)
{
    double v[PANDA_MAX_LEVELS];
    size_t n = parse_list(opt, s, v, PANDA_MAX_LEVELS), i;

    for (i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] > max || v[i] != floor(v[i])) {
            fatal("%s: %g is not an integer in 0..%u", opt, v[i], max);
        }
        out[i] = (uint8_t) v[i];
    }
    return (int) n;
}

static void
parse_options(int argc, char *argv[], struct options *o)
{
    enum {
        OPT_FLT = 256, OPT_FHT, OPT_FLT_FILTER, OPT_FHT_FILTER, OPT_CDF,
        OPT_CDF_UNIT, OPT_LOAD, OPT_LEVELS, OPT_MSS, OPT_HEADER_LEN,
        OPT_CLASS_BOUNDS, OPT_NO_SUB, OPT_WEIGHT_VALUES, OPT_FLOW_WEIGHT,
        OPT_KEEP_ACKS, OPT_TIE, OPT_ID, OPT_DSCP, OPT_QUEUES, OPT_KIND,
        OPT_PIAS, OPT_JSON, OPT_ACTION,
    };
    static const struct option long_options[] = {
        { "flt", required_argument, NULL, OPT_FLT },
        { "fht", required_argument, NULL, OPT_FHT },
        { "flt-filter", required_argument, NULL, OPT_FLT_FILTER },
        { "fht-filter", required_argument, NULL, OPT_FHT_FILTER },
        { "cdf", required_argument, NULL, OPT_CDF },
        { "cdf-unit", required_argument, NULL, OPT_CDF_UNIT },
        { "load", required_argument, NULL, OPT_LOAD },
        { "rho", required_argument, NULL, OPT_LOAD },
        { "levels", required_argument, NULL, OPT_LEVELS },
        { "mss", required_argument, NULL, OPT_MSS },
        { "header-len", required_argument, NULL, OPT_HEADER_LEN },
        { "class-bounds", required_argument, NULL, OPT_CLASS_BOUNDS },
        { "no-subthresholds", no_argument, NULL, OPT_NO_SUB },
        { "weight-values", required_argument, NULL, OPT_WEIGHT_VALUES },
        { "flow-weight", required_argument, NULL, OPT_FLOW_WEIGHT },
        { "keep-acks", no_argument, NULL, OPT_KEEP_ACKS },
        { "tie", required_argument, NULL, OPT_TIE },
        { "id", required_argument, NULL, OPT_ID },
        { "dscp", required_argument, NULL, OPT_DSCP },
        { "queues", required_argument, NULL, OPT_QUEUES },
        { "kind", required_argument, NULL, OPT_KIND },
        { "pias", no_argument, NULL, OPT_PIAS },
        { "output", required_argument, NULL, 'o' },
        { "json", no_argument, NULL, OPT_JSON },
        { "action", no_argument, NULL, OPT_ACTION },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    memset(o, 0, sizeof *o);
    o->cdf_unit = "bytes";
    o->rho = NAN;
    o->K = PANDA_MAX_LEVELS;
    o->mss = PANDA_DEFAULT_MSS;
    o->header_len = PANDA_DEFAULT_HEADER_LEN;
    o->bounds[0] = 100e3;
    o->bounds[1] = 10e6;
    o->n_bounds = 2;
    o->subthresholds = true;
    o->weighting = PANDA_SAMPLES_WEIGH_PACKETS;
    o->tie = PANDA_SOLVER_TIE_HIGH;
    o->id = 1;
    o->n_dscp = o->n_queues = -1;
    o->kind = PANDA_KIND_PANDA;

    while ((c = getopt_long(argc, argv, "o:qh", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_FLT:
            if (o->n_flt == MAX_FILES) {
                fatal("--flt: at most %d files", MAX_FILES);
            }
            o->flt[o->n_flt++] = optarg;
            break;
        case OPT_FHT:
            if (o->n_fht == MAX_FILES) {
                fatal("--fht: at most %d files", MAX_FILES);
            }
            o->fht[o->n_fht++] = optarg;
            break;
        case OPT_FLT_FILTER:
            o->flt_filter = optarg;
            break;
        case OPT_FHT_FILTER:
            o->fht_filter = optarg;
            break;
        case OPT_CDF:
            o->cdf_file = optarg;
            break;
        case OPT_CDF_UNIT:
            if (strcmp(optarg, "bytes") && strcmp(optarg, "packets")) {
                fatal("--cdf-unit: \"%s\" is not bytes or packets", optarg);
            }
            o->cdf_unit = optarg;
            break;
        case OPT_LOAD:
            o->rho = parse_double("--load", optarg);
            if (!(o->rho > 0 && o->rho < 1)) {
                fatal("--load: rho = %s is outside (0, 1): the M/M/1 model"
                      " needs a load strictly between 0 and 1", optarg);
            }
            break;
        case OPT_LEVELS: {
            char *end;
            long k;

            errno = 0;
            k = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg) {
                fatal("--levels: \"%s\" is not an integer", optarg);
            }
            if (k < 1 || k > PANDA_MAX_LEVELS) {
                fatal("--levels: K = %ld is out of range (1 to %d priority"
                      " levels)", k, PANDA_MAX_LEVELS);
            }
            o->K = (int) k;
            break;
        }
        case OPT_MSS:
            o->mss = (uint32_t) parse_uint("--mss", optarg, 65535);
            if (!o->mss) {
                fatal("--mss: must be positive");
            }
            break;
        case OPT_HEADER_LEN:
            o->header_len = (uint32_t) parse_uint("--header-len", optarg,
                                                  1024);
            break;
        case OPT_CLASS_BOUNDS: {
            size_t i;

            o->n_bounds = parse_list("--class-bounds", optarg, o->bounds,
                                     PANDA_MAX_WEIGHTS);
            for (i = 0; i < o->n_bounds; i++) {
                if (!(o->bounds[i] > 0)) {
                    fatal("--class-bounds: %g is not a positive flow size",
                          o->bounds[i]);
                }
                if (i && o->bounds[i] <= o->bounds[i - 1]) {
                    fatal("--class-bounds: not strictly ascending (%g after"
                          " %g)", o->bounds[i], o->bounds[i - 1]);
                }
            }
            break;
        }
        case OPT_NO_SUB:
            o->subthresholds = false;
            break;
        case OPT_WEIGHT_VALUES: {
            size_t i;

            o->n_weight_values = parse_list("--weight-values", optarg,
                                            o->weight_values,
                                            PANDA_MAX_WEIGHTS);
            for (i = 0; i < o->n_weight_values; i++) {
                double w = o->weight_values[i];

                if (w < 1 || w > 600) {
                    fatal("--weight-values: %g outside 1..600", w);
                }
                if (i && w < o->weight_values[i - 1]) {
                    fatal("--weight-values: weights must not decrease (1 ="
                          " w0 <= w1 <= ...)");
                }
            }
            break;
        }
        case OPT_FLOW_WEIGHT:
            if (!strcmp(optarg, "packets")) {
                o->weighting = PANDA_SAMPLES_WEIGH_PACKETS;
            } else if (!strcmp(optarg, "equal")) {
                o->weighting = PANDA_SAMPLES_WEIGH_EQUAL;
            } else if (!strcmp(optarg, "bytes")) {
                o->weighting = PANDA_SAMPLES_WEIGH_BYTES;
            } else {
                fatal("--flow-weight: \"%s\" is not packets, equal or bytes",
                      optarg);
            }
            break;
        case OPT_KEEP_ACKS:
            o->keep_acks = true;
            break;
        case OPT_TIE:
            if (!strcmp(optarg, "high")) {
                o->tie = PANDA_SOLVER_TIE_HIGH;
            } else if (!strcmp(optarg, "low")) {
                o->tie = PANDA_SOLVER_TIE_LOW;
            } else if (!strcmp(optarg, "mid")) {
                o->tie = PANDA_SOLVER_TIE_MID;
            } else {
                fatal("--tie: \"%s\" is not high, low or mid", optarg);
            }
            break;
        case OPT_ID:
            o->id = (uint32_t) parse_uint("--id", optarg, UINT32_MAX);
            break;
        case OPT_DSCP:
            o->n_dscp = parse_u8_list("--dscp", optarg, o->dscp,
                                      PANDA_MAX_DSCP);
            break;
        case OPT_QUEUES:
            o->n_queues = parse_u8_list("--queues", optarg, o->queue,
                                        UINT8_MAX);
            break;
        case OPT_KIND:
            if (!strcmp(optarg, "panda")) {
                o->kind = PANDA_KIND_PANDA;
            } else if (!strcmp(optarg, "pias")) {
                o->kind = PANDA_KIND_PIAS;
            } else {
                fatal("--kind: \"%s\" is not panda or pias", optarg);
            }
            break;
        case OPT_PIAS:
            o->kind = PANDA_KIND_PIAS;
            break;
        case 'o':
            o->output = optarg;
            break;
        case OPT_JSON:
            o->json_stdout = true;
            break;
        case OPT_ACTION:
            o->action_only = true;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            usage();
            exit(0);
        default:
            fprintf(stderr, "Try 'panda-model --help'.\n");
            exit(1);
        }
    }
    if (optind < argc) {
        fatal("unexpected argument \"%s\" (inputs are given with --flt,"
              " --fht and --cdf)", argv[optind]);
    }
    if (o->header_len >= PANDA_SOLVER_MAX_SIZE) {
        fatal("--header-len: %" PRIu32 " is too large", o->header_len);
    }
    if (o->n_dscp >= 0 && o->n_dscp != o->K) {
        fatal("--dscp: %d values for K = %d levels", o->n_dscp, o->K);
    }
    if (o->n_queues >= 0 && o->n_queues != o->K) {
        fatal("--queues: %d values for K = %d levels", o->n_queues, o->K);
    }
    if (o->K > 1 && !o->cdf_file) {
        fatal("--cdf: a flow-size CDF is needed for the %d priority"
              " thresholds of K = %d levels (or use --levels 1)", o->K - 1,
              o->K);
    }
    if (o->K > 1 && isnan(o->rho)) {
        fatal("--load: the link load rho is needed for the priority"
              " thresholds (0 < rho < 1)");
    }
    if (o->kind == PANDA_KIND_PANDA) {
        if (!o->n_flt) {
            fatal("no FLT samples: give the latency-sensitive traffic's"
                  " packet sizes with --flt FILE (or use --pias)");
        }
        if (!o->n_fht) {
            fatal("no FHT samples: give the throughput traffic's packet"
                  " sizes with --fht FILE (or use --pias)");
        }
    }
}

static void
read_inputs(const char *what, const char *const *files, size_t n,
            const char *filter, const struct options *o,
            struct input_summary *in)
{
    struct model_input_opts io = {
        .header_len = o->header_len,
        .keep_acks = o->keep_acks,
        .filter = filter,
    };
    struct panda_hist agg;
    double bytes = 0;
    size_t i;

    memset(in, 0, sizeof *in);
    panda_samples_init(&in->samples);
    in->labelled = true;
    for (i = 0; i < n; i++) {
        struct model_input_stats st;
        char *err = model_read_samples(files[i], &io, &in->samples, &st);

        if (err) {
            fatal("%s samples: %s", what, err);
        }
        in->packets += st.packets;
        in->zero_payload += st.zero_payload;
        in->records += st.records;
        in->non_tcp += st.non_tcp;
        in->fragments += st.fragments;
        in->truncated += st.truncated;
        in->labelled = in->labelled && st.labelled;
        in->any_pcap = in->any_pcap || st.pcap;
    }
    panda_samples_prune(&in->samples);
    if (!(in->packets > 0) || !in->samples.n) {
        fatal("no %s samples: %s contain%s no packet with payload%s", what,
              n == 1 ? files[0] : "the inputs", n == 1 ? "s" : "",
              o->keep_acks ? "" : " (zero-payload packets are dropped;"
              " see --keep-acks)");
    }
    panda_samples_set_weights(&in->samples, o->weighting);

    panda_hist_init(&agg);
    panda_samples_aggregate(&in->samples, &agg);
    in->s_min = agg.size[0];
    in->s_max = agg.size[agg.n - 1];
    for (i = 0; i < agg.n; i++) {
        bytes += agg.weight[i] * agg.size[i];
    }
    in->avg = bytes / panda_hist_total(&agg);
    panda_hist_destroy(&agg);
}

/* A histogram of payload sizes (packet size - header_len). */
static void
payload_hist(const struct panda_samples *s, uint32_t header_len,
             struct panda_hist *out)
{
    struct panda_hist agg;
    size_t i;

    panda_hist_init(&agg);
    panda_samples_aggregate(s, &agg);
    for (i = 0; i < agg.n; i++) {
        uint32_t p = agg.size[i] > header_len ? agg.size[i] - header_len : 0;

        panda_hist_add(out, p, agg.weight[i]);
    }
    panda_hist_destroy(&agg);
}

static void
solve_panda(const struct options *o, struct input_summary *flt,
            struct input_summary *fht, struct result *r)
{
    struct panda_policy *p = &r->policy;
    struct panda_hist fa, fb, pa, pb;
    uint32_t T_pay;
    char *err;
    size_t i;

    err = panda_solver_find_T(&flt->samples, &fht->samples, o->mss, o->header_len,
                        o->tie, &r->sep);
    if (err) {
        fatal("threshold T: %s", err);
    }
    r->have_T = true;
    r->T_model = r->sep.x;
    if (!(r->sep.t > 0)) {
        note(r, "t(T) = %.4g: packet sizes do not separate FLT from FHT;"
             " T is not meaningful for this traffic", r->sep.t);
    }
    T_pay = r->T_model > o->header_len ? r->T_model - o->header_len : 0;
    if (r->T_model <= o->header_len) {
        note(r, "T = %" PRIu32 " is not above the header length %" PRIu32
             ": the payload threshold is 0", r->T_model, o->header_len);
    }
    if (T_pay > PANDA_MAX_PKT_SIZE) {
        T_pay = PANDA_MAX_PKT_SIZE;
    }
    p->threshold = T_pay;

    /* Data ratios E_T: in the thesis's units (packet sizes, T_model) and in
     * the datapath's (payload bytes, threshold). */
    panda_hist_init(&fa);
    panda_hist_init(&fb);
    panda_samples_aggregate(&flt->samples, &fa);
    panda_samples_aggregate(&fht->samples, &fb);
    r->et_comp_pkt = panda_model_data_ratio_comp(&fa, &fb, r->T_model);
    /* panda_model_data_ratio_noncomp() counts k <= T as small (eq. 3-13's g);
     * evaluate it at T - 1 so that both ratios split where Algorithm 2
     * does (s < T small). */
    r->et_noncomp_pkt = panda_model_data_ratio_noncomp(&fa, &fb,
                                                 r->T_model ? r->T_model - 1
                                                 : 0);
    panda_hist_init(&pa);
    panda_hist_init(&pb);
    payload_hist(&flt->samples, o->header_len, &pa);
    payload_hist(&fht->samples, o->header_len, &pb);
    r->et_comp = panda_model_data_ratio_comp(&pa, &pb, T_pay);
    r->et_noncomp = panda_model_data_ratio_noncomp(&pa, &pb, T_pay ? T_pay - 1 : 0);
    /* What the choice within the plateau changes. */
    for (i = 0; i < 3; i++) {
        uint32_t lo = r->sep.plateau_lo, hi = r->sep.plateau_hi;
        uint32_t Tm = i == 0 ? lo : i == 1 ? lo + (hi - lo) / 2 : hi;
        uint32_t Tp = Tm > o->header_len ? Tm - o->header_len : 0;

        r->et_plateau[i].T_model = Tm;
        r->et_plateau[i].comp = panda_model_data_ratio_comp(&pa, &pb, Tp);
        r->et_plateau[i].noncomp = panda_model_data_ratio_noncomp(&pa, &pb,
                                                            Tp ? Tp - 1 : 0);
    }
    panda_hist_destroy(&fa);
    panda_hist_destroy(&fb);
    panda_hist_destroy(&pa);
    panda_hist_destroy(&pb);

    /* Eq. 3-23. */
    if (o->subthresholds && o->n_bounds) {
        if (!fht->labelled) {
            note(r, "sub-thresholds d_i not computed: the FHT samples are not"
                 " per-flow (use a capture or a histogram with a flow"
                 " column)");
        } else {
            err = panda_solver_find_subthresholds(&fht->samples, o->bounds,
                                            o->n_bounds, r->T_model, o->mss,
                                            o->header_len, o->tie, &r->sub);
            if (err) {
                fatal("sub-thresholds: %s", err);
            }
            r->have_sub = true;
            if (r->sub.notes) {
                note(r, "%s", r->sub.notes);
            }
        }
    }
    if (o->n_weight_values) {
        if (!r->have_sub || !r->sub.n) {
            note(r, "--weight-values ignored: no sub-threshold d_i was"
                 " found");
        } else {
            if (o->n_weight_values > r->sub.n) {
                note(r, "%zu sub-thresholds found: weight values after the"
                     " first %zu ignored", r->sub.n, r->sub.n);
            }
            for (i = 0; i < r->sub.n; i++) {
                double w = o->weight_values[i < o->n_weight_values
                                            ? i : o->n_weight_values - 1];
                uint32_t x = r->sub.sub[i].sep.x;

                /* Sizes >= x (payload > x - 1 - header_len) weigh w. */
                p->weights[i].above = x - 1 > o->header_len
                                      ? x - 1 - o->header_len : 0;
                p->weights[i].weight = (uint16_t) lround(w * 100);
            }
            p->n_weights = (uint8_t) r->sub.n;
        }
    }
}

static void
solve_alpha(const struct options *o, const struct input_summary *fht,
            struct result *r)
{
    struct panda_policy *p = &r->policy;
    char *err;
    int j, n = o->K - 1;

    err = panda_cdf_load(&r->cdf, o->cdf_file);
    if (err) {
        fatal("%s", err);
    }
    r->cdf_scale = !strcmp(o->cdf_unit, "packets") ? o->mss : 1.0;
    err = panda_solver_find_alpha(&r->cdf, r->cdf_scale, o->rho, o->K, &r->alpha);
    if (err) {
        fatal("%s: %s", o->cdf_file, err);
    }
    r->have_alpha = true;
    if (r->alpha.notes) {
        note(r, "%s", r->alpha.notes);
    }
    memcpy(r->alpha_bytes, r->alpha.alpha, sizeof r->alpha_bytes);

    /* Counter units: with weights, a flow of |f| bytes reaches counter
     * |f| / eta of its class (§3.2.4, eq. 3-24). */
    r->n_eta = 0;
    if (p->kind == PANDA_KIND_PANDA && p->n_weights && fht) {
        size_t c;
        int moved = 0;

        panda_solver_class_eta(&fht->samples, o->bounds, o->n_bounds, p,
                        o->header_len, r->eta);
        r->n_eta = o->n_bounds + 1;
        for (j = 0; j < n; j++) {
            for (c = 0; c < o->n_bounds
                 && (double) r->alpha_bytes[j] >= o->bounds[c]; c++) {
                continue;
            }
            p->alpha[j] = (uint64_t) llround(r->alpha_bytes[j]
                                             / r->eta[c]);
            if (p->alpha[j] < 1) {
                p->alpha[j] = 1;
            }
            if (j && p->alpha[j] <= p->alpha[j - 1]) {
                p->alpha[j] = p->alpha[j - 1] + 1;
                moved++;
            }
        }
        if (moved) {
            note(r, "%d counter threshold(s) raised to stay strictly"
                 " ascending after the weight mapping", moved);
        }
    } else {
        memcpy(p->alpha, r->alpha_bytes, sizeof p->alpha);
    }
}

static void
build_policy(const struct options *o, struct result *r)
{
    struct panda_policy *p = &r->policy, back;
    char *err;
    int len;

    p->id = o->id;
    p->kind = o->kind;
    p->n_levels = (uint8_t) o->K;
    panda_policy_default_maps(p);
    if (o->n_dscp >= 0) {
        memcpy(p->dscp, o->dscp, o->K);
    }
    if (o->n_queues >= 0) {
        memcpy(p->queue, o->queue, o->K);
    }
    err = panda_policy_validate(p);
    if (err) {
        fatal("resulting policy is invalid: %s", err);
    }
    len = panda_policy_format(p, r->action, sizeof r->action);
    if (len < 0 || (size_t) len >= sizeof r->action) {
        fatal("action string too long");
    }
    err = panda_policy_parse(r->action, &back);
    if (err) {
        fatal("internal error: action \"%s\" does not parse: %s", r->action,
              err);
    }
    if (!panda_policy_equal(p, &back)) {
        fatal("internal error: action \"%s\" does not round-trip",
              r->action);
    }
}

/* ---- Output. ---- */

static void
json_ratio(struct model_json *j, const char *key, double comp,
           double noncomp)
{
    mj_key(j, key);
    mj_obj(j);
    mj_key(j, "comp");
    mj_num(j, comp);
    mj_key(j, "comp_unbounded");
    mj_bool(j, isinf(comp));
    mj_key(j, "noncomp");
    mj_num(j, noncomp);
    mj_key(j, "noncomp_unbounded");
    mj_bool(j, isinf(noncomp));
    mj_obj_end(j);
}

static void
json_u64s(struct model_json *j, const char *key, const uint64_t *v, int n)
{
    int i;

    mj_key(j, key);
    mj_arr(j, true);
    for (i = 0; i < n; i++) {
        mj_uint(j, v[i]);
    }
    mj_arr_end(j);
}

static void
json_doubles(struct model_json *j, const char *key, const double *v, int n)
{
    int i;

    mj_key(j, key);
    mj_arr(j, true);
    for (i = 0; i < n; i++) {
        mj_num(j, v[i]);
    }
    mj_arr_end(j);
}

static void
json_inputs(struct model_json *j, const char *key,
            const struct input_summary *in, const char *const *files,
            size_t n, const char *filter)
{
    size_t i;

    mj_key(j, key);
    mj_obj(j);
    mj_key(j, "files");
    mj_arr(j, true);
    for (i = 0; i < n; i++) {
        mj_str(j, files[i]);
    }
    mj_arr_end(j);
    if (filter) {
        mj_key(j, "filter");
        mj_str(j, filter);
    }
    mj_key(j, "packets");
    mj_num(j, in->packets);
    mj_key(j, "flows");
    mj_uint(j, in->samples.n);
    mj_key(j, "per_flow");
    mj_bool(j, in->labelled);
    mj_key(j, "zero_payload");
    mj_num(j, in->zero_payload);
    if (in->any_pcap) {
        mj_key(j, "pcap_records");
        mj_uint(j, in->records);
        mj_key(j, "non_tcp");
        mj_uint(j, in->non_tcp);
        mj_key(j, "fragments");
        mj_uint(j, in->fragments);
        mj_key(j, "truncated");
        mj_uint(j, in->truncated);
    }
    mj_key(j, "size_min");
    mj_uint(j, in->s_min);
    mj_key(j, "size_max");
    mj_uint(j, in->s_max);
    mj_key(j, "size_avg");
    mj_num(j, in->avg);
    mj_obj_end(j);
}

static void
write_json(FILE *f, const struct options *o, const struct result *r,
           const struct input_summary *flt, const struct input_summary *fht)
{
    const struct panda_policy *p = &r->policy;
    struct model_json j;
    int i, n = p->n_levels - 1;

    mj_init(&j, f);
    mj_obj(&j);
    mj_key(&j, "version");
    mj_int(&j, 1);
    mj_key(&j, "id");
    mj_uint(&j, p->id);
    mj_key(&j, "kind");
    mj_str(&j, panda_policy_kind_name(p->kind));
    mj_key(&j, "threshold");
    mj_uint(&j, p->threshold);
    mj_key(&j, "weights");
    mj_arr(&j, true);
    for (i = 0; i < p->n_weights; i++) {
        mj_arr(&j, true);
        mj_uint(&j, p->weights[i].above);
        mj_num(&j, p->weights[i].weight / (double) PANDA_WEIGHT_ONE);
        mj_arr_end(&j);
    }
    mj_arr_end(&j);
    json_u64s(&j, "thresholds", p->alpha, n);
    mj_key(&j, "dscp");
    mj_arr(&j, true);
    for (i = 0; i < p->n_levels; i++) {
        mj_uint(&j, p->dscp[i]);
    }
    mj_arr_end(&j);
    mj_key(&j, "queues");
    mj_arr(&j, true);
    for (i = 0; i < p->n_levels; i++) {
        mj_uint(&j, p->queue[i]);
    }
    mj_arr_end(&j);
    mj_key(&j, "action");
    mj_str(&j, r->action);

    mj_key(&j, "model");
    mj_obj(&j);
    mj_key(&j, "K");
    mj_int(&j, o->K);
    mj_key(&j, "rho");
    mj_num(&j, o->rho);
    mj_key(&j, "mss");
    mj_uint(&j, o->mss);
    mj_key(&j, "header_len");
    mj_uint(&j, o->header_len);
    if (r->have_T) {
        mj_key(&j, "T_model");
        mj_uint(&j, r->T_model);
        mj_key(&j, "T_model_units");
        mj_str(&j, "packet bytes including header_len; threshold ="
               " T_model - header_len is TCP payload bytes");
        mj_key(&j, "t");
        mj_num(&j, r->sep.t);
        mj_key(&j, "t_plateau");
        mj_arr(&j, true);
        mj_uint(&j, r->sep.plateau_lo);
        mj_uint(&j, r->sep.plateau_hi);
        mj_arr_end(&j);
        mj_key(&j, "tie");
        mj_str(&j, o->tie == PANDA_SOLVER_TIE_HIGH ? "high"
               : o->tie == PANDA_SOLVER_TIE_LOW ? "low" : "mid");
        mj_key(&j, "R_flt");
        mj_num(&j, r->sep.r_a);
        mj_key(&j, "R_fht");
        mj_num(&j, r->sep.r_b);
        mj_key(&j, "flow_weighting");
        mj_str(&j, panda_samples_weighting_name(o->weighting));
        mj_key(&j, "keep_acks");
        mj_bool(&j, o->keep_acks);
        mj_key(&j, "E_T");
        mj_obj(&j);
        json_ratio(&j, "payload", r->et_comp, r->et_noncomp);
        json_ratio(&j, "packet", r->et_comp_pkt, r->et_noncomp_pkt);
        mj_obj_end(&j);
        mj_key(&j, "E_T_plateau");
        mj_arr(&j, false);
        for (i = 0; i < 3; i++) {
            mj_obj(&j);
            mj_key(&j, "T_model");
            mj_uint(&j, r->et_plateau[i].T_model);
            mj_key(&j, "threshold");
            mj_uint(&j, r->et_plateau[i].T_model > o->header_len
                    ? r->et_plateau[i].T_model - o->header_len : 0);
            json_ratio(&j, "payload", r->et_plateau[i].comp,
                       r->et_plateau[i].noncomp);
            mj_obj_end(&j);
        }
        mj_arr_end(&j);
    }
    if (r->have_sub) {
        size_t c;

        mj_key(&j, "subthresholds");
        mj_obj(&j);
        json_doubles(&j, "class_bounds", r->sub.bound, (int) o->n_bounds);
        mj_key(&j, "flows_per_class");
        mj_arr(&j, true);
        for (c = 0; c < r->sub.m; c++) {
            mj_uint(&j, r->sub.n_flows[c]);
        }
        mj_arr_end(&j);
        mj_key(&j, "d");
        mj_arr(&j, false);
        for (c = 0; c < r->sub.n; c++) {
            const struct panda_solver_separation *s = &r->sub.sub[c].sep;

            mj_obj(&j);
            mj_key(&j, "classes");
            mj_arr(&j, true);
            mj_uint(&j, r->sub.sub[c].cls + 1);
            mj_uint(&j, r->sub.sub[c].cls + 2);
            mj_arr_end(&j);
            mj_key(&j, "size");
            mj_uint(&j, s->x);
            mj_key(&j, "t");
            mj_num(&j, s->t);
            mj_key(&j, "plateau");
            mj_arr(&j, true);
            mj_uint(&j, s->plateau_lo);
            mj_uint(&j, s->plateau_hi);
            mj_arr_end(&j);
            mj_obj_end(&j);
        }
        mj_arr_end(&j);
        mj_key(&j, "weights_applied");
        mj_bool(&j, p->n_weights > 0);
        if (r->n_eta) {
            json_doubles(&j, "eta", r->eta, (int) r->n_eta);
        }
        mj_obj_end(&j);
    }
    if (r->have_alpha) {
        const struct panda_solver_alpha *a = &r->alpha;

        mj_key(&j, "alpha");
        mj_obj(&j);
        mj_key(&j, "objective");
        mj_str(&j, "Appendix B.1: B = sum_l U_l (1 - F(alpha_{l-1})),"
               " U_l = rho theta_l / (1 - rho F(alpha_{l-1})); lower is"
               " better");
        mj_key(&j, "cdf");
        mj_str(&j, o->cdf_file);
        mj_key(&j, "cdf_unit");
        mj_str(&j, o->cdf_unit);
        mj_key(&j, "cdf_points");
        mj_uint(&j, r->cdf.n);
        mj_key(&j, "cdf_mean_bytes");
        mj_num(&j, panda_cdf_mean(&r->cdf) * r->cdf_scale);
        mj_key(&j, "closed_form");
        mj_obj(&j);
        json_doubles(&j, "S", a->S_ideal, n);
        json_u64s(&j, "thresholds_bytes", a->alpha_cf, n);
        json_doubles(&j, "S_achieved", a->S_cf, n);
        mj_key(&j, "objective");
        mj_num(&j, a->obj_cf);
        mj_key(&j, "J");
        mj_num(&j, (1 - a->obj_cf) / (1 - o->rho));
        mj_key(&j, "objective_continuous");
        mj_num(&j, a->obj_ideal);
        mj_key(&j, "adjusted");
        mj_int(&j, a->n_adjusted);
        mj_obj_end(&j);
        mj_key(&j, "numeric");
        mj_obj(&j);
        json_u64s(&j, "thresholds_bytes", a->alpha_num, n);
        json_doubles(&j, "S_achieved", a->S_num, n);
        mj_key(&j, "objective");
        mj_num(&j, a->obj_num);
        mj_key(&j, "J");
        mj_num(&j, (1 - a->obj_num) / (1 - o->rho));
        mj_key(&j, "improvement_over_closed_form");
        mj_num(&j, a->obj_cf - a->obj_num);
        mj_key(&j, "objective_uniform_start");
        mj_num(&j, a->obj_num_uniform);
        mj_key(&j, "sweeps");
        mj_int(&j, a->iterations);
        mj_obj_end(&j);
        mj_key(&j, "chosen");
        mj_str(&j, a->numeric_chosen ? "numeric" : "closed_form");
        mj_key(&j, "tie_tolerance");
        mj_num(&j, 1e-9);
        json_u64s(&j, "thresholds_bytes", r->alpha_bytes, n);
        mj_obj_end(&j);
    }
    mj_key(&j, "inputs");
    mj_obj(&j);
    if (flt) {
        json_inputs(&j, "flt", flt, o->flt, o->n_flt, o->flt_filter);
    }
    if (fht) {
        json_inputs(&j, "fht", fht, o->fht, o->n_fht, o->fht_filter);
    }
    mj_obj_end(&j);
    mj_key(&j, "notes");
    mj_arr(&j, false);
    if (r->notes) {
        char *copy = panda_asprintf("%s", r->notes), *save = NULL, *line;

        for (line = strtok_r(copy, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
            mj_str(&j, line);
        }
        free(copy);
    }
    mj_arr_end(&j);
    mj_obj_end(&j);
    mj_obj_end(&j);
    mj_end(&j);
}

static void
print_ratio(FILE *f, const char *name, double v)
{
    if (isinf(v)) {
        fprintf(f, "%s unbounded (the FLT counter never grows)", name);
    } else {
        fprintf(f, "%s %.3g", name, v);
    }
}

static void
print_summary(FILE *f, const struct options *o, const struct result *r,
              const struct input_summary *flt,
              const struct input_summary *fht)
{
    const struct panda_policy *p = &r->policy;
    int i, n = p->n_levels - 1;

    fprintf(f, "panda-model: %s policy, id %" PRIu32 ", K = %d levels\n",
            panda_policy_kind_name(p->kind), p->id, p->n_levels);
    if (flt && fht) {
        fprintf(f, "  inputs: FLT %.0f packets in %zu flow(s), FHT %.0f"
                " packets in %zu flow(s)%s\n", flt->packets,
                flt->samples.n, fht->packets, fht->samples.n,
                o->keep_acks ? "" : " (zero-payload packets dropped)");
    }
    if (r->have_T) {
        fprintf(f, "  T (model, packet bytes incl. %" PRIu32 " header) = %"
                PRIu32 "; datapath threshold = %" PRIu32 " payload bytes\n",
                o->header_len, r->T_model, p->threshold);
        fprintf(f, "  t(T) = %.4f (R_FLT = %.4f, R_FHT = %.4f); every T in"
                " [%" PRIu32 ", %" PRIu32 "] is as good\n", r->sep.t,
                r->sep.r_a, r->sep.r_b, r->sep.plateau_lo,
                r->sep.plateau_hi);
        fprintf(f, "  data ratio E_T (payload units): ");
        print_ratio(f, "compensating", r->et_comp);
        fprintf(f, ", ");
        print_ratio(f, "non-compensating", r->et_noncomp);
        fprintf(f, "\n");
    }
    if (r->have_sub) {
        for (i = 0; i < (int) r->sub.n; i++) {
            fprintf(f, "  d_%d = %" PRIu32 " (classes %zu|%zu, t = %.4f)\n",
                    i + 1, r->sub.sub[i].sep.x, r->sub.sub[i].cls + 1,
                    r->sub.sub[i].cls + 2, r->sub.sub[i].sep.t);
        }
    }
    for (i = 0; i < p->n_weights; i++) {
        fprintf(f, "  weight %.2f for payload > %" PRIu32 "\n",
                p->weights[i].weight / 100.0, p->weights[i].above);
    }
    if (r->have_alpha) {
        const struct panda_solver_alpha *a = &r->alpha;

        fprintf(f, "  alpha (rho = %g): objective B closed form %.9f,"
                " numeric %.9f -> %s\n", o->rho, a->obj_cf, a->obj_num,
                a->numeric_chosen ? "numeric"
                : a->obj_num < a->obj_cf ? "closed form (a tie within"
                " 1e-9)" : "closed form");
        fprintf(f, "  thresholds (bytes):");
        for (i = 0; i < n; i++) {
            fprintf(f, " %" PRIu64, r->alpha_bytes[i]);
        }
        fprintf(f, "\n");
        if (p->n_weights) {
            fprintf(f, "  thresholds (counter units):");
            for (i = 0; i < n; i++) {
                fprintf(f, " %" PRIu64, p->alpha[i]);
            }
            fprintf(f, "\n");
        }
    }
    if (r->notes) {
        char *copy = panda_asprintf("%s", r->notes), *save = NULL, *line;

        for (line = strtok_r(copy, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
            fprintf(f, "  note: %s\n", line);
        }
        free(copy);
    }
    fprintf(f, "  action: panda(%s)\n", r->action);
}

int
main(int argc, char *argv[])
{
    struct input_summary flt, fht;
    struct options o;
    struct result r;
    bool panda;

    parse_options(argc, argv, &o);
    memset(&r, 0, sizeof r);
    panda_policy_init(&r.policy, o.kind);
    panda = o.kind == PANDA_KIND_PANDA;

    if (panda) {
        read_inputs("FLT", o.flt, o.n_flt, o.flt_filter, &o, &flt);
        read_inputs("FHT", o.fht, o.n_fht, o.fht_filter, &o, &fht);
        solve_panda(&o, &flt, &fht, &r);
    } else if (o.n_flt || o.n_fht) {
        note(&r, "packet-size samples are not used for kind=pias");
    }
    if (o.K > 1) {
        solve_alpha(&o, panda ? &fht : NULL, &r);
    }
    build_policy(&o, &r);

    if (o.output) {
        FILE *f = fopen(o.output, "w");

        if (!f) {
            fatal("%s: cannot create (%s)", o.output, strerror(errno));
        }
        write_json(f, &o, &r, panda ? &flt : NULL, panda ? &fht : NULL);
        if (fclose(f)) {
            fatal("%s: write error (%s)", o.output, strerror(errno));
        }
    }
    if (o.json_stdout) {
        write_json(stdout, &o, &r, panda ? &flt : NULL, panda ? &fht : NULL);
    } else if (o.action_only) {
        printf("%s\n", r.action);
    } else if (!o.quiet) {
        print_summary(stdout, &o, &r, panda ? &flt : NULL,
                      panda ? &fht : NULL);
    }

    if (panda) {
        panda_samples_destroy(&flt.samples);
        panda_samples_destroy(&fht.samples);
    }
    if (r.have_sub) {
        panda_solver_subthresholds_destroy(&r.sub);
    }
    if (r.have_alpha) {
        panda_solver_alpha_destroy(&r.alpha);
        panda_cdf_destroy(&r.cdf);
    }
    free(r.notes);
    return 0;
}

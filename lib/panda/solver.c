/* Threshold solvers of the Panda offline model: eq. 3-9, eq. 3-23 and
 * Appendix B.  See solver.h. */
#include <panda/solver.h>

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/base.h>

/* ---- Eq. 3-9 / 3-23. ---- */

/* Adds, for every size k, sign x w_f / (W x segs_f) x count_f(k) x map(k)
 * into 'acc' (eq. 3-6 numerators scaled by the eq. 3-8 weights).  Returns
 * false if the group has no usable weight. */
static bool
accumulate(const struct panda_samples_flow *const *g, size_t n,
           double *acc, uint32_t mss, uint32_t header_len)
{
    double W = 0;
    size_t i, j;

    for (i = 0; i < n; i++) {
        if (g[i]->hist.n && g[i]->weight > 0) {
            W += g[i]->weight;
        }
    }
    if (!(W > 0)) {
        return false;
    }
    for (i = 0; i < n; i++) {
        const struct panda_hist *h = &g[i]->hist;
        double segs = 0, c;

        if (!h->n || !(g[i]->weight > 0)) {
            continue;
        }
        for (j = 0; j < h->n; j++) {
            segs += h->weight[j] * panda_model_map(h->size[j], mss, header_len);
        }
        if (!(segs > 0)) {
            continue;
        }
        c = g[i]->weight / (W * segs);
        for (j = 0; j < h->n; j++) {
            acc[h->size[j]] += c * h->weight[j]
                               * panda_model_map(h->size[j], mss, header_len);
        }
    }
    return true;
}

static bool
group_range(const struct panda_samples_flow *const *g, size_t n,
            uint32_t *s_min, uint32_t *s_max)
{
    bool any = false;
    size_t i;

    for (i = 0; i < n; i++) {
        const struct panda_hist *h = &g[i]->hist;

        if (h->n) {
            if (!any || h->size[0] < *s_min) {
                *s_min = h->size[0];
            }
            if (!any || h->size[h->n - 1] > *s_max) {
                *s_max = h->size[h->n - 1];
            }
            any = true;
        }
    }
    return any;
}

char *
panda_solver_separate(const struct panda_samples_flow *const *a, size_t n_a,
               const struct panda_samples_flow *const *b, size_t n_b,
               uint32_t lo, uint32_t hi, uint32_t mss, uint32_t header_len,
               enum panda_solver_tie tie, struct panda_solver_separation *out)
{
    uint32_t s_min = 0, s_max = 0, bmin = 0, bmax = 0, x, best_x;
    double *acc_a, *acc_b, *tv, pa = 0, pb = 0, best;
    const double eps = 1e-9;
    size_t len;
    uint32_t plo, phi;

    memset(out, 0, sizeof *out);
    if (!mss) {
        return panda_asprintf("mss: must be positive");
    }
    if (!group_range(a, n_a, &s_min, &s_max)) {
        return panda_asprintf("first group of flows has no packet samples");
    }
    if (!group_range(b, n_b, &bmin, &bmax)) {
        return panda_asprintf("second group of flows has no packet samples");
    }
    s_min = bmin < s_min ? bmin : s_min;
    s_max = bmax > s_max ? bmax : s_max;
    if (s_max > PANDA_SOLVER_MAX_SIZE) {
        return panda_asprintf("packet size %" PRIu32 " too large (at most %d"
                              " bytes with headers)", s_max,
                              PANDA_SOLVER_MAX_SIZE);
    }
    out->s_min = s_min;
    out->s_max = s_max;
    lo = lo > s_min ? lo : s_min;
    hi = hi < s_max ? hi : s_max;
    if (lo > hi) {
        return panda_asprintf("no candidate threshold: search range [%"
                              PRIu32 ", %" PRIu32 "] is empty", lo, hi);
    }

    len = (size_t) s_max + 2;
    acc_a = panda_xcalloc(len, sizeof *acc_a);
    acc_b = panda_xcalloc(len, sizeof *acc_b);
    if (!accumulate(a, n_a, acc_a, mss, header_len)
        || !accumulate(b, n_b, acc_b, mss, header_len)) {
        free(acc_a);
        free(acc_b);
        return panda_asprintf("a group of flows has only zero weights");
    }

    /* t(x) = sum_{k < x} (acc_a[k] - acc_b[k]). */
    for (x = 0; x < lo; x++) {
        pa += acc_a[x];
        pb += acc_b[x];
    }
    tv = panda_xmalloc(((size_t) hi - lo + 1) * sizeof *tv);
    best = -HUGE_VAL;
    for (x = lo; ; x++) {
        tv[x - lo] = pa - pb;
        if (tv[x - lo] > best) {
            best = tv[x - lo];
        }
        if (x == hi) {
            break;
        }
        pa += acc_a[x];
        pb += acc_b[x];
    }

    best_x = lo;
    if (tie == PANDA_SOLVER_TIE_LOW) {
        for (x = lo; x <= hi; x++) {
            if (tv[x - lo] >= best - eps) {
                best_x = x;
                break;
            }
        }
    } else {
        for (x = hi; ; x--) {
            if (tv[x - lo] >= best - eps) {
                best_x = x;
                break;
            }
            if (x == lo) {
                break;
            }
        }
    }
    for (plo = best_x; plo > lo && tv[plo - 1 - lo] >= best - eps; plo--) {
        continue;
    }
    for (phi = best_x; phi < hi && tv[phi + 1 - lo] >= best - eps; phi++) {
        continue;
    }
    if (tie == PANDA_SOLVER_TIE_MID) {
        best_x = plo + (phi - plo) / 2;
    }

    out->x = best_x;
    out->t = tv[best_x - lo];
    out->plateau_lo = plo;
    out->plateau_hi = phi;
    pa = pb = 0;
    for (x = 0; x < best_x; x++) {
        pa += acc_a[x];
        pb += acc_b[x];
    }
    out->r_a = pa;
    out->r_b = pb;

    free(tv);
    free(acc_a);
    free(acc_b);
    return NULL;
}

static const struct panda_samples_flow **
flow_ptrs(const struct panda_samples *s)
{
    const struct panda_samples_flow **p;
    size_t i;

    p = panda_xmalloc((s->n ? s->n : 1) * sizeof *p);
    for (i = 0; i < s->n; i++) {
        p[i] = &s->flows[i];
    }
    return p;
}

char *
panda_solver_find_T(const struct panda_samples *flt, const struct panda_samples *fht,
              uint32_t mss, uint32_t header_len, enum panda_solver_tie tie,
              struct panda_solver_separation *out)
{
    const struct panda_samples_flow **a, **b;
    char *err;

    if (!flt->n || !(panda_samples_packets(flt) > 0)) {
        return panda_asprintf("no FLT samples (latency-sensitive traffic):"
                              " the model needs its packet sizes");
    }
    if (!fht->n || !(panda_samples_packets(fht) > 0)) {
        return panda_asprintf("no FHT samples (throughput traffic): the"
                              " model needs its packet sizes");
    }
    a = flow_ptrs(flt);
    b = flow_ptrs(fht);
    err = panda_solver_separate(a, flt->n, b, fht->n, 0, UINT32_MAX, mss,
                         header_len, tie, out);
    free(a);
    free(b);
    return err;
}

static double
weighted_r(const struct panda_samples *s, uint32_t x, uint32_t mss,
           uint32_t header_len)
{
    double num = 0, W = 0;
    size_t i;

    for (i = 0; i < s->n; i++) {
        const struct panda_samples_flow *f = &s->flows[i];

        if (f->hist.n && f->weight > 0) {
            num += f->weight * panda_model_small_ratio(&f->hist, x, mss,
                                                 header_len);
            W += f->weight;
        }
    }
    return W > 0 ? num / W : 0.0;
}

double
panda_solver_t_of(const struct panda_samples *a, const struct panda_samples *b,
           uint32_t x, uint32_t mss, uint32_t header_len)
{
    return (weighted_r(a, x, mss, header_len)
            - weighted_r(b, x, mss, header_len));
}

/* ---- Eq. 3-23. ---- */

char *
panda_solver_find_subthresholds(const struct panda_samples *fht,
                          const double *bounds, size_t n_bounds, uint32_t T,
                          uint32_t mss, uint32_t header_len,
                          enum panda_solver_tie tie, struct panda_solver_subthresholds *out)
{
    const struct panda_samples_flow **cls[PANDA_SOLVER_MAX_CLASSES];
    uint32_t prev = T;
    size_t i, c;
    char *err = NULL;

    memset(out, 0, sizeof *out);
    if (n_bounds > PANDA_MAX_WEIGHTS) {
        return panda_asprintf("class bounds: %zu given, at most %d",
                              n_bounds, PANDA_MAX_WEIGHTS);
    }
    for (i = 0; i < n_bounds; i++) {
        if (!(bounds[i] > 0) || !isfinite(bounds[i])) {
            return panda_asprintf("class bounds: %g is not a positive flow"
                                  " size", bounds[i]);
        }
        if (i && bounds[i] <= bounds[i - 1]) {
            return panda_asprintf("class bounds: not strictly ascending (%g"
                                  " after %g)", bounds[i], bounds[i - 1]);
        }
        out->bound[i] = bounds[i];
    }
    out->m = n_bounds + 1;
    for (c = 0; c < out->m; c++) {
        cls[c] = panda_xmalloc((fht->n ? fht->n : 1) * sizeof *cls[c]);
    }
    for (i = 0; i < fht->n; i++) {
        const struct panda_samples_flow *f = &fht->flows[i];

        if (!f->hist.n) {
            continue;
        }
        for (c = 0; c < n_bounds && f->bytes >= bounds[c]; c++) {
            continue;
        }
        cls[c][out->n_flows[c]++] = f;
    }
    for (c = 0; c + 1 < out->m; c++) {
        struct panda_solver_separation sep;

        if (!out->n_flows[c] || !out->n_flows[c + 1]) {
            panda_append(&out->notes, "; ", "no sub-threshold between"
                         " flow-size classes %zu and %zu: class %zu has no"
                         " flows", c + 1, c + 2,
                         out->n_flows[c] ? c + 2 : c + 1);
            continue;
        }
        if (prev == UINT32_MAX) {
            break;
        }
        err = panda_solver_separate(cls[c], out->n_flows[c], cls[c + 1],
                             out->n_flows[c + 1], prev + 1, UINT32_MAX, mss,
                             header_len, tie, &sep);
        if (err) {
            panda_append(&out->notes, "; ", "no sub-threshold between"
                         " flow-size classes %zu and %zu: %s", c + 1, c + 2,
                         err);
            free(err);
            err = NULL;
            continue;
        }
        if (!(sep.t > 1e-9)) {
            panda_append(&out->notes, "; ", "no sub-threshold between"
                         " flow-size classes %zu and %zu: packet sizes do not"
                         " separate them above %" PRIu32 " (best t = %.4g)",
                         c + 1, c + 2, prev, sep.t);
            continue;
        }
        out->sub[out->n].cls = c;
        out->sub[out->n].sep = sep;
        out->n++;
        prev = sep.x;
    }
    for (c = 0; c < out->m; c++) {
        free(cls[c]);
    }
    return err;
}

void
panda_solver_subthresholds_destroy(struct panda_solver_subthresholds *s)
{
    free(s->notes);
    s->notes = NULL;
}

void
panda_solver_class_eta(const struct panda_samples *fht, const double *bounds,
                size_t n_bounds, const struct panda_policy *p,
                uint32_t header_len, double *eta)
{
    double bytes[PANDA_SOLVER_MAX_CLASSES] = { 0 }, x[PANDA_SOLVER_MAX_CLASSES] = { 0 };
    size_t i, j, c;

    n_bounds = n_bounds > PANDA_MAX_WEIGHTS ? PANDA_MAX_WEIGHTS : n_bounds;
    for (i = 0; i < fht->n; i++) {
        const struct panda_samples_flow *f = &fht->flows[i];
        const struct panda_hist *h = &f->hist;

        for (c = 0; c < n_bounds && f->bytes >= bounds[c]; c++) {
            continue;
        }
        for (j = 0; j < h->n; j++) {
            uint32_t payload;

            if (h->size[j] <= header_len) {
                continue;
            }
            payload = h->size[j] - header_len;
            if (p->kind == PANDA_KIND_PANDA && payload < p->threshold) {
                continue;
            }
            bytes[c] += h->weight[j] * payload;
            x[c] += h->weight[j] * payload
                    * (p->kind == PANDA_KIND_PANDA
                       ? panda_policy_weight(p, payload) : PANDA_WEIGHT_ONE)
                    / PANDA_WEIGHT_ONE;
        }
    }
    for (c = 0; c <= n_bounds; c++) {
        eta[c] = x[c] > 0 ? bytes[c] / x[c] : 1.0;
    }
}

/* ---- Appendix B. ---- */

double
panda_solver_alpha_objective(const double *S, int K, double rho)
{
    double sum = 0, prev = 0;
    int l;

    for (l = 1; l <= K; l++) {
        double cur = l < K ? S[l - 1] : 1.0;
        double theta = cur - prev;

        sum += rho * theta * (1 - prev) / (1 - rho * prev);
        prev = cur;
    }
    return sum;
}

void
panda_solver_alpha_closed_form(int K, double rho, double *S)
{
    double r = pow(1 - rho, 1.0 / K);
    int l;

    for (l = 1; l < K; l++) {
        S[l - 1] = (1 - pow(r, l)) / rho;
    }
}

/* A CDF the solvers can use: valid (panda_cdf_check()) and not all at 0. */
static char *
solver_cdf_check(const struct panda_cdf *cdf)
{
    char *msg, *err;

    if (!cdf) {
        return panda_asprintf("flow-size CDF: empty (no data points)");
    }
    msg = panda_cdf_check(cdf);
    if (msg) {
        err = panda_asprintf("flow-size CDF: %s", msg);
        free(msg);
        return err;
    }
    if (!(cdf->value[cdf->n - 1] > 0)) {
        return panda_asprintf("flow-size CDF: all flow sizes are 0");
    }
    return NULL;
}

/* Largest flow size in bytes (value x scale) the threshold search works on:
 * 2^62, so that byte thresholds (and the few bytes added to them) fit
 * uint64_t and llround()'s long long; converting a larger double is
 * undefined behaviour. */
#define SOLVER_MAX_BYTES 4611686018427387904.0

struct alpha_ctx {
    const struct panda_cdf *cdf;
    double scale;
    double rho;
    int K;
    uint64_t top;               /* alpha_K: above every flow. */
    uint64_t min1;              /* Lower bound of alpha_1 (>= 1). */
};

static double
F_bytes(const struct alpha_ctx *c, uint64_t bytes)
{
    return panda_cdf_eval(c->cdf, (double) bytes / c->scale);
}

static uint64_t
quantile_bytes(const struct alpha_ctx *c, double u)
{
    double v = panda_cdf_quantile(c->cdf, u < 0 ? 0 : u > 1 ? 1 : u);

    return (uint64_t) llround(v * c->scale);
}

static double
objective_of(const struct alpha_ctx *c, const uint64_t *alpha, double *S)
{
    double tmp[PANDA_MAX_LEVELS - 1];
    int j;

    S = S ? S : tmp;
    for (j = 0; j + 1 < c->K; j++) {
        S[j] = F_bytes(c, alpha[j]);
    }
    return panda_solver_alpha_objective(S, c->K, c->rho);
}

/* Forces min1 <= alpha_1 < alpha_2 < ...; returns the number of
 * thresholds moved. */
static int
make_ascending(uint64_t *alpha, int n, uint64_t min1)
{
    int j, moved = 0;

    for (j = 0; j < n; j++) {
        uint64_t min = j ? alpha[j - 1] + 1 : min1;

        if (alpha[j] < min) {
            alpha[j] = min;
            moved++;
        }
    }
    return moved;
}

/* Threshold j at 'cand' (if in [lo, hi]), the others where they are: 'S'
 * holds their probabilities (S[j] is overwritten), so a candidate costs
 * one evaluation of the CDF, not K - 1. */
static void
try_candidate(const struct alpha_ctx *c, double *S, int j, uint64_t cand,
              uint64_t lo, uint64_t hi, double *best, uint64_t *best_a,
              size_t *hint)
{
    double v;

    if (cand < lo || cand > hi) {
        return;
    }
    S[j] = panda_cdf_eval_near(c->cdf, (double) cand / c->scale, hint);
    v = panda_solver_alpha_objective(S, c->K, c->rho);
    if (v < *best - 1e-15) {
        *best = v;
        *best_a = cand;
    }
}

/* The first CDF point whose value x scale is at least 'x' (n if none). */
static size_t
first_point_from(const struct alpha_ctx *c, double x)
{
    size_t lo = 0, hi = c->cdf->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (c->cdf->value[mid] * c->scale < x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Coordinate descent over integer byte thresholds: each threshold in turn
 * moves to the best position between its neighbours, found by golden-section
 * search on the continuous objective followed by an exact check of the
 * nearby integers and of the CDF's breakpoints (where F may jump).  Starts
 * from 'alpha' (strictly ascending) and only ever accepts improvements. */
static double
coordinate_descent(const struct alpha_ctx *c, uint64_t *alpha, int *sweeps)
{
    double cur = objective_of(c, alpha, NULL);
    int n = c->K - 1, it;

    for (it = 0; it < 1000; it++) {
        double before = cur;
        int j;

        for (j = 0; j < n; j++) {
            uint64_t lo = j ? alpha[j - 1] + 1 : c->min1;
            uint64_t hi = j + 1 < n ? alpha[j + 1] - 1 : c->top - 1;
            double S[PANDA_MAX_LEVELS - 1], sa, sb, x1, x2, f1, f2;
            const double g = (sqrt(5.0) - 1) / 2;
            uint64_t best_a = alpha[j], q;
            double best = cur;
            size_t i, first, end, hint;
            int k;

            if (lo > hi) {
                continue;
            }
            objective_of(c, alpha, S);
            sa = F_bytes(c, lo);
            sb = F_bytes(c, hi);
            x1 = sb - g * (sb - sa);
            x2 = sa + g * (sb - sa);
            S[j] = x1;
            f1 = panda_solver_alpha_objective(S, c->K, c->rho);
            S[j] = x2;
            f2 = panda_solver_alpha_objective(S, c->K, c->rho);
            for (k = 0; k < 80 && sb - sa > 1e-13; k++) {
                if (f1 <= f2) {
                    sb = x2;
                    x2 = x1;
                    f2 = f1;
                    x1 = sb - g * (sb - sa);
                    S[j] = x1;
                    f1 = panda_solver_alpha_objective(S, c->K, c->rho);
                } else {
                    sa = x1;
                    x1 = x2;
                    f1 = f2;
                    x2 = sa + g * (sb - sa);
                    S[j] = x2;
                    f2 = panda_solver_alpha_objective(S, c->K, c->rho);
                }
            }
            q = quantile_bytes(c, (sa + sb) / 2);
            hint = 0;
            try_candidate(c, S, j, q, lo, hi, &best, &best_a, &hint);
            try_candidate(c, S, j, q + 1, lo, hi, &best, &best_a, &hint);
            if (q) {
                try_candidate(c, S, j, q - 1, lo, hi, &best, &best_a,
                              &hint);
            }
            try_candidate(c, S, j, lo, lo, hi, &best, &best_a, &hint);
            try_candidate(c, S, j, hi, lo, hi, &best, &best_a, &hint);
            /* The breakpoints whose candidates (floor - 1 to floor + 1)
             * can fall in [lo, hi], found by binary search with a margin
             * for the rounding of lo and hi to doubles; the rest would be
             * skipped by try_candidate() anyway, so the result is the
             * same as trying every point, in O(log n) per candidate. */
            first = first_point_from(c, (double) lo * (1 - 1e-12) - 2);
            end = first_point_from(c, (double) hi * (1 + 1e-12) + 3);
            hint = first;
            for (i = first; i < end; i++) {
                double v = c->cdf->value[i] * c->scale;
                uint64_t fl = (uint64_t) floor(v);

                try_candidate(c, S, j, fl, lo, hi, &best, &best_a, &hint);
                try_candidate(c, S, j, fl + 1, lo, hi, &best, &best_a,
                              &hint);
                if (fl) {
                    try_candidate(c, S, j, fl - 1, lo, hi, &best, &best_a,
                                  &hint);
                }
            }
            if (best < cur) {
                alpha[j] = best_a;
                cur = best;
            }
        }
        if (!(cur < before - 1e-15)) {
            it++;
            break;
        }
    }
    *sweeps += it;
    return cur;
}

static void solve_alpha(const struct alpha_ctx *,
                        struct panda_solver_alpha *);

char *
panda_solver_find_alpha(const struct panda_cdf *cdf, double scale, double rho,
                  int K, struct panda_solver_alpha *out)
{
    struct alpha_ctx c;
    char *err;

    memset(out, 0, sizeof *out);
    if (!(rho > 0 && rho < 1)) {
        return panda_asprintf("load: rho = %g is outside (0, 1)", rho);
    }
    if (K < 1 || K > PANDA_MAX_LEVELS) {
        return panda_asprintf("levels: K = %d is outside 1..%d", K,
                              PANDA_MAX_LEVELS);
    }
    if (!(scale > 0) || !isfinite(scale)) {
        return panda_asprintf("CDF scale %g must be positive", scale);
    }
    err = solver_cdf_check(cdf);
    if (err) {
        return err;
    }
    /* Every byte count below comes from value x scale and is converted to
     * uint64_t (and through llround() to long long): keep it in range,
     * whatever the caller's scale (panda-model's is at most the MSS,
     * < 2^16, which with PANDA_CDF_MAX_VALUE stays below 2^56). */
    if (cdf->value[cdf->n - 1] * scale > SOLVER_MAX_BYTES) {
        return panda_asprintf("flow-size CDF: point %zu: largest flow size "
                              "%g x %g bytes per unit = %g bytes is above "
                              "the largest supported, 2^62 bytes",
                              cdf->n, cdf->value[cdf->n - 1], scale,
                              cdf->value[cdf->n - 1] * scale);
    }

    out->K = K;
    out->rho = rho;
    out->scale = scale;
    c.cdf = cdf;
    c.scale = scale;
    c.rho = rho;
    c.K = K;
    c.top = (uint64_t) ceil(cdf->value[cdf->n - 1] * scale) + K + 1;
    c.min1 = 1;
    solve_alpha(&c, out);
    return NULL;
}

/* The closed form under alpha_1 >= c->min1, when the bound binds: with
 * D_l = 1 - rho S_l, J = (K - sum_l D_l / D_l-1) / rho and the product of
 * the K ratios fixed at 1 - rho.  D_1 is fixed by the bound, so by the
 * same AM-GM argument as panda_solver_alpha_closed_form() the other K - 1
 * ratios are equal: D_l = D_1 r^(l-1), r = ((1 - rho) / D_1)^(1/(K-1)).
 * (The sum is convex in D_1, so with the bound above the unconstrained
 * alpha_1 the constrained optimum has alpha_1 on the bound.) */
static void
closed_form_bounded(const struct alpha_ctx *c, double *S)
{
    double s1 = F_bytes(c, c->min1), d1 = 1 - c->rho * s1, r;
    int l;

    r = d1 > 0 ? pow((1 - c->rho) / d1, 1.0 / (c->K - 1)) : 1;
    S[0] = s1;
    for (l = 2; l < c->K; l++) {
        S[l - 1] = (1 - d1 * pow(r, l - 1)) / c->rho;
    }
}

/* Closed form and numerical minimisation for the context 'c' (checked). */
static void
solve_alpha(const struct alpha_ctx *c_, struct panda_solver_alpha *out)
{
    struct alpha_ctx cc = *c_, *c = &cc;
    const int K = c->K;
    uint64_t start[PANDA_MAX_LEVELS - 1];
    double obj_start;
    int j, n = K - 1;

    if (K == 1) {
        out->obj_ideal = out->obj_cf = out->obj_num = out->obj_num_uniform
            = panda_solver_alpha_objective(NULL, 1, c->rho);
        return;
    }

    /* Closed form. */
    panda_solver_alpha_closed_form(K, c->rho, out->S_ideal);
    if (c->min1 > 1 && quantile_bytes(c, out->S_ideal[0]) < c->min1) {
        closed_form_bounded(c, out->S_ideal);
    }
    out->obj_ideal = panda_solver_alpha_objective(out->S_ideal, K, c->rho);
    for (j = 0; j < n; j++) {
        out->alpha_cf[j] = quantile_bytes(c, out->S_ideal[j]);
    }
    {
        uint64_t before[PANDA_MAX_LEVELS - 1];

        memcpy(before, out->alpha_cf, sizeof before);
        out->n_adjusted = make_ascending(out->alpha_cf, n, c->min1);
        if (out->n_adjusted) {
            char *list = NULL;

            for (j = 0; j < n; j++) {
                if (before[j] != out->alpha_cf[j]) {
                    char *item = panda_asprintf("%s%s#%d %" PRIu64 "->%"
                                                PRIu64, list ? list : "",
                                                list ? ", " : "", j + 1,
                                                before[j], out->alpha_cf[j]);
                    free(list);
                    list = item;
                }
            }
            panda_append(&out->notes, "; ", "closed-form thresholds raised"
                         " to stay strictly ascending because CDF quantiles"
                         " collide (flow sizes concentrate there): %s bytes",
                         list);
            free(list);
        }
    }
    out->obj_cf = objective_of(c, out->alpha_cf, out->S_cf);

    /* Numerical minimisation, from a uniform start (theta_l = 1/K)... */
    for (j = 0; j < n; j++) {
        start[j] = quantile_bytes(c, (double) (j + 1) / K);
    }
    make_ascending(start, n, c->min1);
    out->obj_num_uniform = coordinate_descent(c, start, &out->iterations);

    /* ...and from the closed form; keep the better. */
    memcpy(out->alpha_num, out->alpha_cf, sizeof out->alpha_num);
    obj_start = coordinate_descent(c, out->alpha_num, &out->iterations);
    if (out->obj_num_uniform < obj_start) {
        memcpy(out->alpha_num, start, sizeof out->alpha_num);
    }
    out->obj_num = objective_of(c, out->alpha_num, out->S_num);

    out->numeric_chosen = out->obj_num < out->obj_cf * (1 - 1e-9);
    memcpy(out->alpha, out->numeric_chosen ? out->alpha_num : out->alpha_cf,
           sizeof out->alpha);
}

char *
panda_solver_find_alpha_bounded(const struct panda_cdf *cdf, double scale,
                                double rho, int K, uint64_t alpha1_min,
                                struct panda_solver_alpha *out)
{
    struct panda_solver_alpha free_;
    struct alpha_ctx c;
    char *err;

    err = panda_solver_find_alpha(cdf, scale, rho, K, out);
    out->alpha1_min = alpha1_min;
    if (err || K == 1 || out->alpha[0] >= alpha1_min) {
        return err;
    }
    /* The bound binds: solve again under it, keeping the free optimum
     * for the record. */
    free_ = *out;
    c.cdf = cdf;
    c.scale = scale;
    c.rho = rho;
    c.K = K;
    c.top = (uint64_t) ceil(cdf->value[cdf->n - 1] * scale) + K + 1;
    c.min1 = alpha1_min;
    memset(out, 0, sizeof *out);
    out->K = K;
    out->rho = rho;
    out->scale = scale;
    out->alpha1_min = alpha1_min;
    out->bound_active = true;
    memcpy(out->alpha_free, free_.alpha, sizeof out->alpha_free);
    out->obj_free = free_.numeric_chosen ? free_.obj_num : free_.obj_cf;
    out->notes = free_.notes;
    solve_alpha(&c, out);
    panda_append(&out->notes, "; ", "alpha_1 raised to its lower bound %"
                 PRIu64 " bytes (the free optimum was %" PRIu64 "), the "
                 "other thresholds re-optimised above it: objective B %.9f "
                 "instead of %.9f", alpha1_min, free_.alpha[0],
                 out->numeric_chosen ? out->obj_num : out->obj_cf,
                 out->obj_free);
    return NULL;
}

void
panda_solver_alpha_destroy(struct panda_solver_alpha *r)
{
    free(r->notes);
    r->notes = NULL;
}

/* Thesis chapter 3 model helpers: map(k), R^T and the data ratio E_T. */
#include <panda/model.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <panda/base.h>

uint32_t
panda_model_map(uint32_t size, uint32_t mss, uint32_t header_len)
{
    uint32_t payload;

    if (!mss || size <= header_len + mss) {
        return 1;
    }
    payload = size - header_len;
    return (payload + mss - 1) / mss;
}

double
panda_model_small_ratio(const struct panda_hist *h, uint32_t T,
                  uint32_t mss, uint32_t header_len)
{
    double small = 0, all = 0;
    size_t i;

    for (i = 0; i < h->n; i++) {
        double segs = h->weight[i] * panda_model_map(h->size[i], mss, header_len);

        all += segs;
        if (h->size[i] < T) {
            small += segs;
        }
    }
    return all > 0 ? small / all : 0.0;
}

void
panda_model_split(const struct panda_hist *h, uint32_t T, int large_inclusive,
            struct panda_model_split *s)
{
    double total = panda_hist_total(h);
    double n_small = 0, b_small = 0, n_large = 0, b_large = 0;
    size_t i;

    for (i = 0; i < h->n; i++) {
        int large = large_inclusive ? h->size[i] >= T : h->size[i] > T;

        if (large) {
            n_large += h->weight[i];
            b_large += h->weight[i] * h->size[i];
        } else {
            n_small += h->weight[i];
            b_small += h->weight[i] * h->size[i];
        }
    }
    memset(s, 0, sizeof *s);
    if (total <= 0) {
        return;
    }
    s->avg = (b_small + b_large) / total;
    s->pr_small = n_small / total;
    s->pr_large = n_large / total;
    s->avg_small = n_small > 0 ? b_small / n_small : 0;
    s->avg_large = n_large > 0 ? b_large / n_large : 0;
}

double
panda_model_data_ratio_noncomp(const struct panda_hist *alpha,
                         const struct panda_hist *beta, uint32_t T)
{
    struct panda_model_split a, b;

    panda_model_split(alpha, T, 0, &a);
    panda_model_split(beta, T, 0, &b);
    if (a.pr_large <= 0 || a.avg_large <= 0) {
        return HUGE_VAL;
    }
    if (b.avg <= 0) {
        return 0.0;
    }
    /* Eq. 3-13. */
    return (a.avg / b.avg) * (b.avg_large / a.avg_large)
           * (b.pr_large / a.pr_large);
}

double
panda_model_data_ratio_comp(const struct panda_hist *alpha,
                      const struct panda_hist *beta, uint32_t T)
{
    struct panda_model_split a, b;
    double ga, gb;

    panda_model_split(alpha, T, 1, &a);
    panda_model_split(beta, T, 1, &b);
    /* Counter growth per packet (eq. 3-18): avg - T Pr^s. */
    ga = a.avg - (double) T * a.pr_small;
    gb = b.avg - (double) T * b.pr_small;
    if (ga <= 0) {
        return HUGE_VAL;
    }
    if (gb <= 0 || b.avg <= 0) {
        return 0.0;
    }
    /* Eq. 3-20, first line. */
    return (a.avg / b.avg) * (gb / ga);
}

/* Counters after each packet of 'pkts' with payload, in order, into
 * 'after' (n entries); returns how many were written and sets '*n_flows'. */
static size_t
replay(const struct panda_policy *p, const struct panda_model_pkt *pkts,
       size_t n, int64_t *after, size_t *n_flows)
{
    uint32_t max_flow = 0;
    int64_t *counter;
    uint8_t *seen;
    size_t i, m = 0, flows = 0;

    for (i = 0; i < n; i++) {
        max_flow = pkts[i].flow > max_flow ? pkts[i].flow : max_flow;
    }
    counter = panda_xcalloc((size_t) max_flow + 1, sizeof *counter);
    seen = panda_xcalloc((size_t) max_flow + 1, 1);
    for (i = 0; i < n; i++) {
        const struct panda_model_pkt *k = &pkts[i];

        if (!k->payload) {
            continue;
        }
        if (!seen[k->flow]) {
            seen[k->flow] = 1;
            flows++;
        }
        counter[k->flow] = panda_policy_update(p, counter[k->flow],
                                               k->payload);
        after[m++] = counter[k->flow];
    }
    free(counter);
    free(seen);
    *n_flows = flows;
    return m;
}

static int
cmp_i64(const void *a_, const void *b_)
{
    int64_t a = *(const int64_t *) a_, b = *(const int64_t *) b_;

    return a < b ? -1 : a > b;
}

void
panda_model_excursion(const struct panda_policy *p,
                      const struct panda_model_pkt *pkts, size_t n, double q,
                      struct panda_model_excursion *out)
{
    int64_t *after = panda_xmalloc((n ? n : 1) * sizeof *after);
    size_t m = replay(p, pkts, n, after, &out->flows), k;

    out->packets = m;
    out->q = q;
    out->quantile = out->max = 0;
    if (m) {
        qsort(after, m, sizeof *after, cmp_i64);
        /* The ceil(q m)-th smallest counter: that many packets are at or
         * below it. */
        k = (size_t) ceil(q * (double) m);
        k = k < 1 ? 1 : k > m ? m : k;
        out->quantile = after[k - 1];
        out->max = after[m - 1];
    }
    free(after);
}

double
panda_model_level0_share(const struct panda_policy *p,
                         const struct panda_model_pkt *pkts, size_t n,
                         uint64_t alpha1)
{
    int64_t *after = panda_xmalloc((n ? n : 1) * sizeof *after);
    size_t flows, m = replay(p, pkts, n, after, &flows), i, top = 0;

    for (i = 0; i < m; i++) {
        top += after[i] <= 0 || (uint64_t) after[i] <= alpha1;
    }
    free(after);
    return m ? (double) top / m : 1.0;
}

/* Mean of the sizes of 'h' in (lo, hi] (hi = UINT32_MAX: open above), or
 * 0 if none; 'lo_inclusive' takes lo itself too. */
static double
hist_mean(const struct panda_hist *h, uint32_t lo, bool lo_inclusive,
          uint32_t hi)
{
    double sum = 0, wsum = 0;
    size_t i;

    for (i = 0; i < h->n; i++) {
        uint32_t s = h->size[i];

        if ((s > lo || (lo_inclusive && s == lo)) && s <= hi) {
            sum += (double) s * h->weight[i];
            wsum += h->weight[i];
        }
    }
    return wsum > 0 ? sum / wsum : 0;
}

bool
panda_model_size_weights(const struct panda_hist *payload, uint32_t T,
                         const uint32_t *above, size_t n, double max_weight,
                         double *w)
{
    double base = n ? hist_mean(payload, T, true, above[0]) : 0;
    double prev = 1;
    size_t i;

    for (i = 0; i < n; i++) {
        w[i] = 1;
    }
    if (!(base > 0)) {
        return false;
    }
    for (i = 0; i < n; i++) {
        double m = hist_mean(payload, above[i], false,
                             i + 1 < n ? above[i + 1] : UINT32_MAX);
        double v = m > 0 ? m / base : prev;

        v = v < prev ? prev : v;
        w[i] = prev = v > max_weight ? max_weight : v;
    }
    return true;
}

/* The weight of a packet of 'size' payload bytes, as a factor. */
static double
weight_of(const struct panda_policy *p, uint32_t size)
{
    return (p->n_weights ? panda_policy_weight(p, size) : PANDA_WEIGHT_ONE)
           / (double) PANDA_WEIGHT_ONE;
}

double
panda_model_counter_at(const struct panda_policy *p, const uint32_t *sizes,
                       size_t n, uint64_t bytes)
{
    double c = 0;
    uint64_t left = bytes;
    size_t i;

    for (i = 0; i + 1 < n && left; i++) {
        uint64_t take = left < sizes[i] ? left : sizes[i];

        c += weight_of(p, sizes[i]) * (double) take;
        left -= take;
    }
    /* The rest are all of the last size. */
    return c + weight_of(p, sizes[n - 1]) * (double) left;
}

size_t
panda_model_slow_start_sizes(uint32_t iw, uint32_t tso_max,
                             uint32_t *sizes, size_t max)
{
    uint64_t cwnd = iw;
    size_t n = 0;

    /* A round's window leaves as one super-packet while it fits (the
     * receiver's GRO acknowledges it at once, and the ACK releases the
     * next, doubled, window); from tso_max on every packet is tso_max. */
    while (n + 1 < max && cwnd < tso_max) {
        sizes[n++] = (uint32_t) cwnd;
        cwnd *= 2;
    }
    if (n < max) {
        sizes[n++] = tso_max;
    }
    return n;
}

int
panda_model_map_thresholds(const uint64_t *bytes, const double *counter,
                           size_t n, uint64_t raw_from, uint64_t *out)
{
    int raised = 0;
    size_t j;

    for (j = 0; j < n; j++) {
        double c = counter[j] > (double) bytes[j] ? counter[j]
                                                  : (double) bytes[j];

        out[j] = bytes[j] < raw_from ? (uint64_t) ceil(c - 1e-9) : bytes[j];
        if (j && out[j] <= out[j - 1]) {
            out[j] = out[j - 1] + 1;
            raised++;
        }
    }
    return raised;
}

int
panda_model_counter_thresholds(const struct panda_policy *p,
                               const uint32_t *sizes, size_t n_sizes,
                               const uint64_t *bytes, size_t n,
                               uint64_t raw_from, uint64_t *out,
                               double *ratio)
{
    double c[PANDA_MAX_LEVELS];
    size_t j;

    for (j = 0; j < n && j < PANDA_MAX_LEVELS; j++) {
        c[j] = panda_model_counter_at(p, sizes, n_sizes, bytes[j]);
        if (ratio) {
            ratio[j] = bytes[j] ? c[j] / (double) bytes[j] : 1;
        }
    }
    return panda_model_map_thresholds(bytes, c, j, raw_from, out);
}

/* One flow's progress in panda_model_counter_replay(). */
struct replay_flow {
    uint64_t bytes;         /* Payload sent so far. */
    double counter;         /* Its weighted bytes. */
    size_t next;            /* First point not reached yet. */
};

static int
cmp_double(const void *a_, const void *b_)
{
    double a = *(const double *) a_, b = *(const double *) b_;

    return a < b ? -1 : a > b;
}

void
panda_model_counter_replay(const struct panda_policy *p,
                           const struct panda_model_pkt *pkts, size_t n,
                           const uint64_t *bytes, size_t n_points,
                           double *median, size_t *flows)
{
    struct replay_flow *f;
    uint32_t max_flow = 0;
    double *at;             /* at[flow * n_points + k]: C at point k. */
    double *col;
    size_t i, k, n_flows;

    for (i = 0; i < n; i++) {
        max_flow = pkts[i].flow > max_flow ? pkts[i].flow : max_flow;
    }
    n_flows = n ? (size_t) max_flow + 1 : 0;
    f = panda_xcalloc(n_flows ? n_flows : 1, sizeof *f);
    at = panda_xcalloc(n_flows && n_points ? n_flows * n_points : 1,
                       sizeof *at);
    for (i = 0; i < n; i++) {
        const struct panda_model_pkt *pk = &pkts[i];
        struct replay_flow *r = &f[pk->flow];
        double w;

        if (!pk->payload) {
            continue;
        }
        w = weight_of(p, pk->payload);
        /* Every point this packet carries the flow past. */
        while (r->next < n_points
               && r->bytes + pk->payload >= bytes[r->next]) {
            at[pk->flow * n_points + r->next]
                = r->counter + w * (double) (bytes[r->next] - r->bytes);
            r->next++;
        }
        r->bytes += pk->payload;
        r->counter += w * pk->payload;
    }
    col = panda_xmalloc((n_flows ? n_flows : 1) * sizeof *col);
    for (k = 0; k < n_points; k++) {
        size_t m = 0;

        for (i = 0; i < n_flows; i++) {
            if (f[i].next > k) {
                col[m++] = at[i * n_points + k];
            }
        }
        flows[k] = m;
        median[k] = 0;
        if (m) {
            qsort(col, m, sizeof *col, cmp_double);
            median[k] = m % 2 ? col[m / 2]
                        : (col[m / 2 - 1] + col[m / 2]) / 2;
        }
    }
    free(col);
    free(at);
    free(f);
}

/*
 * The offline model of the Panda thesis (chapter 3): segment mapping, small
 * packet ratios and data ratios.  The threshold solvers (eqs. 3-9, 3-23 and
 * Appendix B) build on these in solver.h.
 */
#ifndef PANDA_MODEL_H
#define PANDA_MODEL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <panda/hist.h>
#include <panda/policy.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PANDA_DEFAULT_MSS 1460
#define PANDA_DEFAULT_HEADER_LEN 40

/* Eq. 3-6: number of wire segments a packet of 'size' bytes (headers
 * included) becomes, map(k) = ceil((k - header_len) / MSS), and at least 1. */
uint32_t panda_model_map(uint32_t size, uint32_t mss, uint32_t header_len);

/* Eq. 3-6: R^T, the fraction of a flow's segments carried by packets smaller
 * than T. */
double panda_model_small_ratio(const struct panda_hist *, uint32_t T,
                         uint32_t mss, uint32_t header_len);

/* Summary of a distribution split at T. */
struct panda_model_split {
    double avg;         /* avg_i */
    double pr_small;    /* Pr_i^s(T) */
    double avg_small;   /* avg_i^s(T) (0 if no small packets) */
    double pr_large;    /* Pr_i^l(T) */
    double avg_large;   /* avg_i^l(T) (0 if no large packets) */
};

/* 'large_inclusive' selects where a packet of exactly T bytes goes: with
 * true it is large (Algorithm 2: s < T is small), with false it is small
 * (the non-compensating g of eq. 3-13: k <= T maps to 0). */
void panda_model_split(const struct panda_hist *, uint32_t T, int large_inclusive,
                 struct panda_model_split *);

/* Data ratio E_T(g) for an FLT flow 'alpha' and an FHT flow 'beta': the
 * ratio of bytes each has sent when both reach the same counter.
 *
 * Non-compensating g (g(k) = k for k > T, 0 otherwise), eq. 3-13.  Returns
 * HUGE_VAL if 'alpha' has no packet larger than T (it never sinks).
 */
double panda_model_data_ratio_noncomp(const struct panda_hist *alpha,
                                const struct panda_hist *beta, uint32_t T);

/* Compensating g (Algorithm 2: g(k) = k for k >= T, k - T below), the exact
 * first line of eq. 3-20.  Returns HUGE_VAL when avg_alpha - T Pr_alpha^s <= 0
 * (the FLT flow's counter never grows: it stays at the top level). */
double panda_model_data_ratio_comp(const struct panda_hist *alpha,
                             const struct panda_hist *beta, uint32_t T);

/* ------------------------------------------------------------------------
 * Counter excursions of the FLT (issue 19).
 *
 * Appendix B derives alpha from the FHT flow-size CDF alone.  Under
 * Algorithm 2 an FLT connection's counter is not 0, though: it rises by
 * the size of every packet >= T (a memcached response larger than one MSS
 * sends full segments) and falls by T - s for every smaller one, so it
 * makes excursions whose height depends on the FLT's own packet sequence.
 * Where the CDF puts alpha_1 below them (data-mining: alpha_1 = 1460
 * bytes, half of its flows being one packet) the FLT connection leaves
 * level 0 on every large response, whatever T does.  Replaying Algorithm
 * 2 over captured FLT packets, in order, measures those excursions, and
 * their q-quantile is the smallest alpha_1 that keeps a share q of the FLT
 * packets at level 0 (a packet's level is taken from the counter after
 * its own update, as in panda_conn_table).
 * ------------------------------------------------------------------------ */

/* One captured packet: its flow (any id; one counter per distinct id) and
 * its TCP payload in bytes. */
struct panda_model_pkt {
    uint32_t flow;
    uint32_t payload;
};

struct panda_model_excursion {
    size_t packets;         /* Packets replayed (zero-payload ones skipped:
                             * they never move the counter). */
    size_t flows;           /* Distinct flows among them. */
    double q;               /* The share asked for. */
    int64_t quantile;       /* Smallest c such that a share >= q of the
                             * packets leave their counter at <= c. */
    int64_t max;            /* Largest counter after any packet. */
};

/* Replays 'p' (panda_policy_update: T, weights, floor; every flow starts
 * at counter 0) over the 'n' packets of 'pkts' in order.  'q' in (0, 1].
 * Allocates 8 bytes per packet and 8 per flow id up to the largest, freed
 * before returning. */
void panda_model_excursion(const struct panda_policy *p,
                           const struct panda_model_pkt *pkts, size_t n,
                           double q, struct panda_model_excursion *out);

/* The share of the packets of 'pkts' (with payload) that 'p' leaves at
 * counter <= alpha1, i.e. at level 0 when alpha_1 = alpha1; 1 if none. */
double panda_model_level0_share(const struct panda_policy *p,
                                const struct panda_model_pkt *pkts, size_t n,
                                uint64_t alpha1);

/* ------------------------------------------------------------------------
 * Size-interval weights (thesis §3.2.3; issue 18).
 *
 * The thesis defines the intervals (their bounds are the sub-thresholds d_i
 * of eq. 3-23) but leaves the weight values open; its evaluation used all
 * weights 1.  Under TSO the datapath sees a flow's packets before
 * segmentation, and a super-packet's size is the sender's burst: TCP
 * sizes it to what it may send at once (tcp_tso_autosize: about 1 ms at
 * the flow's rate, bounded by its window), so a flow sending 60 KB
 * packets is running at many times the rate of one sending MTU-sized
 * ones.  The rule here makes a packet weigh as many packets of the first
 * interval as it carries:
 *
 *     w_i = mean payload of the FHT packets in interval i
 *           / mean payload of the FHT packets in [T, t_0]
 *
 * so the counter of a flow grows with (bytes x burst size) instead of
 * bytes alone and a bulk flow descends the levels in proportionally fewer
 * bytes, while every packet up to t_0 keeps weight 1 (panda-model puts
 * t_0 above T and above every FLT packet it was given).  The
 * values come from the measured size distribution, need no parameter,
 * grow with the intervals (a mean of larger sizes is larger), and are 1
 * when TSO is off (no packet exceeds one MSS, so there are no higher
 * intervals).  They are capped at 'max_weight'.
 * ------------------------------------------------------------------------ */

/* Fills w[0..n-1], the weights of the intervals (above[i], above[i+1]]
 * (the last one open above), from 'payload', the FHT's payload-size
 * histogram, and T.  'above' ascending, above[0] >= T.  An interval with
 * no FHT packet takes the weight of the one below it (1 for the first);
 * weights never decrease and lie in [1, max_weight].  Returns false, with
 * every weight 1, if no FHT packet lies in [T, above[0]] (no base to
 * compare with). */
bool panda_model_size_weights(const struct panda_hist *payload, uint32_t T,
                              const uint32_t *above, size_t n,
                              double max_weight, double *w);

#ifdef __cplusplus
}
#endif

#endif /* model.h */

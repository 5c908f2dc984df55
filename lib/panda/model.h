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
 * Counter excursions of the FLT.
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
 * Size-interval weights (thesis §3.2.3).
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

/* ------------------------------------------------------------------------
 * Thresholds in the weighted counter's units.
 *
 * Appendix B gives the thresholds alpha_l in bytes: a flow of that many
 * bytes leaves level l - 1.  With size-interval weights the counter is not
 * bytes: a flow that sends packets above t_0 reaches a counter C(b) > b
 * after b bytes, so byte thresholds demote it after b / (C(b) / b) bytes,
 * with the 10g profile's weight 7.2 about 7 times sooner than PIAS would:
 * medium flows sink to the levels of the large ones (the measured 1.7-3x
 * medium FCT).  Mapping alpha_l to C(alpha_l) puts a flow that sends the
 * modelled packet sequence at the level PIAS would give it after every
 * number of bytes; a flow with larger packets than the model's still sinks
 * sooner.
 *
 * C(b) here is the counter of a size sequence under the weights alone:
 * b bytes of a packet of weight w add w b (fractional bytes of a packet
 * count pro rata, the datapath adds the whole packet when it arrives).
 * Algorithm 2's compensation below T and the floor are left out: they act
 * the same with all-ones weights, which the byte thresholds are already
 * computed for, so with every weight 1, C(b) = b and the mapping is the
 * identity.
 *
 * The sequence is either modelled, the one a TSO sender produces while
 * its window grows (panda_model_slow_start_sizes()), or measured, the
 * median connection of flows captured under all-ones weights
 * (panda_model_counter_replay(); the testbed's 10g default).  See
 * tools/README-panda-model.md, "Thresholds in counter units", for why
 * not the collected capture's sizes.
 * ------------------------------------------------------------------------ */

/* The counter C(b) of a flow that sends packets of the payload sizes
 * 'sizes[0..n-1]' in order, then more of size sizes[n-1], under the weights
 * of 'p' (only the weights: see above), after 'bytes' bytes.  n >= 1,
 * every size >= 1. */
double panda_model_counter_at(const struct panda_policy *p,
                              const uint32_t *sizes, size_t n,
                              uint64_t bytes);

/* The payload sizes a TCP sender under TSO passes to the datapath while
 * its congestion window grows from 'iw' bytes by doubling every round
 * trip: one super-packet per round (iw, 2 iw, 4 iw, ...) while the window
 * is below 'tso_max', then packets of tso_max.  Stores at most 'max' (>= 1)
 * sizes in 'sizes' and returns how many; the last is tso_max, which
 * panda_model_counter_at() repeats.  iw >= 1, tso_max >= 1. */
size_t panda_model_slow_start_sizes(uint32_t iw, uint32_t tso_max,
                                    uint32_t *sizes, size_t max);

/* Maps the byte thresholds 'bytes[0..n-1]' (ascending) to counter
 * thresholds 'out': out[j] = ceil(C(bytes[j])) for the thresholds below
 * 'raw_from' (the large class's lower bound: those thresholds separate the
 * small and medium flows), bytes[j] for the others (they are meant to sink
 * large flows, and in bytes the weights make them do it sooner than all
 * ones), then raised where needed to stay strictly ascending.  Returns how
 * many were raised.  'ratio', if nonnull, gets C(bytes[j]) / bytes[j]. */
int panda_model_counter_thresholds(const struct panda_policy *p,
                                   const uint32_t *sizes, size_t n_sizes,
                                   const uint64_t *bytes, size_t n,
                                   uint64_t raw_from, uint64_t *out,
                                   double *ratio);

/* out[j] = ceil(counter[j]) (at least bytes[j]) for the thresholds
 * 'bytes[j]' below 'raw_from', bytes[j] for the others, each raised where
 * needed to stay strictly above the one before.  Returns how many were
 * raised.  The mapping step of panda_model_counter_thresholds(), for a C
 * computed otherwise (panda_model_counter_replay()). */
int panda_model_map_thresholds(const uint64_t *bytes, const double *counter,
                               size_t n, uint64_t raw_from, uint64_t *out);

/* C(b) measured instead of modelled: replays the packets 'pkts' (in order;
 * one flow per id) under the weights of 'p' and, for each point bytes[k]
 * (ascending), sets flows[k] to the number of flows that sent at least
 * bytes[k] payload bytes and median[k] to the median of their weighted
 * bytes at that point (0 if none).  Allocates 24 bytes per flow id up to
 * the largest plus 8 per flow id and point, freed before returning. */
void panda_model_counter_replay(const struct panda_policy *p,
                                const struct panda_model_pkt *pkts,
                                size_t n, const uint64_t *bytes,
                                size_t n_points, double *median,
                                size_t *flows);

#ifdef __cplusplus
}
#endif

#endif /* model.h */

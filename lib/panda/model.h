/*
 * The offline model of the Panda thesis (chapter 3): segment mapping, small
 * packet ratios and data ratios.  The threshold solvers (eqs. 3-9, 3-23 and
 * Appendix B) build on these in solver.h.
 */
#ifndef PANDA_MODEL_H
#define PANDA_MODEL_H 1

#include <stddef.h>
#include <stdint.h>

#include <panda/hist.h>

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

#ifdef __cplusplus
}
#endif

#endif /* model.h */

/*
 * Packet-size histograms: the distributions the offline model works on.
 */
#ifndef PANDA_HIST_H
#define PANDA_HIST_H 1

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A packet-size distribution: 'n' distinct sizes (ascending, no repeats)
 * with nonnegative weights (counts or probabilities, any scale). */
struct panda_hist {
    size_t n, allocated;
    uint32_t *size;
    double *weight;
};

void panda_hist_init(struct panda_hist *);
void panda_hist_destroy(struct panda_hist *);
/* Adds 'weight' to 'size' (keeps sizes sorted and unique). */
void panda_hist_add(struct panda_hist *, uint32_t size, double weight);
double panda_hist_total(const struct panda_hist *);

#ifdef __cplusplus
}
#endif

#endif /* panda/hist.h */

/*
 * Packet-size samples of a set of flows, the input of the offline model's
 * solvers (solver.h): one histogram of packet sizes per flow, its packet
 * count, its size in payload bytes and its weight w_f.
 */
#ifndef PANDA_SAMPLES_H
#define PANDA_SAMPLES_H 1

#include <stddef.h>
#include <stdint.h>

#include <panda/hist.h>

#ifdef __cplusplus
extern "C" {
#endif

struct panda_samples_flow {
    struct panda_hist hist;     /* Packet sizes, headers included. */
    double packets;             /* Number of packets (sum of counts). */
    double bytes;               /* Flow size: payload bytes. */
    double weight;              /* w_f of eqs. 3-8, 3-9 and 3-23. */
};

struct panda_samples {
    size_t n, allocated;
    struct panda_samples_flow *flows;

    /* Packets buffered by panda_samples_push(), not yet in 'flows'. */
    uint64_t *pending;
    size_t n_pending, pending_allocated;
    uint32_t pending_header_len;
};

void panda_samples_init(struct panda_samples *);
void panda_samples_destroy(struct panda_samples *);

/* Adds an empty flow and returns its index. */
size_t panda_samples_new_flow(struct panda_samples *);

/* Adds 'count' packets of 'size' bytes (headers included) to flow 'flow';
 * the flow's size grows by count x (size - header_len) payload bytes. */
void panda_samples_add(struct panda_samples *, size_t flow, uint32_t size,
                       double count, uint32_t header_len);

/* Buffers one packet of 'size' bytes (headers included) of flow 'flow'.
 * Much faster than panda_samples_add() for many packets in random flow
 * order: the packets are sorted (radix sort on flow and size) and folded
 * into the histograms in bulk by panda_samples_flush(), which must be called
 * before the samples are used (panda_samples_prune() also flushes). */
void panda_samples_push(struct panda_samples *, size_t flow, uint32_t size,
                        uint32_t header_len);
void panda_samples_flush(struct panda_samples *);

/* Total packets over all flows. */
double panda_samples_packets(const struct panda_samples *);

/* Adds every flow's histogram into 'out' (which must be initialised). */
void panda_samples_aggregate(const struct panda_samples *,
                             struct panda_hist *out);

/* Flushes pending packets, then removes flows without packets.  Returns how
 * many were removed. */
size_t panda_samples_prune(struct panda_samples *);

/* Per-flow weights w_f (eq. 3-8: "by packet count, or by other factors"). */
enum panda_samples_weighting {
    PANDA_SAMPLES_WEIGH_PACKETS,        /* w_f = number of packets (default). */
    PANDA_SAMPLES_WEIGH_EQUAL,          /* w_f = 1. */
    PANDA_SAMPLES_WEIGH_BYTES,          /* w_f = payload bytes. */
};
void panda_samples_set_weights(struct panda_samples *,
                               enum panda_samples_weighting);
const char *panda_samples_weighting_name(enum panda_samples_weighting);

#ifdef __cplusplus
}
#endif

#endif /* panda/samples.h */

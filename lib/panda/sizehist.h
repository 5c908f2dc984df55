/*
 * Live size histograms: what the datapath counts per policy id, so that a
 * controller can run the offline model (panda/model.h, panda-model) on the
 * traffic of a running system ("closed loop").
 *
 * Two kinds of histogram, with fixed bucket edges:
 *
 *   payload  TCP payload bytes of each packet that carries payload, one
 *            histogram per class of connection.  The class is the level
 *            that Algorithm 2 gives the packet (0..K-1), the only property
 *            of a connection that the datapath knows without being told:
 *            the model's FLT sample is what stays at level 0, its FHT
 *            sample what sinks (a controller may also give FLT traffic a
 *            policy id of its own, whose histograms are then pure FLT).
 *            Edges: 8-byte buckets [8b, 8b+7] below 2048 bytes (bucket 0
 *            is [1, 7]: zero-payload packets never move the counter and
 *            are not counted), then 4 buckets per power of two up to 65535
 *            (TSO super-packets).  Why this is exact enough: the model's
 *            T is chosen among sample sizes, here bucket lower edges, and
 *            the datapath calls a packet small when payload < T; with T on
 *            an edge every counted packet falls on the side the model put
 *            it, so t(T) and E_T computed on the buckets are the datapath's
 *            own.  Only where T lies (to 8 bytes below 2 KB) and the
 *            averages (to 4 bytes) are coarser than per-byte counts.
 *   flow     Bytes of payload a connection sent in total, counted once by
 *            its connection table (panda_table_set_flow_hist()) when it
 *            ends (FIN/RST), expires, is evicted or is flushed; kept in
 *            the entry to within 0.55% (conn-table.c, "Flow bytes"); a
 *            connection that sent no payload is not counted.  The
 *            flow-size CDF of the model's thresholds alpha.  Edges: exact below 8 bytes, then 4
 *            buckets per power of two (relative width 25% at most) up to
 *            2^64 - 1.
 *
 * Memory.  struct panda_sizehist is a plain array of counters: K=8 payload
 * histograms of 276 buckets and one flow histogram of 252 buckets, 8 bytes
 * each: 19680 bytes per policy id.  Nothing here allocates except the text
 * function (panda_sizehist_format(), off the packet path).
 *
 * Concurrency.  The count functions add with relaxed atomic increments,
 * so that every datapath thread can count into the one histogram of a
 * policy id with no lock and no per-thread copy to find and merge: an
 * uncontended relaxed add costs about what the shard lock of the
 * connection table costs, and a policy id's packets are normally handled by
 * one thread (one receive queue), where the line stays in its cache.  Reads
 * (panda_sizehist_snapshot()) use relaxed loads: each counter is exact,
 * the set is not a single instant (a packet counted while a snapshot runs
 * may be in it or not), which a sampling controller does not mind.
 *
 * Serialisation (the one used by ovs-appctl panda/histogram and the
 * OpenFlow statistics reply alike): text, one line per nonzero bucket, in
 * order, after a header line:
 *
 *     panda-histogram 1
 *     payload LEVEL LOWER COUNT     (LEVEL 0..7, LOWER the bucket's lower
 *                                    edge in payload bytes)
 *     flow LOWER COUNT              (LOWER in bytes)
 *
 * Lower edges identify buckets (the reader, the controller's
 * pandaovs.sizehist, refuses a value that is not an edge); "size count"
 * files for panda-model are the payload lines of the chosen levels, size =
 * LOWER + header_len.
 */
#ifndef PANDA_SIZEHIST_H
#define PANDA_SIZEHIST_H 1

#include <stddef.h>
#include <stdint.h>

#include <panda/policy.h>

#ifdef __cplusplus
extern "C" {
#endif

enum panda_sizehist_kind {
    PANDA_SIZEHIST_PAYLOAD,
    PANDA_SIZEHIST_FLOW,
};

#define PANDA_SIZEHIST_PAYLOAD_BUCKETS 276
#define PANDA_SIZEHIST_FLOW_BUCKETS 252
#define PANDA_SIZEHIST_VERSION 1

struct panda_sizehist {
    uint64_t payload[PANDA_MAX_LEVELS][PANDA_SIZEHIST_PAYLOAD_BUCKETS];
    uint64_t flow[PANDA_SIZEHIST_FLOW_BUCKETS];
};

/* Number of buckets of 'kind'. */
size_t panda_sizehist_n_buckets(enum panda_sizehist_kind);

/* The bucket of 'value' (payload values above PANDA_MAX_PKT_SIZE, and 0,
 * which is never counted, fall in the last and the first bucket). */
size_t panda_sizehist_bucket(enum panda_sizehist_kind, uint64_t value);

/* The payload bucket of 'payload', as panda_sizehist_bucket() gives it.
 * Inline and within the rules of panda/classifier.h's per-packet core, so
 * that a BPF program counts into the same buckets: 8-byte buckets below
 * 2048, then 4 per power of two. */
PANDA_INLINE uint32_t
panda_sizehist_payload_bucket(uint32_t payload)
{
    uint32_t o;

    if (payload < 2048) {
        return payload >> 3;
    }
    if (payload > PANDA_MAX_PKT_SIZE) {
        payload = PANDA_MAX_PKT_SIZE;
    }
    for (o = 11; o < 15 && payload >> (o + 1); o++) {
        continue;               /* o = log2(payload), 11..15. */
    }
    return 256 + (o - 11) * 4 + ((payload >> (o - 2)) & 3);
}

/* Smallest and largest value of bucket 'b' (< panda_sizehist_n_buckets()). */
uint64_t panda_sizehist_lower(enum panda_sizehist_kind, size_t b);
uint64_t panda_sizehist_upper(enum panda_sizehist_kind, size_t b);

void panda_sizehist_reset(struct panda_sizehist *);

/* Counts one packet of 'payload' bytes (> 0) at 'level' (< PANDA_MAX_LEVELS;
 * higher is clamped).  Relaxed atomic: any thread, no lock. */
void panda_sizehist_count_payload(struct panda_sizehist *, unsigned int level,
                                  uint32_t payload);

/* Counting packet by packet with one atomic addition per run of packets
 * that fall in the same bucket and level (a batch of one flow's segments,
 * or of flows that send one size, is one run), for the datapath's batch
 * loop: panda_sizehist_run_init() before the first packet,
 * panda_sizehist_run_add() for each (inline: a comparison and an increment
 * while the run goes on, so that a batch costs neither an atomic addition
 * per packet nor a second pass over arrays of levels and payloads), then
 * panda_sizehist_run_end(), which adds what is pending.  The counts are
 * what panda_sizehist_count_payload() gives packet by packet.  A run is
 * its caller's (a local of one thread), the histogram anyone's. */
struct panda_sizehist_run {
    uint64_t *counter;          /* The run's bucket, NULL before the first
                                 * packet... */
    uint64_t n;                 /* ...and its packets not yet added. */
    uint32_t payload;           /* The last packet's payload and level: a */
    unsigned int level;         /* packet with both the same continues. */
};

static inline void
panda_sizehist_run_init(struct panda_sizehist_run *r)
{
    r->counter = NULL;
    r->n = 0;
    r->payload = 0;
    r->level = PANDA_MAX_LEVELS;    /* No packet's: the first starts. */
}

/* panda_sizehist_run_add() of a packet that does not continue the run
 * with the same payload and level. */
void panda_sizehist_run_next(struct panda_sizehist *,
                             struct panda_sizehist_run *, unsigned int level,
                             uint32_t payload);

/* Counts one packet of 'payload' bytes (> 0) at 'level' (higher than
 * PANDA_MAX_LEVELS - 1 is clamped) in run 'r' of 'h'. */
static inline void
panda_sizehist_run_add(struct panda_sizehist *h, struct panda_sizehist_run *r,
                       unsigned int level, uint32_t payload)
{
    if (payload == r->payload && level == r->level) {
        r->n++;
    } else {
        panda_sizehist_run_next(h, r, level, payload);
    }
}

/* Adds the packets of a run not yet added into its histogram; the run is
 * then empty. */
void panda_sizehist_run_end(struct panda_sizehist_run *);

/* Counts one finished connection that sent 'bytes' bytes of payload. */
void panda_sizehist_count_flow(struct panda_sizehist *, uint64_t bytes);

/* Copies 'src' into 'dst' with relaxed loads ('dst' private). */
void panda_sizehist_snapshot(struct panda_sizehist *dst,
                             const struct panda_sizehist *src);

/* Finished flows of a snapshot (saturating sum). */
uint64_t panda_sizehist_flows(const struct panda_sizehist *);

/* The text serialisation of a snapshot (header above); malloc()ed. */
char *panda_sizehist_format(const struct panda_sizehist *);

#ifdef __cplusplus
}
#endif

#endif /* panda/sizehist.h */

/*
 * Panda: application-driven flow scheduling by packet size.
 *
 * Plain C, no Open vSwitch headers: used by the OVS datapath patches, the
 * tools (panda-model, panda-bench, panda-demo) and the simulations alike.
 *
 * Terminology.  The thesis numbers priorities 1..K with 1 the highest.  This
 * library uses 0-based "levels": level 0 is the highest priority (thesis
 * priority 1), level K-1 the lowest.  Level i maps to a DSCP value and to an
 * egress queue through the policy's per-level tables.
 */
#ifndef PANDA_PANDA_H
#define PANDA_PANDA_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PANDA_MAX_LEVELS 8          /* K <= 8 (eight strict-priority queues). */
#define PANDA_MAX_WEIGHTS 8         /* Size intervals above T. */
#define PANDA_WEIGHT_ONE 100        /* Weights are stored in hundredths. */
#define PANDA_MAX_DSCP 63
#define PANDA_MAX_PKT_SIZE 65535    /* TSO super-packets are at most 64 KB. */

/* ------------------------------------------------------------------------
 * Policy: all the parameters of one scheduling policy, as data.
 * ------------------------------------------------------------------------ */

enum panda_kind {
    PANDA_KIND_PANDA,   /* Algorithm 2: compensate small, weigh large. */
    PANDA_KIND_PIAS,    /* Counter = bytes sent (T = 0, g(k) = k). */
};

/* Thesis §3.2.3: size intervals (t_i, t_i+1] above T, each with a weight
 * 1 <= w^0 <= w^1 <= ...  Written "t_i:w_i" in the text syntax. */
struct panda_weight {
    uint32_t above;     /* t_i: applies to packets larger than this... */
    uint16_t weight;    /* ...up to the next t: counter += weight/100 x size
                         * (hundredths, >= 100). */
};

struct panda_policy {
    uint32_t id;                /* Stable policy id (counters survive
                                 * threshold changes of the same id). */
    enum panda_kind kind;
    uint32_t threshold;         /* T, bytes of TCP payload.  0 for PIAS. */

    /* Size intervals: packets with t_i < size <= t_i+1 weigh w_i; the last
     * interval is open above.  t_0 >= T; packets in [T, t_0] weigh 1. */
    uint8_t n_weights;
    struct panda_weight weights[PANDA_MAX_WEIGHTS];

    /* K levels, K-1 strictly ascending counter thresholds alpha.  A flow
     * is at level = number of alpha[j] that its counter exceeds. */
    uint8_t n_levels;
    uint64_t alpha[PANDA_MAX_LEVELS - 1];

    uint8_t dscp[PANDA_MAX_LEVELS];     /* Per-level DSCP, 0..63. */
    uint8_t queue[PANDA_MAX_LEVELS];    /* Per-level egress queue id. */

    /* Level for SYN/FIN/RST and non-TCP packets (default 0, the top). */
    uint8_t ctl_level;

    /* Lower bound of the counter (<= 0).  Default 0: a flow cannot bank
     * credit by sending small packets and later send bulk data at the top
     * level.  See the README ("Counter floor") for the reasoning. */
    int64_t floor;

    /* If nonzero, a connection idle for longer than this many milliseconds
     * starts again from counter 0 (PIAS message detection).  Default 0. */
    uint32_t idle_reset_ms;
};

/* Fills 'p' with the defaults for 'kind': K = 1 level (no thresholds),
 * T = 0, DSCP of level i = i + 1 (the thesis writes the priority number into
 * DSCP), queue of level i = i, control level 0, floor 0, no idle reset. */
void panda_policy_init(struct panda_policy *p, enum panda_kind kind);

/* Sets the per-level DSCP and queue maps of 'p' to the defaults for its
 * current n_levels. */
void panda_policy_default_maps(struct panda_policy *p);

/* Returns NULL if 'p' is valid, otherwise a malloc()ed message naming the
 * offending field, which the caller must free(). */
char *panda_policy_validate(const struct panda_policy *p);

/* Parses the textual form used by the OVS action and the tools, e.g.
 *   id=1,kind=panda,threshold=1460,weights=9000:1/65535:2,
 *   thresholds=100000/1000000/10000000,dscp=46/26/18/0,queues=0/1/2/3
 * Keys: id (required), kind (panda|pias, default panda), threshold,
 * weights, thresholds, dscp, queues, ctl_level, floor, idle_reset (ms).
 * Omitted dscp/queues take the defaults for K.  The result is validated.
 * Returns NULL on success, else a malloc()ed error message naming the
 * field (caller frees); 'p' is unspecified on error. */
char *panda_policy_parse(const char *s, struct panda_policy *p);

/* Formats 'p' in the syntax accepted by panda_policy_parse(), printing
 * optional fields only when they differ from their defaults, so that
 * parse(format(p)) == p.  Returns the number of characters that the full
 * string needs (like snprintf). */
int panda_policy_format(const struct panda_policy *p, char *buf, size_t size);

bool panda_policy_equal(const struct panda_policy *a,
                        const struct panda_policy *b);

/* Weight (in hundredths) applied to a packet of 'size' >= T. */
uint16_t panda_policy_weight(const struct panda_policy *p, uint32_t size);

/* Level for a counter value. */
static inline uint8_t
panda_policy_level(const struct panda_policy *p, int64_t counter)
{
    uint8_t level = 0;

    while (level + 1 < p->n_levels && counter > 0
           && (uint64_t) counter > p->alpha[level]) {
        level++;
    }
    return level;
}

/* Applies Algorithm 2 to 'counter' for one packet of 'size' payload bytes
 * (size > 0) and returns the new counter.  Saturates instead of wrapping and
 * never goes below p->floor. */
int64_t panda_counter_update(const struct panda_policy *p, int64_t counter,
                             uint32_t size);

/* ------------------------------------------------------------------------
 * Packets and verdicts.
 * ------------------------------------------------------------------------ */

#define PANDA_TCP_FIN 0x01
#define PANDA_TCP_SYN 0x02
#define PANDA_TCP_RST 0x04
#define PANDA_TCP_ACK 0x10

/* What the classifier needs to know of a packet.  Addresses and ports are
 * in network byte order (they are only compared and hashed). */
struct panda_pkt {
    uint8_t family;         /* 4 or 6. */
    uint8_t proto;          /* IP protocol; only 6 (TCP) keeps state. */
    uint8_t tcp_flags;      /* PANDA_TCP_* */
    uint16_t sport, dport;
    union {
        uint32_t v4;
        uint8_t v6[16];
    } src, dst;
    uint32_t payload;       /* TCP payload bytes, before segmentation. */
};

struct panda_verdict {
    uint8_t level;
    uint8_t dscp;
    uint8_t queue;
    bool stateful;          /* True if a connection entry was consulted. */
};

/* ------------------------------------------------------------------------
 * Connection table.
 *
 * Keyed by the directional 5-tuple (protocol is always TCP).  IPv4 entries
 * are 32 bytes, IPv6 entries 64 bytes.  Capacity is fixed at creation; when a
 * new connection finds its candidate slots full, the least recently seen
 * candidate is evicted (and counted).  Entries idle for longer than the idle
 * timeout are reclaimed lazily when their slots are needed.
 *
 * Concurrency: the table is split into shards, each protected by its own
 * mutex; a packet locks exactly one shard for the lookup and update, so
 * several datapath threads may call panda_classify() on the same table at
 * once, and two threads handling one connection serialise on its shard.
 * Statistics are kept per shard and summed by panda_table_stats().
 * panda_table_destroy() must not race with any other call.
 * ------------------------------------------------------------------------ */

struct panda_table;

struct panda_table_config {
    uint32_t capacity;          /* Max connections per address family. */
    uint32_t idle_timeout_ms;   /* 0: never expire by idleness. */
    uint32_t n_shards;          /* 0: automatic.  Rounded to a power of 2. */
};

#define PANDA_TABLE_DEFAULT_CAPACITY (1u << 20)
#define PANDA_TABLE_DEFAULT_IDLE_MS (120 * 1000)

struct panda_table_stats {
    uint64_t connections;       /* Live entries (IPv4 + IPv6). */
    uint64_t capacity;          /* Per-family capacity. */
    uint64_t inserted;
    uint64_t removed;           /* FIN/RST. */
    uint64_t evicted;           /* Pushed out by a new connection. */
    uint64_t expired;           /* Reclaimed after the idle timeout. */
    uint64_t packets[PANDA_MAX_LEVELS];     /* Packets per level. */
    uint64_t bytes_allocated;   /* Memory held by the table. */
};

/* Returns NULL on bad configuration or allocation failure, with a malloc()ed
 * message in '*errp' (if 'errp' is nonnull). */
struct panda_table *panda_table_create(const struct panda_table_config *,
                                       char **errp);
void panda_table_destroy(struct panda_table *);

/* Classifies one packet under policy 'p' at time 'now_ms' (any monotonic
 * millisecond clock), updating the connection's counter. */
void panda_classify(struct panda_table *, const struct panda_policy *p,
                    const struct panda_pkt *, uint32_t now_ms,
                    struct panda_verdict *);

/* Optional hint that 'pkt' will be classified in 't' soon: prefetches the
 * table memory that its lookup will touch, so that a caller with a batch of
 * packets can overlap their cache misses (prefetch all, then classify all).
 * No effect on results; no locking. */
void panda_table_prefetch(struct panda_table *, const struct panda_pkt *);

/* Looks up a connection without changing it.  Returns true and stores its
 * counter if it exists. */
bool panda_table_lookup(struct panda_table *, const struct panda_pkt *,
                        int64_t *counter);

void panda_table_flush(struct panda_table *);
void panda_table_stats(struct panda_table *, struct panda_table_stats *);

/* Calls 'cb' for every live connection (under the shard lock: 'cb' must not
 * call back into the table).  Stops early if 'cb' returns false. */
struct panda_conn_info {
    struct panda_pkt key;       /* Only family, ports and addresses set. */
    int64_t counter;
    uint32_t last_seen_ms;
};
void panda_table_foreach(struct panda_table *,
                         bool (*cb)(const struct panda_conn_info *, void *),
                         void *aux);

/* Size in bytes of one IPv4 / IPv6 entry. */
size_t panda_table_entry_size(int family);

/* ------------------------------------------------------------------------
 * DSCP rewriting helper: returns the IPv4 TOS / IPv6 traffic class byte with
 * its DSCP replaced by 'dscp' and its ECN bits kept.
 * ------------------------------------------------------------------------ */
static inline uint8_t
panda_tos_set_dscp(uint8_t tos, uint8_t dscp)
{
    return (uint8_t) ((dscp << 2) | (tos & 0x03));
}

const char *panda_kind_name(enum panda_kind);

#ifdef __cplusplus
}
#endif

#endif /* panda.h */

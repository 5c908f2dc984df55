/*
 * The Panda connection table: one counter per TCP connection, and the
 * per-packet classification (Algorithm 2, level, DSCP, queue) under a
 * policy.  Plain C, no OVS headers.
 *
 * Keyed by the directional 5-tuple (protocol is always TCP).  IPv4 entries
 * are 32 bytes, IPv6 entries 64 bytes.  Capacity is fixed at creation; when a
 * new connection finds its candidate slots full, room is made by moving
 * entries (cuckoo displacement) or, failing that, the least recently seen
 * candidate is evicted (and counted).  Entries idle for longer than the idle
 * timeout are reclaimed lazily when their slots are needed.
 *
 * Memory.  panda_table_create() allocates the table and its shard headers;
 * the slots of an address family are allocated on its first packet, so a
 * family that never shows up costs nothing.  Nothing here aborts when memory
 * runs out: creation fails with a message, and a family whose slots cannot
 * be allocated is classified statelessly (control level) and counted in
 * 'alloc_failures' until an allocation succeeds.
 *
 * Concurrency: the table is split into shards, each protected by its own
 * mutex; a packet locks exactly one shard for the lookup and update, so
 * several datapath threads may call panda_table_classify() on the same table
 * at once, and two threads handling one connection serialise on its shard.
 * Statistics are kept per shard and summed by panda_table_stats().
 * panda_table_destroy() must not race with any other call.
 */
#ifndef PANDA_CONN_TABLE_H
#define PANDA_CONN_TABLE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <panda/packet.h>
#include <panda/policy.h>

#ifdef __cplusplus
extern "C" {
#endif

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
    uint64_t alloc_failures;    /* Packets classified statelessly because
                                 * their family's slots could not be
                                 * allocated. */
    uint64_t packets[PANDA_MAX_LEVELS];     /* Packets per level. */
    uint64_t bytes_allocated;   /* Memory held by the table. */
};

/* What the classifier decided for one packet. */
struct panda_table_verdict {
    uint8_t level;
    uint8_t dscp;
    uint8_t queue;
    bool stateful;          /* True if a connection entry was consulted. */
};

/* Returns NULL on bad configuration or allocation failure, with a malloc()ed
 * message in '*errp' (if 'errp' is nonnull; the message itself is NULL if
 * even it could not be allocated). */
struct panda_table *panda_table_create(const struct panda_table_config *,
                                       char **errp);
void panda_table_destroy(struct panda_table *);

/* Classifies one packet under policy 'p' (which must be valid) at time
 * 'now_ms' (any monotonic millisecond clock), updating the connection's
 * counter. */
void panda_table_classify(struct panda_table *, const struct panda_policy *p,
                          const struct panda_pkt *, uint32_t now_ms,
                          struct panda_table_verdict *);

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

/* One live connection, as panda_table_foreach() reports it. */
struct panda_table_conn_info {
    struct panda_pkt key;       /* Only family, ports and addresses set. */
    int64_t counter;
    uint32_t last_seen_ms;
};

/* Calls 'cb' for every live connection (under the shard lock: 'cb' must not
 * call back into the table).  Stops early if 'cb' returns false. */
void panda_table_foreach(struct panda_table *,
                         bool (*cb)(const struct panda_table_conn_info *,
                                    void *),
                         void *aux);

/* Size in bytes of one IPv4 / IPv6 entry. */
size_t panda_table_entry_size(int family);

#ifdef __cplusplus
}
#endif

#endif /* panda/conn-table.h */

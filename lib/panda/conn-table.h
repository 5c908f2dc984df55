/*
 * The Panda connection table: one counter per TCP connection, and the
 * per-packet classification (Algorithm 2, level, DSCP, queue) under a
 * policy.  Plain C, no OVS headers.
 *
 * Keyed by the directional 5-tuple (protocol is always TCP).  IPv4 entries
 * are 24 bytes, IPv6 entries 48 bytes, the connection's payload bytes and
 * last packet's time included (bytes kept to within 0.55%, unbiased:
 * conn-table.c, "Flow bytes"; the counter saturates at +-2^34 - 1, 17 GB,
 * beyond any threshold a flow-size model gives).  Capacity is fixed at
 * creation; when a
 * new connection finds its candidate slots full, room is made by moving
 * entries (cuckoo displacement) while the table is not nearly full, else
 * the least recently seen candidate that is not established (has seen
 * fewer than a few packets) is evicted, else, rarely and only if it has
 * been silent for a second, the least recently seen established one; a new
 * connection that finds none of these is refused (untracked).  So a flood
 * of new tuples costs about what a lookup costs and replaces only its own
 * kind; established connections keep their counters.  All of it is
 * counted.  Entries idle for longer than the idle timeout are reclaimed
 * lazily when their slots are needed.
 *
 * An entry is created by the first packet of a connection that carries
 * payload; SYN, FIN, RST and pure ACKs only update an entry that exists.
 * FIN and RST end an entry but keep its counter for a SYN or data of the
 * same tuple (see panda_table_classify()).
 *
 * Memory.  panda_table_create() allocates the table and its shard headers;
 * the slots of an address family are allocated when its first entry is
 * created, so a family that never shows up costs nothing.  Nothing here
 * aborts when memory runs out: creation fails with a message, and the
 * packets of a family whose slots cannot be allocated are untracked (the
 * policy's untracked_level) and counted in 'alloc_failures' until an
 * allocation succeeds.
 *
 * Concurrency: several threads may classify in the same table at once,
 * and two threads that classify one connection keep one counter: a packet
 * of a known connection updates its entry with one compare-and-swap, no
 * lock; the table is split into shards, each with a mutex that only what
 * moves keys takes (a new connection's insertion, an idle entry's expiry,
 * flush, statistics, iteration).  conn-table.c, "Concurrency", has the
 * protocol and its one residual case (an update landing on another
 * connection in the identical state, moved into the slot while the
 * updating thread was descheduled).  Statistics are kept per shard and per table and summed by
 * panda_table_stats().  panda_table_destroy() must not race with any other
 * call.
 */
#ifndef PANDA_CONN_TABLE_H
#define PANDA_CONN_TABLE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <panda/classifier.h>
#include <panda/packet.h>
#include <panda/policy.h>
#include <panda/time.h>

#ifdef __cplusplus
extern "C" {
#endif

struct panda_table;
struct panda_sizehist;

struct panda_table_config {
    uint32_t capacity;          /* Max connections per address family. */
    panda_msec_t idle_timeout_ms;   /* 0: never expire by idleness; at most
                                     * PANDA_MAX_DURATION_MS. */
    uint32_t n_shards;          /* 0: automatic.  Rounded to a power of 2. */
    uint64_t seed;              /* Hash seed.  0: a fresh one per table, from
                                 * the clock and the table's address, so that
                                 * a sender cannot aim its tuples at one
                                 * bucket (the datapath's choice).  Nonzero:
                                 * this one, for runs that must place the
                                 * same connections in the same slots every
                                 * time (unit tests, simulations). */
};

#define PANDA_TABLE_DEFAULT_CAPACITY (1u << 20)
#define PANDA_TABLE_DEFAULT_IDLE_MS (120 * 1000)

struct panda_table_stats {
    uint64_t connections;       /* Live entries (IPv4 + IPv6). */
    uint64_t capacity;          /* Per-family capacity. */
    uint64_t inserted;
    uint64_t removed;           /* Ended by FIN/RST. */
    uint64_t resumed;           /* Ended entries taken up again by a SYN or
                                 * data of the same tuple, counter kept. */
    uint64_t evicted;           /* Pushed out by a new connection... */
    uint64_t evicted_established;   /* ...of which established ones. */
    uint64_t expired;           /* Reclaimed after the idle timeout. */
    uint64_t refused;           /* New connections not tracked: every
                                 * candidate slot held an established,
                                 * active connection (untracked_level). */
    uint64_t alloc_failures;    /* Packets untracked because their
                                 * family's slots could not be
                                 * allocated. */
    uint64_t packets[PANDA_MAX_LEVELS];     /* Packets per level. */
    uint64_t bytes_allocated;   /* Memory held by the table. */
};

/* What the classifier decided for one packet. */
struct panda_table_verdict {
    uint8_t level;
    uint8_t dscp;
    uint8_t queue;
    bool stateful;          /* True if a connection entry was used. */
};

/* The most memory, in bytes, that a table created with 'cfg' (valid) can
 * hold: its headers and the slots of both address families, as if both
 * were in use.  What a caller that budgets memory across tables reserves. */
uint64_t panda_table_max_bytes(const struct panda_table_config *cfg);

/* Returns NULL on bad configuration or allocation failure, with a malloc()ed
 * message in '*errp' (if 'errp' is nonnull; the message itself is NULL if
 * even it could not be allocated). */
struct panda_table *panda_table_create(const struct panda_table_config *,
                                       char **errp);
void panda_table_destroy(struct panda_table *);

/* Classifies one packet under policy 'p' (which must be valid) at time
 * 'now_ms' (any monotonic millisecond clock, the same for every call on one
 * table; threads whose clocks lag each other by a little are fine: an entry
 * last seen "in the future" counts as just seen), updating the connection's
 * counter.
 *
 * Levels: a TCP packet with an entry gets its connection's level, except a
 * bare SYN, FIN or RST (no payload), which gets p->ctl_level; a TCP packet
 * without an entry gets the level of counter 0 (ctl_level if bare SYN, FIN
 * or RST); a packet that cannot be tracked (not TCP, a later fragment, no
 * memory) gets p->untracked_level.  Rule kinds (app, match, length) keep no
 * entry: the first matching rule's level, else p->default_level; compose
 * applies its rules first and Panda to the rest, updating the counter of
 * every packet (panda/classifier.h).  Nothing a sender sends resets its
 * counter: only silence does (the idle timeout, the policy's idle_reset).
 * README.md, "Control packets", gives the reasons.  The level is
 * panda_cls_level()'s, with the entry's counter (or none); the verdict's
 * DSCP and queue are the policy's for that level.
 *
 * 't' may be NULL, for a caller that has no table for 'p': none is needed
 * for a rule kind, or none could be had (memory, limits).  The verdict is
 * then that of a packet that cannot be tracked: the rules, else the
 * untracked level (counter kinds) or the default level (rule kinds). */
void panda_table_classify(struct panda_table *, const struct panda_policy *p,
                          const struct panda_pkt *, panda_msec_t now_ms,
                          struct panda_table_verdict *);

/* panda_table_classify() of the 'n' packets 'pkts' in order, into the 'n'
 * verdicts 'v': what a datapath calls once per batch.  Each packet's key is
 * built and hashed once, and the table memory of every lookup prefetched
 * before the first is done, so that their cache misses overlap; the
 * statistics are added once per batch. */
void panda_table_classify_batch(struct panda_table *,
                                const struct panda_policy *p,
                                const struct panda_pkt *pkts, size_t n,
                                panda_msec_t now_ms,
                                struct panda_table_verdict *v);

/* Optional hint that 'pkt' will be classified in 't' soon: prefetches the
 * table memory that its lookup will touch, for a caller that classifies
 * packets one at a time (panda_table_classify_batch() does this itself).
 * No effect on results; no locking. */
void panda_table_prefetch(struct panda_table *, const struct panda_pkt *);

/* Looks up a connection without changing it.  Returns true and stores its
 * counter if it exists. */
bool panda_table_lookup(struct panda_table *, const struct panda_pkt *,
                        int64_t *counter);

/* Forgets every connection, counting the flows of the live ones into the
 * flow histogram (panda_table_set_flow_hist()). */
void panda_table_flush(struct panda_table *);

/* From now on, counts the payload bytes of every flow of the table into
 * 'h''s flow histogram (panda_sizehist_count_flow()) once: when it ends
 * (FIN or RST) or expires, if it carried payload in at least two packets
 * (conn-table.c, cstate_count_flow()), and when it is flushed, if it
 * carried payload; an evicted flow is not counted.  NULL: not at all (the
 * default).  Payload bytes are added up only while a histogram is set
 * (without one the per-packet path skips it): a flow that started before
 * the call is counted with the bytes it sent since.  Any thread, any time;
 * 'h' must outlive the table or the next call.  panda_table_destroy() counts nothing: a caller that wants the
 * flows still live counted flushes first. */
void panda_table_set_flow_hist(struct panda_table *,
                               struct panda_sizehist *h);
void panda_table_stats(struct panda_table *, struct panda_table_stats *);

/* One live connection, as panda_table_foreach() reports it. */
struct panda_table_conn_info {
    struct panda_pkt key;       /* Only family, ports and addresses set. */
    int64_t counter;
    uint64_t bytes;             /* Payload bytes so far (conn-table.c,
                                 * "Flow bytes": exact below 64 KiB). */
    panda_msec_t last_seen_ms;  /* Modulo 2^36: compare with
                                 * panda_table_age(). */
};

/* Calls 'cb' for every live connection (under the shard lock: 'cb' must not
 * call back into the table).  Stops early if 'cb' returns false. */
void panda_table_foreach(struct panda_table *,
                         bool (*cb)(const struct panda_table_conn_info *,
                                    void *),
                         void *aux);

/* Milliseconds from 'last_seen_ms' (as panda_table_foreach() reports it)
 * to 'now_ms'; 0 if 'last_seen_ms' is later. */
panda_msec_t panda_table_age(panda_msec_t now_ms, panda_msec_t last_seen_ms);

/* Size in bytes of one IPv4 / IPv6 entry. */
size_t panda_table_entry_size(int family);

#ifdef __cplusplus
}
#endif

#endif /* panda/conn-table.h */

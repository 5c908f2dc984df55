/*
 * The Panda connection table; see conn-table.h.
 *
 * Layout.  One sub-table per address family.  Each sub-table is split into
 * shards; a shard is an array of buckets of PANDA_WAYS slots.  A connection
 * hashes to one shard and to two candidate buckets in it (bucketized
 * two-choice hashing), so a lookup reads at most two buckets; on insertion,
 * entries may be moved to their other bucket (cuckoo displacement, two
 * levels deep), so the table fills to about 95% before a new connection has
 * to push an old one out.
 *
 * Entries.  The key words (IPv4: source, destination, ports, 12 bytes;
 * IPv6: 36), then the low 32 bits of the last packet's time, then the state
 * word: IPv4 24 bytes, IPv6 48.  Every slot of a family has the same size,
 * so there is no tag: a lookup compares keys (the ports word first, which
 * differs between most connections of one host pair).  The state word is
 * all that a packet changes, so that one compare-and-swap applies a packet
 * (see "Concurrency"):
 *
 *   bits  0-34  the counter, 35-bit two's complement, saturating at
 *               +-(2^34 - 1) (17 GB of payload: a threshold above that is
 *               never exceeded; policies' thresholds are flow sizes, far
 *               below);
 *   bits 35-54  payload bytes of the flow, a 20-bit float (below);
 *   bits 55-57  packets seen, saturating at 7: only "at least
 *               ESTABLISHED_PACKETS (4)" is ever asked, to tell an
 *               established connection from one packet of a flood; 0 only
 *               in a free slot (state 0) or a busy one (STATE_BUSY);
 *   bit  58     the flow has been counted in the flow-size histogram;
 *   bit  59     live (a connection not ended by FIN or RST);
 *   bits 60-63  bits 32-35 of the last packet's time, whose low 32 bits
 *               are the word before: ms modulo 2^36 (2.2 years), so that
 *               every idle time up to 2^35 ms (1.1 years) compares right
 *               and no duration can exceed PANDA_MAX_DURATION_MS (2^32 - 1
 *               ms, 49.7 days).
 *
 * Flow bytes.  5 bits of exponent and 15 of mantissa: exact below 65536
 * bytes; above, a multiple of the unit u = 2^(e-1) <= value / 2^15, up to
 * (2^16 - 1) * 2^30 bytes (70 TB, saturating).  Adding a payload rounds the
 * exact sum to a multiple of u up or down at random with the probabilities
 * that make the expected result the exact sum (the thread's generator,
 * drawn only above 64 KiB), so the estimate is unbiased: no drift however
 * many packets a flow has.  Each rounding adds variance at most u * x for a
 * payload x (and u^2 / 4 the rare times the exponent grows), so a flow of V
 * bytes ends with a standard deviation at most V * 2^-7.5 (0.55%) --
 * against flow-size buckets 19% to 25% wide (panda/sizehist.h), it decides
 * the bucket only for flows within a percent or two of an edge.  Why not
 * the alternatives: a bounded exact counter (32 bits) would need the bits
 * of the counter and stop at 4 GiB, in the range of data-mining flows; a
 * deterministic float truncation is biased down by up to a unit per
 * packet, which compounds over millions of packets.
 *
 * A flow is counted once (bit 58) into the table's flow histogram
 * (panda_table_set_flow_hist()) when it ends by FIN or RST or its entry
 * expires, if it is a flow a tenant cannot mint at one packet a tuple
 * (entry_count_flow()), and when the table is flushed.  An evicted entry is
 * not counted: its end is unknown, and eviction is what a flood of new
 * tuples causes.  An ended entry that data resumes (a retransmission after
 * the FIN) is the same flow, already counted; one that a SYN resumes is a
 * new flow of the same tuple, whose bytes start from 0 (its Algorithm-2
 * counter is kept, state_apply()).  The policy id is not in the key: the
 * datapath keeps one table per policy id.
 *
 * Concurrency.  A packet of a known connection takes no lock: it reads the
 * state word, checks the key, computes the new state (state_apply()) and
 * installs it with one compare-and-swap, retrying if another thread changed
 * the word meanwhile, so two threads that classify one connection keep one
 * counter and lose no update.  Only what moves keys takes the shard's
 * mutex: an insertion (a new connection, with the expiry, displacement or
 * eviction it may need), the expiry of an idle entry found by its own next
 * packet, flush.  A thread that changes a slot's key first swaps its state
 * to STATE_BUSY and raises the shard's claim count, then writes the key,
 * then publishes the new state (release order), and a reader checks the
 * state word before and after it reads the key: a key read while it
 * changed is never taken for a match.  A packet that finds no entry, or a
 * busy slot, takes the shard's mutex and looks again before inserting, so
 * a connection is never inserted twice.
 *
 * The state word is the only thing the compare-and-swap compares, and two
 * connections can have the same one (the same counter, flow bytes and
 * packets: connections that sent the same bytes, or Panda's small-packet
 * connections held at the counter's floor with histograms off).  Cuckoo
 * displacement moves entries with their states, so while a reader holds
 * "slot P, state s" the mutex holder can move its connection out of P and
 * another with state s in.  The reader therefore reads the shard's claim
 * count before it looks and swaps only if the count is unchanged just
 * before the swap (state_install()).  One window remains: a thread
 * descheduled between that check and the swap (two instructions) while
 * the mutex holder moves another connection in the same state into the
 * slot; then one packet's update is applied to that connection instead
 * (both had the same counter: the error is one packet's bytes, moved
 * between two connections; how often, under the worst case, is in
 * docs/results/2026-11-27-fastpath-lockfree/).  Closing it needs a version
 * or key fingerprint in the compared word, which costs bits of the counter
 * or of the flow bytes, or a 16-byte compare-and-swap over a larger entry.
 * The low time word is written after the state, without ordering (the
 * last writer's "now" wins; every writer's "now" is the present).
 *
 * Replacement.  A new connection takes, in order: a free slot among its 2 x
 * PANDA_WAYS candidates, a candidate whose connection has been idle longer
 * than the idle timeout (counted as "expired"), a slot freed by moving a
 * candidate to its other bucket (cuckoo displacement, two levels deep), or
 * the least recently seen candidate (counted as "evicted").  Memory never
 * grows after creation.
 *
 * Allocation.  Nothing here uses the aborting x-allocators: the datapath
 * calls this code, and a failed allocation must become an error (creation)
 * or an untracked verdict (a family's slots, allocated when its first
 * connection needs an entry), never an abort of ovs-vswitchd.
 */
#include <panda/conn-table.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <panda/base.h>
#include <panda/classifier.h>
#include <panda/rng.h>
#include <panda/sizehist.h>

#define PANDA_WAYS 4
#define CACHE_LINE 64
#define ALLOC_RETRY_MS 1000     /* After a failed slot allocation, do not
                                 * try again for this long. */
#define LOCKLESS_TRIES 8        /* Compare-and-swap failures before a
                                 * packet takes the shard's mutex. */

/* Replacement under pressure (probe_insert()).  An entry is established
 * once it has seen ESTABLISHED_PACKETS packets.  When a new connection finds
 * every candidate established, it takes the slot of the least recently
 * seen one with probability 1/ADMIT_ONE_IN, and only if that one has been
 * silent for ACTIVE_MS: established connections that are sending are never
 * pushed out by new tuples.  Cuckoo displacement is tried only while a
 * shard has fewer than 15/16 of its slots live (CUCKOO_MAX_FILL_16THS). */
#define ESTABLISHED_PACKETS 4     /* At most ST_PACKETS_MAX. */
#define ADMIT_ONE_IN 16
#define ACTIVE_MS 1000
#define CUCKOO_MAX_FILL_16THS 15

/* The state word ("Entries" above). */
#define ST_COUNTER_BITS 35
#define ST_COUNTER_MASK ((UINT64_C(1) << ST_COUNTER_BITS) - 1)
#define ST_COUNTER_MAX ((INT64_C(1) << (ST_COUNTER_BITS - 1)) - 1)
#define ST_BYTES_SHIFT 35
#define ST_BYTES_MASK ((UINT64_C(1) << 20) - 1)
#define ST_PACKETS_SHIFT 55
#define ST_PACKETS_MAX 7            /* 3 bits, saturating. */
#define ST_COUNTED (UINT64_C(1) << 58)
#define ST_LIVE (UINT64_C(1) << 59)
#define ST_TIME_HI_SHIFT 60
#define TIME_BITS 36
#define TIME_MASK ((UINT64_C(1) << TIME_BITS) - 1)
/* A slot whose key a thread holding the shard's mutex is changing: packets
 * 0, unlike any published entry. */
#define STATE_BUSY ST_LIVE

_Static_assert(ST_BYTES_SHIFT == ST_COUNTER_BITS, "state word layout");
_Static_assert(ST_PACKETS_SHIFT == ST_BYTES_SHIFT + 20, "state word layout");
_Static_assert(ST_TIME_HI_SHIFT + TIME_BITS - 32 == 64, "state word layout");

struct shard {
    pthread_mutex_t mutex;  /* Taken to change keys (file comment). */
    uint8_t *slots;         /* n_buckets * PANDA_WAYS entries. */
    uint32_t claims;        /* Slots claimed so far (atomic, written under
                             * the mutex; "Concurrency"). */
    /* Changed by packets without the mutex (atomics): */
    uint32_t n_live;
    uint64_t removed, resumed;
    /* Under the mutex: */
    uint64_t inserted, evicted, expired;
    uint64_t evicted_established, refused;
    struct panda_rng rng;   /* For the admission of new connections. */
} __attribute__((aligned(CACHE_LINE)));

struct subtable {
    unsigned int key_words;
    size_t entry_size;
    uint32_t n_buckets;         /* Per shard. */
    uint32_t cuckoo_max_live;   /* Per shard: no displacement from here. */
    struct shard *shards;
    void *raw;                  /* Allocation backing all shards' slots. */
    size_t raw_size;
    int ready;                  /* Slots allocated (atomic; see below). */
    bool alloc_failed;          /* Last allocation attempt failed... */
    panda_msec_t alloc_failed_ms;   /* ...at this time (under
                                     * 'alloc_mutex'). */
};

struct panda_table {
    struct panda_table_config cfg;
    unsigned int shard_bits;
    uint64_t seed;
    struct subtable v4, v6;
    pthread_mutex_t alloc_mutex;                /* Lazy slot allocation. */
    uint64_t packets[PANDA_MAX_LEVELS];         /* Atomics, added once per
                                                 * batch. */
    uint64_t alloc_failures;                    /* Atomic. */
    struct panda_sizehist *flow_hist;           /* Atomic; or NULL. */
};

size_t
panda_table_entry_size(int family)
{
    return family == 6 ? 48 : 24;
}

/* ---- Slots. ---- */

/* A slot is 'key_words' words of key, the low time word, then the state
 * word (8-byte aligned: 3 + 1 and 9 + 1 words). */
_Static_assert((3 + 1) % 2 == 0 && (9 + 1) % 2 == 0, "state alignment");

/* The per-packet functions below take the key's width 'kw' (3 or 9) as
 * an argument that the callers pass as a constant (classify_probe()), so
 * that each family gets code with its sizes and offsets built in. */
#define ENTRY_SIZE(KW) (4 * ((KW) + 3))

static inline uint32_t *
slot_at_kw(const struct shard *sh, unsigned int kw, uint32_t bucket,
           unsigned int way)
{
    return (uint32_t *) (sh->slots + ((size_t) bucket * PANDA_WAYS + way)
                                     * ENTRY_SIZE(kw));
}

static inline uint32_t *
slot_at(const struct subtable *st, const struct shard *sh, uint32_t bucket,
        unsigned int way)
{
    return slot_at_kw(sh, st->key_words, bucket, way);
}

static inline uint64_t *
slot_state_kw(unsigned int kw, uint32_t *e)
{
    return (uint64_t *) (void *) (e + kw + 1);
}

static inline uint64_t *
slot_state(const struct subtable *st, uint32_t *e)
{
    return slot_state_kw(st->key_words, e);
}

static inline uint32_t *
slot_time(const struct subtable *st, uint32_t *e)
{
    return e + st->key_words;
}

static inline uint64_t
load_state(const struct subtable *st, uint32_t *e)
{
    return __atomic_load_n(slot_state(st, e), __ATOMIC_ACQUIRE);
}

static inline void
publish_state(const struct subtable *st, uint32_t *e, uint64_t s)
{
    __atomic_store_n(slot_state(st, e), s, __ATOMIC_RELEASE);
}

static inline bool
cas_state(const struct subtable *st, uint32_t *e, uint64_t *expected,
          uint64_t desired)
{
    return __atomic_compare_exchange_n(slot_state(st, e), expected, desired,
                                       false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

/* The state word of 'e', a slot of 'sh', swapped for STATE_BUSY (under
 * the shard's mutex, before its key changes), then the shard's claim count
 * raised, in that order (see "Concurrency"). */
static uint64_t
claim_slot(const struct subtable *st, struct shard *sh, uint32_t *e)
{
    uint64_t s = load_state(st, e);

    while (!cas_state(st, e, &s, STATE_BUSY)) {
        continue;
    }
    __atomic_fetch_add(&sh->claims, 1, __ATOMIC_RELEASE);
    return s;
}

/* The shard's claim count, read before a packet looks for its entry
 * without the mutex. */
static inline uint32_t
shard_claims(const struct shard *sh)
{
    return __atomic_load_n(&sh->claims, __ATOMIC_ACQUIRE);
}

/* Installs 'ns' in the state word 'state' of an entry found without the
 * mutex, whose state was 's' when its key matched the packet's, after the
 * shard's claim count was read as 'claims'.  A compare-and-swap from 's'
 * alone could land on another connection: a slot's key may change (a
 * claim) and the slot take another entry whose state is also 's' --
 * cuckoo displacement moves entries with their states, and connections
 * that sent the same bytes have the same state.  So the swap is done only
 * if no slot of the shard has been claimed since 'claims' (then the key
 * checked is still the slot's).  Returns true if 'ns' is in place, false
 * if the caller must look again.  Undoing a swap that a claim raced after
 * this check would be no safer (the undo can meet the same coincidence),
 * so the window that remains is the one between this load and the swap:
 * "Concurrency" above. */
PANDA_INLINE bool
state_install(const struct shard *sh, uint32_t claims, uint64_t *state,
              uint64_t s, uint64_t ns)
{
    return (__atomic_load_n(&sh->claims, __ATOMIC_RELAXED) == claims
            && __atomic_compare_exchange_n(state, &s, ns, false,
                                           __ATOMIC_ACQ_REL,
                                           __ATOMIC_RELAXED));
}

static inline void
write_key(const struct subtable *st, uint32_t *e, const uint32_t *key)
{
    unsigned int i;

    for (i = 0; i < st->key_words; i++) {
        __atomic_store_n(&e[i], key[i], __ATOMIC_RELAXED);
    }
}

PANDA_INLINE bool
key_equal_kw(unsigned int n, const uint32_t *e, const uint32_t *key)
{
    unsigned int i;

    /* The ports word first: it tells most connections of a host pair
     * apart. */
    if (__atomic_load_n(&e[n - 1], __ATOMIC_RELAXED) != key[n - 1]) {
        return false;
    }
    for (i = 0; i + 1 < n; i++) {
        if (__atomic_load_n(&e[i], __ATOMIC_RELAXED) != key[i]) {
            return false;
        }
    }
    return true;
}

static inline bool
key_equal(const struct subtable *st, const uint32_t *e, const uint32_t *key)
{
    return key_equal_kw(st->key_words, e, key);
}

static inline unsigned int
state_packets(uint64_t s)
{
    return s >> ST_PACKETS_SHIFT & ST_PACKETS_MAX;
}

static inline bool
state_busy(uint64_t s)
{
    return s && !state_packets(s);
}

static inline int64_t
state_counter(uint64_t s)
{
    return (int64_t) (s << (64 - ST_COUNTER_BITS)) >> (64 - ST_COUNTER_BITS);
}

static inline uint32_t
state_fb(uint64_t s)
{
    return (uint32_t) (s >> ST_BYTES_SHIFT & ST_BYTES_MASK);
}

/* The last packet's time, modulo 2^36, of the entry at 'e' whose state is
 * 's'. */
static inline panda_msec_t
slot_seen(const struct subtable *st, uint32_t *e, uint64_t s)
{
    return (s >> ST_TIME_HI_SHIFT) << 32
           | __atomic_load_n(slot_time(st, e), __ATOMIC_RELAXED);
}

/* ---- Hashing and probing. ---- */

static inline uint32_t
fastrange32(uint32_t x, uint32_t n)
{
    return (uint32_t) (((uint64_t) x * n) >> 32);
}

PANDA_INLINE uint64_t
hash_key(const uint32_t *key, unsigned int n, uint64_t seed)
{
    uint64_t h;
    unsigned int i;

    if (n == 3) {
        /* IPv4, the per-packet case: two rounds of the mixer. */
        h = panda_mix64((key[0] | (uint64_t) key[1] << 32) ^ seed);
        return panda_mix64(h ^ key[2] ^ (uint64_t) n << 32);
    }
    h = seed;
    for (i = 0; i + 1 < n; i += 2) {
        uint64_t w = key[i] | ((uint64_t) key[i + 1] << 32);

        h = (h ^ panda_mix64(w)) * 0x9e3779b97f4a7c15ULL;
    }
    if (i < n) {
        h = (h ^ panda_mix64(key[i])) * 0x9e3779b97f4a7c15ULL;
    }
    return panda_mix64(h ^ n);
}

/* What a packet needs to find its entry: its key, its sub-table, its shard
 * and its two candidate buckets. */
struct probe {
    struct subtable *st;        /* NULL: nothing to look up. */
    struct shard *shard;
    uint32_t b[2];
    uint8_t *bucket[2];         /* The buckets' first slots. */
    uint32_t key[9];
};

/* Builds the key words of 'pkt' into 'pr'; returns the sub-table to use. */
static inline struct subtable *
pkt_key(struct panda_table *t, const struct panda_pkt *pkt, uint32_t *key)
{
    uint32_t ports = (uint32_t) pkt->sport << 16 | pkt->dport;

    if (pkt->family == 6) {
        memcpy(key, pkt->src.v6, 16);
        memcpy(key + 4, pkt->dst.v6, 16);
        key[8] = ports;
        return &t->v6;
    }
    key[0] = pkt->src.v4;
    key[1] = pkt->dst.v4;
    key[2] = ports;
    return &t->v4;
}

/* The shard and the two candidate buckets of 'key' ('kw' words) in
 * 'st'. */
PANDA_INLINE void
place_hash(uint64_t h, struct shard *shards, unsigned int shard_bits,
           uint32_t n_buckets, struct shard **shard, uint32_t b[2])
{
    /* Two shifts, so that 0 shard bits shift by 32, not 64. */
    *shard = &shards[h >> 32 >> (32 - shard_bits)];
    b[0] = fastrange32((uint32_t) h, n_buckets);
    b[1] = fastrange32((uint32_t) (h >> 24) * 0x9e3779b1u, n_buckets);
    if (b[1] == b[0] && n_buckets > 1) {
        b[1] = b[0] + 1 < n_buckets ? b[0] + 1 : 0;
    }
}

PANDA_INLINE void
probe_place_kw(const struct panda_table *t, const struct subtable *st,
               unsigned int kw, const uint32_t *key, struct shard **shard,
               uint32_t b[2])
{
    place_hash(hash_key(key, kw, t->seed), st->shards, t->shard_bits,
               st->n_buckets, shard, b);
}

static void
probe_place(const struct panda_table *t, const struct subtable *st,
            const uint32_t *key, struct shard **shard, uint32_t b[2])
{
    probe_place_kw(t, st, st->key_words, key, shard, b);
}

PANDA_INLINE void
probe_init_kw(struct panda_table *t, struct subtable *st, unsigned int kw,
              struct probe *pr)
{
    unsigned int b;

    pr->st = st;
    probe_place_kw(t, st, kw, pr->key, &pr->shard, pr->b);
    for (b = 0; b < 2; b++) {
        pr->bucket[b] = (uint8_t *) slot_at_kw(pr->shard, kw, pr->b[b], 0);
    }
}

PANDA_INLINE void
probe_init(struct panda_table *t, struct subtable *st, struct probe *pr)
{
    if (st->key_words == 3) {
        probe_init_kw(t, st, 3, pr);
    } else {
        probe_init_kw(t, st, 9, pr);
    }
}

/* Prefetches the two buckets of 'pr', a line every CACHE_LINE bytes from
 * the bucket's start.  That covers every line a bucket touches because
 * buckets start at multiples of 32 bytes from the line-aligned slots
 * (subtable_alloc()): an IPv4 bucket (96 bytes) starts at 0 or 32 bytes
 * into a line and ends in the next, an IPv6 bucket (192 bytes) fills three
 * lines. */
_Static_assert(PANDA_WAYS * ENTRY_SIZE(3) == 96
               && PANDA_WAYS * ENTRY_SIZE(9) == 3 * CACHE_LINE,
               "bucket sizes that probe_prefetch_kw() covers");
PANDA_INLINE void
probe_prefetch_kw(const struct probe *pr, unsigned int kw)
{
    const size_t span = PANDA_WAYS * ENTRY_SIZE(kw);
    unsigned int b;
    size_t off;

    for (b = 0; b < 2; b++) {
        for (off = 0; off < span; off += CACHE_LINE) {
            __builtin_prefetch(pr->bucket[b] + off);
        }
    }
}

static inline void
probe_prefetch(const struct probe *pr)
{
    if (pr->st->key_words == 3) {
        probe_prefetch_kw(pr, 3);
    } else {
        probe_prefetch_kw(pr, 9);
    }
}

enum find_result {
    FOUND,          /* '*ep' is the entry, '*sp' its state with that key. */
    MISSING,        /* No entry with the key, or one whose key is being
                     * changed: only the shard's mutex can tell. */
    CHANGED,        /* The entry changed while its key was read: again. */
};

/* Looks for the entry of 'pr''s key ('kw' words) without the mutex. */
PANDA_INLINE enum find_result
probe_find(const struct probe *pr, unsigned int kw, uint32_t **ep,
           uint64_t *sp)
{
    unsigned int b, w;

    for (b = 0; b < 2; b++) {
        for (w = 0; w < PANDA_WAYS; w++) {
            uint32_t *e = (uint32_t *) (void *) (pr->bucket[b]
                                                 + w * ENTRY_SIZE(kw));
            uint64_t s = __atomic_load_n(slot_state_kw(kw, e),
                                         __ATOMIC_ACQUIRE);

            if (s && key_equal_kw(kw, e, pr->key)) {
                /* The key was read between two reads of the state: if
                 * they agree, it is the key of the entry with that
                 * state. */
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (__atomic_load_n(slot_state_kw(kw, e), __ATOMIC_RELAXED)
                    != s) {
                    return CHANGED;
                }
                if (PANDA_UNLIKELY(state_busy(s))) {
                    return MISSING;
                }
                *ep = e;
                *sp = s;
                return FOUND;
            }
        }
    }
    return MISSING;
}

/* ---- Time. ---- */

/* An entry keeps its last packet's instant modulo 2^36; an age is the
 * difference modulo 2^36, and a difference in the upper half of that range
 * is an entry last seen "in the future" by a thread whose clock lags
 * another's: age 0.  Ages are 64-bit, so durations up to
 * PANDA_MAX_DURATION_MS (2^32 - 1) compare without truncation. */
static inline panda_msec_t
age36(panda_msec_t now, panda_msec_t then)
{
    uint64_t d = (now - then) & TIME_MASK;

    return d >> (TIME_BITS - 1) ? 0 : d;
}

panda_msec_t
panda_table_age(panda_msec_t now, panda_msec_t last_seen)
{
    return age36(now, last_seen);
}

/* The longest age 't' lets an entry reach before it expires: its idle
 * timeout, or an age no entry exceeds (age36()'s range) if it has none,
 * so that the per-packet check is one comparison ('t' may be NULL). */
static inline panda_msec_t
table_idle_limit(const struct panda_table *t)
{
    return t && t->cfg.idle_timeout_ms ? t->cfg.idle_timeout_ms : TIME_MASK;
}

/* True if an entry last seen at 'seen' has been silent for longer than
 * 'timeout' (0: never). */
static inline bool
is_idle(panda_msec_t seen, panda_msec_t now, panda_msec_t timeout)
{
    return timeout && age36(now, seen) > timeout;
}

/* ---- Flow bytes. ---- */

/* The flow-bytes float (20 bits): exponent 'e' (5 bits) above mantissa
 * 'm' (15 bits); the value is m if e = 0, else (2^15 + m) << (e - 1). */
#define FB_MANT_BITS 15
#define FB_EXP_MAX 31
#define FB_MAX (((UINT64_C(1) << (FB_MANT_BITS + 1)) - 1) << (FB_EXP_MAX - 1))

/* The thread's generator for the rounding of flow bytes: a splitmix64
 * sequence, so that threads need not share one (it would be written by
 * every packet of every thread) and a single-threaded run is the same
 * every time. */
static __thread uint64_t fb_rng_state = UINT64_C(0x5eed5eed5eed5eed);

static inline uint64_t
fb_random(void)
{
    fb_rng_state += UINT64_C(0x9e3779b97f4a7c15);
    return panda_mix64(fb_rng_state);
}

/* The value of flow-bytes float 'f'. */
PANDA_INLINE uint64_t
fb_decode(uint32_t f)
{
    uint32_t e = f >> FB_MANT_BITS;
    uint64_t m = f & ((1u << FB_MANT_BITS) - 1);

    return e ? (m | 1u << FB_MANT_BITS) << (e - 1) : m;
}

/* The flow-bytes float nearest 'v', rounded up or down at random so that
 * its expected value is 'v' (see "Flow bytes" above); FB_MAX and above
 * saturate.  The generator is drawn only when 'v' is not representable. */
static inline uint32_t
fb_encode(uint64_t v)
{
    unsigned int s;
    uint64_t q, r;

    if (v < UINT64_C(1) << (FB_MANT_BITS + 1)) {
        /* Exact: e = 0 holds [0, 2^15), e = 1 [2^15, 2^16) with unit 1. */
        return v >> FB_MANT_BITS ? (1u << FB_MANT_BITS) | (uint32_t) v
                                 : (uint32_t) v;
    }
    if (v >= FB_MAX) {
        return (FB_EXP_MAX << FB_MANT_BITS) | ((1u << FB_MANT_BITS) - 1);
    }
    s = 63 - __builtin_clzll(v) - FB_MANT_BITS;     /* Unit 2^s, s >= 1. */
    q = v >> s;                                     /* [2^15, 2^16). */
    r = v & ((UINT64_C(1) << s) - 1);
    if (r && fb_random() >> (64 - s) < r) {
        q++;
        if (q >> (FB_MANT_BITS + 1)) {
            q >>= 1;
            s++;
        }
    }
    if (s + 1 > FB_EXP_MAX) {
        return (FB_EXP_MAX << FB_MANT_BITS) | ((1u << FB_MANT_BITS) - 1);
    }
    return (uint32_t) (s + 1) << FB_MANT_BITS
           | (uint32_t) (q & ((1u << FB_MANT_BITS) - 1));
}

/* Flow-bytes float 'f' plus 'payload' bytes.  Below 2^16 bytes the float
 * is the byte count itself (exponent 0 holds [0, 2^15) and exponent 1
 * [2^15, 2^16), both with unit 1), so a flow that stays there, most of
 * them, adds in place.  A flow past 64 KiB whose exponent the payload does
 * not change works on the mantissa in place (the same rounding as
 * fb_encode(): whole units, and one more with probability remainder /
 * unit); the rest goes through fb_encode() on the exact sum. */
PANDA_INLINE uint32_t
fb_add(uint32_t f, uint32_t payload)
{
    uint64_t exact = (uint64_t) f + payload;
    uint32_t ex = f >> FB_MANT_BITS;

    if (exact < UINT64_C(1) << (FB_MANT_BITS + 1)) {
        return (uint32_t) exact;
    }
    if (ex >= 2 && ex < FB_EXP_MAX) {
        unsigned int sh_bits = ex - 1;      /* Unit 2^sh_bits. */
        uint64_t q = (f & ((1u << FB_MANT_BITS) - 1)) | 1u << FB_MANT_BITS;
        uint32_t r = payload & ((1u << sh_bits) - 1);

        q += payload >> sh_bits;
        q += r && fb_random() >> (64 - sh_bits) < r;
        if (!(q >> (FB_MANT_BITS + 1))) {
            return ex << FB_MANT_BITS
                   | (uint32_t) (q & ((1u << FB_MANT_BITS) - 1));
        }
    }
    return fb_encode(fb_decode(f) + payload);
}

/* ---- Applying a packet to an entry. ---- */

/* An entry's state, unpacked. */
struct cstate {
    int64_t counter;
    uint32_t fb;            /* Flow bytes, the float. */
    unsigned int packets;
    bool counted, live;
    panda_msec_t seen;      /* Modulo 2^36. */
};

PANDA_INLINE void
state_unpack(uint64_t s, uint32_t time_lo, struct cstate *c)
{
    c->counter = state_counter(s);
    c->fb = state_fb(s);
    c->packets = state_packets(s);
    c->counted = s & ST_COUNTED;
    c->live = s & ST_LIVE;
    c->seen = (s >> ST_TIME_HI_SHIFT) << 32 | time_lo;
}

PANDA_INLINE uint64_t
state_pack(const struct cstate *c)
{
    int64_t counter = c->counter;

    if (counter > ST_COUNTER_MAX) {
        counter = ST_COUNTER_MAX;
    } else if (counter < -ST_COUNTER_MAX) {
        counter = -ST_COUNTER_MAX;
    }
    return ((uint64_t) counter & ST_COUNTER_MASK)
           | (uint64_t) c->fb << ST_BYTES_SHIFT
           | (uint64_t) c->packets << ST_PACKETS_SHIFT
           | (c->counted ? ST_COUNTED : 0) | (c->live ? ST_LIVE : 0)
           | (c->seen & TIME_MASK) >> 32 << ST_TIME_HI_SHIFT;
}

/* A flow that ends (FIN, RST, expiry) is counted in the flow-size
 * histogram only if it sent payload in at least FLOW_MIN_PACKETS packets
 * (bare SYNs and FINs do not create entries, so an entry has at least one
 * payload packet).  One packet per tuple is what a tenant sends to mint
 * flows (it needs no handshake to reach the datapath), and a flow
 * histogram full of them would teach the model a flow-size distribution
 * the tenant chose; two packets per flow cost it twice as much and, with
 * the FIN, three.  Real flows send at least the request and the response.
 * A flush counts every live flow with payload (min_packets 1). */
#define FLOW_MIN_PACKETS 2

/* What happened to an entry besides its counter (state_apply()). */
enum {
    EV_RESUMED = 1 << 0,    /* An ended entry was taken up again. */
    EV_ENDED = 1 << 1,      /* A live entry was ended by FIN or RST. */
    EV_COUNT = 1 << 2,      /* Its flow is to be counted, now and once. */
};

/* Marks the flow of 'c' counted, unless it has been (each flow once: see
 * "Entries" above); returns EV_COUNT if it is to go into the flow
 * histogram (flow_count()): it sent payload, in at least 'min_packets'
 * packets. */
PANDA_INLINE int
cstate_count_flow(struct cstate *c, unsigned int min_packets)
{
    if (c->counted) {
        return 0;
    }
    c->counted = true;
    return c->fb && c->packets >= min_packets ? EV_COUNT : 0;
}

/* Applies 'pkt' at 'now' to the connection state 'c' (found or just
 * inserted) and returns the packet's level (panda_cls_level(), with the
 * entry's counter after the table's bookkeeping below); '*events' gets the
 * EV_* that the caller accounts for once the new state is in place.  The
 * rules (README, "Control packets"), so that nothing a sender sends resets
 * its counter sooner than silence does:
 *
 *   - SYN, FIN and RST never reset the counter.  A SYN on a live entry is
 *     a no-op for the receiver (RFC 5961: challenge ACK), so it is one for
 *     the counter too.  FIN and RST end the entry (no longer live, its slot
 *     reusable) but keep its counter: a SYN or data for the same tuple while
 *     the entry is still there resumes it, counter and all ("resumed").
 *     The entry stays at most the idle timeout after its last packet, the
 *     hold time of a closed connection's counter.  The sender's sequence
 *     numbers are not checked: it chooses them, so a check that an honest
 *     reuse passes, a sender resetting itself passes too.
 *   - The counter restarts only after silence: the table's idle timeout
 *     (the entry is forgotten) or the policy's idle_reset.
 *   - A bare SYN, FIN or RST (no payload, headers of a normal size)
 *     takes the control level; one that carries data (a FIN on the last
 *     segment, TCP Fast Open) or headers longer than any TCP stack sends
 *     (PANDA_MAX_HDR_LEN) is data: those bytes count and it takes the
 *     connection's level.
 *
 * Pure: a caller whose compare-and-swap fails applies the packet again to
 * the state it found instead. */
PANDA_INLINE uint8_t
state_apply(const struct panda_policy *p, const struct panda_pkt *pkt,
            panda_msec_t now, bool count_bytes, struct cstate *c,
            int *events)
{
    uint8_t level;

    *events = 0;
    if (!c->live && (pkt->payload || pkt->tcp_flags & PANDA_TCP_SYN)) {
        c->live = true;
        *events |= EV_RESUMED;
        if (pkt->tcp_flags & PANDA_TCP_SYN) {
            /* A new flow of the same tuple: its own bytes, to be counted.
             * Data alone continues the flow already counted. */
            c->fb = 0;
            c->counted = false;
        }
    }
    if (c->packets && is_idle(c->seen, now, p->idle_reset_ms)) {
        c->counter = 0;
    }
    level = panda_cls_level(p, &c->counter, pkt);
    if (pkt->payload && count_bytes) {
        /* Only while someone counts flows: with no flow histogram (the
         * datapath's other_config:panda-histograms=false) the table costs
         * what it did before flows were counted. */
        c->fb = fb_add(c->fb, pkt->payload);
    }
    /* Touched first: the packet that ends the flow is one of its packets
     * (cstate_count_flow()). */
    c->packets += c->packets < ST_PACKETS_MAX;
    c->seen = now & TIME_MASK;
    if (pkt->tcp_flags & (PANDA_TCP_FIN | PANDA_TCP_RST)) {
        if (c->live) {
            *events |= EV_ENDED;
        }
        *events |= cstate_count_flow(c, FLOW_MIN_PACKETS);
        c->live = false;
    }
    return level;
}

/* Counts the flow of bytes 'fb' in the table's flow histogram. */
static void
flow_count(const struct panda_table *t, uint32_t fb)
{
    struct panda_sizehist *h = __atomic_load_n(&t->flow_hist,
                                               __ATOMIC_RELAXED);

    if (h) {
        panda_sizehist_count_flow(h, fb_decode(fb));
    }
}

/* Accounts for 'events' of an entry of 'sh' whose state is now 'c'. */
static void
account_events(const struct panda_table *t, struct shard *sh, int events,
               const struct cstate *c)
{
    if (events & EV_RESUMED) {
        __atomic_fetch_add(&sh->n_live, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&sh->resumed, 1, __ATOMIC_RELAXED);
    }
    if (events & EV_ENDED) {
        __atomic_fetch_sub(&sh->n_live, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&sh->removed, 1, __ATOMIC_RELAXED);
    }
    if (events & EV_COUNT) {
        flow_count(t, c->fb);
    }
}

/* Applies 'pkt' to entry 'e', whose state was 's' when its key was checked,
 * with compare-and-swap.  Returns true and the level in '*level' if it was
 * applied; false if the slot changed meanwhile (the caller looks again). */
PANDA_INLINE bool
entry_apply_kw(const struct panda_table *t, const struct probe *pr,
               unsigned int kw, uint32_t *e, uint64_t s, uint32_t claims,
               const struct panda_policy *p, const struct panda_pkt *pkt,
               panda_msec_t now, bool count_bytes, uint8_t *level)
{
    uint32_t *time_lo = e + kw;
    struct cstate c;
    uint64_t ns;
    int events;

    state_unpack(s, __atomic_load_n(time_lo, __ATOMIC_RELAXED), &c);
    *level = state_apply(p, pkt, now, count_bytes, &c, &events);
    ns = state_pack(&c);
    if (ns != s
        && !state_install(pr->shard, claims, slot_state_kw(kw, e), s, ns)) {
        return false;
    }
    __atomic_store_n(time_lo, (uint32_t) now, __ATOMIC_RELAXED);
    if (PANDA_UNLIKELY(events)) {
        account_events(t, pr->shard, events, &c);
    }
    return true;
}

/* entry_apply_kw() under the shard's mutex, where no slot is claimed. */
static bool
entry_apply(const struct panda_table *t, const struct probe *pr, uint32_t *e,
            uint64_t s, const struct panda_policy *p,
            const struct panda_pkt *pkt, panda_msec_t now, bool count_bytes,
            uint8_t *level)
{
    return entry_apply_kw(t, pr, pr->st->key_words, e, s,
                          shard_claims(pr->shard), p, pkt, now, count_bytes,
                          level);
}

/* ---- Insertion, under the shard's mutex. ---- */

/* An established entry has seen ESTABLISHED_PACKETS packets: a new tuple
 * cannot evict it (probe_insert()).  A flood of distinct tuples sends one
 * or two packets each. */
static inline bool
state_established(uint64_t s)
{
    return state_packets(s) >= ESTABLISHED_PACKETS;
}

/* A slot a new connection may take without displacing anyone: free, or
 * holding an entry ended by FIN or RST. */
static inline bool
state_vacant(uint64_t s)
{
    return !(s & ST_LIVE);
}

/* Looks for the entry of 'pr''s key under the mutex (no slot is busy
 * then: only the mutex's holder makes one). */
static uint32_t *
probe_find_locked(const struct probe *pr, uint64_t *sp)
{
    const struct subtable *st = pr->st;
    unsigned int b, w;

    for (b = 0; b < 2; b++) {
        for (w = 0; w < PANDA_WAYS; w++) {
            uint32_t *e = slot_at(st, pr->shard, pr->b[b], w);
            uint64_t s = load_state(st, e);

            if (s && key_equal(st, e, pr->key)) {
                *sp = s;
                return e;
            }
        }
    }
    return NULL;
}

/* Returns a vacant slot in 'bucket', or NULL. */
static uint32_t *
bucket_vacant_slot(const struct subtable *st, const struct shard *sh,
                   uint32_t bucket)
{
    unsigned int w;

    for (w = 0; w < PANDA_WAYS; w++) {
        uint32_t *e = slot_at(st, sh, bucket, w);

        if (state_vacant(load_state(st, e))) {
            return e;
        }
    }
    return NULL;
}

/* The candidate bucket of the entry at 'e' other than 'bucket'. */
static uint32_t
alt_bucket(const struct panda_table *t, const struct subtable *st,
           const uint32_t *e, uint32_t bucket)
{
    struct shard *shard;
    uint32_t b[2];

    probe_place(t, st, e, &shard, b);
    return b[0] == bucket ? b[1] : b[0];
}

/* Moves the live entry at 'src' into the vacant slot 'dst' (whatever ended
 * entry it held is forgotten: its flow was counted when it ended).  'src'
 * is left busy, for its next key. */
static void
entry_move(const struct subtable *st, struct shard *sh, uint32_t *dst,
           uint32_t *src)
{
    uint64_t s = claim_slot(st, sh, src);

    claim_slot(st, sh, dst);
    write_key(st, dst, src);
    __atomic_store_n(slot_time(st, dst),
                     __atomic_load_n(slot_time(st, src), __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    publish_state(st, dst, s);
}

/* Both candidate buckets are full: try to make room by moving one of their
 * entries to its other bucket (or, two levels deep, one of that bucket's
 * entries to its own other bucket), as in cuckoo hashing.  Returns the
 * freed slot, busy, or NULL.  This lets the table fill to about 95% before
 * anything is evicted. */
static uint32_t *
make_room(const struct panda_table *t, const struct probe *pr)
{
    const struct subtable *st = pr->st;
    struct shard *sh = pr->shard;
    unsigned int b, w, w2;

    for (b = 0; b < 2; b++) {
        for (w = 0; w < PANDA_WAYS; w++) {
            uint32_t *e = slot_at(st, sh, pr->b[b], w);
            uint32_t alt = alt_bucket(t, st, e, pr->b[b]);
            uint32_t *vacant = bucket_vacant_slot(st, sh, alt);

            if (vacant) {
                entry_move(st, sh, vacant, e);
                return e;
            }
        }
    }
    for (b = 0; b < 2; b++) {
        for (w = 0; w < PANDA_WAYS; w++) {
            uint32_t *e = slot_at(st, sh, pr->b[b], w);
            uint32_t alt = alt_bucket(t, st, e, pr->b[b]);

            for (w2 = 0; w2 < PANDA_WAYS; w2++) {
                uint32_t *e2 = slot_at(st, sh, alt, w2);
                uint32_t alt2 = alt_bucket(t, st, e2, alt);
                uint32_t *vacant;

                if (alt2 == pr->b[0] || alt2 == pr->b[1]) {
                    continue;
                }
                vacant = bucket_vacant_slot(st, sh, alt2);
                if (vacant) {
                    entry_move(st, sh, vacant, e2);
                    entry_move(st, sh, e2, e);
                    return e;
                }
            }
        }
    }
    return NULL;
}

/* What a new connection finds among its 2 x PANDA_WAYS candidate slots. */
struct candidates {
    uint32_t *vacant;           /* A slot with no live entry. */
    uint32_t *oldest;           /* The least recently seen entry... */
    panda_msec_t oldest_age;
    uint64_t oldest_state;
    uint32_t *oldest_new;       /* ...and of those not established. */
};

static void
scan_candidates(const struct probe *pr, panda_msec_t now,
                struct candidates *c)
{
    const struct subtable *st = pr->st;
    panda_msec_t new_age = 0;
    unsigned int b, w;

    memset(c, 0, sizeof *c);
    for (b = 0; b < 2; b++) {
        for (w = 0; w < PANDA_WAYS; w++) {
            uint32_t *e = slot_at(st, pr->shard, pr->b[b], w);
            uint64_t s = load_state(st, e);
            panda_msec_t age;

            if (state_vacant(s)) {
                c->vacant = e;
                return;
            }
            age = age36(now, slot_seen(st, e, s));
            if (!c->oldest || age > c->oldest_age) {
                c->oldest = e;
                c->oldest_age = age;
                c->oldest_state = s;
            }
            if (!state_established(s)
                && (!c->oldest_new || age > new_age)) {
                c->oldest_new = e;
                new_age = age;
            }
        }
    }
}

/* Chooses a slot for a new connection, in this order: a vacant candidate
 * slot; a candidate idle past the timeout ("expired"); room made by moving
 * entries (cuckoo displacement), only while the shard is less than 15/16
 * full (CUCKOO_MAX_FILL_16THS), since in a full table it nearly always
 * fails after 40 rehashes and cache misses under the lock; the least
 * recently seen candidate that is not established ("evicted"); with
 * probability 1/ADMIT_ONE_IN, the least recently seen established
 * candidate if it has been silent for ACTIVE_MS ("evicted", and counted as
 * established).
 * Otherwise the connection is refused (NULL, "refused"): a flood of new
 * tuples, each sending a packet or two, replaces only other such tuples,
 * and established connections keep their counters (and levels).  A new
 * connection that keeps sending in a table full of established ones gets
 * in after about ADMIT_ONE_IN packets, in the slot of the one that has
 * been silent longest.
 *
 * Returns the slot with the key written and STATE_BUSY: the caller
 * publishes the entry with its first packet applied. */
static uint32_t *
probe_insert(const struct panda_table *t, const struct probe *pr,
             panda_msec_t now)
{
    const struct subtable *st = pr->st;
    struct shard *sh = pr->shard;
    struct candidates c;
    uint32_t *e;

    scan_candidates(pr, now, &c);
    if (c.vacant) {
        e = c.vacant;
        claim_slot(st, sh, e);
        __atomic_fetch_add(&sh->n_live, 1, __ATOMIC_RELAXED);
    } else if (is_idle(slot_seen(st, c.oldest, c.oldest_state), now,
                       t->cfg.idle_timeout_ms)) {
        struct cstate cs;
        uint64_t s;

        e = c.oldest;
        s = claim_slot(st, sh, e);
        state_unpack(s, __atomic_load_n(slot_time(st, e), __ATOMIC_RELAXED),
                     &cs);
        if (cstate_count_flow(&cs, FLOW_MIN_PACKETS)) {
            flow_count(t, cs.fb);
        }
        sh->expired++;
    } else if (__atomic_load_n(&sh->n_live, __ATOMIC_RELAXED)
               < st->cuckoo_max_live
               && (e = make_room(t, pr)) != NULL) {
        __atomic_fetch_add(&sh->n_live, 1, __ATOMIC_RELAXED);
    } else if (c.oldest_new) {
        e = c.oldest_new;           /* Evicted: its flow is not counted. */
        claim_slot(st, sh, e);
        sh->evicted++;
    } else if (c.oldest_age >= ACTIVE_MS
               && panda_rng_next(&sh->rng) % ADMIT_ONE_IN == 0) {
        e = c.oldest;
        claim_slot(st, sh, e);
        sh->evicted++;
        sh->evicted_established++;
    } else {
        sh->refused++;
        return NULL;
    }
    write_key(st, e, pr->key);
    sh->inserted++;
    return e;
}

/* Forgets the entry 'e' (state 's'), silent for longer than the idle
 * timeout: its flow is counted, and the packet that found it is treated as
 * the first of a new connection.  Returns false if a packet changed the
 * entry meanwhile (it is no longer idle). */
static bool
entry_expire(const struct panda_table *t, const struct probe *pr,
             uint32_t *e, uint64_t s)
{
    struct cstate c;

    if (!cas_state(pr->st, e, &s, 0)) {
        return false;
    }
    state_unpack(s, 0, &c);
    if (c.live) {
        __atomic_fetch_sub(&pr->shard->n_live, 1, __ATOMIC_RELAXED);
        pr->shard->expired++;
    }
    if (cstate_count_flow(&c, FLOW_MIN_PACKETS)) {
        flow_count(t, c.fb);
    }
    return true;
}

static inline bool
subtable_ready(const struct subtable *st)
{
    return __atomic_load_n(&st->ready, __ATOMIC_ACQUIRE);
}

/* Allocates the slots of 'st' on first use, so that a family that never
 * shows up (IPv6, often) costs no memory.  Returns false if they cannot be
 * allocated; after a failure, returns false without trying again for
 * ALLOC_RETRY_MS, so that a datapath short of memory does not call the
 * allocator for every packet. */
static bool
subtable_alloc(struct panda_table *t, struct subtable *st, panda_msec_t now)
{
    pthread_mutex_lock(&t->alloc_mutex);
    if (!st->ready
        && (!st->alloc_failed
            || age36(now, st->alloc_failed_ms) >= ALLOC_RETRY_MS)) {
        size_t shard_bytes = (size_t) st->n_buckets * PANDA_WAYS
                             * st->entry_size;
        uintptr_t base;
        unsigned int i;

        st->raw = calloc(1, st->raw_size);
        if (st->raw) {
            base = ((uintptr_t) st->raw + CACHE_LINE - 1)
                   & ~(uintptr_t) (CACHE_LINE - 1);
            for (i = 0; i < t->cfg.n_shards; i++) {
                st->shards[i].slots = (uint8_t *) base + i * shard_bytes;
            }
            __atomic_store_n(&st->ready, 1, __ATOMIC_RELEASE);
        } else {
            st->alloc_failed = true;
            st->alloc_failed_ms = now;
        }
    }
    pthread_mutex_unlock(&t->alloc_mutex);
    return subtable_ready(st);
}

/* ---- Classification. ---- */

/* The level of a TCP packet that has no entry and creates none (its
 * counter would count nothing: no payload, headers of a normal size): that
 * of a connection that has sent nothing yet (counter 0), which is what an
 * entry created for it would give. */
static uint8_t
level_without_entry(const struct panda_policy *p, const struct panda_pkt *pkt)
{
    int64_t counter = 0;

    return panda_cls_level(p, &counter, pkt);
}

/* The slow path of a TCP packet: under the shard's mutex, so that keys do
 * not move: an entry that is busy, missing (insert it), or idle past the
 * timeout (forget it, then insert). */
static uint8_t
classify_locked(struct panda_table *t, const struct probe *pr,
                const struct panda_policy *p, const struct panda_pkt *pkt,
                panda_msec_t now, bool count_bytes, bool *stateful)
{
    struct shard *sh = pr->shard;
    uint8_t level;
    uint32_t *e;
    uint64_t s;

    pthread_mutex_lock(&sh->mutex);
    for (;;) {
        e = probe_find_locked(pr, &s);
        if (!e) {
            break;
        }
        if (is_idle(slot_seen(pr->st, e, s), now, t->cfg.idle_timeout_ms)) {
            if (entry_expire(t, pr, e, s)) {
                e = NULL;
                break;
            }
            continue;           /* A packet came meanwhile: look again. */
        }
        if (entry_apply(t, pr, e, s, p, pkt, now, count_bytes, &level)) {
            break;
        }
    }
    if (e) {
        *stateful = true;
    } else if (!panda_cls_counted_bytes(pkt)) {
        /* Only a packet that the counter counts (payload, or headers too
         * long for a bare control packet) creates an entry: without one,
         * the verdict is the same (level_without_entry()), and
         * handshakes, pure ACKs (the receiving side of every transfer)
         * and stray RSTs take no slot. */
        level = level_without_entry(p, pkt);
        *stateful = false;
    } else if ((e = probe_insert(t, pr, now)) != NULL) {
        struct cstate c = { .live = true };
        int events;

        level = state_apply(p, pkt, now, count_bytes, &c, &events);
        __atomic_store_n(slot_time(pr->st, e), (uint32_t) now,
                         __ATOMIC_RELAXED);
        publish_state(pr->st, e, state_pack(&c));
        /* A new entry is live and counted as such by probe_insert(). */
        account_events(t, sh, events & ~EV_RESUMED, &c);
        *stateful = true;
    } else {
        level = panda_cls_level(p, NULL, pkt);   /* Refused: no room. */
        *stateful = false;
    }
    pthread_mutex_unlock(&sh->mutex);
    return level;
}

/* The per-packet case of state_apply(), on the packed state word 's' of
 * a live entry last seen 'age' ms ago (not past the idle timeout) and a
 * packet without SYN, FIN or RST: the counter, the packet count, the time,
 * the flow bytes.  Returns the new state word, the level in '*level'. */
PANDA_INLINE uint64_t
state_step(const struct panda_policy *p, const struct panda_pkt *pkt,
           uint64_t s, panda_msec_t age, panda_msec_t now, bool count_bytes,
           uint8_t *level)
{
    int64_t counter = state_counter(s);
    uint64_t ns;

    if (PANDA_UNLIKELY(p->idle_reset_ms) && age > p->idle_reset_ms) {
        counter = 0;
    }
    *level = panda_cls_level(p, &counter, pkt);
    if (PANDA_UNLIKELY(counter > ST_COUNTER_MAX)) {
        counter = ST_COUNTER_MAX;
    } else if (PANDA_UNLIKELY(counter < -ST_COUNTER_MAX)) {
        counter = -ST_COUNTER_MAX;
    }
    ns = (s & ~(ST_COUNTER_MASK | ~UINT64_C(0) << ST_TIME_HI_SHIFT))
         | ((uint64_t) counter & ST_COUNTER_MASK)
         | (now & TIME_MASK) >> 32 << ST_TIME_HI_SHIFT;
    if (state_packets(s) < ST_PACKETS_MAX) {
        ns += UINT64_C(1) << ST_PACKETS_SHIFT;
    }
    if (count_bytes && pkt->payload) {
        ns = (ns & ~(ST_BYTES_MASK << ST_BYTES_SHIFT))
             | (uint64_t) fb_add(state_fb(s), pkt->payload) << ST_BYTES_SHIFT;
    }
    return ns;
}

/* The idle time of the entry at 'e' ('kw' key words) whose state is 's'. */
PANDA_INLINE panda_msec_t
entry_age(unsigned int kw, uint32_t *e, uint64_t s, panda_msec_t now)
{
    return age36(now, (s >> ST_TIME_HI_SHIFT) << 32
                      | __atomic_load_n(e + kw, __ATOMIC_RELAXED));
}

/* What one lock-free try of a TCP packet found (classify_try_kw()). */
enum try_result {
    TRY_DONE,       /* The per-packet case, applied: '*level' is set. */
    TRY_LOCKED,     /* No entry, a busy one, or one idle past the timeout:
                     * only the shard's mutex can tell or fix it. */
    TRY_AGAIN,      /* The slot changed under the try: look again. */
    TRY_EVENTS,     /* The entry, not changed: the packet is a SYN, FIN or
                     * RST, or the entry ended, for entry_apply_kw(). */
};

/* One lock-free try of a TCP packet whose probe 'pr' ('kw' key words) is
 * ready, when its entry is there, not busy, not idle past 'idle_ms'
 * (table_idle_limit()), and the packet changes nothing but the state
 * word's counter, bytes, packets and time: it is applied with one
 * compare-and-swap.  The general path (classify_probe_kw()) and the batch
 * loop's inline case (classify_probe4()) share it, so the per-packet case
 * is written once; each decides what follows a try that declined.  On
 * TRY_EVENTS, '*ep', '*sp' and '*claimsp' are the entry, its state and the
 * shard's claim count read before the look, for entry_apply_kw(). */
PANDA_INLINE enum try_result
classify_try_kw(const struct probe *pr, unsigned int kw,
                const struct panda_policy *p, const struct panda_pkt *pkt,
                panda_msec_t now, bool count_bytes, panda_msec_t idle_ms,
                uint8_t *level, uint32_t **ep, uint64_t *sp,
                uint32_t *claimsp)
{
    uint32_t claims = shard_claims(pr->shard);
    enum find_result r;
    panda_msec_t age;
    uint32_t *e;
    uint64_t s, ns;

    r = probe_find(pr, kw, &e, &s);
    if (r != FOUND) {
        return r == CHANGED ? TRY_AGAIN : TRY_LOCKED;
    }
    age = entry_age(kw, e, s, now);
    if (age > idle_ms) {
        return TRY_LOCKED;      /* Expired: under the mutex. */
    }
    if (!(s & ST_LIVE)
        || pkt->tcp_flags & (PANDA_TCP_SYN | PANDA_TCP_FIN | PANDA_TCP_RST)) {
        *ep = e;
        *sp = s;
        *claimsp = claims;
        return TRY_EVENTS;
    }
    ns = state_step(p, pkt, s, age, now, count_bytes, level);
    if (ns != s
        && !state_install(pr->shard, claims, slot_state_kw(kw, e), s, ns)) {
        return TRY_AGAIN;
    }
    __atomic_store_n(e + kw, (uint32_t) now, __ATOMIC_RELAXED);
    return TRY_DONE;
}

/* Classifies a TCP packet whose probe 'pr' is ready: without a lock if its
 * entry is there and not busy, else under the shard's mutex. */
static uint8_t
classify_probe_kw(struct panda_table *t, const struct probe *pr,
                  unsigned int kw, const struct panda_policy *p,
                  const struct panda_pkt *pkt, panda_msec_t now,
                  bool count_bytes, bool *stateful)
{
    panda_msec_t idle_ms = table_idle_limit(t);
    unsigned int tries;

    for (tries = 0; tries < LOCKLESS_TRIES; tries++) {
        uint32_t claims;
        uint8_t level;
        uint32_t *e;
        uint64_t s;

        switch (classify_try_kw(pr, kw, p, pkt, now, count_bytes, idle_ms,
                                &level, &e, &s, &claims)) {
        case TRY_DONE:
            *stateful = true;
            return level;
        case TRY_LOCKED:
            return classify_locked(t, pr, p, pkt, now, count_bytes,
                                   stateful);
        case TRY_AGAIN:
            break;
        case TRY_EVENTS:
            if (entry_apply_kw(t, pr, kw, e, s, claims, p, pkt, now,
                               count_bytes, &level)) {
                *stateful = true;
                return level;
            }
            break;
        }
    }
    return classify_locked(t, pr, p, pkt, now, count_bytes, stateful);
}

static uint8_t
classify_probe(struct panda_table *t, const struct probe *pr,
               const struct panda_policy *p, const struct panda_pkt *pkt,
               panda_msec_t now, bool count_bytes, bool *stateful)
{
    if (PANDA_LIKELY(pr->st->key_words == 3)) {
        return classify_probe_kw(t, pr, 3, p, pkt, now, count_bytes,
                                 stateful);
    }
    return classify_probe_kw(t, pr, 9, p, pkt, now, count_bytes, stateful);
}

/* Classifies the IPv4 packet whose probe 'pr' is ready: the first try
 * inline in the batch loop ('idle_ms' computed once per batch), and
 * whatever follows a try that declined out of line (classify_locked(), or
 * classify_probe() from the start), so that the per-packet case is
 * straight code without the retries and the mutex's paths. */
PANDA_INLINE uint8_t
classify_probe4(struct panda_table *t, const struct probe *pr,
                const struct panda_policy *p, const struct panda_pkt *pkt,
                panda_msec_t now, bool count_bytes, panda_msec_t idle_ms,
                bool *stateful)
{
    uint32_t claims;
    uint8_t level;
    uint32_t *e;
    uint64_t s;

    switch (classify_try_kw(pr, 3, p, pkt, now, count_bytes, idle_ms,
                            &level, &e, &s, &claims)) {
    case TRY_DONE:
        *stateful = true;
        return level;
    case TRY_LOCKED:
        /* What classify_probe_kw() would do after the same try. */
        return classify_locked(t, pr, p, pkt, now, count_bytes, stateful);
    case TRY_AGAIN:
    case TRY_EVENTS:
    default:
        return classify_probe(t, pr, p, pkt, now, count_bytes, stateful);
    }
}

/* Prepares 'pr' for 'pkt': NULL sub-table if the packet needs none (not a
 * counter kind, not TCP, no table, no memory), with '*level' then set. */
static inline bool
probe_prepare(struct panda_table *t, const struct panda_policy *p,
              const struct panda_pkt *pkt, panda_msec_t now,
              struct probe *pr, uint8_t *level)
{
    struct subtable *st;

    pr->st = NULL;
    if (PANDA_UNLIKELY(!t || !panda_kind_has_counter(p->kind))
        || pkt->proto != PANDA_IPPROTO_TCP) {
        /* No state to keep: the rule kinds; no table; not TCP, or a later
         * fragment, which have nothing to track them by. */
        *level = panda_cls_level(p, NULL, pkt);
        return false;
    }
    st = pkt_key(t, pkt, pr->key);
    if (PANDA_LIKELY(subtable_ready(st))) {
        probe_init(t, st, pr);
        return true;
    } else if (!panda_cls_counted_bytes(pkt)) {
        /* Nothing to insert: no need for the slots yet. */
        *level = level_without_entry(p, pkt);
        return false;
    } else if (subtable_alloc(t, st, now)) {
        probe_init(t, st, pr);
        return true;
    }
    /* No memory for this family's connections: untracked rather than
     * dropped or guessed. */
    __atomic_fetch_add(&t->alloc_failures, 1, __ATOMIC_RELAXED);
    *level = panda_cls_level(p, NULL, pkt);
    return false;
}

static inline void
verdict_fill(const struct panda_policy *p, uint8_t level, bool stateful,
             struct panda_table_verdict *v)
{
    /* One store of the whole verdict rather than four of its bytes. */
    *v = (struct panda_table_verdict) {
        .level = level,
        .dscp = p->dscp[level],
        .queue = p->queue[level],
        .stateful = stateful,
    };
}

void
panda_table_classify_batch(struct panda_table *t,
                           const struct panda_policy *p,
                           const struct panda_pkt *pkts, size_t n,
                           panda_msec_t now,
                           struct panda_table_verdict *v)
{
    enum { CHUNK = 32 };
    struct probe pr[CHUNK];
    uint32_t per_level[PANDA_MAX_LEVELS] = { 0 };
    bool count_bytes = t && __atomic_load_n(&t->flow_hist,
                                            __ATOMIC_RELAXED);
    /* The common packet: an IPv4 TCP packet of a counter kind's table
     * whose IPv4 slots exist. */
    struct subtable *v4 = (t && panda_kind_has_counter(p->kind)
                           && subtable_ready(&t->v4) ? &t->v4 : NULL);
    panda_msec_t idle_ms = table_idle_limit(t);
    /* probe_init_kw()'s inputs for the common packet, read once. */
    uint64_t seed = t ? t->seed : 0;
    unsigned int shard_bits = t ? t->shard_bits : 0;
    struct shard *shards = v4 ? v4->shards : NULL;
    uint32_t n_buckets = v4 ? v4->n_buckets : 0;
    size_t base, i;
    unsigned int j;

    for (base = 0; base < n; base += CHUNK) {
        size_t m = n - base < CHUNK ? n - base : CHUNK;
        const struct panda_pkt *pk = &pkts[base];
        struct panda_table_verdict *vv = &v[base];

        /* Two passes, so that the lookups of the chunk overlap their cache
         * misses: hash and prefetch every packet, then classify. */
        for (i = 0; i < m; i++) {
            uint8_t level;

            if (PANDA_LIKELY(v4 && pk[i].proto == PANDA_IPPROTO_TCP
                             && pk[i].family == 4)) {
                pr[i].key[0] = pk[i].src.v4;
                pr[i].key[1] = pk[i].dst.v4;
                pr[i].key[2] = (uint32_t) pk[i].sport << 16 | pk[i].dport;
                pr[i].st = v4;
                place_hash(hash_key(pr[i].key, 3, seed), shards, shard_bits,
                           n_buckets, &pr[i].shard, pr[i].b);
                pr[i].bucket[0] = (uint8_t *) slot_at_kw(pr[i].shard, 3,
                                                         pr[i].b[0], 0);
                pr[i].bucket[1] = (uint8_t *) slot_at_kw(pr[i].shard, 3,
                                                         pr[i].b[1], 0);
                probe_prefetch_kw(&pr[i], 3);
            } else if (probe_prepare(t, p, &pk[i], now, &pr[i], &level)) {
                probe_prefetch(&pr[i]);
            } else {
                verdict_fill(p, level, false, &vv[i]);
            }
        }
        for (i = 0; i < m; i++) {
            bool stateful;
            uint8_t level;

            if (PANDA_LIKELY(pr[i].st == v4 && v4)) {
                level = classify_probe4(t, &pr[i], p, &pk[i], now,
                                        count_bytes, idle_ms, &stateful);
            } else if (pr[i].st) {
                level = classify_probe(t, &pr[i], p, &pk[i], now,
                                       count_bytes, &stateful);
            } else {
                per_level[vv[i].level]++;
                continue;
            }
            verdict_fill(p, level, stateful, &vv[i]);
            per_level[level]++;
        }
    }
    if (t) {
        for (j = 0; j < PANDA_MAX_LEVELS; j++) {
            if (per_level[j]) {
                __atomic_fetch_add(&t->packets[j], per_level[j],
                                   __ATOMIC_RELAXED);
            }
        }
    }
}

void
panda_table_classify(struct panda_table *t, const struct panda_policy *p,
                     const struct panda_pkt *pkt, panda_msec_t now,
                     struct panda_table_verdict *v)
{
    bool stateful = false;
    struct probe pr;
    uint8_t level;

    if (probe_prepare(t, p, pkt, now, &pr, &level)) {
        bool count_bytes = __atomic_load_n(&t->flow_hist,
                                           __ATOMIC_RELAXED) != NULL;

        if (pr.st == &t->v4) {
            level = classify_probe4(t, &pr, p, pkt, now, count_bytes,
                                    table_idle_limit(t), &stateful);
        } else {
            level = classify_probe(t, &pr, p, pkt, now, count_bytes,
                                   &stateful);
        }
    }
    verdict_fill(p, level, stateful, v);
    if (t) {
        __atomic_fetch_add(&t->packets[level], 1, __ATOMIC_RELAXED);
    }
}

void
panda_table_prefetch(struct panda_table *t, const struct panda_pkt *pkt)
{
    struct probe pr;
    struct subtable *st;

    if (pkt->proto != PANDA_IPPROTO_TCP) {
        return;
    }
    st = pkt_key(t, pkt, pr.key);
    if (subtable_ready(st)) {
        probe_init(t, st, &pr);
        probe_prefetch(&pr);
    }
}

bool
panda_table_lookup(struct panda_table *t, const struct panda_pkt *pkt,
                   int64_t *counter)
{
    struct subtable *st;
    struct probe pr;
    uint32_t *e;
    uint64_t s;

    st = pkt_key(t, pkt, pr.key);
    if (!subtable_ready(st)) {
        return false;
    }
    probe_init(t, st, &pr);
    pthread_mutex_lock(&pr.shard->mutex);
    e = probe_find_locked(&pr, &s);
    if (e && !(s & ST_LIVE)) {
        e = NULL;               /* Ended by FIN. */
    }
    if (e && counter) {
        *counter = state_counter(s);
    }
    pthread_mutex_unlock(&pr.shard->mutex);
    return e != NULL;
}

/* ---- Creation, statistics, iteration. ---- */

/* log2 of the number of shards of a table configured by 'cfg'. */
static unsigned int
table_shard_bits(const struct panda_table_config *cfg)
{
    unsigned int n_shards = cfg->n_shards, bits = 0;

    if (!n_shards) {
        /* Enough shards that threads rarely meet, few enough that each has
         * thousands of slots (a shard is filled independently: with few
         * slots, random imbalance between shards would overflow some). */
        n_shards = cfg->capacity / 8192;
        n_shards = n_shards > 64 ? 64 : n_shards ? n_shards : 1;
    }
    while ((1u << bits) < n_shards && bits < 10) {
        bits++;
    }
    return bits;
}

/* Buckets per shard for 'capacity' connections in 'n_shards' shards. */
static uint32_t
shard_buckets(uint32_t capacity, unsigned int n_shards)
{
    uint64_t per_shard = ((uint64_t) capacity + n_shards - 1) / n_shards;
    uint32_t n = (uint32_t) ((per_shard + PANDA_WAYS - 1) / PANDA_WAYS);

    return n < 2 ? 2 : n;
}

/* Bytes of the slots of one address family (allocated on its first entry),
 * alignment slack included. */
static size_t
slots_bytes(uint32_t n_buckets, unsigned int n_shards, size_t entry_size)
{
    return (size_t) n_buckets * PANDA_WAYS * entry_size * n_shards
           + CACHE_LINE;
}

uint64_t
panda_table_max_bytes(const struct panda_table_config *cfg)
{
    unsigned int n_shards = 1u << table_shard_bits(cfg);
    uint32_t n_buckets = shard_buckets(cfg->capacity, n_shards);

    return sizeof(struct panda_table)
           + 2 * (uint64_t) n_shards * sizeof(struct shard)
           + slots_bytes(n_buckets, n_shards, panda_table_entry_size(4))
           + slots_bytes(n_buckets, n_shards, panda_table_entry_size(6));
}

/* Returns false if the shard headers cannot be allocated. */
static bool
subtable_init(struct subtable *st, unsigned int key_words, size_t entry_size,
              uint32_t capacity, unsigned int n_shards, uint64_t seed)
{
    unsigned int i;

    st->key_words = key_words;
    st->entry_size = entry_size;
    st->n_buckets = shard_buckets(capacity, n_shards);
    st->cuckoo_max_live = st->n_buckets * PANDA_WAYS / 16
                          * CUCKOO_MAX_FILL_16THS;
    st->raw_size = slots_bytes(st->n_buckets, n_shards, entry_size);
    if (posix_memalign((void **) &st->shards, CACHE_LINE,
                       n_shards * sizeof *st->shards)) {
        st->shards = NULL;
        return false;
    }
    memset(st->shards, 0, n_shards * sizeof *st->shards);
    for (i = 0; i < n_shards; i++) {
        pthread_mutex_init(&st->shards[i].mutex, NULL);
        panda_rng_seed(&st->shards[i].rng, seed + i);
    }
    return true;
}

static void
subtable_destroy(struct subtable *st, unsigned int n_shards)
{
    unsigned int i;

    if (!st->shards) {
        return;
    }
    for (i = 0; i < n_shards; i++) {
        pthread_mutex_destroy(&st->shards[i].mutex);
    }
    free(st->shards);
    free(st->raw);
}

/* Stores a malloc()ed message in '*errp' (if nonnull), or NULL if even
 * that cannot be allocated.  Returns NULL, for the caller to return. */
static struct panda_table * PANDA_PRINTF(2, 3)
create_error(char **errp, const char *fmt, ...)
{
    char msg[128];
    va_list args;

    if (errp) {
        va_start(args, fmt);
        vsnprintf(msg, sizeof msg, fmt, args);
        va_end(args);
        *errp = strdup(msg);
    }
    return NULL;
}

struct panda_table *
panda_table_create(const struct panda_table_config *cfg, char **errp)
{
    struct panda_table *t;
    unsigned int n_shards, bits;
    struct timespec ts;

    if (errp) {
        *errp = NULL;
    }
    if (!cfg->capacity) {
        return create_error(errp, "capacity: must be at least 1");
    }
    if (cfg->capacity > (1u << 30)) {
        return create_error(errp, "capacity: %u connections is more than"
                            " the maximum of %u", cfg->capacity, 1u << 30);
    }
    if (cfg->idle_timeout_ms > PANDA_MAX_DURATION_MS) {
        return create_error(errp, "idle_timeout: %" PRIu64 " ms out of range"
                            " (max %" PRIu64 ")", cfg->idle_timeout_ms,
                            (uint64_t) PANDA_MAX_DURATION_MS);
    }
    bits = table_shard_bits(cfg);
    n_shards = 1u << bits;

    t = calloc(1, sizeof *t);
    if (!t) {
        return create_error(errp, "out of memory");
    }
    t->cfg = *cfg;
    t->cfg.n_shards = n_shards;
    t->shard_bits = bits;
    if (cfg->seed) {
        t->seed = cfg->seed;
    } else {
        clock_gettime(CLOCK_REALTIME, &ts);
        t->seed = panda_mix64((uint64_t) ts.tv_nsec
                              ^ ((uint64_t) ts.tv_sec << 30) ^ (uintptr_t) t);
    }
    pthread_mutex_init(&t->alloc_mutex, NULL);
    if (!subtable_init(&t->v4, 3, panda_table_entry_size(4), cfg->capacity,
                       n_shards, t->seed)
        || !subtable_init(&t->v6, 9, panda_table_entry_size(6),
                          cfg->capacity, n_shards, ~t->seed)) {
        panda_table_destroy(t);
        return create_error(errp, "out of memory");
    }
    return t;
}

void
panda_table_destroy(struct panda_table *t)
{
    if (t) {
        subtable_destroy(&t->v4, t->cfg.n_shards);
        subtable_destroy(&t->v6, t->cfg.n_shards);
        pthread_mutex_destroy(&t->alloc_mutex);
        free(t);
    }
}

/* Forgets every entry of 'st', counting the flows of the live ones. */
static void
subtable_flush(const struct panda_table *t, struct subtable *st)
{
    uint32_t n_slots = st->n_buckets * PANDA_WAYS;
    unsigned int i;
    uint32_t k;

    if (!subtable_ready(st)) {
        return;
    }
    for (i = 0; i < t->cfg.n_shards; i++) {
        struct shard *sh = &st->shards[i];
        uint32_t n_ended = 0;

        pthread_mutex_lock(&sh->mutex);
        for (k = 0; k < n_slots; k++) {
            uint32_t *e = (uint32_t *) (sh->slots
                                        + (size_t) k * st->entry_size);
            uint64_t s = __atomic_exchange_n(slot_state(st, e), 0,
                                             __ATOMIC_ACQ_REL);
            struct cstate c;

            if (s & ST_LIVE) {
                state_unpack(s, 0, &c);
                if (cstate_count_flow(&c, 1)) {
                    flow_count(t, c.fb);
                }
                n_ended++;
            }
        }
        __atomic_fetch_sub(&sh->n_live, n_ended, __ATOMIC_RELAXED);
        __atomic_fetch_add(&sh->removed, n_ended, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&sh->mutex);
    }
}

void
panda_table_flush(struct panda_table *t)
{
    subtable_flush(t, &t->v4);
    subtable_flush(t, &t->v6);
}

void
panda_table_set_flow_hist(struct panda_table *t, struct panda_sizehist *h)
{
    __atomic_store_n(&t->flow_hist, h, __ATOMIC_RELAXED);
}

static void
subtable_stats(const struct subtable *st, unsigned int n_shards,
               struct panda_table_stats *s)
{
    unsigned int i;

    for (i = 0; i < n_shards; i++) {
        struct shard *sh = &st->shards[i];

        pthread_mutex_lock(&sh->mutex);
        s->connections += __atomic_load_n(&sh->n_live, __ATOMIC_RELAXED);
        s->inserted += sh->inserted;
        s->removed += __atomic_load_n(&sh->removed, __ATOMIC_RELAXED);
        s->evicted += sh->evicted;
        s->expired += sh->expired;
        s->resumed += __atomic_load_n(&sh->resumed, __ATOMIC_RELAXED);
        s->evicted_established += sh->evicted_established;
        s->refused += sh->refused;
        pthread_mutex_unlock(&sh->mutex);
    }
    s->bytes_allocated += (subtable_ready(st) ? st->raw_size : 0)
                          + n_shards * sizeof *st->shards;
}

void
panda_table_stats(struct panda_table *t, struct panda_table_stats *s)
{
    int j;

    memset(s, 0, sizeof *s);
    s->capacity = (uint64_t) t->v4.n_buckets * PANDA_WAYS * t->cfg.n_shards;
    subtable_stats(&t->v4, t->cfg.n_shards, s);
    subtable_stats(&t->v6, t->cfg.n_shards, s);
    for (j = 0; j < PANDA_MAX_LEVELS; j++) {
        s->packets[j] = __atomic_load_n(&t->packets[j], __ATOMIC_RELAXED);
    }
    s->alloc_failures = __atomic_load_n(&t->alloc_failures,
                                        __ATOMIC_RELAXED);
    s->bytes_allocated += sizeof *t;
}

static bool
subtable_foreach(struct subtable *st, unsigned int n_shards, int family,
                 bool (*cb)(const struct panda_table_conn_info *, void *),
                 void *aux)
{
    uint32_t n_slots = st->n_buckets * PANDA_WAYS;
    unsigned int i;
    uint32_t k;

    if (!subtable_ready(st)) {
        return true;
    }

    for (i = 0; i < n_shards; i++) {
        struct shard *sh = &st->shards[i];
        bool more = true;

        pthread_mutex_lock(&sh->mutex);
        for (k = 0; more && k < n_slots; k++) {
            uint32_t *e = (uint32_t *) (sh->slots
                                        + (size_t) k * st->entry_size);
            uint64_t s = load_state(st, e);
            struct panda_table_conn_info ci;

            if (!(s & ST_LIVE) || state_busy(s)) {
                continue;
            }
            memset(&ci, 0, sizeof ci);
            ci.key.family = family;
            ci.key.proto = 6;
            if (family == 6) {
                memcpy(ci.key.src.v6, &e[0], 16);
                memcpy(ci.key.dst.v6, &e[4], 16);
            } else {
                ci.key.src.v4 = e[0];
                ci.key.dst.v4 = e[1];
            }
            ci.key.sport = e[st->key_words - 1] >> 16;
            ci.key.dport = e[st->key_words - 1] & 0xffff;
            ci.counter = state_counter(s);
            ci.bytes = fb_decode(state_fb(s));
            ci.last_seen_ms = slot_seen(st, e, s);
            more = cb(&ci, aux);
        }
        pthread_mutex_unlock(&sh->mutex);
        if (!more) {
            return false;
        }
    }
    return true;
}

void
panda_table_foreach(struct panda_table *t,
                    bool (*cb)(const struct panda_table_conn_info *, void *),
                    void *aux)
{
    if (subtable_foreach(&t->v4, t->cfg.n_shards, 4, cb, aux)) {
        subtable_foreach(&t->v6, t->cfg.n_shards, 6, cb, aux);
    }
}

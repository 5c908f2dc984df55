/*
 * The Panda connection table; see conn-table.h.
 *
 * Layout.  One sub-table per address family.  Each sub-table is split into
 * shards (a mutex each); a shard is an array of buckets of PANDA_WAYS slots.
 * A connection hashes to one shard and to two candidate buckets in it
 * (bucketized two-choice hashing), so a lookup reads at most two buckets;
 * on insertion, entries may be moved to their other bucket (cuckoo
 * displacement, two levels deep), so the table fills to about 95% before a
 * new connection has to push an old one out.
 *
 * Entries.  IPv4: 8 (counter) + 8 (state) + 4 (hash tag, 0 = free)
 * + 12 (addresses and ports) = 32 bytes.  IPv6: 20 + 36 = 56, padded to 64.
 * The state word packs, so that the connection's payload bytes fit in the
 * same 32 bytes (the stated memory cost of a connection, README):
 *
 *   bits  0-39  last packet, ms modulo 2^40 (34.8 years): every idle time
 *               up to 2^39 ms (17 years) compares right, and no duration
 *               can exceed PANDA_MAX_DURATION_MS (2^32 - 1 ms, 49.7 days);
 *   bits 40-42  packets seen, saturating at 7: only "at least
 *               ESTABLISHED_PACKETS (4)" is ever asked, to tell an
 *               established connection from one packet of a flood;
 *   bit  43     the flow has been counted in the flow-size histogram;
 *   bits 44-63  payload bytes of the flow, a 20-bit float (below).
 *
 * Flow bytes.  5 bits of exponent and 15 of mantissa: exact below 65536
 * bytes; above, a multiple of the unit u = 2^(e-1) <= value / 2^15, up to
 * (2^16 - 1) * 2^30 bytes (70 TB, saturating).  Adding a payload rounds the
 * exact sum to a multiple of u up or down at random with the probabilities
 * that make the expected result the exact sum (shard RNG, used only above
 * 64 KiB), so the estimate is unbiased: no drift however many packets a
 * flow has.  Each rounding adds variance at most u * x for a payload x (and
 * u^2 / 4 the rare times the exponent grows), so a flow of V bytes ends with
 * a standard deviation at most V * 2^-7.5 (0.55%) -- against flow-size
 * buckets 19% to 25% wide (panda/sizehist.h), it decides the bucket only
 * for flows within a percent or two of an edge.  Why not the alternatives:
 * a bounded exact counter (32 bits) would need the bits of the timestamp
 * and the tag together and stop at 4 GiB, in the range of data-mining
 * flows; a deterministic float truncation is biased down by up to a unit
 * per packet, which compounds over millions of packets.
 *
 * A flow is counted once (bit 43) into the table's flow histogram
 * (panda_table_set_flow_hist()) when it ends by FIN or RST or its entry
 * expires, if it is a flow a tenant cannot mint at one packet a tuple
 * (entry_count_flow()), and when the table is flushed.  An
 * evicted entry is not counted: its end is unknown, and eviction is what a
 * flood of new tuples causes.  An ended entry that data resumes (a
 * retransmission after the FIN) is the same flow, already counted; one that
 * a SYN resumes is a new flow of the same tuple, whose bytes start from 0
 * (its Algorithm-2 counter is kept, entry_update()).
 * The policy id is not in the key: the datapath keeps one table per
 * policy id.
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
#define TAG_LIVE 1u
#define ALLOC_RETRY_MS 1000     /* After a failed slot allocation, do not
                                 * try again for this long. */

/* Replacement under pressure (probe_insert()).  An entry is established
 * once it has seen ESTABLISHED_PACKETS packets.  When a new connection finds
 * every candidate established, it takes the slot of the least recently
 * seen one with probability 1/ADMIT_ONE_IN, and only if that one has been
 * silent for ACTIVE_MS: established connections that are sending are never
 * pushed out by new tuples.  Cuckoo displacement is tried only while a
 * shard has fewer than 15/16 of its slots live (CUCKOO_MAX_FILL_16THS). */
#define ESTABLISHED_PACKETS 4     /* At most SEEN_PACKETS_MAX. */
#define ADMIT_ONE_IN 16
#define ACTIVE_MS 1000
#define CUCKOO_MAX_FILL_16THS 15

struct entry_hdr {
    int64_t counter;
    uint64_t seen;          /* Last packet, packets, flow bytes: SEEN_*
                             * (the file's comment, "Entries"). */
    uint32_t tag;           /* 0: free; TAG_LIVE set: a live connection;
                             * nonzero without TAG_LIVE: closed by FIN. */
    uint32_t key[];         /* key_words words. */
};

struct shard {
    pthread_mutex_t mutex;
    uint8_t *slots;         /* n_buckets * PANDA_WAYS entries. */
    uint32_t n_live;
    uint64_t inserted, removed, evicted, expired, resumed;
    uint64_t evicted_established, refused;
    struct panda_rng rng;   /* For the admission of new connections and
                             * the flow bytes' rounding (fb_encode()). */
    uint64_t packets[PANDA_MAX_LEVELS];
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
    uint64_t unlocked_packets[PANDA_MAX_LEVELS];    /* Classified without
                                                     * a shard, atomics. */
    uint64_t alloc_failures;                    /* Atomic. */
    struct panda_sizehist *flow_hist;           /* Atomic; or NULL. */
};

size_t
panda_table_entry_size(int family)
{
    return family == 6 ? 64 : 32;
}

static inline uint32_t
fastrange32(uint32_t x, uint32_t n)
{
    return (uint32_t) (((uint64_t) x * n) >> 32);
}

static inline uint64_t
hash_key(const uint32_t *key, unsigned int n, uint64_t seed)
{
    uint64_t h = seed;
    unsigned int i;

    for (i = 0; i + 1 < n; i += 2) {
        uint64_t w = key[i] | ((uint64_t) key[i + 1] << 32);

        h = (h ^ panda_mix64(w)) * 0x9e3779b97f4a7c15ULL;
    }
    if (i < n) {
        h = (h ^ panda_mix64(key[i])) * 0x9e3779b97f4a7c15ULL;
    }
    return panda_mix64(h ^ n);
}

/* Builds the key words of 'pkt'; returns the sub-table to use. */
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

static inline struct entry_hdr *
slot_at(const struct subtable *st, const struct shard *sh, uint32_t bucket,
        unsigned int way)
{
    return (struct entry_hdr *) (sh->slots
                                 + ((size_t) bucket * PANDA_WAYS + way)
                                   * st->entry_size);
}

static inline bool
key_equal(const struct entry_hdr *e, const uint32_t *key, unsigned int n)
{
    if (n == 3) {
        return e->key[0] == key[0] && e->key[1] == key[1]
               && e->key[2] == key[2];
    }
    return !memcmp(e->key, key, n * sizeof *key);
}

struct probe {
    struct shard *shard;
    uint32_t b[2];
    uint32_t tag;
};

static inline void
probe_init(const struct panda_table *t, const struct subtable *st,
           const uint32_t *key, struct probe *pr)
{
    uint64_t h = hash_key(key, st->key_words, t->seed);

    pr->shard = &st->shards[t->shard_bits ? h >> (64 - t->shard_bits) : 0];
    pr->b[0] = fastrange32((uint32_t) h, st->n_buckets);
    pr->b[1] = fastrange32((uint32_t) (h >> 24) * 0x9e3779b1u,
                           st->n_buckets);
    if (pr->b[1] == pr->b[0] && st->n_buckets > 1) {
        pr->b[1] = pr->b[0] + 1 < st->n_buckets ? pr->b[0] + 1 : 0;
    }
    pr->tag = (uint32_t) (h >> 32) | 1;
}

static struct entry_hdr *
probe_find(const struct subtable *st, const struct probe *pr,
           const uint32_t *key)
{
    unsigned int b, w;

    for (b = 0; b < 2; b++) {
        for (w = 0; w < PANDA_WAYS; w++) {
            struct entry_hdr *e = slot_at(st, pr->shard, pr->b[b], w);

            if (e->tag && (e->tag | TAG_LIVE) == pr->tag
                && key_equal(e, key, st->key_words)) {
                return e;
            }
        }
    }
    return NULL;
}

/* Time.  An entry keeps the low 40 bits of the instant of its last packet;
 * an age is the difference modulo 2^40, and a difference in the upper half
 * of that range is an entry last seen "in the future" by a thread whose
 * clock lags another's: age 0.  Ages are 64-bit, so durations up to
 * PANDA_MAX_DURATION_MS (2^32 - 1) compare without truncation. */
#define SEEN_TIME_BITS 40
#define SEEN_TIME_MASK ((UINT64_C(1) << SEEN_TIME_BITS) - 1)
#define SEEN_PACKETS_SHIFT 40
#define SEEN_PACKETS_MAX 7          /* 3 bits, saturating. */
#define SEEN_COUNTED_SHIFT 43
#define SEEN_COUNTED (UINT64_C(1) << SEEN_COUNTED_SHIFT)
#define SEEN_BYTES_SHIFT 44

/* The flow-bytes float (bits 44-63): exponent 'e' (5 bits) above mantissa
 * 'm' (15 bits); the value is m if e = 0, else (2^15 + m) << (e - 1). */
#define FB_MANT_BITS 15
#define FB_EXP_MAX 31
#define FB_MAX (((UINT64_C(1) << (FB_MANT_BITS + 1)) - 1) << (FB_EXP_MAX - 1))

static inline panda_msec_t
age40(panda_msec_t now, panda_msec_t then)
{
    uint64_t d = (now - then) & SEEN_TIME_MASK;

    return d >> (SEEN_TIME_BITS - 1) ? 0 : d;
}

/* The value of flow-bytes float 'f'. */
static inline uint64_t
fb_decode(uint32_t f)
{
    uint32_t e = f >> FB_MANT_BITS;
    uint64_t m = f & ((1u << FB_MANT_BITS) - 1);

    return e ? (m | 1u << FB_MANT_BITS) << (e - 1) : m;
}

/* The flow-bytes float nearest 'v', rounded up or down at random so that
 * its expected value is 'v' (see "Flow bytes" above); FB_MAX and above
 * saturate.  'sh''s generator is drawn only when 'v' is not
 * representable. */
static inline uint32_t
fb_encode(uint64_t v, struct shard *sh)
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
    if (r && panda_rng_next(&sh->rng) >> (64 - s) < r) {
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

/* Payload bytes of the flow of 'e' so far. */
static inline uint64_t
entry_bytes(const struct entry_hdr *e)
{
    return fb_decode((uint32_t) (e->seen >> SEEN_BYTES_SHIFT));
}

/* Adds 'payload' bytes to the flow of 'e'.  The common case, a flow past
 * 64 KiB whose exponent the payload does not change, works on the
 * mantissa in place (the same rounding as fb_encode(): whole units, and
 * one more with probability remainder / unit); the rest goes through
 * fb_encode() on the exact sum. */
static inline void
entry_add_bytes(struct shard *sh, struct entry_hdr *e, uint32_t payload)
{
    uint32_t f = (uint32_t) (e->seen >> SEEN_BYTES_SHIFT);
    uint32_t ex = f >> FB_MANT_BITS;

    if (ex >= 2 && ex < FB_EXP_MAX) {
        unsigned int sh_bits = ex - 1;      /* Unit 2^sh_bits. */
        uint64_t q = (f & ((1u << FB_MANT_BITS) - 1)) | 1u << FB_MANT_BITS;
        uint32_t r = payload & ((1u << sh_bits) - 1);

        q += payload >> sh_bits;
        q += r && panda_rng_next(&sh->rng) >> (64 - sh_bits) < r;
        if (!(q >> (FB_MANT_BITS + 1))) {
            f = ex << FB_MANT_BITS | (uint32_t) (q & ((1u << FB_MANT_BITS)
                                                      - 1));
            goto store;
        }
    }
    f = fb_encode(entry_bytes(e) + payload, sh);
store:
    e->seen = (e->seen & ((UINT64_C(1) << SEEN_BYTES_SHIFT) - 1))
              | (uint64_t) f << SEEN_BYTES_SHIFT;
}

/* The smallest number of packets (the one that ends it included) of a
 * flow that counts in the flow histogram.  The table sees one direction of
 * a connection, and a bare SYN creates no entry (handshakes take no slot),
 * so neither "the handshake was seen" nor "data went both ways" is
 * knowable here; what is known is the packets of this direction, their
 * payload and how the entry ended.  A real connection's direction that
 * carries data sends at least two packets (its data and its FIN, or the
 * ACKs of what the other side sends); a one-packet tuple (data + FIN, or
 * data that then goes silent) is what a flood sends, one per tuple. */
#define FLOW_MIN_PACKETS 2

/* Packets of 'e' so far, saturating at SEEN_PACKETS_MAX. */
static inline unsigned int
entry_packets(const struct entry_hdr *e)
{
    return e->seen >> SEEN_PACKETS_SHIFT & SEEN_PACKETS_MAX;
}

/* Counts the flow of 'e' in the table's flow histogram, unless it has
 * been (each flow once: see "Entries" above), it sent no payload (a tuple
 * that a SYN resumed and that closed at once: nothing to schedule, not a
 * flow of the flow-size CDF) or it sent fewer than 'min_packets' packets.
 * A flow that ends (FIN, RST, expiry) needs FLOW_MIN_PACKETS; a flush
 * (panda/flush, a new table configuration: an operator's action, which a
 * sender cannot time) counts the live flows with payload as they stand.
 * Never called for an evicted entry. */
static void
entry_count_flow(const struct panda_table *t, struct entry_hdr *e,
                 unsigned int min_packets)
{
    struct panda_sizehist *h;
    uint64_t bytes;

    if (!(e->seen & SEEN_COUNTED)) {
        e->seen |= SEEN_COUNTED;
        h = __atomic_load_n(&t->flow_hist, __ATOMIC_RELAXED);
        bytes = entry_bytes(e);
        if (h && bytes && entry_packets(e) >= min_packets) {
            panda_sizehist_count_flow(h, bytes);
        }
    }
}

panda_msec_t
panda_table_age(panda_msec_t now, panda_msec_t last_seen)
{
    return age40(now, last_seen);
}

static inline panda_msec_t
entry_age(const struct entry_hdr *e, panda_msec_t now)
{
    return age40(now, e->seen);
}

/* Records a packet of 'e' at 'now': its time, and one more packet in the
 * saturating 3-bit count above it. */
static inline void
entry_touch(struct entry_hdr *e, panda_msec_t now)
{
    uint64_t packets = e->seen >> SEEN_PACKETS_SHIFT & SEEN_PACKETS_MAX;

    packets += packets < SEEN_PACKETS_MAX;
    e->seen = (e->seen & ~((UINT64_C(1) << SEEN_COUNTED_SHIFT) - 1))
              | packets << SEEN_PACKETS_SHIFT | (now & SEEN_TIME_MASK);
}

/* An established entry has seen ESTABLISHED_PACKETS packets: a new tuple
 * cannot evict it (probe_insert()).  A flood of distinct tuples sends one
 * or two packets each. */
static inline bool
entry_established(const struct entry_hdr *e)
{
    return (e->seen >> SEEN_PACKETS_SHIFT & SEEN_PACKETS_MAX)
           >= ESTABLISHED_PACKETS;
}

/* True if 'e' has been silent for longer than 'timeout' (0: never). */
static inline bool
is_idle(const struct entry_hdr *e, panda_msec_t now, panda_msec_t timeout)
{
    return timeout && entry_age(e, now) > timeout;
}

/* Returns a free slot in 'bucket', or NULL. */
static struct entry_hdr *
bucket_free_slot(const struct subtable *st, const struct shard *sh,
                 uint32_t bucket)
{
    unsigned int w;

    for (w = 0; w < PANDA_WAYS; w++) {
        struct entry_hdr *e = slot_at(st, sh, bucket, w);

        if (!(e->tag & TAG_LIVE)) {
            return e;
        }
    }
    return NULL;
}

/* The candidate bucket of 'e' other than 'bucket'. */
static uint32_t
alt_bucket(const struct panda_table *t, const struct subtable *st,
           const struct entry_hdr *e, uint32_t bucket)
{
    struct probe pr;

    probe_init(t, st, e->key, &pr);
    return pr.b[0] == bucket ? pr.b[1] : pr.b[0];
}

static void
entry_move(const struct subtable *st, struct entry_hdr *dst,
           struct entry_hdr *src)
{
    memcpy(dst, src, st->entry_size);
    src->tag = 0;
}

/* Both candidate buckets are full: try to make room by moving one of their
 * entries to its other bucket (or, two levels deep, one of that bucket's
 * entries to its own other bucket), as in cuckoo hashing.  Returns the
 * freed slot or NULL.  This lets the table fill to about 95% before
 * anything is evicted. */
static struct entry_hdr *
make_room(const struct panda_table *t, const struct subtable *st,
          const struct probe *pr)
{
    struct shard *sh = pr->shard;
    unsigned int b, w, w2;

    for (b = 0; b < 2; b++) {
        for (w = 0; w < PANDA_WAYS; w++) {
            struct entry_hdr *e = slot_at(st, sh, pr->b[b], w);
            uint32_t alt = alt_bucket(t, st, e, pr->b[b]);
            struct entry_hdr *free_slot = bucket_free_slot(st, sh, alt);

            if (free_slot) {
                entry_move(st, free_slot, e);
                return e;
            }
        }
    }
    for (b = 0; b < 2; b++) {
        for (w = 0; w < PANDA_WAYS; w++) {
            struct entry_hdr *e = slot_at(st, sh, pr->b[b], w);
            uint32_t alt = alt_bucket(t, st, e, pr->b[b]);

            for (w2 = 0; w2 < PANDA_WAYS; w2++) {
                struct entry_hdr *e2 = slot_at(st, sh, alt, w2);
                uint32_t alt2 = alt_bucket(t, st, e2, alt);
                struct entry_hdr *free_slot;

                if (alt2 == pr->b[0] || alt2 == pr->b[1]) {
                    continue;
                }
                free_slot = bucket_free_slot(st, sh, alt2);
                if (free_slot) {
                    entry_move(st, free_slot, e2);
                    entry_move(st, e2, e);
                    return e;
                }
            }
        }
    }
    return NULL;
}

/* What a new connection finds among its 2 x PANDA_WAYS candidate slots. */
struct candidates {
    struct entry_hdr *free;         /* A slot with no live entry. */
    struct entry_hdr *oldest;       /* The least recently seen entry... */
    panda_msec_t oldest_age;
    struct entry_hdr *oldest_new;   /* ...and of those not established. */
};

static void
scan_candidates(const struct subtable *st, const struct probe *pr,
                panda_msec_t now, struct candidates *c)
{
    panda_msec_t new_age = 0;
    unsigned int b, w;

    memset(c, 0, sizeof *c);
    for (b = 0; b < 2; b++) {
        for (w = 0; w < PANDA_WAYS; w++) {
            struct entry_hdr *e = slot_at(st, pr->shard, pr->b[b], w);
            panda_msec_t age;

            if (!(e->tag & TAG_LIVE)) {
                c->free = e;
                return;
            }
            age = entry_age(e, now);
            if (!c->oldest || age > c->oldest_age) {
                c->oldest = e;
                c->oldest_age = age;
            }
            if (!entry_established(e) && (!c->oldest_new || age > new_age)) {
                c->oldest_new = e;
                new_age = age;
            }
        }
    }
}

/* Chooses a slot for a new connection, in this order: a free candidate
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
 * been silent longest. */
static struct entry_hdr *
probe_insert(const struct panda_table *t, const struct subtable *st,
             const struct probe *pr, const uint32_t *key, panda_msec_t now)
{
    struct shard *sh = pr->shard;
    struct candidates c;
    struct entry_hdr *e;

    scan_candidates(st, pr, now, &c);
    if (c.free) {
        e = c.free;
        sh->n_live++;
    } else if (is_idle(c.oldest, now, t->cfg.idle_timeout_ms)) {
        e = c.oldest;
        entry_count_flow(t, e, FLOW_MIN_PACKETS);
        sh->expired++;
    } else if (sh->n_live < st->cuckoo_max_live
               && (e = make_room(t, st, pr)) != NULL) {
        sh->n_live++;
    } else if (c.oldest_new) {
        e = c.oldest_new;           /* Evicted: its flow is not counted. */
        sh->evicted++;
    } else if (c.oldest_age >= ACTIVE_MS
               && panda_rng_next(&sh->rng) % ADMIT_ONE_IN == 0) {
        e = c.oldest;
        sh->evicted++;
        sh->evicted_established++;
    } else {
        sh->refused++;
        return NULL;
    }
    e->tag = pr->tag;
    e->counter = 0;
    e->seen = now & SEEN_TIME_MASK;     /* No packet yet: entry_update();
                                         * no bytes, not counted. */
    memcpy(e->key, key, st->key_words * sizeof *key);
    sh->inserted++;
    return e;
}

/* Ends the connection of 'e' (FIN or RST): its flow is counted, it no
 * longer counts as live and its slot is free for the next new connection.
 * Until that happens, the entry stays readable, so that data the sender
 * retransmits after its FIN, or anything it sends after a RST of its own,
 * keeps the connection's counter instead of starting a new connection on
 * top (entry_update()). */
static void
entry_end(const struct panda_table *t, struct shard *sh, struct entry_hdr *e)
{
    if (e->tag & TAG_LIVE) {
        sh->n_live--;
        sh->removed++;
    }
    entry_count_flow(t, e, FLOW_MIN_PACKETS);
    e->tag &= ~TAG_LIVE;
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
            || age40(now, st->alloc_failed_ms) >= ALLOC_RETRY_MS)) {
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

/* Forgets 'e', silent for longer than the idle timeout (its flow counted):
 * the packet that found it is treated as the first of a new connection. */
static void
entry_expire(const struct panda_table *t, struct shard *sh,
             struct entry_hdr *e)
{
    if (e->tag & TAG_LIVE) {
        sh->n_live--;
        sh->expired++;
    }
    entry_count_flow(t, e, FLOW_MIN_PACKETS);
    e->tag = 0;
}

/* Applies 'pkt' to its connection's entry 'e' (found or just inserted) and
 * returns the packet's level (panda_cls_level(), with the entry's counter
 * after the table's bookkeeping below).  The rules (README, "Control packets"), so
 * that nothing a sender sends resets its counter sooner than silence does:
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
 *     (the entry is forgotten, above) or the policy's idle_reset.
 *   - A bare SYN, FIN or RST (no payload, headers of a normal size)
 *     takes the control level; one that carries data (a FIN on the last
 *     segment, TCP Fast Open) or headers longer than any TCP stack sends
 *     (PANDA_MAX_HDR_LEN) is data: those bytes count and it takes the
 *     connection's level. */
static uint8_t
entry_update(const struct panda_table *t, struct shard *sh,
             struct entry_hdr *e, const struct panda_policy *p,
             const struct panda_pkt *pkt, panda_msec_t now)
{
    if (!(e->tag & TAG_LIVE)
        && (pkt->payload || pkt->tcp_flags & PANDA_TCP_SYN)) {
        e->tag |= TAG_LIVE;
        sh->n_live++;
        sh->resumed++;
        if (pkt->tcp_flags & PANDA_TCP_SYN) {
            /* A new flow of the same tuple: its own bytes, to be counted.
             * Data alone continues the flow already counted. */
            e->seen &= (UINT64_C(1) << SEEN_COUNTED_SHIFT) - 1;
        }
    }
    uint8_t level;

    if (is_idle(e, now, p->idle_reset_ms)) {
        e->counter = 0;
    }
    level = panda_cls_level(p, &e->counter, pkt);
    if (pkt->payload && __atomic_load_n(&t->flow_hist, __ATOMIC_RELAXED)) {
        /* Only while someone counts flows: with no flow histogram (the
         * datapath's other_config:panda-histograms=false) the table costs
         * what it did before flows were counted. */
        entry_add_bytes(sh, e, pkt->payload);
    }
    /* Touched first: the packet that ends the flow is one of its packets
     * (entry_count_flow()). */
    entry_touch(e, now);
    if (pkt->tcp_flags & (PANDA_TCP_FIN | PANDA_TCP_RST)) {
        entry_end(t, sh, e);
    }
    return level;
}

/* Counts a packet classified without taking a shard lock (none if there
 * is no table). */
static uint8_t
count_unlocked(struct panda_table *t, uint8_t level)
{
    if (t) {
        __atomic_fetch_add(&t->unlocked_packets[level], 1, __ATOMIC_RELAXED);
    }
    return level;
}

/* Classifies a TCP packet of sub-table 'st' (ready) whose key is 'key'. */
static void
classify_tcp(struct panda_table *t, struct subtable *st, const uint32_t *key,
             const struct panda_policy *p, const struct panda_pkt *pkt,
             panda_msec_t now, struct panda_table_verdict *v)
{
    struct entry_hdr *e;
    struct probe pr;

    probe_init(t, st, key, &pr);
    pthread_mutex_lock(&pr.shard->mutex);
    e = probe_find(st, &pr, key);
    if (e && is_idle(e, now, t->cfg.idle_timeout_ms)) {
        entry_expire(t, pr.shard, e);
        e = NULL;
    }
    if (e) {
        v->level = entry_update(t, pr.shard, e, p, pkt, now);
    } else if (!panda_cls_counted_bytes(pkt)) {
        /* Only a packet that the counter counts (payload, or headers too
         * long for a bare control packet) creates an entry: without one,
         * the verdict is the same (level_without_entry()), and
         * handshakes, pure ACKs (the receiving side of every transfer)
         * and stray RSTs take no slot. */
        v->level = level_without_entry(p, pkt);
    } else if ((e = probe_insert(t, st, &pr, key, now)) != NULL) {
        v->level = entry_update(t, pr.shard, e, p, pkt, now);
    } else {
        v->level = panda_cls_level(p, NULL, pkt);   /* Refused: no room. */
    }
    v->stateful = e != NULL;
    pr.shard->packets[v->level]++;
    pthread_mutex_unlock(&pr.shard->mutex);
}

void
panda_table_classify(struct panda_table *t, const struct panda_policy *p,
                     const struct panda_pkt *pkt, panda_msec_t now,
                     struct panda_table_verdict *v)
{
    uint32_t key[9];
    struct subtable *st;

    v->stateful = false;
    if (PANDA_UNLIKELY(!t || !panda_kind_has_counter(p->kind))
        || pkt->proto != PANDA_IPPROTO_TCP) {
        /* No state to keep: the rule kinds; no table; not TCP, or a later
         * fragment, which have nothing to track them by. */
        v->level = count_unlocked(t, panda_cls_level(p, NULL, pkt));
        goto out;
    }
    st = pkt_key(t, pkt, key);
    if (PANDA_LIKELY(subtable_ready(st))) {
        classify_tcp(t, st, key, p, pkt, now, v);
    } else if (!panda_cls_counted_bytes(pkt)) {
        /* Nothing to insert: no need for the slots yet. */
        v->level = count_unlocked(t, level_without_entry(p, pkt));
    } else if (subtable_alloc(t, st, now)) {
        classify_tcp(t, st, key, p, pkt, now, v);
    } else {
        /* No memory for this family's connections: untracked rather than
         * dropped or guessed. */
        __atomic_fetch_add(&t->alloc_failures, 1, __ATOMIC_RELAXED);
        v->level = count_unlocked(t, panda_cls_level(p, NULL, pkt));
    }

out:
    v->dscp = p->dscp[v->level];
    v->queue = p->queue[v->level];
}

void
panda_table_prefetch(struct panda_table *t, const struct panda_pkt *pkt)
{
    uint32_t key[9];
    struct subtable *st;
    struct probe pr;
    unsigned int b;
    size_t off;

    if (pkt->proto != PANDA_IPPROTO_TCP) {
        return;
    }
    st = pkt_key(t, pkt, key);
    if (!subtable_ready(st)) {
        return;
    }
    probe_init(t, st, key, &pr);
    for (b = 0; b < 2; b++) {
        const char *bucket = (const char *) slot_at(st, pr.shard, pr.b[b], 0);

        for (off = 0; off < PANDA_WAYS * st->entry_size; off += CACHE_LINE) {
            __builtin_prefetch(bucket + off);
        }
    }
}

bool
panda_table_lookup(struct panda_table *t, const struct panda_pkt *pkt,
                   int64_t *counter)
{
    uint32_t key[9];
    struct subtable *st = pkt_key(t, pkt, key);
    struct entry_hdr *e;
    struct probe pr;

    if (!subtable_ready(st)) {
        return false;
    }
    probe_init(t, st, key, &pr);
    pthread_mutex_lock(&pr.shard->mutex);
    e = probe_find(st, &pr, key);
    if (e && !(e->tag & TAG_LIVE)) {
        e = NULL;               /* Ended by FIN. */
    }
    if (e && counter) {
        *counter = e->counter;
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
    uint32_t s;

    if (!subtable_ready(st)) {
        return;
    }
    for (i = 0; i < t->cfg.n_shards; i++) {
        struct shard *sh = &st->shards[i];

        pthread_mutex_lock(&sh->mutex);
        if (sh->n_live) {
            for (s = 0; s < n_slots; s++) {
                struct entry_hdr *e = (struct entry_hdr *)
                                      (sh->slots + (size_t) s
                                                   * st->entry_size);

                if (e->tag & TAG_LIVE) {
                    entry_count_flow(t, e, 1);
                }
            }
            memset(sh->slots, 0, (size_t) n_slots * st->entry_size);
            sh->removed += sh->n_live;
            sh->n_live = 0;
        }
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
    unsigned int i, j;

    for (i = 0; i < n_shards; i++) {
        struct shard *sh = &st->shards[i];

        pthread_mutex_lock(&sh->mutex);
        s->connections += sh->n_live;
        s->inserted += sh->inserted;
        s->removed += sh->removed;
        s->evicted += sh->evicted;
        s->expired += sh->expired;
        s->resumed += sh->resumed;
        s->evicted_established += sh->evicted_established;
        s->refused += sh->refused;
        for (j = 0; j < PANDA_MAX_LEVELS; j++) {
            s->packets[j] += sh->packets[j];
        }
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
        s->packets[j] += __atomic_load_n(&t->unlocked_packets[j],
                                         __ATOMIC_RELAXED);
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
    uint32_t s;

    if (!subtable_ready(st)) {
        return true;
    }

    for (i = 0; i < n_shards; i++) {
        struct shard *sh = &st->shards[i];
        bool more = true;

        pthread_mutex_lock(&sh->mutex);
        for (s = 0; more && sh->n_live && s < n_slots; s++) {
            struct entry_hdr *e = (struct entry_hdr *)
                                  (sh->slots + (size_t) s * st->entry_size);
            struct panda_table_conn_info ci;

            if (!(e->tag & TAG_LIVE)) {
                continue;
            }
            memset(&ci, 0, sizeof ci);
            ci.key.family = family;
            ci.key.proto = 6;
            if (family == 6) {
                memcpy(ci.key.src.v6, &e->key[0], 16);
                memcpy(ci.key.dst.v6, &e->key[4], 16);
            } else {
                ci.key.src.v4 = e->key[0];
                ci.key.dst.v4 = e->key[1];
            }
            ci.key.sport = e->key[st->key_words - 1] >> 16;
            ci.key.dport = e->key[st->key_words - 1] & 0xffff;
            ci.counter = e->counter;
            ci.bytes = entry_bytes(e);
            ci.last_seen_ms = e->seen & SEEN_TIME_MASK;
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

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
 * Entries.  IPv4: 8 (counter) + 4 (last seen, ms) + 4 (hash tag, 0 = free)
 * + 12 (addresses and ports) = 28 bytes, padded to 32.  IPv6: 16 + 36 = 52,
 * padded to 64.  The policy id is not in the key: the datapath keeps one
 * table per policy id.
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
 * or a stateless verdict (a family's slots, allocated on its first packet),
 * never an abort of ovs-vswitchd.
 */
#include <panda/conn-table.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <panda/base.h>

#define PANDA_WAYS 4
#define CACHE_LINE 64
#define TAG_LIVE 1u
#define ALLOC_RETRY_MS 1000     /* After a failed slot allocation, do not
                                 * try again for this long. */

struct entry_hdr {
    int64_t counter;
    uint32_t last_seen;
    uint32_t tag;           /* 0: free; TAG_LIVE set: a live connection;
                             * nonzero without TAG_LIVE: closed by FIN. */
    uint32_t key[];         /* key_words words. */
};

struct shard {
    pthread_mutex_t mutex;
    uint8_t *slots;         /* n_buckets * PANDA_WAYS entries. */
    uint32_t n_live;
    uint64_t inserted, removed, evicted, expired;
    uint64_t packets[PANDA_MAX_LEVELS];
} __attribute__((aligned(CACHE_LINE)));

struct subtable {
    unsigned int key_words;
    size_t entry_size;
    uint32_t n_buckets;         /* Per shard. */
    struct shard *shards;
    void *raw;                  /* Allocation backing all shards' slots. */
    size_t raw_size;
    int ready;                  /* Slots allocated (atomic; see below). */
    bool alloc_failed;          /* Last allocation attempt failed... */
    uint32_t alloc_failed_ms;   /* ...at this time (under 'alloc_mutex'). */
};

struct panda_table {
    struct panda_table_config cfg;
    unsigned int shard_bits;
    uint64_t seed;
    struct subtable v4, v6;
    pthread_mutex_t alloc_mutex;                /* Lazy slot allocation. */
    uint64_t ctl_packets[PANDA_MAX_LEVELS];     /* Stateless, atomics. */
    uint64_t alloc_failures;                    /* Atomic. */
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
mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static inline uint64_t
hash_key(const uint32_t *key, unsigned int n, uint64_t seed)
{
    uint64_t h = seed;
    unsigned int i;

    for (i = 0; i + 1 < n; i += 2) {
        uint64_t w = key[i] | ((uint64_t) key[i + 1] << 32);

        h = (h ^ mix64(w)) * 0x9e3779b97f4a7c15ULL;
    }
    if (i < n) {
        h = (h ^ mix64(key[i])) * 0x9e3779b97f4a7c15ULL;
    }
    return mix64(h ^ n);
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

static inline bool
is_idle(uint32_t now, uint32_t last_seen, uint32_t timeout)
{
    return timeout && (int32_t) (now - last_seen) > (int32_t) timeout;
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

/* Chooses a slot for a new connection: a free candidate slot, an idle
 * candidate (expired), room made by moving entries, or the least recently
 * seen candidate (evicted), in that order. */
static struct entry_hdr *
probe_insert(const struct panda_table *t, const struct subtable *st,
             const struct probe *pr, const uint32_t *key, uint32_t now)
{
    struct shard *sh = pr->shard;
    struct entry_hdr *e = NULL, *victim = NULL;
    int32_t oldest_age = -1;
    unsigned int b, w;

    for (b = 0; b < 2 && !e; b++) {
        for (w = 0; w < PANDA_WAYS; w++) {
            struct entry_hdr *cand = slot_at(st, sh, pr->b[b], w);
            int32_t age;

            if (!(cand->tag & TAG_LIVE)) {
                e = cand;
                break;
            }
            age = (int32_t) (now - cand->last_seen);
            if (!victim || age > oldest_age) {
                oldest_age = age;
                victim = cand;
            }
        }
    }
    if (!e && is_idle(now, victim->last_seen, t->cfg.idle_timeout_ms)) {
        e = victim;
        sh->expired++;
    } else if (!e) {
        e = make_room(t, st, pr);
        if (!e) {
            e = victim;
            sh->evicted++;
        }
    }
    if (!(e->tag & TAG_LIVE)) {
        sh->n_live++;
    }
    e->tag = pr->tag;
    e->counter = 0;
    e->last_seen = now;
    memcpy(e->key, key, st->key_words * sizeof *key);
    sh->inserted++;
    return e;
}

/* Ends the connection of 'e': it no longer counts as live and its slot is
 * free for the next new connection.  After a FIN ('keep'), the entry stays
 * readable until that happens, so that data the sender still retransmits
 * after its FIN keeps the connection's level instead of starting a new
 * connection on top. */
static void
entry_end(struct shard *sh, struct entry_hdr *e, bool keep)
{
    if (e->tag & TAG_LIVE) {
        sh->n_live--;
        sh->removed++;
    }
    e->tag = keep ? e->tag & ~TAG_LIVE : 0;
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
subtable_alloc(struct panda_table *t, struct subtable *st, uint32_t now)
{
    pthread_mutex_lock(&t->alloc_mutex);
    if (!st->ready
        && (!st->alloc_failed
            || (uint32_t) (now - st->alloc_failed_ms) >= ALLOC_RETRY_MS)) {
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

void
panda_table_classify(struct panda_table *t, const struct panda_policy *p,
               const struct panda_pkt *pkt, uint32_t now,
               struct panda_table_verdict *v)
{
    uint32_t key[9];
    struct subtable *st;
    struct probe pr;
    struct entry_hdr *e;
    uint8_t level;

    if (pkt->proto != 6) {
        goto stateless;
    }

    st = pkt_key(t, pkt, key);
    if (PANDA_UNLIKELY(!subtable_ready(st))
        && !subtable_alloc(t, st, now)) {
        /* No memory for this family's connections: mark the packet like a
         * control packet rather than drop it or guess its level. */
        __atomic_fetch_add(&t->alloc_failures, 1, __ATOMIC_RELAXED);
        goto stateless;
    }
    probe_init(t, st, key, &pr);
    pthread_mutex_lock(&pr.shard->mutex);
    e = probe_find(st, &pr, key);
    if (pkt->tcp_flags & (PANDA_TCP_FIN | PANDA_TCP_RST)) {
        /* Connection ends: forget it; control packets go on top. */
        if (e) {
            entry_end(pr.shard, e, !(pkt->tcp_flags & PANDA_TCP_RST));
        }
        level = p->ctl_level;
    } else if (pkt->tcp_flags & PANDA_TCP_SYN) {
        /* A new connection (or a reused tuple) starts from zero. */
        if (!e) {
            e = probe_insert(t, st, &pr, key, now);
        } else if (!(e->tag & TAG_LIVE)) {
            e->tag |= TAG_LIVE;
            pr.shard->n_live++;
            pr.shard->inserted++;
        }
        e->counter = 0;
        e->last_seen = now;
        level = p->ctl_level;
    } else {
        if (!e) {
            e = probe_insert(t, st, &pr, key, now);
        } else if (is_idle(now, e->last_seen, t->cfg.idle_timeout_ms)) {
            /* Idle past the timeout: as good as a new connection. */
            if (e->tag & TAG_LIVE) {
                pr.shard->expired++;
            } else {
                e->tag |= TAG_LIVE;
                pr.shard->n_live++;
            }
            pr.shard->inserted++;
            e->counter = 0;
        } else if (p->idle_reset_ms
                   && is_idle(now, e->last_seen, p->idle_reset_ms)) {
            e->counter = 0;
        }
        if (pkt->payload) {
            e->counter = panda_policy_update(p, e->counter, pkt->payload);
        }
        e->last_seen = now;
        level = panda_policy_level(p, e->counter);
    }
    pr.shard->packets[level]++;
    pthread_mutex_unlock(&pr.shard->mutex);
    v->stateful = true;
    goto out;

stateless:
    level = p->ctl_level;
    __atomic_fetch_add(&t->ctl_packets[level], 1, __ATOMIC_RELAXED);
    v->stateful = false;

out:
    v->level = level;
    v->dscp = p->dscp[level];
    v->queue = p->queue[level];
}

void
panda_table_prefetch(struct panda_table *t, const struct panda_pkt *pkt)
{
    uint32_t key[9];
    struct subtable *st;
    struct probe pr;
    unsigned int b;
    size_t off;

    if (pkt->proto != 6) {
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

/* Returns false if the shard headers cannot be allocated. */
static bool
subtable_init(struct subtable *st, unsigned int key_words, size_t entry_size,
              uint32_t capacity, unsigned int n_shards)
{
    uint64_t per_shard = (capacity + n_shards - 1) / n_shards;
    unsigned int i;

    st->key_words = key_words;
    st->entry_size = entry_size;
    st->n_buckets = (uint32_t) ((per_shard + PANDA_WAYS - 1) / PANDA_WAYS);
    if (st->n_buckets < 2) {
        st->n_buckets = 2;
    }
    st->raw_size = (size_t) st->n_buckets * PANDA_WAYS * entry_size
                   * n_shards + CACHE_LINE;
    if (posix_memalign((void **) &st->shards, CACHE_LINE,
                       n_shards * sizeof *st->shards)) {
        st->shards = NULL;
        return false;
    }
    memset(st->shards, 0, n_shards * sizeof *st->shards);
    for (i = 0; i < n_shards; i++) {
        pthread_mutex_init(&st->shards[i].mutex, NULL);
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
    unsigned int n_shards, bits = 0;
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
    n_shards = cfg->n_shards;
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
    n_shards = 1u << bits;

    t = calloc(1, sizeof *t);
    if (!t) {
        return create_error(errp, "out of memory");
    }
    t->cfg = *cfg;
    t->cfg.n_shards = n_shards;
    t->shard_bits = bits;
    clock_gettime(CLOCK_REALTIME, &ts);
    t->seed = mix64((uint64_t) ts.tv_nsec ^ ((uint64_t) ts.tv_sec << 30)
                    ^ (uintptr_t) t);
    pthread_mutex_init(&t->alloc_mutex, NULL);
    if (!subtable_init(&t->v4, 3, panda_table_entry_size(4), cfg->capacity,
                       n_shards)
        || !subtable_init(&t->v6, 9, panda_table_entry_size(6),
                          cfg->capacity, n_shards)) {
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

static void
subtable_flush(struct subtable *st, unsigned int n_shards)
{
    size_t bytes = (size_t) st->n_buckets * PANDA_WAYS * st->entry_size;
    unsigned int i;

    if (!subtable_ready(st)) {
        return;
    }
    for (i = 0; i < n_shards; i++) {
        struct shard *sh = &st->shards[i];

        pthread_mutex_lock(&sh->mutex);
        if (sh->n_live) {
            memset(sh->slots, 0, bytes);
            sh->removed += sh->n_live;
            sh->n_live = 0;
        }
        pthread_mutex_unlock(&sh->mutex);
    }
}

void
panda_table_flush(struct panda_table *t)
{
    subtable_flush(&t->v4, t->cfg.n_shards);
    subtable_flush(&t->v6, t->cfg.n_shards);
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
        s->packets[j] += __atomic_load_n(&t->ctl_packets[j],
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
            ci.last_seen_ms = e->last_seen;
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

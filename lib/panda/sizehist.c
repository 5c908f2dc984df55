/* Live size histograms; see sizehist.h. */
#include <panda/sizehist.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/base.h>

/* Payload: 256 buckets of 8 bytes below this, then 4 per power of two. */
#define PAYLOAD_LINEAR 2048
#define PAYLOAD_LINEAR_BUCKETS (PAYLOAD_LINEAR / 8)
#define PAYLOAD_LINEAR_OCTAVE 11            /* log2(PAYLOAD_LINEAR). */
/* Flow: exact below 8, then 4 per power of two. */
#define FLOW_LINEAR 8
#define FLOW_LINEAR_OCTAVE 3

size_t
panda_sizehist_n_buckets(enum panda_sizehist_kind kind)
{
    return kind == PANDA_SIZEHIST_PAYLOAD ? PANDA_SIZEHIST_PAYLOAD_BUCKETS
                                          : PANDA_SIZEHIST_FLOW_BUCKETS;
}

static inline unsigned int
log2_floor(uint64_t v)
{
    return 63 - __builtin_clzll(v);
}

/* Bucket of 'v' >= 2^first_octave in the log part that starts at bucket
 * 'base': 4 buckets per power of two. */
static inline size_t
log_bucket(uint64_t v, unsigned int first_octave, size_t base)
{
    unsigned int o = log2_floor(v);

    return base + (size_t) (o - first_octave) * 4 + ((v >> (o - 2)) & 3);
}

static inline uint64_t
log_lower(size_t i, unsigned int first_octave)
{
    unsigned int o = first_octave + i / 4;

    return (uint64_t) (4 + i % 4) << (o - 2);
}

static inline uint64_t
log_width(size_t i, unsigned int first_octave)
{
    return UINT64_C(1) << (first_octave + i / 4 - 2);
}

size_t
panda_sizehist_bucket(enum panda_sizehist_kind kind, uint64_t v)
{
    if (kind == PANDA_SIZEHIST_PAYLOAD) {
        return panda_sizehist_payload_bucket(v > PANDA_MAX_PKT_SIZE
                                             ? PANDA_MAX_PKT_SIZE
                                             : (uint32_t) v);
    }
    return v < FLOW_LINEAR ? v : log_bucket(v, FLOW_LINEAR_OCTAVE,
                                            FLOW_LINEAR);
}

uint64_t
panda_sizehist_lower(enum panda_sizehist_kind kind, size_t b)
{
    if (kind == PANDA_SIZEHIST_PAYLOAD) {
        if (b < PAYLOAD_LINEAR_BUCKETS) {
            return b ? b * 8 : 1;
        }
        return log_lower(b - PAYLOAD_LINEAR_BUCKETS, PAYLOAD_LINEAR_OCTAVE);
    }
    return b < FLOW_LINEAR ? b : log_lower(b - FLOW_LINEAR,
                                           FLOW_LINEAR_OCTAVE);
}

uint64_t
panda_sizehist_upper(enum panda_sizehist_kind kind, size_t b)
{
    if (kind == PANDA_SIZEHIST_PAYLOAD) {
        if (b < PAYLOAD_LINEAR_BUCKETS) {
            return b * 8 + 7;
        }
        b -= PAYLOAD_LINEAR_BUCKETS;
        return log_lower(b, PAYLOAD_LINEAR_OCTAVE)
               + log_width(b, PAYLOAD_LINEAR_OCTAVE) - 1;
    }
    if (b < FLOW_LINEAR) {
        return b;
    }
    b -= FLOW_LINEAR;
    return log_lower(b, FLOW_LINEAR_OCTAVE)
           + (log_width(b, FLOW_LINEAR_OCTAVE) - 1);
}

void
panda_sizehist_reset(struct panda_sizehist *h)
{
    memset(h, 0, sizeof *h);
}

void
panda_sizehist_count_payload(struct panda_sizehist *h, unsigned int level,
                             uint32_t payload)
{
    size_t b = panda_sizehist_bucket(PANDA_SIZEHIST_PAYLOAD, payload);

    if (level >= PANDA_MAX_LEVELS) {
        level = PANDA_MAX_LEVELS - 1;
    }
    __atomic_fetch_add(&h->payload[level][b], 1, __ATOMIC_RELAXED);
}

void
panda_sizehist_run_next(struct panda_sizehist *h, struct panda_sizehist_run *r,
                        unsigned int level, uint32_t payload)
{
    size_t b = panda_sizehist_bucket(PANDA_SIZEHIST_PAYLOAD, payload);
    uint64_t *c = &h->payload[level < PANDA_MAX_LEVELS
                              ? level : PANDA_MAX_LEVELS - 1][b];

    if (c != r->counter) {
        panda_sizehist_run_end(r);
        r->counter = c;
    }
    r->n++;
    r->payload = payload;
    r->level = level;
}

void
panda_sizehist_run_end(struct panda_sizehist_run *r)
{
    if (r->n) {
        __atomic_fetch_add(r->counter, r->n, __ATOMIC_RELAXED);
        r->n = 0;
    }
}

void
panda_sizehist_count_flow(struct panda_sizehist *h, uint64_t bytes)
{
    size_t b = panda_sizehist_bucket(PANDA_SIZEHIST_FLOW, bytes);

    __atomic_fetch_add(&h->flow[b], 1, __ATOMIC_RELAXED);
}

static void
load_all(uint64_t *dst, const uint64_t *src, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    }
}

void
panda_sizehist_snapshot(struct panda_sizehist *dst,
                        const struct panda_sizehist *src)
{
    load_all(&dst->payload[0][0], &src->payload[0][0],
             sizeof src->payload / sizeof src->payload[0][0]);
    load_all(dst->flow, src->flow, PANDA_SIZEHIST_FLOW_BUCKETS);
}

static uint64_t
sat_sum(const uint64_t *c, size_t n)
{
    uint64_t s = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        s = s + c[i] < s ? UINT64_MAX : s + c[i];
    }
    return s;
}

uint64_t
panda_sizehist_flows(const struct panda_sizehist *h)
{
    return sat_sum(h->flow, PANDA_SIZEHIST_FLOW_BUCKETS);
}

/* Longest line: "payload 7 65535 18446744073709551615\n". */
#define LINE_MAX_LEN 48

char *
panda_sizehist_format(const struct panda_sizehist *h)
{
    size_t size = LINE_MAX_LEN * (1 + PANDA_MAX_LEVELS
                                  * PANDA_SIZEHIST_PAYLOAD_BUCKETS
                                  + PANDA_SIZEHIST_FLOW_BUCKETS);
    char *s = panda_xmalloc(size);
    size_t n;
    int level;
    size_t b;

    /* One buffer of the largest size, trimmed at the end: appending line
     * by line would copy the text once per line. */
    n = snprintf(s, size, "panda-histogram %d\n", PANDA_SIZEHIST_VERSION);
    for (level = 0; level < PANDA_MAX_LEVELS; level++) {
        for (b = 0; b < PANDA_SIZEHIST_PAYLOAD_BUCKETS; b++) {
            if (h->payload[level][b]) {
                n += snprintf(s + n, size - n, "payload %d %" PRIu64 " %"
                              PRIu64 "\n", level,
                              panda_sizehist_lower(PANDA_SIZEHIST_PAYLOAD,
                                                   b),
                              h->payload[level][b]);
            }
        }
    }
    for (b = 0; b < PANDA_SIZEHIST_FLOW_BUCKETS; b++) {
        if (h->flow[b]) {
            n += snprintf(s + n, size - n, "flow %" PRIu64 " %" PRIu64 "\n",
                          panda_sizehist_lower(PANDA_SIZEHIST_FLOW, b),
                          h->flow[b]);
        }
    }
    return panda_xrealloc(s, n + 1);
}

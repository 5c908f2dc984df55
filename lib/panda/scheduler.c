/*
 * The Panda egress scheduler core (see scheduler.h for the contract and
 * README.md, "Egress scheduler", for the decisions with their reasons).
 *
 * Layout.  Three arrays allocated at create time and never resized:
 *
 *   - packet nodes, one per packet the port may hold (limit-packets):
 *     16 bytes each (the caller's handle, the length, the next node);
 *   - flow queues: the pool (flow-queues) followed by one queue per level
 *     that is the level's own queue: its FIFO when per-flow is off, its
 *     overflow queue when per-flow is on.  32 bytes each;
 *   - the hash index over the pool's active queues: a power of two of
 *     4-byte bucket heads, at least one per pool queue, chained through the
 *     queues.
 *
 * With the default flow-queues = limit-packets that is 16 + 32 + 4..8 = 52
 * to 56 bytes per configured packet, plus about 1.6 KB of fixed state
 * (struct panda_sched, mostly the configuration and per-level counters).
 * Links are 32-bit indices (NIL = none), which halves the nodes against
 * pointers and lets one free list run through each array.
 *
 * Per level, the active queues (those holding packets) form a ring served
 * by deficit round robin; a queue leaves the ring, and a pool queue returns
 * to the pool, the moment it empties.  The ring's head always has enough
 * deficit for its head packet (level_settle() keeps that true after every
 * change), so "which packet goes next" is a pure function of the state:
 * panda_sched_next_ns() can answer it without changing anything, and the
 * shaper can test the exact packet before it is taken.
 */
#include <panda/scheduler.h>

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <panda/rng.h>
#include <panda/base.h>

#define NIL UINT32_MAX
#define ARRAY_SIZE(A) (sizeof (A) / sizeof *(A))
#define OVS_UNLIKELY_(x) __builtin_expect(!!(x), 0)

/* Limits of the text form (checked by panda_sched_config_set()). */
#define RATE_MIN 1000ULL                /* bit/s; keeps the cost in range. */
#define RATE_MAX 1000000000000000ULL    /* 1 Pbit/s. */
#define QUANTUM_MIN 64                  /* Bounds DRR rotations per packet. */
#define QUANTUM_MAX (1u << 20)
#define GUARD_MAX 500                   /* Above half, "lower" would win. */
#define EWMA_MAX 20
#define CODEL_TIME_MIN 1000ULL          /* 1 us: CoDel's clock ticks ~1 us. */
#define CODEL_TIME_MAX 60000000000ULL   /* 60 s: well inside its 32 bits. */
#define BURST_DEFAULT_NS 100000         /* 100 us at the rate... */
#define BURST_DEFAULT_MIN (2 * PANDA_SCHED_MTU)     /* ...or 2 MTUs. */
#define CATCH_UP_DEFAULT_NS 10000000    /* 10 ms at the rate, >= burst. */

/* ------------------------------------------------------------------------
 * The shared budget.
 * ------------------------------------------------------------------------ */

struct panda_sched_budget {
    _Atomic uint64_t held;
    uint64_t max;
};

struct panda_sched_budget *
panda_sched_budget_create(uint64_t max_packets)
{
    struct panda_sched_budget *b = malloc(sizeof *b);

    if (b) {
        atomic_init(&b->held, 0);
        b->max = max_packets;
    }
    return b;
}

void
panda_sched_budget_destroy(struct panda_sched_budget *b)
{
    free(b);
}

uint64_t
panda_sched_budget_held(const struct panda_sched_budget *b)
{
    return atomic_load_explicit(&((struct panda_sched_budget *) b)->held,
                                memory_order_relaxed);
}

/* Takes one packet from 'b'; false if it is spent.  A compare-and-swap
 * loop, not add-then-undo, so that a failed attempt never makes another
 * thread's attempt fail too. */
static bool
budget_take(struct panda_sched_budget *b)
{
    uint64_t held = atomic_load_explicit(&b->held, memory_order_relaxed);

    do {
        if (held >= b->max) {
            return false;
        }
    } while (!atomic_compare_exchange_weak_explicit(&b->held, &held,
                                                    held + 1,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}

static void
budget_give(struct panda_sched_budget *b, uint64_t n)
{
    if (b && n) {
        atomic_fetch_sub_explicit(&b->held, n, memory_order_relaxed);
    }
}

/* ------------------------------------------------------------------------
 * Configuration: the key table.
 *
 * Every key is one row of panda_sched_keys[]; the parser, the validator,
 * the two formatters, config_init()'s defaults, the "unknown key" message
 * and the generated docs all read the row, so a key cannot be known to one
 * and not to the others.  What a row cannot say (how keys constrain each
 * other, the WRED rules' own syntax, the rate's units) is code below, and
 * its messages name the key all the same.
 * ------------------------------------------------------------------------ */

#define PORT_KEY(FIELD) \
    offsetof(struct panda_sched_config, FIELD), \
    sizeof(((struct panda_sched_config *) 0)->FIELD)
#define LEVEL_KEY(FIELD) \
    offsetof(struct panda_sched_level_config, FIELD), \
    sizeof(((struct panda_sched_level_config *) 0)->FIELD)

const struct panda_sched_key panda_sched_keys[] = {
    { "levels", PANDA_SCHED_KEY_UINT, PANDA_SCHED_KEY_SHORT,
      1, PANDA_SCHED_MAX_LEVELS, "", "8", NULL,
      "Strict priority levels, 0 the highest.  A packet whose level is"
      " beyond the last goes to the lowest level.",
      PORT_KEY(n_levels) },
    { "max-rate", PANDA_SCHED_KEY_RATE, 0,
      RATE_MIN, RATE_MAX, "bit/s", NULL, "none (not shaped)",
      "Rate the port is shaped to, in bit/s, as a number or with an SI"
      " multiplier and unit: `50000000`, `50M`, `50Mbit`, `1.5G`.  Without"
      " it the port is not shaped; `0` is refused.",
      PORT_KEY(rate_bps) },
    { "burst", PANDA_SCHED_KEY_UINT, PANDA_SCHED_KEY_SHAPED,
      1, UINT32_MAX, "bytes", NULL,
      "2 x 1514 or 100 us at `max-rate`, whichever is larger",
      "Depth of the token bucket, in bytes: what may leave at once after"
      " the port was empty.  A thread that comes back late to a backlogged"
      " port does not need a deeper bucket: `catch-up` covers it.",
      PORT_KEY(burst_bytes) },
    { "catch-up", PANDA_SCHED_KEY_UINT, PANDA_SCHED_KEY_SHAPED,
      1, UINT32_MAX, "bytes", NULL,
      "10 ms at `max-rate`, at least `burst`",
      "Bytes a backlogged port may send at once when the thread that serves"
      " it comes back late (a PMD thread the kernel preempted, the main"
      " thread waiting for a CPU): what the link would have sent meanwhile,"
      " up to this much, so the port keeps its rate.  What the port earns"
      " while empty still stops at `burst`.  At least `burst`; equal to"
      " `burst`, a plain token bucket.",
      PORT_KEY(catch_up_bytes) },
    { "limit-bytes", PANDA_SCHED_KEY_UINT, PANDA_SCHED_KEY_SHORT,
      1, UINT32_MAX, "bytes", "1000000", NULL,   /* sch_pias's buffer */
      "Bytes the port holds at most, all levels together.",
      PORT_KEY(limit_bytes) },
    { "limit-packets", PANDA_SCHED_KEY_UINT, PANDA_SCHED_KEY_SHORT,
      1, PANDA_SCHED_MAX_PACKETS, "packets",
      "1000", NULL,                             /* A Linux txqueuelen. */
      "Packets the port holds at most, all levels together.  Also sizes the"
      " scheduler's memory (`panda_sched_memory()`).",
      PORT_KEY(limit_packets) },
    { "flow-queues", PANDA_SCHED_KEY_UINT, 0,
      1, PANDA_SCHED_MAX_PACKETS, "queues", NULL, "`limit-packets`",
      "Per-flow queues in the pool that all levels share, at most"
      " `limit-packets`.  When they are all in use, a new flow shares its"
      " level's overflow queue.",
      PORT_KEY(max_flow_queues) },
    { "ecn-threshold", PANDA_SCHED_KEY_UINT, PANDA_SCHED_KEY_SHORT,
      0, UINT32_MAX, "bytes", "0", "0 (off)",
      "An ECN-capable packet is marked CE when the backlog it finds, summed"
      " over all levels, exceeds this many bytes; 0 marks nothing.  Below"
      " `limit-bytes`.",
      PORT_KEY(ecn_threshold_bytes) },
    { "ecn-ahead", PANDA_SCHED_KEY_BOOL, 0,
      0, 1, "", "false", NULL,
      "`ecn-threshold` compares the backlog ahead of the packet: its own"
      " level's and the levels' above it, what it waits behind under strict"
      " priority.  `false`: the port's, all levels summed (the Panda"
      " thesis's scheme 3 and PIAS's sch_pias), which also marks packets of"
      " the top levels for a backlog in the levels below, a queue they do"
      " not wait in.  The lowest level is compared with the port's backlog"
      " either way.",
      PORT_KEY(ecn_ahead) },
    { "guard", PANDA_SCHED_KEY_UINT, PANDA_SCHED_KEY_SHORT,
      0, GUARD_MAX, "permille", "20", NULL,
      "Starvation guard: the share of the link, in thousandths, that"
      " waiting lower levels get while higher levels are backlogged.  0 is"
      " strict priority (the Panda thesis's scheduler), where a sender that"
      " keeps the top level busy, with small packets that Panda keeps"
      " there, stops every demoted flow.",
      PORT_KEY(guard_permille) },
    { "push-out", PANDA_SCHED_KEY_BOOL, 0,
      0, 1, "", "true", NULL,
      "When the buffer is full, an arriving packet makes room by dropping"
      " the oldest packets of the lowest level holding packets below its"
      " own, so strict priority holds for the buffer as for the link; it is"
      " dropped itself only when the levels below hold too little."
      "  `false`: drop-tail.",
      PORT_KEY(push_out) },
    { "wred", PANDA_SCHED_KEY_WRED, 0,
      0, PANDA_SCHED_MAX_WRED, "rules", "none", NULL,
      "Label-aware WRED rules `DSCP[-DSCP]:MIN:MAX:PROB` separated by `/`,"
      " e.g. `0-45:15000:700000:0.1`: a packet of the label finding more"
      " than MIN bytes of port backlog is marked CE (ECN-capable) or"
      " dropped with a probability rising to PROB at MAX, and dropped"
      " above MAX.  Rules may not overlap; `none`: no rules.",
      0, 0 },
    { "wred-ewma", PANDA_SCHED_KEY_UINT, PANDA_SCHED_KEY_SHORT,
      0, EWMA_MAX, "", "0", NULL,
      "0: WRED compares the instantaneous backlog; S: RED's average with"
      " weight 2^-S.",
      PORT_KEY(wred_ewma_shift) },
    { "seed", PANDA_SCHED_KEY_UINT, PANDA_SCHED_KEY_SHORT,
      0, UINT64_MAX, "", "1", NULL,
      "Seed of WRED's random draws, so that runs repeat.",
      PORT_KEY(seed) },
    { "per-flow", PANDA_SCHED_KEY_BOOL, PANDA_SCHED_KEY_LEVEL,
      0, 1, "", "true", NULL,
      "Per-flow queues served by deficit round robin in the level (FISH);"
      " `false`: one first-in first-out queue.",
      LEVEL_KEY(per_flow) },
    { "quantum", PANDA_SCHED_KEY_UINT, PANDA_SCHED_KEY_LEVEL,
      QUANTUM_MIN, QUANTUM_MAX, "bytes", "1514", NULL,
      "Bytes a flow queue of the level may send per round of deficit round"
      " robin.",
      LEVEL_KEY(quantum) },
    { "fq-codel", PANDA_SCHED_KEY_BOOL, PANDA_SCHED_KEY_LEVEL,
      0, 1, "", "false", NULL,
      "The level's per-flow queues served as fq_codel serves them (RFC"
      " 8290): new flows first, then old ones, each for a `quantum` a"
      " round, and CoDel on each queue (`codel-target`, `codel-interval`,"
      " `codel-ecn`); when the buffer is full and the levels below hold"
      " nothing, the level's fattest flow makes room.  Needs `per-flow`.",
      LEVEL_KEY(fq_codel) },
    { "codel-target", PANDA_SCHED_KEY_TIME, PANDA_SCHED_KEY_CODEL,
      CODEL_TIME_MIN, CODEL_TIME_MAX, "", "5ms", NULL,
      "CoDel's target at fq-codel levels: the sojourn time (from enqueue to"
      " dequeue) a flow's queue may keep, as `5ms`, `500us`.",
      PORT_KEY(codel_target_ns) },
    { "codel-interval", PANDA_SCHED_KEY_TIME, PANDA_SCHED_KEY_CODEL,
      CODEL_TIME_MIN, CODEL_TIME_MAX, "", "100ms", NULL,
      "CoDel's interval at fq-codel levels: how long sojourn must stay above"
      " `codel-target` before CoDel drops or marks, and the first spacing of"
      " its signals (then interval / sqrt(count)); about a round-trip"
      " time.",
      PORT_KEY(codel_interval_ns) },
    { "codel-ecn", PANDA_SCHED_KEY_BOOL, PANDA_SCHED_KEY_CODEL,
      0, 1, "", "true", NULL,
      "CoDel marks ECN-capable packets CE instead of dropping them, as"
      " fq_codel's `ecn`; `false`: it drops.",
      PORT_KEY(codel_ecn) },
};
const size_t panda_sched_n_keys = ARRAY_SIZE(panda_sched_keys);

const struct panda_sched_key *
panda_sched_key_find(const char *name)
{
    size_t i;

    for (i = 0; i < panda_sched_n_keys; i++) {
        if (!strcmp(panda_sched_keys[i].name, name)) {
            return &panda_sched_keys[i];
        }
    }
    return NULL;
}

/* The field of 'k' in 'cfg' ('level' for a per-level key). */
static void *
key_field(const struct panda_sched_key *k, struct panda_sched_config *cfg,
          unsigned int level)
{
    char *base = (k->flags & PANDA_SCHED_KEY_LEVEL
                  ? (char *) &cfg->level[level] : (char *) cfg);

    return base + k->offset;
}

static uint64_t
key_get(const struct panda_sched_key *k,
        const struct panda_sched_config *cfg, unsigned int level)
{
    const void *p = key_field(k, (struct panda_sched_config *) cfg, level);

    switch (k->size) {
    case 1: return *(const uint8_t *) p;
    case 2: return *(const uint16_t *) p;
    case 4: return *(const uint32_t *) p;
    default: return *(const uint64_t *) p;
    }
}

static void
key_put(const struct panda_sched_key *k, struct panda_sched_config *cfg,
        unsigned int level, uint64_t v)
{
    void *p = key_field(k, cfg, level);

    switch (k->size) {
    case 1: *(uint8_t *) p = (uint8_t) v; break;
    case 2: *(uint16_t *) p = (uint16_t) v; break;
    case 4: *(uint32_t *) p = (uint32_t) v; break;
    default: *(uint64_t *) p = v; break;
    }
}

/* Whether 'k' has a default of its own (else 0 means "unset", resolved at
 * create or meaning "off"). */
static bool
key_has_default(const struct panda_sched_key *k)
{
    return k->def != NULL;
}

static char *
parse_bool(const char *key, const char *value, bool *out)
{
    if (!strcmp(value, "true")) {
        *out = true;
    } else if (!strcmp(value, "false")) {
        *out = false;
    } else {
        return panda_asprintf("%s: \"%s\" is not true or false", key, value);
    }
    return NULL;
}

/* 'ns' in the largest unit that shows it exactly: "5ms", "1500us". */
static char *
format_time(uint64_t ns)
{
    return (ns % 1000000000 == 0 ? panda_asprintf("%" PRIu64 "s",
                                                  ns / 1000000000)
            : ns % 1000000 == 0 ? panda_asprintf("%" PRIu64 "ms",
                                                 ns / 1000000)
            : ns % 1000 == 0 ? panda_asprintf("%" PRIu64 "us", ns / 1000)
            : panda_asprintf("%" PRIu64 "ns", ns));
}

/* A rate in bit/s: a decimal number, an optional SI multiplier (k, M, G, T;
 * either case, since "m" cannot mean milli for a link) and an optional unit
 * "bit", "bps" or "bit/s": "50000000", "50M", "50Mbit", "1.5G".  Bytes are
 * refused rather than guessed ("50MB"). */
static char *
parse_rate(const char *key, const char *value, uint64_t *out)
{
    static const char examples[] = "e.g. 50000000, 50M, 50Mbit, 1.5Gbit";
    const char *p = value;
    double v, mult = 1;
    char *end;

    if (*p < '0' || *p > '9') {
        return panda_asprintf("%s: \"%s\" is not a rate in bit/s (%s)",
                              key, value, examples);
    }
    v = strtod(p, &end);
    p = end;
    switch (*p) {
    case 'k': case 'K': mult = 1e3; p++; break;
    case 'm': case 'M': mult = 1e6; p++; break;
    case 'g': case 'G': mult = 1e9; p++; break;
    case 't': case 'T': mult = 1e12; p++; break;
    }
    if (*p && strcmp(p, "bit") && strcmp(p, "bps") && strcmp(p, "bit/s")) {
        return panda_asprintf("%s: \"%s\": unknown unit \"%s\" (rates are in"
                              " bit/s, %s)", key, value, p, examples);
    }
    v = v * mult;
    if (v == 0) {
        return panda_asprintf("%s: 0 is not a rate (leave the key out for"
                              " an unshaped port)", key);
    }
    if (!(v >= RATE_MIN && v <= RATE_MAX)) {
        return panda_asprintf("%s: \"%s\" out of range (%llu bit/s .. %llu"
                              " bit/s)", key, value, RATE_MIN, RATE_MAX);
    }
    *out = (uint64_t) (v + 0.5);
    return NULL;
}

/* A duration with its unit, "5ms", "100us", "0.5s", "250ns", in ns within
 * ['min', 'max'] ns. */
static char *
parse_time(const char *key, const char *value, uint64_t min, uint64_t max,
           uint64_t *out)
{
    static const struct {
        const char *unit;
        double ns;
    } units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
    char *end;
    double v;
    size_t i;

    if (*value < '0' || *value > '9') {
        return panda_asprintf("%s: \"%s\" is not a time (e.g. 5ms, 100us)",
                              key, value);
    }
    v = strtod(value, &end);
    for (i = 0; i < ARRAY_SIZE(units); i++) {
        if (!strcmp(end, units[i].unit)) {
            break;
        }
    }
    if (i == ARRAY_SIZE(units)) {
        return panda_asprintf("%s: \"%s\" needs a unit, ns, us, ms or s"
                              " (e.g. 5ms)", key, value);
    }
    v *= units[i].ns;
    if (!(v >= min && v <= max)) {
        char *lo = format_time(min), *hi = format_time(max);
        char *err = panda_asprintf("%s: \"%s\" out of range (%s..%s)", key,
                                   value, lo, hi);

        free(lo);
        free(hi);
        return err;
    }
    *out = (uint64_t) (v + 0.5);
    return NULL;
}

/* A probability "0".."1" as a decimal, into 1/65536 units. */
static char *
parse_prob(const char *key, const char *s, uint32_t *out)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || *end || *s == '-' || *s == '+' || !(v >= 0 && v <= 1)) {
        return panda_asprintf("%s: probability \"%s\" is not a number in"
                              " 0..1", key, s);
    }
    *out = (uint32_t) (v * PANDA_SCHED_PROB_ONE + 0.5);
    return NULL;
}

/* Copies the 'n' bytes at 's' into 'buf' (of 'size') as a string; false if
 * they do not fit. */
static bool
copy_field(char *buf, size_t size, const char *s, size_t n)
{
    if (n >= size) {
        return false;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

/* One WRED rule, "DSCP[-DSCP]:MIN:MAX:PROB", e.g. "46:15000:1000000:0.1"
 * or "0-45:15000:700000:0.1".  Thresholds in bytes of port backlog. */
static char *
parse_wred_rule(const char *item, struct panda_sched_wred *w)
{
    char field[4][32];
    const char *p = item, *dash;
    uint64_t lo, hi, min, max;
    char *err;
    int i;

    for (i = 0; i < 4; i++) {
        const char *colon = i < 3 ? strchr(p, ':') : p + strlen(p);

        if (!colon || !copy_field(field[i], sizeof field[i], p, colon - p)) {
            return panda_asprintf("wred: \"%s\" is not DSCP[-DSCP]:MIN:MAX:"
                                  "PROB (e.g. 0-45:15000:700000:0.1)", item);
        }
        p = colon + 1;
    }
    dash = strchr(field[0], '-');
    if (dash) {
        char lo_s[32];

        copy_field(lo_s, sizeof lo_s, field[0], dash - field[0]);
        err = panda_parse_uint("wred", lo_s, 0, 63, &lo);
        if (!err) {
            err = panda_parse_uint("wred", dash + 1, 0, 63, &hi);
        }
    } else {
        err = panda_parse_uint("wred", field[0], 0, 63, &lo);
        hi = lo;
    }
    if (!err) {
        err = panda_parse_uint("wred", field[1], 0, UINT32_MAX, &min);
    }
    if (!err) {
        err = panda_parse_uint("wred", field[2], 0, UINT32_MAX, &max);
    }
    if (!err) {
        err = parse_prob("wred", field[3], &w->max_prob);
    }
    if (err) {
        return err;
    }
    w->dscp_min = (uint8_t) lo;
    w->dscp_max = (uint8_t) hi;
    w->min_bytes = (uint32_t) min;
    w->max_bytes = (uint32_t) max;
    return NULL;
}

/* "RULE/RULE/...", or "" / "none" for no rules.  Each rule is checked on
 * its own here; the rules together by panda_sched_config_validate(). */
static char *
parse_wred(const char *value, struct panda_sched_config *cfg)
{
    struct panda_sched_wred rules[PANDA_SCHED_MAX_WRED];
    const char *p = value;
    unsigned int n = 0;

    memset(rules, 0, sizeof rules);     /* Padding too: cfg compares with
                                         * memcmp() stay meaningful. */
    if (*value && strcmp(value, "none")) {
        for (;;) {
            const char *slash = strchr(p, '/');
            size_t len = slash ? (size_t) (slash - p) : strlen(p);
            char item[128];
            char *err;

            if (n >= PANDA_SCHED_MAX_WRED) {
                return panda_asprintf("wred: more than %d rules",
                                      PANDA_SCHED_MAX_WRED);
            }
            if (!len || !copy_field(item, sizeof item, p, len)) {
                return panda_asprintf("wred: empty or overlong rule in"
                                      " \"%s\"", value);
            }
            err = parse_wred_rule(item, &rules[n]);
            if (err) {
                return err;
            }
            n++;
            if (!slash) {
                break;
            }
            p = slash + 1;
        }
    }
    memset(cfg->wred, 0, sizeof cfg->wred);
    memcpy(cfg->wred, rules, n * sizeof *rules);
    cfg->n_wred = (uint8_t) n;
    return NULL;
}

/* Parses 'value' into the field of 'k' in 'cfg' (of 'level', for a
 * per-level key); errors start with 'name'.  'cfg' may be changed on
 * error: callers work on a copy. */
static char *
key_parse(const struct panda_sched_key *k, struct panda_sched_config *cfg,
          unsigned int level, const char *name, const char *value)
{
    uint64_t v = 0;
    bool b = false;
    char *err;

    switch (k->type) {
    case PANDA_SCHED_KEY_UINT:
        err = panda_parse_uint(name, value, k->min, k->max, &v);
        break;
    case PANDA_SCHED_KEY_BOOL:
        err = parse_bool(name, value, &b);
        v = b;
        break;
    case PANDA_SCHED_KEY_RATE:
        err = parse_rate(name, value, &v);
        break;
    case PANDA_SCHED_KEY_TIME:
        err = parse_time(name, value, k->min, k->max, &v);
        break;
    case PANDA_SCHED_KEY_WRED:
        return parse_wred(value, cfg);
    default:
        return panda_asprintf("%s: key of unknown type", name);
    }
    if (!err) {
        key_put(k, cfg, level, v);
    }
    return err;
}

/* The value of 'k' in 'cfg' as text the parser reads back; NULL for an
 * unset key (0 where the key has no default of its own). */
static char *
key_format(const struct panda_sched_key *k,
           const struct panda_sched_config *cfg, unsigned int level)
{
    char *rules = NULL;
    uint64_t v;
    unsigned int i;

    if (k->type == PANDA_SCHED_KEY_WRED) {
        for (i = 0; i < cfg->n_wred; i++) {
            const struct panda_sched_wred *w = &cfg->wred[i];

            /* %.7g: 7 significant digits round-trip any 1/65536 step. */
            panda_append(&rules, "/", "%u-%u:%" PRIu32 ":%" PRIu32 ":%.7g",
                         w->dscp_min, w->dscp_max, w->min_bytes,
                         w->max_bytes,
                         (double) w->max_prob / PANDA_SCHED_PROB_ONE);
        }
        return rules ? rules : panda_asprintf("none");
    }
    v = key_get(k, cfg, level);
    if (!v && !key_has_default(k)) {
        return NULL;
    }
    if (k->type == PANDA_SCHED_KEY_BOOL) {
        return panda_asprintf("%s", v ? "true" : "false");
    }
    if (k->type == PANDA_SCHED_KEY_TIME) {
        return format_time(v);
    }
    return panda_asprintf("%" PRIu64, v);
}

/* Whether 'k' has the same value in 'a' and 'b'. */
static bool
key_equal(const struct panda_sched_key *k, const struct panda_sched_config *a,
          unsigned int level_a, const struct panda_sched_config *b,
          unsigned int level_b)
{
    char *x, *y;
    bool eq;

    if (k->type != PANDA_SCHED_KEY_WRED) {
        return key_get(k, a, level_a) == key_get(k, b, level_b);
    }
    x = key_format(k, a, level_a);
    y = key_format(k, b, level_b);
    eq = !strcmp(x, y);
    free(x);
    free(y);
    return eq;
}

/* "levels, max-rate, ..., per-flow, quantum, LEVEL.per-flow,
 * LEVEL.quantum": every key, for messages and docs.  With 'level_only',
 * only the per-level keys, bare ("per-flow, quantum"). */
static char *
key_names(bool level_only)
{
    char *s = NULL;
    size_t i;

    for (i = 0; i < panda_sched_n_keys; i++) {
        if (!level_only
            || panda_sched_keys[i].flags & PANDA_SCHED_KEY_LEVEL) {
            panda_append(&s, ", ", "%s", panda_sched_keys[i].name);
        }
    }
    for (i = 0; i < panda_sched_n_keys && !level_only; i++) {
        if (panda_sched_keys[i].flags & PANDA_SCHED_KEY_LEVEL) {
            panda_append(&s, ", ", "LEVEL.%s", panda_sched_keys[i].name);
        }
    }
    return s;
}

void
panda_sched_config_init(struct panda_sched_config *cfg)
{
    size_t i;

    memset(cfg, 0, sizeof *cfg);
    for (i = 0; i < panda_sched_n_keys; i++) {
        const struct panda_sched_key *k = &panda_sched_keys[i];
        unsigned int n = k->flags & PANDA_SCHED_KEY_LEVEL
                         ? PANDA_SCHED_MAX_LEVELS : 1;
        unsigned int level;

        for (level = 0; level < n && key_has_default(k); level++) {
            /* The table's defaults parse (test_config_keys_table); were
             * one not to, its field would stay 0, and validate would say
             * so. */
            free(key_parse(k, cfg, level, k->name, k->def));
        }
    }
}

char *
panda_sched_config_set_level(struct panda_sched_config *cfg,
                             unsigned int level, const char *key,
                             const char *value)
{
    const struct panda_sched_key *k = panda_sched_key_find(key);
    struct panda_sched_config tmp;
    char name[64];
    char *err;

    snprintf(name, sizeof name, "%u.%s", level, key);
    if (level >= PANDA_SCHED_MAX_LEVELS) {
        return panda_asprintf("%s: level %u out of range (0..%d)",
                              name, level, PANDA_SCHED_MAX_LEVELS - 1);
    }
    if (!k || !(k->flags & PANDA_SCHED_KEY_LEVEL)) {
        char *known = key_names(true);

        err = panda_asprintf("%s: unknown per-level key (%s)", name, known);
        free(known);
        return err;
    }
    tmp = *cfg;
    err = key_parse(k, &tmp, level, name, value);
    if (!err) {
        *cfg = tmp;
    }
    return err;
}

/* Sets a level key on every level (the port-wide form of "per-flow",
 * "quantum", ...): parsed once on level 0, then copied. */
static char *
set_all_levels(struct panda_sched_config *cfg,
               const struct panda_sched_key *k, const char *value)
{
    struct panda_sched_config tmp = *cfg;
    char *err = key_parse(k, &tmp, 0, k->name, value);
    uint64_t v;
    unsigned int i;

    if (err) {
        return err;
    }
    v = key_get(k, &tmp, 0);
    for (i = 0; i < PANDA_SCHED_MAX_LEVELS; i++) {
        key_put(k, cfg, i, v);
    }
    return NULL;
}

char *
panda_sched_config_set(struct panda_sched_config *cfg, const char *key,
                       const char *value)
{
    const struct panda_sched_key *k = panda_sched_key_find(key);
    struct panda_sched_config tmp;
    char *err;

    if (!k) {
        char *known = key_names(false);

        err = panda_asprintf("%s: unknown key (known: %s)", key, known);
        free(known);
        return err;
    }
    if (k->flags & PANDA_SCHED_KEY_LEVEL) {
        return set_all_levels(cfg, k, value);
    }
    tmp = *cfg;
    err = key_parse(k, &tmp, 0, k->name, value);
    if (!err) {
        *cfg = tmp;
    }
    return err;
}

char *
panda_sched_config_parse(struct panda_sched_config *cfg, const char *text)
{
    struct panda_sched_config tmp = *cfg;
    char *copy = panda_asprintf("%s", text);
    char *save = NULL, *tok, *err = NULL;

    for (tok = strtok_r(copy, ",", &save); tok && !err;
         tok = strtok_r(NULL, ",", &save)) {
        char *value = strchr(tok, '=');
        char *dot;

        tok += strspn(tok, " \t");
        if (!value) {
            err = panda_asprintf("%s: missing \"=<value>\"", tok);
            break;
        }
        *value++ = '\0';
        dot = strchr(tok, '.');
        if (dot && dot > tok && strspn(tok, "0123456789") == (size_t) (dot
                                                                   - tok)) {
            unsigned long level = strtoul(tok, NULL, 10);

            if (level >= PANDA_SCHED_MAX_LEVELS) {
                err = panda_asprintf("%s: level out of range (0..%d)", tok,
                                     PANDA_SCHED_MAX_LEVELS - 1);
            } else {
                err = panda_sched_config_set_level(&tmp, level, dot + 1,
                                                   value);
            }
        } else {
            err = panda_sched_config_set(&tmp, tok, value);
        }
    }
    free(copy);
    if (!err) {
        err = panda_sched_config_validate(&tmp);
    }
    if (!err) {
        *cfg = tmp;
    }
    return err;
}

/* 'n' ns at 'rate_bps' in bytes, at least 'min', at most UINT32_MAX. */
static uint32_t
bytes_at_rate(uint64_t rate_bps, uint64_t n, uint32_t min)
{
    /* rate <= 10^15 and n <= 10^7 ns: the product fits in 128 bits. */
    unsigned __int128 b = (unsigned __int128) rate_bps * n / 8000000000ULL;

    return b < min ? min : b > UINT32_MAX ? UINT32_MAX : (uint32_t) b;
}

/* The bucket depth in effect for 'cfg' (shaped): 'burst', or its default,
 * the one the library, the datapath and the simulator share.  It is the
 * burst after idleness only: a late caller on a backlogged port is what
 * catch-up is for, so the bucket can stay as small as pacing wants. */
static uint32_t
resolve_burst(const struct panda_sched_config *cfg)
{
    return cfg->burst_bytes ? cfg->burst_bytes
           : bytes_at_rate(cfg->rate_bps, BURST_DEFAULT_NS,
                           BURST_DEFAULT_MIN);
}

/* The catch-up cap in effect for 'cfg' (shaped): 'catch-up', or its
 * default, 10 ms at the rate and at least the bucket. */
static uint32_t
resolve_catch_up(const struct panda_sched_config *cfg)
{
    return cfg->catch_up_bytes ? cfg->catch_up_bytes
           : bytes_at_rate(cfg->rate_bps, CATCH_UP_DEFAULT_NS,
                           resolve_burst(cfg));
}

void
panda_sched_config_resolve(struct panda_sched_config *cfg)
{
    if (cfg->rate_bps) {
        cfg->burst_bytes = resolve_burst(cfg);
        cfg->catch_up_bytes = resolve_catch_up(cfg);
    }
    if (!cfg->max_flow_queues) {
        cfg->max_flow_queues = cfg->limit_packets;
    }
}

/* Checks the table's range of 'k' on 'cfg' (of 'level'): for callers that
 * fill the structure directly (ns-3, tests), what the parser enforces. */
static char *
key_validate(const struct panda_sched_key *k,
             const struct panda_sched_config *cfg, unsigned int level)
{
    uint64_t v = key_get(k, cfg, level);
    char name[64];

    if (k->flags & PANDA_SCHED_KEY_LEVEL) {
        snprintf(name, sizeof name, "%u.%s", level, k->name);
    } else {
        snprintf(name, sizeof name, "%s", k->name);
    }
    if (!v && !key_has_default(k)) {
        return NULL;            /* Unset. */
    }
    if (k->type == PANDA_SCHED_KEY_BOOL) {
        return v > 1 ? panda_asprintf("%s: %" PRIu64 " is not true or"
                                      " false", name, v) : NULL;
    }
    if (k->type == PANDA_SCHED_KEY_RATE) {
        return v < k->min || v > k->max
               ? panda_asprintf("%s: %" PRIu64 " out of range (%" PRIu64
                                " bit/s .. %" PRIu64 " bit/s)", name, v,
                                k->min, k->max)
               : NULL;
    }
    if (k->type == PANDA_SCHED_KEY_TIME && (v < k->min || v > k->max)) {
        char *t = format_time(v), *lo = format_time(k->min);
        char *hi = format_time(k->max);
        char *err = panda_asprintf("%s: %s out of range (%s..%s)", name, t,
                                   lo, hi);

        free(t);
        free(lo);
        free(hi);
        return err;
    }
    if (k->type != PANDA_SCHED_KEY_UINT || (v >= k->min && v <= k->max)) {
        return NULL;
    }
    return k->min
           ? panda_asprintf("%s: %" PRIu64 " out of range (%" PRIu64 "..%"
                            PRIu64 ")", name, v, k->min, k->max)
           : panda_asprintf("%s: %" PRIu64 " out of range (max %" PRIu64
                            "%s%s)", name, v, k->max, *k->unit ? " " : "",
                            k->unit);
}

char *
panda_sched_config_validate(const struct panda_sched_config *cfg)
{
    unsigned int i, j;
    size_t ki;

    for (ki = 0; ki < panda_sched_n_keys; ki++) {
        const struct panda_sched_key *k = &panda_sched_keys[ki];
        unsigned int n = k->flags & PANDA_SCHED_KEY_LEVEL
                         ? PANDA_SCHED_MAX_LEVELS : 1;
        char *err;

        for (i = 0; i < n; i++) {
            err = key_validate(k, cfg, i);
            if (err) {
                return err;
            }
        }
        if (k->flags & PANDA_SCHED_KEY_SHAPED && !cfg->rate_bps
            && key_get(k, cfg, 0)) {
            return panda_asprintf("%s: set without max-rate (an unshaped"
                                  " port has no token bucket)", k->name);
        }
    }

    /* How the keys constrain each other. */
    if (cfg->catch_up_bytes && cfg->catch_up_bytes < resolve_burst(cfg)) {
        return panda_asprintf("catch-up: %" PRIu32 " below burst (%" PRIu32
                              "); catch-up = burst turns catch-up off",
                              cfg->catch_up_bytes, resolve_burst(cfg));
    }
    if (cfg->max_flow_queues > cfg->limit_packets) {
        return panda_asprintf("flow-queues: %" PRIu32 " exceeds limit-packets"
                              " (%" PRIu32 "); a flow queue exists only while"
                              " it holds a packet", cfg->max_flow_queues,
                              cfg->limit_packets);
    }
    if (cfg->ecn_threshold_bytes
        && cfg->ecn_threshold_bytes >= cfg->limit_bytes) {
        return panda_asprintf("ecn-threshold: %" PRIu32 " not below"
                              " limit-bytes (%" PRIu32 "), so it would never"
                              " mark", cfg->ecn_threshold_bytes,
                              cfg->limit_bytes);
    }
    for (i = 0; i < PANDA_SCHED_MAX_LEVELS; i++) {
        if (cfg->level[i].fq_codel && !cfg->level[i].per_flow) {
            return panda_asprintf("%u.fq-codel: needs per-flow queues"
                                  " (%u.per-flow=false)", i, i);
        }
    }
    if (cfg->n_wred > PANDA_SCHED_MAX_WRED) {
        return panda_asprintf("wred: more than %d rules",
                              PANDA_SCHED_MAX_WRED);
    }
    for (i = 0; i < cfg->n_wred; i++) {
        const struct panda_sched_wred *w = &cfg->wred[i];

        if (w->dscp_min > w->dscp_max || w->dscp_max > 63) {
            return panda_asprintf("wred: rule %u: DSCP range %u-%u is not"
                                  " within 0..63 in ascending order", i + 1,
                                  w->dscp_min, w->dscp_max);
        }
        if (w->min_bytes >= w->max_bytes) {
            return panda_asprintf("wred: rule %u: min %" PRIu32 " not below"
                                  " max %" PRIu32, i + 1, w->min_bytes,
                                  w->max_bytes);
        }
        if (w->max_bytes > cfg->limit_bytes) {
            return panda_asprintf("wred: rule %u: max %" PRIu32 " above"
                                  " limit-bytes (%" PRIu32 "); max ="
                                  " limit-bytes protects a label", i + 1,
                                  w->max_bytes, cfg->limit_bytes);
        }
        if (w->max_prob > PANDA_SCHED_PROB_ONE) {
            return panda_asprintf("wred: rule %u: probability above 1",
                                  i + 1);
        }
        for (j = 0; j < i; j++) {
            if (w->dscp_min <= cfg->wred[j].dscp_max
                && cfg->wred[j].dscp_min <= w->dscp_max) {
                return panda_asprintf("wred: rule %u (DSCP %u-%u) overlaps"
                                      " rule %u (DSCP %u-%u)", i + 1,
                                      w->dscp_min, w->dscp_max, j + 1,
                                      cfg->wred[j].dscp_min,
                                      cfg->wred[j].dscp_max);
            }
        }
    }
    return NULL;
}

/* Appends "key=value" of 'k' (of 'level') to '*s', with 'prefix' before the
 * key (e.g. "2."); nothing for an unset key. */
static void
append_key(char **s, const char *prefix, const struct panda_sched_key *k,
           const struct panda_sched_config *cfg, unsigned int level)
{
    char *v = key_format(k, cfg, level);

    if (v) {
        panda_append(s, ",", "%s%s=%s", prefix, k->name, v);
        free(v);
    }
}

char *
panda_sched_config_format(const struct panda_sched_config *cfg)
{
    struct panda_sched_config def;
    char prefix[16];
    char *s = NULL;
    unsigned int i;
    size_t ki;

    panda_sched_config_init(&def);
    for (ki = 0; ki < panda_sched_n_keys; ki++) {
        const struct panda_sched_key *k = &panda_sched_keys[ki];

        if (!(k->flags & PANDA_SCHED_KEY_LEVEL)
            && (k->flags & PANDA_SCHED_KEY_SHORT
                || !key_equal(k, cfg, 0, &def, 0))) {
            append_key(&s, "", k, cfg, 0);
        }
    }
    for (i = 0; i < PANDA_SCHED_MAX_LEVELS; i++) {
        snprintf(prefix, sizeof prefix, "%u.", i);
        for (ki = 0; ki < panda_sched_n_keys; ki++) {
            const struct panda_sched_key *k = &panda_sched_keys[ki];

            if (k->flags & PANDA_SCHED_KEY_LEVEL
                && !key_equal(k, cfg, i, &def, i)) {
                append_key(&s, prefix, k, cfg, i);
            }
        }
    }
    return s;
}

/* A level whose value of level key 'k' most of the levels in effect share
 * (ties: the lowest level's), which the effective form gives port-wide. */
static unsigned int
level_key_majority(const struct panda_sched_key *k,
                   const struct panda_sched_config *cfg)
{
    unsigned int best = 0, best_n = 0, i, j;

    for (i = 0; i < cfg->n_levels; i++) {
        unsigned int n = 0;

        for (j = 0; j < cfg->n_levels; j++) {
            n += key_equal(k, cfg, i, cfg, j);
        }
        if (n > best_n) {
            best = i;
            best_n = n;
        }
    }
    return best;
}

char *
panda_sched_config_format_effective(const struct panda_sched_config *cfg_)
{
    struct panda_sched_config cfg = *cfg_;
    unsigned int major[ARRAY_SIZE(panda_sched_keys)];
    char prefix[16];
    char *s = NULL;
    unsigned int i;
    size_t ki;

    bool codel = false;

    panda_sched_config_resolve(&cfg);
    for (i = 0; i < cfg.n_levels; i++) {
        codel |= cfg.level[i].fq_codel;
    }
    for (ki = 0; ki < panda_sched_n_keys; ki++) {
        const struct panda_sched_key *k = &panda_sched_keys[ki];

        if (k->flags & PANDA_SCHED_KEY_LEVEL) {
            major[ki] = level_key_majority(k, &cfg);
            append_key(&s, "", k, &cfg, major[ki]);
        } else if ((!(k->flags & PANDA_SCHED_KEY_SHAPED) || cfg.rate_bps)
                   && (!(k->flags & PANDA_SCHED_KEY_CODEL) || codel)) {
            append_key(&s, "", k, &cfg, 0);
        }
    }
    for (i = 0; i < cfg.n_levels; i++) {
        snprintf(prefix, sizeof prefix, "%u.", i);
        for (ki = 0; ki < panda_sched_n_keys; ki++) {
            const struct panda_sched_key *k = &panda_sched_keys[ki];

            if (k->flags & PANDA_SCHED_KEY_LEVEL
                && !key_equal(k, &cfg, i, &cfg, major[ki])) {
                append_key(&s, prefix, k, &cfg, i);
            }
        }
    }
    return s;
}

/* ------------------------------------------------------------------------
 * The keys as documentation.
 * ------------------------------------------------------------------------ */

/* 'v' as docs write it: 2^32 - 1 rather than 4294967295. */
static char *
doc_number(uint64_t v)
{
    unsigned int e;

    if (v == UINT64_MAX) {
        return panda_asprintf("2^64 - 1");
    }
    for (e = 16; e < 64; e++) {
        if (v == (1ULL << e)) {
            return panda_asprintf("2^%u", e);
        }
        if (v == (1ULL << e) - 1) {
            return panda_asprintf("2^%u - 1", e);
        }
    }
    for (e = 6; e <= 19; e++) {
        uint64_t p = 1;
        unsigned int i;

        for (i = 0; i < e; i++) {
            p *= 10;
        }
        if (v == p) {
            return panda_asprintf("10^%u", e);
        }
    }
    return panda_asprintf("%" PRIu64, v);
}

/* The values 'k' takes, in words: "1..8", "64..2^20 bytes". */
static char *
doc_values(const struct panda_sched_key *k)
{
    char *lo, *hi, *s;

    switch (k->type) {
    case PANDA_SCHED_KEY_BOOL:
        return panda_asprintf("`true`, `false`");
    case PANDA_SCHED_KEY_WRED:
        return panda_asprintf("up to %" PRIu64 " rules, or `none`", k->max);
    case PANDA_SCHED_KEY_TIME:
        lo = format_time(k->min);
        hi = format_time(k->max);
        s = panda_asprintf("%s..%s, with a unit (ns, us, ms, s)", lo, hi);
        free(lo);
        free(hi);
        return s;
    default:
        break;
    }
    lo = doc_number(k->min);
    hi = doc_number(k->max);
    s = panda_asprintf("%s..%s%s%s", lo, hi, *k->unit ? " " : "", k->unit);
    free(lo);
    free(hi);
    return s;
}

/* The default of 'k' in words (malloc()ed). */
static char *
doc_default(const struct panda_sched_key *k)
{
    return k->def_doc ? panda_asprintf("%s", k->def_doc)
           : panda_asprintf("`%s`", k->def);
}

/* Appends 'text' to '*s' for XML: `code` becomes <code>code</code>, and
 * &, < and > are escaped. */
static void
xml_text(char **s, const char *text)
{
    bool code = false;
    const char *p;

    for (p = text; *p; p++) {
        switch (*p) {
        case '`':
            panda_append(s, "", "%s", code ? "</code>" : "<code>");
            code = !code;
            break;
        case '&': panda_append(s, "", "&amp;"); break;
        case '<': panda_append(s, "", "&lt;"); break;
        case '>': panda_append(s, "", "&gt;"); break;
        default: panda_append(s, "", "%c", *p); break;
        }
    }
}

/* Appends 'text' to '*s' filled to 79 columns, each line indented by
 * 'indent' spaces (vswitch.xml's layout).  Breaks only at spaces outside
 * tags; two spaces between sentences stay two. */
static void
append_filled(char **s, const char *text, int indent)
{
    const char *p = text;
    int col = 0, gap = 0;

    while (*p) {
        const char *w = p;
        int len;

        while (*p && *p != ' ') {
            if (*p == '<') {
                /* A tag's attributes may hold spaces: keep it whole. */
                const char *gt = strchr(p, '>');

                p = gt ? gt : p + strlen(p) - 1;
            }
            p++;
        }
        len = (int) (p - w);
        if (col && col + gap + len > 79) {
            panda_append(s, "", "\n");
            col = 0;
        }
        if (!col) {
            panda_append(s, "", "%*s%.*s", indent, "", len, w);
            col = indent + len;
        } else {
            panda_append(s, "", "%*s%.*s", gap, "", len, w);
            col += gap + len;
        }
        for (gap = 0; *p == ' '; p++) {
            gap = gap ? 2 : 1;
        }
    }
    panda_append(s, "", "\n");
}

static void
doc_markdown(char **s)
{
    size_t i;

    panda_append(s, "", "| key | values | default | meaning |\n"
                 "|---|---|---|---|\n");
    for (i = 0; i < panda_sched_n_keys; i++) {
        const struct panda_sched_key *k = &panda_sched_keys[i];
        char *values = doc_values(k);
        char *def;

        if (k->flags & PANDA_SCHED_KEY_LEVEL) {
            panda_append(s, "", "| `%s`, `LEVEL.%s` ", k->name, k->name);
        } else {
            panda_append(s, "", "| `%s` ", k->name);
        }
        def = doc_default(k);
        panda_append(s, "", "| %s | %s | %s%s |\n", values, def, k->doc,
                     k->flags & PANDA_SCHED_KEY_LEVEL
                     ? "  `LEVEL.` sets one level; without it, every level."
                     : k->flags & PANDA_SCHED_KEY_SHAPED
                     ? "  Needs `max-rate`." : "");
        free(values);
        free(def);
    }
}

/* The vswitch.xml <column> of 'k'. */
static void
doc_vswitch_column(char **s, const struct panda_sched_key *k)
{
    char *text = NULL, *body = NULL, *def;

    panda_append(s, "", "      <column name=\"other_config\" key=\"%s\"",
                 k->name);
    if (k->type == PANDA_SCHED_KEY_BOOL) {
        panda_append(s, "", "\n              type='{\"type\": \"boolean\"}'");
    } else if (k->type == PANDA_SCHED_KEY_UINT) {
        char *type = panda_asprintf("type='{\"type\": \"integer\","
                                    " \"minInteger\": %" PRIu64, k->min);

        /* JSON integers beyond 2^53 do not survive every reader. */
        if (k->max < (1ULL << 53)) {
            char *max = panda_asprintf(", \"maxInteger\": %" PRIu64 "}'",
                                       k->max);

            if (strlen(type) + strlen(max) + 15 + 1 > 79) {
                panda_append(s, "", "\n              %s,\n"
                             "                     %s", type, max + 2);
            } else {
                panda_append(s, "", "\n              %s%s", type, max);
            }
            free(max);
        } else {
            panda_append(s, "", "\n              %s}'", type);
        }
        free(type);
    }
    panda_append(s, "", ">\n");

    panda_append(&text, "", "%s", k->doc);
    if (k->flags & PANDA_SCHED_KEY_SHAPED) {
        panda_append(&text, "", "  Needs `max-rate`.");
    }
    def = doc_default(k);
    panda_append(&text, "", "  Defaults to %s.", def);
    free(def);
    xml_text(&body, text);
    append_filled(s, body, 8);
    panda_append(s, "", "      </column>\n");
    free(text);
    free(body);
}

char *
panda_sched_keys_doc(enum panda_sched_doc format)
{
    char *s = NULL;
    size_t i;

    switch (format) {
    case PANDA_SCHED_DOC_NAMES:
        s = key_names(false);
        panda_append(&s, "", "\n");
        break;
    case PANDA_SCHED_DOC_MARKDOWN:
        doc_markdown(&s);
        break;
    case PANDA_SCHED_DOC_VSWITCH_QOS:
    case PANDA_SCHED_DOC_VSWITCH_QUEUE:
        for (i = 0; i < panda_sched_n_keys; i++) {
            const struct panda_sched_key *k = &panda_sched_keys[i];

            if (format == PANDA_SCHED_DOC_VSWITCH_QOS
                || k->flags & PANDA_SCHED_KEY_LEVEL) {
                if (s) {
                    panda_append(&s, "", "\n");
                }
                doc_vswitch_column(&s, k);
            }
        }
        break;
    }
    return s ? s : panda_asprintf("%s", "");
}

/* ------------------------------------------------------------------------
 * The scheduler's state.
 * ------------------------------------------------------------------------ */

/* A held packet: 16 bytes. */
struct sched_node {
    void *handle;
    uint32_t len;
    uint32_t next;              /* Next packet of the queue; free list. */
};

/* A flow queue: 32 bytes. */
struct sched_fq {
    uint32_t head, tail;        /* Packets, oldest first (NIL if none). */
    uint32_t ring_next;         /* Next active queue of the level (fq-codel:
                                 * of its list). */
    uint32_t hash_next;         /* Hash chain; free list when unused. */
    uint32_t flow_hash;
    uint32_t deficit;           /* DRR: bytes it may still send (fq-codel:
                                 * an int32_t, which may go negative). */
    uint32_t bytes;
    uint32_t packets : 24;      /* < 2^24: limit-packets is capped. */
    uint32_t level : 4;
    uint32_t listed : 1;        /* fq-codel: on the new or old list (it may
                                 * be empty there). */
    uint32_t in_new : 1;        /* fq-codel: on the new-flows list. */
    uint32_t : 2;
};

/* The fq-codel state of a flow queue: 24 bytes.  Times in CoDel units
 * (CODEL_SHIFT). */
struct sched_codel {
    uint32_t first_above;       /* With 'above': when sojourn will have
                                 * stayed above target for an interval. */
    uint32_t drop_next;         /* Dropping: when the next signal is due. */
    uint32_t count : 31;        /* Signals in this dropping state. */
    uint32_t dropping : 1;
    uint32_t lastcount : 31;    /* count when the last one began. */
    uint32_t above : 1;         /* Sojourn above target since first_above
                                 * minus an interval. */
    uint32_t size_prev, size_next;  /* Among the level's queues holding as
                                     * many packets (a circular list). */
};

/* CoDel time: ns >> CODEL_SHIFT, 1.024 us units, in 32 bits; compared
 * modulo 2^32, so intervals up to 2^31 units (36 minutes). */
#define CODEL_SHIFT 10
#define CODEL_COUNT_MAX ((1u << 31) - 1)

struct sched_level {
    bool per_flow;
    bool codel;                 /* fq-codel level. */
    uint32_t quantum;
    uint32_t own;               /* Index of the level's own queue: FIFO, or
                                 * the overflow queue when per-flow. */
    uint32_t ring_head, ring_tail;  /* Active queues (NIL if none); the
                                     * old-flows list at an fq-codel
                                     * level. */
    uint32_t new_head, new_tail;    /* fq-codel: the new-flows list (NIL
                                     * if none, always at other levels). */
    uint32_t *by_size;          /* fq-codel: by_size[n] heads the list of
                                 * the level's queues holding n packets
                                 * (1..limit-packets), so that the fattest
                                 * is found in O(1). */
    uint32_t max_size;          /* fq-codel: the most packets a queue of
                                 * the level holds (0: none). */
    struct panda_sched_level_stats st;  /* Counters and backlog. */
};

struct panda_sched {
    struct panda_sched_config cfg;      /* Validated, defaults resolved. */
    struct panda_sched_budget *budget;
    uint8_t n_levels;
    uint8_t active;             /* Bit L: level L holds packets. */
    uint8_t guard_last;         /* Level the guard served last. */
    uint8_t wred_rule[64];      /* DSCP -> rule index + 1; 0: no rule. */
    uint64_t hash_seed;

    uint64_t backlog_bytes, backlog_packets, max_backlog_bytes;

    /* Starvation guard: credit in byte x permille units.  Earned at
     * guard_permille per byte sent at strict priority while a lower level
     * waits; a guard packet of L bytes costs L x (1000 - guard_permille).
     * In the long run lower levels get guard/1000 of the bytes sent. */
    uint64_t guard_credit;
    /* The most the top level may hold: the limits less the guard's
     * reserve (guard_reserve_taken()); the limits without the guard. */
    uint64_t top_limit_bytes;
    uint32_t top_limit_packets;

    /* Shaper, as a virtual clock in 2^-32 ns units: the bucket holds
     * (now - tat) x rate bytes, capped at burst when the port goes from
     * empty to backlogged and at catch-up while it is backlogged; see
     * shaper_*() below. */
    uint64_t cost_per_byte;     /* 2^-32 ns per byte at the rate. */
    __int128 tat;
    __int128 burst_cost;
    __int128 catch_up_cost;

    /* WRED. */
    struct panda_rng rng;
    uint64_t avg;               /* RED average backlog, bytes << 16. */
    uint64_t idle_since_ns;     /* When the port last went empty. */

    /* Held packets dropped (panda_sched_set_drop()); NULL: the core
     * cannot drop what it holds.  'legacy_cb' is the callback of
     * panda_sched_set_push_out(), called through drop_legacy(). */
    void (*drop_cb)(void *handle, enum panda_sched_drop, void *aux);
    void *drop_aux;
    void (*legacy_cb)(void *handle, void *aux);
    void *legacy_aux;

    /* CoDel marks (panda_sched_set_mark()); NULL: CoDel drops. */
    bool (*mark_cb)(void *handle, void *aux);
    void *mark_aux;

    /* fq-codel levels: CoDel's settings in CoDel time, and the per-packet
     * enqueue times and per-queue states (NULL without such a level). */
    uint32_t codel_target;
    uint32_t codel_interval;
    uint32_t *stamps;           /* Per packet node. */
    struct sched_codel *codel;  /* Per flow queue (pool, then own). */

    /* Pools. */
    struct sched_node *nodes;   /* n_nodes of them. */
    uint32_t n_nodes;           /* pool_sizes(). */
    uint32_t free_node;
    struct sched_fq *fqs;       /* Pool, then n_levels own queues. */
    uint32_t n_pool;
    uint32_t free_fq;
    uint32_t pool_used;
    uint32_t *buckets;
    uint32_t bucket_mask;

    struct sched_level levels[PANDA_SCHED_MAX_LEVELS];
};

_Static_assert(sizeof(struct sched_node) == 16, "packet node size");
_Static_assert(sizeof(struct sched_fq) == 32, "flow queue size");
_Static_assert(sizeof(struct sched_codel) == 24, "fq-codel state size");
_Static_assert(PANDA_SCHED_MAX_LEVELS <= 16, "level fits sched_fq.level");

static uint32_t
bucket_of(const struct panda_sched *s, unsigned int level, uint32_t hash)
{
    /* The caller's hash may be weak in its low bits (or equal across
     * levels), so remix it with the level and a per-scheduler seed. */
    return (uint32_t) panda_mix64(hash ^ s->hash_seed
                                  ^ ((uint64_t) level << 32))
           & s->bucket_mask;
}

/* The pools of a scheduler of 'cfg' (valid, defaults resolved) under a
 * budget of 'max_packets' (UINT64_MAX: none): a packet node per packet it
 * may hold, which is limit-packets, or the budget's bound if that is
 * smaller, since the budget never lets the scheduler hold more; and a flow
 * queue per flow-queues, at most one per packet node, since a flow queue
 * is in use only while it holds a packet.  So a port's limit-packets set
 * far above what its datapath may hold (2^24 - 1 on a datapath that holds
 * 10000) costs what the datapath may hold, not 800 MB. */
static void
pool_sizes(const struct panda_sched_config *cfg, uint64_t max_packets,
           uint32_t *n_nodes, uint32_t *n_pool)
{
    *n_nodes = max_packets < cfg->limit_packets ? (uint32_t) max_packets
                                                : cfg->limit_packets;
    if (!*n_nodes) {
        *n_nodes = 1;           /* A budget of 0 holds nothing anyway. */
    }
    *n_pool = cfg->max_flow_queues < *n_nodes ? cfg->max_flow_queues
                                              : *n_nodes;
}

/* Bytes that a scheduler with these pools allocates: the one formula of
 * panda_sched_memory() and panda_sched_config_memory(). */
static size_t
pools_memory(uint32_t n_nodes, uint32_t n_pool, unsigned int n_levels,
             unsigned int n_codel_levels)
{
    size_t n_fq = (size_t) n_pool + n_levels;
    size_t n_buckets = 1;

    while (n_buckets < n_pool) {
        n_buckets <<= 1;
    }
    return sizeof(struct panda_sched)
           + (size_t) n_nodes * sizeof(struct sched_node)
           + n_fq * sizeof(struct sched_fq)
           + n_buckets * sizeof(uint32_t)
           + (n_codel_levels
              ? (size_t) n_nodes * sizeof(uint32_t)
                + n_fq * sizeof(struct sched_codel)
                + n_codel_levels * ((size_t) n_nodes + 1) * sizeof(uint32_t)
              : 0);
}

/* Levels of 'cfg' that run fq_codel. */
static unsigned int
n_codel_levels(const struct panda_sched_config *cfg)
{
    unsigned int i, n = 0;

    for (i = 0; i < cfg->n_levels; i++) {
        n += cfg->level[i].per_flow && cfg->level[i].fq_codel;
    }
    return n;
}

size_t
panda_sched_config_memory(const struct panda_sched_config *cfg_,
                          uint64_t max_packets)
{
    struct panda_sched_config cfg = *cfg_;
    uint32_t n_nodes, n_pool;

    panda_sched_config_resolve(&cfg);
    pool_sizes(&cfg, max_packets, &n_nodes, &n_pool);
    return pools_memory(n_nodes, n_pool, cfg.n_levels, n_codel_levels(&cfg));
}

static void
pools_reset(struct panda_sched *s)
{
    uint32_t i, n_fq = s->n_pool + s->n_levels;

    for (i = 0; i < s->n_nodes; i++) {
        s->nodes[i].next = i + 1 < s->n_nodes ? i + 1 : NIL;
    }
    s->free_node = 0;
    for (i = 0; i < n_fq; i++) {
        struct sched_fq *fq = &s->fqs[i];

        memset(fq, 0, sizeof *fq);
        fq->head = fq->tail = fq->ring_next = NIL;
        fq->hash_next = i + 1 < s->n_pool ? i + 1 : NIL;
    }
    s->free_fq = s->n_pool ? 0 : NIL;
    s->pool_used = 0;
    for (i = 0; i <= s->bucket_mask; i++) {
        s->buckets[i] = NIL;
    }
    for (i = 0; i < s->n_levels; i++) {
        struct sched_level *lv = &s->levels[i];

        lv->own = s->n_pool + i;
        s->fqs[lv->own].level = i;
        s->fqs[lv->own].hash_next = NIL;
        lv->ring_head = lv->ring_tail = NIL;
        lv->new_head = lv->new_tail = NIL;
        if (lv->by_size) {
            memset(lv->by_size, 0xff, ((size_t) s->n_nodes + 1)
                                      * sizeof *lv->by_size);
        }
        lv->max_size = 0;
        lv->st.backlog_bytes = lv->st.backlog_packets = 0;
        lv->st.flow_queues = 0;
    }
    if (s->codel) {
        memset(s->codel, 0, (size_t) n_fq * sizeof *s->codel);
    }
    s->active = 0;
    s->backlog_bytes = s->backlog_packets = 0;
    s->guard_credit = 0;
}

struct panda_sched *
panda_sched_create(const struct panda_sched_config *cfg,
                   struct panda_sched_budget *budget, char **errp)
{
    struct panda_sched *s;
    char *err = panda_sched_config_validate(cfg);
    uint32_t n_buckets = 1;
    bool codel = false;
    unsigned int i;

    *errp = NULL;
    if (err) {
        *errp = err;
        return NULL;
    }
    s = calloc(1, sizeof *s);
    if (!s) {
        goto nomem;
    }
    s->cfg = *cfg;
    panda_sched_config_resolve(&s->cfg);
    s->budget = budget;
    s->n_levels = cfg->n_levels;
    pool_sizes(&s->cfg, budget ? budget->max : UINT64_MAX, &s->n_nodes,
               &s->n_pool);
    while (n_buckets < s->n_pool) {
        n_buckets <<= 1;
    }
    s->bucket_mask = n_buckets - 1;
    s->nodes = malloc((size_t) s->n_nodes * sizeof *s->nodes);
    s->fqs = malloc(((size_t) s->n_pool + s->n_levels) * sizeof *s->fqs);
    s->buckets = malloc((size_t) n_buckets * sizeof *s->buckets);
    if (!s->nodes || !s->fqs || !s->buckets) {
        goto nomem;
    }

    for (i = 0; i < PANDA_SCHED_MAX_LEVELS; i++) {
        s->levels[i].per_flow = cfg->level[i].per_flow;
        s->levels[i].codel = cfg->level[i].per_flow && cfg->level[i].fq_codel
                             && i < cfg->n_levels;
        s->levels[i].quantum = cfg->level[i].quantum;
        codel |= s->levels[i].codel;
    }
    if (codel) {
        s->stamps = malloc((size_t) s->n_nodes * sizeof *s->stamps);
        s->codel = malloc(((size_t) s->n_pool + s->n_levels)
                          * sizeof *s->codel);
        if (!s->stamps || !s->codel) {
            goto nomem;
        }
        for (i = 0; i < s->n_levels; i++) {
            struct sched_level *lv = &s->levels[i];

            if (lv->codel) {
                lv->by_size = malloc(((size_t) s->n_nodes + 1)
                                     * sizeof *lv->by_size);
                if (!lv->by_size) {
                    goto nomem;
                }
            }
        }
        /* Rounded up, so that 1 us is one unit rather than none. */
        s->codel_target = (uint32_t) ((cfg->codel_target_ns
                                       + (1u << CODEL_SHIFT) - 1)
                                      >> CODEL_SHIFT);
        s->codel_interval = (uint32_t) ((cfg->codel_interval_ns
                                         + (1u << CODEL_SHIFT) - 1)
                                        >> CODEL_SHIFT);
    }
    for (i = 0; i < cfg->n_wred; i++) {
        unsigned int d;

        for (d = cfg->wred[i].dscp_min; d <= cfg->wred[i].dscp_max; d++) {
            s->wred_rule[d] = (uint8_t) (i + 1);
        }
    }
    panda_rng_seed(&s->rng, cfg->seed);
    {
        /* The index's layout changes nothing a packet sees (order comes
         * from the rings), so its seed need not repeat; a secret one keeps
         * crafted flow hashes (a NIC's RSS hash with its well-known default
         * key, say) from piling into one chain. */
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        s->hash_seed = panda_mix64((uint64_t) ts.tv_nsec
                                   ^ ((uint64_t) ts.tv_sec << 30)
                                   ^ (uintptr_t) s);
    }
    s->guard_last = s->n_levels - 1;
    s->top_limit_bytes = s->cfg.limit_bytes
                         - s->cfg.limit_bytes * s->cfg.guard_permille / 1000;
    s->top_limit_packets = s->cfg.limit_packets
                           - (uint32_t) ((uint64_t) s->cfg.limit_packets
                                         * s->cfg.guard_permille / 1000);

    if (cfg->rate_bps) {
        /* 8e9 x 2^32 / rate, rounded; rate >= 1000 keeps it below 2^55. */
        s->cost_per_byte = (uint64_t) ((((unsigned __int128) 8000000000ULL
                                         << 32) + cfg->rate_bps / 2)
                                       / cfg->rate_bps);
        s->burst_cost = (__int128) s->cfg.burst_bytes * s->cost_per_byte;
        s->catch_up_cost = (__int128) s->cfg.catch_up_bytes
                           * s->cost_per_byte;
        /* Full bucket at any start time: far enough in the past. */
        s->tat = -((__int128) 1 << 100);
    }
    pools_reset(s);
    return s;

nomem:
    *errp = panda_asprintf("panda-sched: cannot allocate %" PRIu32 " packet"
                           " nodes and %" PRIu32 " flow queues",
                           s ? s->n_nodes : cfg->limit_packets,
                           s ? s->n_pool : 0);
    if (s) {
        free(s->nodes);
        free(s->fqs);
        free(s->buckets);
        free(s->stamps);
        free(s->codel);
        for (i = 0; i < PANDA_SCHED_MAX_LEVELS; i++) {
            free(s->levels[i].by_size);
        }
        free(s);
    }
    return NULL;
}

void
panda_sched_destroy(struct panda_sched *s)
{
    unsigned int i;

    if (s) {
        budget_give(s->budget, s->backlog_packets);
        free(s->nodes);
        free(s->fqs);
        free(s->buckets);
        free(s->stamps);
        free(s->codel);
        for (i = 0; i < PANDA_SCHED_MAX_LEVELS; i++) {
            free(s->levels[i].by_size);
        }
        free(s);
    }
}

/* ------------------------------------------------------------------------
 * Flow queues.
 * ------------------------------------------------------------------------ */

static inline uint32_t
head_len(const struct panda_sched *s, const struct sched_fq *fq)
{
    return s->nodes[fq->head].len;
}

/* Keeps the DRR invariant: the ring's head queue has deficit for its head
 * packet.  A head queue short of deficit has finished its turn: it moves to
 * the tail carrying its deficit plus the next turn's quantum (crediting at
 * the move rather than at the start of the next turn is the same thing,
 * since no one looks at the deficit in between).  A queue alone in the ring
 * gets the quanta it needs at once.  Each move pays at least one quantum
 * towards a packet, so the loop costs O(packet / quantum) moves per packet
 * amortised (1 for packets up to a quantum, 43 for a 64 KB TSO packet with
 * the default quantum). */
static void
level_settle__(struct panda_sched *s, struct sched_level *lv)
{
    while (lv->ring_head != NIL) {
        uint32_t idx = lv->ring_head;
        struct sched_fq *fq = &s->fqs[idx];
        uint32_t need = head_len(s, fq);

        if (fq->deficit >= need) {
            return;
        }
        if (fq->ring_next == NIL) {
            uint32_t short_by = need - fq->deficit;

            fq->deficit += (short_by + lv->quantum - 1) / lv->quantum
                           * lv->quantum;
            return;
        }
        fq->deficit += lv->quantum;
        lv->ring_head = fq->ring_next;
        s->fqs[lv->ring_tail].ring_next = idx;
        fq->ring_next = NIL;
        lv->ring_tail = idx;
    }
}

static inline void
level_settle(struct panda_sched *s, struct sched_level *lv)
{
    /* Inline the common case: a FIFO level (no deficits), an empty ring,
     * or a head that may send. */
    if (lv->per_flow && lv->ring_head != NIL) {
        const struct sched_fq *fq = &s->fqs[lv->ring_head];

        if (fq->deficit < head_len(s, fq)) {
            level_settle__(s, lv);
        }
    }
}

static uint32_t
fq_lookup(const struct panda_sched *s, unsigned int level, uint32_t hash)
{
    uint32_t i;

    for (i = s->buckets[bucket_of(s, level, hash)]; i != NIL;
         i = s->fqs[i].hash_next) {
        if (s->fqs[i].flow_hash == hash && s->fqs[i].level == level) {
            return i;
        }
    }
    return NIL;
}

/* The queue a packet of 'hash' joins at 'level'. */
static uint32_t
fq_for(struct panda_sched *s, unsigned int level, uint32_t hash)
{
    struct sched_level *lv = &s->levels[level];
    uint32_t i, b;

    if (!lv->per_flow) {
        return lv->own;
    }
    i = fq_lookup(s, level, hash);
    if (i != NIL) {
        return i;
    }
    /* A new flow.  It shares the overflow queue when the pool is empty, and
     * also while the overflow queue still holds packets: a flow that went
     * there keeps going there until they are sent, so that no flow's
     * packets sit in two queues (which would reorder them). */
    if (s->free_fq == NIL || s->fqs[lv->own].packets) {
        lv->st.shared_queue_packets++;
        return lv->own;
    }
    i = s->free_fq;
    s->free_fq = s->fqs[i].hash_next;
    b = bucket_of(s, level, hash);
    s->fqs[i].flow_hash = hash;
    s->fqs[i].level = level;
    s->fqs[i].hash_next = s->buckets[b];
    s->buckets[b] = i;
    s->pool_used++;
    lv->st.flow_queues++;
    return i;
}

/* Returns an empty pool queue to the pool. */
static void
fq_release(struct panda_sched *s, struct sched_level *lv, uint32_t idx)
{
    struct sched_fq *fq = &s->fqs[idx];
    uint32_t *link = &s->buckets[bucket_of(s, fq->level, fq->flow_hash)];

    while (*link != idx) {
        link = &s->fqs[*link].hash_next;
    }
    *link = fq->hash_next;
    fq->hash_next = s->free_fq;
    s->free_fq = idx;
    s->pool_used--;
    lv->st.flow_queues--;
}

/* A packet arrives at an empty port at 'now_ns': what the bucket earned
 * while the port was idle is capped at 'burst' (the shaper's design is
 * described above shaper_ready()). */
static inline void
shaper_wake(struct panda_sched *s, uint64_t now_ns)
{
    __int128 full = ((__int128) now_ns << 32) - s->burst_cost;

    if (s->tat < full) {
        s->tat = full;
    }
}

/* ------------------------------------------------------------------------
 * Enqueue: limits, WRED, port ECN, budget.
 * ------------------------------------------------------------------------ */

/* RED's average after an idle period: decayed as if the link had sent
 * MTU-sized packets all along (each arrival would have moved the average
 * 2^-shift towards 0).  Unshaped, the link's speed is unknown, and an
 * empty queue on a fast link is empty for good reason: start again at 0. */
static void
red_idle_decay(struct panda_sched *s, uint64_t now_ns)
{
    double idle_s, m;

    if (!s->cfg.rate_bps) {
        s->avg = 0;
    } else if (now_ns > s->idle_since_ns) {
        idle_s = (now_ns - s->idle_since_ns) * 1e-9;
        m = idle_s * s->cfg.rate_bps / (8.0 * PANDA_SCHED_MTU);
        s->avg = (uint64_t) (s->avg
                             * pow(1.0 - ldexp(1.0, -s->cfg.wred_ewma_shift),
                                   m));
    }
    s->idle_since_ns = now_ns;  /* Decay each idle moment once. */
}

/* The queue length WRED compares with its thresholds, in bytes. */
static uint64_t
wred_qlen(struct panda_sched *s, uint64_t now_ns)
{
    unsigned int shift = s->cfg.wred_ewma_shift;
    uint64_t q = s->backlog_bytes;

    if (!shift) {
        return q;               /* Instantaneous (TCP SkyLine). */
    }
    if (!s->backlog_packets) {
        red_idle_decay(s, now_ns);
    }
    if ((q << 16) >= s->avg) {
        s->avg += ((q << 16) - s->avg) >> shift;
    } else {
        s->avg -= (s->avg - (q << 16)) >> shift;
    }
    return s->avg >> 16;
}

enum wred_action { WRED_PASS, WRED_MARK, WRED_DROP };

static enum wred_action
wred_decide(struct panda_sched *s, const struct panda_sched_wred *w,
            uint64_t q, bool ect)
{
    uint64_t p;

    if (q <= w->min_bytes) {
        return WRED_PASS;
    }
    if (q > w->max_bytes) {
        return WRED_DROP;
    }
    /* Linear from 0 just above min to max_prob at max, in 1/65536. */
    p = (uint64_t) w->max_prob * (q - w->min_bytes)
        / (w->max_bytes - w->min_bytes);
    if ((panda_rng_next(&s->rng) >> 48) >= p) {
        return WRED_PASS;
    }
    return ect ? WRED_MARK : WRED_DROP;
}

/* The queue whose head packet goes next at 'lv' (holding packets): the
 * ring's head, or at an fq-codel level the new-flows list's head if any,
 * else the old-flows list's. */
static inline uint32_t
level_head(const struct sched_level *lv)
{
    return lv->new_head != NIL ? lv->new_head : lv->ring_head;
}

/* Takes the head packet of queue 'qi' (holding one) of 'level' out of the
 * scheduler: keeps the queue's, the level's and the port's backlogs, the
 * active mask and the budget, and leaves the queue's place in its ring or
 * list to the caller.  Returns the packet's node, whose handle and length
 * stay readable until the next enqueue.  Always inlined: it is the body of
 * every dequeue, on the per-packet path. */
static inline __attribute__((always_inline)) uint32_t
fq_pop(struct panda_sched *s, unsigned int level, uint32_t qi)
{
    struct sched_level *lv = &s->levels[level];
    struct sched_fq *fq = &s->fqs[qi];
    uint32_t ni = fq->head;
    struct sched_node *node = &s->nodes[ni];
    uint32_t l = node->len;

    fq->head = node->next;
    if (fq->head == NIL) {
        fq->tail = NIL;
    }
    node->next = s->free_node;
    s->free_node = ni;
    fq->bytes -= l;
    fq->packets--;

    lv->st.backlog_bytes -= l;
    lv->st.backlog_packets--;
    if (!lv->st.backlog_packets) {
        s->active &= ~(1u << level);
    }
    s->backlog_bytes -= l;
    s->backlog_packets--;
    budget_give(s->budget, 1);
    return ni;
}

/* Takes the head packet of the queue next in turn at 'level' (a FIFO or
 * DRR level holding packets), for sending ('sent': the packet uses the
 * queue's DRR deficit) or for push-out (it used none of the queue's turn).
 * The caller counts it as sent or dropped.  Returns its handle and stores
 * its length in '*lenp'.  Always inlined: it is the body of
 * panda_sched_dequeue(), on the per-packet path, where the compiler would
 * otherwise keep it a call (it has two callers). */
static inline __attribute__((always_inline)) void *
level_take_head(struct panda_sched *s, unsigned int level, bool sent,
                uint32_t *lenp)
{
    struct sched_level *lv = &s->levels[level];
    uint32_t qi = lv->ring_head;
    struct sched_fq *fq = &s->fqs[qi];
    const struct sched_node *node = &s->nodes[fq_pop(s, level, qi)];

    if (lv->per_flow && sent) {
        fq->deficit -= node->len;
    }
    if (fq->head == NIL) {
        /* Empty: out of the ring, and a pool queue back to the pool. */
        fq->deficit = 0;
        lv->ring_head = fq->ring_next;
        fq->ring_next = NIL;
        if (lv->ring_head == NIL) {
            lv->ring_tail = NIL;
        }
        if (qi != lv->own) {
            fq_release(s, lv, qi);
        }
    }
    level_settle(s, lv);
    *lenp = node->len;
    return node->handle;
}

/* ------------------------------------------------------------------------
 * fq_codel levels (scheduler.h has the design and its reasons).
 * ------------------------------------------------------------------------ */

/* Appends queue 'qi' to the new-flows list (new) or the old-flows list of
 * 'lv'. */
static void
codel_append(struct panda_sched *s, struct sched_level *lv, uint32_t qi,
             bool new)
{
    uint32_t *head = new ? &lv->new_head : &lv->ring_head;
    uint32_t *tail = new ? &lv->new_tail : &lv->ring_tail;

    s->fqs[qi].ring_next = NIL;
    s->fqs[qi].in_new = new;
    if (*head == NIL) {
        *head = qi;
    } else {
        s->fqs[*tail].ring_next = qi;
    }
    *tail = qi;
}

/* Unlinks the head of the new-flows list (new) or of the old-flows list. */
static void
codel_unlink_head(struct panda_sched *s, struct sched_level *lv, bool new)
{
    uint32_t *head = new ? &lv->new_head : &lv->ring_head;
    uint32_t *tail = new ? &lv->new_tail : &lv->ring_tail;
    uint32_t qi = *head;

    *head = s->fqs[qi].ring_next;
    if (*head == NIL) {
        *tail = NIL;
    }
    s->fqs[qi].ring_next = NIL;
}

/* Moves queue 'qi' of fq-codel level 'lv' from the list of queues holding
 * 'from' packets to that of queues holding 'to' (0: none), keeping the
 * level's largest.  Sizes change by one packet at a time, so when the
 * largest queue shrinks, the next size down is never empty: O(1).  The
 * lists are circular, oldest first: among equally fat queues, the one that
 * has been that fat longest is the fattest (a long-lived bulk flow rather
 * than a new flow's first burst). */
static inline void
codel_resize(struct panda_sched *s, struct sched_level *lv, uint32_t qi,
             uint32_t from, uint32_t to)
{
    struct sched_codel *c = &s->codel[qi];

    if (from) {
        uint32_t *head = &lv->by_size[from];

        if (c->size_next == qi) {
            *head = NIL;
        } else {
            s->codel[c->size_prev].size_next = c->size_next;
            s->codel[c->size_next].size_prev = c->size_prev;
            if (*head == qi) {
                *head = c->size_next;
            }
        }
    }
    if (to) {
        uint32_t *head = &lv->by_size[to];

        if (*head == NIL) {
            c->size_prev = c->size_next = qi;
            *head = qi;
        } else {
            struct sched_codel *h = &s->codel[*head];

            c->size_prev = h->size_prev;
            c->size_next = *head;
            s->codel[h->size_prev].size_next = qi;
            h->size_prev = qi;
        }
    }
    if (to > lv->max_size) {
        lv->max_size = to;
    } else if (from == lv->max_size && lv->by_size[from] == NIL) {
        lv->max_size = to;
    }
}

/* fq_pop() at an fq-codel level. */
static inline uint32_t
codel_pop(struct panda_sched *s, unsigned int level, uint32_t qi)
{
    uint32_t n = s->fqs[qi].packets;

    codel_resize(s, &s->levels[level], qi, n, n - 1);
    return fq_pop(s, level, qi);
}

/* Makes the lists' moves that fq_codel makes before it serves a queue, so
 * that the head of the new-flows list, or else of the old-flows list, may
 * send: it holds packets and has deficit left.  A head whose deficit is
 * spent gets a quantum and goes to the old-flows list's tail; an empty head
 * of the new-flows list goes there too while that list holds queues, and
 * otherwise an empty head leaves the lists (a pool queue back to the
 * pool, its CoDel state reset for the next flow).  Each move either pays a
 * quantum towards a packet or retires a queue that once held one, so the
 * loop is O(1) amortised per packet. */
static void
codel_settle(struct panda_sched *s, struct sched_level *lv)
{
    for (;;) {
        bool new = lv->new_head != NIL;
        uint32_t qi = new ? lv->new_head : lv->ring_head;
        struct sched_fq *fq;

        if (qi == NIL) {
            return;
        }
        fq = &s->fqs[qi];
        if ((int32_t) fq->deficit <= 0) {
            fq->deficit += lv->quantum;
            codel_unlink_head(s, lv, new);
            codel_append(s, lv, qi, false);
        } else if (fq->head != NIL) {
            return;
        } else {
            codel_unlink_head(s, lv, new);
            if (new && lv->ring_head != NIL) {
                codel_append(s, lv, qi, false);
            } else {
                fq->listed = fq->in_new = 0;
                fq->deficit = 0;
                if (qi != lv->own) {
                    memset(&s->codel[qi], 0, sizeof s->codel[qi]);
                    fq_release(s, lv, qi);
                }
            }
        }
    }
}

/* Wrap-safe comparisons of CoDel times. */
static inline bool
codel_before(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b) < 0;
}

/* floor(sqrt(x)). */
static uint64_t
isqrt64(uint64_t x)
{
    uint64_t r = (uint64_t) sqrt((double) x);

    /* The double is within a few units; settle it exactly. */
    while (r && r > x / r) {
        r--;
    }
    while ((r + 1) <= x / (r + 1)) {
        r++;
    }
    return r;
}

/* CoDel's control law: 't' plus interval / sqrt(count). */
static uint32_t
codel_control_law(const struct panda_sched *s, uint32_t t, uint32_t count)
{
    /* sqrt(count << 32) is sqrt(count) in 16.16 fixed point; interval <
     * 2^31 units, so interval << 16 fits easily. */
    return t + (uint32_t) (((uint64_t) s->codel_interval << 16)
                           / isqrt64((uint64_t) count << 32));
}

/* RFC 8289's "ok to drop" for a packet of sojourn 'sojourn' leaving at
 * 'now' (CoDel time), keeping the queue's first_above.  Sojourn below
 * target, or the port holding at most an MTU after it, ends the stretch
 * above target (a link that would otherwise go idle needs its packets). */
static bool
codel_should_drop(const struct panda_sched *s, struct sched_codel *c,
                  uint32_t sojourn, uint32_t now)
{
    if (sojourn < s->codel_target || s->backlog_bytes <= PANDA_SCHED_MTU) {
        c->above = 0;
        return false;
    }
    if (!c->above) {
        c->above = 1;
        c->first_above = now + s->codel_interval;
        return false;
    }
    return !codel_before(now, c->first_above);
}

/* Signals congestion with the packet 'handle' of 'lv' by a CE mark, if
 * marks are on and the caller's callback could set one. */
static bool
codel_mark(struct panda_sched *s, struct sched_level *lv, void *handle)
{
    if (s->cfg.codel_ecn && s->mark_cb && s->mark_cb(handle, s->mark_aux)) {
        lv->st.mark_codel++;
        return true;
    }
    return false;
}

/* Drops the packet 'handle' of 'lv', taken out already; false if the core
 * cannot (no drop callback), and then the packet is sent. */
static bool
codel_drop(struct panda_sched *s, struct sched_level *lv, void *handle)
{
    if (!s->drop_cb) {
        return false;
    }
    lv->st.drop_codel++;
    s->drop_cb(handle, PANDA_SCHED_DROPPED_CODEL, s->drop_aux);
    return true;
}

/* The sojourn of the packet of node 'ni' leaving at 'now' (CoDel time). */
static inline uint32_t
codel_sojourn(const struct panda_sched *s, uint32_t ni, uint32_t now)
{
    return now - s->stamps[ni];
}

/* Dequeues at fq-codel 'level' (holding packets; its lists settled): the
 * head packet of the queue in turn, after CoDel (RFC 8289's dequeue) has
 * dropped or marked what it decides.  Returns the packet's handle and its
 * length in '*lenp', or NULL if CoDel dropped all the queue held (the
 * caller then picks again). */
static void *
codel_dequeue(struct panda_sched *s, unsigned int level, uint64_t now_ns,
              uint32_t *lenp)
{
    struct sched_level *lv = &s->levels[level];
    uint32_t qi = level_head(lv);
    struct sched_fq *fq = &s->fqs[qi];
    struct sched_codel *c = &s->codel[qi];
    uint32_t now = (uint32_t) (now_ns >> CODEL_SHIFT);
    uint32_t ni = codel_pop(s, level, qi);
    void *handle = s->nodes[ni].handle;
    bool drop = codel_should_drop(s, c, codel_sojourn(s, ni, now), now);

    if (c->dropping && !drop) {
        c->dropping = 0;            /* Below target: leave the state. */
    } else if (c->dropping) {
        /* Each signal that is due: mark and send, or drop and look at the
         * next packet; the spacing shrinks as count grows. */
        while (c->dropping && !codel_before(now, c->drop_next)) {
            if (c->count < CODEL_COUNT_MAX) {
                c->count++;
            }
            if (codel_mark(s, lv, handle)) {
                c->drop_next = codel_control_law(s, c->drop_next, c->count);
                break;
            }
            if (!codel_drop(s, lv, handle)) {
                break;
            }
            if (fq->head == NIL) {
                handle = NULL;
                c->above = c->dropping = 0;
                break;
            }
            ni = codel_pop(s, level, qi);
            handle = s->nodes[ni].handle;
            if (!codel_should_drop(s, c, codel_sojourn(s, ni, now), now)) {
                c->dropping = 0;
            } else {
                c->drop_next = codel_control_law(s, c->drop_next, c->count);
            }
        }
    } else if (drop) {
        /* Enter the dropping state with one signal. */
        uint32_t delta;

        if (!codel_mark(s, lv, handle) && codel_drop(s, lv, handle)) {
            if (fq->head == NIL) {
                handle = NULL;
                c->above = 0;
            } else {
                ni = codel_pop(s, level, qi);
                handle = s->nodes[ni].handle;
                codel_should_drop(s, c, codel_sojourn(s, ni, now), now);
            }
        }
        c->dropping = 1;
        /* Back soon after the last dropping state: start near the rate
         * that controlled the queue then, not from 1. */
        delta = c->count - c->lastcount;
        if (delta > 1
            && codel_before(now - c->drop_next, 16 * s->codel_interval)) {
            c->count = delta;
        } else {
            c->count = 1;
        }
        c->lastcount = c->count;
        c->drop_next = codel_control_law(s, now, c->count);
    }

    if (handle) {
        *lenp = s->nodes[ni].len;
        fq->deficit = (uint32_t) ((int32_t) fq->deficit - (int32_t) *lenp);
    }
    codel_settle(s, lv);
    return handle;
}

/* The highest level (lowest index) whose bit 'mask' has; 'mask' != 0. */
static inline unsigned int
lowest_bit(unsigned int mask)
{
    return (unsigned int) __builtin_ctz(mask);
}

/* Whether 'len' more bytes fit the port buffer. */
static inline bool
buffer_has_room(const struct panda_sched *s, uint32_t len)
{
    return (s->backlog_bytes + len <= s->cfg.limit_bytes
            && s->backlog_packets < s->cfg.limit_packets);
}

/* The guard's reserve.  The starvation guard serves waiting lower levels,
 * but under an overload of the top level (arrivals above the link's rate,
 * e.g. a flood of small packets that Panda keeps on top) the buffer is
 * full of top-level packets, and a lower level's packet that arrives finds
 * no room, or is pushed out by the next top-level arrival: it never waits,
 * and the guard has nothing to serve.  So with the guard on, the level at
 * or above every level that holds packets may hold at most the buffer's
 * limits less a reserve of guard/1000 of them: a demoted flow can always
 * wait, and the guard serves it.  Push-out then leaves the levels below at
 * least the reserve (or what they hold, if less).  The cost is guard/1000
 * of the buffer for the top level; with the guard off (strict priority,
 * the Panda thesis's scheduler) there is no reserve.  An fq-codel level
 * keeps the whole buffer: when it is full it drops from its own fattest
 * flow, which a cap would preempt.
 *
 * Returns whether a packet of 'len' bytes at 'level' would take the
 * reserve. */
static inline bool
guard_reserve_taken(const struct panda_sched *s, unsigned int level,
                    uint32_t len)
{
    const struct panda_sched_level_stats *st = &s->levels[level].st;

    if (!s->cfg.guard_permille || s->levels[level].codel
        || (s->active && level > lowest_bit(s->active))) {
        return false;
    }
    /* Nothing is held above 'level': its holdings are the top's. */
    return (st->backlog_bytes + len > s->top_limit_bytes
            || st->backlog_packets >= s->top_limit_packets);
}

/* Whether push-out can make room for 'len' bytes at 'level': the levels
 * below it hold enough packets and bytes (all of them may go). */
static bool
push_out_possible(const struct panda_sched *s, unsigned int level,
                  uint32_t len)
{
    uint64_t bytes = 0, packets = 0;
    unsigned int i;

    if (!s->drop_cb || !s->cfg.push_out) {
        return false;
    }
    /* An fq-codel level may also drop its own (its fattest flow's). */
    for (i = s->levels[level].codel ? level : level + 1; i < s->n_levels;
         i++) {
        bytes += s->levels[i].st.backlog_bytes;
        packets += s->levels[i].st.backlog_packets;
    }
    return (s->backlog_bytes - bytes + len <= s->cfg.limit_bytes
            && s->backlog_packets - packets < s->cfg.limit_packets);
}

/* Drops a held packet of 'level' for room: the head of queue 'qi' at an
 * fq-codel level, else of the queue next in turn.  Returns its length. */
static uint32_t
push_out_one(struct panda_sched *s, unsigned int level, uint32_t qi)
{
    struct sched_level *lv = &s->levels[level];
    uint32_t l;
    void *handle;

    if (lv->codel) {
        const struct sched_node *node = &s->nodes[codel_pop(s, level, qi)];

        handle = node->handle;
        l = node->len;
        codel_settle(s, lv);
    } else {
        handle = level_take_head(s, level, false, &l);
    }
    lv->st.drop_push_out++;
    s->drop_cb(handle, PANDA_SCHED_DROPPED_PUSH_OUT, s->drop_aux);
    return l;
}

/* Most packets dropped at once from an fq-codel level's fattest flow, as
 * Linux's fq_codel's drop_batch default. */
#define FATTEST_BATCH 64

/* Pushes out packets of levels below 'level', lowest level first, then
 * at an fq-codel 'level' its fattest flow's, until 'len' bytes fit
 * (push_out_possible() said they can). */
static void
push_out(struct panda_sched *s, unsigned int level, uint32_t len)
{
    while (!buffer_has_room(s, len)) {
        /* The lowest level holding packets: the highest bit of 'active'. */
        unsigned int victim = 31u - (unsigned int) __builtin_clz(s->active);
        struct sched_level *vl = &s->levels[victim];

        if (victim < level || (victim == level && !vl->codel)) {
            return;             /* Cannot happen: checked beforehand. */
        }
        if (victim > level) {
            push_out_one(s, victim, vl->codel ? level_head(vl) : NIL);
        } else {
            /* The level's own fattest flow, as fq_codel: oldest first, at
             * least what the arrival needs, and up to half of the flow's
             * bytes (at most a batch), so that the flow that fills the
             * buffer backs off once rather than at every arrival. */
            uint32_t qi = vl->by_size[vl->max_size];
            uint32_t half = s->fqs[qi].bytes / 2, dropped = 0, n = 0;

            do {
                dropped += push_out_one(s, level, qi);
                n++;
            } while (s->fqs[qi].packets
                     && (!buffer_has_room(s, len)
                         || (dropped < half && n < FATTEST_BATCH)));
        }
    }
}

void
panda_sched_set_drop(struct panda_sched *s,
                     void (*cb)(void *handle, enum panda_sched_drop why,
                                void *aux),
                     void *aux)
{
    s->drop_cb = cb;
    s->drop_aux = aux;
}

/* The backlog the port ECN threshold compares for a packet of 'level':
 * the port's, or with ecn-ahead its level's and the levels' above. */
static uint64_t
ecn_backlog(const struct panda_sched *s, unsigned int level)
{
    uint64_t bytes = 0;
    unsigned int i;

    if (!s->cfg.ecn_ahead) {
        return s->backlog_bytes;
    }
    for (i = 0; i <= level; i++) {
        bytes += s->levels[i].st.backlog_bytes;
    }
    return bytes;
}

/* The drop callback that calls a panda_sched_set_push_out() one. */
static void
drop_legacy(void *handle, enum panda_sched_drop why, void *s_)
{
    struct panda_sched *s = s_;

    (void) why;
    s->legacy_cb(handle, s->legacy_aux);
}

void
panda_sched_set_push_out(struct panda_sched *s,
                         void (*cb)(void *handle, void *aux), void *aux)
{
    s->legacy_cb = cb;
    s->legacy_aux = aux;
    panda_sched_set_drop(s, cb ? drop_legacy : NULL, s);
}

void
panda_sched_set_mark(struct panda_sched *s,
                     bool (*cb)(void *handle, void *aux), void *aux)
{
    s->mark_cb = cb;
    s->mark_aux = aux;
}

enum panda_sched_verdict
panda_sched_enqueue(struct panda_sched *s, const struct panda_sched_pkt *pkt,
                    void *handle, uint64_t now_ns)
{
    unsigned int level = pkt->level < s->n_levels ? pkt->level
                                                   : s->n_levels - 1u;
    struct sched_level *lv = &s->levels[level];
    bool ect = (pkt->ecn & 3) != 0;
    bool ce = false, by_wred = false;
    unsigned int rule = s->wred_rule[pkt->dscp & 63];
    uint32_t qi, ni;
    struct sched_fq *fq;
    struct sched_node *node;
    bool full;

    /* RED's average moves on every arrival, dropped or not. */
    uint64_t qlen = rule || s->cfg.wred_ewma_shift
                    ? wred_qlen(s, now_ns) : s->backlog_bytes;

    full = !buffer_has_room(s, pkt->len);
    if (guard_reserve_taken(s, level, pkt->len)
        || (full && !push_out_possible(s, level, pkt->len))) {
        lv->st.drop_limit++;
        return PANDA_SCHED_DROP_LIMIT;
    }
    if (rule) {
        enum wred_action a = wred_decide(s, &s->cfg.wred[rule - 1], qlen, ect);

        if (a == WRED_DROP) {
            lv->st.drop_wred++;
            return PANDA_SCHED_DROP_WRED;
        }
        ce = by_wred = a == WRED_MARK;
    }
    if (full) {
        /* After WRED, so that nothing is pushed out for a packet it drops. */
        push_out(s, level, pkt->len);
    }
    /* Port-level threshold on the backlog the packet finds (the thesis's
     * scheme 3; PIAS's sch_pias), or with ecn-ahead on the backlog it
     * waits behind: its level's and the levels' above.  Not-ECT packets
     * are never dropped for it: only the limits drop them. */
    if (!ce && ect && s->cfg.ecn_threshold_bytes
        && ecn_backlog(s, level) > s->cfg.ecn_threshold_bytes) {
        ce = true;
    }
    if (s->budget && !budget_take(s->budget)) {
        lv->st.drop_budget++;
        return PANDA_SCHED_DROP_BUDGET;
    }

    if (!s->backlog_packets && s->cfg.rate_bps) {
        shaper_wake(s, now_ns);
    }
    qi = fq_for(s, level, pkt->flow_hash);
    fq = &s->fqs[qi];
    ni = s->free_node;          /* Never NIL: pool_sizes(). */
    node = &s->nodes[ni];
    s->free_node = node->next;
    node->handle = handle;
    node->len = pkt->len;
    node->next = NIL;
    if (OVS_UNLIKELY_(lv->codel)) {
        /* fq_codel: a queue on neither list is a new flow.  The lists need
         * no settling: the head they had may still send, and a new head
         * (the lists were empty) holds this packet and a quantum. */
        s->stamps[ni] = (uint32_t) (now_ns >> CODEL_SHIFT);
        if (!fq->listed) {
            fq->listed = 1;
            fq->deficit = lv->quantum;
            codel_append(s, lv, qi, true);
            lv->st.new_flows++;
        }
        if (fq->head == NIL) {
            fq->head = ni;
        } else {
            s->nodes[fq->tail].next = ni;
        }
        fq->tail = ni;
    } else if (fq->head == NIL) {
        fq->head = fq->tail = ni;
        fq->deficit = lv->quantum;      /* Its first turn's quantum. */
        if (lv->ring_head == NIL) {
            lv->ring_head = lv->ring_tail = qi;
            level_settle(s, lv);
        } else {
            s->fqs[lv->ring_tail].ring_next = qi;
            lv->ring_tail = qi;
        }
    } else {
        s->nodes[fq->tail].next = ni;
        fq->tail = ni;
    }
    fq->bytes += pkt->len;
    fq->packets++;
    if (lv->codel) {
        codel_resize(s, lv, qi, fq->packets - 1, fq->packets);
    }

    lv->st.backlog_bytes += pkt->len;
    lv->st.backlog_packets++;
    lv->st.enqueued_packets++;
    lv->st.enqueued_bytes += pkt->len;
    s->active |= 1u << level;
    s->backlog_bytes += pkt->len;
    s->backlog_packets++;
    if (s->backlog_bytes > s->max_backlog_bytes) {
        s->max_backlog_bytes = s->backlog_bytes;
    }

    /* An arriving CE packet needs nothing done and is not our mark. */
    if (!ce || (pkt->ecn & 3) == 3) {
        return PANDA_SCHED_QUEUED;
    }
    if (by_wred) {
        lv->st.mark_wred++;
    } else {
        lv->st.mark_ecn++;
    }
    return PANDA_SCHED_QUEUED_CE;
}

/* ------------------------------------------------------------------------
 * Dequeue: strict priority with the guard, DRR, the shaper.
 * ------------------------------------------------------------------------ */

/* Levels below 'level' that hold packets. */
static inline unsigned int
lower_waiting(const struct panda_sched *s, unsigned int level)
{
    return s->active & ~((2u << level) - 1);
}

/* Picks the level whose ring head sends next; '*guard' tells whether it
 * goes on the guard's credit.  Pure: changes nothing.  's' is not empty. */
static inline unsigned int
pick_level(const struct panda_sched *s, bool *guard)
{
    unsigned int top = lowest_bit(s->active);
    unsigned int lower = lower_waiting(s, top);
    uint32_t g = s->cfg.guard_permille;

    *guard = false;
    if (OVS_UNLIKELY_(g && lower)) {
        /* Round robin over the waiting lower levels, one packet each, so
         * that the lowest level progresses even when the one above it is
         * always backlogged. */
        unsigned int after = lower & ~((2u << s->guard_last) - 1);
        unsigned int l = lowest_bit(after ? after : lower);
        const struct sched_level *lv = &s->levels[l];
        uint64_t cost = (uint64_t) head_len(s, &s->fqs[level_head(lv)])
                        * (1000 - g);

        if (s->guard_credit >= cost) {
            *guard = true;
            return l;
        }
    }
    return top;
}

static inline __int128
shaper_cost(const struct panda_sched *s, uint32_t len)
{
    return (__int128) len * s->cost_per_byte;
}

/* The shaper is a virtual link clock: 'tat' is the time at which the link
 * would have sent everything charged so far, and the bucket holds (now -
 * tat) x rate bytes.  Two caps keep that bounded, and where each applies is
 * the design:
 *
 *   - While the port is empty nothing is owed: what it earns is capped at
 *     'burst' the moment a packet arrives to an empty port
 *     (shaper_wake()), so after idleness at most 'burst' bytes leave at
 *     once, as from any token bucket.
 *
 *   - While the port is backlogged, the link would have been sending the
 *     whole time.  If the caller comes back late (a PMD thread preempted on
 *     a busy host, the main thread's millisecond timers), a classic bucket
 *     capped at 'burst' throws the late time away, and the port runs below
 *     its rate by the share of time its server was late: measured on DPDK
 *     ports of a loaded 2-core VM, 32 of 50 Mbit/s with a two-frame bucket.
 *     Here the clock instead keeps running, and a late dequeue sends what
 *     the link would have sent since, up to 'catch-up' bytes
 *     (shaper_charge()): a stall longer than that is still lost, so it
 *     never becomes an unbounded burst.  On time, nothing changes: a
 *     backlogged caller that comes back when panda_sched_next_ns() says
 *     never finds more than one packet's credit.
 *
 * So the output conforms to (rate, burst) when served on time, and to
 * (rate, catch-up) at worst; catch-up = burst is the classic bucket.  The
 * alternative, a deeper 'burst', also keeps the rate but lets 'burst' bytes
 * out at once after every idle spell, which is what the unloaded latency
 * of a shaped port pays for (testbed/README.md, "Port types").  Linux's fq
 * makes the same choice on a smaller scale (it credits a late packet with
 * up to half its own time). */

/* A packet of 'len' bytes may leave when the bucket holds min(len, burst)
 * bytes -- a packet larger than the bucket (a TSO segment) waits for a full
 * bucket and leaves the bucket in debt, so it is late rather than stuck.
 * Returns the earliest time in 2^-32 ns units. */
static inline __int128
shaper_ready(const struct panda_sched *s, uint32_t len)
{
    uint32_t need = len < s->cfg.burst_bytes ? len : s->cfg.burst_bytes;

    return s->tat + shaper_cost(s, need);
}

/* Sends 'len' bytes at 'now' on a backlogged port: what the bucket holds
 * beyond 'catch-up' is lost. */
static inline void
shaper_charge(struct panda_sched *s, uint32_t len, __int128 now)
{
    __int128 floor = now - s->catch_up_cost;

    s->tat = (s->tat > floor ? s->tat : floor) + shaper_cost(s, len);
}

void *
panda_sched_dequeue(struct panda_sched *s, uint64_t now_ns, uint32_t *len)
{
    for (;;) {
        struct sched_level *lv;
        unsigned int level;
        __int128 now = 0;
        uint32_t l;
        bool guard;
        void *handle;

        if (!s->active) {
            return NULL;
        }
        if (!lower_waiting(s, lowest_bit(s->active))) {
            s->guard_credit = 0;    /* No banking: credit only while one
                                     * waits. */
        }
        level = pick_level(s, &guard);
        lv = &s->levels[level];
        l = head_len(s, &s->fqs[level_head(lv)]);
        if (s->cfg.rate_bps) {
            now = (__int128) now_ns << 32;
            if (shaper_ready(s, l) > now) {
                return NULL;
            }
        }
        if (OVS_UNLIKELY_(lv->codel)) {
            handle = codel_dequeue(s, level, now_ns, &l);
            if (!handle) {
                continue;       /* CoDel dropped what the queue held. */
            }
        } else {
            handle = level_take_head(s, level, true, &l);
        }
        if (s->cfg.rate_bps) {
            shaper_charge(s, l, now);
        }

        /* The guard's credit. */
        if (guard) {
            s->guard_credit -= (uint64_t) l * (1000 - s->cfg.guard_permille);
            s->guard_last = level;
            lv->st.guard_packets++;
        } else if (s->cfg.guard_permille && lower_waiting(s, level)) {
            s->guard_credit += (uint64_t) l * s->cfg.guard_permille;
        }

        lv->st.sent_packets++;
        lv->st.sent_bytes += l;
        if (!s->backlog_packets) {
            s->idle_since_ns = now_ns;
        }
        if (len) {
            *len = l;
        }
        return handle;
    }
}

size_t
panda_sched_dequeue_burst(struct panda_sched *s, uint64_t now_ns,
                          void **handles, size_t max)
{
    size_t n = 0;

    while (n < max) {
        void *h = panda_sched_dequeue(s, now_ns, NULL);

        if (!h) {
            break;
        }
        handles[n++] = h;
    }
    return n;
}

uint64_t
panda_sched_next_ns(const struct panda_sched *s, uint64_t now_ns)
{
    const struct sched_level *lv;
    unsigned int level;
    __int128 ready;
    bool guard;

    if (!s->active) {
        return UINT64_MAX;
    }
    if (!s->cfg.rate_bps) {
        return now_ns;
    }
    /* Without a lower level waiting, dequeue zeroes the credit first; the
     * choice is then the top level either way. */
    level = pick_level(s, &guard);
    lv = &s->levels[level];
    ready = shaper_ready(s, head_len(s, &s->fqs[level_head(lv)]));
    if (ready <= (__int128) now_ns << 32) {
        return now_ns;
    }
    /* Round up: at the returned time the packet may leave. */
    return (uint64_t) ((ready + (((__int128) 1 << 32) - 1)) >> 32);
}

void
panda_sched_drain(struct panda_sched *s,
                  void (*cb)(void *handle, void *aux), void *aux)
{
    unsigned int i;

    for (i = 0; i < s->n_levels; i++) {
        const struct sched_level *lv = &s->levels[i];
        int list;

        /* The new-flows list (fq-codel), then the ring or old-flows list. */
        for (list = 0; list < 2; list++) {
            uint32_t qi;

            for (qi = list ? lv->ring_head : lv->new_head; qi != NIL;
                 qi = s->fqs[qi].ring_next) {
                uint32_t ni;

                for (ni = s->fqs[qi].head; ni != NIL;
                     ni = s->nodes[ni].next) {
                    if (cb) {
                        cb(s->nodes[ni].handle, aux);
                    }
                }
            }
        }
    }
    budget_give(s->budget, s->backlog_packets);
    pools_reset(s);
}

bool
panda_sched_is_empty(const struct panda_sched *s)
{
    return !s->backlog_packets;
}

/* Counts 'packets' packets of 'bytes' bytes at level 'lv' as enqueued and
 * sent. */
static void
pass_count(struct sched_level *lv, uint32_t packets, uint64_t bytes)
{
    lv->st.enqueued_packets += packets;
    lv->st.enqueued_bytes += bytes;
    lv->st.sent_packets += packets;
    lv->st.sent_bytes += bytes;
}

/* Whether 's' lets a batch of 'n' packets and 'bytes' bytes pass straight
 * through, fq-codel levels aside (panda_sched_pass()). */
static bool
pass_admits(const struct panda_sched *s, size_t n, uint64_t bytes)
{
    /* The whole batch must fit the buffer less the guard's reserve (a
     * conservative bound: it is the top level's room).  Enqueued one by
     * one, the last packet would find all the others in the buffer: the
     * whole batch must fit, and stay at or below the ECN threshold (the
     * packets are marked above it, not at it). */
    return !(s->cfg.rate_bps || s->backlog_packets || s->cfg.n_wred
             || s->cfg.wred_ewma_shift || n > PANDA_SCHED_PASS_MAX
             || n > s->top_limit_packets || bytes > s->top_limit_bytes
             || (s->cfg.ecn_threshold_bytes
                 && bytes > s->cfg.ecn_threshold_bytes)
             || (s->budget
                 && atomic_load_explicit(&s->budget->held,
                                         memory_order_relaxed) + n
                    > s->budget->max));
}

/* What a batch of 'bytes' bytes that passes leaves behind at 'now_ns'. */
static void
pass_done(struct panda_sched *s, uint64_t bytes, uint64_t now_ns)
{
    if (bytes > s->max_backlog_bytes) {
        s->max_backlog_bytes = bytes;
    }
    /* The guard shares a backlog; a batch that leaves in one send is none,
     * and when it has left nothing waits: no credit is kept (no banking,
     * as in dequeue). */
    s->guard_credit = 0;
    s->idle_since_ns = now_ns;
}

bool
panda_sched_pass_level(struct panda_sched *s, unsigned int level, size_t n,
                       uint64_t bytes, uint64_t now_ns)
{
    level = level < s->n_levels ? level : s->n_levels - 1u;
    if (!pass_admits(s, n, bytes) || s->levels[level].codel) {
        return false;
    }
    pass_count(&s->levels[level], n, bytes);
    pass_done(s, bytes, now_ns);
    return true;
}

enum panda_sched_pass
panda_sched_pass(struct panda_sched *s, const struct panda_sched_pkt *pkts,
                 size_t n, uint64_t now_ns, uint8_t *order)
{
    uint32_t count[PANDA_SCHED_MAX_LEVELS] = { 0 };
    uint64_t level_bytes[PANDA_SCHED_MAX_LEVELS] = { 0 };
    uint32_t start[PANDA_SCHED_MAX_LEVELS];
    uint8_t levels[PANDA_SCHED_PASS_MAX];
    unsigned int level, prev = 0;
    uint64_t bytes = 0;
    bool sorted = true;
    size_t i;

    if (n > PANDA_SCHED_PASS_MAX) {
        return PANDA_SCHED_PASS_REFUSED;
    }
    for (i = 0; i < n; i++) {
        level = pkts[i].level < s->n_levels ? pkts[i].level
                                            : s->n_levels - 1u;
        sorted &= level >= prev;
        prev = level;
        levels[i] = level;
        count[level]++;
        level_bytes[level] += pkts[i].len;
        bytes += pkts[i].len;
    }
    if (!pass_admits(s, n, bytes)) {
        return PANDA_SCHED_PASS_REFUSED;
    }
    for (level = 0; level < s->n_levels; level++) {
        if (count[level] && s->levels[level].codel) {
            return PANDA_SCHED_PASS_REFUSED;
        }
    }
    for (level = 0, i = 0; level < s->n_levels; level++) {
        start[level] = i;
        i += count[level];
        if (count[level]) {
            pass_count(&s->levels[level], count[level], level_bytes[level]);
        }
    }
    if (!sorted) {
        /* A counting sort by level, stable. */
        for (i = 0; i < n; i++) {
            order[start[levels[i]]++] = (uint8_t) i;
        }
    }
    pass_done(s, bytes, now_ns);
    return sorted ? PANDA_SCHED_PASS_IN_ORDER : PANDA_SCHED_PASS_SORTED;
}

/* ------------------------------------------------------------------------
 * Statistics.
 * ------------------------------------------------------------------------ */

void
panda_sched_stats(const struct panda_sched *s, struct panda_sched_stats *st)
{
    unsigned int i;

    memset(st, 0, sizeof *st);
    st->n_levels = s->n_levels;
    st->backlog_bytes = s->backlog_bytes;
    st->backlog_packets = s->backlog_packets;
    st->max_backlog_bytes = s->max_backlog_bytes;
    st->burst_bytes = s->cfg.rate_bps ? s->cfg.burst_bytes : 0;
    st->catch_up_bytes = s->cfg.rate_bps ? s->cfg.catch_up_bytes : 0;
    st->flow_queues_used = s->pool_used;
    st->flow_queues_max = s->n_pool;
    for (i = 0; i < s->n_levels; i++) {
        st->level[i] = s->levels[i].st;
    }
}

void
panda_sched_foreach_flow(const struct panda_sched *s,
                         bool (*cb)(const struct panda_sched_flow_info *,
                                    void *aux),
                         void *aux)
{
    unsigned int i;

    for (i = 0; i < s->n_levels; i++) {
        const struct sched_level *lv = &s->levels[i];
        int list;

        for (list = 0; list < 2; list++) {
            uint32_t qi;

            for (qi = list ? lv->ring_head : lv->new_head; qi != NIL;
                 qi = s->fqs[qi].ring_next) {
                const struct sched_fq *fq = &s->fqs[qi];
                struct panda_sched_flow_info info = {
                    .level = i,
                    .shared = qi == lv->own,
                    .flow_hash = qi == lv->own ? 0 : fq->flow_hash,
                    .backlog_bytes = fq->bytes,
                    .backlog_packets = fq->packets,
                    .deficit = (int32_t) fq->deficit,
                    .new_flow = fq->in_new,
                };

                if (fq->packets && !cb(&info, aux)) {
                    return;
                }
            }
        }
    }
}

size_t
panda_sched_memory(const struct panda_sched *s)
{
    return pools_memory(s->n_nodes, s->n_pool, s->n_levels,
                        n_codel_levels(&s->cfg));
}

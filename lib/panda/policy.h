/*
 * Panda scheduling policies: the parameters of one policy as data, their
 * defaults, validation, text syntax, and Algorithm 2 (the counter update).
 *
 * Plain C, no Open vSwitch headers: used by the OVS datapath patches and by
 * the tools (panda-model, panda-bench, panda-demo).
 *
 * Terminology.  The thesis numbers priorities 1..K with 1 the highest.  This
 * library uses 0-based "levels": level 0 is the highest priority (thesis
 * priority 1), level K-1 the lowest.  Level i maps to a DSCP value and to an
 * egress queue through the policy's per-level tables.
 */
#ifndef PANDA_POLICY_H
#define PANDA_POLICY_H 1

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

/* Largest message that panda_policy_check() writes, NUL included. */
#define PANDA_POLICY_MSG_SIZE 160

/* Checks 'p'.  Returns true if it is valid; otherwise writes a message
 * naming the offending field into 'msg' (PANDA_POLICY_MSG_SIZE bytes) and
 * returns false.  Allocates nothing: the datapath calls it. */
bool panda_policy_check(const struct panda_policy *p,
                        char msg[PANDA_POLICY_MSG_SIZE]);

/* Same check for callers that want the message malloc()ed: returns NULL if
 * 'p' is valid, otherwise the message, which the caller must free(). */
char *panda_policy_validate(const struct panda_policy *p);

/* Parses the textual form used by the OVS action and the tools, e.g.
 *   id=1,kind=panda,threshold=1460,weights=9000:1/65535:2,
 *   thresholds=100000/1000000/10000000,dscp=46/26/18/0,queues=0/1/2/3
 * Keys: id (required), kind (panda|pias, default panda), threshold,
 * weights, thresholds, dscp, queues, ctl_level, floor, idle_reset (ms).
 * Omitted dscp/queues take the defaults for K.  The result is validated.
 * Returns NULL on success, else a malloc()ed error message naming the
 * field (caller frees); 'p' is unchanged on error. */
char *panda_policy_parse(const char *s, struct panda_policy *p);

/* Formats 'p' in the syntax accepted by panda_policy_parse(), printing
 * optional fields only when they differ from their defaults, so that
 * parse(format(p)) == p.  Returns the number of characters that the full
 * string needs (like snprintf). */
int panda_policy_format(const struct panda_policy *p, char *buf, size_t size);

/* Compares the fields that are in use (entries past n_levels/n_weights are
 * ignored). */
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

/* Algorithm 2: returns the counter of a connection after one packet of
 * 'size' payload bytes (size > 0), starting from 'counter'.  Saturates
 * instead of wrapping and never goes below p->floor. */
int64_t panda_policy_update(const struct panda_policy *p, int64_t counter,
                            uint32_t size);

/* "panda" or "pias". */
const char *panda_policy_kind_name(enum panda_kind);

#ifdef __cplusplus
}
#endif

#endif /* panda/policy.h */

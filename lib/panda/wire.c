/* The wire form of a policy; see wire.h. */
#include <panda/wire.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Offsets of the fields in the body. */
enum {
    OFS_KIND = 0,
    OFS_N_LEVELS = 1,
    OFS_ID = 2,
    OFS_THRESHOLD = 6,
    OFS_N_WEIGHTS = 10,
    OFS_CTL_LEVEL = 11,
    OFS_UNTRACKED = 12,
    OFS_DEFAULT = 13,
    OFS_IDLE_RESET = 14,
    OFS_N_RULES = 18,
    OFS_TUNNELS = 19,
    OFS_PAD2 = 20,              /* 2 bytes. */
    OFS_FLOOR = 22,
    OFS_THRESHOLDS = 30,        /* 7 x 8 bytes. */
    OFS_WEIGHT_ABOVE = 86,      /* 8 x 4 bytes. */
    OFS_WEIGHTS = 118,          /* 8 x 2 bytes. */
    OFS_DSCP = 134,             /* 8 bytes. */
    OFS_QUEUE = 142,            /* 8 bytes. */
    OFS_END = 150,
};

_Static_assert(OFS_END == PANDA_WIRE_LEN, "wire layout and length differ");

static void
put_be(uint8_t *p, uint64_t x, int n)
{
    int i;

    for (i = n - 1; i >= 0; i--) {
        p[i] = (uint8_t) x;
        x >>= 8;
    }
}

static uint64_t
get_be(const uint8_t *p, int n)
{
    uint64_t x = 0;
    int i;

    for (i = 0; i < n; i++) {
        x = x << 8 | p[i];
    }
    return x;
}

/* Bytes of the value of rule 'r'. */
static size_t
rule_value_len(const struct panda_rule *r)
{
    return (r->type == PANDA_RULE_APP ? 1
            : r->type == PANDA_RULE_MATCH ? r->len : 2);
}

static bool
kind_has_default(uint8_t kind)
{
    return kind == PANDA_KIND_APP || kind == PANDA_KIND_MATCH
           || kind == PANDA_KIND_LENGTH;
}

size_t
panda_wire_len(const struct panda_policy *p)
{
    size_t n = 0;
    int i;

    for (i = 0; i < p->n_rules; i++) {
        n += PANDA_WIRE_RULE_HDR + rule_value_len(&p->rules[i]);
    }
    return PANDA_WIRE_LEN + (n + 7) / 8 * 8;
}

size_t
panda_wire_encode(const struct panda_policy *p, uint8_t *body)
{
    size_t len = panda_wire_len(p);
    uint8_t *r = body + PANDA_WIRE_LEN;
    int i;

    memset(body, 0, len);
    body[OFS_KIND] = (uint8_t) p->kind;
    body[OFS_N_LEVELS] = p->n_levels;
    put_be(body + OFS_ID, p->id, 4);
    put_be(body + OFS_THRESHOLD, p->threshold, 4);
    body[OFS_N_WEIGHTS] = p->n_weights;
    body[OFS_CTL_LEVEL] = p->ctl_level;
    body[OFS_UNTRACKED] = p->n_levels - 1 - p->untracked_level;
    if (kind_has_default(p->kind)) {
        body[OFS_DEFAULT] = p->n_levels - 1 - p->default_level;
    }
    body[OFS_N_RULES] = p->n_rules;
    body[OFS_TUNNELS] = p->tunnels;
    put_be(body + OFS_IDLE_RESET, p->idle_reset_ms, 4);
    put_be(body + OFS_FLOOR, (uint64_t) p->floor, 8);
    for (i = 0; i + 1 < p->n_levels; i++) {
        put_be(body + OFS_THRESHOLDS + 8 * i, p->alpha[i], 8);
    }
    for (i = 0; i < p->n_weights; i++) {
        put_be(body + OFS_WEIGHT_ABOVE + 4 * i, p->weights[i].above, 4);
        put_be(body + OFS_WEIGHTS + 2 * i, p->weights[i].weight, 2);
    }
    for (i = 0; i < p->n_levels; i++) {
        body[OFS_DSCP + i] = p->dscp[i];
        body[OFS_QUEUE + i] = p->queue[i];
    }
    for (i = 0; i < p->n_rules; i++) {
        const struct panda_rule *rule = &p->rules[i];

        r[0] = rule->type;
        r[1] = rule->level;
        r[2] = (uint8_t) rule_value_len(rule);
        if (rule->type == PANDA_RULE_APP) {
            r[3] = rule->dscp;
        } else if (rule->type == PANDA_RULE_MATCH) {
            memcpy(r + 3, rule->keyword, rule->len);
        } else {
            put_be(r + 3, rule->min_payload, 2);
        }
        r += PANDA_WIRE_RULE_HDR + r[2];
    }
    return len;
}

static bool
all_zero(const uint8_t *p, size_t n)
{
    while (n--) {
        if (*p++) {
            return false;
        }
    }
    return true;
}

uint32_t
panda_wire_id(const void *body)
{
    return (uint32_t) get_be((const uint8_t *) body + OFS_ID, 4);
}

/* Writes a message into 'msg' and makes panda_wire_decode() return error
 * class 'ERROR'. */
#define FAIL(ERROR, ...)                                    \
    do {                                                    \
        snprintf(msg, PANDA_WIRE_MSG_SIZE, __VA_ARGS__);    \
        return (ERROR);                                     \
    } while (0)

/* Decodes the rules after the head of the 'len'-byte 'body' into 'p'.
 * Returns false, with a message in 'msg', if they overrun the body, are
 * malformed, or are followed by anything but zeros. */
static bool
decode_rules(const uint8_t *body, size_t len, struct panda_policy *p,
             char msg[PANDA_WIRE_MSG_SIZE])
{
    const uint8_t *r = body + PANDA_WIRE_LEN, *end = body + len;
    int i;

    p->n_rules = body[OFS_N_RULES];
    if (p->n_rules > PANDA_MAX_RULES) {
        snprintf(msg, PANDA_WIRE_MSG_SIZE, "rules: %d rules, at most %d",
                 p->n_rules, PANDA_MAX_RULES);
        return false;
    }
    for (i = 0; i < p->n_rules; i++) {
        struct panda_rule *rule = &p->rules[i];
        size_t n;

        if (end - r < PANDA_WIRE_RULE_HDR
            || end - r < PANDA_WIRE_RULE_HDR + r[2]) {
            snprintf(msg, PANDA_WIRE_MSG_SIZE, "rules: rule %d runs past the "
                     "end of the body", i + 1);
            return false;
        }
        rule->type = r[0];
        rule->level = r[1];
        n = r[2];
        if ((rule->type == PANDA_RULE_APP && n != 1)
            || (rule->type == PANDA_RULE_MATCH
                && (!n || n > PANDA_MAX_KEYWORD))
            || (rule->type == PANDA_RULE_LENGTH && n != 2)) {
            snprintf(msg, PANDA_WIRE_MSG_SIZE, "rules: rule %d (%s) has a "
                     "value of %zu bytes", i + 1,
                     panda_rule_type_name(rule->type), n);
            return false;
        }
        if (rule->type == PANDA_RULE_APP) {
            rule->dscp = r[3];
        } else if (rule->type == PANDA_RULE_MATCH) {
            rule->len = (uint8_t) n;
            memcpy(rule->keyword, r + 3, n);
        } else if (rule->type == PANDA_RULE_LENGTH) {
            rule->min_payload = (uint16_t) get_be(r + 3, 2);
        }
        r += PANDA_WIRE_RULE_HDR + n;
    }
    if (!all_zero(r, end - r)) {
        snprintf(msg, PANDA_WIRE_MSG_SIZE, "rules: nonzero byte after the "
                 "last rule");
        return false;
    }
    return true;
}

enum panda_wire_error
panda_wire_decode(const void *body_, size_t len, struct panda_policy *p,
                  char msg[PANDA_WIRE_MSG_SIZE])
{
    const uint8_t *body = body_;
    uint8_t kind, n_levels, n_weights;
    int i;

    if (len < PANDA_WIRE_LEN || len > PANDA_WIRE_MAX_LEN
        || (len - PANDA_WIRE_LEN) % 8) {
        FAIL(PANDA_WIRE_BAD_LEN, "length %zu, expected %d plus a multiple of "
             "8, at most %d", len, PANDA_WIRE_LEN, PANDA_WIRE_MAX_LEN);
    }
    if (!all_zero(body + OFS_PAD2, 2)) {
        FAIL(PANDA_WIRE_NONZERO_PAD, "padding: nonzero byte");
    }
    kind = body[OFS_KIND];
    n_levels = body[OFS_N_LEVELS];
    n_weights = body[OFS_N_WEIGHTS];
    if (kind >= PANDA_N_KINDS) {
        FAIL(PANDA_WIRE_BAD_ARGUMENT, "kind: must be 0 (panda) to 5 "
             "(compose)");
    }
    if (!n_levels || n_levels > PANDA_MAX_LEVELS) {
        FAIL(PANDA_WIRE_BAD_ARGUMENT, "thresholds: 1 to %d levels required",
             PANDA_MAX_LEVELS);
    }
    if (n_weights > PANDA_MAX_WEIGHTS) {
        FAIL(PANDA_WIRE_BAD_ARGUMENT, "weights: at most %d intervals",
             PANDA_MAX_WEIGHTS);
    }

    memset(p, 0, sizeof *p);
    p->id = panda_wire_id(body);
    p->kind = (enum panda_kind) kind;
    p->threshold = (uint32_t) get_be(body + OFS_THRESHOLD, 4);
    p->n_levels = n_levels;
    p->n_weights = n_weights;
    p->ctl_level = body[OFS_CTL_LEVEL];
    if (body[OFS_UNTRACKED] >= n_levels) {
        FAIL(PANDA_WIRE_BAD_ARGUMENT, "untracked_level: %d levels above the"
             " lowest, but the policy has only %d levels",
             body[OFS_UNTRACKED], n_levels);
    }
    p->untracked_level = n_levels - 1 - body[OFS_UNTRACKED];
    if (!kind_has_default(kind) && body[OFS_DEFAULT]) {
        FAIL(PANDA_WIRE_NONZERO_PAD, "padding: nonzero byte");
    }
    if (body[OFS_DEFAULT] >= n_levels) {
        FAIL(PANDA_WIRE_BAD_ARGUMENT, "default_level: %d levels above the "
             "lowest, but the policy has only %d levels", body[OFS_DEFAULT],
             n_levels);
    }
    p->default_level = (kind_has_default(kind)
                        ? n_levels - 1 - body[OFS_DEFAULT] : 0);
    p->idle_reset_ms = (uint32_t) get_be(body + OFS_IDLE_RESET, 4);
    p->tunnels = body[OFS_TUNNELS];     /* Unknown bits: the check. */
    p->floor = (int64_t) get_be(body + OFS_FLOOR, 8);
    for (i = 0; i < PANDA_MAX_LEVELS - 1; i++) {
        uint64_t alpha = get_be(body + OFS_THRESHOLDS + 8 * i, 8);

        if (i + 1 < n_levels) {
            p->alpha[i] = alpha;
        } else if (alpha) {
            FAIL(PANDA_WIRE_BAD_ARGUMENT, "thresholds: nonzero entry past "
                 "the last level");
        }
    }
    for (i = 0; i < PANDA_MAX_WEIGHTS; i++) {
        uint32_t above = (uint32_t) get_be(body + OFS_WEIGHT_ABOVE + 4 * i, 4);
        uint16_t weight = (uint16_t) get_be(body + OFS_WEIGHTS + 2 * i, 2);

        if (i < n_weights) {
            p->weights[i].above = above;
            p->weights[i].weight = weight;
        } else if (above || weight) {
            FAIL(PANDA_WIRE_BAD_ARGUMENT, "weights: nonzero entry past the "
                 "last interval");
        }
    }
    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        if (i < n_levels) {
            p->dscp[i] = body[OFS_DSCP + i];
            p->queue[i] = body[OFS_QUEUE + i];
        } else if (body[OFS_DSCP + i] || body[OFS_QUEUE + i]) {
            FAIL(PANDA_WIRE_BAD_ARGUMENT, "dscp, queues: nonzero entry past "
                 "the last level");
        }
    }
    if (!decode_rules(body, len, p, msg)) {
        return PANDA_WIRE_BAD_ARGUMENT;
    }
    if (len != panda_wire_len(p)) {
        FAIL(PANDA_WIRE_BAD_LEN, "length %zu, but its %d rules take %zu",
             len, p->n_rules, panda_wire_len(p));
    }
    return panda_policy_check(p, msg) ? PANDA_WIRE_OK
                                      : PANDA_WIRE_BAD_ARGUMENT;
}

#undef FAIL

const char *
panda_wire_error_name(enum panda_wire_error error)
{
    switch (error) {
    case PANDA_WIRE_OK:
        return "OK";
    case PANDA_WIRE_BAD_LEN:
        return "BAD_LEN";
    case PANDA_WIRE_NONZERO_PAD:
        return "NONZERO_PAD";
    case PANDA_WIRE_BAD_ARGUMENT:
        return "BAD_ARGUMENT";
    }
    return "?";
}

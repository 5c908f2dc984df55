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
    OFS_PAD = 12,               /* 2 bytes. */
    OFS_IDLE_RESET = 14,
    OFS_PAD2 = 18,              /* 4 bytes. */
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

void
panda_wire_encode(const struct panda_policy *p, uint8_t body[PANDA_WIRE_LEN])
{
    int i;

    memset(body, 0, PANDA_WIRE_LEN);
    body[OFS_KIND] = p->kind == PANDA_KIND_PIAS ? 1 : 0;
    body[OFS_N_LEVELS] = p->n_levels;
    put_be(body + OFS_ID, p->id, 4);
    put_be(body + OFS_THRESHOLD, p->threshold, 4);
    body[OFS_N_WEIGHTS] = p->n_weights;
    body[OFS_CTL_LEVEL] = p->ctl_level;
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

enum panda_wire_error
panda_wire_decode(const void *body_, size_t len, struct panda_policy *p,
                  char msg[PANDA_WIRE_MSG_SIZE])
{
    const uint8_t *body = body_;
    uint8_t kind, n_levels, n_weights;
    int i;

    if (len != PANDA_WIRE_LEN) {
        FAIL(PANDA_WIRE_BAD_LEN, "length %zu, expected %d", len,
             PANDA_WIRE_LEN);
    }
    if (!all_zero(body + OFS_PAD, 2) || !all_zero(body + OFS_PAD2, 4)) {
        FAIL(PANDA_WIRE_NONZERO_PAD, "padding: nonzero byte");
    }
    kind = body[OFS_KIND];
    n_levels = body[OFS_N_LEVELS];
    n_weights = body[OFS_N_WEIGHTS];
    if (kind > 1) {
        FAIL(PANDA_WIRE_BAD_ARGUMENT, "kind: must be 0 (panda) or 1 (pias)");
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
    p->kind = kind ? PANDA_KIND_PIAS : PANDA_KIND_PANDA;
    p->threshold = (uint32_t) get_be(body + OFS_THRESHOLD, 4);
    p->n_levels = n_levels;
    p->n_weights = n_weights;
    p->ctl_level = body[OFS_CTL_LEVEL];
    p->idle_reset_ms = (uint32_t) get_be(body + OFS_IDLE_RESET, 4);
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

/* Panda policies: defaults, validation, text syntax and Algorithm 2. */
#include <panda/policy.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/base.h>

const char *
panda_policy_kind_name(enum panda_kind kind)
{
    return kind == PANDA_KIND_PIAS ? "pias" : "panda";
}

void
panda_policy_default_maps(struct panda_policy *p)
{
    int i;

    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        p->dscp[i] = i < p->n_levels ? i + 1 : 0;
        p->queue[i] = i < p->n_levels ? i : 0;
    }
}

void
panda_policy_init(struct panda_policy *p, enum panda_kind kind)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->n_levels = 1;
    panda_policy_default_maps(p);
}

/* Writes a message into 'msg' and makes panda_policy_check() return false. */
#define FAIL(...)                                           \
    do {                                                    \
        snprintf(msg, PANDA_POLICY_MSG_SIZE, __VA_ARGS__);  \
        return false;                                       \
    } while (0)

bool
panda_policy_check(const struct panda_policy *p,
                   char msg[PANDA_POLICY_MSG_SIZE])
{
    int i;

    if (p->kind != PANDA_KIND_PANDA && p->kind != PANDA_KIND_PIAS) {
        FAIL("kind: unknown policy kind %d", (int) p->kind);
    }
    if (p->n_levels < 1 || p->n_levels > PANDA_MAX_LEVELS) {
        FAIL("thresholds: %d levels requested, must be 1 to"
             " %d (at most %d thresholds)", p->n_levels,
             PANDA_MAX_LEVELS, PANDA_MAX_LEVELS - 1);
    }
    for (i = 0; i + 1 < p->n_levels; i++) {
        if (i > 0 && p->alpha[i] <= p->alpha[i - 1]) {
            FAIL("thresholds: not strictly ascending"
                 " (%" PRIu64 " after %" PRIu64 ")",
                 p->alpha[i], p->alpha[i - 1]);
        }
        if (p->alpha[i] > INT64_MAX) {
            FAIL("thresholds: %" PRIu64 " too large",
                 p->alpha[i]);
        }
    }
    if (p->kind == PANDA_KIND_PIAS) {
        if (p->threshold) {
            FAIL("threshold: must be 0 for kind=pias"
                 " (PIAS has no small-packet threshold)");
        }
        if (p->n_weights) {
            FAIL("weights: not allowed with kind=pias"
                 " (PIAS counts bytes sent)");
        }
    } else if (p->threshold > PANDA_MAX_PKT_SIZE) {
        FAIL("threshold: %" PRIu32 " larger than the largest"
             " packet (%d)", p->threshold,
             PANDA_MAX_PKT_SIZE);
    }
    if (p->n_weights > PANDA_MAX_WEIGHTS) {
        FAIL("weights: %d intervals, at most %d",
             p->n_weights, PANDA_MAX_WEIGHTS);
    }
    for (i = 0; i < p->n_weights; i++) {
        const struct panda_weight *w = &p->weights[i];
        if (!i && w->above < p->threshold) {
            FAIL("weights: interval bound %" PRIu32 " is"
                 " below the threshold T=%" PRIu32,
                 w->above, p->threshold);
        }
        if (i && w->above <= p->weights[i - 1].above) {
            FAIL("weights: interval bounds not strictly"
                 " ascending (%" PRIu32 " after %" PRIu32
                 ")", w->above, p->weights[i - 1].above);
        }
        if (w->weight < PANDA_WEIGHT_ONE) {
            FAIL("weights: weight %d.%02d below 1",
                 w->weight / 100, w->weight % 100);
        }
        if (i && w->weight < p->weights[i - 1].weight) {
            FAIL("weights: weights must not decrease"
                 " (1 = w0 <= w1 <= ...)");
        }
    }
    for (i = 0; i < p->n_levels; i++) {
        if (p->dscp[i] > PANDA_MAX_DSCP) {
            FAIL("dscp: value %d for level %d exceeds %d",
                 p->dscp[i], i, PANDA_MAX_DSCP);
        }
    }
    if (p->ctl_level >= p->n_levels) {
        FAIL("ctl_level: %d but the policy has only %d"
             " levels", p->ctl_level, p->n_levels);
    }
    if (p->floor > 0) {
        FAIL("floor: %" PRId64 " must be <= 0", p->floor);
    }
    return true;
}

#undef FAIL

char *
panda_policy_validate(const struct panda_policy *p)
{
    char msg[PANDA_POLICY_MSG_SIZE];

    return panda_policy_check(p, msg) ? NULL : panda_asprintf("%s", msg);
}


/* ---- Text syntax. ---- */

static char *
parse_u64(const char *field, const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (*s == '-' || *s == '\0') {
        return panda_asprintf("%s: \"%s\" is not a nonnegative integer",
                              field, s);
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || end == s) {
        return panda_asprintf("%s: \"%s\" is not a nonnegative integer",
                              field, s);
    }
    if (v > max) {
        return panda_asprintf("%s: %s out of range (max %" PRIu64 ")",
                              field, s, max);
    }
    *out = v;
    return NULL;
}

/* Parses a decimal with at most two fractional digits into hundredths. */
static char *
parse_weight(const char *s, uint16_t *out)
{
    const char *dot = strchr(s, '.');
    uint64_t whole, frac = 0;
    char buf[32];
    char *err;
    size_t n = dot ? (size_t) (dot - s) : strlen(s);

    if (n == 0 || n >= sizeof buf) {
        return panda_asprintf("weights: bad weight \"%s\"", s);
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    err = parse_u64("weights", buf, 600, &whole);
    if (err) {
        return err;
    }
    if (dot) {
        size_t fl = strlen(dot + 1);

        if (fl < 1 || fl > 2 || strspn(dot + 1, "0123456789") != fl) {
            return panda_asprintf("weights: weight \"%s\" needs 1 or 2"
                                  " decimal digits", s);
        }
        frac = strtoul(dot + 1, NULL, 10) * (fl == 1 ? 10 : 1);
    }
    *out = (uint16_t) (whole * 100 + frac);
    return NULL;
}

/* Splits 'value' on '/' and calls 'cb' for each item. */
static char *
for_each_item(const char *field, char *value, int max_items,
              char *(*cb)(struct panda_policy *, int idx, const char *item),
              struct panda_policy *p, int *n_items)
{
    char *save = NULL, *item;
    int n = 0;

    if (*value == '\0') {
        *n_items = 0;
        return NULL;
    }
    if (value[strlen(value) - 1] == '/' || value[0] == '/'
        || strstr(value, "//")) {
        return panda_asprintf("%s: empty item in \"%s\"", field, value);
    }
    for (item = strtok_r(value, "/", &save); item;
         item = strtok_r(NULL, "/", &save)) {
        char *err;

        if (n >= max_items) {
            return panda_asprintf("%s: more than %d items", field, max_items);
        }
        err = cb(p, n, item);
        if (err) {
            return err;
        }
        n++;
    }
    *n_items = n;
    return NULL;
}

static char *
parse_weight_item(struct panda_policy *p, int i, const char *item)
{
    const char *colon = strchr(item, ':');
    char bound[32];
    uint64_t upto;
    char *err;

    if (!colon || colon == item || (size_t) (colon - item) >= sizeof bound) {
        return panda_asprintf("weights: \"%s\" is not <size>:<weight>", item);
    }
    memcpy(bound, item, colon - item);
    bound[colon - item] = '\0';
    err = parse_u64("weights", bound, PANDA_MAX_PKT_SIZE, &upto);
    if (!err) {
        p->weights[i].above = (uint32_t) upto;
        err = parse_weight(colon + 1, &p->weights[i].weight);
    }
    return err;
}

static char *
parse_alpha_item(struct panda_policy *p, int i, const char *item)
{
    return parse_u64("thresholds", item, INT64_MAX, &p->alpha[i]);
}

static char *
parse_dscp_item(struct panda_policy *p, int i, const char *item)
{
    uint64_t v;
    char *err = parse_u64("dscp", item, PANDA_MAX_DSCP, &v);

    if (!err) {
        p->dscp[i] = (uint8_t) v;
    }
    return err;
}

static char *
parse_queue_item(struct panda_policy *p, int i, const char *item)
{
    uint64_t v;
    char *err = parse_u64("queues", item, UINT8_MAX, &v);

    if (!err) {
        p->queue[i] = (uint8_t) v;
    }
    return err;
}

char *
panda_policy_parse(const char *s, struct panda_policy *p)
{
    char *copy = panda_asprintf("%s", s);
    char *save = NULL, *tok, *err = NULL;
    bool have_id = false;
    int n_dscp = -1, n_queues = -1, n_alpha = 0, n;
    enum panda_kind kind = PANDA_KIND_PANDA;
    struct panda_policy tmp;

    /* The kind decides defaults; find it first. */
    panda_policy_init(&tmp, PANDA_KIND_PANDA);
    for (tok = strtok_r(copy, ",", &save); tok && !err;
         tok = strtok_r(NULL, ",", &save)) {
        char *value = strchr(tok, '=');
        uint64_t v;

        tok += strspn(tok, " \t");
        if (!value) {
            err = panda_asprintf("%s: missing \"=<value>\"", tok);
            break;
        }
        *value++ = '\0';
        if (!strcmp(tok, "id")) {
            err = parse_u64("id", value, UINT32_MAX, &v);
            tmp.id = (uint32_t) v;
            have_id = true;
        } else if (!strcmp(tok, "kind")) {
            if (!strcmp(value, "panda")) {
                kind = PANDA_KIND_PANDA;
            } else if (!strcmp(value, "pias")) {
                kind = PANDA_KIND_PIAS;
            } else {
                err = panda_asprintf("kind: \"%s\" is not panda or pias",
                                     value);
            }
        } else if (!strcmp(tok, "threshold") || !strcmp(tok, "T")) {
            err = parse_u64("threshold", value, PANDA_MAX_PKT_SIZE, &v);
            tmp.threshold = (uint32_t) v;
        } else if (!strcmp(tok, "weights")) {
            err = for_each_item("weights", value, PANDA_MAX_WEIGHTS,
                                parse_weight_item, &tmp, &n);
            tmp.n_weights = (uint8_t) n;
        } else if (!strcmp(tok, "thresholds")) {
            err = for_each_item("thresholds", value, PANDA_MAX_LEVELS - 1,
                                parse_alpha_item, &tmp, &n_alpha);
        } else if (!strcmp(tok, "dscp")) {
            err = for_each_item("dscp", value, PANDA_MAX_LEVELS,
                                parse_dscp_item, &tmp, &n_dscp);
        } else if (!strcmp(tok, "queues")) {
            err = for_each_item("queues", value, PANDA_MAX_LEVELS,
                                parse_queue_item, &tmp, &n_queues);
        } else if (!strcmp(tok, "ctl_level")) {
            err = parse_u64("ctl_level", value, PANDA_MAX_LEVELS - 1, &v);
            tmp.ctl_level = (uint8_t) v;
        } else if (!strcmp(tok, "floor")) {
            char *end;
            long long f;

            errno = 0;
            f = strtoll(value, &end, 10);
            if (errno || *end || end == value) {
                err = panda_asprintf("floor: \"%s\" is not an integer",
                                     value);
            }
            tmp.floor = f;
        } else if (!strcmp(tok, "idle_reset")) {
            err = parse_u64("idle_reset", value, UINT32_MAX, &v);
            tmp.idle_reset_ms = (uint32_t) v;
        } else {
            err = panda_asprintf("%s: unknown field", tok);
        }
    }
    free(copy);
    if (err) {
        return err;
    }
    if (!have_id) {
        return panda_asprintf("id: missing (every policy needs a stable id)");
    }
    tmp.kind = kind;
    tmp.n_levels = (uint8_t) (n_alpha + 1);
    if (n_dscp >= 0 && n_dscp != tmp.n_levels) {
        return panda_asprintf("dscp: %d values for %d levels (give one per"
                              " level: thresholds + 1)", n_dscp,
                              tmp.n_levels);
    }
    if (n_queues >= 0 && n_queues != tmp.n_levels) {
        return panda_asprintf("queues: %d values for %d levels (give one per"
                              " level: thresholds + 1)", n_queues,
                              tmp.n_levels);
    }
    {
        struct panda_policy defaults = tmp;

        panda_policy_default_maps(&defaults);
        if (n_dscp < 0) {
            memcpy(tmp.dscp, defaults.dscp, sizeof tmp.dscp);
        }
        if (n_queues < 0) {
            memcpy(tmp.queue, defaults.queue, sizeof tmp.queue);
        }
    }
    err = panda_policy_validate(&tmp);
    if (!err) {
        *p = tmp;
    }
    return err;
}

struct fmt {
    char *buf;
    size_t size;
    int len;
};

static void PANDA_PRINTF(2, 3)
fmt_put(struct fmt *f, const char *format, ...)
{
    va_list args;
    size_t off = (size_t) f->len < f->size ? (size_t) f->len : f->size;
    int n;

    va_start(args, format);
    n = vsnprintf(f->buf ? f->buf + off : NULL, f->size - off, format, args);
    va_end(args);
    if (n > 0) {
        f->len += n;
    }
}

int
panda_policy_format(const struct panda_policy *p, char *buf, size_t size)
{
    struct fmt f = { buf, buf ? size : 0, 0 };
    int i;

    if (buf && size) {
        buf[0] = '\0';
    }
    fmt_put(&f, "id=%" PRIu32, p->id);
    if (p->kind == PANDA_KIND_PIAS) {
        fmt_put(&f, ",kind=pias");
    } else {
        fmt_put(&f, ",threshold=%" PRIu32, p->threshold);
    }
    for (i = 0; i < p->n_weights; i++) {
        const struct panda_weight *w = &p->weights[i];

        fmt_put(&f, "%s%" PRIu32 ":%d", i ? "/" : ",weights=",
                w->above, w->weight / 100);
        if (w->weight % 100) {
            fmt_put(&f, w->weight % 10 ? ".%02d" : ".%d",
                    w->weight % 10 ? w->weight % 100 : w->weight % 100 / 10);
        }
    }
    for (i = 0; i + 1 < p->n_levels; i++) {
        fmt_put(&f, "%s%" PRIu64, i ? "/" : ",thresholds=", p->alpha[i]);
    }
    for (i = 0; i < p->n_levels; i++) {
        fmt_put(&f, "%s%d", i ? "/" : ",dscp=", p->dscp[i]);
    }
    for (i = 0; i < p->n_levels; i++) {
        fmt_put(&f, "%s%d", i ? "/" : ",queues=", p->queue[i]);
    }
    if (p->ctl_level) {
        fmt_put(&f, ",ctl_level=%d", p->ctl_level);
    }
    if (p->floor) {
        fmt_put(&f, ",floor=%" PRId64, p->floor);
    }
    if (p->idle_reset_ms) {
        fmt_put(&f, ",idle_reset=%" PRIu32, p->idle_reset_ms);
    }
    return f.len;
}

bool
panda_policy_equal(const struct panda_policy *a, const struct panda_policy *b)
{
    int i;

    if (a->id != b->id || a->kind != b->kind || a->threshold != b->threshold
        || a->n_weights != b->n_weights || a->n_levels != b->n_levels
        || a->ctl_level != b->ctl_level || a->floor != b->floor
        || a->idle_reset_ms != b->idle_reset_ms) {
        return false;
    }
    for (i = 0; i < a->n_weights; i++) {
        if (a->weights[i].above != b->weights[i].above
            || a->weights[i].weight != b->weights[i].weight) {
            return false;
        }
    }
    for (i = 0; i < a->n_levels; i++) {
        if ((i + 1 < a->n_levels && a->alpha[i] != b->alpha[i])
            || a->dscp[i] != b->dscp[i] || a->queue[i] != b->queue[i]) {
            return false;
        }
    }
    return true;
}

/* ---- Algorithm 2. ---- */

uint16_t
panda_policy_weight(const struct panda_policy *p, uint32_t size)
{
    int i;

    for (i = p->n_weights - 1; i >= 0; i--) {
        if (size > p->weights[i].above) {
            return p->weights[i].weight;
        }
    }
    return PANDA_WEIGHT_ONE;
}

static inline int64_t
sat_add(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_add_overflow(a, b, &r)) {
        return b > 0 ? INT64_MAX : INT64_MIN;
    }
    return r;
}

int64_t
panda_policy_update(const struct panda_policy *p, int64_t counter,
                    uint32_t size)
{
    if (p->kind == PANDA_KIND_PANDA && size < p->threshold) {
        /* Compensation: counter -= T - size, bounded below by the floor. */
        counter = sat_add(counter, -(int64_t) (p->threshold - size));
        return counter < p->floor ? p->floor : counter;
    } else {
        uint16_t w = p->kind == PANDA_KIND_PANDA && p->n_weights
                     ? panda_policy_weight(p, size) : PANDA_WEIGHT_ONE;
        int64_t inc = w == PANDA_WEIGHT_ONE
                      ? (int64_t) size
                      : (int64_t) size * w / PANDA_WEIGHT_ONE;

        counter = sat_add(counter, inc);
        return counter < p->floor ? p->floor : counter;
    }
}

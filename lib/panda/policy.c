/* Panda policies: defaults, validation and text syntax (Algorithm 2 is
 * inline, in policy.h). */
#include <panda/policy.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/base.h>

static const char *const kind_names[PANDA_N_KINDS] = {
    [PANDA_KIND_PANDA] = "panda",
    [PANDA_KIND_PIAS] = "pias",
    [PANDA_KIND_APP] = "app",
    [PANDA_KIND_MATCH] = "match",
    [PANDA_KIND_LENGTH] = "length",
    [PANDA_KIND_COMPOSE] = "compose",
};

const char *
panda_policy_kind_name(enum panda_kind kind)
{
    return (unsigned) kind < PANDA_N_KINDS ? kind_names[kind] : "?";
}

const char *
panda_rule_type_name(enum panda_rule_type type)
{
    return (type == PANDA_RULE_APP ? "app"
            : type == PANDA_RULE_MATCH ? "match"
            : type == PANDA_RULE_LENGTH ? "length" : "?");
}

/* The names of the tunnels, by bit number (enum panda_tunnel). */
static const char *const tunnel_names[] = { "geneve", "vxlan" };
#define N_TUNNELS (sizeof tunnel_names / sizeof tunnel_names[0])
_Static_assert(PANDA_TUNNELS_ALL == (1u << N_TUNNELS) - 1,
               "a name for every tunnel bit");

const char *
panda_policy_tunnel_name(unsigned int tunnel)
{
    size_t i;

    for (i = 0; i < N_TUNNELS; i++) {
        if (tunnel == 1u << i) {
            return tunnel_names[i];
        }
    }
    return NULL;
}

unsigned int
panda_policy_tunnel_by_name(const char *name)
{
    size_t i;

    for (i = 0; name && i < N_TUNNELS; i++) {
        if (!strcmp(name, tunnel_names[i])) {
            return 1u << i;
        }
    }
    return 0;
}

/* The rule type that a rule kind takes (0 for the others). */
static enum panda_rule_type
kind_rule_type(enum panda_kind kind)
{
    return (kind == PANDA_KIND_APP ? PANDA_RULE_APP
            : kind == PANDA_KIND_MATCH ? PANDA_RULE_MATCH
            : kind == PANDA_KIND_LENGTH ? PANDA_RULE_LENGTH : 0);
}

void
panda_policy_default_maps(struct panda_policy *p)
{
    int i;

    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        p->dscp[i] = i < p->n_levels ? i + 1 : 0;
        p->queue[i] = i < p->n_levels ? i : 0;
    }
    p->untracked_level = p->n_levels ? p->n_levels - 1 : 0;
    p->default_level = (kind_rule_type(p->kind) && p->n_levels
                        ? p->n_levels - 1 : 0);
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

/* The checks of the rule kinds (app, match, length, compose); see
 * panda_policy_check(). */
static bool
check_rules(const struct panda_policy *p, char msg[PANDA_POLICY_MSG_SIZE])
{
    enum panda_rule_type only = kind_rule_type(p->kind);
    const char *kind = panda_policy_kind_name(p->kind);
    int i;

    if (!only && p->kind != PANDA_KIND_COMPOSE) {
        if (p->n_rules) {
            FAIL("%s: rules are not allowed with kind=%s",
                 panda_rule_type_name(p->rules[0].type), kind);
        }
        if (p->default_level) {
            FAIL("default_level: not allowed with kind=%s (the counter "
                 "decides every level)", kind);
        }
        return true;
    }
    if (only) {
        /* Rule kinds keep no connection state: the fields of the counter
         * classifiers would be silently ignored, so they are refused. */
        if (p->threshold || p->n_weights) {
            FAIL("%s: not allowed with kind=%s (no counter)",
                 p->threshold ? "threshold" : "weights", kind);
        }
        if (p->floor || p->idle_reset_ms) {
            FAIL("%s: not allowed with kind=%s (no counter)",
                 p->floor ? "floor" : "idle_reset", kind);
        }
        if (p->ctl_level) {
            FAIL("ctl_level: not allowed with kind=%s (rules decide every "
                 "packet; use default_level)", kind);
        }
        if (p->untracked_level + 1 != p->n_levels) {
            FAIL("untracked_level: not allowed with kind=%s (rules decide "
                 "every packet; use default_level)", kind);
        }
        if (p->default_level >= p->n_levels) {
            FAIL("default_level: %d but the policy has only %d levels",
                 p->default_level, p->n_levels);
        }
    } else if (p->default_level) {
        FAIL("default_level: not allowed with kind=compose (Panda decides "
             "the packets that no rule matches)");
    }
    if (!p->n_rules) {
        FAIL("%s: kind=%s needs at least one rule", only
             ? panda_rule_type_name(only) : "rules", kind);
    }
    if (p->n_rules > PANDA_MAX_RULES) {
        FAIL("rules: %d rules, at most %d", p->n_rules, PANDA_MAX_RULES);
    }
    for (i = 0; i < p->n_rules; i++) {
        const struct panda_rule *r = &p->rules[i];
        const char *name = panda_rule_type_name(r->type);

        if (r->type < PANDA_RULE_APP || r->type > PANDA_RULE_LENGTH) {
            FAIL("rules: unknown rule type %d", r->type);
        }
        if (only && r->type != only) {
            FAIL("%s: not allowed with kind=%s (use kind=compose to mix "
                 "rule types)", name, kind);
        }
        if (r->level >= p->n_levels) {
            FAIL("%s: level %d but the policy has only %d levels", name,
                 r->level, p->n_levels);
        }
        switch (r->type) {
        case PANDA_RULE_APP:
            if (r->dscp > PANDA_MAX_DSCP) {
                FAIL("app: DSCP %d exceeds %d", r->dscp, PANDA_MAX_DSCP);
            }
            break;
        case PANDA_RULE_MATCH:
            if (!r->len || r->len > PANDA_MAX_KEYWORD) {
                FAIL("match: keyword of %d bytes, must be 1 to %d", r->len,
                     PANDA_MAX_KEYWORD);
            }
            break;
        case PANDA_RULE_LENGTH:
            if (!r->min_payload) {
                FAIL("length: minimum payload 0 matches every packet "
                     "(use 1 to %d, or default_level)", PANDA_MAX_PKT_SIZE);
            }
            break;
        }
    }
    return true;
}

bool
panda_policy_check(const struct panda_policy *p,
                   char msg[PANDA_POLICY_MSG_SIZE])
{
    int i;

    if ((unsigned) p->kind >= PANDA_N_KINDS) {
        FAIL("kind: unknown policy kind %d", (int) p->kind);
    }
    if (p->n_levels < 1 || p->n_levels > PANDA_MAX_LEVELS) {
        FAIL("thresholds: %d levels requested, must be 1 to"
             " %d (at most %d thresholds)", p->n_levels,
             PANDA_MAX_LEVELS, PANDA_MAX_LEVELS - 1);
    }
    for (i = 0; i + 1 < p->n_levels; i++) {
        if (!panda_kind_has_counter(p->kind)) {
            if (p->alpha[i]) {
                FAIL("thresholds: not allowed with kind=%s (no counter; "
                     "'levels' gives K)", panda_policy_kind_name(p->kind));
            }
            continue;
        }
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
        /* The text syntax bounds it too: a policy must print to a text
         * that parses back (found by tests/fuzz/fuzz-wire). */
        if (w->above > PANDA_MAX_PKT_SIZE) {
            FAIL("weights: interval bound %" PRIu32 " larger than the"
                 " largest packet (%d)", w->above, PANDA_MAX_PKT_SIZE);
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
        if (w->weight > 60099) {        /* parse_weight()'s 600.99. */
            FAIL("weights: weight %d.%02d above 600.99",
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
    if (p->untracked_level >= p->n_levels) {
        FAIL("untracked_level: %d but the policy has only %d"
             " levels", p->untracked_level, p->n_levels);
    }
    if (p->floor > 0) {
        FAIL("floor: %" PRId64 " must be <= 0", p->floor);
    }
    if (p->idle_reset_ms > PANDA_MAX_DURATION_MS) {
        FAIL("idle_reset: %" PRIu64 " ms out of range (max %" PRIu64 ")",
             p->idle_reset_ms, (uint64_t) PANDA_MAX_DURATION_MS);
    }
    if (p->tunnels & ~PANDA_TUNNELS_ALL) {
        FAIL("tunnels: unknown tunnel bits 0x%02x (geneve is 0x01, vxlan "
             "0x02)", p->tunnels & ~PANDA_TUNNELS_ALL);
    }
    return check_rules(p, msg);
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
    return panda_parse_uint(field, s, 0, max, out);
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
parse_tunnel_item(struct panda_policy *p, int i, const char *item)
{
    unsigned int bit = panda_policy_tunnel_by_name(item);

    (void) i;
    if (bit) {
        if (p->tunnels & bit) {
            return panda_asprintf("tunnels: %s given twice", item);
        }
        p->tunnels |= bit;
        return NULL;
    }
    if (strchr(item, ':')) {
        /* The wire body has no room for ports (panda/wire.h). */
        return panda_asprintf("tunnels: \"%s\": a tunnel is recognised by "
                              "its IANA port only (geneve %d, vxlan %d); "
                              "write the type alone", item,
                              PANDA_GENEVE_PORT, PANDA_VXLAN_PORT);
    }
    return panda_asprintf("tunnels: \"%s\" is not geneve or vxlan", item);
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

/* A keyword byte that the text shows as itself; any other is \xHH. */
static bool
keyword_plain(uint8_t c)
{
    return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
            || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'
            || c == '~');
}

static int
hex_digit(char c)
{
    return (c >= '0' && c <= '9' ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1);
}

/* Parses keyword text 's' (of 'n' chars) into 'r'. */
static char *
parse_keyword(const char *s, size_t n, struct panda_rule *r)
{
    size_t i = 0;

    r->len = 0;
    while (i < n) {
        uint8_t c = (uint8_t) s[i];

        if (r->len >= PANDA_MAX_KEYWORD) {
            return panda_asprintf("match: keyword longer than %d bytes",
                                  PANDA_MAX_KEYWORD);
        }
        if (c == '\\') {
            int hi = i + 3 < n && s[i + 1] == 'x' ? hex_digit(s[i + 2])
                                                       : -1;
            int lo = hi >= 0 ? hex_digit(s[i + 3]) : -1;

            if (lo < 0) {
                return panda_asprintf("match: bad escape in \"%.*s\" (write "
                                      "a byte as \\xHH)", (int) n, s);
            }
            c = (uint8_t) (hi << 4 | lo);
            i += 4;
        } else if (keyword_plain(c)) {
            i++;
        } else {
            return panda_asprintf("match: character '%c' in \"%.*s\" must "
                                  "be written \\x%02x", c, (int) n, s, c);
        }
        r->keyword[r->len++] = c;
    }
    if (!r->len) {
        return panda_asprintf("match: empty keyword");
    }
    return NULL;
}

char *
panda_rule_parse_keyword(const char *s, struct panda_rule *r)
{
    return parse_keyword(s, strlen(s), r);
}

/* Parses one rule "VALUE:LEVEL" of 'type' into 'r'. */
static char *
parse_rule(enum panda_rule_type type, const char *item, struct panda_rule *r)
{
    const char *name = panda_rule_type_name(type);
    const char *colon = strrchr(item, ':');
    uint64_t v;
    char *err;

    memset(r, 0, sizeof *r);
    r->type = type;
    if (!colon || colon == item) {
        return panda_asprintf("%s: \"%s\" is not <%s>:<level>", name, item,
                              type == PANDA_RULE_APP ? "dscp"
                              : type == PANDA_RULE_MATCH ? "keyword"
                              : "min_payload");
    }
    err = parse_u64(name, colon + 1, PANDA_MAX_LEVELS - 1, &v);
    if (err) {
        return err;
    }
    r->level = (uint8_t) v;
    if (type == PANDA_RULE_MATCH) {
        return parse_keyword(item, colon - item, r);
    } else {
        char *value = panda_asprintf("%.*s", (int) (colon - item), item);

        err = parse_u64(name, value, type == PANDA_RULE_APP
                        ? PANDA_MAX_DSCP : PANDA_MAX_PKT_SIZE, &v);
        free(value);
        if (type == PANDA_RULE_APP) {
            r->dscp = (uint8_t) v;
        } else {
            r->min_payload = (uint16_t) v;
        }
        return err;
    }
}

/* Appends the '/'-separated rules in 'value' to 'p'. */
static char *
parse_rules(struct panda_policy *p, enum panda_rule_type type, char *value)
{
    const char *name = panda_rule_type_name(type);
    char *save = NULL, *item;

    if (*value == '\0' || value[0] == '/' || value[strlen(value) - 1] == '/'
        || strstr(value, "//")) {
        return panda_asprintf("%s: empty item in \"%s\"", name, value);
    }
    for (item = strtok_r(value, "/", &save); item;
         item = strtok_r(NULL, "/", &save)) {
        char *err;

        if (p->n_rules >= PANDA_MAX_RULES) {
            return panda_asprintf("%s: more than %d rules in the policy",
                                  name, PANDA_MAX_RULES);
        }
        err = parse_rule(type, item, &p->rules[p->n_rules]);
        if (err) {
            return err;
        }
        p->n_rules++;
    }
    return NULL;
}

char *
panda_policy_parse(const char *s, struct panda_policy *p)
{
    char *copy = panda_asprintf("%s", s);
    char *save = NULL, *tok, *err = NULL;
    bool have_id = false, have_untracked = false, have_default = false;
    int n_dscp = -1, n_queues = -1, n_alpha = 0, n_levels = 0, n;
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
            int k;

            for (k = 0; k < PANDA_N_KINDS; k++) {
                if (!strcmp(value, kind_names[k])) {
                    break;
                }
            }
            if (k < PANDA_N_KINDS) {
                kind = (enum panda_kind) k;
            } else {
                err = panda_asprintf("kind: \"%s\" is not panda, pias, app, "
                                     "match, length or compose", value);
            }
        } else if (!strcmp(tok, "levels")) {
            err = parse_u64("levels", value, PANDA_MAX_LEVELS, &v);
            if (!err && !v) {
                err = panda_asprintf("levels: must be 1 to %d",
                                     PANDA_MAX_LEVELS);
            }
            n_levels = (int) v;
        } else if (!strcmp(tok, "default_level")) {
            err = parse_u64("default_level", value, PANDA_MAX_LEVELS - 1,
                            &v);
            tmp.default_level = (uint8_t) v;
            have_default = true;
        } else if (!strcmp(tok, "app")) {
            err = parse_rules(&tmp, PANDA_RULE_APP, value);
        } else if (!strcmp(tok, "match")) {
            err = parse_rules(&tmp, PANDA_RULE_MATCH, value);
        } else if (!strcmp(tok, "length")) {
            err = parse_rules(&tmp, PANDA_RULE_LENGTH, value);
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
        } else if (!strcmp(tok, "untracked_level")) {
            err = parse_u64("untracked_level", value, PANDA_MAX_LEVELS - 1,
                            &v);
            tmp.untracked_level = (uint8_t) v;
            have_untracked = true;
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
            err = parse_u64("idle_reset", value, PANDA_MAX_DURATION_MS, &v);
            tmp.idle_reset_ms = v;
        } else if (!strcmp(tok, "tunnels")) {
            tmp.tunnels = 0;
            err = for_each_item("tunnels", value, 8, parse_tunnel_item,
                                &tmp, &n);
            if (!err && !n) {
                err = panda_asprintf("tunnels: empty (geneve, vxlan or "
                                     "geneve/vxlan; omit the key for none)");
            }
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
    if (have_default && panda_kind_has_counter(kind)) {
        /* Refused even when 0, which the check cannot tell from unset. */
        return panda_asprintf("default_level: not allowed with kind=%s (%s)",
                              panda_policy_kind_name(kind),
                              kind == PANDA_KIND_COMPOSE
                              ? "Panda decides the packets that no rule "
                                "matches"
                              : "the counter decides every level");
    }
    if (!panda_kind_has_counter(kind)) {
        if (n_alpha) {
            return panda_asprintf("thresholds: not allowed with kind=%s (no "
                                  "counter; 'levels' gives K)",
                                  panda_policy_kind_name(kind));
        }
        if (!n_levels) {
            /* Enough levels for every level named: the rules' and the
             * default's. */
            n_levels = have_default ? tmp.default_level + 1 : 1;
            for (n = 0; n < tmp.n_rules; n++) {
                if (tmp.rules[n].level + 1 > n_levels) {
                    n_levels = tmp.rules[n].level + 1;
                }
            }
        }
        tmp.n_levels = (uint8_t) n_levels;
    } else if (n_levels) {
        return panda_asprintf("levels: not allowed with kind=%s (the "
                              "thresholds give K)",
                              panda_policy_kind_name(kind));
    } else {
        tmp.n_levels = (uint8_t) (n_alpha + 1);
    }
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
        if (!have_untracked) {
            tmp.untracked_level = defaults.untracked_level;
        }
        if (!have_default) {
            tmp.default_level = defaults.default_level;
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

/* A formatter writing into the 'size' bytes at 'buf' (an empty string so
 * far; 'buf' may be NULL to measure). */
static struct fmt
fmt_start(char *buf, size_t size)
{
    struct fmt f = { buf, buf ? size : 0, 0 };

    if (buf && size) {
        buf[0] = '\0';
    }
    return f;
}

int
panda_rule_format_value(const struct panda_rule *r, char *buf, size_t size)
{
    struct fmt f = fmt_start(buf, size);
    int j;

    switch (r->type) {
    case PANDA_RULE_APP:
        fmt_put(&f, "%d", r->dscp);
        break;
    case PANDA_RULE_MATCH:
        for (j = 0; j < r->len; j++) {
            if (keyword_plain(r->keyword[j])) {
                fmt_put(&f, "%c", r->keyword[j]);
            } else {
                fmt_put(&f, "\\x%02x", r->keyword[j]);
            }
        }
        break;
    case PANDA_RULE_LENGTH:
        fmt_put(&f, "%d", r->min_payload);
        break;
    }
    return f.len;
}

int
panda_policy_format_weight(uint16_t weight, char *buf, size_t size)
{
    struct fmt f = fmt_start(buf, size);

    fmt_put(&f, "%d", weight / 100);
    if (weight % 100) {
        fmt_put(&f, weight % 10 ? ".%02d" : ".%d",
                weight % 10 ? weight % 100 : weight % 100 / 10);
    }
    return f.len;
}

int
panda_policy_format(const struct panda_policy *p, char *buf, size_t size)
{
    struct fmt f = fmt_start(buf, size);
    int i;

    fmt_put(&f, "id=%" PRIu32, p->id);
    if (p->kind != PANDA_KIND_PANDA) {
        fmt_put(&f, ",kind=%s", panda_policy_kind_name(p->kind));
    }
    if (p->kind == PANDA_KIND_PANDA || p->kind == PANDA_KIND_COMPOSE) {
        fmt_put(&f, ",threshold=%" PRIu32, p->threshold);
    }
    for (i = 0; i < p->n_weights; i++) {
        const struct panda_weight *w = &p->weights[i];

        char weight[16];

        panda_policy_format_weight(w->weight, weight, sizeof weight);
        fmt_put(&f, "%s%" PRIu32 ":%s", i ? "/" : ",weights=", w->above,
                weight);
    }
    if (panda_kind_has_counter(p->kind)) {
        for (i = 0; i + 1 < p->n_levels; i++) {
            fmt_put(&f, "%s%" PRIu64, i ? "/" : ",thresholds=", p->alpha[i]);
        }
    } else {
        fmt_put(&f, ",levels=%d", p->n_levels);
    }
    for (i = 0; i < p->n_rules; i++) {
        const struct panda_rule *r = &p->rules[i];
        char value[PANDA_MAX_KEYWORD * 4 + 1];

        if (i && r->type == p->rules[i - 1].type) {
            fmt_put(&f, "/");
        } else {
            fmt_put(&f, ",%s=", panda_rule_type_name(r->type));
        }
        panda_rule_format_value(r, value, sizeof value);
        fmt_put(&f, "%s:%d", value, r->level);
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
    if (p->untracked_level + 1 != p->n_levels) {
        fmt_put(&f, ",untracked_level=%d", p->untracked_level);
    }
    if (p->default_level + 1 != p->n_levels && kind_rule_type(p->kind)) {
        fmt_put(&f, ",default_level=%d", p->default_level);
    }
    if (p->floor) {
        fmt_put(&f, ",floor=%" PRId64, p->floor);
    }
    if (p->idle_reset_ms) {
        fmt_put(&f, ",idle_reset=%" PRIu64, p->idle_reset_ms);
    }
    for (i = 0; i < (int) N_TUNNELS; i++) {
        if (p->tunnels & (1u << i)) {
            fmt_put(&f, "%s%s", p->tunnels & ((1u << i) - 1)
                                ? "/" : ",tunnels=", tunnel_names[i]);
        }
    }
    return f.len;
}

bool
panda_policy_equal(const struct panda_policy *a, const struct panda_policy *b)
{
    int i;

    if (a->id != b->id || a->kind != b->kind || a->threshold != b->threshold
        || a->n_weights != b->n_weights || a->n_levels != b->n_levels
        || a->ctl_level != b->ctl_level
        || a->untracked_level != b->untracked_level || a->floor != b->floor
        || a->idle_reset_ms != b->idle_reset_ms
        || a->default_level != b->default_level
        || a->n_rules != b->n_rules || a->tunnels != b->tunnels) {
        return false;
    }
    for (i = 0; i < a->n_rules; i++) {
        const struct panda_rule *ra = &a->rules[i], *rb = &b->rules[i];

        if (ra->type != rb->type || ra->level != rb->level
            || ra->dscp != rb->dscp || ra->len != rb->len
            || ra->min_payload != rb->min_payload
            || memcmp(ra->keyword, rb->keyword, ra->len)) {
            return false;
        }
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

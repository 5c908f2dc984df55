/* The JSON forms of a policy; see policy-json.h. */
#include <panda/policy-json.h>

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <panda/base.h>
#include <panda/time.h>

/* What a reader knows while it walks one object. */
struct reader {
    const char *src;            /* "" if none. */
    enum panda_json_form form;
    struct panda_policy p;
    char *err;                  /* First error, malloc()ed. */
    bool have_levels, have_dscp, have_queues, have_untracked, have_default;
};

struct json_key;
typedef void read_fn(struct reader *, const struct json_key *, json_t *);
typedef void write_fn(const struct panda_policy *, const struct json_key *,
                      enum panda_json_form, json_t *obj);

/* When the document form writes an optional key (the fields form writes
 * every key). */
enum doc_when {
    DOC_ALWAYS,
    DOC_NONZERO,                /* The value is not 0. */
    DOC_NOT_LOWEST,             /* The value is not K-1. */
    DOC_RULE_KINDS,             /* Kinds app, match, length. */
    DOC_RULE_KINDS_NOT_LOWEST,  /* Those, when the value is not K-1. */
    DOC_NEVER,
};

/* One key of the JSON forms.  A scalar field of struct panda_policy needs
 * only a line here (offset, size, range, when the document writes it);
 * the keys with structure (kind, lists, rules) have their own functions. */
struct json_key {
    const char *name;           /* The text syntax's key. */
    size_t offset, size;        /* Scalars: the field; size 0 = custom. */
    bool is_signed;
    int64_t lo;                 /* Scalars: the JSON range (the field's). */
    uint64_t hi;
    enum doc_when when;
    bool *(*have)(struct reader *);     /* Set when read, if nonnull. */
    read_fn *read;              /* Custom keys. */
    write_fn *write;
};

#define FIELD(NAME) offsetof(struct panda_policy, NAME), \
                    sizeof ((struct panda_policy *) 0)->NAME

/* ---- Errors. ---- */

static void PANDA_PRINTF(2, 3)
fail(struct reader *r, const char *fmt, ...)
{
    va_list args;
    char *msg;

    if (r->err) {
        return;
    }
    va_start(args, fmt);
    msg = panda_vasprintf(fmt, args);
    va_end(args);
    r->err = r->src[0] ? panda_asprintf("%s: %s", r->src, msg) : msg;
    if (r->err != msg) {
        free(msg);
    }
}

/* 'v' as JSON text, for messages (caller frees). */
static char *
dump(const json_t *v)
{
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));

    return s ? s : panda_asprintf("?");
}

/* Reads an integer of JSON path 'path' in [lo, hi]. */
static bool
get_int(struct reader *r, const char *path, const json_t *v, int64_t lo,
        uint64_t hi, int64_t *out)
{
    json_int_t x;

    if (!json_is_integer(v)) {
        char *s = dump(v);

        fail(r, "%s: expected an integer, got %s", path, s);
        free(s);
        return false;
    }
    x = json_integer_value(v);
    if (x < lo || (x >= 0 && (uint64_t) x > hi)) {
        fail(r, "%s: %" PRId64 " out of range (%" PRId64 "..%" PRIu64 ")",
             path, (int64_t) x, lo, hi);
        return false;
    }
    *out = x;
    return true;
}

/* The JSON path of element 'i' of 'key': "dscp[2]" in a document, the key
 * alone in the fields form (a binding's argument is the whole list). */
static char *
elem_path(const struct reader *r, const char *key, size_t i)
{
    return (r->form == PANDA_JSON_DOC ? panda_asprintf("%s[%zu]", key, i)
            : panda_asprintf("%s", key));
}

/* Checks that 'v' is a list of at most 'max' entries. */
static bool
get_list(struct reader *r, const char *key, const json_t *v, size_t max,
         const char *what)
{
    if (!json_is_array(v)) {
        char *s = dump(v);

        fail(r, "%s: expected a list of %s, got %s", key, what, s);
        free(s);
        return false;
    }
    if (json_array_size(v) > max) {
        fail(r, "%s: %zu values, at most %zu allowed", key,
             json_array_size(v), max);
        return false;
    }
    return true;
}

/* ---- Scalars. ---- */

static void
read_scalar(struct reader *r, const struct json_key *k, json_t *v)
{
    uint8_t *field = (uint8_t *) &r->p + k->offset;
    int64_t x;

    if (!get_int(r, k->name, v, k->lo, k->hi, &x)) {
        return;
    }
    switch (k->size) {
    case 1: *(uint8_t *) field = (uint8_t) x; break;
    case 2: *(uint16_t *) field = (uint16_t) x; break;
    case 4: *(uint32_t *) field = (uint32_t) x; break;
    default: *(int64_t *) field = x; break;     /* int64_t, panda_msec_t. */
    }
    if (k->have) {
        *k->have(r) = true;
    }
}

static int64_t
scalar_value(const struct panda_policy *p, const struct json_key *k)
{
    const uint8_t *field = (const uint8_t *) p + k->offset;

    switch (k->size) {
    case 1: return *(const uint8_t *) field;
    case 2: return *(const uint16_t *) field;
    case 4: return *(const uint32_t *) field;
    default: return *(const int64_t *) field;
    }
}

static bool
rule_kind(enum panda_kind kind)
{
    return kind == PANDA_KIND_APP || kind == PANDA_KIND_MATCH
           || kind == PANDA_KIND_LENGTH;
}

static void
write_scalar(const struct panda_policy *p, const struct json_key *k,
             enum panda_json_form form, json_t *obj)
{
    int64_t v = scalar_value(p, k);
    bool write = true;

    if (form == PANDA_JSON_DOC) {
        switch (k->when) {
        case DOC_ALWAYS: break;
        case DOC_NONZERO: write = v != 0; break;
        case DOC_NOT_LOWEST: write = v + 1 != p->n_levels; break;
        case DOC_RULE_KINDS: write = rule_kind(p->kind); break;
        case DOC_RULE_KINDS_NOT_LOWEST:
            write = rule_kind(p->kind) && v + 1 != p->n_levels;
            break;
        case DOC_NEVER: write = false; break;
        }
    }
    if (write) {
        json_object_set_new(obj, k->name, json_integer(v));
    }
}

/* ---- kind. ---- */

static void
read_kind(struct reader *r, const struct json_key *k, json_t *v)
{
    const char *s = json_string_value(v);
    int i;

    for (i = 0; s && i < PANDA_N_KINDS; i++) {
        if (!strcmp(s, panda_policy_kind_name(i))) {
            r->p.kind = i;
            return;
        }
    }
    s = dump(v);
    fail(r, "%s: %s is not panda, pias, app, match, length or compose",
         k->name, s);
    free((char *) s);
}

static void
write_kind(const struct panda_policy *p, const struct json_key *k,
           enum panda_json_form form, json_t *obj)
{
    (void) form;
    json_object_set_new(obj, k->name,
                        json_string(panda_policy_kind_name(p->kind)));
}

/* ---- tunnels. ---- */

/* A list of tunnel names, ["geneve", "vxlan"], in both forms: the names
 * are what an operator and a binding know, the bits are the library's
 * inside. */
static void
read_tunnels(struct reader *r, const struct json_key *k, json_t *v)
{
    size_t i;

    if (!get_list(r, k->name, v, 8, "tunnel names")) {
        return;
    }
    r->p.tunnels = 0;
    for (i = 0; i < json_array_size(v); i++) {
        const char *name = json_string_value(json_array_get(v, i));
        unsigned int bit = panda_policy_tunnel_by_name(name);

        if (!bit) {
            char *s = dump(json_array_get(v, i));

            fail(r, "%s: %s is not geneve or vxlan", k->name, s);
            free(s);
            return;
        }
        if (r->p.tunnels & bit) {
            fail(r, "%s: %s given twice", k->name, name);
            return;
        }
        r->p.tunnels |= bit;
    }
}

static void
write_tunnels(const struct panda_policy *p, const struct json_key *k,
              enum panda_json_form form, json_t *obj)
{
    json_t *list;
    unsigned int bit;

    if (form == PANDA_JSON_DOC && !p->tunnels) {
        return;
    }
    list = json_array();
    for (bit = 1; bit & PANDA_TUNNELS_ALL; bit <<= 1) {
        if (p->tunnels & bit) {
            json_array_append_new(
                list, json_string(panda_policy_tunnel_name(bit)));
        }
    }
    json_object_set_new(obj, k->name, list);
}

/* ---- weights. ---- */

/* A weight of the document form: a number with at most two decimals ->
 * hundredths.  The one place a float enters; it leaves as an integer. */
static bool
get_hundredths(struct reader *r, const char *path, const json_t *v,
               int64_t *out)
{
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);

        if (x < 0 || x > UINT16_MAX / PANDA_WEIGHT_ONE) {
            fail(r, "%s: %" PRId64 " out of range (0..%d)", path,
                 (int64_t) x * PANDA_WEIGHT_ONE, UINT16_MAX);
            return false;
        }
        *out = x * PANDA_WEIGHT_ONE;
        return true;
    } else if (json_is_real(v)) {
        double x = json_real_value(v) * PANDA_WEIGHT_ONE;
        double h = nearbyint(x);

        if (fabs(h - x) > 1e-6) {
            fail(r, "%s: %.15g has more than two decimals", path,
                 json_real_value(v));
            return false;
        }
        if (h < 0 || h > UINT16_MAX) {
            fail(r, "%s: %.0f out of range (0..%d)", path, h, UINT16_MAX);
            return false;
        }
        *out = (int64_t) h;
        return true;
    } else {
        char *s = dump(v);

        fail(r, "%s: expected a number, got %s", path, s);
        free(s);
        return false;
    }
}

static void
read_weights(struct reader *r, const struct json_key *k, json_t *v)
{
    size_t i;

    if (!json_is_array(v) || json_array_size(v) > PANDA_MAX_WEIGHTS) {
        fail(r, "%s: expected a list of at most %d [above, weight] pairs",
             k->name, PANDA_MAX_WEIGHTS);
        return;
    }
    for (i = 0; i < json_array_size(v); i++) {
        json_t *w = json_array_get(v, i);
        char *path = panda_asprintf("%s[%zu]", k->name, i);
        char *p0 = panda_asprintf("%s[0]", path);
        char *p1 = panda_asprintf("%s[1]", path);
        int64_t above, weight;

        if (!json_is_array(w) || json_array_size(w) != 2) {
            char *s = dump(w);

            fail(r, "%s: expected [above_bytes, weight], got %s", path, s);
            free(s);
        } else if (get_int(r, p0, json_array_get(w, 0), 0, UINT32_MAX,
                           &above)
                   && (r->form == PANDA_JSON_DOC
                       ? get_hundredths(r, p1, json_array_get(w, 1), &weight)
                       : get_int(r, p1, json_array_get(w, 1), 0, UINT16_MAX,
                                 &weight))) {
            r->p.weights[i].above = (uint32_t) above;
            r->p.weights[i].weight = (uint16_t) weight;
        }
        free(path);
        free(p0);
        free(p1);
        if (r->err) {
            return;
        }
    }
    r->p.n_weights = (uint8_t) json_array_size(v);
}

static void
write_weights(const struct panda_policy *p, const struct json_key *k,
              enum panda_json_form form, json_t *obj)
{
    json_t *list = json_array();
    int i;

    for (i = 0; i < p->n_weights; i++) {
        uint16_t w = p->weights[i].weight;
        json_t *weight = (form == PANDA_JSON_FIELDS ? json_integer(w)
                          : w % PANDA_WEIGHT_ONE
                          ? json_real(w / (double) PANDA_WEIGHT_ONE)
                          : json_integer(w / PANDA_WEIGHT_ONE));

        json_array_append_new(list, json_pack("[Io]",
                                              (json_int_t) p->weights[i].above,
                                              weight));
    }
    json_object_set_new(obj, k->name, list);
}

/* ---- thresholds, dscp, queues. ---- */

static void
read_thresholds(struct reader *r, const struct json_key *k, json_t *v)
{
    size_t i;

    if (!get_list(r, k->name, v, PANDA_MAX_LEVELS - 1, "integers")) {
        return;
    }
    for (i = 0; i < json_array_size(v); i++) {
        char *path = elem_path(r, k->name, i);
        int64_t x;

        if (get_int(r, path, json_array_get(v, i), 0, UINT64_MAX, &x)) {
            r->p.alpha[i] = (uint64_t) x;
        }
        free(path);
        if (r->err) {
            return;
        }
    }
    r->p.n_levels = (uint8_t) (json_array_size(v) + 1);
}

static void
write_thresholds(const struct panda_policy *p, const struct json_key *k,
                 enum panda_json_form form, json_t *obj)
{
    json_t *list = json_array();
    int i;

    (void) form;
    for (i = 0; panda_kind_has_counter(p->kind) && i + 1 < p->n_levels; i++) {
        json_array_append_new(list, json_integer((json_int_t) p->alpha[i]));
    }
    json_object_set_new(obj, k->name, list);
}

/* K as the keys read so far give it: thresholds + 1 for the counter
 * kinds; else 'levels', or enough for every level a rule or
 * default_level names (as panda_policy_parse() does). */
static int
levels_so_far(const struct reader *r)
{
    int k, i;

    if (panda_kind_has_counter(r->p.kind) || r->have_levels) {
        return r->p.n_levels;
    }
    k = r->have_default ? r->p.default_level + 1 : 1;
    for (i = 0; i < r->p.n_rules; i++) {
        if (r->p.rules[i].level + 1 > k) {
            k = r->p.rules[i].level + 1;
        }
    }
    return k;
}

/* dscp and queues: one value per level. */
static void
read_level_map(struct reader *r, const struct json_key *k, json_t *v)
{
    bool dscp = !strcmp(k->name, "dscp");
    uint8_t *map = dscp ? r->p.dscp : r->p.queue;
    int n_levels = levels_so_far(r);
    size_t i;

    if (!get_list(r, k->name, v, PANDA_MAX_LEVELS, "integers")) {
        return;
    }
    for (i = 0; i < json_array_size(v); i++) {
        char *path = elem_path(r, k->name, i);
        int64_t x;

        if (get_int(r, path, json_array_get(v, i), 0,
                    dscp ? PANDA_MAX_DSCP : UINT8_MAX, &x)) {
            map[i] = (uint8_t) x;
        }
        free(path);
        if (r->err) {
            return;
        }
    }
    if ((int) json_array_size(v) != n_levels) {
        if (panda_kind_has_counter(r->p.kind)) {
            fail(r, "%s: %zu values for %d levels (one per level: "
                 "thresholds has %d entries)", k->name, json_array_size(v),
                 n_levels, n_levels - 1);
        } else {
            fail(r, "%s: %zu values for %d levels (one per level)", k->name,
                 json_array_size(v), n_levels);
        }
        return;
    }
    *(dscp ? &r->have_dscp : &r->have_queues) = true;
}

static void
write_level_map(const struct panda_policy *p, const struct json_key *k,
                enum panda_json_form form, json_t *obj)
{
    const uint8_t *map = !strcmp(k->name, "dscp") ? p->dscp : p->queue;
    json_t *list = json_array();
    int i;

    (void) form;
    for (i = 0; i < p->n_levels; i++) {
        json_array_append_new(list, json_integer(map[i]));
    }
    json_object_set_new(obj, k->name, list);
}

/* ---- levels. ---- */

static void
read_levels(struct reader *r, const struct json_key *k, json_t *v)
{
    int64_t x;

    if (get_int(r, k->name, v, 0, UINT8_MAX, &x)) {
        if (panda_kind_has_counter(r->p.kind)) {
            /* Accepted when it says what the thresholds say (the fields
             * form always carries it). */
            if (x != r->p.n_levels) {
                fail(r, "levels: not allowed with kind=%s (the thresholds "
                     "give K)", panda_policy_kind_name(r->p.kind));
            }
            return;
        }
        if (x < 1 || x > PANDA_MAX_LEVELS) {
            fail(r, "levels: %" PRId64 " out of range (1..%d)", x,
                 PANDA_MAX_LEVELS);
            return;
        }
        r->p.n_levels = (uint8_t) x;
        r->have_levels = true;
    }
}

/* ---- rules. ---- */

static const enum panda_rule_type rule_types[] = {
    PANDA_RULE_APP, PANDA_RULE_MATCH, PANDA_RULE_LENGTH,
};
#define N_RULE_TYPES (sizeof rule_types / sizeof rule_types[0])

/* The value of a rule of 'type' at 'path' into 'rule'. */
static void
read_rule_value(struct reader *r, const char *path, const char *item,
                enum panda_rule_type type, json_t *v, struct panda_rule *rule)
{
    int64_t x;

    if (type == PANDA_RULE_MATCH && r->form == PANDA_JSON_DOC) {
        char *msg;

        if (!json_is_string(v)) {
            char *s = dump(v);

            fail(r, "%s: expected a keyword string, got %s", path, s);
            free(s);
            return;
        }
        msg = panda_rule_parse_keyword(json_string_value(v), rule);
        if (msg) {
            fail(r, "%s: %s", item, msg);
            free(msg);
        }
    } else if (type == PANDA_RULE_MATCH) {
        size_t i, n = json_is_array(v) ? json_array_size(v) : 0;

        if (!json_is_array(v)) {
            char *s = dump(v);

            fail(r, "%s: expected a list of bytes, got %s", path, s);
            free(s);
            return;
        }
        if (!n || n > PANDA_MAX_KEYWORD) {
            fail(r, "match: keyword of %zu bytes, must be 1 to %d", n,
                 PANDA_MAX_KEYWORD);
            return;
        }
        for (i = 0; i < n; i++) {
            if (!get_int(r, path, json_array_get(v, i), 0, UINT8_MAX, &x)) {
                return;
            }
            rule->keyword[i] = (uint8_t) x;
        }
        rule->len = (uint8_t) n;
    } else if (get_int(r, path, v, 0, type == PANDA_RULE_APP
                       ? (r->form == PANDA_JSON_DOC ? PANDA_MAX_DSCP
                          : UINT8_MAX)
                       : UINT16_MAX, &x)) {
        if (type == PANDA_RULE_APP) {
            rule->dscp = (uint8_t) x;
        } else {
            rule->min_payload = (uint16_t) x;
        }
    }
}

static enum panda_rule_type
rule_type_named(const char *name)
{
    size_t i;

    for (i = 0; name && i < N_RULE_TYPES; i++) {
        if (!strcmp(name, panda_rule_type_name(rule_types[i]))) {
            return rule_types[i];
        }
    }
    return 0;
}

/* "priority_rules": [{"app"|"match"|"length": VALUE, "level": L}].  (Not
 * "rules": in the controller's configuration that names its flow rules.) */
static void
read_doc_rules(struct reader *r, const struct json_key *k, json_t *v)
{
    size_t i;

    if (!json_is_array(v) || json_array_size(v) > PANDA_MAX_RULES) {
        fail(r, "%s: expected a list of at most %d rules", k->name,
             PANDA_MAX_RULES);
        return;
    }
    for (i = 0; i < json_array_size(v) && !r->err; i++) {
        json_t *item = json_array_get(v, i);
        struct panda_rule *rule = &r->p.rules[i];
        enum panda_rule_type type = 0;
        char *path = panda_asprintf("%s[%zu]", k->name, i);
        const char *key;
        json_t *value;
        int64_t level;

        if (json_is_object(item) && json_object_size(item) == 2
            && json_object_get(item, "level")) {
            json_object_foreach (item, key, value) {
                if (strcmp(key, "level")) {
                    type = rule_type_named(key);
                }
            }
        }
        if (!type) {
            char *s = dump(item);

            fail(r, "%s: expected {\"app\"|\"match\"|\"length\": value, "
                 "\"level\": level}, got %s", path, s);
            free(s);
        } else {
            const char *name = panda_rule_type_name(type);
            char *lpath = panda_asprintf("%s.level", path);
            char *vpath = panda_asprintf("%s.%s", path, name);

            memset(rule, 0, sizeof *rule);
            rule->type = type;
            if (get_int(r, lpath, json_object_get(item, "level"), 0,
                        PANDA_MAX_LEVELS - 1, &level)) {
                rule->level = (uint8_t) level;
                read_rule_value(r, vpath, path, type,
                                json_object_get(item, name), rule);
            }
            free(lpath);
            free(vpath);
        }
        free(path);
    }
    r->p.n_rules = (uint8_t) i;
}

/* The fields form's "rules": [[TYPE, VALUE, LEVEL]], a keyword as a list
 * of byte values. */
static void
read_field_rules(struct reader *r, const struct json_key *k, json_t *v)
{
    size_t i;

    if (!json_is_array(v) || json_array_size(v) > PANDA_MAX_RULES) {
        fail(r, "rules: %zu rules, at most %d",
             json_is_array(v) ? json_array_size(v) : 0, PANDA_MAX_RULES);
        return;
    }
    for (i = 0; i < json_array_size(v) && !r->err; i++) {
        json_t *item = json_array_get(v, i);
        struct panda_rule *rule = &r->p.rules[i];
        enum panda_rule_type type;
        int64_t level;

        if (!json_is_array(item) || json_array_size(item) != 3) {
            char *s = dump(item);

            fail(r, "%s: expected [type, value, level], got %s", k->name, s);
            free(s);
            break;
        }
        type = rule_type_named(json_string_value(json_array_get(item, 0)));
        if (!type) {
            char *s = dump(json_array_get(item, 0));

            fail(r, "rules: unknown rule type %s", s);
            free(s);
            break;
        }
        memset(rule, 0, sizeof *rule);
        rule->type = type;
        if (get_int(r, panda_rule_type_name(type), json_array_get(item, 2),
                    0, UINT8_MAX, &level)) {
            rule->level = (uint8_t) level;
            read_rule_value(r, panda_rule_type_name(type), NULL, type,
                            json_array_get(item, 1), rule);
        }
    }
    r->p.n_rules = (uint8_t) i;
}

static void
write_rules(const struct panda_policy *p, const struct json_key *k,
            enum panda_json_form form, json_t *obj)
{
    json_t *list = json_array();
    int i, j;

    if (form == PANDA_JSON_DOC && !p->n_rules) {
        json_decref(list);
        return;
    }
    for (i = 0; i < p->n_rules; i++) {
        const struct panda_rule *rule = &p->rules[i];
        const char *type = panda_rule_type_name(rule->type);
        json_t *value;

        if (rule->type == PANDA_RULE_MATCH && form == PANDA_JSON_DOC) {
            char text[PANDA_MAX_KEYWORD * 4 + 1];

            panda_rule_format_value(rule, text, sizeof text);
            value = json_string(text);
        } else if (rule->type == PANDA_RULE_MATCH) {
            value = json_array();
            for (j = 0; j < rule->len; j++) {
                json_array_append_new(value, json_integer(rule->keyword[j]));
            }
        } else {
            value = json_integer(rule->type == PANDA_RULE_APP
                                 ? rule->dscp : rule->min_payload);
        }
        json_array_append_new(list, form == PANDA_JSON_DOC
                              ? json_pack("{sosi}", type, value, "level",
                                          rule->level)
                              : json_pack("[soi]", type, value,
                                          rule->level));
    }
    json_object_set_new(obj, k->name, list);
}

static bool *
have_untracked(struct reader *r)
{
    return &r->have_untracked;
}

static bool *
have_default(struct reader *r)
{
    return &r->have_default;
}

/* The keys, in the order a reader takes them (kind before what its
 * defaults depend on; dscp and queues after everything that decides K)
 * and a writer writes them.  The rules have a key per form. */
static const struct json_key keys[] = {
    { "id", FIELD(id), false, 0, UINT32_MAX, DOC_ALWAYS, NULL, NULL, NULL },
    { "kind", 0, 0, false, 0, 0, DOC_ALWAYS, NULL, read_kind, write_kind },
    { "threshold", FIELD(threshold), false, 0, UINT32_MAX, DOC_ALWAYS,
      NULL, NULL, NULL },
    { "weights", 0, 0, false, 0, 0, DOC_ALWAYS, NULL, read_weights,
      write_weights },
    { "thresholds", 0, 0, false, 0, 0, DOC_ALWAYS, NULL, read_thresholds,
      write_thresholds },
    { "priority_rules", 0, 0, false, 0, 0, DOC_ALWAYS, NULL, read_doc_rules,
      write_rules },
    { "rules", 0, 0, false, 0, 0, DOC_NEVER, NULL, read_field_rules,
      write_rules },
    { "levels", 0, 0, false, 0, 0, DOC_RULE_KINDS, NULL, read_levels,
      NULL },
    { "default_level", FIELD(default_level), false, 0, UINT8_MAX,
      DOC_RULE_KINDS_NOT_LOWEST, have_default, NULL, NULL },
    { "dscp", 0, 0, false, 0, 0, DOC_ALWAYS, NULL, read_level_map,
      write_level_map },
    { "queues", 0, 0, false, 0, 0, DOC_ALWAYS, NULL, read_level_map,
      write_level_map },
    { "ctl_level", FIELD(ctl_level), false, 0, UINT8_MAX, DOC_NONZERO, NULL,
      NULL, NULL },
    { "untracked_level", FIELD(untracked_level), false, 0, UINT8_MAX,
      DOC_NOT_LOWEST, have_untracked, NULL, NULL },
    { "floor", FIELD(floor), true, INT64_MIN, INT64_MAX, DOC_NONZERO, NULL,
      NULL, NULL },
    { "idle_reset", FIELD(idle_reset_ms), false, 0, PANDA_MAX_DURATION_MS,
      DOC_NONZERO, NULL, NULL, NULL },
    { "tunnels", 0, 0, false, 0, 0, DOC_NONZERO, NULL, read_tunnels,
      write_tunnels },
};
#define N_KEYS (sizeof keys / sizeof keys[0])

/* The keys of 'form': the rules go by "priority_rules" in a document and by
 * "rules" in the fields form. */
static bool
key_in_form(const struct json_key *k, enum panda_json_form form)
{
    return strcmp(k->name, form == PANDA_JSON_DOC ? "rules"
                                                  : "priority_rules");
}

/* Keys that panda-model writes beside the policy: read, not checked. */
static const char *const doc_info_keys[] = {
    "version", "action", "model", "inputs", "flt", "fht", "comment",
    "controller",
};

static bool
known_key(const char *name, enum panda_json_form form)
{
    size_t i;

    for (i = 0; i < N_KEYS; i++) {
        if (key_in_form(&keys[i], form) && !strcmp(keys[i].name, name)) {
            return true;
        }
    }
    for (i = 0; form == PANDA_JSON_DOC
                && i < sizeof doc_info_keys / sizeof *doc_info_keys; i++) {
        if (!strcmp(doc_info_keys[i], name)) {
            return true;
        }
    }
    return false;
}

static int
compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* Refuses keys that neither the policy nor panda-model has, naming them
 * and the policy's keys. */
static void
check_keys(struct reader *r, json_t *obj)
{
    const char *names[N_KEYS], *key;
    char *unknown = NULL, *valid = NULL;
    size_t n = 0, n_unknown = 0, i;
    const char **bad = panda_xcalloc(json_object_size(obj) + 1,
                                     sizeof *bad);
    json_t *v;

    json_object_foreach (obj, key, v) {
        if (!known_key(key, r->form)) {
            bad[n_unknown++] = key;
        }
    }
    if (n_unknown) {
        qsort(bad, n_unknown, sizeof *bad, compare_strings);
        for (i = 0; i < n_unknown; i++) {
            panda_append(&unknown, ", ", "%s", bad[i]);
        }
        for (i = 0; i < N_KEYS; i++) {
            if (key_in_form(&keys[i], r->form)) {
                names[n++] = keys[i].name;
            }
        }
        qsort(names, n, sizeof *names, compare_strings);
        for (i = 0; i < n; i++) {
            panda_append(&valid, ", ", "%s", names[i]);
        }
        fail(r, "unknown key%s %s (policy keys: %s)",
             n_unknown > 1 ? "s" : "", unknown, valid);
        free(unknown);
        free(valid);
    }
    free(bad);
}

/* After the keys: K, the defaults of what was omitted, and the check. */
static void
finish(struct reader *r)
{
    struct panda_policy defaults;
    char msg[PANDA_POLICY_MSG_SIZE];

    r->p.n_levels = (uint8_t) levels_so_far(r);
    defaults = r->p;
    panda_policy_default_maps(&defaults);
    if (!r->have_dscp) {
        memcpy(r->p.dscp, defaults.dscp, sizeof r->p.dscp);
    }
    if (!r->have_queues) {
        memcpy(r->p.queue, defaults.queue, sizeof r->p.queue);
    }
    if (!r->have_untracked) {
        r->p.untracked_level = defaults.untracked_level;
    }
    if (!r->have_default) {
        r->p.default_level = defaults.default_level;
    }
    if (!panda_policy_check(&r->p, msg)) {
        if (r->form == PANDA_JSON_DOC) {
            r->err = panda_asprintf("%s: policy id %" PRIu32 ": %s",
                                    r->src[0] ? r->src : "policy", r->p.id,
                                    msg);
        } else {
            fail(r, "%s", msg);
        }
    }
}

char *
panda_policy_json_read(const char *json, const char *src,
                       enum panda_json_form form, struct panda_policy *p,
                       char **warning)
{
    struct reader r;
    json_error_t jerr;
    json_t *obj, *v;
    size_t i;

    memset(&r, 0, sizeof r);
    r.src = src ? src : "";
    r.form = form;
    panda_policy_init(&r.p, PANDA_KIND_PANDA);
    if (warning) {
        *warning = NULL;
    }

    obj = json_loads(json, JSON_DECODE_ANY, &jerr);
    if (!obj) {
        fail(&r, "line %d, column %d: %s", jerr.line, jerr.column,
             jerr.text);
        return r.err;
    }
    if (!json_is_object(obj)) {
        json_decref(obj);
        return panda_asprintf("%s: a policy must be a JSON object",
                              r.src[0] ? r.src : "policy");
    }
    v = json_object_get(obj, "version");
    if (form == PANDA_JSON_DOC && v
        && !(json_is_integer(v) && json_integer_value(v) == 1)) {
        char *s = dump(v);

        fail(&r, "version: unsupported version %s (expected 1)", s);
        free(s);
    }
    if (!json_object_get(obj, "id")) {
        fail(&r, "id: missing (the policy id is required)");
    }
    if (!r.err) {
        check_keys(&r, obj);
    }
    for (i = 0; i < N_KEYS && !r.err; i++) {
        const struct json_key *k = &keys[i];

        v = json_object_get(obj, k->name);
        if (v && key_in_form(k, form)) {
            (k->read ? k->read : read_scalar)(&r, k, v);
        }
    }
    if (!r.err) {
        finish(&r);
    }
    v = json_object_get(obj, "action");
    if (!r.err && form == PANDA_JSON_DOC && warning && v) {
        char text[PANDA_POLICY_TEXT_MAX];

        panda_policy_format(&r.p, text, sizeof text);
        if (!json_is_string(v) || strcmp(json_string_value(v), text)) {
            char *s = json_is_string(v) ? panda_asprintf(
                "%s", json_string_value(v)) : dump(v);

            *warning = panda_asprintf("%s%saction: '%s' differs from the "
                                      "structured fields (%s); the "
                                      "structured fields are used", r.src,
                                      r.src[0] ? ": " : "", s, text);
            free(s);
        }
    }
    json_decref(obj);
    if (!r.err) {
        *p = r.p;
    }
    return r.err;
}

char *
panda_policy_json_write(const struct panda_policy *p,
                        enum panda_json_form form)
{
    json_t *obj = json_object();
    char *s, *out;
    size_t i;

    if (form == PANDA_JSON_DOC) {
        json_object_set_new(obj, "version", json_integer(1));
    }
    for (i = 0; i < N_KEYS; i++) {
        const struct json_key *k = &keys[i];

        if (!key_in_form(k, form)) {
            continue;
        }
        if (k->write) {
            k->write(p, k, form, obj);
        } else if (k->size) {
            write_scalar(p, k, form, obj);
        } else if (form == PANDA_JSON_FIELDS || rule_kind(p->kind)) {
            json_object_set_new(obj, k->name, json_integer(p->n_levels));
        }
    }
    if (form == PANDA_JSON_DOC) {
        char text[PANDA_POLICY_TEXT_MAX];

        panda_policy_format(p, text, sizeof text);
        json_object_set_new(obj, "action", json_string(text));
    }
    s = json_dumps(obj, JSON_REAL_PRECISION(15));
    json_decref(obj);
    /* Copied so that the caller frees it with free() whichever allocator
     * jansson was built with. */
    out = panda_asprintf("%s", s ? s : "{}");
    free(s);
    return out;
}

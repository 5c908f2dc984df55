/* Classifiers; see classifier.h. */
#include <panda/classifier.h>

#include <string.h>

_Static_assert(sizeof(union panda_cls_state) == PANDA_CLS_STATE_MAX,
               "classifier state is not one cache line");

static bool
rule_matches(const struct panda_rule *r, const struct panda_pkt *pkt)
{
    switch (r->type) {
    case PANDA_RULE_APP:
        return pkt->dscp == r->dscp;
    case PANDA_RULE_MATCH:
        return pkt->data_len >= r->len
               && !memcmp(pkt->data, r->keyword, r->len);
    case PANDA_RULE_LENGTH:
        return pkt->payload >= r->min_payload;
    }
    return false;
}

int
panda_cls_rules(const struct panda_policy *p, const struct panda_pkt *pkt)
{
    int i;

    for (i = 0; i < p->n_rules; i++) {
        if (rule_matches(&p->rules[i], pkt)) {
            return p->rules[i].level;
        }
    }
    return -1;
}

/* Kinds panda, pias and compose. */
static uint8_t
classify_counter(const struct panda_classifier *cls, void *state_,
                 const struct panda_pkt *pkt)
{
    const struct panda_policy *p = cls->policy;
    union panda_cls_state *state = state_;
    int rule = p->n_rules ? panda_cls_rules(p, pkt) : -1;
    uint8_t level;

    /* The counter sees every packet, matched by a rule or not. */
    level = pkt->proto == 6 ? panda_cls_counter(p, &state->counter, pkt)
                            : p->untracked_level;
    return rule >= 0 ? (uint8_t) rule : level;
}

/* Kinds app, match and length. */
static uint8_t
classify_rules(const struct panda_classifier *cls, void *state __attribute__((unused)),
               const struct panda_pkt *pkt)
{
    return panda_cls_rule_level(cls->policy, pkt);
}

void
panda_cls_init(struct panda_classifier *cls, const struct panda_policy *p)
{
    bool counter = panda_kind_has_counter(p->kind);

    memset(cls, 0, sizeof *cls);
    cls->name = panda_policy_kind_name(p->kind);
    cls->state_size = counter ? sizeof(int64_t) : 0;
    cls->n_levels = p->n_levels;
    cls->classify = counter ? classify_counter : classify_rules;
    cls->policy = p;
}

/* Classifiers; see classifier.h. */
#include <panda/classifier.h>

#include <string.h>

_Static_assert(sizeof(union panda_cls_state) == PANDA_CLS_STATE_MAX,
               "classifier state is not one cache line");

/* Every built-in: the policy's level (panda_cls_level()), with the counter
 * of the state for the counter kinds and no state for the rule kinds. */
static uint8_t
classify_builtin(const struct panda_classifier *cls, void *state_,
                 const struct panda_pkt *pkt)
{
    union panda_cls_state *state = state_;

    return panda_cls_level(cls->policy,
                           cls->state_size ? &state->counter : NULL, pkt);
}

void
panda_cls_init(struct panda_classifier *cls, const struct panda_policy *p)
{
    bool counter = panda_kind_has_counter(p->kind);

    memset(cls, 0, sizeof *cls);
    cls->name = panda_policy_kind_name(p->kind);
    cls->state_size = counter ? sizeof(int64_t) : 0;
    cls->n_levels = p->n_levels;
    cls->classify = classify_builtin;
    cls->policy = p;
}

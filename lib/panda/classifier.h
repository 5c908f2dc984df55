/*
 * Classifiers: what decides the priority level of a packet.  Plain C, no
 * OVS headers.
 *
 * A classifier (ADPS's "pri_extraction" callback, issue 17) is a function
 * from (per-connection private state, packet metadata, the first bytes of
 * the payload) to a level, with at most PANDA_CLS_STATE_MAX bytes of state
 * per connection: one cache line, which its host (the datapath's connection
 * table, the server event loop in load_generator/) keeps next to the
 * connection and zeroes when the connection is new.  The state is the
 * classifier's memory across packets and its channel to the application
 * (ADPS's socket access to the private area).
 *
 * Built-ins, one per policy kind (panda/policy.h): panda and pias (state:
 * the 8-byte counter), app, match and length (no state: rules on the
 * packet alone) and compose (the rules, then Panda; state: the counter).
 * panda_cls_init() makes the classifier of a policy; hosts may also define
 * their own (the event loop takes any struct panda_classifier).
 *
 * The datapath does not call through the function pointer: its connection
 * table (panda/conn-table.h) calls the inline pieces below directly, so
 * that Panda and PIAS cost what they cost before the interface existed
 * (a switch on the kind that always goes one way; bench/ shows it).  The
 * table keeps 8 bytes of state per connection (the counter), which is what
 * every built-in needs; it keeps IPv4 entries at 32 bytes (two per cache
 * line).  A classifier with more state runs in hosts that give it the full
 * line (the event loop).
 */
#ifndef PANDA_CLASSIFIER_H
#define PANDA_CLASSIFIER_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <panda/packet.h>
#include <panda/policy.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PANDA_CLS_STATE_MAX 64

/* The per-connection private state that a host keeps: one cache line,
 * zeroed for a new connection. */
union panda_cls_state {
    int64_t counter;                    /* The built-ins' counter. */
    uint8_t bytes[PANDA_CLS_STATE_MAX];
} __attribute__((aligned(PANDA_CLS_STATE_MAX)));

struct panda_classifier {
    const char *name;
    size_t state_size;      /* Bytes of state used, <= PANDA_CLS_STATE_MAX. */
    uint8_t n_levels;       /* Levels returned are 0..n_levels-1. */

    /* Returns the level of 'pkt' for the connection whose state is 'state'
     * ('state_size' bytes, zero before the connection's first packet),
     * updating the state.  Must not fail or allocate: called per packet. */
    uint8_t (*classify)(const struct panda_classifier *, void *state,
                        const struct panda_pkt *pkt);

    const struct panda_policy *policy;  /* Built-ins: their policy. */
    void *aux;                          /* Host-defined classifiers. */
};

/* Makes 'cls' the built-in classifier of 'policy' (valid; it must outlive
 * 'cls').  Its state is a union panda_cls_state: the counter (Panda, PIAS,
 * compose) or nothing (app, match, length).  It does not apply the
 * policy's idle_reset: that needs the time of the previous packet, which
 * its host keeps (the connection table does; an event loop's connection
 * ends when its socket does). */
void panda_cls_init(struct panda_classifier *cls,
                    const struct panda_policy *policy);

/* Classifies 'pkt' with 'cls' and 'state'. */
static inline uint8_t
panda_cls_classify(const struct panda_classifier *cls, void *state,
                   const struct panda_pkt *pkt)
{
    return cls->classify(cls, state, pkt);
}

/* The level of the first rule of 'p' that 'pkt' matches, or -1 if none
 * does (or 'p' has no rules).  Rules look at the packet alone: the DSCP it
 * arrived with (app), its first payload bytes (match), its payload length
 * (length). */
int panda_cls_rules(const struct panda_policy *p, const struct panda_pkt *pkt);

/* The level of 'pkt' under a rule kind (app, match, length): the first
 * matching rule's, else p->default_level. */
static inline uint8_t
panda_cls_rule_level(const struct panda_policy *p, const struct panda_pkt *pkt)
{
    int level = panda_cls_rules(p, pkt);

    return level >= 0 ? (uint8_t) level : p->default_level;
}

#define PANDA_TCP_CTL (PANDA_TCP_SYN | PANDA_TCP_FIN | PANDA_TCP_RST)

/* The counter classifiers (Panda, PIAS; compose's fallback) on a TCP
 * packet of a tracked connection: updates '*counter' by the payload
 * (Algorithm 2) and returns the level.  A bare SYN, FIN or RST (no
 * payload) takes the control level and changes nothing. */
static inline uint8_t
panda_cls_counter(const struct panda_policy *p, int64_t *counter,
                  const struct panda_pkt *pkt)
{
    if (pkt->payload) {
        *counter = panda_policy_update(p, *counter, pkt->payload);
    }
    return pkt->tcp_flags & PANDA_TCP_CTL && !pkt->payload
           ? p->ctl_level : panda_policy_level(p, *counter);
}

#ifdef __cplusplus
}
#endif

#endif /* panda/classifier.h */

/*
 * Classifiers: what decides the priority level of a packet.  Plain C, no
 * OVS headers.
 *
 * One function decides: panda_cls_level() takes a policy, the counter
 * state of the packet's connection (or none) and the facts of the packet
 * (struct panda_pkt) and returns the level.  Every path calls it: the
 * connection table (panda/conn-table.h: the OVS datapath's panda action,
 * which also gets its verdict for packets it has no table for from there,
 * and the ns-3 simulator), the classifier interface below (the load
 * generator's event loop), the datapath's ingress priority.  The level's
 * DSCP and queue are the policy's tables, read by panda_table_classify().
 *
 * BPF.  The per-packet core (the inline functions of this header and the
 * ones of panda/policy.h they call: the rules, Algorithm 2, the level of a
 * counter) is written to compile for BPF as well (clang -target bpf): static
 * inline functions, fixed-width integers, no libc call (keywords are
 * compared by a bounded loop, not memcmp()), no floating point, no
 * allocation, every loop bounded by a constant (PANDA_MAX_RULES,
 * PANDA_MAX_KEYWORD, PANDA_MAX_WEIGHTS, PANDA_MAX_LEVELS) as the verifier
 * wants.  So a tc eBPF classifier can include this header and decide
 * levels exactly as the datapath does (built with -ffreestanding: clang's
 * own stdint.h and stdbool.h); tests/build/test_bpf_header.py compiles it
 * for BPF.  Whatever is added to the per-packet path must keep to this.
 *
 * The classifier interface (ADPS's "pri_extraction" callback) is a
 * function from (per-connection private state, packet metadata, the first
 * bytes of the payload) to a level, with at most PANDA_CLS_STATE_MAX bytes
 * of state per connection: one cache line, which its host (the server
 * event loop in load_generator/) keeps next to the connection and zeroes
 * when the connection is new.  The state is the classifier's memory across
 * packets and its channel to the application (ADPS's socket access to the
 * private area).  The built-ins, one per policy kind (panda/policy.h),
 * call panda_cls_level(): panda, pias and compose keep the 8-byte counter,
 * app, match and length no state.  panda_cls_init() makes the classifier of
 * a policy; hosts may also define their own (the event loop takes any
 * struct panda_classifier).
 *
 * The connection table calls panda_cls_level() directly, not through the
 * function pointer, so that a counter kind costs what it cost before the
 * interface existed.  It keeps the counter of each connection (35 bits of
 * its state word), which is what every built-in needs; it keeps IPv4
 * entries at 24 bytes.  A classifier with more state runs in hosts that
 * give it the full line (the event loop).
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

#define PANDA_TCP_CTL (PANDA_TCP_SYN | PANDA_TCP_FIN | PANDA_TCP_RST)
#define PANDA_IPPROTO_TCP 6

/* The most header bytes (panda_pkt's 'hdr_len') that a TCP packet carries
 * as headers alone: IPv4's largest header (60) and TCP's (60) fit, and so
 * do IPv6's 40 and TCP's 60 with 28 bytes of extension headers.  A packet
 * with more counts them all as payload: a sender cannot make a bulk-sized
 * packet pass for a bare SYN, FIN, RST or ACK by moving its bytes into
 * options or extension headers. */
#define PANDA_MAX_HDR_LEN 128

/* The bytes of TCP packet 'pkt' that its connection's counter counts: its
 * payload, and its headers if they are longer than PANDA_MAX_HDR_LEN.  0
 * for a bare SYN, FIN, RST or ACK. */
PANDA_INLINE uint32_t
panda_cls_counted_bytes(const struct panda_pkt *pkt)
{
    return pkt->payload
           + (pkt->hdr_len > PANDA_MAX_HDR_LEN ? pkt->hdr_len : 0);
}

/* True if the 'n' bytes at 'a' and 'b' are equal; 'n' <= PANDA_MAX_KEYWORD
 * (a rule's keyword).  A loop rather than memcmp(), for BPF. */
PANDA_INLINE bool
panda_cls_bytes_equal(const uint8_t *a, const uint8_t *b, unsigned int n)
{
    unsigned int i;

    for (i = 0; i < PANDA_MAX_KEYWORD && i < n; i++) {
        if (a[i] != b[i]) {
            return false;
        }
    }
    return true;
}

/* True if 'pkt' matches rule 'r': the DSCP it arrived with (app), its
 * first payload bytes (match), its payload length (length). */
PANDA_INLINE bool
panda_cls_rule_matches(const struct panda_rule *r,
                       const struct panda_pkt *pkt)
{
    switch (r->type) {
    case PANDA_RULE_APP:
        return pkt->dscp == r->dscp;
    case PANDA_RULE_MATCH:
        return pkt->data_len >= r->len
               && panda_cls_bytes_equal(pkt->data, r->keyword, r->len);
    case PANDA_RULE_LENGTH:
        return pkt->payload >= r->min_payload;
    }
    return false;
}

/* The level of the first rule of 'p' that 'pkt' matches, or -1 if none
 * does (or 'p' has no rules).  Rules look at the packet alone. */
PANDA_INLINE int
panda_cls_rules(const struct panda_policy *p, const struct panda_pkt *pkt)
{
    int i;

    for (i = 0; i < PANDA_MAX_RULES && i < p->n_rules; i++) {
        if (panda_cls_rule_matches(&p->rules[i], pkt)) {
            return p->rules[i].level;
        }
    }
    return -1;
}

/* The level of 'pkt' under policy 'p' (valid): the one decision.
 *
 * 'counter' is the counter of the packet's connection, which this updates
 * (Algorithm 2, or bytes sent for PIAS), or NULL if the packet cannot be
 * tracked: its host has no state for it (no room, no memory, no table).
 * A connection that has no state yet and gets none (a TCP packet without
 * payload) is classified with a counter of 0, which is what state created
 * for it would give.  The host keeps the state: it zeroes it for a new
 * connection and applies the policy's idle_reset (that needs the time of
 * the previous packet).
 *
 *   - Rule kinds (app, match, length): the first matching rule's level,
 *     else p->default_level; 'counter' is not used.
 *   - Counter kinds (panda, pias, compose): a TCP packet with a counter
 *     updates it by its payload and takes the level of the counter, or,
 *     if it is a bare SYN, FIN or RST (no payload), p->ctl_level.
 *     Headers longer than PANDA_MAX_HDR_LEN count as payload, so a bare
 *     control packet that long is not bare: its size on the wire decides
 *     its level as it would a data segment's.  A packet that is not TCP
 *     (or a later fragment) takes p->untracked_level.
 *   - A TCP packet without a counter ('counter' NULL: the host's table
 *     refused its connection because it is full of active ones, or has no
 *     memory) is judged by its own size, Panda's signal: a bare packet as
 *     with a counter of 0; a payload below T (an FLT packet, panda and
 *     compose) at the level a new connection's first packet gets (0); any
 *     other payload, and every payload under pias (whose signal, the bytes
 *     sent, needs the counter), at p->untracked_level.  So a full table
 *     costs a newcomer's request/response traffic nothing, and whoever
 *     filled it gains nothing: an FLT packet gets level 0 with or without
 *     a counter, and an FHT packet without one gets the untracked level
 *     (by default the lowest), where no bulk transfer can stay on top.
 *   - Compose: a packet that matches a rule takes the rule's level, and
 *     its counter is updated all the same, so that a connection cannot
 *     shed its history by matching a rule. */
PANDA_INLINE uint8_t
panda_cls_level(const struct panda_policy *p, int64_t *counter,
                const struct panda_pkt *pkt)
{
    uint8_t level;
    int rule;

    if (!panda_kind_has_counter(p->kind)) {
        rule = panda_cls_rules(p, pkt);
        return rule >= 0 ? (uint8_t) rule : p->default_level;
    }
    if (pkt->proto != PANDA_IPPROTO_TCP) {
        level = p->untracked_level;
    } else {
        uint32_t bytes = panda_cls_counted_bytes(pkt);

        if (!bytes) {
            level = pkt->tcp_flags & PANDA_TCP_CTL ? p->ctl_level
                    : counter ? panda_policy_level(p, *counter) : 0;
        } else if (counter) {
            *counter = panda_policy_update(p, *counter, bytes);
            level = panda_policy_level(p, *counter);
        } else if (p->kind != PANDA_KIND_PIAS && bytes < p->threshold) {
            /* No counter (the table is full, or has no memory): an FLT
             * packet takes the level it would take as a new connection's
             * first packet. */
            level = panda_policy_level(p, panda_policy_update(p, 0, bytes));
        } else {
            level = p->untracked_level;
        }
    }
    /* Rules look at the packet alone, so a compose policy's may come after
     * the counter's update; a counter kind without rules (the common
     * policy) then returns the counter's level without a merge. */
    if (p->n_rules) {
        rule = panda_cls_rules(p, pkt);
        if (rule >= 0) {
            level = (uint8_t) rule;
        }
    }
    return level;
}

#ifdef __cplusplus
}
#endif

#endif /* panda/classifier.h */

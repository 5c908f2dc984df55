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
 *
 * Kinds.  A policy names one classifier (lib/panda/classifier.h):
 *   panda, pias    counter classifiers: the connection's history (Algorithm
 *                  2, or bytes sent) decides the level;
 *   app, match,    rule classifiers (ADPS): a list of rules of one
 *   length         type decides from the packet alone: the DSCP the
 *                  application wrote (app), a keyword at the start of the
 *                  payload (match), the payload length (length); a packet no
 *                  rule matches takes 'default_level';
 *   compose        the rules of any types, in the order written, first match
 *                  wins; a packet none matches is classified by Panda (whose
 *                  counter every packet updates, matched or not, so that a
 *                  connection cannot shed its history by matching a rule).
 */
#ifndef PANDA_POLICY_H
#define PANDA_POLICY_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <panda/time.h>

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
    PANDA_KIND_APP,     /* Rules on the DSCP the application wrote. */
    PANDA_KIND_MATCH,   /* Rules on the first payload bytes. */
    PANDA_KIND_LENGTH,  /* Rules on the payload length. */
    PANDA_KIND_COMPOSE, /* Rules of any type, else Panda. */
};
#define PANDA_N_KINDS 6

/* True for the kinds that keep a per-connection counter.  (One test of a
 * bit: it is on the per-packet path.) */
static inline bool
panda_kind_has_counter(enum panda_kind kind)
{
    return ((1u << PANDA_KIND_PANDA | 1u << PANDA_KIND_PIAS
             | 1u << PANDA_KIND_COMPOSE) >> kind) & 1;
}

/* Rules (kinds app, match, length, compose).  At most PANDA_MAX_RULES per
 * policy, keywords at most PANDA_MAX_KEYWORD bytes: the datapath looks at
 * the first PANDA_MAX_KEYWORD bytes of a packet's payload, which is all a
 * request line or a protocol header needs and keeps the wire body small
 * (panda/wire.h). */
#define PANDA_MAX_RULES 16
#define PANDA_MAX_KEYWORD 32

enum panda_rule_type {
    PANDA_RULE_APP = 1,     /* The packet's DSCP is 'dscp'.  Text: app=D:L */
    PANDA_RULE_MATCH = 2,   /* The payload starts with 'keyword'.
                             * Text: match=KEYWORD:L */
    PANDA_RULE_LENGTH = 3,  /* The payload has at least 'min_payload'
                             * bytes.  Text: length=N:L */
};

struct panda_rule {
    uint8_t type;               /* enum panda_rule_type. */
    uint8_t level;              /* Level of a packet the rule matches. */
    uint8_t dscp;               /* APP: 0..63. */
    uint8_t len;                /* MATCH: bytes in 'keyword', 1.. */
    uint16_t min_payload;       /* LENGTH: 1..65535. */
    uint8_t keyword[PANDA_MAX_KEYWORD];     /* MATCH: raw bytes. */
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

    /* Level of a bare SYN, FIN or RST (no payload; default 0, the top):
     * handshakes and teardowns are small and latency-critical, and a bare
     * one changes no counter. */
    uint8_t ctl_level;

    /* Level of the packets the connection table cannot track: not TCP
     * (UDP, ICMP, ...), later IP fragments (no TCP header), and the FHT
     * packets of a TCP connection the table has no room or memory for
     * (its FLT packets take level 0: classifier.h).  Default K-1, the
     * lowest: a packet whose history is unknown earns no priority (bulk UDP
     * must not ride on top).  Operators who want DNS or QUIC higher give it
     * its own policy or flow. */
    uint8_t untracked_level;

    /* Lower bound of the counter (<= 0).  Default 0: a flow cannot bank
     * credit by sending small packets and later send bulk data at the top
     * level.  See the README ("Counter floor") for the reasoning. */
    int64_t floor;

    /* If nonzero, a connection idle for longer than this many milliseconds
     * starts again from counter 0 (PIAS message detection).  Default 0; at
     * most PANDA_MAX_DURATION_MS (the wire body carries 32 bits). */
    panda_msec_t idle_reset_ms;

    /* Rule kinds only: the level of a packet that no rule matches (default
     * K-1, the lowest).  0 for the other kinds. */
    uint8_t default_level;

    /* Kinds app, match, length (rules of that type only) and compose. */
    uint8_t n_rules;
    struct panda_rule rules[PANDA_MAX_RULES];

    /* The tunnels whose packets are classified by the connection inside
     * them (a set of enum panda_tunnel bits; default none).  A UDP
     * datagram to such a tunnel's port, with a valid tunnel header and an
     * IP frame inside, is classified by the inner connection and marked in
     * both IP headers; any other datagram, to these ports too, is UDP (the
     * untracked level).  A declaration, not a guess from the port: anyone
     * can send UDP to port 4789 with a made-up VXLAN header and the inner
     * tuple of a small TCP connection, so only the operator, who knows
     * which packets of a flow are this host's own tunnels (docs/ovn.md),
     * turns the inner view on.  Last in the struct so that the layout
     * before it stays the one the BPF program was written against. */
    uint8_t tunnels;
};

/* Tunnels that a policy can declare ('tunnels').  Each is recognised by
 * the IANA destination port of the outer UDP header and a valid header
 * announcing Ethernet; a tunnel port configured with another dst_port is
 * not looked into (the wire body has no room for ports: panda/wire.h). */
enum panda_tunnel {
    PANDA_TUNNEL_GENEVE = 1 << 0,   /* UDP port 6081.  Text: geneve */
    PANDA_TUNNEL_VXLAN = 1 << 1,    /* UDP port 4789.  Text: vxlan */
};
#define PANDA_TUNNELS_ALL (PANDA_TUNNEL_GENEVE | PANDA_TUNNEL_VXLAN)
#define PANDA_GENEVE_PORT 6081
#define PANDA_VXLAN_PORT 4789

/* Fills 'p' with the defaults for 'kind': K = 1 level (no thresholds),
 * T = 0, DSCP of level i = i + 1 (the thesis writes the priority number into
 * DSCP), queue of level i = i, control level 0, untracked level K-1, floor
 * 0, no idle reset, no tunnels. */
void panda_policy_init(struct panda_policy *p, enum panda_kind kind);

/* Sets what defaults to a function of K, the per-level DSCP and queue maps
 * and the untracked level, to the defaults for p->n_levels. */
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
 *   id=2,kind=match,match=get\x20:0/set\x20:2,levels=3
 *   id=3,kind=compose,app=46:0,match=PING:0,length=1000:3,thresholds=...
 * Keys: id (required), kind (panda|pias|app|match|length|compose, default
 * panda), threshold, weights, thresholds, dscp, queues, ctl_level,
 * untracked_level, floor, idle_reset (ms), tunnels (geneve, vxlan or
 * geneve/vxlan: panda_policy's 'tunnels'); rules app=DSCP:LEVEL,
 * match=KEYWORD:LEVEL, length=MIN_PAYLOAD:LEVEL (items separated by '/';
 * a rule key may repeat, its rules are appended: rule order is text
 * order); levels and default_level (rule kinds).  A keyword is raw bytes:
 * letters, digits and "-_.~" stand for themselves, any byte may be
 * written \xHH.  Rule kinds: K is 'levels', default 1 + the largest level
 * that a rule or default_level names.  Omitted dscp/queues/untracked_level/
 * default_level take the defaults for K.  The result is validated.
 * Returns NULL on success, else a malloc()ed error message naming the
 * field (caller frees); 'p' is unchanged on error. */
char *panda_policy_parse(const char *s, struct panda_policy *p);

/* Room for the longest text panda_policy_format() writes, NUL included
 * (16 rules of 32 escaped keyword bytes are about 2200 characters). */
#define PANDA_POLICY_TEXT_MAX 4096

/* Formats 'p' in the syntax accepted by panda_policy_parse(), printing
 * optional fields only when they differ from their defaults, so that
 * parse(format(p)) == p.  Returns the number of characters that the full
 * string needs (like snprintf). */
int panda_policy_format(const struct panda_policy *p, char *buf, size_t size);

/* Formats the value of rule 'r' as the text syntax writes it (the part
 * before ":LEVEL": a DSCP, an escaped keyword, a minimum payload).
 * Returns the number of characters the full string needs (like snprintf);
 * PANDA_MAX_KEYWORD * 4 + 1 bytes are always enough. */
int panda_rule_format_value(const struct panda_rule *r, char *buf,
                            size_t size);

/* Formats a weight in hundredths as the text syntax writes it ("2",
 * "2.5", "2.25").  Returns the length like snprintf; 8 bytes are always
 * enough. */
int panda_policy_format_weight(uint16_t weight, char *buf, size_t size);

/* Parses the keyword text 's' of a rule 'match' (letters, digits, "-_.~",
 * \xHH) into r->keyword and r->len.  Returns NULL, or a malloc()ed
 * message ("match: ...") that the caller frees. */
char *panda_rule_parse_keyword(const char *s, struct panda_rule *r);

/* Compares the fields that are in use (entries past n_levels/n_weights are
 * ignored). */
bool panda_policy_equal(const struct panda_policy *a,
                        const struct panda_policy *b);

/* The per-packet arithmetic: the weight of a packet, Algorithm 2 and the
 * level of a counter.  Static inline, with the constraints of
 * panda/classifier.h's per-packet core (fixed-width integers, no libc, no
 * floating point, loops bounded by constants), so that a BPF program can
 * use them as the datapath does.  PANDA_INLINE functions are inlined
 * wherever they are called: an out-of-line copy costs the connection
 * table a call per packet, and a BPF program makes no calls. */
#if defined(__GNUC__)
#define PANDA_INLINE static inline __attribute__((always_inline))
#else
#define PANDA_INLINE static inline
#endif

/* Weight (in hundredths) applied to a packet of 'size' >= T. */
PANDA_INLINE uint16_t
panda_policy_weight(const struct panda_policy *p, uint32_t size)
{
    int i;

    for (i = PANDA_MAX_WEIGHTS - 1; i >= 0; i--) {
        if (i < p->n_weights && size > p->weights[i].above) {
            return p->weights[i].weight;
        }
    }
    return PANDA_WEIGHT_ONE;
}

/* 'a' + 'b', saturated at the limits of int64_t. */
PANDA_INLINE int64_t
panda_policy_sat_add(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_add_overflow(a, b, &r)) {
        return b > 0 ? INT64_MAX : INT64_MIN;
    }
    return r;
}

/* Algorithm 2: returns the counter of a connection after one packet of
 * 'size' payload bytes (size > 0), starting from 'counter'.  Saturates
 * instead of wrapping and never goes below p->floor.  PIAS counts bytes. */
PANDA_INLINE int64_t
panda_policy_update(const struct panda_policy *p, int64_t counter,
                    uint32_t size)
{
    bool panda = p->kind != PANDA_KIND_PIAS;   /* Panda or compose. */

    if (panda && size < p->threshold) {
        /* Compensation: counter -= T - size, bounded below by the floor. */
        counter = panda_policy_sat_add(counter,
                                       -(int64_t) (p->threshold - size));
    } else {
        uint16_t w = panda && p->n_weights
                     ? panda_policy_weight(p, size) : PANDA_WEIGHT_ONE;
        /* Unsigned: the product is never negative, and BPF divides
         * unsigned only. */
        int64_t inc = w == PANDA_WEIGHT_ONE
                      ? (int64_t) size
                      : (int64_t) ((uint64_t) size * w / PANDA_WEIGHT_ONE);

        counter = panda_policy_sat_add(counter, inc);
    }
    return counter < p->floor ? p->floor : counter;
}

/* Level for a counter value: the number of thresholds it exceeds.  (The
 * loop's constant bound is for BPF's verifier; compilers unroll it.) */
PANDA_INLINE uint8_t
panda_policy_level(const struct panda_policy *p, int64_t counter)
{
    uint8_t level;

    if (counter <= 0) {
        return 0;
    }
    for (level = 0; level < PANDA_MAX_LEVELS - 1; level++) {
        if (level + 1 >= p->n_levels
            || (uint64_t) counter <= p->alpha[level]) {
            break;
        }
    }
    return level;
}

/* The tunnel of 'tunnels' (a policy's declaration) that a UDP datagram to
 * port 'dport' (host byte order) belongs to, or 0 if the policy declares
 * none for that port: then the datagram is plain UDP. */
PANDA_INLINE unsigned int
panda_policy_tunnel(uint8_t tunnels, uint16_t dport)
{
    return tunnels & (dport == PANDA_GENEVE_PORT ? PANDA_TUNNEL_GENEVE
                      : dport == PANDA_VXLAN_PORT ? PANDA_TUNNEL_VXLAN : 0);
}

/* "geneve" or "vxlan" for one enum panda_tunnel bit, NULL for another. */
const char *panda_policy_tunnel_name(unsigned int tunnel);

/* The enum panda_tunnel bit named 'name' ("geneve", "vxlan"), or 0. */
unsigned int panda_policy_tunnel_by_name(const char *name);

/* "panda", "pias", "app", "match", "length" or "compose". */
const char *panda_policy_kind_name(enum panda_kind);

/* "app", "match" or "length". */
const char *panda_rule_type_name(enum panda_rule_type);

#ifdef __cplusplus
}
#endif

#endif /* panda/policy.h */

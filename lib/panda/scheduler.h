/*
 * The Panda egress scheduler core: strict priority levels, per-flow queues
 * inside each level (FISH), a starvation guard, a port-level ECN threshold,
 * label-aware WRED, token-bucket shaping and buffer limits.
 *
 * Plain C, no OVS or ns-3 headers.  The same code runs in Open vSwitch's
 * userspace datapath (one scheduler per port, QoS type "panda-sched") and in
 * the ns-3 simulations (wrapped as a QueueDisc), so that what the testbed
 * measures and what the simulator predicts come from one implementation.
 *
 * Packets are opaque to the core: the caller passes a handle (a
 * struct dp_packet *, an ns-3 item, a test's integer) and the few facts the
 * core needs about it (struct panda_sched_pkt).  The core never reads or
 * writes packet bytes; when it decides a packet must carry CE, it says so
 * in the verdict and the caller writes the mark.  Nothing here allocates
 * after panda_sched_create(): packet and flow-queue nodes come from pools
 * sized by the configuration (limit-packets, or the shared budget's bound
 * if smaller: panda_sched_config_memory()), so memory is bounded whatever
 * arrives.
 *
 * Threading: a scheduler is not thread-safe; its owner serialises calls
 * (OVS: a per-port mutex; ns-3: single-threaded).  The optional shared
 * budget (panda_sched_budget) is safe to use from several schedulers at
 * once.
 *
 * Time is in nanoseconds of any monotonic clock, supplied by the caller.
 */
#ifndef PANDA_SCHEDULER_H
#define PANDA_SCHEDULER_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PANDA_SCHED_MAX_LEVELS 8
#define PANDA_SCHED_MAX_WRED 8      /* Label (DSCP range) rules. */
#define PANDA_SCHED_MTU 1514        /* Default DRR quantum; burst floor. */
#define PANDA_SCHED_PROB_ONE 65536  /* Probability 1 in max_prob units. */
#define PANDA_SCHED_MAX_PACKETS 16777215    /* limit-packets (2^24 - 1). */

/* ------------------------------------------------------------------------
 * Configuration.
 *
 * One text form, "key=value" pairs, is parsed here and only here, so that
 * Open vSwitch (other_config of a QoS record of type panda-sched and of its
 * Queue records), the ns-3 QueueDisc and the tools accept the same keys with
 * the same checks, the same defaults and the same error messages.  Errors
 * name the key.  Parse once, where the configuration enters (never per
 * packet): panda_sched_create() takes the parsed structure.
 *
 * The keys are the rows of one table, panda_sched_keys[] (below): name,
 * type, range, default, unit and doc string.  The parser, the validator,
 * the formatters and the generated key reference (panda_sched_keys_doc(),
 * printed by tools/panda-sched-keys, committed as docs/panda-sched-keys.md)
 * all read it.
 *
 * Level keys ("per-flow", "quantum", "fq-codel") set every level, or one
 * level as "LEVEL.key" (e.g. "2.per-flow=false"); all other keys are
 * port-wide.
 * ------------------------------------------------------------------------ */

/* A WRED rule.  The queue length it compares is the port's backlog summed
 * over all levels (the buffer the labels share), in bytes, as found by the
 * arriving packet: instantaneous, or RED's average with "wred-ewma".
 * Between min and max, an ECT packet is marked CE and a Not-ECT packet
 * dropped with a probability rising linearly to max_prob.  DSCPs without a
 * rule are left alone; rules may not overlap. */
struct panda_sched_wred {
    uint8_t dscp_min, dscp_max;     /* Label: DSCP range, inclusive. */
    uint32_t min_bytes;             /* At or below: never marked or
                                     * dropped. */
    uint32_t max_bytes;             /* Above: dropped (the rule's hard
                                     * limit; set it to the buffer size to
                                     * protect a label, as TCP SkyLine does
                                     * for signal packets). */
    uint32_t max_prob;              /* Mark/drop probability reached at
                                     * max_bytes, in 1/65536
                                     * (0..PANDA_SCHED_PROB_ONE). */
};

struct panda_sched_level_config {
    bool per_flow;                  /* Per-flow queues served by DRR (FISH)
                                     * instead of one FIFO.  Default on. */
    bool fq_codel;                  /* "fq-codel": the per-flow queues are
                                     * served as fq_codel serves them (see
                                     * "fq_codel levels" below).  Needs
                                     * per_flow.  Default off. */
    uint32_t quantum;               /* DRR quantum in bytes, 64..2^20
                                     * (default: one MTU, 1514). */
};

struct panda_sched_config {
    uint8_t n_levels;               /* "levels": 1..8 (default 8). */
    uint64_t rate_bps;              /* "max-rate": bits/s, 1000..10^15; 0 =
                                     * unshaped (the key absent: the text
                                     * "max-rate=0" is refused). */
    uint32_t burst_bytes;           /* "burst": token bucket depth, what
                                     * may leave at once after the port was
                                     * empty; 0 = default, resolved at
                                     * create: 2 x MTU or 100 us at the
                                     * rate, whichever is larger.  One
                                     * default for every caller: a caller
                                     * that comes back late to a backlogged
                                     * port is what catch-up is for, so a
                                     * deeper bucket is not needed for it
                                     * (it would only let more leave at
                                     * line rate after idleness). */
    uint32_t catch_up_bytes;        /* "catch-up": what the bucket may hold
                                     * while the port is backlogged, so
                                     * that a caller that comes back late
                                     * sends what the link would have sent
                                     * meanwhile, up to this many bytes at
                                     * once; >= burst (= burst: the
                                     * classic bucket, no catch-up).  0 =
                                     * default, resolved at create: 10 ms
                                     * at the rate, at least burst.  Credit
                                     * earned while the port is empty is
                                     * still capped at burst. */
    uint32_t limit_bytes;           /* "limit-bytes": port buffer. */
    uint32_t limit_packets;         /* "limit-packets": port buffer; also
                                     * sizes the packet-node pool. */
    uint32_t max_flow_queues;       /* "flow-queues": per-flow queues in the
                                     * pool, shared by all levels; 0 =
                                     * default, limit_packets (a flow queue
                                     * exists only while it holds a packet,
                                     * so more could never be used).  When
                                     * exhausted, a new flow shares its
                                     * level's overflow queue (FISH's
                                     * dynamic queue sharing). */
    uint32_t ecn_threshold_bytes;   /* "ecn-threshold": mark CE on ECT
                                     * packets when the port's summed
                                     * backlog they find exceeds it; 0 =
                                     * off.  Below limit_bytes. */
    bool ecn_ahead;                 /* "ecn-ahead" (default false): the
                                     * threshold compares the backlog of
                                     * the packet's level and the levels
                                     * above it instead of the port's. */
    uint16_t guard_permille;        /* "guard": share of the link, in 1/1000
                                     * (0..500), that waiting lower levels
                                     * get while higher levels are
                                     * backlogged; 0 = strict priority. */
    bool push_out;                  /* "push-out" (default true): a full
                                     * buffer makes room for an arriving
                                     * packet by dropping held packets of
                                     * lower levels (see
                                     * panda_sched_set_push_out()); false:
                                     * drop-tail, the arrival is dropped
                                     * whatever its level. */
    uint8_t wred_ewma_shift;        /* "wred-ewma": 0 = instantaneous queue
                                     * length (TCP SkyLine), else RED's
                                     * average with weight 2^-shift
                                     * (1..20). */
    uint8_t n_wred;
    struct panda_sched_wred wred[PANDA_SCHED_MAX_WRED]; /* "wred" */
    uint64_t seed;                  /* "seed": WRED's random draws; default
                                     * 1, so runs repeat. */
    uint64_t codel_target_ns;       /* "codel-target" of fq_codel levels:
                                     * the sojourn time CoDel tolerates
                                     * (default 5 ms). */
    uint64_t codel_interval_ns;     /* "codel-interval": how long sojourn
                                     * must stay above target before CoDel
                                     * acts, and its control law's first
                                     * spacing (default 100 ms). */
    bool codel_ecn;                 /* "codel-ecn": CoDel marks ECN-capable
                                     * packets CE instead of dropping them
                                     * (default true, as fq_codel's "ecn"). */
    struct panda_sched_level_config level[PANDA_SCHED_MAX_LEVELS];
};

/* Fills 'cfg' with the defaults. */
void panda_sched_config_init(struct panda_sched_config *cfg);

/* Applies one port-wide setting, e.g. ("max-rate", "50000000").  Returns
 * NULL, or a malloc()ed message naming 'key' (unknown key, bad or
 * out-of-range value).  'cfg' is unchanged on error. */
char *panda_sched_config_set(struct panda_sched_config *cfg,
                             const char *key, const char *value);

/* Applies one per-level setting ("per-flow", "quantum") to 'level'
 * (0..PANDA_SCHED_MAX_LEVELS-1; settings of levels >= n_levels are kept but
 * unused).  Errors name the key as "LEVEL.key".  The port-wide keys
 * "per-flow" and "quantum" given to panda_sched_config_set() set every
 * level. */
char *panda_sched_config_set_level(struct panda_sched_config *cfg,
                                   unsigned int level, const char *key,
                                   const char *value);

/* Parses "key=value,key=value,..." with panda_sched_config_set(); a key
 * "LEVEL.key" (e.g. "2.per-flow=false") goes to the level.  Then
 * validates. */
char *panda_sched_config_parse(struct panda_sched_config *cfg,
                               const char *text);

/* Checks the settings together (e.g. limits against each other).  NULL if
 * valid, else a malloc()ed message naming the key. */
char *panda_sched_config_validate(const struct panda_sched_config *cfg);

/* Returns 'cfg' as malloc()ed "key=value,..." text that
 * panda_sched_config_parse() reads back into the same configuration, in
 * short: the keys that differ from their defaults, plus those marked
 * PANDA_SCHED_KEY_SHORT (levels, the limits, ecn-threshold, guard,
 * wred-ewma, seed) always, and "LEVEL.key" only where a level differs from
 * the defaults.  Compact and stable (logs, comparing configurations). */
char *panda_sched_config_format(const struct panda_sched_config *cfg);

/* Returns 'cfg' as malloc()ed "key=value,..." text with every key in
 * effect and its value, defaults included and resolved (burst, catch-up and
 * flow-queues as panda_sched_create() resolves them): for status columns
 * (OVS's status:config) and show commands, where an operator must see what
 * the port does without knowing the defaults.  Keys that need max-rate are
 * left out on an unshaped port, and CoDel's keys when no level in effect
 * runs fq_codel (they do not apply there); a level key is
 * given port-wide with the value most levels in effect have, then as
 * "LEVEL.key" for each level in effect that differs.  Parsed back, it
 * gives a configuration that behaves the same. */
char *panda_sched_config_format_effective(const struct panda_sched_config *);

/* Fills in the defaults that depend on other keys, as panda_sched_create()
 * does: on a shaped port burst and catch-up (when 0), and flow-queues
 * (when 0: limit-packets).  'cfg' must be valid. */
void panda_sched_config_resolve(struct panda_sched_config *cfg);

/* ------------------------------------------------------------------------
 * The key table.
 * ------------------------------------------------------------------------ */

enum panda_sched_key_type {
    PANDA_SCHED_KEY_UINT,       /* Decimal integer in [min, max]. */
    PANDA_SCHED_KEY_BOOL,       /* "true" or "false". */
    PANDA_SCHED_KEY_RATE,       /* bit/s, [min, max]: "50000000", "50M",
                                 * "50Mbit", "1.5G". */
    PANDA_SCHED_KEY_WRED,       /* WRED rules (struct panda_sched_wred). */
    PANDA_SCHED_KEY_TIME,       /* A duration with its unit, [min, max]
                                 * ns: "5ms", "100us", "0.5s", "250ns". */
};

/* Flags of a key. */
#define PANDA_SCHED_KEY_LEVEL  (1u << 0)   /* A level setting (struct
                                            * panda_sched_level_config). */
#define PANDA_SCHED_KEY_SHORT  (1u << 1)   /* panda_sched_config_format()
                                            * gives it even at its
                                            * default. */
#define PANDA_SCHED_KEY_SHAPED (1u << 2)   /* Only with max-rate. */
#define PANDA_SCHED_KEY_CODEL  (1u << 3)   /* Only at fq-codel levels. */

struct panda_sched_key {
    const char *name;
    enum panda_sched_key_type type;
    unsigned int flags;             /* PANDA_SCHED_KEY_*. */
    uint64_t min, max;              /* UINT, RATE, TIME (ns): the value's
                                     * range; WRED: max = most rules. */
    const char *unit;               /* Of the value, for the docs and
                                     * messages ("bytes"), or "". */
    const char *def;                /* The default as text the parser reads
                                     * (panda_sched_config_init() parses
                                     * it), or NULL: 0 in the structure,
                                     * meaning unset (see def_doc). */
    const char *def_doc;            /* The default in words, for the docs,
                                     * or NULL: 'def' says it. */
    const char *doc;                /* What it does; `code` in backquotes. */
    uint16_t offset;                /* Of its field in struct
                                     * panda_sched_config, or in struct
                                     * panda_sched_level_config for a level
                                     * key (unused for WRED). */
    uint8_t size;                   /* Of its field, bytes. */
};

/* Every key, in the order of the docs and of the formatted text. */
extern const struct panda_sched_key panda_sched_keys[];
extern const size_t panda_sched_n_keys;

/* The key named 'name' (a level key without its "LEVEL."), or NULL. */
const struct panda_sched_key *panda_sched_key_find(const char *name);

enum panda_sched_doc {
    PANDA_SCHED_DOC_NAMES,          /* "levels, max-rate, ..., LEVEL.quantum"
                                     * (as the unknown-key message lists
                                     * them), one line. */
    PANDA_SCHED_DOC_MARKDOWN,       /* A Markdown table: key, values,
                                     * default, meaning. */
    PANDA_SCHED_DOC_VSWITCH_QOS,    /* vswitch.xml <column> elements for the
                                     * QoS table's other_config. */
    PANDA_SCHED_DOC_VSWITCH_QUEUE,  /* The same for the Queue table: the
                                     * level keys. */
};

/* The key table as malloc()ed text in 'format' (for generated docs). */
char *panda_sched_keys_doc(enum panda_sched_doc format);

/* ------------------------------------------------------------------------
 * A global bound on the packets held by all the schedulers of one datapath
 * (held packets pin receive buffers).  Thread-safe.
 * ------------------------------------------------------------------------ */

struct panda_sched_budget;

/* NULL on allocation failure.  The budget must outlive the schedulers that
 * use it. */
struct panda_sched_budget *panda_sched_budget_create(uint64_t max_packets);
void panda_sched_budget_destroy(struct panda_sched_budget *);
uint64_t panda_sched_budget_held(const struct panda_sched_budget *);

/* ------------------------------------------------------------------------
 * The scheduler.
 * ------------------------------------------------------------------------ */

struct panda_sched;

/* What the core needs to know of a packet at enqueue. */
struct panda_sched_pkt {
    uint32_t len;           /* Bytes on the wire (shaping, limits, DRR). */
    uint32_t flow_hash;     /* 5-tuple hash: selects the per-flow queue. */
    uint8_t level;          /* 0 = highest; >= n_levels counts as the
                             * lowest level. */
    uint8_t dscp;           /* For WRED's labels. */
    uint8_t ecn;            /* The IP ECN field: 0 Not-ECT, 1/2 ECT, 3 CE. */
};

enum panda_sched_verdict {
    PANDA_SCHED_QUEUED,         /* Held; given back by dequeue. */
    PANDA_SCHED_QUEUED_CE,      /* Held; the caller must set ECN to CE. */
    PANDA_SCHED_DROP_LIMIT,     /* Not held: port buffer (bytes/packets). */
    PANDA_SCHED_DROP_BUDGET,    /* Not held: datapath-wide budget. */
    PANDA_SCHED_DROP_WRED,      /* Not held: WRED. */
};

static inline bool
panda_sched_verdict_is_drop(enum panda_sched_verdict v)
{
    return v >= PANDA_SCHED_DROP_LIMIT;
}

/* Creates a scheduler from a validated 'cfg' ('budget' may be NULL).
 * Returns NULL and a malloc()ed message in '*errp' on bad configuration or
 * allocation failure; never aborts. */
struct panda_sched *panda_sched_create(const struct panda_sched_config *cfg,
                                       struct panda_sched_budget *budget,
                                       char **errp);

/* Destroys 's'.  Drain it first (panda_sched_drain()): the handles of
 * packets still held are not freed (the core cannot), but their share of
 * the budget is given back. */
void panda_sched_destroy(struct panda_sched *s);

/* Why the core dropped a packet it held (the drop callback's argument). */
enum panda_sched_drop {
    PANDA_SCHED_DROPPED_PUSH_OUT,   /* Room for an arriving packet: a lower
                                     * level's, or (fq-codel) the level's
                                     * fattest flow's. */
    PANDA_SCHED_DROPPED_CODEL,      /* CoDel, at dequeue (fq-codel). */
};

/* Sets the drop callback: the core hands it each packet it held and drops
 * (push-out at enqueue, CoDel at dequeue), from within
 * panda_sched_enqueue() or panda_sched_dequeue().  'cb' frees the packet
 * and must not call back into 's'.  Without one (NULL, the default) the
 * core cannot drop a held packet: a full buffer drops the arrival, as with
 * "push-out=false", and CoDel can only mark.  Set it before the first
 * enqueue. */
void panda_sched_set_drop(struct panda_sched *s,
                          void (*cb)(void *handle, enum panda_sched_drop why,
                                     void *aux),
                          void *aux);

/* The same, for callers that need no reason: 'cb' gets every dropped held
 * packet. */
void panda_sched_set_push_out(struct panda_sched *s,
                              void (*cb)(void *handle, void *aux), void *aux);

/* Sets the mark callback, which CoDel calls at dequeue on a packet it
 * signals congestion with (the packet is then returned by the same
 * panda_sched_dequeue()): 'cb' sets CE if the packet is ECN-capable (ECT,
 * or already CE) and returns true, else returns false and the packet is
 * dropped instead.  Without one, or with "codel-ecn=false", CoDel drops. */
void panda_sched_set_mark(struct panda_sched *s,
                          bool (*cb)(void *handle, void *aux), void *aux);

/* Push-out.  With "push-out" on and a drop callback, a packet that finds
 * the port buffer full makes room by dropping held packets of lower levels
 * than its own: the oldest packet of the flow next in turn at the lowest
 * level holding packets, then again, moving up one level when that one is
 * empty.  At an fq-codel level, when the levels below hold nothing, the
 * oldest packets of the level's fattest flow go next (below).  Each is
 * counted as drop_push_out of its level.  Only when the lower levels (and
 * an fq-codel level itself) together hold too little is the arrival itself
 * dropped (drop_limit), and then nothing is pushed out.
 *
 * Why: the buffer is shared by the levels, and strict priority starves the
 * lower ones while higher ones are busy, so their packets fill it.  With
 * drop-tail the top level's packets (a memcached response, a small flow's
 * first packets) are then dropped for want of room that starved bulk
 * packets hold; push-out extends strict priority from the link to the
 * buffer (a packet is never refused room while a lower level's packet is
 * held), as pFabric's priority dropping does.  Linux's prio qdisc avoids
 * the same inversion by giving every band a queue limit of its own, which
 * leaves most of the buffer unusable to a single busy level.  Dropping the
 * oldest packet rather than the newest signals the loss to the victim
 * flow's sender one queue's delay sooner.
 *
 * fq_codel levels ("fq-codel=true", RFC 8290).  The level's per-flow
 * queues are served as Linux's fq_codel serves its flows:
 *
 *   - Two lists.  A flow queue that is in neither joins the new-flows list
 *     with one quantum of deficit; the scheduler serves the new-flows list
 *     first, then the old-flows list.  A queue whose deficit is spent gets
 *     one more quantum and moves to the old-flows list's tail.  A queue
 *     that empties on the new-flows list moves to the old-flows list (so a
 *     flow cannot stay new by emptying its queue now and then), unless
 *     that list is empty; one that is found empty on the old-flows list
 *     leaves the lists and its queue returns to the pool.  So a sparse
 *     flow, whose queue empties and leaves before its next packet, is new
 *     at every packet and goes ahead of the backlogged ones.  The deficit
 *     may go negative (a packet leaves while deficit > 0), as in fq_codel,
 *     unlike the classic DRR of the other per-flow levels.  Those moves are
 *     made right after each change rather than at the next dequeue, so the
 *     next packet stays a pure function of the state (next_ns()); they
 *     differ from Linux's only for a packet that arrives in between.
 *
 *   - CoDel (RFC 8289) on each queue, at dequeue: once the head packet's
 *     sojourn time (enqueue to dequeue) has stayed at or above codel-target
 *     for codel-interval while the port holds more than one MTU, the
 *     queue enters the dropping state: it drops (or, with codel-ecn and a
 *     mark callback, marks) one packet, then one every interval /
 *     sqrt(count) while sojourn stays above target, count being the
 *     signals so far in this state; re-entering soon after leaving resumes
 *     near the last count (while the queue stays on the lists: a queue
 *     that leaves them starts afresh).  The control law is computed
 *     exactly (an integer square root per signal, not per packet).  Times
 *     are kept in units of 1.024 us, 32 bits (sojourn times up to 36
 *     minutes).
 *
 *   - A full buffer.  Linux's fq_codel drops from its fattest flow (the
 *     most bytes, found by a scan of all its queues, half of that flow's
 *     backlog at once) whatever arrives.  Here the port's rules come first:
 *     push-out drops from lower levels, which is strict priority for the
 *     buffer; only then, within the fq_codel level, the oldest packets of
 *     its fattest flow make room, as fq_codel's rule: at least what the
 *     arrival needs and up to half of that flow's bytes (at most 64
 *     packets), so that the flow filling the buffer backs off once rather
 *     than losing a packet at every arrival, and a sparse flow's packet is
 *     not refused while a bulk flow fills the buffer.  "Fattest" is by
 *     packets rather than bytes, and exact: the queues are kept in lists by
 *     the packets they hold, which change by one at a time, so the largest
 *     is known in O(1) per packet without a scan; among equals, the one
 *     that has been that fat longest (a bulk flow rather than a new flow's
 *     first burst).  An approximate fattest is not enough: dropping from a
 *     small flow's queue by mistake costs it a retransmission timeout.
 *     With "push-out=false" the buffer is drop-tail, as at other levels.
 *
 * Cost: O(1) per packet (a 32-bit timestamp written at enqueue and read at
 * dequeue, a queue moved between two size lists); memory: 4 bytes per
 * packet and 24 per flow queue more, and 4 per packet for each fq_codel
 * level, only when some level runs fq_codel (panda_sched_memory()).
 * Nothing is allocated after create.  A queue stays in the lists,
 * holding its pool entry, until its turn finds it empty, so the pool
 * (flow-queues) can run out a little sooner than at a DRR level; new flows
 * then share the overflow queue, as there. */

/* Offers a packet ('handle' must not be NULL).  On PANDA_SCHED_QUEUED[_CE]
 * the scheduler holds 'handle' until dequeue or drain; on a drop verdict it
 * does not, and the caller frees the packet.  Checks, in order: the port
 * limits (a full buffer with no room to be made by push-out drops the
 * packet), the packet's WRED rule, then push-out makes the room, the port
 * ECN threshold (on the backlog after push-out), the budget; a packet
 * counts once, under the first reason that drops or marks it.  Packets
 * pushed out go to the push-out callback before this returns.
 * 'pkt->len' must be the length the packet has at dequeue (the caller
 * writes CE in place, which does not change it). */
enum panda_sched_verdict panda_sched_enqueue(struct panda_sched *s,
                                             const struct panda_sched_pkt *,
                                             void *handle, uint64_t now_ns);

/* Returns the next packet that may leave at 'now_ns' (strict priority with
 * the starvation guard, DRR or fq_codel inside a level, within the
 * shaper's tokens), storing its length in '*len' if nonnull; NULL if none
 * may leave now.  At an fq_codel level CoDel may first drop packets (to the
 * drop callback) or mark the one returned (through the mark callback); the
 * packet returned may then be longer than the one next_ns() timed, and
 * leaves the shaper's bucket in debt for the difference. */
void *panda_sched_dequeue(struct panda_sched *s, uint64_t now_ns,
                          uint32_t *len);

/* Dequeues up to 'max' packets into 'handles'; returns how many. */
size_t panda_sched_dequeue_burst(struct panda_sched *s, uint64_t now_ns,
                                 void **handles, size_t max);

/* Cut-through for a batch that would leave at once.  If 's' is unshaped,
 * holds nothing, and nothing in its configuration could act on packets
 * that pass straight through -- no ECN threshold that the batch's bytes
 * exceed, no WRED rule or average, no fq-codel level among the batch's,
 * room for the whole batch in the buffer and the budget (the starvation
 * guard shares a backlog, and there is none) -- counts the 'n' packets (at
 * most PANDA_SCHED_PASS_MAX) as enqueued and sent at their levels and
 * returns how they leave: PANDA_SCHED_PASS_IN_ORDER if in the order of
 * 'pkts' (their levels never decrease, e.g. all are of one level; 'order'
 * is not written), PANDA_SCHED_PASS_SORTED after writing into 'order' the
 * indices of 'pkts' in the order they leave.  Otherwise returns
 * PANDA_SCHED_PASS_REFUSED (false) and changes nothing, and the caller
 * enqueues and dequeues them.  The order is strict priority (level 0
 * first), arrival order within a level, where enqueue-then-dequeue would
 * serve a level's flows by DRR: the two differ only in how the flows of
 * one level interleave inside one batch, which leaves in one send.  What it
 * saves: the per-flow queue, the packet node and the DRR step of every
 * packet, so that an unshaped port costs about a sort of the batch by
 * level (none if it is in order); the counters are updated once per level
 * of the batch. */
#define PANDA_SCHED_PASS_MAX 64
enum panda_sched_pass {
    PANDA_SCHED_PASS_REFUSED,       /* Enqueue and dequeue them. */
    PANDA_SCHED_PASS_IN_ORDER,      /* They leave as given. */
    PANDA_SCHED_PASS_SORTED,        /* They leave in 'order'. */
};
enum panda_sched_pass panda_sched_pass(struct panda_sched *s,
                                       const struct panda_sched_pkt *pkts,
                                       size_t n, uint64_t now_ns,
                                       uint8_t *order);

/* panda_sched_pass() for a batch of 'n' packets of 'bytes' bytes in all,
 * every one of level 'level' (>= n_levels: the lowest), from a caller that
 * has read their levels and lengths itself: the same test and the same
 * counting, without a look at each packet.  Returns true if they pass
 * (they leave as given), false if refused (nothing changed). */
bool panda_sched_pass_level(struct panda_sched *s, unsigned int level,
                            size_t n, uint64_t bytes, uint64_t now_ns);

/* When the next packet may leave: 'now_ns' if one may leave now,
 * UINT64_MAX if the scheduler is empty, else the (exact, ns) time the
 * shaper allows.  Changes nothing; after an enqueue the answer may be
 * earlier (a packet of a higher level, or a smaller one). */
uint64_t panda_sched_next_ns(const struct panda_sched *s, uint64_t now_ns);

/* Removes every held packet, calling 'cb' (if nonnull) on each, e.g. to
 * free it.  Counters are kept; the scheduler is ready for new packets. */
void panda_sched_drain(struct panda_sched *s,
                       void (*cb)(void *handle, void *aux), void *aux);

bool panda_sched_is_empty(const struct panda_sched *s);

/* ------------------------------------------------------------------------
 * Statistics (for panda-sched/show, ns-3 output and tests).
 * ------------------------------------------------------------------------ */

struct panda_sched_level_stats {
    uint64_t backlog_bytes, backlog_packets;
    uint32_t flow_queues;           /* Active pool queues (the level's own
                                     * queue is not counted). */
    uint64_t enqueued_packets, enqueued_bytes;
    uint64_t sent_packets, sent_bytes;
    uint64_t guard_packets;         /* Sent on the starvation guard. */
    uint64_t drop_limit, drop_budget, drop_wred;
    uint64_t drop_push_out;         /* Held packets of this level dropped
                                     * to make room for a higher level's,
                                     * or (fq-codel) for the level's own
                                     * (after enqueued_*, never sent). */
    uint64_t drop_codel, mark_codel;    /* CoDel's drops and CE marks. */
    uint64_t new_flows;             /* fq-codel: queues that joined the
                                     * new-flows list. */
    uint64_t mark_ecn, mark_wred;   /* CE set: port threshold / WRED. */
    uint64_t shared_queue_packets;  /* New-flow packets put in the overflow
                                     * queue: pool exhausted, or overflow
                                     * queue still holding packets. */
};

struct panda_sched_stats {
    uint8_t n_levels;
    uint64_t backlog_bytes, backlog_packets;
    uint64_t max_backlog_bytes;     /* High-water mark. */
    uint32_t burst_bytes;           /* Effective bucket depth (0: unshaped). */
    uint32_t catch_up_bytes;        /* Effective catch-up cap (0:
                                     * unshaped). */
    uint32_t flow_queues_used;      /* Pool queues active, all levels. */
    uint32_t flow_queues_max;       /* Pool size (flow-queues). */
    struct panda_sched_level_stats level[PANDA_SCHED_MAX_LEVELS];
};

void panda_sched_stats(const struct panda_sched *s,
                       struct panda_sched_stats *stats);

/* Calls 'cb' for each queue holding packets, in level order and service
 * order within a level (fq-codel: the new-flows list, then the old-flows
 * list); stops early if 'cb' returns false. */
struct panda_sched_flow_info {
    uint8_t level;
    bool shared;                    /* The level's own queue: its overflow
                                     * queue, or its FIFO when per-flow is
                                     * off (flow_hash then 0). */
    uint32_t flow_hash;
    uint32_t backlog_bytes, backlog_packets;
    int32_t deficit;
    bool new_flow;                  /* fq-codel: on the new-flows list. */
};
void panda_sched_foreach_flow(const struct panda_sched *s,
                              bool (*cb)(const struct panda_sched_flow_info *,
                                         void *aux),
                              void *aux);

/* Bytes of memory held by 's' (pools included), for the memory bound:
 * 16 per packet node, 32 per flow queue (plus one per level) and 4 to 8 of
 * hash index per flow queue, plus about 1.6 KB; 52 to 56 bytes per packet
 * node with the default flow-queues.  With an fq-codel level, 24 more per
 * flow queue and 8 more per packet node (4 for each further fq-codel
 * level).  A scheduler has a packet node for each packet it may hold:
 * limit-packets, or its budget's bound if that is smaller (the budget never
 * lets it hold more); and at most one flow queue per packet node
 * (flow-queues, or fewer). */
size_t panda_sched_memory(const struct panda_sched *s);

/* The panda_sched_memory() of the scheduler that panda_sched_create()
 * makes of 'cfg' (valid) with a budget of 'max_packets' packets
 * (UINT64_MAX: without a budget), computed without allocating: so that a
 * caller can keep the schedulers it creates within a memory bound, and
 * refuse one before asking for its memory. */
size_t panda_sched_config_memory(const struct panda_sched_config *cfg,
                                 uint64_t max_packets);

#ifdef __cplusplus
}
#endif

#endif /* scheduler.h */

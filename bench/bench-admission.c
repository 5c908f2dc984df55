/* bench-admission [SEEDS]: what a full connection table gives the
 * connections it refuses, on lib/panda's table (the datapath's code), for
 * two workloads, each over SEEDS table seeds (default 5):
 *
 *   attack  a table of 1024 connections; 980 attacker tuples send a
 *           100-byte packet each every 10 ms (always active, established,
 *           level 0); after 100 ms, 20 newcomers with request/response
 *           traffic (60-byte requests) and 20 bulk newcomers (1448-byte
 *           segments) send 5 packets each, one every 10 ms;
 *   churn   a table of 1024; 900 long-lived connections (600 of 60-byte
 *           requests, 300 bulk) send every 10 ms; two short connections
 *           start every millisecond for 20 s, one of 3 requests of 60
 *           bytes, one of 3 segments of 1448 bytes, 25 ms apart, then a
 *           FIN: about 200 short ones live at once, so the table is full
 *           and they take each other's slots.
 *
 * For each class it prints the packets, how many the table refused, and
 * the levels they took: "now" is the verdict of panda_table_classify();
 * "before" is what the rule of the previous release gave the same packets
 * (a refused packet with payload at the untracked level, a bare one at
 * the control level or 0), so the two columns differ only by that rule.
 * No timing: the figures are counts, identical for a seed on any machine.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <panda/conn-table.h>
#include <panda/policy.h>

#define POLICY "id=1,threshold=1000,thresholds=10000/100000/1000000," \
               "dscp=46/26/18/0"

enum cls { ATTACKER, NEW_RR, NEW_BULK, LONG_RR, LONG_BULK, SHORT_RR,
           SHORT_BULK, N_CLS };
static const char *const cls_name[N_CLS] = {
    "attacker", "newcomer request/response", "newcomer bulk",
    "long-lived request/response", "long-lived bulk",
    "short request/response", "short bulk",
};

struct tally {
    unsigned long packets, refused;
    unsigned long now[PANDA_MAX_LEVELS], before[PANDA_MAX_LEVELS];
};

static struct tally tallies[N_CLS];
static struct panda_policy policy;

static struct panda_pkt
tuple(uint32_t src, uint16_t sport, uint16_t dport)
{
    struct panda_pkt k;

    memset(&k, 0, sizeof k);
    k.family = 4;
    k.proto = 6;
    k.src.v4 = htonl(src);
    k.dst.v4 = htonl(0x0a000002);
    k.sport = htons(sport);
    k.dport = htons(dport);
    k.tcp_flags = 0x10;         /* ACK */
    return k;
}

static void
pkt_send(struct panda_table *t, enum cls c, struct panda_pkt *k,
     uint32_t payload, uint8_t flags, panda_msec_t now)
{
    struct tally *ty = &tallies[c];
    struct panda_table_verdict v;
    uint8_t before;

    k->payload = payload;
    k->tcp_flags = flags;
    panda_table_classify(t, &policy, k, now, &v);
    ty->packets++;
    if (v.stateful || !payload) {
        before = v.level;
    } else {
        /* The previous rule: refused data at the untracked level. */
        before = policy.untracked_level;
    }
    if (!v.stateful && payload) {
        ty->refused++;
    }
    ty->now[v.level]++;
    ty->before[before]++;
}

static struct panda_table *
table(uint64_t seed)
{
    struct panda_table_config cfg = { 1024, 0, 0, seed };
    char *err = NULL;
    struct panda_table *t = panda_table_create(&cfg, &err);

    if (!t) {
        fprintf(stderr, "bench-admission: %s\n", err ? err : "no memory");
        exit(1);
    }
    return t;
}

static void
attack(uint64_t seed)
{
    struct panda_table *t = table(seed);
    panda_msec_t ms;
    int i;

    for (ms = 0; ms < 150; ms += 10) {
        for (i = 0; i < 980; i++) {
            struct panda_pkt k = tuple(0x0a090000 + i / 60000,
                                       1024 + i % 60000, 80);

            pkt_send(t, ATTACKER, &k, 100, 0x10, ms + i / 100);
        }
        if (ms >= 100) {
            for (i = 0; i < 20; i++) {
                struct panda_pkt rr = tuple(0x0a070001, 2000 + i, 11211);
                struct panda_pkt bulk = tuple(0x0a070002, 3000 + i, 5001);

                pkt_send(t, NEW_RR, &rr, 60, 0x18, ms + 5);
                pkt_send(t, NEW_BULK, &bulk, 1448, 0x10, ms + 5);
            }
        }
    }
    panda_table_destroy(t);
}

static void
churn(uint64_t seed)
{
    struct panda_table *t = table(seed);
    panda_msec_t ms;
    int i;

    for (ms = 0; ms < 20000; ms++) {
        if (ms % 10 == 0) {
            for (i = 0; i < 900; i++) {
                struct panda_pkt k = tuple(0x0a080000, 1024 + i, 80);

                if (i < 600) {
                    pkt_send(t, LONG_RR, &k, 60, 0x18, ms);
                } else {
                    pkt_send(t, LONG_BULK, &k, 1448, 0x10, ms);
                }
            }
        }
        /* Two short connections start every millisecond; each sends a
         * packet every 25 ms: three of data, then a FIN. */
        for (i = 0; i < 4 && (panda_msec_t) i * 25 <= ms; i++) {
            uint32_t n, j;

            for (j = 0; j < 2; j++) {
                struct panda_pkt k;
                enum cls c = j ? SHORT_BULK : SHORT_RR;

                n = 2 * (ms - i * 25) + j;
                k = tuple(0x0a060000 + n / 50000, 1024 + n % 50000, 80);
                if (i < 3) {
                    pkt_send(t, c, &k, c == SHORT_RR ? 60 : 1448, 0x18, ms);
                } else {
                    pkt_send(t, c, &k, 0, 0x11, ms);    /* FIN|ACK */
                }
            }
        }
    }
    panda_table_destroy(t);
}

static void
print_levels(const char *what, const unsigned long *levels,
             unsigned long packets)
{
    int l;

    printf("    %-7s", what);
    for (l = 0; l < policy.n_levels; l++) {
        printf(" L%d %5.1f%%", l, packets ? 100.0 * levels[l] / packets : 0);
    }
    printf("\n");
}

static void
report(const char *name, enum cls first, enum cls last, int seeds)
{
    enum cls c;

    printf("%s (%d seeds, totals)\n", name, seeds);
    for (c = first; c <= last; c++) {
        const struct tally *ty = &tallies[c];

        printf("  %s: %lu packets, %lu refused (%.1f%%)\n", cls_name[c],
               ty->packets, ty->refused,
               ty->packets ? 100.0 * ty->refused / ty->packets : 0);
        print_levels("now", ty->now, ty->packets);
        print_levels("before", ty->before, ty->packets);
    }
}

int
main(int argc, char *argv[])
{
    int seeds = argc > 1 ? atoi(argv[1]) : 5;
    char *err;
    int s;

    if (seeds < 1) {
        fprintf(stderr, "usage: bench-admission [SEEDS >= 1]\n");
        return 2;
    }
    err = panda_policy_parse(POLICY, &policy);
    if (err) {
        fprintf(stderr, "bench-admission: %s\n", err);
        return 1;
    }
    printf("policy %s (untracked level %u)\n", POLICY,
           policy.untracked_level);
    for (s = 1; s <= seeds; s++) {
        attack(s);
    }
    report("attack", ATTACKER, NEW_BULK, seeds);
    for (s = 1; s <= seeds; s++) {
        churn(s);
    }
    report("churn", LONG_RR, SHORT_BULK, seeds);
    return 0;
}

/* bench-level MODE POLICY CONNS PACKETS: classifies PACKETS packets cycling
 * over CONNS TCP connections (payloads 1448, 1448, 1448, 120; the first
 * bytes of a memcached get or set) under POLICY, with MODE "table"
 * (panda_table_classify(), a table warmed with every connection: the
 * datapath's path) or "cls" (panda_cls_classify(), one state per
 * connection: the event loop's path).  Made to be run under callgrind,
 * with --toggle-collect=loop_table or loop_cls: bench/bench-level.sh does,
 * and prints instructions per packet.  Uses only what lib/panda has had
 * since the classifier interface, so that two versions of the library can
 * be compared. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <panda/classifier.h>
#include <panda/conn-table.h>

static struct panda_pkt *keys;
static union panda_cls_state *states;

static void __attribute__((noinline, noclone))
loop_table(struct panda_table *t, const struct panda_policy *p,
           unsigned conns, unsigned long n, unsigned *sum)
{
    for (unsigned long i = 0; i < n; i++) {
        struct panda_pkt *k = &keys[i % conns];
        struct panda_table_verdict v;

        k->payload = (i & 3) ? 1448 : 120;
        panda_table_classify(t, p, k, i >> 10, &v);
        *sum += v.dscp + v.queue;
    }
}

static void __attribute__((noinline, noclone))
loop_cls(const struct panda_classifier *c, unsigned conns, unsigned long n,
         unsigned *sum)
{
    for (unsigned long i = 0; i < n; i++) {
        struct panda_pkt *k = &keys[i % conns];

        k->payload = (i & 3) ? 1448 : 120;
        *sum += panda_cls_classify(c, &states[i % conns], k);
    }
}

int
main(int argc, char *argv[])
{
    struct panda_policy p;
    unsigned conns = atoi(argv[3]), sum = 0;
    unsigned long n = strtoul(argv[4], NULL, 10);
    char *err = panda_policy_parse(argv[2], &p);

    if (err) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    keys = calloc(conns, sizeof *keys);
    states = aligned_alloc(64, conns * sizeof *states);
    memset(states, 0, conns * sizeof *states);
    for (unsigned i = 0; i < conns; i++) {
        keys[i].family = 4;
        keys[i].proto = 6;
        keys[i].src.v4 = 0x0a000000 | i;
        keys[i].dst.v4 = 0x0a800001;
        keys[i].sport = (uint16_t) (1024 + i);
        keys[i].dport = 80;
        keys[i].data = (const uint8_t *) (i & 1 ? "set key 0 0 1400\r\n"
                                                : "get key\r\n");
        keys[i].data_len = 8;
    }
    if (!strcmp(argv[1], "table")) {
        struct panda_table_config cfg = { .capacity = conns * 2 + 64 };
        struct panda_table *t = panda_table_create(&cfg, &err);

        loop_table(t, &p, conns, conns, &sum);        /* Warm. */
        loop_table(t, &p, conns, n, &sum);
    } else {
        struct panda_classifier c;

        panda_cls_init(&c, &p);
        loop_cls(&c, conns, n, &sum);
    }
    printf("%u\n", sum);
    return 0;
}

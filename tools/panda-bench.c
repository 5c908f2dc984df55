/*
 * panda-bench: cost of the Panda per-packet path (table lookup + counter
 * update + level mapping) and memory per connection, at 1, 1k, 100k and 1M
 * live connections, for the Panda policy and, as the baseline measured in the
 * same run, the PIAS policy.  Prints a table; there is no pass/fail.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <panda/conn-table.h>
#include <panda/rng.h>

#include <cli/clock.h>
#include <cli/log.h>
#include <cli/parse.h>

static size_t
heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();

    return mi.uordblks + mi.hblkhd;
}

static size_t
rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size, rss = 0;

    if (f) {
        if (fscanf(f, "%lu %lu", &size, &rss) != 2) {
            rss = 0;
        }
        fclose(f);
    }
    return rss * (size_t) sysconf(_SC_PAGESIZE);
}

struct result {
    double ns_per_pkt;
    double alloc_per_conn;
    double rss_per_conn;
    uint64_t evicted;
    uint64_t live;
};

static void
make_key(struct panda_pkt *k, uint32_t i, int family)
{
    memset(k, 0, sizeof *k);
    k->family = family;
    k->proto = 6;
    if (family == 6) {
        k->src.v6[0] = 0x20;
        k->src.v6[1] = 0x01;
        memcpy(&k->src.v6[12], &i, 4);
        k->dst.v6[0] = 0x20;
        k->dst.v6[15] = 1;
    } else {
        k->src.v4 = 0x0a000000 | (i >> 16);
        k->dst.v4 = 0x0a800001;
    }
    k->sport = (uint16_t) i;
    k->dport = 80;
}

static struct result
run_one(const struct panda_policy *p, uint32_t n_conns, uint64_t n_pkts,
        int family, uint64_t seed)
{
    struct panda_table_config cfg;
    struct panda_table_stats st;
    struct panda_table *t;
    struct panda_rng rng;
    struct panda_pkt *keys;
    uint32_t *order;
    struct result r;
    size_t heap0, rss0;
    double t0, t1;
    uint64_t i;
    char *err;

    memset(&r, 0, sizeof r);
    keys = malloc((size_t) n_conns * sizeof *keys);
    order = malloc(n_pkts > 0 ? (size_t) (n_pkts < (1u << 22) ? n_pkts
                                                             : (1u << 22))
                                * sizeof *order : 1);
    if (!keys || !order) {
        cli_log_fatal("out of memory");
    }
    for (i = 0; i < n_conns; i++) {
        make_key(&keys[i], (uint32_t) i, family);
    }
    panda_rng_seed(&rng, seed);
    for (i = 0; i < (n_pkts < (1u << 22) ? n_pkts : (1u << 22)); i++) {
        order[i] = (uint32_t) (panda_rng_next(&rng) % n_conns);
    }

    /* Capacity with headroom so that n_conns fit without eviction. */
    cfg.capacity = n_conns + n_conns / 8 + 64;
    cfg.idle_timeout_ms = 0;
    cfg.n_shards = 0;
    heap0 = heap_bytes();
    rss0 = rss_bytes();
    t = panda_table_create(&cfg, &err);
    if (!t) {
        cli_log_fatal("%s", err ? err : "out of memory");
    }
    /* Populate: every connection gets an entry. */
    for (i = 0; i < n_conns; i++) {
        struct panda_table_verdict v;

        keys[i].payload = 1448;
        panda_table_classify(t, p, &keys[i], 0, &v);
    }
    r.alloc_per_conn = (double) (heap_bytes() - heap0) / n_conns;
    r.rss_per_conn = (double) (rss_bytes() - rss0) / n_conns;

    t0 = cli_clock_mono_s();
    for (i = 0; i < n_pkts; i++) {
        struct panda_pkt *k = &keys[order[i & ((1u << 22) - 1)]];
        struct panda_table_verdict v;

        /* A mix of small and full-size payloads. */
        k->payload = (i & 3) ? 1448 : 120;
        panda_table_classify(t, p, k, (uint32_t) (i >> 10), &v);
    }
    t1 = cli_clock_mono_s();
    r.ns_per_pkt = (t1 - t0) * 1e9 / n_pkts;
    panda_table_stats(t, &st);
    r.evicted = st.evicted;
    r.live = st.connections;
    panda_table_destroy(t);
    free(keys);
    free(order);
    return r;
}

static void
usage(void)
{
    printf("usage: panda-bench [--packets N] [--max-conns N] [--ipv6]"
           " [--seed N]\n"
           "Measures ns/packet of lookup+update and bytes/connection for the"
           " Panda\npolicy and the PIAS baseline at 1, 1k, 100k and 1M live"
           " connections.\n");
}

int
main(int argc, char *argv[])
{
    static const struct option options[] = {
        { "packets", required_argument, NULL, 'p' },
        { "max-conns", required_argument, NULL, 'm' },
        { "ipv6", no_argument, NULL, '6' },
        { "seed", required_argument, NULL, 's' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    static const uint32_t sizes[] = { 1, 1000, 100000, 1000000 };
    uint64_t n_pkts = 4000000, seed = 1;
    uint32_t max_conns = 1000000;
    struct panda_policy panda, pias;
    int family = 4, c;
    size_t i;
    char *err;

    cli_log_set_program("panda-bench");
    while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case 'p':
            n_pkts = cli_parse_u64("--packets", optarg, 1, UINT64_MAX);
            break;
        case 'm':
            max_conns = cli_parse_u64("--max-conns", optarg, 1, UINT32_MAX);
            break;
        case '6':
            family = 6;
            break;
        case 's':
            seed = cli_parse_u64("--seed", optarg, 0, UINT64_MAX);
            break;
        case 'h':
            usage();
            return 0;
        default:
            usage();
            return 2;
        }
    }

    err = panda_policy_parse("id=1,threshold=1200,weights=9000:2,"
                             "thresholds=10000/100000/1000000/10000000/"
                             "30000000/100000000/300000000", &panda);
    if (!err) {
        err = panda_policy_parse("id=2,kind=pias,thresholds=10000/100000/"
                                 "1000000/10000000/30000000/100000000/"
                                 "300000000", &pias);
    }
    if (err) {
        cli_log_fatal("%s", err);
    }

    printf("panda-bench: IPv%d, %" PRIu64 " packets per point, entry size"
           " %zu B (IPv4) / %zu B (IPv6)\n", family, n_pkts,
           panda_table_entry_size(4), panda_table_entry_size(6));
    printf("%10s | %9s %9s %7s | %12s %12s | %7s\n", "conns", "panda ns",
           "pias ns", "ratio", "alloc B/conn", "rss B/conn", "evicted");
    printf("-----------+-----------------------------+"
           "---------------------------+--------\n");
    for (i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        struct result a, b;

        if (sizes[i] > max_conns) {
            continue;
        }
        /* Alternate the order to share warm-up effects fairly. */
        b = run_one(&pias, sizes[i], n_pkts, family, seed);
        a = run_one(&panda, sizes[i], n_pkts, family, seed);
        printf("%10" PRIu32 " | %9.1f %9.1f %7.2f | %12.1f %12.1f | %7"
               PRIu64 "\n", sizes[i], a.ns_per_pkt, b.ns_per_pkt,
               a.ns_per_pkt / b.ns_per_pkt, a.alloc_per_conn,
               a.rss_per_conn, a.evicted);
    }
    printf("\nalloc B/conn: allocator bytes (mallinfo2) held by a table"
           " sized for the\nconnections (+1/8 headroom, both address"
           " families' arrays) / connections;\nrss B/conn: resident memory"
           " growth / connections (untouched IPv6 pages\ncost nothing)."
           "  ratio = panda / pias.\n");
    return 0;
}

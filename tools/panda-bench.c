/*
 * panda-bench: cost of the Panda per-packet path (table lookup + counter
 * update + level mapping) and memory per connection, at 1, 1k, 100k and 1M
 * live connections, for the Panda policy and, as the baseline measured in the
 * same run, the PIAS policy.  Prints a table; there is no pass/fail.
 *
 * With --policy TEXT: that policy instead of the Panda policy, against the
 * same PIAS baseline (e.g. a compose or match policy: what its rules cost).
 * Every packet carries the first bytes of a memcached request as payload
 * (a get or a set, by connection), so that keyword rules compare bytes as
 * they would in the datapath.
 *
 * With --batch N: the packets are classified N at a time, as the datapath
 * does (panda_table_classify_batch()); default 1 (panda_table_classify()).
 *
 * With --flood N: the table under a flood of N distinct tuples (one packet
 * each) once it is full, against the same table below capacity in the same
 * run: ns/packet of both and their ratio, what happened to the established
 * connections (still at their level?), evictions and refusals, memory
 * before and after.
 *
 * With --replay PCAP: no timing; every frame of an Ethernet capture is
 * parsed by lib/panda's frame parser (panda/frame.h) and classified by a
 * connection table under --policy (default the Panda policy below), at the
 * capture's timestamps, and one line per frame says what it got:
 * "INDEX LEVEL DSCP QUEUE", or "INDEX -" for a frame that is not IP.
 * panda-bpf replay prints the same for the BPF classifier, so that the two
 * can be compared packet by packet
 * (tests/system/test_bpf_classifier.py).
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <panda/conn-table.h>
#include <panda/frame.h>
#include <panda/rng.h>

#ifdef HAVE_PCAP
#include <pcap/pcap.h>
#endif

#include <cli/clock.h>
#include <cli/log.h>
#include <cli/opt.h>
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

/* --batch: packets per classification call (1: panda_table_classify()). */
#define MAX_BATCH 256
static unsigned int batch = 1;

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
        /* Payload bytes for keyword rules, set here so that the timed loop
         * is the same as before the rule kinds existed (a fair A/B). */
        keys[i].data = (const uint8_t *) (i & 1 ? "set key 0 0 1400\r\n"
                                                : "get key\r\n");
        keys[i].data_len = 8;
    }
    panda_rng_seed(&rng, seed);
    for (i = 0; i < (n_pkts < (1u << 22) ? n_pkts : (1u << 22)); i++) {
        order[i] = (uint32_t) (panda_rng_next(&rng) % n_conns);
    }

    /* Capacity with headroom so that n_conns fit without eviction. */
    cfg.capacity = n_conns + n_conns / 8 + 64;
    cfg.idle_timeout_ms = 0;
    cfg.n_shards = 0;
    cfg.seed = 0;               /* As the datapath: a seed per table. */
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
    if (batch <= 1) {
        for (i = 0; i < n_pkts; i++) {
            struct panda_pkt *k = &keys[order[i & ((1u << 22) - 1)]];
            struct panda_table_verdict v;

            /* A mix of small and full-size payloads. */
            k->payload = (i & 3) ? 1448 : 120;
            panda_table_classify(t, p, k, i >> 10, &v);
        }
    } else {
        static struct panda_pkt b[MAX_BATCH];
        static struct panda_table_verdict vb[MAX_BATCH];

        for (i = 0; i < n_pkts; i += batch) {
            size_t m = n_pkts - i < batch ? n_pkts - i : batch, j;

            for (j = 0; j < m; j++) {
                b[j] = keys[order[(i + j) & ((1u << 22) - 1)]];
                b[j].payload = ((i + j) & 3) ? 1448 : 120;
            }
            panda_table_classify_batch(t, p, b, m, i >> 10, vb);
        }
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

/* ---- --flood ---- */

struct flood_opts {
    uint64_t tuples;            /* Distinct flood tuples. */
    uint32_t capacity;
    uint32_t established;
    int family;
};

/* Flood tuple 'i': its own destination, so it never meets make_key()'s. */
static void
make_flood_key(struct panda_pkt *k, uint64_t i, int family)
{
    make_key(k, (uint32_t) i, family);
    if (family == 6) {
        memcpy(&k->src.v6[8], &(uint32_t) { (uint32_t) (i >> 32) }, 4);
        k->dst.v6[15] = 2;
    } else {
        k->src.v4 = 0x0a000000 | (uint32_t) (i >> 16);
        k->dst.v4 = 0x0a800002;
        k->dport = (uint16_t) (443 + (i >> 40));
    }
    k->payload = 100;
}

/* Sends 'n' flood tuples from 'first' at about 1 Mpps of simulated time,
 * with one packet of an established connection every 64 of them (they keep
 * sending); returns the CPU seconds spent. */
static double
flood(struct panda_table *t, const struct panda_policy *p,
      struct panda_pkt *est, uint32_t n_est, uint64_t first, uint64_t n,
      int family, panda_msec_t *now)
{
    double t0 = cli_clock_cpu_s();
    uint64_t i;

    for (i = first; i < first + n; i++) {
        struct panda_table_verdict v;
        struct panda_pkt k;

        make_flood_key(&k, i, family);
        panda_table_classify(t, p, &k, *now + i / 1000, &v);
        if (n_est && i % 64 == 0) {
            panda_table_classify(t, p, &est[(i / 64) % n_est],
                                 *now + i / 1000, &v);
        }
    }
    *now += n / 1000 + 1;
    return cli_clock_cpu_s() - t0;
}

static int
run_flood(const struct panda_policy *p, const struct flood_opts *o)
{
    struct panda_table_config cfg = { o->capacity, 120 * 1000, 0, 0 };
    struct panda_table_stats st;
    uint64_t fill, sent = 0, kept = 0;
    double cpu_half, cpu_full;
    size_t rss_full, rss_end;
    struct panda_pkt *est;
    struct panda_table *t;
    panda_msec_t now = 1;
    uint8_t *level;
    uint32_t i;
    char *err;
    int j;

    t = panda_table_create(&cfg, &err);
    est = calloc(o->established ? o->established : 1, sizeof *est);
    level = calloc(o->established ? o->established : 1, 1);
    if (!t || !est || !level) {
        cli_log_fatal("%s", t ? "out of memory" : err);
    }

    /* Every slot touched once, then emptied: the baseline below measures
     * the table, not the kernel's first-touch page faults. */
    flood(t, p, NULL, 0, UINT64_C(1) << 40, o->capacity, o->family, &now);
    panda_table_flush(t);

    /* Established connections: 100 full-size packets each. */
    for (i = 0; i < o->established; i++) {
        make_key(&est[i], i, o->family);
        est[i].payload = 1448;
        for (j = 0; j < 100; j++) {
            struct panda_table_verdict v;

            panda_table_classify(t, p, &est[i], now, &v);
            level[i] = v.level;
        }
    }

    /* Below capacity: new tuples up to half the table (the baseline), then
     * up to full, then the flood. */
    fill = o->capacity / 2 > o->established
           ? o->capacity / 2 - o->established : 0;
    cpu_half = flood(t, p, est, o->established, sent, fill, o->family, &now);
    sent += fill;
    flood(t, p, est, o->established, sent, o->capacity, o->family, &now);
    sent += o->capacity;
    rss_full = rss_bytes();
    cpu_full = flood(t, p, est, o->established, sent, o->tuples, o->family,
                     &now);
    sent += o->tuples;
    rss_end = rss_bytes();

    for (i = 0; i < o->established; i++) {
        struct panda_table_verdict v;

        panda_table_classify(t, p, &est[i], now, &v);
        kept += v.level == level[i] && v.stateful;
    }
    panda_table_stats(t, &st);

    printf("panda-bench --flood: IPv%d, table of %" PRIu32 " connections,"
           " %" PRIu32 " established\n(100 packets each, then one packet in"
           " every 64 of the flood), %" PRIu64 " flood\ntuples after the"
           " table is full (one %d-byte packet each).  CPU time per packet"
           "\n(flood packets and the established packets among them).\n\n",
           o->family, o->capacity, o->established, o->tuples, 100);
    printf("  below capacity (%" PRIu64 " new tuples): %8.1f ns/packet\n",
           fill, fill ? cpu_half * 1e9 / (fill + fill / 64) : 0.0);
    printf("  full, flooded  (%" PRIu64 " new tuples): %8.1f ns/packet"
           "   ratio %.2f (target <= 2)\n", o->tuples,
           cpu_full * 1e9 / (o->tuples + o->tuples / 64),
           fill && cpu_half > 0
           ? (cpu_full / (o->tuples + o->tuples / 64))
             / (cpu_half / (fill + fill / 64)) : 0.0);
    printf("  established connections at their level after the flood:"
           " %" PRIu64 " of %" PRIu32 "\n", kept, o->established);
    printf("  connections %" PRIu64 " (capacity %" PRIu64 "), inserted %"
           PRIu64 ", evicted %" PRIu64 " (established %" PRIu64 "),"
           "\n  refused %" PRIu64 ", expired %" PRIu64 "\n",
           st.connections, st.capacity, st.inserted, st.evicted,
           st.evicted_established, st.refused, st.expired);
    printf("  memory: table %.1f MiB; resident %.1f MiB when full, %.1f MiB"
           " after the flood\n", st.bytes_allocated / 1048576.0,
           rss_full / 1048576.0, rss_end / 1048576.0);
    panda_table_destroy(t);
    free(est);
    free(level);
    return 0;
}

/* ---- --replay ---- */

struct replay_opts {
    uint32_t capacity;
    uint64_t idle_timeout_ms;
};

static int
run_replay(const struct panda_policy *p, const char *file,
           const struct replay_opts *o)
{
#ifdef HAVE_PCAP
    char errbuf[PCAP_ERRBUF_SIZE];
    struct panda_table_config cfg;
    struct pcap_pkthdr *hdr;
    struct panda_table *t;
    const u_char *data;
    uint64_t index = 0;
    pcap_t *pc;
    char *err;
    int rc;

    pc = pcap_open_offline(file, errbuf);
    if (!pc) {
        cli_log_fatal("%s: %s", file, errbuf);
    }
    if (pcap_datalink(pc) != DLT_EN10MB) {
        cli_log_fatal("%s: not an Ethernet capture (link type %d)", file,
                      pcap_datalink(pc));
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.capacity = o->capacity;
    cfg.idle_timeout_ms = o->idle_timeout_ms;
    cfg.seed = 1;
    t = panda_table_create(&cfg, &err);
    if (!t) {
        cli_log_fatal("%s", err ? err : "out of memory");
    }
    while ((rc = pcap_next_ex(pc, &hdr, &data)) == 1) {
        struct panda_frame_buf buf = { data, hdr->caplen };
        struct panda_frame f, scratch;
        struct panda_table_verdict v;
        panda_msec_t now = (panda_msec_t) hdr->ts.tv_sec * 1000
                           + hdr->ts.tv_usec / 1000;

        index++;
        if (!panda_frame_parse(&buf, &f, &scratch, p->tunnels)) {
            printf("%" PRIu64 " -\n", index);
            continue;
        }
        panda_table_classify(t, p, &f.pkt, now, &v);
        printf("%" PRIu64 " %u %u %u\n", index, v.level, v.dscp, v.queue);
    }
    if (rc == PCAP_ERROR) {
        cli_log_fatal("%s: %s", file, pcap_geterr(pc));
    }
    pcap_close(pc);
    panda_table_destroy(t);
    return 0;
#else
    (void) p;
    (void) o;
    cli_log_fatal("--replay %s: this panda-bench was built without libpcap",
                  file);
#endif
}

static void
usage(void)
{
    printf("usage: panda-bench [--packets N] [--max-conns N] [--ipv6]"
           " [--seed N] [--policy TEXT] [--batch N]\n"
           "       panda-bench --flood N [--capacity N] [--established N]"
           " [--ipv6]\n"
           "       panda-bench --replay PCAP [--policy TEXT] [--capacity N]"
           " [--idle-timeout MS]\n"
           "Measures ns/packet of lookup+update and bytes/connection for the"
           " Panda\npolicy and the PIAS baseline at 1, 1k, 100k and 1M live"
           " connections;\nwith --flood, the table flooded with N distinct"
           " tuples once full, against\nthe same table below capacity"
           " (default capacity 1048576, 10000 established).\n"
           "--policy: time that policy (e.g. kind=compose) instead of"
           " Panda's.\n"
           "--replay: the level, DSCP and queue of every frame of a capture"
           " (\"INDEX LEVEL\nDSCP QUEUE\", \"INDEX -\" if not IP), from a"
           " table of --capacity (default\n1048576) connections that"
           " expire after --idle-timeout ms (default 120000).\n"
           "--batch: classify N packets per call, as the datapath does"
           " (default 1).\n"
           "-h, --help: show this help and exit; --version: show the"
           " version and exit.\n");
}

int
main(int argc, char *argv[])
{
    static const struct option options[] = {
        { "packets", required_argument, NULL, 'p' },
        { "max-conns", required_argument, NULL, 'm' },
        { "ipv6", no_argument, NULL, '6' },
        { "seed", required_argument, NULL, 's' },
        { "flood", required_argument, NULL, 'f' },
        { "capacity", required_argument, NULL, 'c' },
        { "established", required_argument, NULL, 'e' },
        { "policy", required_argument, NULL, 'P' },
        { "replay", required_argument, NULL, 'r' },
        { "idle-timeout", required_argument, NULL, 'i' },
        { "batch", required_argument, NULL, 'b' },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    static const uint32_t sizes[] = { 1, 1000, 100000, 1000000 };
    uint64_t n_pkts = 4000000, seed = 1;
    uint32_t max_conns = 1000000;
    struct flood_opts fl = { 0, PANDA_TABLE_DEFAULT_CAPACITY, 10000, 4 };
    struct panda_policy panda, pias;
    const char *policy_text = NULL, *replay = NULL;
    struct replay_opts ro = { PANDA_TABLE_DEFAULT_CAPACITY,
                              PANDA_TABLE_DEFAULT_IDLE_MS };
    int family = 4, c;
    size_t i;
    char *err;

    cli_log_set_program("panda-bench");
    while ((c = cli_opt_next(argc, argv, "h", options, usage)) != -1) {
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
        case 'f':
            fl.tuples = cli_parse_u64("--flood", optarg, 1, UINT64_MAX / 2);
            break;
        case 'c':
            fl.capacity = cli_parse_u64("--capacity", optarg, 64, 1u << 30);
            ro.capacity = fl.capacity;
            break;
        case 'r':
            replay = optarg;
            break;
        case 'i':
            ro.idle_timeout_ms = cli_parse_u64("--idle-timeout", optarg, 0,
                                               PANDA_MAX_DURATION_MS);
            break;
        case 'e':
            fl.established = cli_parse_u64("--established", optarg, 0,
                                           1u << 24);
            break;
        case 'P':
            policy_text = optarg;
            break;
        case 'b':
            batch = cli_parse_u64("--batch", optarg, 1, MAX_BATCH);
            break;
        }
    }
    cli_opt_no_operands(argc, argv);

    err = panda_policy_parse(policy_text ? policy_text
                             : "id=1,threshold=1200,weights=9000:2,"
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
    if (replay) {
        return run_replay(&panda, replay, &ro);
    }
    if (fl.tuples) {
        fl.family = family;
        return run_flood(&panda, &fl);
    }

    printf("panda-bench: IPv%d, %" PRIu64 " packets per point, entry size"
           " %zu B (IPv4) / %zu B (IPv6)\n", family, n_pkts,
           panda_table_entry_size(4), panda_table_entry_size(6));
    if (policy_text) {
        printf("policy: %s\n", policy_text);
    }
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

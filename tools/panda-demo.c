/*
 * panda-demo: marks the packets of a synthetic trace with lib/panda and shows
 * how Panda and PIAS treat a long-lived memcached connection and bulk
 * web-search responses.  The trace: one persistent memcached connection
 * (small GET responses, now and then one larger value) and a sequence of
 * web-search flows drawn from a flow-size CDF, interleaved packet by packet.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/cdf.h>
#include <panda/conn-table.h>

#include <cli/log.h>
#include <cli/opt.h>
#include <cli/parse.h>

#define MSS 1448

struct flow {
    struct panda_pkt key;
    uint64_t left;              /* Payload bytes still to send. */
    uint64_t size;
    uint64_t level_pkts[PANDA_MAX_LEVELS];
};

struct scheme {
    const char *name;
    struct panda_policy policy;
    struct panda_table *table;
    uint64_t mc_level_pkts[PANDA_MAX_LEVELS];
    uint64_t bulk_level_pkts[PANDA_MAX_LEVELS];
    uint64_t mc_dscp_seen[64];
};

static void
tcp_key(struct panda_pkt *k, uint16_t sport, uint16_t dport)
{
    memset(k, 0, sizeof *k);
    k->family = 4;
    k->proto = 6;
    k->src.v4 = htonl(0x0a000002);      /* 10.0.0.2, the server. */
    k->dst.v4 = htonl(0x0a000001);
    k->sport = htons(sport);
    k->dport = htons(dport);
}

static void
mark(struct scheme *s, struct panda_pkt *k, uint32_t payload, uint8_t flags,
     panda_msec_t now, uint64_t *level_pkts)
{
    struct panda_table_verdict v;

    k->payload = payload;
    k->tcp_flags = flags;
    panda_table_classify(s->table, &s->policy, k, now, &v);
    level_pkts[v.level]++;
}

static void
print_levels(const char *what, const struct scheme *s, const uint64_t *pkts)
{
    uint64_t total = 0;
    int i;

    for (i = 0; i < s->policy.n_levels; i++) {
        total += pkts[i];
    }
    printf("  %-6s %-22s", s->name, what);
    for (i = 0; i < s->policy.n_levels; i++) {
        printf(" %5.1f%%", total ? 100.0 * pkts[i] / total : 0.0);
    }
    printf("\n");
}

static void
usage(void)
{
    printf("usage: panda-demo [--cdf FILE] [--requests N] [--flows N]"
           " [--panda POLICY]\n                  [--pias POLICY]"
           " [--seed N]\n"
           "A ten-second offline demo of the marking: a memcached"
           " connection and\nweb-search flows through lib/panda under"
           " Panda and PIAS.\n"
           "  --cdf FILE       flow sizes (default: a built-in web-search"
           " CDF)\n"
           "  --requests N     memcached requests (default 10000)\n"
           "  --flows N        web-search flows (default 200)\n"
           "  --panda POLICY   Panda's policy, in lib/panda's text form\n"
           "  --pias POLICY    PIAS's policy\n"
           "  --seed N         random seed (default 1)\n"
           "  -h, --help       show this help and exit\n"
           "  --version        show the version and exit\n");
}

int
main(int argc, char *argv[])
{
    static const struct option options[] = {
        { "cdf", required_argument, NULL, 'c' },
        { "requests", required_argument, NULL, 'r' },
        { "flows", required_argument, NULL, 'f' },
        { "panda", required_argument, NULL, 'P' },
        { "pias", required_argument, NULL, 'I' },
        { "seed", required_argument, NULL, 's' },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    const char *cdf_file = NULL;
    const char *panda_s = "id=1,threshold=1000,thresholds=20000/100000/"
                          "500000/1000000/2000000/5000000/10000000";
    const char *pias_s = "id=2,kind=pias,thresholds=20000/100000/500000/"
                         "1000000/2000000/5000000/10000000";
    unsigned long requests = 10000, n_flows = 200;
    uint64_t seed = 1;
    struct panda_cdf cdf;
    struct scheme schemes[2];
    int c, i;
    char *err;

    cli_log_set_program("panda-demo");
    while ((c = cli_opt_next(argc, argv, "h", options, usage)) != -1) {
        switch (c) {
        case 'c':
            cdf_file = optarg;
            break;
        case 'r':
            requests = cli_parse_u64("--requests", optarg, 1, ULONG_MAX);
            break;
        case 'f':
            n_flows = cli_parse_u64("--flows", optarg, 1, ULONG_MAX);
            break;
        case 'P':
            panda_s = optarg;
            break;
        case 'I':
            pias_s = optarg;
            break;
        case 's':
            seed = cli_parse_u64("--seed", optarg, 0, UINT64_MAX);
            break;
        }
    }
    cli_opt_no_operands(argc, argv);
    if (cdf_file) {
        err = panda_cdf_load(&cdf, cdf_file);
    } else {
        /* A coarse web-search-like distribution (DCTCP paper shape). */
        err = panda_cdf_parse(&cdf, "6000 0.15\n13000 0.2\n19000 0.3\n"
                              "33000 0.4\n53000 0.53\n133000 0.6\n"
                              "667000 0.7\n1333000 0.8\n3333000 0.9\n"
                              "6667000 0.97\n20000000 1\n", "builtin");
    }
    if (err) {
        fprintf(stderr, "panda-demo: %s\n", err);
        return 1;
    }

    memset(schemes, 0, sizeof schemes);
    schemes[0].name = "panda";
    schemes[1].name = "pias";
    for (i = 0; i < 2; i++) {
        struct panda_table_config cfg = { 4096, 0, 0, 0 };

        err = panda_policy_parse(i ? pias_s : panda_s, &schemes[i].policy);
        if (err) {
            cli_log_usage("--%s: %s", schemes[i].name, err);
        }
        schemes[i].table = panda_table_create(&cfg, &err);
    }

    printf("panda-demo: one memcached connection (%lu GET responses) and"
           " web-search\nflows (sizes from %s, %lu client ports) through"
           " lib/panda.\n\n", requests,
           cdf_file ? cdf_file : "a built-in CDF", n_flows);
    for (i = 0; i < 2; i++) {
        char buf[512];

        panda_policy_format(&schemes[i].policy, buf, sizeof buf);
        printf("  %-6s panda(%s)\n", schemes[i].name, buf);
    }

    for (i = 0; i < 2; i++) {
        struct scheme *s = &schemes[i];
        struct panda_rng rng;
        struct panda_pkt mc;
        struct flow bulk;
        unsigned long r, f = 0;
        panda_msec_t now = 0;

        panda_rng_seed(&rng, seed);
        tcp_key(&mc, 11211, 40000);
        mark(s, &mc, 0, PANDA_TCP_SYN | PANDA_TCP_ACK, now,
             s->mc_level_pkts);
        memset(&bulk, 0, sizeof bulk);
        for (r = 0; r < requests; r++) {
            /* One GET response: mostly small values, 2% one MTU or more. */
            double u = panda_rng_uniform(&rng);
            uint32_t value = u < 0.85 ? 100 + (uint32_t) (u * 350)
                             : u < 0.98 ? 700 : 4000;
            uint32_t sent;

            for (sent = 0; sent < value; sent += MSS) {
                uint32_t len = value - sent < MSS ? value - sent : MSS;

                mark(s, &mc, len, PANDA_TCP_ACK, now, s->mc_level_pkts);
            }
            /* Meanwhile about 20 full-size bulk packets are sent. */
            for (int j = 0; j < 20; j++) {
                if (!bulk.left) {
                    if (bulk.size) {
                        mark(s, &bulk.key, 0, PANDA_TCP_FIN, now,
                             s->bulk_level_pkts);
                    }
                    /* Every flow a new 4-tuple, as real clients make
                     * (TIME_WAIT keeps a closed one out of use for a
                     * minute): the ports cycle, the client address moves
                     * on each cycle.  A reused tuple would inherit the
                     * closed connection's counter (docs/design.md, "Control
                     * packets"). */
                    tcp_key(&bulk.key, 80,
                            (uint16_t) (50000 + f % n_flows));
                    bulk.key.dst.v4 = htonl(0x0a000001 + f / n_flows);
                    f++;
                    bulk.size = bulk.left
                        = (uint64_t) panda_cdf_sample(&cdf, &rng) + 1;
                    mark(s, &bulk.key, 0, PANDA_TCP_SYN | PANDA_TCP_ACK, now,
                         s->bulk_level_pkts);
                }
                uint32_t len = bulk.left < MSS ? (uint32_t) bulk.left : MSS;

                bulk.left -= len;
                mark(s, &bulk.key, len, PANDA_TCP_ACK, now,
                     s->bulk_level_pkts);
            }
            now++;
        }
    }

    printf("\nShare of packets per level (level 0 = top priority):\n");
    printf("  %-6s %-22s", "scheme", "traffic");
    for (i = 0; i < schemes[0].policy.n_levels; i++) {
        printf("  L%d   ", i);
    }
    printf("\n");
    for (i = 0; i < 2; i++) {
        print_levels("memcached", &schemes[i], schemes[i].mc_level_pkts);
        print_levels("web-search (bulk)", &schemes[i],
                     schemes[i].bulk_level_pkts);
    }
    {
        struct panda_pkt mc;
        int64_t c0 = 0, c1 = 0;

        tcp_key(&mc, 11211, 40000);
        panda_table_lookup(schemes[0].table, &mc, &c0);
        panda_table_lookup(schemes[1].table, &mc, &c1);
        printf("\nmemcached connection at the end: panda counter %" PRId64
               " (level %d, DSCP %d), pias counter %" PRId64
               " (level %d, DSCP %d)\n", c0,
               panda_policy_level(&schemes[0].policy, c0),
               schemes[0].policy.dscp[panda_policy_level(&schemes[0].policy,
                                                         c0)],
               c1, panda_policy_level(&schemes[1].policy, c1),
               schemes[1].policy.dscp[panda_policy_level(&schemes[1].policy,
                                                         c1)]);
    }
    for (i = 0; i < 2; i++) {
        panda_table_destroy(schemes[i].table);
    }
    panda_cdf_destroy(&cdf);
    return 0;
}

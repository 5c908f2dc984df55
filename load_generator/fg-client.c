/*
 * panda-fg-client: the flow generator's client.  Starts flows (requests to
 * panda-fg-server for a number of bytes drawn from a flow-size CDF) either
 * in a closed loop (a fixed number in flight) or an open loop (Poisson
 * arrivals at a target load), from one epoll loop, and reports each flow's
 * completion time (FCT).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <panda/cdf.h>
#include "lg-common.h"

#define RECV_BUF (256 * 1024)
#define RECV_BUDGET (4 * 1024 * 1024)   /* Bytes per connection per wakeup. */
#define CLOSE_WAIT_NS 2000000000ull     /* How long to wait for the server's
                                         * FIN after a flow completed. */
#define HOUSEKEEPING_NS 100000000ull

/* FCT buckets (thesis section 4.4): (0, 100KB], (100KB, 10MB], > 10MB.
 * Defined here only: the JSON summary carries each bucket's limits
 * ("size_range_bytes"), and the testbed and the reports read them from
 * there. */
#define SMALL_MAX 100000ull
#define MEDIUM_MAX 10000000ull
enum { B_SMALL, B_MEDIUM, B_LARGE, B_ALL, N_BUCKETS };
static const char *const bucket_names[N_BUCKETS] = {
    "small", "medium", "large", "all"
};

/* Servers, a flow's DSCP choices: the command line's one, or a
 * TrafficGenerator configuration's list (--config). */
#define MAX_SERVERS 256
struct server {
    const char *host, *port;
    struct sockaddr_storage addr;
    socklen_t len;
};

struct weighted {
    unsigned int value, weight;
};

struct options {
    const char *server, *port, *bind;
    const char *cdf_file;
    bool cdf_packets;           /* --cdf-unit packets: sizes x mss. */
    uint32_t mss;
    const char *config;         /* TrafficGenerator client configuration. */
    bool tg_output;             /* --output-format trafficgenerator. */
    struct server servers[MAX_SERVERS];
    size_t n_servers;
    struct weighted dscps[64];  /* A flow's DSCP, drawn by weight. */
    size_t n_dscps;
    unsigned int dscp_total;
    uint64_t fixed_size;
    bool open_loop;
    unsigned int concurrency;
    double load_mbps;
    uint64_t flows;             /* 0: no limit. */
    double duration;            /* Seconds, 0: no limit. */
    bool pool;
    uint64_t seed;
    int dscp;                   /* -1: leave alone. */
    const char *output, *json;
    double drain_timeout;
    double flow_timeout;        /* 0: none. */
    bool window;                /* --fct-window given. */
    double window_start;        /* Seconds after the run's start. */
    double window_length;       /* Seconds; 0: until the run ends. */
    uint64_t max_failures;      /* 0: never give up. */
    uint64_t max_inflight;
    bool dry_run;
    int progress;               /* -1 auto. */
    bool quiet;
};

enum conn_state { CONNECTING, SENDING, RECEIVING, IDLE, CLOSING };

struct conn {
    int fd;
    enum conn_state state;
    size_t idx;                 /* In run.conns. */
    size_t idle_idx;            /* In run.idle, when IDLE. */
    bool has_flow;
    uint64_t id, size, received, start_ns;
    size_t server;              /* Index in run.o.servers. */
    int dscp;                   /* The flow's, -1: left alone. */
    uint8_t req[LG_FG_REQ_LEN];
    size_t sent;
    uint64_t close_deadline;
};

/* Failure reasons, as written in the per-flow file and the summary. */
enum reason {
    R_REFUSED, R_RESET, R_EOF, R_TIMEOUT, R_ERROR, R_FLOW_TIMEOUT,
    R_DRAIN_TIMEOUT, R_INTERRUPTED, N_REASONS
};
static const char *const reason_names[N_REASONS] = {
    "refused", "reset", "eof", "timeout", "error", "flow_timeout",
    "drain_timeout", "interrupted"
};

static struct run {
    struct options o;
    struct panda_cdf cdf;
    double mean_size;
    struct panda_rng size_rng, arrival_rng, pick_rng;
    struct sockaddr_storage bind;
    socklen_t bind_len;

    int epfd, tfd, sfd;
    uint64_t timer_armed;
    struct cli_clock clk;
    struct lg_progress progress;
    FILE *out;

    struct conn **conns;
    size_t n_conns, conns_cap;
    struct conn **idle;
    size_t n_idle, idle_cap;

    uint64_t start_ns, gen_end_ns, end_ns;
    uint64_t started, completed, unfinished, failures;
    uint64_t reasons[N_REASONS];
    uint64_t bytes_requested, bytes_received, conns_opened;
    uint64_t inflight, max_inflight;
    double inflight_integral;
    uint64_t inflight_since;
    uint64_t late_arrivals;
    bool aborted, interrupted;
    bool generating;            /* Still starting flows. */

    struct fct_stats {
        struct lg_vec fct[N_BUCKETS];   /* Completed flows' FCTs, us. */
        uint64_t unfinished[N_BUCKETS];
    } all, window;              /* Every flow; flows started in the
                                 * --fct-window. */
} run;

static int epoll_timer_tag, epoll_signal_tag;

static void closed_loop_refill(void);

static void
usage(void)
{
    printf("\
Usage: panda-fg-client [OPTION]...\n\
Flow generator client: requests flows from panda-fg-server and reports each\n\
flow's completion time (FCT).  Each flow is one request, for a number of\n\
bytes the server sends back.\n\
\n\
Server:\n\
  -s, --server=HOST        server address (default 127.0.0.1)\n\
  -p, --port=PORT          server port (default 5001)\n\
      --bind=ADDR          local address for the client's connections\n\
Flow sizes (one of):\n\
      --cdf=FILE           draw sizes from a CDF file (\"SIZE CDF\" lines)\n\
      --size=SIZE          fixed size in bytes (e.g. 10K, 1.5Mi)\n\
      --cdf-unit=UNIT      the CDF's sizes are bytes (default) or packets\n\
                           of --mss bytes (TrafficGenerator's CDF_*.txt)\n\
      --mss=SIZE           bytes per packet with --cdf-unit packets\n\
                           (default 1460)\n\
Load (one of; default --connections=1):\n\
  -c, --connections=N      closed loop: keep N flows in flight\n\
  -l, --load=RATE          open loop: Poisson arrivals at RATE (bit/s with a\n\
                           unit, e.g. 50M, 1G; a bare number is Mbit/s)\n\
Limits (at least one):\n\
  -n, --requests=N         start N flows\n\
  -d, --duration=DURATION  start flows for DURATION (e.g. 10s, 500ms; a\n\
                           bare number is seconds)\n\
      --drain-timeout=DURATION\n\
                           then wait up to DURATION for flows in flight\n\
                           (default 60s)\n\
      --flow-timeout=DURATION\n\
                           give up on a flow after DURATION (default: never)\n\
      --fct-window=START[:LENGTH]\n\
                           also summarise the FCT of the flows that start\n\
                           from START after the run's start, for LENGTH\n\
                           (durations; default: until the run ends)\n\
      --max-failures=N     stop starting flows after N failed ones\n\
                           (default 100, 0 = never stop)\n\
      --max-inflight=N     open loop: at most N flows in flight, later\n\
                           arrivals wait (default 4096)\n\
Connections:\n\
      --pool               reuse persistent connections (default: one new\n\
                           TCP connection per flow)\n\
      --dscp=N             DSCP (0..63) for both directions of every flow\n\
TrafficGenerator (HKUST-SING) compatibility:\n\
      --config=FILE        its client configuration: server HOST PORT\n\
                           (repeatable: each flow goes to one at random),\n\
                           req_size_dist FILE, dscp VALUE WEIGHT, rate\n\
                           0Mbps WEIGHT, fanout 1 WEIGHT, load RATE,\n\
                           num_reqs N; options given here win\n\
      --output-format=F    --output's lines: panda (default) or\n\
                           trafficgenerator (size, FCT us, DSCP, rate,\n\
                           goodput Mbit/s; completed flows only)\n\
Output:\n\
  -o, --output=FILE        one line per flow (\"-\" for stdout)\n\
  -j, --json=FILE          JSON summary (\"-\" for stdout)\n\
      --seed=N             random seed (default 1): same seed, same flows\n\
      --dry-run            print the flow sequence (id, size, arrival) to\n\
                           --output or stdout without connecting; needs\n\
                           --requests\n\
      --progress, --no-progress\n\
                           progress line on stderr (default: if a terminal)\n\
  -q, --quiet              no summary line on stderr\n\
  -h, --help               show this help and exit\n\
      --version            show the version and exit\n\
\n\
Deprecated spellings, still accepted with a warning: -f, --flows (use\n\
-n, --requests), --concurrency (use -c, --connections).\n\
\n\
Exit status: 0 if every flow completed, 3 if some did not (or were never\n\
started because of --max-failures), 2 on bad arguments, 1 on setup\n\
errors.  See load_generator/README.md for the file formats.\n");
}

/* A TrafficGenerator rate, "500Mbps" (its unit: Mbit/s) or one in the
 * project's syntax (500M), in bit/s; false if 'text' is neither. */
static bool
tg_rate(const char *text, double *bps)
{
    char buf[64];
    size_t n = strlen(text);

    if (n > 4 && n < sizeof buf && !strcmp(text + n - 4, "Mbps")) {
        memcpy(buf, text, n - 4);
        buf[n - 4] = '\0';
        text = buf;
    }
    return cli_parse_rate_value(text, 1e6, bps);
}

/* Reads the --config file, a TrafficGenerator (HKUST-SING) client
 * configuration: one key and its values per line.  What the command line
 * gave ('have_servers', 'have_dscp', 'have_load': --server/--port, --dscp,
 * --connections/--load; and --cdf/--size, --requests) wins over the file.
 * Keys of TrafficGenerator this client cannot honour are refused rather
 * than ignored: a rate limit other than 0Mbps (none), a fanout above 1
 * (incast requests). */
static void
read_tg_config(struct options *o, bool have_servers, bool have_dscp,
               bool have_load)
{
    const char *file = o->config;
    char line[1024];
    int lineno = 0;
    FILE *f = fopen(file, "r");

    if (!f) {
        cli_log_fatal("--config: %s: %s", file, strerror(errno));
    }
    while (fgets(line, sizeof line, f)) {
        char key[64], a[512], b[64], extra[2];
        char *hash = strchr(line, '#');
        int n;

        lineno++;
        if (hash) {
            *hash = '\0';
        }
        n = sscanf(line, "%63s %511s %63s %1s", key, a, b, extra);
        if (n <= 0) {
            continue;
        }
#define BAD(...)                                                        \
        cli_log_fatal("--config: %s:%d: %s: %s", file, lineno, key,     \
                      panda_asprintf(__VA_ARGS__))
        if (!strcmp(key, "server")) {
            if (n != 3) {
                BAD("expected \"server HOST PORT\"");
            }
            if (o->n_servers == MAX_SERVERS) {
                BAD("more than %d servers", MAX_SERVERS);
            }
            if (!have_servers) {
                struct server *sv = &o->servers[o->n_servers++];

                sv->host = panda_asprintf("%s", a);
                sv->port = panda_asprintf("%s", b);
            }
        } else if (!strcmp(key, "req_size_dist")) {
            if (n != 2) {
                BAD("expected \"req_size_dist FILE\"");
            }
            if (!o->cdf_file && !o->fixed_size) {
                o->cdf_file = panda_asprintf("%s", a);
            }
        } else if (!strcmp(key, "dscp") || !strcmp(key, "fanout")
                   || !strcmp(key, "rate")) {
            unsigned long long w;
            double v;
            char *end;

            if (n != 3) {
                BAD("expected \"%s VALUE WEIGHT\"", key);
            }
            errno = 0;
            w = strtoull(b, &end, 10);
            if (*end || errno || b[0] == '-' || w > UINT_MAX / 64) {
                BAD("weight \"%s\" is not a non-negative integer", b);
            }
            if (!strcmp(key, "rate")) {
                if (!tg_rate(a, &v)) {
                    BAD("\"%s\" is not a rate", a);
                }
                if (v != 0 && w) {
                    BAD("%s: a per-flow sending rate limit is not "
                        "implemented here (panda-fg-server sends as fast as "
                        "TCP lets it); use 0Mbps (no limit) or leave the key "
                        "out", a);
                }
                continue;
            }
            v = strtod(a, &end);
            if (*end || a[0] == '-' || v != floor(v)) {
                BAD("\"%s\" is not a non-negative integer", a);
            }
            if (!strcmp(key, "fanout")) {
                if (v != 1 && w) {
                    BAD("%s: requests of several synchronized flows "
                        "(incast) are not implemented here; fanout 1 only "
                        "(sim/run.py tsl simulates incast)", a);
                }
                continue;
            }
            if (v > 63) {
                BAD("%s is not a DSCP (0..63)", a);
            }
            if (o->n_dscps == 64) {
                BAD("more than 64 DSCP lines");
            }
            if (!have_dscp) {
                o->dscps[o->n_dscps].value = v;
                o->dscps[o->n_dscps++].weight = w;
            }
        } else if (!strcmp(key, "load")) {
            double v;

            if (n != 2) {
                BAD("expected \"load RATE\"");
            }
            if (!tg_rate(a, &v) || !(v > 0)) {
                BAD("\"%s\" is not a positive rate", a);
            }
            if (!have_load) {
                o->load_mbps = v / 1e6;
            }
        } else if (!strcmp(key, "num_reqs")) {
            if (n != 2) {
                BAD("expected \"num_reqs N\"");
            }
            if (!o->flows) {
                o->flows = cli_parse_u64("--config num_reqs", a, 1,
                                         UINT64_MAX / 2);
            }
        } else {
            BAD("unknown key (TrafficGenerator's are server, req_size_dist,"
                " dscp, rate, fanout, load, num_reqs)");
        }
#undef BAD
    }
    fclose(f);
    if (o->n_dscps) {
        unsigned int total = 0;

        for (size_t i = 0; i < o->n_dscps; i++) {
            total += o->dscps[i].weight;
        }
        if (!total) {
            cli_log_fatal("--config: %s: the dscp lines' weights add up to "
                          "0", file);
        }
    }
}

/* A duration option of the flow generator: seconds without a unit. */
static double
parse_seconds(const char *option, const char *arg, double min)
{
    return cli_parse_duration(option, arg, 1, min, 1e7);
}

static void
parse_options(int argc, char *argv[], struct options *o)
{
    enum {
        OPT_BIND = 256, OPT_SIZE, OPT_DRAIN, OPT_FLOW_TIMEOUT,
        OPT_MAX_FAILURES, OPT_MAX_INFLIGHT, OPT_POOL, OPT_DSCP, OPT_SEED,
        OPT_DRY_RUN, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_FCT_WINDOW,
        OPT_CDF, OPT_OLD_CONCURRENCY, OPT_OLD_FLOWS, OPT_CDF_UNIT, OPT_MSS,
        OPT_CONFIG, OPT_OUTPUT_FORMAT,
    };
    static const struct option longopts[] = {
        { "server", required_argument, NULL, 's' },
        { "port", required_argument, NULL, 'p' },
        { "bind", required_argument, NULL, OPT_BIND },
        { "cdf", required_argument, NULL, OPT_CDF },
        { "size", required_argument, NULL, OPT_SIZE },
        { "cdf-unit", required_argument, NULL, OPT_CDF_UNIT },
        { "mss", required_argument, NULL, OPT_MSS },
        { "config", required_argument, NULL, OPT_CONFIG },
        { "output-format", required_argument, NULL, OPT_OUTPUT_FORMAT },
        { "connections", required_argument, NULL, 'c' },
        { "load", required_argument, NULL, 'l' },
        { "requests", required_argument, NULL, 'n' },
        { "duration", required_argument, NULL, 'd' },
        { "drain-timeout", required_argument, NULL, OPT_DRAIN },
        { "flow-timeout", required_argument, NULL, OPT_FLOW_TIMEOUT },
        { "fct-window", required_argument, NULL, OPT_FCT_WINDOW },
        { "max-failures", required_argument, NULL, OPT_MAX_FAILURES },
        { "max-inflight", required_argument, NULL, OPT_MAX_INFLIGHT },
        { "pool", no_argument, NULL, OPT_POOL },
        { "dscp", required_argument, NULL, OPT_DSCP },
        { "output", required_argument, NULL, 'o' },
        { "json", required_argument, NULL, 'j' },
        { "seed", required_argument, NULL, OPT_SEED },
        { "dry-run", no_argument, NULL, OPT_DRY_RUN },
        { "progress", no_argument, NULL, OPT_PROGRESS },
        { "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
        { "quiet", no_argument, NULL, 'q' },
        /* Deprecated. */
        { "concurrency", required_argument, NULL, OPT_OLD_CONCURRENCY },
        { "flows", required_argument, NULL, OPT_OLD_FLOWS },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    bool have_conc = false, have_load = false, have_server = false;
    bool have_port = false, have_dscp = false;
    int c;

    memset(o, 0, sizeof *o);
    o->server = "127.0.0.1";
    o->port = "5001";
    o->concurrency = 1;
    o->seed = 1;
    o->dscp = -1;
    o->drain_timeout = 60;
    o->max_failures = 100;
    o->max_inflight = 4096;
    o->progress = -1;
    o->mss = 1460;
    while ((c = cli_opt_next(argc, argv, "s:p:c:n:f:l:d:o:j:qh", longopts,
                             usage)) != -1) {
        switch (c) {
        case 's':
            o->server = optarg;
            have_server = true;
            break;
        case 'p':
            cli_parse_u64("--port", optarg, 1, 65535);
            o->port = optarg;
            have_port = true;
            break;
        case OPT_BIND:
            o->bind = optarg;
            break;
        case OPT_CDF:
            o->cdf_file = optarg;
            break;
        case OPT_CDF_UNIT:
            if (strcmp(optarg, "bytes") && strcmp(optarg, "packets")) {
                cli_log_usage("--cdf-unit: \"%s\" is not bytes or packets",
                              optarg);
            }
            o->cdf_packets = !strcmp(optarg, "packets");
            break;
        case OPT_MSS:
            o->mss = cli_parse_bytes("--mss", optarg, 1, 65535);
            break;
        case OPT_CONFIG:
            o->config = optarg;
            break;
        case OPT_OUTPUT_FORMAT:
            if (strcmp(optarg, "panda") && strcmp(optarg, "trafficgenerator")) {
                cli_log_usage("--output-format: \"%s\" is not panda or "
                              "trafficgenerator", optarg);
            }
            o->tg_output = !strcmp(optarg, "trafficgenerator");
            break;
        case OPT_SIZE:
            o->fixed_size = cli_parse_bytes("--size", optarg, 1,
                                           LG_FG_MAX_SIZE);
            break;
        case OPT_OLD_CONCURRENCY:
            cli_log_deprecated("--concurrency", "--connections");
            /* Fall through. */
        case 'c':
            o->concurrency = cli_parse_u64("--connections", optarg, 1,
                                          100000);
            have_conc = true;
            break;
        case 'l':
            o->load_mbps = cli_parse_rate("--load", optarg, 1e6, 1, 1e13)
                           / 1e6;
            have_load = true;
            break;
        case 'f':
        case OPT_OLD_FLOWS:
            cli_log_deprecated(c == 'f' ? "-f" : "--flows",
                               c == 'f' ? "-n" : "--requests");
            /* Fall through. */
        case 'n':
            if (o->flows) {
                cli_log_usage("the number of flows is given twice (-n is "
                              "--requests; the old -n, flows in flight, "
                              "is -c, --connections)");
            }
            o->flows = cli_parse_u64("--requests", optarg, 1,
                                     UINT64_MAX / 2);
            break;
        case 'd':
            o->duration = parse_seconds("--duration", optarg, 1e-3);
            break;
        case OPT_DRAIN:
            o->drain_timeout = parse_seconds("--drain-timeout", optarg, 0);
            break;
        case OPT_FLOW_TIMEOUT:
            o->flow_timeout = parse_seconds("--flow-timeout", optarg, 1e-3);
            break;
        case OPT_FCT_WINDOW: {
            char *colon = strchr(optarg, ':');

            if (colon) {
                *colon = '\0';
                o->window_length = parse_seconds("--fct-window length",
                                                 colon + 1, 1e-3);
            }
            o->window_start = parse_seconds("--fct-window start", optarg, 0);
            o->window = true;
            break;
        }
        case OPT_MAX_FAILURES:
            o->max_failures = cli_parse_u64("--max-failures", optarg, 0,
                                           UINT64_MAX);
            break;
        case OPT_MAX_INFLIGHT:
            o->max_inflight = cli_parse_u64("--max-inflight", optarg, 1,
                                           1000000);
            break;
        case OPT_POOL:
            o->pool = true;
            break;
        case OPT_DSCP:
            o->dscp = cli_parse_u64("--dscp", optarg, 0, 63);
            have_dscp = true;
            break;
        case 'o':
            o->output = optarg;
            break;
        case 'j':
            o->json = optarg;
            break;
        case OPT_SEED:
            o->seed = cli_parse_u64("--seed", optarg, 0, UINT64_MAX);
            break;
        case OPT_DRY_RUN:
            o->dry_run = true;
            break;
        case OPT_PROGRESS:
            o->progress = 1;
            break;
        case OPT_NO_PROGRESS:
            o->progress = 0;
            break;
        case 'q':
            o->quiet = true;
            break;
        }
    }
    cli_opt_no_operands(argc, argv);
    if (o->config) {
        read_tg_config(o, have_server || have_port, have_dscp, have_load
                       || have_conc);
    }
    if (!o->n_servers) {
        o->servers[0].host = o->server;
        o->servers[0].port = o->port;
        o->n_servers = 1;
    }
    if (!o->n_dscps && o->dscp >= 0) {
        o->dscps[0].value = o->dscp;
        o->dscps[0].weight = 1;
        o->n_dscps = 1;
    }
    for (size_t i = 0; i < o->n_dscps; i++) {
        o->dscp_total += o->dscps[i].weight;
    }
    if (o->load_mbps > 0 && !have_conc) {
        have_load = true;       /* The configuration's load. */
    }
    if (!o->cdf_file == !o->fixed_size) {
        cli_log_usage("give exactly one of --cdf=FILE and --size=SIZE");
    }
    if (have_conc && have_load) {
        cli_log_usage("--connections (closed loop) and --load (open loop) "
                      "exclude each other");
    }
    o->open_loop = have_load;
    if (!o->flows && !o->duration) {
        cli_log_usage("give --requests=N and/or --duration=DURATION");
    }
    if (o->dry_run && !o->flows) {
        cli_log_usage("--dry-run needs --requests=N");
    }
    if (o->cdf_packets && !o->cdf_file) {
        cli_log_usage("--cdf-unit: only with --cdf (or --config's "
                      "req_size_dist)");
    }
    if (o->tg_output && !o->output) {
        cli_log_usage("--output-format: only with --output=FILE");
    }
}

/* ---- Flow sequence. ---- */

static uint64_t
next_size(void)
{
    double s;

    if (run.o.fixed_size) {
        return run.o.fixed_size;
    }
    s = llround(panda_cdf_sample(&run.cdf, &run.size_rng));
    if (s < 1) {
        return 1;
    }
    return s > (double) LG_FG_MAX_SIZE ? LG_FG_MAX_SIZE : (uint64_t) s;
}

/* The next flow's server: drawn uniformly among several, as
 * TrafficGenerator does (its own stream: the sizes do not depend on it). */
static size_t
next_server(void)
{
    size_t n = run.o.n_servers;

    return n < 2 ? 0 : (size_t) (panda_rng_uniform(&run.pick_rng) * n) % n;
}

/* The next flow's DSCP: drawn by weight among the choices, -1 for none. */
static int
next_dscp(void)
{
    double u;
    size_t i;

    if (!run.o.n_dscps) {
        return -1;
    }
    if (run.o.n_dscps == 1) {
        return run.o.dscps[0].value;
    }
    u = panda_rng_uniform(&run.pick_rng) * run.o.dscp_total;
    for (i = 0; i + 1 < run.o.n_dscps; i++) {
        if (u < run.o.dscps[i].weight) {
            break;
        }
        u -= run.o.dscps[i].weight;
    }
    return run.o.dscps[i].value;
}

/* Mean time between open-loop arrivals, in nanoseconds. */
static double
mean_interarrival_ns(void)
{
    return run.mean_size * 8 / (run.o.load_mbps * 1e6) * 1e9;
}

static int
dry_run(void)
{
    const char *name = run.o.output ? run.o.output : "-";
    FILE *f = lg_open_output(name);
    double t = 0;
    uint64_t i;

    fprintf(f, "# id size_bytes arrival_s\n");
    for (i = 0; i < run.o.flows; i++) {
        uint64_t size = next_size();

        if (run.o.open_loop) {
            t += panda_rng_exp(&run.arrival_rng, mean_interarrival_ns());
            fprintf(f, "%llu %llu %.9f\n", (unsigned long long) i,
                    (unsigned long long) size, t / 1e9);
        } else {
            fprintf(f, "%llu %llu -\n", (unsigned long long) i,
                    (unsigned long long) size);
        }
    }
    lg_close_output(f, name);
    return 0;
}

/* ---- Bookkeeping. ---- */

static void
inflight_change(uint64_t now, int delta)
{
    run.inflight_integral += (double) run.inflight
                             * (double) (now - run.inflight_since);
    run.inflight_since = now;
    run.inflight += delta;
    if (run.inflight > run.max_inflight) {
        run.max_inflight = run.inflight;
    }
}

static int
bucket_of(uint64_t size)
{
    return size <= SMALL_MAX ? B_SMALL : size <= MEDIUM_MAX ? B_MEDIUM
                                                            : B_LARGE;
}

static enum reason
reason_from_errno(int error)
{
    switch (error) {
    case ECONNREFUSED:
        return R_REFUSED;
    case ECONNRESET:
    case EPIPE:
    case ECONNABORTED:
        return R_RESET;
    case ETIMEDOUT:
        return R_TIMEOUT;
    default:
        return R_ERROR;
    }
}

/* True if a flow that started at 'start_ns' counts in --fct-window. */
static bool
in_window(uint64_t start_ns)
{
    double t = (start_ns - run.start_ns) / 1e9;

    return run.o.window && t >= run.o.window_start
           && (!run.o.window_length
               || t < run.o.window_start + run.o.window_length);
}

static void
fct_record(struct fct_stats *st, int b, bool ok, double fct_us)
{
    if (ok) {
        lg_vec_push(&st->fct[b], fct_us);
        lg_vec_push(&st->fct[B_ALL], fct_us);
    } else {
        st->unfinished[b]++;
        st->unfinished[B_ALL]++;
    }
}

/* Records the end of a flow; 'ok' false means it did not complete. */
static void
flow_end(uint64_t id, uint64_t size, uint64_t received, uint64_t start_ns,
         uint64_t now, bool ok, enum reason why, int dscp)
{
    int b = bucket_of(size);
    double fct_us = ok ? (now - start_ns) / 1e3 : 0;

    fct_record(&run.all, b, ok, fct_us);
    if (in_window(start_ns)) {
        fct_record(&run.window, b, ok, fct_us);
    }

    inflight_change(now, -1);
    run.bytes_received += received;
    if (ok) {
        run.completed++;
        if (run.out && run.o.tg_output) {
            /* TrafficGenerator's columns: size (bytes), FCT (us), DSCP,
             * sending rate (Mbit/s; 0: not limited), goodput (Mbit/s). */
            fprintf(run.out, "%llu %llu %d 0 %llu\n",
                    (unsigned long long) size,
                    (unsigned long long) llround(fct_us), dscp < 0 ? 0 : dscp,
                    (unsigned long long) (fct_us > 0 ? size * 8 / fct_us
                                                     : 0));
        } else if (run.out) {
            fprintf(run.out, "%llu %llu %.6f %.6f %.3f %llu 1 -\n",
                    (unsigned long long) id, (unsigned long long) size,
                    cli_clock_real_s(&run.clk, start_ns),
                    cli_clock_real_s(&run.clk, now), fct_us,
                    (unsigned long long) received);
        }
    } else {
        run.unfinished++;
        run.reasons[why]++;
        if (why != R_DRAIN_TIMEOUT && why != R_INTERRUPTED) {
            run.failures++;
        }
        /* TrafficGenerator's files have completed flows only (the JSON
         * summary counts the others). */
        if (run.out && !run.o.tg_output) {
            fprintf(run.out, "%llu %llu %.6f - - %llu 0 %s\n",
                    (unsigned long long) id, (unsigned long long) size,
                    cli_clock_real_s(&run.clk, start_ns),
                    (unsigned long long) received, reason_names[why]);
        }
    }
}

/* ---- Connections. ---- */

static void
conn_watch(struct conn *c, int op, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = c };

    if (epoll_ctl(run.epfd, op, c->fd, &ev)) {
        cli_log_fatal("epoll_ctl: %s", strerror(errno));
    }
}

static void
idle_remove(struct conn *c)
{
    struct conn *last = run.idle[--run.n_idle];

    run.idle[c->idle_idx] = last;
    last->idle_idx = c->idle_idx;
}

static void
conn_close(struct conn *c)
{
    struct conn *last;

    if (c->state == IDLE) {
        idle_remove(c);
    }
    close(c->fd);               /* Also removes it from the epoll set. */
    last = run.conns[--run.n_conns];
    run.conns[c->idx] = last;
    last->idx = c->idx;
    free(c);
}

/* Ends the flow on 'c' as failed and closes 'c'. */
static void
conn_fail(struct conn *c, uint64_t now, enum reason why)
{
    if (c->has_flow) {
        flow_end(c->id, c->size, c->received, c->start_ns, now, false, why,
                 c->dscp);
    }
    conn_close(c);
}

/* Opens a new connection to server 'sv'.  Returns NULL and sets errno on
 * failure. */
static struct conn *
conn_open(size_t sv)
{
    const struct server *server = &run.o.servers[sv];
    struct conn *c;
    int one = 1;
    int fd, error;

    fd = socket(server->addr.ss_family,
                SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return NULL;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (run.o.bind) {
#ifdef IP_BIND_ADDRESS_NO_PORT
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
#endif
        if (bind(fd, (struct sockaddr *) &run.bind, run.bind_len)) {
            error = errno;
            close(fd);
            errno = error;
            return NULL;
        }
    }
    c = panda_xcalloc(1, sizeof *c);
    c->fd = fd;
    c->server = sv;
    c->dscp = -1;
    if (!connect(fd, (struct sockaddr *) &server->addr, server->len)) {
        c->state = SENDING;
    } else if (errno == EINPROGRESS) {
        c->state = CONNECTING;
    } else {
        error = errno;
        close(fd);
        free(c);
        errno = error;
        return NULL;
    }
    run.conns_opened++;
    if (run.n_conns == run.conns_cap) {
        run.conns_cap = run.conns_cap ? 2 * run.conns_cap : 64;
        run.conns = panda_xrealloc(run.conns,
                                   run.conns_cap * sizeof *run.conns);
    }
    c->idx = run.n_conns;
    run.conns[run.n_conns++] = c;
    conn_watch(c, EPOLL_CTL_ADD, EPOLLOUT);
    return c;
}

static void
conn_send(struct conn *c, uint64_t now)
{
    while (c->sent < sizeof c->req) {
        ssize_t n = send(c->fd, c->req + c->sent, sizeof c->req - c->sent,
                         MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                conn_watch(c, EPOLL_CTL_MOD, EPOLLOUT);
                return;
            }
            conn_fail(c, now, reason_from_errno(errno));
            return;
        }
        c->sent += n;
    }
    c->state = RECEIVING;
    conn_watch(c, EPOLL_CTL_MOD, EPOLLIN);
}

/* Starts the next flow.  Its start time is taken here, not when it was due:
 * a late open-loop arrival's FCT does not include its lateness. */
static void
flow_start(void)
{
    uint64_t now = cli_clock_mono_ns();
    struct lg_fg_req req;
    struct conn *c;
    uint64_t id = run.started++;
    uint64_t size = next_size();
    size_t sv = next_server(), i;
    int dscp = next_dscp();

    run.bytes_requested += size;
    inflight_change(now, +1);
    /* An idle pooled connection to the flow's server, the one idle the
     * shortest (a scan: a pool holds at most the flows in flight). */
    for (c = NULL, i = run.n_idle; run.o.pool && i-- > 0; ) {
        if (run.idle[i]->server == sv) {
            c = run.idle[i];
            idle_remove(c);
            c->state = SENDING;
            break;
        }
    }
    if (!c) {
        c = conn_open(sv);
        if (!c) {
            flow_end(id, size, 0, now, now, false,
                     reason_from_errno(errno), dscp);
            return;
        }
    }
    if (dscp != c->dscp) {
        lg_set_dscp(c->fd, run.o.servers[sv].addr.ss_family, dscp);
        c->dscp = dscp;
    }
    c->has_flow = true;
    c->id = id;
    c->size = size;
    c->received = 0;
    c->start_ns = now;
    c->sent = 0;
    req.flags = (run.o.pool ? 0 : LG_FG_CLOSE) | (dscp >= 0 ? LG_FG_DSCP : 0);
    req.dscp = dscp >= 0 ? dscp : 0;
    req.flow_id = id;
    req.size = size;
    lg_fg_req_encode(&req, c->req);
    if (c->state == SENDING) {
        conn_send(c, now);
    }
}

static void
flow_done(struct conn *c, uint64_t now)
{
    flow_end(c->id, c->size, c->received, c->start_ns, now, true, 0,
             c->dscp);
    c->has_flow = false;
    if (run.o.pool) {
        c->state = IDLE;
        if (run.n_idle == run.idle_cap) {
            run.idle_cap = run.idle_cap ? 2 * run.idle_cap : 64;
            run.idle = panda_xrealloc(run.idle,
                                      run.idle_cap * sizeof *run.idle);
        }
        c->idle_idx = run.n_idle;
        run.idle[run.n_idle++] = c;
    } else {
        /* Wait for the server's FIN, so the server side keeps TIME_WAIT
         * and the client's ports are free again at once. */
        c->state = CLOSING;
        c->close_deadline = now + CLOSE_WAIT_NS;
    }
}

static void
conn_receive(struct conn *c, uint64_t now)
{
    static uint8_t buf[RECV_BUF];
    uint64_t got = 0;

    while (got < RECV_BUDGET) {
        size_t want = RECV_BUF;
        ssize_t n;

        if (c->state == RECEIVING && c->size - c->received < want) {
            want = c->size - c->received;
        }
        n = recv(c->fd, buf, want, 0);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                return;
            }
            if (c->state == RECEIVING) {
                conn_fail(c, now, reason_from_errno(errno));
            } else {
                conn_close(c);
            }
            return;
        }
        if (n == 0) {
            if (c->state == RECEIVING) {
                conn_fail(c, now, R_EOF);
            } else {
                conn_close(c);  /* Server's FIN or an idle pool conn gone. */
            }
            return;
        }
        if (c->state != RECEIVING) {
            cli_log_warn("server sent unexpected data, closing the connection");
            conn_close(c);
            return;
        }
        got += n;
        c->received += n;
        if (c->received == c->size) {
            flow_done(c, cli_clock_mono_ns());
            return;
        }
    }
}

static void
conn_event(struct conn *c)
{
    uint64_t now = cli_clock_mono_ns();

    switch (c->state) {
    case CONNECTING: {
        int error = 0;
        socklen_t len = sizeof error;

        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &len);
        if (error) {
            conn_fail(c, now, reason_from_errno(error));
            return;
        }
        c->state = SENDING;
    }
        /* Fall through. */
    case SENDING:
        conn_send(c, now);
        break;
    case RECEIVING:
    case IDLE:
    case CLOSING:
        conn_receive(c, now);
        break;
    }
    /* Replace a flow that just ended at once, rather than after the whole
     * batch of events: this keeps the concurrency held.  (Safe: new
     * connections cannot have events in the current batch.) */
    if (!run.o.open_loop && run.generating) {
        closed_loop_refill();
    }
}

static void
housekeeping(uint64_t now)
{
    uint64_t flow_timeout = run.o.flow_timeout * 1e9;
    size_t i = 0;

    while (i < run.n_conns) {
        struct conn *c = run.conns[i];

        if (c->state == CLOSING && now >= c->close_deadline) {
            conn_close(c);
        } else if (c->has_flow && flow_timeout
                   && now - c->start_ns >= flow_timeout) {
            conn_fail(c, now, R_FLOW_TIMEOUT);
        } else {
            i++;
        }
    }
}

/* ---- Main loop. ---- */

static bool
limit_reached(void)
{
    return run.o.flows && run.started >= run.o.flows;
}

static bool
too_many_failures(void)
{
    return run.o.max_failures && run.failures >= run.o.max_failures;
}

/* Closed loop: tops the flows in flight up to --concurrency. */
static void
closed_loop_refill(void)
{
    while (run.generating && run.inflight < run.o.concurrency
           && !limit_reached() && !too_many_failures()
           && !(run.gen_end_ns && cli_clock_mono_ns() >= run.gen_end_ns)) {
        flow_start();
    }
}

/* Waits for events until 'wake' (monotonic ns, 0: no deadline). */
static void
wait_events(uint64_t now, uint64_t wake)
{
    struct epoll_event events[256];
    int timeout = -1;
    int n, i;

    if (wake && wake <= now) {
        timeout = 0;
    } else if (wake != run.timer_armed) {
        struct itimerspec its;

        memset(&its, 0, sizeof its);
        its.it_value.tv_sec = wake / 1000000000u;
        its.it_value.tv_nsec = wake % 1000000000u;
        if (timerfd_settime(run.tfd, TFD_TIMER_ABSTIME, &its, NULL)) {
            cli_log_fatal("timerfd_settime: %s", strerror(errno));
        }
        run.timer_armed = wake;
    }
    n = epoll_wait(run.epfd, events, 256, timeout);
    if (n < 0 && errno != EINTR) {
        cli_log_fatal("epoll_wait: %s", strerror(errno));
    }
    for (i = 0; i < n; i++) {
        void *p = events[i].data.ptr;

        if (p == &epoll_timer_tag) {
            uint64_t expirations;

            if (read(run.tfd, &expirations, sizeof expirations) < 0) {
                /* Nothing to do: the timer may have been re-armed. */
            }
            run.timer_armed = 0;
        } else if (p == &epoll_signal_tag) {
            run.interrupted = true;
        } else {
            /* Handling one connection's event never closes another one
             * and no connection is opened here, so 'p' is still valid. */
            struct conn *c = p;

            conn_event(c);
        }
    }
}

static uint64_t
min_wake(uint64_t a, uint64_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

static void
show_progress(uint64_t now)
{
    unsigned long long done = run.completed + run.unfinished;

    if (run.o.flows) {
        lg_progress_update(&run.progress, now,
                           "%llu/%llu flows done, %llu in flight, %.1f s",
                           done, (unsigned long long) run.o.flows,
                           (unsigned long long) run.inflight,
                           (now - run.start_ns) / 1e9);
    } else {
        lg_progress_update(&run.progress, now,
                           "%llu flows done, %llu in flight, %.1f/%.1f s",
                           done, (unsigned long long) run.inflight,
                           (now - run.start_ns) / 1e9, run.o.duration);
    }
}

static void
run_loop(void)
{
    uint64_t next_arrival = 0, drain_deadline = 0, next_housekeeping = 0;
    bool arrival_late = false;
    double mean_iat = run.o.open_loop ? mean_interarrival_ns() : 0;

    run.generating = true;
    run.start_ns = cli_clock_mono_ns();
    run.inflight_since = run.start_ns;
    cli_clock_init(&run.clk);
    run.clk.mono0 = run.start_ns;
    if (run.o.open_loop) {
        next_arrival = run.start_ns
                       + panda_rng_exp(&run.arrival_rng, mean_iat);
    }
    run.gen_end_ns = run.o.duration
                     ? run.start_ns + (uint64_t) (run.o.duration * 1e9) : 0;

    for (;;) {
        uint64_t now = cli_clock_mono_ns();
        uint64_t wake = 0;

        if (run.interrupted) {
            break;
        }
        /* First, so that flows it ends are replaced (closed loop) or
         * noticed (drain) in this iteration. */
        if (now >= next_housekeeping) {
            housekeeping(now);
            next_housekeeping = now + HOUSEKEEPING_NS;
        }
        if (run.generating) {
            if (run.gen_end_ns && now >= run.gen_end_ns) {
                run.generating = false;
            } else if (too_many_failures()) {
                run.aborted = true;
                run.generating = false;
            } else if (!run.o.open_loop) {
                closed_loop_refill();
            } else {
                while (next_arrival <= now && !limit_reached()) {
                    if (run.inflight >= run.o.max_inflight) {
                        /* Counted once per delayed arrival. */
                        run.late_arrivals += !arrival_late;
                        arrival_late = true;
                        break;
                    }
                    arrival_late = false;
                    flow_start();
                    next_arrival += panda_rng_exp(&run.arrival_rng,
                                                  mean_iat);
                }
            }
            if (run.generating && limit_reached()) {
                run.generating = false;
            }
            if (!run.generating) {
                run.gen_end_ns = now;
                drain_deadline = now
                                 + (uint64_t) (run.o.drain_timeout * 1e9);
                continue;
            }
        } else if (run.inflight == 0 || now >= drain_deadline) {
            break;
        }

        if (run.progress.enabled) {
            show_progress(now);
            wake = min_wake(wake, run.progress.next_ns);
        }

        if (run.generating) {
            if (run.o.open_loop && run.inflight < run.o.max_inflight) {
                wake = min_wake(wake, next_arrival);
            }
            wake = min_wake(wake, run.gen_end_ns);
        } else {
            wake = min_wake(wake, drain_deadline);
        }
        if (run.n_conns > 0
            && (run.o.flow_timeout || run.n_conns > run.inflight)) {
            wake = min_wake(wake, next_housekeeping);
        }
        wait_events(now, wake);
    }

    run.end_ns = cli_clock_mono_ns();
    if (!run.gen_end_ns || run.gen_end_ns > run.end_ns) {
        run.gen_end_ns = run.end_ns;
    }
    /* Flows still in flight did not finish. */
    while (run.n_conns > 0) {
        struct conn *c = run.conns[run.n_conns - 1];

        if (c->has_flow) {
            conn_fail(c, run.end_ns, run.interrupted ? R_INTERRUPTED
                                                     : R_DRAIN_TIMEOUT);
        } else {
            conn_close(c);
        }
    }
    inflight_change(run.end_ns, 0);
    run.progress.next_ns = 0;       /* The final state, whatever the time. */
    show_progress(run.end_ns);
    lg_progress_end(&run.progress);
}

/* ---- Summary. ---- */

/* Writes the FCT statistics 'st' per bucket as object 'key'. */
static void
write_fct(struct cli_json *j, const char *key, struct fct_stats *st)
{
    static const double lo[N_BUCKETS] = { 0, SMALL_MAX, MEDIUM_MAX, 0 };
    static const double hi[N_BUCKETS] = { SMALL_MAX, MEDIUM_MAX, NAN, NAN };
    int b;

    cli_json_object(j, key);
    for (b = 0; b < N_BUCKETS; b++) {
        struct lg_summary s;

        lg_summarize(st->fct[b].v, st->fct[b].n, &s);
        cli_json_object(j, bucket_names[b]);
        cli_json_array(j, "size_range_bytes");
        cli_json_double(j, NULL, lo[b]);
        cli_json_double(j, NULL, hi[b]);
        cli_json_end_array(j);
        cli_json_u64(j, "completed", s.n);
        cli_json_u64(j, "unfinished", st->unfinished[b]);
        cli_json_double(j, "mean", s.mean);
        cli_json_double(j, "p50", s.p50);
        cli_json_double(j, "p99", s.p99);
        cli_json_double(j, "min", s.min);
        cli_json_double(j, "max", s.max);
        cli_json_end_object(j);
    }
    cli_json_end_object(j);
}

static void
write_json(void)
{
    double elapsed = (run.end_ns - run.start_ns) / 1e9;
    double gen = (run.gen_end_ns - run.start_ns) / 1e9;
    FILE *f = lg_open_output(run.o.json);
    struct cli_json j;
    int r;

    cli_json_start(&j, f);
    cli_json_str(&j, "program", "panda-fg-client");
    cli_json_str(&j, "mode", run.o.open_loop ? "open" : "closed");
    if (run.o.open_loop) {
        cli_json_null(&j, "concurrency");
        cli_json_double(&j, "load_mbps", run.o.load_mbps);
    } else {
        cli_json_u64(&j, "concurrency", run.o.concurrency);
        cli_json_null(&j, "load_mbps");
    }
    cli_json_str(&j, "connections", run.o.pool ? "pool" : "per-flow");
    cli_json_str(&j, "server", lg_addr_str(&run.o.servers[0].addr,
                                           run.o.servers[0].len));
    cli_json_array_compact(&j, "servers");
    for (size_t i = 0; i < run.o.n_servers; i++) {
        cli_json_str(&j, NULL, lg_addr_str(&run.o.servers[i].addr,
                                           run.o.servers[i].len));
    }
    cli_json_end_array(&j);
    cli_json_u64(&j, "seed", run.o.seed);
    cli_json_str(&j, "cdf", run.o.cdf_file);
    if (run.o.fixed_size) {
        cli_json_u64(&j, "fixed_size", run.o.fixed_size);
    } else {
        cli_json_null(&j, "fixed_size");
    }
    cli_json_double(&j, "mean_size_bytes", run.mean_size);
    if (run.o.n_dscps == 1) {
        cli_json_u64(&j, "dscp", run.o.dscps[0].value);
    } else {
        cli_json_null(&j, "dscp");
    }
    if (run.o.n_dscps > 1) {
        /* A flow's DSCP drawn by weight (--config's dscp lines). */
        cli_json_array_compact(&j, "dscp_weights");
        for (size_t i = 0; i < run.o.n_dscps; i++) {
            cli_json_array_compact(&j, NULL);
            cli_json_u64(&j, NULL, run.o.dscps[i].value);
            cli_json_u64(&j, NULL, run.o.dscps[i].weight);
            cli_json_end_array(&j);
        }
        cli_json_end_array(&j);
    }
    cli_json_str(&j, "cdf_unit", run.o.cdf_packets ? "packets" : "bytes");
    cli_json_double(&j, "start_realtime", cli_clock_real_s(&run.clk,
                                                          run.start_ns));
    cli_json_double(&j, "end_realtime", cli_clock_real_s(&run.clk,
                                                        run.end_ns));
    cli_json_double(&j, "elapsed_s", elapsed);
    cli_json_double(&j, "generation_s", gen);
    if (run.o.flows) {
        cli_json_u64(&j, "flows_planned", run.o.flows);
    } else {
        cli_json_null(&j, "flows_planned");
    }
    cli_json_u64(&j, "flows_started", run.started);
    cli_json_u64(&j, "flows_completed", run.completed);
    cli_json_u64(&j, "flows_unfinished", run.unfinished);
    cli_json_u64(&j, "flows_not_started",
                run.o.flows > run.started ? run.o.flows - run.started : 0);
    cli_json_object(&j, "unfinished_reasons");
    for (r = 0; r < N_REASONS; r++) {
        if (run.reasons[r]) {
            cli_json_u64(&j, reason_names[r], run.reasons[r]);
        }
    }
    cli_json_end_object(&j);
    cli_json_bool(&j, "aborted", run.aborted);
    cli_json_bool(&j, "interrupted", run.interrupted);
    cli_json_u64(&j, "bytes_requested", run.bytes_requested);
    cli_json_u64(&j, "bytes_received", run.bytes_received);
    cli_json_double(&j, "goodput_mbps",
                   elapsed > 0 ? run.bytes_received * 8 / elapsed / 1e6
                               : NAN);
    cli_json_double(&j, "offered_load_mbps",
                   gen > 0 ? run.bytes_requested * 8 / gen / 1e6 : NAN);
    cli_json_double(&j, "flows_per_s",
                   elapsed > 0 ? run.completed / elapsed : NAN);
    cli_json_u64(&j, "max_in_flight", run.max_inflight);
    cli_json_double(&j, "mean_in_flight",
                   run.end_ns > run.start_ns
                   ? run.inflight_integral / (run.end_ns - run.start_ns)
                   : NAN);
    cli_json_u64(&j, "late_arrivals", run.late_arrivals);
    cli_json_u64(&j, "connections_opened", run.conns_opened);
    {
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        cli_json_double(&j, "cpu_user_s",
                       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
        cli_json_double(&j, "cpu_sys_s",
                       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    }
    write_fct(&j, "fct_us", &run.all);
    if (run.o.window) {
        double w0 = run.o.window_start;
        double w1 = run.o.window_length ? w0 + run.o.window_length
                                        : elapsed;

        cli_json_object(&j, "fct_window");
        cli_json_double(&j, "start_s", w0);
        cli_json_double(&j, "length_s", run.o.window_length
                                        ? run.o.window_length : NAN);
        cli_json_double(&j, "start_realtime",
                        cli_clock_real_s(&run.clk, run.start_ns) + w0);
        cli_json_double(&j, "end_realtime",
                        cli_clock_real_s(&run.clk, run.start_ns) + w1);
        cli_json_end_object(&j);
        write_fct(&j, "fct_window_us", &run.window);
    }
    cli_json_finish(&j);
    lg_close_output(f, run.o.json);
}

static void
setup(void)
{
    struct epoll_event ev;
    sigset_t set;
    char *err;

    for (size_t i = 0; i < run.o.n_servers; i++) {
        struct server *sv = &run.o.servers[i];

        err = lg_resolve(sv->host, sv->port, false, &sv->addr, &sv->len);
        if (err) {
            cli_log_fatal("%s: %s", run.o.config && i ? "--config server"
                          : "--server/--port", err);
        }
    }
    if (run.o.bind) {
        err = lg_resolve(run.o.bind, "0", true, &run.bind, &run.bind_len);
        if (err) {
            cli_log_fatal("--bind: %s", err);
        }
        for (size_t i = 0; i < run.o.n_servers; i++) {
            if (run.bind.ss_family != run.o.servers[i].addr.ss_family) {
                cli_log_fatal("--bind %s and server %s are not of the same "
                              "address family", run.o.bind,
                              run.o.servers[i].host);
            }
        }
    }
    lg_raise_nofile();
    signal(SIGPIPE, SIG_IGN);

    run.epfd = epoll_create1(EPOLL_CLOEXEC);
    run.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    run.sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (run.epfd < 0 || run.tfd < 0 || run.sfd < 0) {
        cli_log_fatal("epoll/timerfd/signalfd: %s", strerror(errno));
    }
    ev.events = EPOLLIN;
    ev.data.ptr = &epoll_timer_tag;
    epoll_ctl(run.epfd, EPOLL_CTL_ADD, run.tfd, &ev);
    ev.data.ptr = &epoll_signal_tag;
    epoll_ctl(run.epfd, EPOLL_CTL_ADD, run.sfd, &ev);

    if (run.o.output) {
        run.out = lg_open_output(run.o.output);
        if (!run.o.tg_output) {
            fprintf(run.out, "# id size_bytes start_s end_s fct_us "
                    "received_bytes completed note\n");
        }
        fflush(run.out);        /* Lets scripts see that the run started. */
    }
}

int
main(int argc, char *argv[])
{
    int b;

    cli_log_set_program("panda-fg-client");
    parse_options(argc, argv, &run.o);
    if (run.o.cdf_file) {
        char *err = panda_cdf_load(&run.cdf, run.o.cdf_file);

        if (err) {
            cli_log_fatal("--cdf: %s", err);
        }
        if (run.o.cdf_packets) {
            /* Sizes in packets (TrafficGenerator's and pFabric's CDF_*.txt
             * tables): bytes at --mss per packet, checked again. */
            for (size_t i = 0; i < run.cdf.n; i++) {
                run.cdf.value[i] *= run.o.mss;
            }
            err = panda_cdf_check(&run.cdf);
            if (err) {
                cli_log_fatal("--cdf %s --cdf-unit packets: %s",
                              run.o.cdf_file, err);
            }
        }
        run.mean_size = panda_cdf_mean(&run.cdf);
        if (!(run.mean_size >= 1)) {
            cli_log_fatal("--cdf: %s: mean flow size %g bytes is below one byte",
                     run.o.cdf_file, run.mean_size);
        }
    } else {
        run.mean_size = run.o.fixed_size;
    }
    /* Separate streams, so the size sequence does not depend on the
     * mode. */
    panda_rng_seed(&run.size_rng, run.o.seed);
    panda_rng_seed(&run.arrival_rng, run.o.seed ^ 0x9e3779b97f4a7c15ull);
    panda_rng_seed(&run.pick_rng, run.o.seed ^ 0x5851f42d4c957f2dull);
    if (run.o.dry_run) {
        return dry_run();
    }

    lg_progress_init(&run.progress, run.o.progress);
    setup();
    run_loop();

    if (run.out) {
        lg_close_output(run.out, run.o.output);
    }
    if (run.o.json) {
        write_json();
    }
    if (!run.o.quiet) {
        double elapsed = (run.end_ns - run.start_ns) / 1e9;
        struct lg_summary s;

        lg_summarize(run.all.fct[B_ALL].v, run.all.fct[B_ALL].n, &s);
        fprintf(stderr, "%s: %llu flows started, %llu completed, %llu "
                "unfinished%s in %.2f s; goodput %.1f Mbit/s; FCT mean "
                "%.0f us, p99 %.0f us\n", cli_log_program(),
                (unsigned long long) run.started,
                (unsigned long long) run.completed,
                (unsigned long long) run.unfinished,
                run.aborted ? " (gave up after --max-failures)"
                : run.interrupted ? " (interrupted)" : "",
                elapsed, elapsed > 0 ? run.bytes_received * 8 / elapsed / 1e6
                                     : 0.0, s.mean, s.p99);
    }
    for (b = 0; b < N_BUCKETS; b++) {
        lg_vec_free(&run.all.fct[b]);
        lg_vec_free(&run.window.fct[b]);
    }
    panda_cdf_destroy(&run.cdf);
    return (run.unfinished || run.aborted || run.interrupted
            || (run.o.flows && run.started < run.o.flows))
           ? CLI_EXIT_INCOMPLETE : 0;
}

/*
 * panda-adp-client: the open-loop client of ADPS's experiments.
 * Sends 16-byte requests (lg-common.h) of several types to
 * panda-adp-server on a pool of connections, on a schedule fixed in
 * advance (Poisson arrivals at --rate, or ADPS's bursts: --burst requests
 * back to back every --interval ms), and measures each request's response
 * time by type.  Requests that get no answer (the server dropped them, as
 * in the "ideal" runs) are counted, not waited for beyond --drain-ms.
 *
 * A request goes on a connection that has none outstanding if there is
 * one (else on the one with the fewest), so that a latency-sensitive
 * request does not queue behind a bulk one inside a TCP stream: what the
 * server's event loop orders is what the experiment measures.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <panda/rng.h>

#include "lg-common.h"

#define MAX_TYPES 8
#define RBUF (LG_ADP_REQ_LEN * 256)

struct req_type {
    char name[5];
    double weight;
    uint32_t work_us;
};

struct options {
    const char *host;
    const char *port;
    const char *json;
    const char *samples;
    unsigned int conns;
    struct req_type types[MAX_TYPES];
    int n_types;
    double rate;
    unsigned int burst;
    double interval_ms;
    uint64_t requests;
    uint64_t warmup;
    uint64_t seed;
    uint64_t drain_ms;
};

struct conn {
    int fd;
    unsigned int outstanding;
    size_t rlen;
    uint8_t rbuf[RBUF];
};

static struct options opts;

static void
usage(void)
{
    printf("\
Usage: panda-adp-client --port=PORT --mix=SPEC (--rate=R | --burst=N\n\
                        --interval=DURATION) [OPTION]...\n\
Open-loop client of panda-adp-server: response times by request type.\n\
\n\
  -s, --server=ADDR          server address (default 127.0.0.1)\n\
  -p, --port=PORT            server port\n\
  -c, --connections=N        connections (default 64)\n\
      --mix=SPEC             request types, TYPE:WEIGHT:WORK_US,...; TYPE is\n\
                             4 letters or digits, e.g.\n\
                             LATS:5:10000,BULK:95:10000\n\
      --rate=R               Poisson arrivals, R requests per second\n\
      --burst=N              N requests back to back every --interval\n\
      --interval=DURATION    time between bursts (e.g. 100ms, the default;\n\
                             a bare number is milliseconds, deprecated)\n\
  -n, --requests=N           requests to send (default 1000)\n\
      --warmup=N             leave the first N requests out of the results\n\
      --seed=N               random seed (default 1)\n\
      --drain-timeout=DURATION\n\
                             wait at most DURATION after the last send\n\
                             (default 3s)\n\
      --json=FILE            results as JSON (default stdout)\n\
      --samples=FILE         one line per counted request: type,\n\
                             microseconds (-1: no answer)\n\
  -h, --help                 show this help and exit\n\
      --version              show the version and exit\n\
\n\
Deprecated spellings, still accepted with a warning: -H, --host (use -s,\n\
--server), --conns (use --connections), --drain-ms=MS (use\n\
--drain-timeout with a unit).\n\
\n\
Exit status: 0 (requests left unanswered, e.g. dropped by the server's\n\
--drop-level, are in the results), 2 on bad arguments, 1 on errors.\n");
}

static void
parse_mix(const char *spec)
{
    char *copy = strdup(spec), *save = NULL, *item;

    for (item = strtok_r(copy, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        struct req_type *t = &opts.types[opts.n_types];
        char name[8], *colon, *colon2;
        int i;

        if (opts.n_types >= MAX_TYPES) {
            cli_log_usage("--mix: at most %d types", MAX_TYPES);
        }
        colon = strchr(item, ':');
        colon2 = colon ? strchr(colon + 1, ':') : NULL;
        if (!colon2 || colon - item != 4) {
            cli_log_usage("--mix: \"%s\" is not TYPE:WEIGHT:WORK_US with a"
                          " 4-character TYPE", item);
        }
        memcpy(name, item, 4);
        name[4] = '\0';
        for (i = 0; i < 4; i++) {
            char c = name[i];

            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
                  || (c >= '0' && c <= '9'))) {
                cli_log_usage("--mix: type \"%s\": letters and digits only",
                              name);
            }
        }
        memcpy(t->name, name, 5);
        *colon2 = '\0';
        t->weight = cli_parse_double("--mix weight", colon + 1, 0, 1e9);
        t->work_us = (uint32_t) cli_parse_u64("--mix work", colon2 + 1, 0,
                                              LG_ADP_MAX_WORK_US);
        opts.n_types++;
    }
    free(copy);
    if (!opts.n_types) {
        cli_log_usage("--mix: no request types");
    }
}

static void
parse_options(int argc, char *argv[])
{
    enum { OPT_MIX = 256, OPT_RATE, OPT_BURST, OPT_INTERVAL, OPT_WARMUP,
           OPT_SEED, OPT_DRAIN, OPT_JSON, OPT_SAMPLES, OPT_OLD_HOST,
           OPT_OLD_CONNS, OPT_OLD_DRAIN };
    static const struct option longopts[] = {
        { "server", required_argument, NULL, 's' },
        { "port", required_argument, NULL, 'p' },
        { "connections", required_argument, NULL, 'c' },
        { "mix", required_argument, NULL, OPT_MIX },
        { "rate", required_argument, NULL, OPT_RATE },
        { "burst", required_argument, NULL, OPT_BURST },
        { "interval", required_argument, NULL, OPT_INTERVAL },
        { "requests", required_argument, NULL, 'n' },
        { "warmup", required_argument, NULL, OPT_WARMUP },
        { "seed", required_argument, NULL, OPT_SEED },
        { "drain-timeout", required_argument, NULL, OPT_DRAIN },
        { "json", required_argument, NULL, OPT_JSON },
        { "samples", required_argument, NULL, OPT_SAMPLES },
        /* Deprecated. */
        { "host", required_argument, NULL, OPT_OLD_HOST },
        { "conns", required_argument, NULL, OPT_OLD_CONNS },
        { "drain-ms", required_argument, NULL, OPT_OLD_DRAIN },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    int c;

    opts.host = "127.0.0.1";
    opts.json = "-";
    opts.conns = 64;
    opts.interval_ms = 100;
    opts.requests = 1000;
    opts.seed = 1;
    opts.drain_ms = 3000;
    while ((c = cli_opt_next(argc, argv, "s:H:p:c:n:h", longopts,
                             usage)) != -1) {
        switch (c) {
        case 'H':
        case OPT_OLD_HOST:
            cli_log_deprecated(c == 'H' ? "-H" : "--host",
                               c == 'H' ? "-s" : "--server");
            /* Fall through. */
        case 's':
            opts.host = optarg;
            break;
        case 'p':
            cli_parse_u64("--port", optarg, 1, 65535);
            opts.port = optarg;
            break;
        case OPT_OLD_CONNS:
            cli_log_deprecated("--conns", "--connections");
            /* Fall through. */
        case 'c':
            opts.conns = (unsigned int) cli_parse_u64("--connections", optarg,
                                                      1, 65536);
            break;
        case OPT_MIX:
            parse_mix(optarg);
            break;
        case OPT_RATE:
            opts.rate = cli_parse_double("--rate", optarg, 1e-3, 1e8);
            break;
        case OPT_BURST:
            opts.burst = (unsigned int) cli_parse_u64("--burst", optarg, 1,
                                                      1000000);
            break;
        case OPT_INTERVAL:
            opts.interval_ms = cli_parse_duration("--interval", optarg, 1e-3,
                                                  1e-6, 1e3) * 1e3;
            break;
        case 'n':
            opts.requests = cli_parse_u64("--requests", optarg, 1,
                                          100000000);
            break;
        case OPT_WARMUP:
            opts.warmup = cli_parse_u64("--warmup", optarg, 0, UINT64_MAX);
            break;
        case OPT_SEED:
            opts.seed = cli_parse_u64("--seed", optarg, 0, UINT64_MAX);
            break;
        case OPT_DRAIN:
            opts.drain_ms = llround(cli_parse_duration("--drain-timeout",
                                                       optarg, 1, 0, 3600)
                                    * 1e3);
            break;
        case OPT_OLD_DRAIN:
            cli_log_deprecated("--drain-ms=MS", "--drain-timeout=MSms");
            opts.drain_ms = cli_parse_u64("--drain-ms", optarg, 0, 3600000);
            break;
        case OPT_JSON:
            opts.json = optarg;
            break;
        case OPT_SAMPLES:
            opts.samples = optarg;
            break;
        }
    }
    cli_opt_no_operands(argc, argv);
    if (!opts.port) {
        cli_log_usage("--port is required");
    }
    if (!opts.n_types) {
        cli_log_usage("--mix is required");
    }
    if (!opts.rate == !opts.burst) {
        cli_log_usage("give one of --rate and --burst");
    }
    if (opts.warmup >= opts.requests) {
        cli_log_usage("--warmup %llu leaves no request of --requests %llu",
                      (unsigned long long) opts.warmup,
                      (unsigned long long) opts.requests);
    }
}

/* A type drawn by weight. */
static int
draw_type(struct panda_rng *rng)
{
    double total = 0, x;
    int i;

    for (i = 0; i < opts.n_types; i++) {
        total += opts.types[i].weight;
    }
    x = panda_rng_uniform(rng) * total;
    for (i = 0; i < opts.n_types - 1; i++) {
        if (x < opts.types[i].weight) {
            return i;
        }
        x -= opts.types[i].weight;
    }
    return opts.n_types - 1;
}

/* The connection for the next request: one with nothing outstanding if
 * there is one, else the least loaded. */
static struct conn *
pick_conn(struct conn *conns, unsigned int *rr)
{
    struct conn *best = NULL;
    unsigned int i;

    for (i = 0; i < opts.conns; i++) {
        struct conn *c = &conns[(*rr + i) % opts.conns];

        if (!best || c->outstanding < best->outstanding) {
            best = c;
            if (!c->outstanding) {
                break;
            }
        }
    }
    *rr = (unsigned int) (best - conns + 1) % opts.conns;
    return best;
}

/* Reads what 'c' has and records the responses in it.  Returns false if
 * the server closed the connection or it failed. */
static bool
conn_read(struct conn *c, const uint64_t *sent_ns, int64_t *lat_ns,
          uint64_t *n_answered)
{
    for (;;) {
        ssize_t n = recv(c->fd, c->rbuf + c->rlen, RBUF - c->rlen,
                         MSG_DONTWAIT);
        uint64_t now = cli_clock_mono_ns();
        size_t off = 0;

        if (n == 0) {
            return false;
        }
        if (n < 0) {
            return errno == EAGAIN || errno == EINTR;
        }
        c->rlen += n;
        while (c->rlen - off >= LG_ADP_REQ_LEN) {
            struct lg_adp_req r;

            if (!lg_adp_req_decode(c->rbuf + off, &r)
                && r.id < opts.requests && lat_ns[r.id] < 0) {
                lat_ns[r.id] = (int64_t) (now - sent_ns[r.id]);
                (*n_answered)++;
                if (c->outstanding) {
                    c->outstanding--;
                }
            }
            off += LG_ADP_REQ_LEN;
        }
        memmove(c->rbuf, c->rbuf + off, c->rlen - off);
        c->rlen -= off;
    }
}

static void
write_results(const uint8_t *type_of, const int64_t *lat_ns, double elapsed,
              double max_lag_us)
{
    FILE *f = lg_open_output(opts.json);
    struct cli_json j;
    int t;

    cli_json_start(&j, f);
    cli_json_str(&j, "program", "panda-adp-client");
    cli_json_object(&j, "config");
    cli_json_u64(&j, "conns", opts.conns);
    cli_json_double(&j, "rate", opts.rate);
    cli_json_u64(&j, "burst", opts.burst);
    cli_json_double(&j, "interval_ms", opts.interval_ms);
    cli_json_u64(&j, "requests", opts.requests);
    cli_json_u64(&j, "warmup", opts.warmup);
    cli_json_u64(&j, "seed", opts.seed);
    cli_json_end_object(&j);
    cli_json_double(&j, "elapsed_s", elapsed);
    cli_json_double(&j, "max_send_lag_us", max_lag_us);
    cli_json_object(&j, "types");
    for (t = 0; t < opts.n_types; t++) {
        struct lg_vec v = { NULL, 0, 0 };
        struct lg_summary s;
        uint64_t sent = 0, i;

        for (i = opts.warmup; i < opts.requests; i++) {
            if (type_of[i] == t) {
                sent++;
                if (lat_ns[i] >= 0) {
                    lg_vec_push(&v, lat_ns[i] / 1e3);
                }
            }
        }
        lg_summarize(v.v, v.n, &s);
        cli_json_object(&j, opts.types[t].name);
        cli_json_u64(&j, "work_us", opts.types[t].work_us);
        cli_json_double(&j, "weight", opts.types[t].weight);
        cli_json_u64(&j, "sent", sent);
        cli_json_u64(&j, "answered", v.n);
        lg_json_summary(&j, "latency_us", &s);
        cli_json_end_object(&j);
        lg_vec_free(&v);
    }
    cli_json_end_object(&j);
    cli_json_finish(&j);
    lg_close_output(f, opts.json);

    if (opts.samples) {
        FILE *sf = lg_open_output(opts.samples);
        uint64_t i;

        for (i = opts.warmup; i < opts.requests; i++) {
            fprintf(sf, "%s %.3f\n", opts.types[type_of[i]].name,
                    lat_ns[i] >= 0 ? lat_ns[i] / 1e3 : -1.0);
        }
        lg_close_output(sf, opts.samples);
    }
}

int
main(int argc, char *argv[])
{
    uint64_t n = 0, i, next = 0, n_answered = 0, start, last_send = 0;
    struct epoll_event evs[256];
    struct sockaddr_storage ss;
    struct panda_rng rng;
    struct conn *conns;
    uint64_t *at_ns, *sent_ns;
    int64_t *lat_ns;
    uint8_t *type_of;
    unsigned int rr = 0, k;
    double max_lag = 0;
    socklen_t len;
    char *err;
    int epfd, tfd;

    cli_log_set_program("panda-adp-client");
    parse_options(argc, argv);
    n = opts.requests;
    at_ns = calloc(n, sizeof *at_ns);
    sent_ns = calloc(n, sizeof *sent_ns);
    lat_ns = malloc(n * sizeof *lat_ns);
    type_of = calloc(n, 1);
    conns = calloc(opts.conns, sizeof *conns);
    if (!at_ns || !sent_ns || !lat_ns || !type_of || !conns) {
        cli_log_fatal("out of memory");
    }

    /* The schedule and the types, fixed before the first send. */
    panda_rng_seed(&rng, opts.seed);
    for (i = 0; i < n; i++) {
        type_of[i] = (uint8_t) draw_type(&rng);
        lat_ns[i] = -1;
        if (opts.burst) {
            at_ns[i] = (uint64_t) ((i / opts.burst) * opts.interval_ms * 1e6);
        } else {
            at_ns[i] = (i ? at_ns[i - 1] : 0)
                       + (uint64_t) panda_rng_exp(&rng, 1e9 / opts.rate);
        }
    }

    err = lg_resolve(opts.host, opts.port, false, &ss, &len);
    if (err) {
        cli_log_fatal("--host/--port: %s", err);
    }
    /* Sends are timed by a timerfd (nanoseconds), not by epoll_wait()'s
     * millisecond timeout, so that the client sleeps between sends instead
     * of spinning on a CPU that the server needs. */
    epfd = epoll_create1(EPOLL_CLOEXEC);
    tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (epfd < 0 || tfd < 0) {
        cli_log_fatal("epoll/timerfd: %s", strerror(errno));
    }
    {
        struct epoll_event ev;

        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLIN;
        ev.data.ptr = NULL;
        epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev);
    }
    for (k = 0; k < opts.conns; k++) {
        struct epoll_event ev;
        int one = 1;

        conns[k].fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (conns[k].fd < 0
            || connect(conns[k].fd, (struct sockaddr *) &ss, len)) {
            cli_log_fatal("connect to %s: %s", lg_addr_str(&ss, len),
                          strerror(errno));
        }
        setsockopt(conns[k].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLIN;
        ev.data.ptr = &conns[k];
        epoll_ctl(epfd, EPOLL_CTL_ADD, conns[k].fd, &ev);
    }

    start = cli_clock_mono_ns() + 20 * 1000000;   /* Let accepts settle. */
    for (;;) {
        uint64_t now = cli_clock_mono_ns();
        int timeout, m, e;

        while (next < n && start + at_ns[next] <= now) {
            struct conn *c = pick_conn(conns, &rr);
            struct lg_adp_req r;
            uint8_t buf[LG_ADP_REQ_LEN];
            double lag = (now - (start + at_ns[next])) / 1e3;

            memcpy(r.type, opts.types[type_of[next]].name, 4);
            r.work_us = opts.types[type_of[next]].work_us;
            r.id = next;
            lg_adp_req_encode(&r, buf);
            sent_ns[next] = cli_clock_mono_ns();
            if (send(c->fd, buf, sizeof buf, MSG_NOSIGNAL) != sizeof buf) {
                cli_log_fatal("send: %s", strerror(errno));
            }
            c->outstanding++;
            max_lag = lag > max_lag ? lag : max_lag;
            last_send = now;
            next++;
        }
        if (next == n && (n_answered == n
                          || now > last_send + opts.drain_ms * 1000000)) {
            break;
        }
        if (next < n) {
            uint64_t due = start + at_ns[next];
            struct itimerspec its;

            memset(&its, 0, sizeof its);
            its.it_value.tv_sec = due / 1000000000;
            its.it_value.tv_nsec = due % 1000000000;
            timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
            timeout = -1;
        } else {
            timeout = 10;
        }
        m = epoll_wait(epfd, evs, 256, timeout);
        for (e = 0; e < m; e++) {
            struct conn *c = evs[e].data.ptr;
            uint64_t expirations;

            if (!c) {
                if (read(tfd, &expirations, sizeof expirations) < 0) {
                    /* EAGAIN: already read. */
                }
                continue;
            }
            if (!conn_read(c, sent_ns, lat_ns, &n_answered)) {
                cli_log_fatal("the server closed a connection");
            }
        }
    }
    write_results(type_of, lat_ns,
                  (cli_clock_mono_ns() - start) / 1e9, max_lag);
    for (k = 0; k < opts.conns; k++) {
        close(conns[k].fd);
    }
    close(epfd);
    close(tfd);
    free(at_ns);
    free(sent_ns);
    free(lat_ns);
    free(type_of);
    free(conns);
    return 0;
}

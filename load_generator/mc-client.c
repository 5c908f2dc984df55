/*
 * panda-mc-client: memcached request latency over persistent connections.
 *
 * Stores 'keys' keys whose value sizes are drawn from a CDF (SET), then
 * sends 'requests' GETs (optionally a SET/GET mix) over one or more
 * persistent TCP connections, one request outstanding per connection, and
 * times each from just before send() to the last byte of the response on
 * the monotonic clock.  Speaks memcached's text protocol directly.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <panda/cdf.h>
#include "lg-common.h"

#define MAX_VALUE (1024 * 1024)     /* memcached's default item limit. */

struct options {
    const char *server, *port, *bind;
    unsigned int connections;
    double duration;            /* Seconds, 0: no limit. */
    uint64_t requests;
    uint64_t keys;
    unsigned int key_size;
    const char *cdf_file;
    uint64_t fixed_value;
    double set_ratio;
    uint64_t interval_us;
    uint64_t seed;
    uint64_t timeout_ms;
    double outlier_ms;
    const char *json, *samples;
    int dscp;
    bool nodelay;
    int progress;
    bool quiet;
};

enum op { OP_GET, OP_SET };
static const char *const op_names[] = { "get", "set" };

enum status { ST_OK, ST_MISS, ST_SIZE_MISMATCH, ST_TIMEOUT, ST_ERROR,
              ST_NOT_SENT, ST_SKIPPED, N_STATUS };
/* ST_SKIPPED: not started because --duration was over; such requests are
 * not part of the run (not failures, not in the samples file). */
static const char *const status_names[N_STATUS] = {
    "ok", "miss", "size_mismatch", "timeout", "error", "not_sent", "skipped"
};

struct request {
    uint32_t key;
    uint8_t op;
};

struct sample {
    uint64_t start_ns;          /* Monotonic. */
    uint64_t latency_ns;
    uint32_t conn;
    uint32_t value_len;
    uint8_t op;
    uint8_t status;
};

/* One connection and its receive buffer. */
struct mconn {
    int fd;
    char *buf;
    size_t len, cap;
    char why[160];              /* Last error, for messages. */
};

static struct options opt;
static struct sockaddr_storage server, local;
static socklen_t server_len, local_len;
static uint32_t *value_size;    /* Per key. */
static char *value_data;        /* MAX_VALUE bytes of filler. */
static struct request *plan;
static struct sample *samples;
static atomic_ullong n_done, n_reconnects;
static atomic_uint threads_done;
static atomic_ullong window_end_ns;   /* When the last worker finished. */
static uint64_t window_start_ns;
static pthread_barrier_t start_barrier;
static volatile sig_atomic_t stop_signal;

static void
on_signal(int sig)
{
    stop_signal = sig;
}

static void
usage(void)
{
    printf("\
Usage: panda-mc-client [OPTION]...\n\
Measures memcached request latency over persistent TCP connections: stores\n\
the keys (SET), then times each GET from send to the full response.\n\
\n\
  -s, --server=HOST        memcached address (default 127.0.0.1)\n\
  -p, --port=PORT          memcached port (default 11211)\n\
      --bind=ADDR          local address of the client's connections\n\
  -c, --connections=N      persistent connections, one request outstanding\n\
                           on each (default 1)\n\
  -n, --requests=N         measured requests (default 1000)\n\
  -d, --duration=DURATION  stop starting requests after DURATION (e.g. 10s;\n\
                           a bare number is seconds): the rest are skipped,\n\
                           not failed\n\
  -k, --keys=N             distinct keys stored beforehand (default 1000)\n\
      --key-size=SIZE      key length in bytes (default 64, 16..250)\n\
      --cdf=FILE           value sizes from a CDF file (\"SIZE CDF\" lines)\n\
      --value-size=SIZE    fixed value size in bytes instead (1 .. 1Mi)\n\
      --set-ratio=R        fraction of measured requests that are SETs\n\
                           (default 0: GETs only)\n\
      --interval=DURATION  start a request every DURATION on each\n\
                           connection (e.g. 5ms; default 0: back to back)\n\
      --timeout=DURATION   give up on a response after DURATION (default\n\
                           10s) and reconnect\n\
      --outlier=DURATION   count latencies above DURATION as RTO-scale\n\
                           outliers (default 200ms)\n\
      --dscp=N             DSCP (0..63) of the client's packets\n\
      --no-nodelay         leave Nagle's algorithm on (default: TCP_NODELAY)\n\
      --seed=N             random seed (default 1)\n\
  -j, --json=FILE          JSON summary (\"-\" for stdout)\n\
      --samples=FILE       raw samples, one line per request (\"-\" stdout)\n\
      --progress, --no-progress\n\
                           progress line on stderr (default: if a terminal)\n\
  -q, --quiet              no summary line on stderr\n\
  -h, --help               show this help and exit\n\
      --version            show the version and exit\n\
\n\
Deprecated spellings, still accepted with a warning: -C (use -c), -r (use\n\
-n), --interval-us=N, --timeout-ms=N, --outlier-ms=N (use --interval,\n\
--timeout, --outlier with a unit).\n\
\n\
Exit status: 0 if every request got its expected response, 3 if some\n\
failed (timeout, error, miss), 2 on bad arguments, 1 on setup errors.\n\
See load_generator/README.md for the file formats.\n");
}

static void
parse_options(int argc, char *argv[])
{
    enum {
        OPT_KEY_SIZE = 256, OPT_VALUE_SIZE, OPT_SET_RATIO, OPT_INTERVAL,
        OPT_TIMEOUT, OPT_OUTLIER, OPT_DSCP, OPT_NO_NODELAY, OPT_SEED,
        OPT_SAMPLES, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_BIND, OPT_CDF,
        OPT_OLD_INTERVAL, OPT_OLD_TIMEOUT, OPT_OLD_OUTLIER,
    };
    static const struct option longopts[] = {
        { "server", required_argument, NULL, 's' },
        { "port", required_argument, NULL, 'p' },
        { "bind", required_argument, NULL, OPT_BIND },
        { "duration", required_argument, NULL, 'd' },
        { "connections", required_argument, NULL, 'c' },
        { "requests", required_argument, NULL, 'n' },
        { "keys", required_argument, NULL, 'k' },
        { "key-size", required_argument, NULL, OPT_KEY_SIZE },
        { "cdf", required_argument, NULL, OPT_CDF },
        { "value-size", required_argument, NULL, OPT_VALUE_SIZE },
        { "set-ratio", required_argument, NULL, OPT_SET_RATIO },
        { "interval", required_argument, NULL, OPT_INTERVAL },
        { "timeout", required_argument, NULL, OPT_TIMEOUT },
        { "outlier", required_argument, NULL, OPT_OUTLIER },
        { "dscp", required_argument, NULL, OPT_DSCP },
        { "no-nodelay", no_argument, NULL, OPT_NO_NODELAY },
        { "seed", required_argument, NULL, OPT_SEED },
        { "json", required_argument, NULL, 'j' },
        { "samples", required_argument, NULL, OPT_SAMPLES },
        { "progress", no_argument, NULL, OPT_PROGRESS },
        { "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
        { "quiet", no_argument, NULL, 'q' },
        /* Deprecated. */
        { "interval-us", required_argument, NULL, OPT_OLD_INTERVAL },
        { "timeout-ms", required_argument, NULL, OPT_OLD_TIMEOUT },
        { "outlier-ms", required_argument, NULL, OPT_OLD_OUTLIER },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    int c;

    opt.server = "127.0.0.1";
    opt.port = "11211";
    opt.connections = 1;
    opt.requests = 1000;
    opt.keys = 1000;
    opt.key_size = 64;
    opt.seed = 1;
    opt.timeout_ms = 10000;
    opt.outlier_ms = 200;
    opt.dscp = -1;
    opt.nodelay = true;
    opt.progress = -1;
    while ((c = cli_opt_next(argc, argv, "s:p:d:c:C:n:r:k:j:qh", longopts,
                             usage)) != -1) {
        switch (c) {
        case 's':
            opt.server = optarg;
            break;
        case 'p':
            cli_parse_u64("--port", optarg, 1, 65535);
            opt.port = optarg;
            break;
        case OPT_BIND:
            opt.bind = optarg;
            break;
        case 'd':
            opt.duration = cli_parse_duration("--duration", optarg, 1, 1e-3,
                                              1e7);
            break;
        case 'C':
            cli_log_deprecated("-C", "-c");
            /* Fall through. */
        case 'c':
            opt.connections = cli_parse_u64("--connections", optarg, 1, 1024);
            break;
        case 'r':
            cli_log_deprecated("-r", "-n");
            /* Fall through. */
        case 'n':
            opt.requests = cli_parse_u64("--requests", optarg, 1, 100000000);
            break;
        case 'k':
            opt.keys = cli_parse_u64("--keys", optarg, 1, 10000000);
            break;
        case OPT_KEY_SIZE:
            opt.key_size = cli_parse_bytes("--key-size", optarg, 16, 250);
            break;
        case OPT_CDF:
            opt.cdf_file = optarg;
            break;
        case OPT_VALUE_SIZE:
            opt.fixed_value = cli_parse_bytes("--value-size", optarg, 1,
                                             MAX_VALUE);
            break;
        case OPT_SET_RATIO:
            opt.set_ratio = cli_parse_double("--set-ratio", optarg, 0, 1);
            break;
        case OPT_INTERVAL:
            opt.interval_us = llround(cli_parse_duration("--interval", optarg,
                                                         1, 0, 60) * 1e6);
            break;
        case OPT_OLD_INTERVAL:
            cli_log_deprecated("--interval-us=N", "--interval=Nus");
            opt.interval_us = cli_parse_u64("--interval-us", optarg, 0,
                                           60000000);
            break;
        case OPT_TIMEOUT:
            opt.timeout_ms = llround(cli_parse_duration("--timeout", optarg,
                                                        1, 1e-3, 3600) * 1e3);
            break;
        case OPT_OLD_TIMEOUT:
            cli_log_deprecated("--timeout-ms=N", "--timeout=Nms");
            opt.timeout_ms = cli_parse_u64("--timeout-ms", optarg, 1,
                                          3600000);
            break;
        case OPT_OUTLIER:
            opt.outlier_ms = cli_parse_duration("--outlier", optarg, 1, 0,
                                                1e4) * 1e3;
            break;
        case OPT_OLD_OUTLIER:
            cli_log_deprecated("--outlier-ms=N", "--outlier=Nms");
            opt.outlier_ms = cli_parse_double("--outlier-ms", optarg, 0, 1e7);
            break;
        case OPT_DSCP:
            opt.dscp = cli_parse_u64("--dscp", optarg, 0, 63);
            break;
        case OPT_NO_NODELAY:
            opt.nodelay = false;
            break;
        case OPT_SEED:
            opt.seed = cli_parse_u64("--seed", optarg, 0, UINT64_MAX);
            break;
        case 'j':
            opt.json = optarg;
            break;
        case OPT_SAMPLES:
            opt.samples = optarg;
            break;
        case OPT_PROGRESS:
            opt.progress = 1;
            break;
        case OPT_NO_PROGRESS:
            opt.progress = 0;
            break;
        case 'q':
            opt.quiet = true;
            break;
        }
    }
    cli_opt_no_operands(argc, argv);
    if (!opt.cdf_file == !opt.fixed_value) {
        cli_log_usage("give exactly one of --cdf=FILE and --value-size=SIZE");
    }
    {
        /* Key names are "panda-mc:<index>:" padded to --key-size with 'k'
         * (key_name()): the longest index must fit. */
        char longest[64];
        int need = snprintf(longest, sizeof longest, "panda-mc:%llu:",
                            (unsigned long long) (opt.keys - 1));

        if ((unsigned int) need > opt.key_size) {
            cli_log_usage("--key-size %u is too short for --keys %llu: key "
                          "names need %d bytes (\"%s\"); use --key-size %d "
                          "or more", opt.key_size,
                          (unsigned long long) opt.keys, need, longest,
                          need);
        }
    }
    if (opt.connections > opt.requests) {
        cli_log_usage("--connections (%u) is more than --requests (%llu)",
                 opt.connections, (unsigned long long) opt.requests);
    }
}

/* ---- Connections. ---- */

/* parse_options() made sure that every key's prefix fits in --key-size. */
static void
key_name(uint32_t key, char *buf)
{
    int n = snprintf(buf, opt.key_size + 1, "panda-mc:%u:", key);

    if (n < 0 || (unsigned int) n > opt.key_size) {
        abort();
    }

    memset(buf + n, 'k', opt.key_size - n);
    buf[opt.key_size] = '\0';
}

static bool
mc_connect(struct mconn *m)
{
    struct timeval tv = { .tv_sec = opt.timeout_ms / 1000,
                          .tv_usec = opt.timeout_ms % 1000 * 1000 };
    int one = 1;

    m->len = 0;
    m->fd = socket(server.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m->fd < 0) {
        snprintf(m->why, sizeof m->why, "socket: %s", strerror(errno));
        return false;
    }
    setsockopt(m->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (opt.nodelay) {
        setsockopt(m->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (opt.dscp >= 0) {
        lg_set_dscp(m->fd, server.ss_family, opt.dscp);
    }
    if (opt.bind && bind(m->fd, (struct sockaddr *) &local, local_len)) {
        snprintf(m->why, sizeof m->why, "cannot bind to %s: %s", opt.bind,
                 strerror(errno));
        close(m->fd);
        m->fd = -1;
        return false;
    }
    if (connect(m->fd, (struct sockaddr *) &server, server_len)) {
        snprintf(m->why, sizeof m->why, "cannot connect to %s: %s",
                 lg_addr_str(&server, server_len), strerror(errno));
        close(m->fd);
        m->fd = -1;
        return false;
    }
    return true;
}

static void
mc_close(struct mconn *m)
{
    if (m->fd >= 0) {
        close(m->fd);
        m->fd = -1;
    }
    m->len = 0;
}

static enum status
send_all(struct mconn *m, struct iovec *iov, int n)
{
    struct msghdr msg;

    memset(&msg, 0, sizeof msg);
    msg.msg_iov = iov;
    msg.msg_iovlen = n;
    while (msg.msg_iovlen > 0) {
        ssize_t r = sendmsg(m->fd, &msg, MSG_NOSIGNAL);

        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            snprintf(m->why, sizeof m->why, "send: %s", strerror(errno));
            return errno == EAGAIN ? ST_TIMEOUT : ST_ERROR;
        }
        while (msg.msg_iovlen > 0 && (size_t) r >= msg.msg_iov->iov_len) {
            r -= msg.msg_iov->iov_len;
            msg.msg_iov++;
            msg.msg_iovlen--;
        }
        if (msg.msg_iovlen > 0) {
            msg.msg_iov->iov_base = (char *) msg.msg_iov->iov_base + r;
            msg.msg_iov->iov_len -= r;
        }
    }
    return ST_OK;
}

/* Reads until the buffer holds at least 'need' bytes, or until 'deadline'
 * (monotonic ns). */
static enum status
fill(struct mconn *m, size_t need, uint64_t deadline)
{
    if (need > m->cap || !m->buf) {
        m->cap = need > 65536 ? need : 65536;
        m->buf = panda_xrealloc(m->buf, m->cap);
    }
    while (m->len < need) {
        uint64_t now = cli_clock_mono_ns();
        struct pollfd pfd = { .fd = m->fd, .events = POLLIN };
        ssize_t r;
        int p;

        if (now >= deadline) {
            snprintf(m->why, sizeof m->why, "no response within %llu ms",
                     (unsigned long long) opt.timeout_ms);
            return ST_TIMEOUT;
        }
        p = poll(&pfd, 1, (deadline - now + 999999) / 1000000);
        if (p < 0 && errno != EINTR) {
            snprintf(m->why, sizeof m->why, "poll: %s", strerror(errno));
            return ST_ERROR;
        }
        if (p <= 0) {
            continue;
        }
        r = recv(m->fd, m->buf + m->len, m->cap - m->len, 0);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            snprintf(m->why, sizeof m->why, "%s",
                     r ? strerror(errno) : "server closed the connection");
            return ST_ERROR;
        }
        m->len += r;
    }
    return ST_OK;
}

/* Sends one request and reads its complete response.  On ST_OK, ST_MISS
 * and ST_SIZE_MISMATCH the connection is in sync again. */
static enum status
do_request(struct mconn *m, enum op op, uint32_t key, uint64_t *t0,
           uint64_t *t1)
{
    char name[256], head[320];
    uint32_t expect = value_size[key];
    uint64_t deadline;
    struct iovec iov[3];
    enum status st;
    int n;

    key_name(key, name);
    if (op == OP_GET) {
        n = snprintf(head, sizeof head, "get %s\r\n", name);
        iov[0].iov_base = head;
        iov[0].iov_len = n;
    } else {
        n = snprintf(head, sizeof head, "set %s 0 0 %u\r\n", name, expect);
        iov[0].iov_base = head;
        iov[0].iov_len = n;
        iov[1].iov_base = value_data;
        iov[1].iov_len = expect;
        iov[2].iov_base = "\r\n";
        iov[2].iov_len = 2;
    }

    m->len = 0;
    *t0 = cli_clock_mono_ns();
    deadline = *t0 + opt.timeout_ms * 1000000;
    st = send_all(m, iov, op == OP_GET ? 1 : 3);
    if (st != ST_OK) {
        return st;
    }
    for (;;) {
        size_t need = 0;
        uint32_t got_len = 0;

        switch (lg_mc_parse_reply(m->buf ? m->buf : "", m->len,
                                  op == OP_GET, MAX_VALUE, &need, &got_len,
                                  m->why, sizeof m->why)) {
        case LG_MC_NEED_MORE:
            st = fill(m, need, deadline);
            if (st != ST_OK) {
                return st;
            }
            continue;
        case LG_MC_STORED:
            st = ST_OK;
            break;
        case LG_MC_MISS:
            st = ST_MISS;
            break;
        case LG_MC_HIT:
            st = got_len == expect ? ST_OK : ST_SIZE_MISMATCH;
            break;
        case LG_MC_BAD:
        default:
            return ST_ERROR;
        }
        break;
    }
    *t1 = cli_clock_mono_ns();
    m->len = 0;
    return st;
}

/* ---- Phases. ---- */

static void
populate(void)
{
    struct mconn m = { .fd = -1 };
    uint64_t k;

    if (!mc_connect(&m)) {
        cli_log_fatal("%s", m.why);
    }
    for (k = 0; k < opt.keys; k++) {
        uint64_t t0, t1;
        enum status st = do_request(&m, OP_SET, k, &t0, &t1);

        if (stop_signal) {
            cli_log_fatal("interrupted by signal %d while storing the keys",
                     (int) stop_signal);
        }
        if (st != ST_OK) {
            cli_log_fatal("storing key %llu (%u bytes) failed: %s",
                     (unsigned long long) k, value_size[k], m.why);
        }
    }
    mc_close(&m);
    free(m.buf);
}

struct worker {
    pthread_t thread;
    unsigned int index;
    struct mconn m;
    bool connected;
};

static void *
worker_main(void *w_)
{
    struct worker *w = w_;
    struct mconn *m = &w->m;
    uint64_t r, k = 0, end;

    pthread_barrier_wait(&start_barrier);
    /* window_start_ns is set before the barrier is released. */
    end = opt.duration
          ? window_start_ns + (uint64_t) (opt.duration * 1e9) : 0;
    for (r = w->index; r < opt.requests && !stop_signal;
         r += opt.connections, k++) {
        struct sample *s = &samples[r];
        uint64_t t0 = 0, t1 = 0;
        enum status st;

        if (opt.interval_us) {
            /* A signal interrupts the sleep (EINTR) only in the thread it
             * is delivered to; the others notice at their next request. */
            uint64_t at = window_start_ns + k * opt.interval_us * 1000;
            struct timespec ts = { .tv_sec = at / 1000000000u,
                                   .tv_nsec = at % 1000000000u };

            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
                   == EINTR && !stop_signal) {
                continue;
            }
            if (stop_signal) {
                break;
            }
        }
        if (end && cli_clock_mono_ns() >= end) {
            for (; r < opt.requests; r += opt.connections) {
                samples[r].status = ST_SKIPPED;
            }
            break;
        }
        if (!w->connected) {
            /* Reconnect after a failed request: the old connection's
             * state is unknown. */
            atomic_fetch_add(&n_reconnects, 1);
            w->connected = mc_connect(m);
            if (!w->connected) {
                s->status = ST_NOT_SENT;
                s->start_ns = cli_clock_mono_ns();
                atomic_fetch_add(&n_done, 1);
                continue;
            }
        }
        st = do_request(m, plan[r].op, plan[r].key, &t0, &t1);
        s->start_ns = t0;
        s->status = st;
        if (st == ST_TIMEOUT || st == ST_ERROR) {
            s->latency_ns = cli_clock_mono_ns() - t0;
            mc_close(m);
            w->connected = false;
        } else {
            s->latency_ns = t1 - t0;
        }
        atomic_fetch_add(&n_done, 1);
    }
    {
        /* The window ends with the last response of the last worker. */
        unsigned long long now = cli_clock_mono_ns();
        unsigned long long prev = atomic_load(&window_end_ns);

        while (now > prev
               && !atomic_compare_exchange_weak(&window_end_ns, &prev, now)) {
            continue;
        }
    }
    mc_close(m);
    atomic_fetch_add(&threads_done, 1);
    return NULL;
}

/* ---- Output. ---- */

static void
write_samples(const struct cli_clock *clk)
{
    FILE *f = lg_open_output(opt.samples);
    uint64_t r;

    fprintf(f, "# seq conn op value_bytes start_s latency_us status\n");
    for (r = 0; r < opt.requests; r++) {
        const struct sample *s = &samples[r];

        if (s->status == ST_SKIPPED) {
            continue;
        }
        if (s->status == ST_NOT_SENT) {
            fprintf(f, "%llu %u %s %u - - %s\n", (unsigned long long) r,
                    s->conn, op_names[s->op], s->value_len,
                    status_names[s->status]);
        } else {
            fprintf(f, "%llu %u %s %u %.6f %.3f %s\n",
                    (unsigned long long) r, s->conn, op_names[s->op],
                    s->value_len, cli_clock_real_s(clk, s->start_ns),
                    s->latency_ns / 1e3, status_names[s->status]);
        }
    }
    lg_close_output(f, opt.samples);
}

/* What a run measured. */
struct run_stats {
    struct lg_summary sum[3];   /* Latency (us) of all, get, set. */
    uint64_t count[N_STATUS];   /* Requests per status. */
    uint64_t outliers;          /* Latencies above --outlier-ms. */
    uint64_t failed;            /* Timeout, error, not sent. */
    uint64_t n_latencies;       /* Requests with a latency (answered or
                                 * timed out). */
    uint64_t populate_ns;       /* Time to store the keys. */
    double mean_value;          /* Mean value size over the keys. */
};

/* Loads --cdf (if any) into 'cdf', and resolves --server and --bind. */
static void
setup(struct panda_cdf *cdf)
{
    char *err;

    if (opt.cdf_file) {
        err = panda_cdf_load(cdf, opt.cdf_file);
        if (err) {
            cli_log_fatal("--cdf: %s", err);
        }
        if (cdf->value[cdf->n - 1] > MAX_VALUE) {
            cli_log_fatal("--cdf: %s: largest value %g bytes is above "
                          "memcached's default item limit of %d bytes",
                          opt.cdf_file, cdf->value[cdf->n - 1], MAX_VALUE);
        }
    }
    err = lg_resolve(opt.server, opt.port, false, &server, &server_len);
    if (err) {
        cli_log_fatal("--server/--port: %s", err);
    }
    if (opt.bind) {
        err = lg_resolve(opt.bind, "0", true, &local, &local_len);
        if (err) {
            cli_log_fatal("--bind: %s", err);
        }
        if (local.ss_family != server.ss_family) {
            cli_log_fatal("--bind %s and --server %s are not of the same "
                          "address family", opt.bind, opt.server);
        }
    }
}

/* Fixes the whole request sequence from the seed before anything is sent:
 * value size per key, then key and operation per request.  Returns the
 * mean value size. */
static double
make_plan(const struct panda_cdf *cdf)
{
    struct panda_rng rng;
    double mean_value = 0;
    uint64_t i;

    panda_rng_seed(&rng, opt.seed);
    value_size = panda_xcalloc(opt.keys, sizeof *value_size);
    for (i = 0; i < opt.keys; i++) {
        double v = opt.fixed_value
                   ? (double) opt.fixed_value
                   : (double) llround(panda_cdf_sample(cdf, &rng));

        value_size[i] = v < 1 ? 1 : v;
        mean_value += value_size[i];
    }
    mean_value /= opt.keys;
    plan = panda_xcalloc(opt.requests, sizeof *plan);
    for (i = 0; i < opt.requests; i++) {
        plan[i].key = panda_rng_next(&rng) % opt.keys;
        plan[i].op = (opt.set_ratio > 0
                      && panda_rng_uniform(&rng) < opt.set_ratio)
                     ? OP_SET : OP_GET;
    }
    value_data = panda_xmalloc(MAX_VALUE);
    for (i = 0; i < MAX_VALUE; i++) {
        value_data[i] = 'a' + i % 26;
    }
    /* A request that is never sent (connection lost, or interrupted) keeps
     * ST_NOT_SENT. */
    samples = panda_xcalloc(opt.requests, sizeof *samples);
    for (i = 0; i < opt.requests; i++) {
        samples[i].status = ST_NOT_SENT;
        samples[i].conn = i % opt.connections;
        samples[i].op = plan[i].op;
        samples[i].value_len = value_size[plan[i].key];
    }
    return mean_value;
}

/* Phase 2: connects one worker per connection, starts them together and
 * waits for them, showing progress.  Sets 'clk' to the window's start. */
static void
measure(struct cli_clock *clk)
{
    struct lg_progress progress;
    struct worker *workers;
    uint64_t i;

    workers = panda_xcalloc(opt.connections, sizeof *workers);
    for (i = 0; i < opt.connections; i++) {
        workers[i].index = i;
        workers[i].m.fd = -1;
        if (!mc_connect(&workers[i].m)) {
            cli_log_fatal("%s", workers[i].m.why);
        }
        workers[i].connected = true;
    }
    pthread_barrier_init(&start_barrier, NULL, opt.connections + 1);
    for (i = 0; i < opt.connections; i++) {
        if (pthread_create(&workers[i].thread, NULL, worker_main,
                           &workers[i])) {
            cli_log_fatal("cannot create thread");
        }
    }
    lg_progress_init(&progress, opt.progress);
    cli_clock_init(clk);
    window_start_ns = clk->mono0;
    pthread_barrier_wait(&start_barrier);
    for (;;) {
        bool done = atomic_load(&threads_done) == opt.connections;
        struct timespec ts = { 0, 100000000 };

        if (done) {
            progress.next_ns = 0;   /* The final state. */
        }
        lg_progress_update(&progress, cli_clock_mono_ns(),
                           "%llu/%llu requests, %.1f s",
                           (unsigned long long) atomic_load(&n_done),
                           (unsigned long long) opt.requests,
                           (cli_clock_mono_ns() - window_start_ns) / 1e9);
        if (done) {
            break;
        }
        nanosleep(&ts, NULL);
    }
    for (i = 0; i < opt.connections; i++) {
        pthread_join(workers[i].thread, NULL);
        free(workers[i].m.buf);
    }
    lg_progress_end(&progress);
    free(workers);
}

/* Statistics over the requests that got their response and those that
 * timed out.  A timed-out request enters at the time waited for it, a lower
 * bound of its latency: leaving it out would drop the slowest requests from
 * the percentiles (a scheme that starves a connection for seconds would
 * look better for it).  Errors and unsent requests have no latency. */
static void
collect_stats(struct run_stats *st)
{
    struct lg_vec lat[3] = { { 0 } };   /* all, get, set */
    uint64_t i;

    for (i = 0; i < opt.requests; i++) {
        const struct sample *s = &samples[i];
        double us = s->latency_ns / 1e3;

        st->count[s->status]++;
        if (s->status == ST_OK || s->status == ST_SIZE_MISMATCH
            || s->status == ST_TIMEOUT) {
            lg_vec_push(&lat[0], us);
            lg_vec_push(&lat[1 + s->op], us);
            if (us > opt.outlier_ms * 1e3) {
                st->outliers++;
            }
        }
    }
    st->n_latencies = lat[0].n;
    for (i = 0; i < 3; i++) {
        lg_summarize(lat[i].v, lat[i].n, &st->sum[i]);
        lg_vec_free(&lat[i]);
    }
    st->failed = (st->count[ST_TIMEOUT] + st->count[ST_ERROR]
                  + st->count[ST_NOT_SENT]);
}

static void
write_json(const struct cli_clock *clk, const struct run_stats *st)
{
    double window = (window_end_ns - window_start_ns) / 1e9;
    FILE *f = lg_open_output(opt.json);
    struct cli_json j;
    int i;

    cli_json_start(&j, f);
    cli_json_str(&j, "program", "panda-mc-client");
    cli_json_str(&j, "server", lg_addr_str(&server, server_len));
    cli_json_u64(&j, "connections", opt.connections);
    cli_json_u64(&j, "requests", opt.requests);
    cli_json_u64(&j, "requests_sent", opt.requests - st->count[ST_SKIPPED]
                                      - st->count[ST_NOT_SENT]);
    if (opt.duration) {
        cli_json_double(&j, "duration_s", opt.duration);
    } else {
        cli_json_null(&j, "duration_s");
    }
    cli_json_u64(&j, "keys", opt.keys);
    cli_json_u64(&j, "key_size", opt.key_size);
    cli_json_str(&j, "cdf", opt.cdf_file);
    if (opt.fixed_value) {
        cli_json_u64(&j, "fixed_value_size", opt.fixed_value);
    } else {
        cli_json_null(&j, "fixed_value_size");
    }
    cli_json_double(&j, "value_mean_bytes", st->mean_value);
    cli_json_double(&j, "set_ratio", opt.set_ratio);
    cli_json_u64(&j, "interval_us", opt.interval_us);
    cli_json_u64(&j, "seed", opt.seed);
    cli_json_double(&j, "populate_s", st->populate_ns / 1e9);
    cli_json_double(&j, "window_start_realtime",
                    cli_clock_real_s(clk, window_start_ns));
    cli_json_double(&j, "window_end_realtime",
                    cli_clock_real_s(clk, window_end_ns));
    cli_json_double(&j, "window_s", window);
    cli_json_u64(&j, "requests_ok", st->count[ST_OK]);
    cli_json_u64(&j, "requests_failed", st->failed);
    cli_json_u64(&j, "requests_timed_out", st->count[ST_TIMEOUT]);
    cli_json_object(&j, "status_counts");
    for (i = 0; i < N_STATUS; i++) {
        cli_json_u64(&j, status_names[i], st->count[i]);
    }
    cli_json_end_object(&j);
    cli_json_u64(&j, "reconnects", atomic_load(&n_reconnects));
    cli_json_bool(&j, "interrupted", stop_signal != 0);
    cli_json_double(&j, "outlier_threshold_ms", opt.outlier_ms);
    cli_json_u64(&j, "outliers", st->outliers);
    cli_json_double(&j, "requests_per_s",
                    window > 0 ? (st->n_latencies - st->count[ST_TIMEOUT])
                                 / window : NAN);
    cli_json_object(&j, "latency_us");
    lg_json_summary(&j, "all", &st->sum[0]);
    lg_json_summary(&j, "get", &st->sum[1]);
    lg_json_summary(&j, "set", &st->sum[2]);
    cli_json_end_object(&j);
    cli_json_finish(&j);
    lg_close_output(f, opt.json);
}

static void
print_summary(const struct run_stats *st)
{
    fprintf(stderr, "%s: %llu requests in %.2f s: %llu ok, %llu miss, "
            "%llu failed%s; latency us p50 %.1f p90 %.1f p99 %.1f "
            "p99.9 %.1f max %.1f; %llu above %g ms\n", cli_log_program(),
            (unsigned long long) opt.requests,
            (window_end_ns - window_start_ns) / 1e9,
            (unsigned long long) st->count[ST_OK],
            (unsigned long long) st->count[ST_MISS],
            (unsigned long long) st->failed,
            stop_signal ? " (interrupted)" : "", st->sum[0].p50,
            st->sum[0].p90, st->sum[0].p99, st->sum[0].p999, st->sum[0].max,
            (unsigned long long) st->outliers, opt.outlier_ms);
}

int
main(int argc, char *argv[])
{
    struct panda_cdf cdf = { 0 };
    struct run_stats st;
    struct cli_clock clk;
    struct sigaction sa;

    cli_log_set_program("panda-mc-client");
    parse_options(argc, argv);
    setup(&cdf);
    signal(SIGPIPE, SIG_IGN);
    memset(&st, 0, sizeof st);
    st.mean_value = make_plan(&cdf);

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    /* Phase 1: store the keys. */
    st.populate_ns = cli_clock_mono_ns();
    populate();
    st.populate_ns = cli_clock_mono_ns() - st.populate_ns;

    /* Phase 2: connect, then measure. */
    measure(&clk);

    collect_stats(&st);
    if (opt.samples) {
        write_samples(&clk);
    }
    if (opt.json) {
        write_json(&clk, &st);
    }
    if (!opt.quiet) {
        print_summary(&st);
    }
    panda_cdf_destroy(&cdf);
    free(value_size);
    free(plan);
    free(samples);
    free(value_data);
    return (st.failed || st.count[ST_MISS] || st.count[ST_SIZE_MISMATCH]
            ? CLI_EXIT_INCOMPLETE : 0);
}

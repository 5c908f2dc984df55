/*
 * panda-adp-server: a request/response server on the priority event loop
 * (lg-evloop.h), for ADPS's experiments.  Reads 16-byte
 * requests (lg-common.h), spends the processing time each asks for, and
 * sends the request back.
 *
 * The classifier is a lib/panda policy (--policy, any kind; e.g. a keyword
 * rule on the request type: kind=match,match=LATS:0,levels=2), registered
 * on the listener.  --order fifo is an ordinary event loop (the baseline),
 * --order priority dispatches the highest level first, --offload-level L
 * runs levels >= L on a dedicated worker thread (ADPS's low-priority core);
 * --worker-nice N raises that thread's nice value so that, on a machine
 * without a free core for it, the kernel too runs the loop first.  Not the
 * default: measured on the shared 2-core VM (load 8-11) it did not lower
 * the short requests' p99 (1.1-2.6 ms against 0.8-1.1 without), and the
 * long requests starved (p99 0.26-1.5 s against 2-6 ms); scheduling noise,
 * not the loop, set the tail there (docs/design.md, "Application-defined priority").
 * --drop-level L reads and discards requests of levels >= L without
 * processing or answering them: ADPS's "ideal" (low-priority requests
 * dropped as they arrive), which for the high levels is also the optimum
 * of preemptive priority (a preempting high level never waits for a lower
 * one).
 *
 * Exposure: a connection that sends part of a request waits for the rest
 * without costing CPU, and is closed when its peer shuts down its side or
 * after --request-timeout; one idle for --idle-timeout is closed; at
 * --max-connections (or out of descriptors) the connection idle the
 * longest makes room for a new one (lg-evloop.h, "Exposure").
 *
 * Processing (--work): 'spin' keeps the CPU busy until the time is up, as
 * computation does; 'sleep' waits without using the CPU.  Either holds the
 * thread that runs the handler, which is what the experiments measure; on
 * a shared machine 'sleep' keeps long requests from competing for the CPU
 * with everything else, and microsecond requests need 'spin' (a sleep
 * lasts at least the timer slack, ~50 us).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <panda/classifier.h>
#include <panda/policy.h>

#include "lg-common.h"
#include "lg-evloop.h"

struct options {
    const char *bind;
    const char *port;
    const char *port_file;
    const char *json;
    const char *policy;
    enum lg_ev_order order;
    unsigned int offload_level;
    unsigned int worker_nice;
    unsigned int drop_level;
    uint32_t idle_timeout_ms;
    uint32_t request_timeout_ms;
    uint32_t max_connections;
    bool spin;
    bool quiet;
};

#define DEFAULT_IDLE_TIMEOUT_MS 60000
#define DEFAULT_REQUEST_TIMEOUT_MS 10000

static struct options opts;
static struct lg_ev_loop *loop;
static atomic_ullong n_handled[PANDA_MAX_LEVELS], n_dropped[PANDA_MAX_LEVELS];
static atomic_ullong n_bad, n_send_failed;

static void
on_signal(int sig)
{
    (void) sig;
    lg_ev_stop(loop);
}

static void
usage(void)
{
    printf("\
Usage: panda-adp-server [OPTION]...\n\
Request/response server on the priority event loop: answers each 16-byte\n\
request after the processing time it asks for.  Runs until SIGINT/SIGTERM.\n\
\n\
  -b, --bind=ADDR          listen address (default 127.0.0.1)\n\
  -p, --port=PORT          listen port (default 0: a free port)\n\
      --port-file=FILE     write the listening port to FILE once listening\n\
      --policy=POLICY      the classifier: a lib/panda policy of any kind,\n\
                           e.g. 'id=1,kind=match,match=LATS:0,levels=2'\n\
                           (default: none, every request at level 0)\n\
      --order=fifo|priority  dispatch order (default priority)\n\
      --offload-level=L    run levels >= L on a dedicated worker thread\n\
      --worker-nice=N      that worker's nice value, at least (0-19;\n\
                           default 0: the caller's)\n\
      --drop-level=L       discard requests of levels >= L unanswered\n\
      --work=spin|sleep    how processing time is spent (default spin)\n\
      --idle-timeout=DURATION\n\
                           close a connection with no request under way\n\
                           for DURATION (default 60s; 0: never)\n\
      --request-timeout=DURATION\n\
                           close a connection that has sent part of a\n\
                           request and not the rest within DURATION\n\
                           (default 10s; 0: never)\n\
      --max-connections=N  at most N connections open: the one idle the\n\
                           longest makes room for a new one (default 0:\n\
                           as many as descriptors allow)\n\
      --json=FILE          write counters as JSON to FILE on exit\n\
  -q, --quiet              no log lines on stderr\n\
  -h, --help               show this help and exit\n\
      --version            show the version and exit\n\
\n\
DURATION: a number and a unit, e.g. 500ms, 10s, 2m; a bare number is\n\
milliseconds here (deprecated: give the unit).\n\
Exit status: 0 after SIGINT or SIGTERM, 2 on bad arguments, 1 on errors.\n");
}

static unsigned int
parse_level(const char *name, const char *arg)
{
    return (unsigned int) cli_parse_u64(name, arg, 0, PANDA_MAX_LEVELS - 1);
}

static void
parse_options(int argc, char *argv[])
{
    enum { OPT_PORT_FILE = 256, OPT_POLICY, OPT_ORDER, OPT_OFFLOAD, OPT_NICE,
           OPT_DROP, OPT_WORK, OPT_JSON, OPT_IDLE_TIMEOUT,
           OPT_REQUEST_TIMEOUT, OPT_MAX_CONNECTIONS };
    static const struct option longopts[] = {
        { "bind", required_argument, NULL, 'b' },
        { "port", required_argument, NULL, 'p' },
        { "port-file", required_argument, NULL, OPT_PORT_FILE },
        { "policy", required_argument, NULL, OPT_POLICY },
        { "order", required_argument, NULL, OPT_ORDER },
        { "offload-level", required_argument, NULL, OPT_OFFLOAD },
        { "worker-nice", required_argument, NULL, OPT_NICE },
        { "drop-level", required_argument, NULL, OPT_DROP },
        { "work", required_argument, NULL, OPT_WORK },
        { "json", required_argument, NULL, OPT_JSON },
        { "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
        { "request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT },
        { "max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS },
        { "quiet", no_argument, NULL, 'q' },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    int c;

    opts.bind = "127.0.0.1";
    opts.port = "0";
    opts.order = LG_EV_PRIORITY;
    opts.spin = true;
    opts.idle_timeout_ms = DEFAULT_IDLE_TIMEOUT_MS;
    opts.request_timeout_ms = DEFAULT_REQUEST_TIMEOUT_MS;
    while ((c = cli_opt_next(argc, argv, "b:p:qh", longopts, usage)) != -1) {
        switch (c) {
        case 'b':
            opts.bind = optarg;
            break;
        case 'p':
            cli_parse_u64("--port", optarg, 0, 65535);
            opts.port = optarg;
            break;
        case OPT_PORT_FILE:
            opts.port_file = optarg;
            break;
        case OPT_POLICY:
            opts.policy = optarg;
            break;
        case OPT_ORDER:
            if (!strcmp(optarg, "fifo")) {
                opts.order = LG_EV_FIFO;
            } else if (!strcmp(optarg, "priority")) {
                opts.order = LG_EV_PRIORITY;
            } else {
                cli_log_usage("--order: \"%s\" is not fifo or priority",
                              optarg);
            }
            break;
        case OPT_OFFLOAD:
            opts.offload_level = parse_level("--offload-level", optarg);
            break;
        case OPT_NICE:
            opts.worker_nice = (unsigned int) cli_parse_u64("--worker-nice",
                                                            optarg, 0, 19);
            break;
        case OPT_DROP:
            opts.drop_level = parse_level("--drop-level", optarg);
            break;
        case OPT_WORK:
            if (strcmp(optarg, "spin") && strcmp(optarg, "sleep")) {
                cli_log_usage("--work: \"%s\" is not spin or sleep", optarg);
            }
            opts.spin = !strcmp(optarg, "spin");
            break;
        case OPT_JSON:
            opts.json = optarg;
            break;
        case OPT_IDLE_TIMEOUT:
            opts.idle_timeout_ms = (uint32_t) llround(cli_parse_duration(
                "--idle-timeout", optarg, 1e-3, 0, 86400) * 1e3);
            break;
        case OPT_REQUEST_TIMEOUT:
            opts.request_timeout_ms = (uint32_t) llround(cli_parse_duration(
                "--request-timeout", optarg, 1e-3, 0, 3600) * 1e3);
            break;
        case OPT_MAX_CONNECTIONS:
            opts.max_connections = (uint32_t) cli_parse_u64(
                "--max-connections", optarg, 0, 10000000);
            break;
        case 'q':
            opts.quiet = true;
            break;
        }
    }
    cli_opt_no_operands(argc, argv);
}

/* Spends 'us' microseconds, as --work says. */
static void
work(uint32_t us)
{
    struct timespec end;

    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += us / 1000000;
    end.tv_nsec += (long) (us % 1000000) * 1000;
    if (end.tv_nsec >= 1000000000) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000;
    }
    if (!opts.spin) {
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL)
               == EINTR) {
            continue;
        }
        return;
    }
    for (;;) {
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > end.tv_sec
            || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) {
            return;
        }
    }
}

static enum lg_ev_status
handle(struct lg_ev_conn *conn, void *aux)
{
    int fd = lg_ev_conn_fd(conn);
    uint8_t level = lg_ev_conn_level(conn);
    uint8_t buf[LG_ADP_REQ_LEN];
    struct lg_adp_req req;
    ssize_t n;

    (void) aux;
    n = recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) {
        return LG_EV_CLOSE;
    }
    if (n < 0) {
        return errno == EAGAIN || errno == EINTR ? LG_EV_KEEP : LG_EV_CLOSE;
    }
    if (n < LG_ADP_REQ_LEN) {
        /* The rest may be on its way: the loop waits for it (or closes
         * the connection when the peer has shut down its side). */
        return LG_EV_MORE;
    }
    if (recv(fd, buf, sizeof buf, MSG_DONTWAIT) != LG_ADP_REQ_LEN
        || lg_adp_req_decode(buf, &req)) {
        atomic_fetch_add(&n_bad, 1);
        return LG_EV_CLOSE;
    }
    if (opts.drop_level && level >= opts.drop_level) {
        atomic_fetch_add(&n_dropped[level], 1);
        return LG_EV_KEEP;
    }
    work(req.work_us);
    /* 16 bytes into a socket whose peer reads its answers: if even they do
     * not fit, the client has stopped reading. */
    if (send(fd, buf, sizeof buf, MSG_DONTWAIT | MSG_NOSIGNAL)
        != LG_ADP_REQ_LEN) {
        atomic_fetch_add(&n_send_failed, 1);
        return LG_EV_CLOSE;
    }
    atomic_fetch_add(&n_handled[level], 1);
    return LG_EV_KEEP;
}

static void
write_json(const struct lg_ev_stats *st)
{
    FILE *f = lg_open_output(opts.json);
    struct cli_json j;
    int i;

    cli_json_start(&j, f);
    cli_json_str(&j, "program", "panda-adp-server");
    cli_json_str(&j, "order", opts.order == LG_EV_FIFO ? "fifo" : "priority");
    cli_json_str(&j, "policy", opts.policy ? opts.policy : "");
    cli_json_u64(&j, "offload_level", opts.offload_level);
    cli_json_u64(&j, "worker_nice", opts.offload_level ? opts.worker_nice : 0);
    cli_json_u64(&j, "drop_level", opts.drop_level);
    cli_json_str(&j, "work", opts.spin ? "spin" : "sleep");
    cli_json_u64(&j, "accepted", st->accepted);
    cli_json_u64(&j, "overtakes", st->overtakes);
    cli_json_u64(&j, "offloaded", st->offloaded);
    cli_json_u64(&j, "closed", st->closed);
    cli_json_u64(&j, "idle_closed", st->idle_closed);
    cli_json_u64(&j, "request_timeouts", st->request_timeouts);
    cli_json_u64(&j, "incomplete_eof", st->incomplete_eof);
    cli_json_u64(&j, "evicted", st->evicted);
    cli_json_u64(&j, "refused", st->refused);
    cli_json_u64(&j, "accept_pauses", st->accept_pauses);
    cli_json_u64(&j, "bad", atomic_load(&n_bad));
    cli_json_u64(&j, "send_failed", atomic_load(&n_send_failed));
    cli_json_array_compact(&j, "dispatched");
    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        cli_json_u64(&j, NULL, st->dispatched[i]);
    }
    cli_json_end_array(&j);
    cli_json_array_compact(&j, "handled");
    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        cli_json_u64(&j, NULL, atomic_load(&n_handled[i]));
    }
    cli_json_end_array(&j);
    cli_json_array_compact(&j, "dropped");
    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        cli_json_u64(&j, NULL, atomic_load(&n_dropped[i]));
    }
    cli_json_end_array(&j);
    cli_json_finish(&j);
    lg_close_output(f, opts.json);
}

int
main(int argc, char *argv[])
{
    struct lg_ev_config cfg = { .order = LG_EV_PRIORITY };
    struct panda_classifier cls;
    struct panda_policy policy;
    struct sockaddr_storage ss;
    struct lg_ev_stats st;
    socklen_t len;
    char *err;
    int fd, one = 1, error;

    cli_log_set_program("panda-adp-server");
    parse_options(argc, argv);
    lg_raise_nofile();
    if (opts.policy) {
        err = panda_policy_parse(opts.policy, &policy);
        if (err) {
            cli_log_fatal("--policy: %s", err);
        }
        panda_cls_init(&cls, &policy);
    }
    err = lg_resolve(opts.bind, opts.port, true, &ss, &len);
    if (err) {
        cli_log_fatal("--bind/--port: %s", err);
    }
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0
        || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one)
        || bind(fd, (struct sockaddr *) &ss, len) || listen(fd, 1024)) {
        cli_log_fatal("listen on %s: %s", lg_addr_str(&ss, len),
                      strerror(errno));
    }
    cfg.order = opts.order;
    cfg.offload_level = opts.offload_level;
    cfg.worker_nice = opts.worker_nice;
    cfg.idle_timeout_ms = opts.idle_timeout_ms;
    cfg.request_timeout_ms = opts.request_timeout_ms;
    cfg.max_connections = opts.max_connections;
    loop = lg_ev_create(&cfg, &err);
    if (!loop) {
        cli_log_fatal("%s", err);
    }
    error = lg_ev_listen(loop, fd, opts.policy ? &cls : NULL, handle, NULL);
    if (error) {
        cli_log_fatal("listener: %s", strerror(error));
    }
    len = sizeof ss;
    getsockname(fd, (struct sockaddr *) &ss, &len);
    if (opts.port_file) {
        FILE *f = lg_open_output(opts.port_file);

        fprintf(f, "%d\n", ntohs(ss.ss_family == AF_INET6
                                 ? ((struct sockaddr_in6 *) &ss)->sin6_port
                                 : ((struct sockaddr_in *) &ss)->sin_port));
        lg_close_output(f, opts.port_file);
    }
    if (!opts.quiet) {
        fprintf(stderr, "panda-adp-server: listening on %s, order %s\n",
                lg_addr_str(&ss, len),
                opts.order == LG_EV_FIFO ? "fifo" : "priority");
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    error = lg_ev_run(loop);
    if (error) {
        cli_log_fatal("event loop: %s", strerror(error));
    }
    lg_ev_stats(loop, &st);
    if (opts.json) {
        write_json(&st);
    }
    lg_ev_destroy(loop);
    close(fd);
    return 0;
}

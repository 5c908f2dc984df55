/*
 * panda-fg-server: the flow generator's server.  Accepts TCP connections,
 * reads 24-byte requests (see lg-common.h) and answers each with the
 * requested number of bytes.  One epoll loop per thread handles any number
 * of connections; clients may vanish at any time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lg-common.h"

#define CHUNK (256 * 1024)          /* Bytes per send() call. */
#define BUDGET (1024 * 1024)        /* Bytes per connection per wakeup. */

struct options {
    const char *bind;
    const char *port;
    const char *port_file;
    const char *json;
    unsigned int threads;
    unsigned int backlog;
    bool quiet;
};

enum conn_state { READING, WRITING };

struct conn {
    int fd;
    int family;
    enum conn_state state;
    uint8_t req[LG_FG_REQ_LEN];
    size_t got;
    uint64_t remaining;
    uint8_t flags;
};

/* Counters, summed over threads. */
static atomic_ullong n_accepted, n_requests, n_completed, n_aborted;
static atomic_ullong n_bad, n_bytes, n_closed;
static atomic_ullong n_active, max_active, n_open, max_open;

static volatile sig_atomic_t stop;
static int listen_fd;
static bool quiet;
static uint8_t zeros[CHUNK];

static void
on_signal(int sig)
{
    stop = sig;
}

static void
usage(void)
{
    printf("\
Usage: panda-fg-server [OPTION]...\n\
Flow generator server: answers each request from panda-fg-client with the\n\
requested number of bytes.  Runs until SIGINT or SIGTERM.\n\
\n\
  -b, --bind=ADDR        listen address (default 0.0.0.0; \"::\" for IPv6)\n\
  -p, --port=PORT        listen port (default 5001; 0 picks a free port)\n\
      --port-file=FILE   write the listening port to FILE once listening\n\
  -t, --threads=N        epoll threads sharing the listener (default 1)\n\
      --backlog=N        listen backlog (default 1024)\n\
      --json=FILE        write counters as JSON to FILE on exit\n\
                         (\"-\" for stdout)\n\
  -q, --quiet            no log lines on stderr\n\
  -h, --help             show this help\n\
\n\
See load_generator/README.md for the request format.\n");
    exit(0);
}

static void
parse_options(int argc, char *argv[], struct options *o)
{
    enum { OPT_PORT_FILE = 256, OPT_BACKLOG, OPT_JSON };
    static const struct option longopts[] = {
        { "bind", required_argument, NULL, 'b' },
        { "port", required_argument, NULL, 'p' },
        { "port-file", required_argument, NULL, OPT_PORT_FILE },
        { "threads", required_argument, NULL, 't' },
        { "backlog", required_argument, NULL, OPT_BACKLOG },
        { "json", required_argument, NULL, OPT_JSON },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    memset(o, 0, sizeof *o);
    o->bind = "0.0.0.0";
    o->port = "5001";
    o->threads = 1;
    o->backlog = 1024;
    while ((c = getopt_long(argc, argv, "b:p:t:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            o->bind = optarg;
            break;
        case 'p':
            cli_parse_u64("--port", optarg, 0, 65535);
            o->port = optarg;
            break;
        case OPT_PORT_FILE:
            o->port_file = optarg;
            break;
        case 't':
            o->threads = cli_parse_u64("--threads", optarg, 1, 64);
            break;
        case OPT_BACKLOG:
            o->backlog = cli_parse_u64("--backlog", optarg, 1, 65535);
            break;
        case OPT_JSON:
            o->json = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            usage();
            break;
        default:
            fprintf(stderr, "Try 'panda-fg-server --help'.\n");
            exit(1);
        }
    }
    if (optind < argc) {
        cli_log_fatal("unexpected argument \"%s\" (try --help)", argv[optind]);
    }
}

static void
track_max(atomic_ullong *counter, atomic_ullong *max)
{
    unsigned long long v = atomic_fetch_add(counter, 1) + 1;
    unsigned long long m = atomic_load(max);

    while (v > m && !atomic_compare_exchange_weak(max, &m, v)) {
        continue;
    }
}

static void
conn_close(int epfd, struct conn *c)
{
    if (c->state == WRITING) {
        atomic_fetch_sub(&n_active, 1);
    }
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    atomic_fetch_sub(&n_open, 1);
    atomic_fetch_add(&n_closed, 1);
    free(c);
}

static void
conn_watch(int epfd, struct conn *c, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = c };

    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void
do_accept(int epfd)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        struct epoll_event ev;
        struct conn *c;
        int one = 1;
        int fd;

        fd = accept4(listen_fd, (struct sockaddr *) &ss, &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                static atomic_bool warned;

                if (!atomic_exchange(&warned, true)) {
                    cli_log_warn("accept: %s (further warnings suppressed)",
                            strerror(errno));
                }
            } else if (errno != EAGAIN && errno != EWOULDBLOCK
                       && errno != EINTR && errno != ECONNABORTED) {
                cli_log_warn("accept: %s", strerror(errno));
            }
            return;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c = panda_xcalloc(1, sizeof *c);
        c->fd = fd;
        c->family = ss.ss_family;
        c->state = READING;
        ev.events = EPOLLIN;
        ev.data.ptr = c;
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
            cli_log_warn("epoll_ctl: %s", strerror(errno));
            close(fd);
            free(c);
            continue;
        }
        atomic_fetch_add(&n_accepted, 1);
        track_max(&n_open, &max_open);
    }
}

/* Returns false if 'c' was closed. */
static bool
do_read(int epfd, struct conn *c)
{
    struct lg_fg_req req;
    const char *err;
    ssize_t n;

    n = recv(c->fd, c->req + c->got, sizeof c->req - c->got, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        return true;
    }
    if (n <= 0) {
        /* EOF or error between requests: the normal end of a pooled
         * connection, or a client that went away. */
        conn_close(epfd, c);
        return false;
    }
    c->got += n;
    if (c->got < sizeof c->req) {
        return true;
    }
    c->got = 0;
    err = lg_fg_req_decode(c->req, &req);
    if (err) {
        atomic_fetch_add(&n_bad, 1);
        if (!quiet) {
            cli_log_warn("dropping connection with bad request: %s", err);
        }
        conn_close(epfd, c);
        return false;
    }
    if (req.flags & LG_FG_DSCP) {
        lg_set_dscp(c->fd, c->family, req.dscp);
    }
    atomic_fetch_add(&n_requests, 1);
    track_max(&n_active, &max_active);
    c->state = WRITING;
    c->remaining = req.size;
    c->flags = req.flags;
    conn_watch(epfd, c, EPOLLOUT);
    return true;
}

static void
do_write(int epfd, struct conn *c)
{
    uint64_t sent = 0;

    while (c->remaining > 0 && sent < BUDGET) {
        size_t len = c->remaining < CHUNK ? c->remaining : CHUNK;
        ssize_t n = send(c->fd, zeros, len, MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                break;
            }
            /* The client vanished mid-flow. */
            atomic_fetch_add(&n_aborted, 1);
            conn_close(epfd, c);
            return;
        }
        c->remaining -= n;
        sent += n;
    }
    atomic_fetch_add(&n_bytes, sent);
    if (c->remaining > 0) {
        return;
    }
    atomic_fetch_add(&n_completed, 1);
    atomic_fetch_sub(&n_active, 1);
    c->state = READING;
    if (c->flags & LG_FG_CLOSE) {
        /* The client has sent nothing else, so close() sends a FIN after
         * the queued data (not a RST), and this side keeps TIME_WAIT. */
        epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        atomic_fetch_sub(&n_open, 1);
        atomic_fetch_add(&n_closed, 1);
        free(c);
        return;
    }
    conn_watch(epfd, c, EPOLLIN);
}

static void *
worker(void *arg)
{
    struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE,
                              .data.ptr = NULL };
    struct epoll_event events[256];
    int epfd = epoll_create1(EPOLL_CLOEXEC);

    if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev)) {
        cli_log_fatal("epoll: %s", strerror(errno));
    }
    while (!stop) {
        int n = epoll_wait(epfd, events, 256, 500);
        int i;

        if (n < 0 && errno != EINTR) {
            cli_log_fatal("epoll_wait: %s", strerror(errno));
        }
        for (i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;

            if (!c) {
                do_accept(epfd);
            } else if (c->state == READING) {
                do_read(epfd, c);
            } else {
                do_write(epfd, c);
            }
        }
    }
    /* Connections still open are simply dropped at exit. */
    return arg;
}

static void
write_json(const char *name)
{
    FILE *f = lg_open_output(name);
    struct cli_json j;

    cli_json_start(&j, f);
    cli_json_str(&j, "program", "panda-fg-server");
    cli_json_u64(&j, "connections_accepted", atomic_load(&n_accepted));
    cli_json_u64(&j, "connections_closed", atomic_load(&n_closed));
    cli_json_u64(&j, "max_open_connections", atomic_load(&max_open));
    cli_json_u64(&j, "requests", atomic_load(&n_requests));
    cli_json_u64(&j, "responses_completed", atomic_load(&n_completed));
    cli_json_u64(&j, "responses_aborted", atomic_load(&n_aborted));
    cli_json_u64(&j, "max_active_responses", atomic_load(&max_active));
    cli_json_u64(&j, "bad_requests", atomic_load(&n_bad));
    cli_json_u64(&j, "bytes_sent", atomic_load(&n_bytes));
    cli_json_finish(&j);
    lg_close_output(f, name);
}

int
main(int argc, char *argv[])
{
    struct sockaddr_storage ss;
    struct sigaction sa;
    struct options o;
    pthread_t *threads;
    socklen_t len;
    sigset_t set, old;
    unsigned int i;
    int one = 1;
    char *err;

    cli_log_set_program("panda-fg-server");
    parse_options(argc, argv, &o);
    quiet = o.quiet;
    lg_raise_nofile();

    err = lg_resolve(o.bind, o.port, true, &ss, &len);
    if (err) {
        cli_log_fatal("--bind/--port: %s", err);
    }
    listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK
                       | SOCK_CLOEXEC, 0);
    if (listen_fd < 0) {
        cli_log_fatal("socket: %s", strerror(errno));
    }
    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(listen_fd, (struct sockaddr *) &ss, len)) {
        cli_log_fatal("cannot bind to %s: %s", lg_addr_str(&ss, len),
                 strerror(errno));
    }
    if (listen(listen_fd, o.backlog)) {
        cli_log_fatal("listen: %s", strerror(errno));
    }
    len = sizeof ss;
    getsockname(listen_fd, (struct sockaddr *) &ss, &len);
    if (o.port_file) {
        /* Written to a temporary name and renamed, so a reader never sees
         * a partial file. */
        char *tmp = panda_asprintf("%s.tmp", o.port_file);
        FILE *f = fopen(tmp, "w");
        int port = ntohs(ss.ss_family == AF_INET6
                         ? ((struct sockaddr_in6 *) &ss)->sin6_port
                         : ((struct sockaddr_in *) &ss)->sin_port);

        if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f)
            || rename(tmp, o.port_file)) {
            cli_log_fatal("%s: cannot write port file (%s)", o.port_file,
                     strerror(errno));
        }
        free(tmp);
    }
    if (!quiet) {
        fprintf(stderr, "%s: listening on %s with %u thread(s)\n",
                cli_log_program(), lg_addr_str(&ss, len), o.threads);
    }

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* Extra threads block the signals, so they interrupt the main one. */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    threads = panda_xcalloc(o.threads, sizeof *threads);
    for (i = 1; i < o.threads; i++) {
        if (pthread_create(&threads[i], NULL, worker, NULL)) {
            cli_log_fatal("cannot create thread");
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    worker(NULL);
    for (i = 1; i < o.threads; i++) {
        pthread_join(threads[i], NULL);
    }
    free(threads);

    if (!quiet) {
        fprintf(stderr, "%s: exiting on signal %d: %llu connections, "
                "%llu responses (%llu aborted by clients), %llu bytes\n",
                cli_log_program(), (int) stop,
                (unsigned long long) atomic_load(&n_accepted),
                (unsigned long long) atomic_load(&n_completed),
                (unsigned long long) atomic_load(&n_aborted),
                (unsigned long long) atomic_load(&n_bytes));
    }
    if (o.json) {
        write_json(o.json);
    }
    return 0;
}

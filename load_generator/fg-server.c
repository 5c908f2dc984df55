/*
 * panda-fg-server: the flow generator's server.  Accepts TCP connections,
 * reads 24-byte requests (see lg-common.h) and answers each with the
 * requested number of bytes.  One epoll loop per thread handles any number
 * of connections; clients may vanish at any time.
 *
 * Exposure (the decisions, load_generator/README.md): it listens on
 * loopback unless --bind says otherwise (the testbed binds each server to
 * its namespace's address); a request may ask for at most --max-size bytes;
 * a connection that has sent part of a request must complete it within
 * --request-timeout; one with no request under way is closed after
 * --idle-timeout; at --max-connections, or when the process runs out of
 * file descriptors, the connection idle the longest (else the oldest
 * half-sent request) makes room for a new one, and with none to close it
 * stops accepting for a while (backing off) instead of spinning on a
 * listen socket that stays readable.  A peer that shuts down its side
 * gets the answer to the request it completed, then the connection
 * closes (EOF is read once, never polled again).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lg-common.h"

#define CHUNK (256 * 1024)          /* Bytes per send() call. */
#define BUDGET (1024 * 1024)        /* Bytes per connection per wakeup. */
#define DEFAULT_MAX_SIZE (UINT64_C(1) << 30)    /* 1 GiB: above the largest
                                                 * flow of the shipped CDFs
                                                 * (data-mining, 973 MB). */
#define DEFAULT_REQUEST_TIMEOUT_MS 10000
/* Idle connections (a client's pool between flows) are kept a minute:
 * far longer than the gaps of an experiment's arrivals, short enough
 * that abandoned ones do not hold descriptors for ever. */
#define DEFAULT_IDLE_TIMEOUT_MS 60000
/* Accepting again after EMFILE/ENFILE: first after ACCEPT_PAUSE_MIN_MS,
 * doubling while it keeps failing, at most ACCEPT_PAUSE_MAX_MS. */
#define ACCEPT_PAUSE_MIN_MS 50
#define ACCEPT_PAUSE_MAX_MS 1000

struct options {
    const char *bind;
    const char *port;
    const char *port_file;
    const char *json;
    unsigned int threads;
    unsigned int backlog;
    uint64_t max_size;
    uint64_t request_timeout_ms;
    uint64_t idle_timeout_ms;
    uint64_t max_connections;
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
    /* In its thread's 'partial' list while a request is half received
     * (0 < got < LG_FG_REQ_LEN), or in its 'idle' list while none is
     * (READING, got == 0), with the time it must send (the rest of) one
     * by; in neither while it is answered (WRITING). */
    struct conn *prev, *next;
    uint64_t deadline_ns;
};

/* One epoll thread: its connections, and its view of the listener. */
struct worker {
    int epfd;
    /* Connections with a half-received request, oldest first: every one
     * has the same timeout, so this is also deadline order (a sentinel). */
    struct conn partial;
    /* Connections with no request under way, idle the longest first
     * (the same timeout for all: deadline order too). */
    struct conn idle;
    bool accepting;             /* The listener is in 'epfd'. */
    uint64_t resume_ns;         /* When not accepting: try again then. */
    unsigned int pause_ms;      /* Length of the next pause. */
};

/* Counters, summed over threads. */
static atomic_ullong n_accepted, n_requests, n_completed, n_aborted;
static atomic_ullong n_bad, n_too_large, n_timeouts, n_bytes, n_closed;
static atomic_ullong n_active, max_active, n_open, max_open;
static atomic_ullong n_accept_pauses, n_idle_closed, n_evicted, n_refused;

static volatile sig_atomic_t stop;
static int listen_fd;
static bool quiet;
static uint64_t max_size, request_timeout_ns, idle_timeout_ns;
static uint64_t max_connections;
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
  -b, --bind=ADDR        listen address (default 127.0.0.1, loopback only;\n\
                         the testbed passes its namespace's address; \"::1\"\n\
                         or \"::\" for IPv6, \"0.0.0.0\" for every address)\n\
  -p, --port=PORT        listen port (default 5001; 0 picks a free port)\n\
      --port-file=FILE   write the listening port to FILE once listening\n\
  -t, --threads=N        epoll threads sharing the listener (default 1)\n\
      --backlog=N        listen backlog (default 1024)\n\
      --max-size=BYTES   largest response a request may ask for (default\n\
                         1GiB, at most 1TiB); larger ones drop the connection\n\
      --request-timeout=DURATION\n\
                         close a connection that has sent part of a request\n\
                         and not the rest within DURATION (default 10s)\n\
      --idle-timeout=DURATION\n\
                         close a connection with no request under way for\n\
                         DURATION (default 60s; 0: never)\n\
      --max-connections=N  at most N connections open: the one idle the\n\
                         longest makes room for a new one (default 0: as\n\
                         many as descriptors allow)\n\
      --json=FILE        write counters as JSON to FILE on exit\n\
                         (\"-\" for stdout)\n\
  -q, --quiet            no log lines on stderr\n\
  -h, --help             show this help and exit\n\
      --version          show the version and exit\n\
\n\
DURATION: a number and a unit, e.g. 500ms, 10s, 2m; a bare number is\n\
milliseconds in --request-timeout and --idle-timeout (deprecated: give\n\
the unit).\n\
Exit status: 0 after SIGINT or SIGTERM, 2 on bad arguments, 1 on errors.\n\
See load_generator/README.md for the request format.\n");
}

static void
parse_options(int argc, char *argv[], struct options *o)
{
    enum { OPT_PORT_FILE = 256, OPT_BACKLOG, OPT_JSON, OPT_MAX_SIZE,
           OPT_REQUEST_TIMEOUT, OPT_IDLE_TIMEOUT, OPT_MAX_CONNECTIONS };
    static const struct option longopts[] = {
        { "bind", required_argument, NULL, 'b' },
        { "port", required_argument, NULL, 'p' },
        { "port-file", required_argument, NULL, OPT_PORT_FILE },
        { "threads", required_argument, NULL, 't' },
        { "backlog", required_argument, NULL, OPT_BACKLOG },
        { "json", required_argument, NULL, OPT_JSON },
        { "max-size", required_argument, NULL, OPT_MAX_SIZE },
        { "request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT },
        { "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
        { "max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS },
        { "quiet", no_argument, NULL, 'q' },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    int c;

    memset(o, 0, sizeof *o);
    o->bind = "127.0.0.1";
    o->port = "5001";
    o->threads = 1;
    o->backlog = 1024;
    o->max_size = DEFAULT_MAX_SIZE;
    o->request_timeout_ms = DEFAULT_REQUEST_TIMEOUT_MS;
    o->idle_timeout_ms = DEFAULT_IDLE_TIMEOUT_MS;
    while ((c = cli_opt_next(argc, argv, "b:p:t:qh", longopts, usage))
           != -1) {
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
        case OPT_MAX_SIZE:
            o->max_size = cli_parse_bytes("--max-size", optarg, 1,
                                          LG_FG_MAX_SIZE);
            break;
        case OPT_REQUEST_TIMEOUT:
            o->request_timeout_ms = llround(cli_parse_duration(
                "--request-timeout", optarg, 1e-3, 1e-3, 3600) * 1e3);
            break;
        case OPT_IDLE_TIMEOUT:
            o->idle_timeout_ms = llround(cli_parse_duration(
                "--idle-timeout", optarg, 1e-3, 0, 86400) * 1e3);
            break;
        case OPT_MAX_CONNECTIONS:
            o->max_connections = cli_parse_u64("--max-connections", optarg,
                                               0, 10000000);
            break;
        case 'q':
            o->quiet = true;
            break;
        }
    }
    cli_opt_no_operands(argc, argv);
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

/* The peer of 'fd' as "host:port", for messages. */
static const char *
peer_str(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;

    if (getpeername(fd, (struct sockaddr *) &ss, &len)) {
        return "?";
    }
    return lg_addr_str(&ss, len);
}

/* Takes 'c' out of the 'partial' or 'idle' list it is in, if any. */
static void
list_remove(struct conn *c)
{
    if (c->next) {
        c->prev->next = c->next;
        c->next->prev = c->prev;
        c->prev = c->next = NULL;
    }
}

static void
list_append(struct conn *head, struct conn *c, uint64_t deadline_ns)
{
    list_remove(c);
    c->deadline_ns = deadline_ns;
    c->prev = head->prev;
    c->next = head;
    head->prev->next = c;
    head->prev = c;
}

static void
partial_append(struct worker *w, struct conn *c)
{
    list_append(&w->partial, c, cli_clock_mono_ns() + request_timeout_ns);
}

/* 'c' has no request under way (READING, got == 0). */
static void
idle_append(struct worker *w, struct conn *c)
{
    list_append(&w->idle, c, (idle_timeout_ns
                              ? cli_clock_mono_ns() + idle_timeout_ns
                              : UINT64_MAX));
}

static void
conn_close(struct worker *w, struct conn *c)
{
    if (c->state == WRITING) {
        atomic_fetch_sub(&n_active, 1);
    }
    list_remove(c);
    epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    atomic_fetch_sub(&n_open, 1);
    atomic_fetch_add(&n_closed, 1);
    free(c);
}

static void
conn_watch(struct worker *w, struct conn *c, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = c };

    epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void
listener_watch(struct worker *w, bool on)
{
    struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE,
                              .data.ptr = NULL };

    if (on == w->accepting) {
        return;
    }
    if (epoll_ctl(w->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, listen_fd,
                  &ev)) {
        cli_log_fatal("epoll_ctl (listener): %s", strerror(errno));
    }
    w->accepting = on;
}

/* Out of file descriptors (or at --max-connections) with no idle
 * connection to close (evict_one()): the pending connection stays in the
 * listen queue, so the listener stays readable and accepting again at once
 * would spin.  Take the listener out of this thread's epoll set for a
 * while (doubling while it keeps happening); connections closing meanwhile
 * free descriptors, and the queued clients are accepted when it comes
 * back. */
static void
accept_pause(struct worker *w, const char *why)
{
    static atomic_bool warned;

    atomic_fetch_add(&n_accept_pauses, 1);
    if (!quiet && !atomic_exchange(&warned, true)) {
        cli_log_warn("accept: %s with %llu connections open, every one "
                     "with a request under way: not accepting for %u ms at "
                     "a time until one is free (raise the limit: ulimit -n, "
                     "--max-connections; further warnings suppressed)", why,
                     (unsigned long long) atomic_load(&n_open), w->pause_ms);
    }
    listener_watch(w, false);
    w->resume_ns = cli_clock_mono_ns() + w->pause_ms * UINT64_C(1000000);
    w->pause_ms = (w->pause_ms * 2 < ACCEPT_PAUSE_MAX_MS
                   ? w->pause_ms * 2 : ACCEPT_PAUSE_MAX_MS);
}

/* The first connection of list 'head' with nothing unread (a request
 * that has arrived but not been read yet is not idle), or NULL. */
static struct conn *
first_quiet(struct conn *head)
{
    struct conn *c;

    for (c = head->next; c != head; c = c->next) {
        int avail = 0;

        if (ioctl(c->fd, FIONREAD, &avail) || !avail) {
            return c;
        }
    }
    return NULL;
}

/* Closes this thread's connection idle the longest, else its oldest
 * half-sent request, to make room for a new connection.  Returns false if
 * it has neither. */
static bool
evict_one(struct worker *w)
{
    struct conn *c = first_quiet(&w->idle);

    if (!c) {
        c = first_quiet(&w->partial);
    }
    if (!c) {
        return false;
    }
    atomic_fetch_add(&n_evicted, 1);
    conn_close(w, c);
    return true;
}

static void
do_accept(struct worker *w)
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
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS
                || errno == ENOMEM) {
                if (evict_one(w)) {
                    continue;
                }
                accept_pause(w, strerror(errno));
            } else if (errno != EAGAIN && errno != EWOULDBLOCK
                       && errno != EINTR && errno != ECONNABORTED) {
                cli_log_warn("accept: %s", strerror(errno));
            }
            return;
        }
        if (max_connections && atomic_load(&n_open) >= max_connections
            && !evict_one(w)) {
            /* Every connection of this thread has a request under way. */
            atomic_fetch_add(&n_refused, 1);
            close(fd);
            accept_pause(w, "--max-connections reached");
            return;
        }
        w->pause_ms = ACCEPT_PAUSE_MIN_MS;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c = panda_xcalloc(1, sizeof *c);
        c->fd = fd;
        c->family = ss.ss_family;
        c->state = READING;
        ev.events = EPOLLIN;
        ev.data.ptr = c;
        if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev)) {
            cli_log_warn("epoll_ctl: %s", strerror(errno));
            close(fd);
            free(c);
            continue;
        }
        atomic_fetch_add(&n_accepted, 1);
        track_max(&n_open, &max_open);
        idle_append(w, c);
    }
}

/* Closes the idle connections past --idle-timeout; returns the ms until
 * the next one's deadline (or 'max_ms'). */
static int
expire_idle(struct worker *w, int max_ms)
{
    uint64_t now = cli_clock_mono_ns();

    while (w->idle.next != &w->idle) {
        struct conn *c = w->idle.next;

        if (c->deadline_ns == UINT64_MAX) {
            return max_ms;          /* --idle-timeout 0: never. */
        }
        if (c->deadline_ns > now) {
            uint64_t ms = (c->deadline_ns - now + 999999) / 1000000;

            return ms < (uint64_t) max_ms ? (int) ms : max_ms;
        }
        atomic_fetch_add(&n_idle_closed, 1);
        conn_close(w, c);
    }
    return max_ms;
}

/* Closes the connections whose half-received request is overdue; returns
 * the ms until the next deadline (or 'max_ms'). */
static int
expire_partial(struct worker *w, int max_ms)
{
    uint64_t now = cli_clock_mono_ns();

    while (w->partial.next != &w->partial) {
        struct conn *c = w->partial.next;

        if (c->deadline_ns > now) {
            uint64_t ms = (c->deadline_ns - now + 999999) / 1000000;

            return ms < (uint64_t) max_ms ? (int) ms : max_ms;
        }
        atomic_fetch_add(&n_timeouts, 1);
        if (!quiet) {
            cli_log_warn("closing connection from %s: %zu of %d request "
                         "bytes within --request-timeout (%llu ms)",
                         peer_str(c->fd), c->got, LG_FG_REQ_LEN,
                         (unsigned long long) (request_timeout_ns / 1000000));
        }
        conn_close(w, c);
    }
    return max_ms;
}

/* Returns false if 'c' was closed. */
static bool
do_read(struct worker *w, struct conn *c)
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
        conn_close(w, c);
        return false;
    }
    if (!c->got) {
        partial_append(w, c);
    }
    c->got += n;
    if (c->got < sizeof c->req) {
        return true;
    }
    c->got = 0;
    list_remove(c);
    err = lg_fg_req_decode(c->req, &req);
    if (!err && req.size > max_size) {
        atomic_fetch_add(&n_too_large, 1);
        if (!quiet) {
            cli_log_warn("dropping connection from %s: request for %llu "
                         "bytes is above --max-size (%llu bytes)",
                         peer_str(c->fd), (unsigned long long) req.size,
                         (unsigned long long) max_size);
        }
        conn_close(w, c);
        return false;
    }
    if (err) {
        atomic_fetch_add(&n_bad, 1);
        if (!quiet) {
            cli_log_warn("dropping connection from %s with bad request: %s",
                         peer_str(c->fd), err);
        }
        conn_close(w, c);
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
    conn_watch(w, c, EPOLLOUT);
    return true;
}

static void
do_write(struct worker *w, struct conn *c)
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
            conn_close(w, c);
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
        conn_close(w, c);
        return;
    }
    idle_append(w, c);
    conn_watch(w, c, EPOLLIN);
}

static void *
worker(void *arg)
{
    struct epoll_event events[256];
    struct worker w;

    memset(&w, 0, sizeof w);
    w.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w.epfd < 0) {
        cli_log_fatal("epoll: %s", strerror(errno));
    }
    w.partial.prev = w.partial.next = &w.partial;
    w.idle.prev = w.idle.next = &w.idle;
    w.pause_ms = ACCEPT_PAUSE_MIN_MS;
    listener_watch(&w, true);
    while (!stop) {
        int timeout = expire_idle(&w, expire_partial(&w, 500));
        bool accept = false;
        int n, i;

        if (!w.accepting) {
            uint64_t now = cli_clock_mono_ns();

            if (now >= w.resume_ns) {
                listener_watch(&w, true);
            } else if ((w.resume_ns - now) / 1000000 < (uint64_t) timeout) {
                timeout = (w.resume_ns - now + 999999) / 1000000;
            }
        }
        n = epoll_wait(w.epfd, events, 256, timeout);
        if (n < 0 && errno != EINTR) {
            cli_log_fatal("epoll_wait: %s", strerror(errno));
        }
        for (i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;

            if (!c) {
                accept = true;
            } else if (c->state == READING) {
                do_read(&w, c);
            } else {
                do_write(&w, c);
            }
        }
        /* After this poll's events: making room closes a connection,
         * which a later event of the same poll may name. */
        if (accept) {
            do_accept(&w);
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
    cli_json_u64(&j, "requests_too_large", atomic_load(&n_too_large));
    cli_json_u64(&j, "request_timeouts", atomic_load(&n_timeouts));
    cli_json_u64(&j, "accept_pauses", atomic_load(&n_accept_pauses));
    cli_json_u64(&j, "idle_closed", atomic_load(&n_idle_closed));
    cli_json_u64(&j, "evicted", atomic_load(&n_evicted));
    cli_json_u64(&j, "refused", atomic_load(&n_refused));
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
    max_size = o.max_size;
    request_timeout_ns = o.request_timeout_ms * UINT64_C(1000000);
    idle_timeout_ns = o.idle_timeout_ms * UINT64_C(1000000);
    max_connections = o.max_connections;
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

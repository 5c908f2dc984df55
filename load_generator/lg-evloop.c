/* The priority event loop; see lg-evloop.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "lg-evloop.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <panda/base.h>

#define MAX_EVENTS 256
#define LISTENER_TAG 1u         /* Low bit of an epoll cookie: a listener. */
/* Accepting again after running out of room (descriptors, or
 * max_connections with none idle): first after ACCEPT_PAUSE_MIN_MS,
 * doubling while it keeps happening, at most ACCEPT_PAUSE_MAX_MS. */
#define ACCEPT_PAUSE_MIN_MS 50
#define ACCEPT_PAUSE_MAX_MS 1000
#define MS 1000000ull

struct lg_ev_listener {
    int fd;
    const struct panda_classifier *cls;
    lg_ev_handler *handler;
    void *aux;
    bool readable;              /* Reported by the current poll. */
    struct lg_ev_listener *next;
};

struct lg_ev_conn {
    union panda_cls_state state;    /* First: its own cache line. */
    int fd;
    uint8_t level;              /* Of the request queued or being handled. */
    uint8_t mark;               /* What the rule 'app' sees as DSCP. */
    bool queued;                /* In a ready queue. */
    bool busy;                  /* On the worker (out of the poll set). */
    bool eof;                   /* The peer shut down its side. */
    bool waiting;               /* Part of a request (LG_EV_MORE): polled
                                 * edge-triggered, for more bytes. */
    int waiting_avail;          /* Bytes unread when it said so. */
    uint64_t last_ns;           /* Accepted, or last handled. */
    uint64_t more_since_ns;     /* First LG_EV_MORE of this request. */
    enum lg_ev_status status;   /* The worker's handler's verdict. */
    uint64_t ready_seq;         /* When it was queued (loop order). */
    struct panda_pkt key;       /* Family, ports and addresses. */
    const struct lg_ev_listener *l;
    struct lg_ev_conn *next;    /* In a ready, work or done queue. */
    struct lg_ev_conn *all_prev, *all_next;     /* In 'all'. */
};

struct queue {
    struct lg_ev_conn *head, *tail;
};

struct lg_ev_loop {
    struct lg_ev_config cfg;
    int epfd;
    int wakefd;                 /* eventfd: stop, and worker completions. */
    atomic_bool stop;
    struct lg_ev_listener *listeners;
    struct lg_ev_conn all;      /* Sentinel of every open connection. */
    size_t n_conns;
    bool accepting;             /* The listeners are polled. */
    uint64_t resume_ns;         /* When not: accept again then. */
    unsigned int pause_ms;      /* Length of the next pause. */
    uint64_t sweep_ns;          /* Next check of the timeouts. */
    struct queue ready[PANDA_MAX_LEVELS];
    size_t n_ready;
    uint64_t seq;
    struct lg_ev_stats stats;

    /* The dedicated worker (offload_level > 0). */
    bool have_worker;
    pthread_t worker;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    struct queue work, done;    /* Under 'mutex'. */
    bool worker_exit;           /* Under 'mutex'. */
};

static void
queue_push(struct queue *q, struct lg_ev_conn *c)
{
    c->next = NULL;
    if (q->tail) {
        q->tail->next = c;
    } else {
        q->head = c;
    }
    q->tail = c;
}

static struct lg_ev_conn *
queue_pop(struct queue *q)
{
    struct lg_ev_conn *c = q->head;

    if (c) {
        q->head = c->next;
        if (!q->head) {
            q->tail = NULL;
        }
        c->next = NULL;
    }
    return c;
}

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static void
wake(struct lg_ev_loop *loop)
{
    uint64_t one = 1;

    /* A full counter (2^64 - 2 wakeups) still wakes the loop: ignore. */
    if (write(loop->wakefd, &one, sizeof one) < 0) {
        return;
    }
}

/* Raises the calling thread's nice value to 'nice' if it is lower (on
 * Linux a nice value belongs to a thread, named by its tid).  Best effort:
 * raising never needs privilege, and a worker left at the caller's value
 * still works, only without the CPU's priority. */
static void
raise_thread_nice(int nice)
{
    pid_t tid = (pid_t) syscall(SYS_gettid);
    int cur;

    errno = 0;
    cur = getpriority(PRIO_PROCESS, (id_t) tid);
    if (!errno && cur < nice) {
        (void) setpriority(PRIO_PROCESS, (id_t) tid, nice);
    }
}

static void *
worker_main(void *loop_)
{
    struct lg_ev_loop *loop = loop_;

    if (loop->cfg.worker_nice) {
        raise_thread_nice(loop->cfg.worker_nice);
    }
    for (;;) {
        struct lg_ev_conn *c;

        pthread_mutex_lock(&loop->mutex);
        while (!loop->work.head && !loop->worker_exit) {
            pthread_cond_wait(&loop->cond, &loop->mutex);
        }
        c = queue_pop(&loop->work);
        pthread_mutex_unlock(&loop->mutex);
        if (!c) {
            return NULL;
        }
        c->status = c->l->handler(c, c->l->aux);
        pthread_mutex_lock(&loop->mutex);
        queue_push(&loop->done, c);
        pthread_mutex_unlock(&loop->mutex);
        wake(loop);
    }
}

struct lg_ev_loop *
lg_ev_create(const struct lg_ev_config *cfg, char **errp)
{
    struct lg_ev_loop *loop = calloc(1, sizeof *loop);
    struct epoll_event ev;

    *errp = NULL;
    if (!loop) {
        *errp = panda_asprintf("out of memory");
        return NULL;
    }
    if (cfg->offload_level >= PANDA_MAX_LEVELS) {
        *errp = panda_asprintf("offload level %d: must be 0 (none) to %d",
                               cfg->offload_level, PANDA_MAX_LEVELS - 1);
        free(loop);
        return NULL;
    }
    if (cfg->worker_nice > 19) {
        *errp = panda_asprintf("worker nice value %d: must be 0 to 19",
                               cfg->worker_nice);
        free(loop);
        return NULL;
    }
    loop->cfg = *cfg;
    loop->all.all_prev = loop->all.all_next = &loop->all;
    loop->accepting = true;
    loop->pause_ms = ACCEPT_PAUSE_MIN_MS;
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    loop->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.u64 = 0;            /* The wake fd. */
    if (loop->epfd < 0 || loop->wakefd < 0
        || epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wakefd, &ev)) {
        *errp = panda_asprintf("epoll/eventfd: %s", strerror(errno));
        goto error;
    }
    pthread_mutex_init(&loop->mutex, NULL);
    pthread_cond_init(&loop->cond, NULL);
    if (cfg->offload_level) {
        int error = pthread_create(&loop->worker, NULL, worker_main, loop);

        if (error) {
            *errp = panda_asprintf("worker thread: %s", strerror(error));
            goto error;
        }
        loop->have_worker = true;
    }
    return loop;

error:
    if (loop->epfd >= 0) {
        close(loop->epfd);
    }
    if (loop->wakefd >= 0) {
        close(loop->wakefd);
    }
    free(loop);
    return NULL;
}

static void
conn_close(struct lg_ev_loop *loop, struct lg_ev_conn *c)
{
    epoll_ctl(loop->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->all_prev->all_next = c->all_next;
    c->all_next->all_prev = c->all_prev;
    loop->stats.closed++;
    loop->n_conns--;
    free(c);
}

/* What 'c' is polled for: its input, and its peer's FIN (EPOLLRDHUP), so
 * that a half-closed connection is seen as such; edge-triggered while it
 * waits for the rest of a request (the bytes already there do not wake
 * the loop again). */
static uint32_t
conn_events(const struct lg_ev_conn *c)
{
    return EPOLLIN | EPOLLRDHUP | (c->waiting ? EPOLLET : 0);
}

static int
conn_unread(const struct lg_ev_conn *c)
{
    int avail = 0;

    return ioctl(c->fd, FIONREAD, &avail) ? 0 : avail;
}

/* Closes the connection idle the longest (nothing unread, or only part
 * of a request), to make room for a new one.  Returns false if there is
 * none: every connection has a request under way. */
static bool
evict_one(struct lg_ev_loop *loop)
{
    struct lg_ev_conn *c, *oldest = NULL;

    for (c = loop->all.all_next; c != &loop->all; c = c->all_next) {
        if (!c->queued && !c->busy
            && (!oldest || c->last_ns < oldest->last_ns)
            && (c->waiting || !conn_unread(c))) {
            oldest = c;
        }
    }
    if (!oldest) {
        return false;
    }
    loop->stats.evicted++;
    conn_close(loop, oldest);
    return true;
}

static void
listeners_poll(struct lg_ev_loop *loop, bool on)
{
    struct lg_ev_listener *l;

    if (on == loop->accepting) {
        return;
    }
    for (l = loop->listeners; l; l = l->next) {
        struct epoll_event ev;

        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLIN;
        ev.data.u64 = (uintptr_t) l | LISTENER_TAG;
        epoll_ctl(loop->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, l->fd,
                  &ev);
    }
    loop->accepting = on;
}

/* No room for a new connection: stop polling the listeners (which stay
 * readable while connections wait in their queues) for a while. */
static void
accept_pause(struct lg_ev_loop *loop)
{
    loop->stats.accept_pauses++;
    listeners_poll(loop, false);
    loop->resume_ns = now_ns() + loop->pause_ms * MS;
    loop->pause_ms = (loop->pause_ms * 2 < ACCEPT_PAUSE_MAX_MS
                      ? loop->pause_ms * 2 : ACCEPT_PAUSE_MAX_MS);
}

void
lg_ev_destroy(struct lg_ev_loop *loop)
{
    struct lg_ev_listener *l, *next;

    if (!loop) {
        return;
    }
    if (loop->have_worker) {
        pthread_mutex_lock(&loop->mutex);
        loop->worker_exit = true;
        pthread_cond_signal(&loop->cond);
        pthread_mutex_unlock(&loop->mutex);
        pthread_join(loop->worker, NULL);
    }
    while (loop->all.all_next != &loop->all) {
        conn_close(loop, loop->all.all_next);
    }
    for (l = loop->listeners; l; l = next) {
        next = l->next;
        free(l);
    }
    pthread_mutex_destroy(&loop->mutex);
    pthread_cond_destroy(&loop->cond);
    close(loop->epfd);
    close(loop->wakefd);
    free(loop);
}

int
lg_ev_listen(struct lg_ev_loop *loop, int fd,
             const struct panda_classifier *cls, lg_ev_handler *handler,
             void *aux)
{
    struct lg_ev_listener *l = calloc(1, sizeof *l);
    struct epoll_event ev;
    int flags = fcntl(fd, F_GETFL);

    if (!l) {
        return ENOMEM;
    }
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        int error = errno;

        free(l);
        return error;
    }
    l->fd = fd;
    l->cls = cls;
    l->handler = handler;
    l->aux = aux;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.u64 = (uintptr_t) l | LISTENER_TAG;
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev)) {
        int error = errno;

        free(l);
        return error;
    }
    if (!loop->accepting) {
        epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
    }
    l->next = loop->listeners;
    loop->listeners = l;
    return 0;
}

/* Fills the addresses and ports of 'key' (network byte order, as the
 * datapath has them: the peer is the source, we are the destination). */
static void
conn_key(int fd, const struct sockaddr_storage *peer, struct panda_pkt *key)
{
    struct sockaddr_storage local;
    socklen_t len = sizeof local;

    memset(key, 0, sizeof *key);
    key->proto = 6;
    if (getsockname(fd, (struct sockaddr *) &local, &len)) {
        memset(&local, 0, sizeof local);
    }
    if (peer->ss_family == AF_INET6) {
        const struct sockaddr_in6 *p = (const void *) peer;
        const struct sockaddr_in6 *m = (const void *) &local;

        key->family = 6;
        memcpy(key->src.v6, &p->sin6_addr, 16);
        memcpy(key->dst.v6, &m->sin6_addr, 16);
        key->sport = p->sin6_port;
        key->dport = m->sin6_port;
    } else {
        const struct sockaddr_in *p = (const void *) peer;
        const struct sockaddr_in *m = (const void *) &local;

        key->family = 4;
        key->src.v4 = p->sin_addr.s_addr;
        key->dst.v4 = m->sin_addr.s_addr;
        key->sport = p->sin_port;
        key->dport = m->sin_port;
    }
}

static void
accept_all(struct lg_ev_loop *loop, struct lg_ev_listener *l)
{
    for (;;) {
        struct sockaddr_storage peer;
        socklen_t len = sizeof peer;
        struct epoll_event ev;
        struct lg_ev_conn *c;
        int one = 1, fd;

        fd = accept4(l->fd, (struct sockaddr *) &peer, &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            /* EAGAIN: done.  Out of descriptors or memory: make room, or
             * stop polling the listener, which stays readable. */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS
                || errno == ENOMEM) {
                if (evict_one(loop)) {
                    continue;
                }
                accept_pause(loop);
            }
            return;
        }
        if (loop->cfg.max_connections
            && loop->n_conns >= loop->cfg.max_connections
            && !evict_one(loop)) {
            /* Every connection has a request under way. */
            loop->stats.refused++;
            close(fd);
            accept_pause(loop);
            return;
        }
        loop->pause_ms = ACCEPT_PAUSE_MIN_MS;
        if (posix_memalign((void **) &c, PANDA_CLS_STATE_MAX, sizeof *c)) {
            close(fd);
            return;
        }
        memset(c, 0, sizeof *c);
        c->fd = fd;
        c->l = l;
        c->last_ns = now_ns();
        conn_key(fd, &peer, &c->key);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        memset(&ev, 0, sizeof ev);
        ev.events = conn_events(c);
        ev.data.ptr = c;
        if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev)) {
            close(fd);
            free(c);
            continue;
        }
        c->all_next = loop->all.all_next;
        c->all_prev = &loop->all;
        c->all_next->all_prev = c;
        loop->all.all_next = c;
        loop->stats.accepted++;
        loop->n_conns++;
    }
}

/* 'c' is readable: classifies the request that its waiting bytes begin
 * and queues it at that level. */
static void
conn_ready(struct lg_ev_loop *loop, struct lg_ev_conn *c)
{
    uint8_t buf[PANDA_MAX_KEYWORD];
    struct panda_pkt pkt;
    int avail = 0;
    ssize_t n;

    n = recv(c->fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        return;                 /* Spurious. */
    }
    if (n <= 0 || !c->l->cls) {
        /* End of stream or an error: level 0, so that the handler sees it
         * (and the connection is closed) without waiting. */
        c->level = 0;
    } else {
        if (ioctl(c->fd, FIONREAD, &avail) || avail < n) {
            avail = n;
        }
        pkt = c->key;
        pkt.dscp = c->mark;
        pkt.payload = avail;
        pkt.data = buf;
        pkt.data_len = n;
        c->level = panda_cls_classify(c->l->cls, &c->state, &pkt);
        if (c->level >= PANDA_MAX_LEVELS) {
            c->level = PANDA_MAX_LEVELS - 1;
        }
    }
    c->queued = true;
    c->ready_seq = loop->seq++;
    queue_push(&loop->ready[loop->cfg.order == LG_EV_PRIORITY ? c->level : 0],
               c);
    loop->n_ready++;
}

/* Takes the next connection to dispatch out of the ready queues. */
static struct lg_ev_conn *
next_ready(struct lg_ev_loop *loop)
{
    struct lg_ev_conn *c = NULL, *oldest = NULL;
    int i;

    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        struct lg_ev_conn *h = loop->ready[i].head;

        if (h && !c) {
            c = h;
        }
        if (h && (!oldest || h->ready_seq < oldest->ready_seq)) {
            oldest = h;
        }
    }
    if (c) {
        queue_pop(&loop->ready[loop->cfg.order == LG_EV_PRIORITY
                               ? c->level : 0]);
        loop->n_ready--;
        c->queued = false;
        loop->stats.overtakes += c != oldest;
    }
    return c;
}

static void
poll_set(struct lg_ev_loop *loop, struct lg_ev_conn *c, uint32_t events)
{
    struct epoll_event ev;

    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.ptr = c;
    epoll_ctl(loop->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Applies a handler's verdict 'st' on 'c'; 'polled': 'c' is in the poll
 * set (not back from the worker). */
static void
conn_after(struct lg_ev_loop *loop, struct lg_ev_conn *c,
           enum lg_ev_status st, bool polled)
{
    uint64_t now = now_ns();
    bool was_waiting = c->waiting;

    if (st == LG_EV_CLOSE) {
        conn_close(loop, c);
        return;
    }
    c->last_ns = now;
    if (st == LG_EV_MORE) {
        if (c->eof) {
            /* The rest can never come. */
            loop->stats.incomplete_eof++;
            conn_close(loop, c);
            return;
        }
        c->waiting = true;
        c->waiting_avail = conn_unread(c);
        if (!c->more_since_ns) {
            c->more_since_ns = now;
        }
    } else {
        c->waiting = false;
        c->more_since_ns = 0;
    }
    if (!polled) {
        struct epoll_event ev;

        memset(&ev, 0, sizeof ev);
        ev.events = conn_events(c);
        ev.data.ptr = c;
        epoll_ctl(loop->epfd, EPOLL_CTL_ADD, c->fd, &ev);
    } else if (was_waiting != c->waiting) {
        poll_set(loop, c, conn_events(c));
    }
}

static void
dispatch(struct lg_ev_loop *loop, struct lg_ev_conn *c)
{
    loop->stats.dispatched[c->level]++;
    if (loop->have_worker && c->level >= loop->cfg.offload_level) {
        /* Out of the poll set until the worker is done with it (deleted,
         * not polled for nothing: a hang-up is reported regardless of
         * the events asked for, and would wake the loop at once, again
         * and again). */
        c->busy = true;
        epoll_ctl(loop->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        loop->stats.offloaded++;
        pthread_mutex_lock(&loop->mutex);
        queue_push(&loop->work, c);
        pthread_cond_signal(&loop->cond);
        pthread_mutex_unlock(&loop->mutex);
    } else {
        conn_after(loop, c, c->l->handler(c, c->l->aux), true);
    }
}

/* Closes the connections past their timeouts. */
static void
sweep(struct lg_ev_loop *loop, uint64_t now)
{
    uint64_t idle = loop->cfg.idle_timeout_ms * MS;
    uint64_t request = loop->cfg.request_timeout_ms * MS;
    struct lg_ev_conn *c, *next;

    for (c = loop->all.all_next; c != &loop->all; c = next) {
        next = c->all_next;
        if (c->queued || c->busy) {
            continue;
        }
        if (c->waiting) {
            if (request && now - c->more_since_ns >= request) {
                loop->stats.request_timeouts++;
                conn_close(loop, c);
            }
        } else if (idle && now - c->last_ns >= idle && !conn_unread(c)) {
            loop->stats.idle_closed++;
            conn_close(loop, c);
        }
    }
}

/* How long the loop may block: until the next sweep of the timeouts or
 * the end of an accept pause, at most 1 s. */
static int
poll_timeout(struct lg_ev_loop *loop, uint64_t now)
{
    uint64_t until = now + 1000 * MS;
    uint32_t t = loop->cfg.idle_timeout_ms;

    if (loop->cfg.request_timeout_ms
        && (!t || loop->cfg.request_timeout_ms < t)) {
        t = loop->cfg.request_timeout_ms;
    }
    if (t) {
        if (now >= loop->sweep_ns) {
            sweep(loop, now);
            /* A quarter of the shortest timeout: a connection is closed
             * at most 25% late. */
            loop->sweep_ns = now + (t / 4 ? t / 4 : 1) * MS;
        }
        until = loop->sweep_ns < until ? loop->sweep_ns : until;
    }
    if (!loop->accepting) {
        if (now >= loop->resume_ns) {
            listeners_poll(loop, true);
        } else if (loop->resume_ns < until) {
            until = loop->resume_ns;
        }
    }
    return (int) ((until - now + MS - 1) / MS);
}

/* Takes back the connections the worker is done with. */
static void
collect_done(struct lg_ev_loop *loop)
{
    struct queue done;
    struct lg_ev_conn *c;
    uint64_t n;

    if (read(loop->wakefd, &n, sizeof n) < 0) {
        /* EAGAIN: nothing to read. */
    }
    pthread_mutex_lock(&loop->mutex);
    done = loop->done;
    loop->done.head = loop->done.tail = NULL;
    pthread_mutex_unlock(&loop->mutex);
    while ((c = queue_pop(&done)) != NULL) {
        c->busy = false;
        conn_after(loop, c, c->status, false);
    }
}

int
lg_ev_run(struct lg_ev_loop *loop)
{
    struct epoll_event evs[MAX_EVENTS];

    while (!atomic_load(&loop->stop)) {
        struct lg_ev_listener *l;
        struct lg_ev_conn *c;
        int i, n, timeout;

        /* Block only when nothing is waiting to be dispatched. */
        timeout = poll_timeout(loop, now_ns());
        n = epoll_wait(loop->epfd, evs, MAX_EVENTS,
                       loop->n_ready ? 0 : timeout);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        for (i = 0; i < n; i++) {
            uint64_t cookie = evs[i].data.u64;

            if (!cookie) {
                collect_done(loop);
            } else if (cookie & LISTENER_TAG) {
                ((struct lg_ev_listener *)
                 (uintptr_t) (cookie & ~(uint64_t) 1))->readable = true;
            } else {
                c = evs[i].data.ptr;
                if (evs[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                    c->eof = true;
                }
                if (c->waiting && !c->eof
                    && conn_unread(c) == c->waiting_avail) {
                    continue;   /* Nothing new for the partial request. */
                }
                if (!c->queued && !c->busy) {
                    conn_ready(loop, c);
                }
            }
        }
        /* Accepted after this poll's events are handled: making room
         * closes a connection, which a later event of the same poll may
         * name. */
        for (l = loop->listeners; l; l = l->next) {
            if (l->readable) {
                l->readable = false;
                accept_all(loop, l);
            }
        }
        c = next_ready(loop);
        if (c) {
            dispatch(loop, c);
        }
    }
    return 0;
}

void
lg_ev_stop(struct lg_ev_loop *loop)
{
    atomic_store(&loop->stop, true);
    wake(loop);
}

void
lg_ev_stats(struct lg_ev_loop *loop, struct lg_ev_stats *s)
{
    *s = loop->stats;
}

int
lg_ev_conn_fd(const struct lg_ev_conn *c)
{
    return c->fd;
}

uint8_t
lg_ev_conn_level(const struct lg_ev_conn *c)
{
    return c->level;
}

union panda_cls_state *
lg_ev_conn_state(struct lg_ev_conn *c)
{
    return &c->state;
}

void
lg_ev_conn_set_mark(struct lg_ev_conn *c, uint8_t dscp)
{
    c->mark = dscp;
}

bool
lg_ev_conn_eof(const struct lg_ev_conn *c)
{
    return c->eof;
}

/*
 * An epoll event loop for servers that dispatches ready connections in
 * priority order: the event framework of ADPS (seed 002) on the
 * kernel's sockets.  A small library: panda-adp-server is built on it, and
 * any request/response server can be.
 *
 * Classification.  A listener is registered with a classifier
 * (lib/panda/classifier.h, the same interface as the datapath's), which
 * every connection accepted from it inherits, with its own 64-byte private
 * state (ADPS: a callback per listener, a private area per connection).
 * When a connection becomes readable, the loop peeks at its first bytes
 * (MSG_PEEK, at most PANDA_MAX_KEYWORD) and the number of bytes waiting
 * (FIONREAD) and asks the classifier for the level of the request they
 * begin.  The application talks to the classifier through the state
 * (lg_ev_conn_state()) and through the connection's mark, which the rule
 * 'app' reads as the packet's DSCP (lg_ev_conn_set_mark(): a priority the
 * application itself sets for its connection).
 *
 * Dispatch.  Ready connections wait in one FIFO per level.  The loop calls
 * the handler of one connection at a time, the oldest of the highest level
 * (LG_EV_PRIORITY) or the oldest of all (LG_EV_FIFO, what an ordinary loop
 * does: the baseline), and polls again (without blocking) after every
 * handler, so that a request that arrives while others wait goes ahead of
 * lower levels.  A handler handles one request and returns; the loop is
 * level-triggered, so a connection with more requests is classified and
 * queued again on the next poll.  Dispatch is not preemptive: a handler
 * that runs for 10 ms holds back everything for 10 ms.
 *
 * Dedicated worker (ADPS: "events of a priority dispatched to their own
 * core").  With 'offload_level' L > 0, requests of levels >= L run on a
 * worker thread of their own, so that long low-priority requests never hold
 * the loop; the connection is out of the poll set while the worker has it.
 * With 'worker_nice' N the worker runs at a nice value of at least N, so
 * that where there are fewer free cores than runnable threads the kernel's
 * scheduler, too, lets the loop's high levels go first: the CPU is one more
 * stage that can queue a request (ADPS), and the worker's own core is what
 * ADPS assumes, which a shared machine does not give.  A nice value is
 * only ever raised (lowering it needs privilege), so N below the caller's
 * leaves the worker at the caller's.
 *
 * Exposure.  A handler that finds only part of a request returns
 * LG_EV_MORE: the loop then waits for more bytes without polling the ones
 * already there (edge-triggered until the request is complete), closes
 * the connection if its peer has shut down its side (the rest can never
 * come: the half-closed connection that otherwise stays readable for
 * ever), and closes it after 'request_timeout_ms' if the rest does not
 * come.  A connection with no request under way for 'idle_timeout_ms' is
 * closed.  At 'max_connections' open connections, or when accept() runs
 * out of descriptors, the connection idle the longest makes room for the
 * new one; with none idle, the new one is closed at max_connections,
 * and the loop stops accepting for a while (50 ms, doubling to 1 s)
 * instead of polling a listener that stays readable.
 *
 * Threads: lg_ev_run() and the handlers of levels below 'offload_level' run
 * on the caller's thread, the other handlers on the worker.  lg_ev_stop()
 * may be called from a handler or a signal handler.
 *
 * Memory: one struct lg_ev_conn per connection (about 128 bytes, the
 * classifier state in its own cache line); nothing per request.
 */
#ifndef LG_EVLOOP_H
#define LG_EVLOOP_H 1

#include <stdbool.h>
#include <stdint.h>

#include <panda/classifier.h>

enum lg_ev_order {
    LG_EV_FIFO,         /* In the order the connections became ready. */
    LG_EV_PRIORITY,     /* Highest level (lowest number) first. */
};

struct lg_ev_config {
    enum lg_ev_order order;
    uint8_t offload_level;  /* 0: none; L: levels >= L on the worker. */
    uint8_t worker_nice;    /* 0..19: the worker's nice value, at least. */
    uint32_t idle_timeout_ms;       /* 0: never. */
    uint32_t request_timeout_ms;    /* Part of a request: 0: never. */
    uint32_t max_connections;       /* 0: as many as descriptors allow. */
};

/* What a handler leaves the connection as. */
enum lg_ev_status {
    LG_EV_KEEP,         /* Keep it open (and polled). */
    LG_EV_CLOSE,        /* Close it (the loop closes the socket). */
    LG_EV_MORE,         /* Part of a request: call again when more bytes
                         * have come (consume nothing before that). */
};

struct lg_ev_conn;
struct lg_ev_loop;

/* Handles (at most) one request of 'conn', whose level is
 * lg_ev_conn_level(conn).  Must not block waiting for more input: the
 * socket is nonblocking; if the request is not complete yet, return
 * LG_EV_KEEP and handle it when the rest has arrived. */
typedef enum lg_ev_status lg_ev_handler(struct lg_ev_conn *conn, void *aux);
/* (A handler that returns LG_EV_KEEP without consuming anything is called
 * again at once: return LG_EV_MORE for an incomplete request.) */

struct lg_ev_stats {
    uint64_t accepted;
    uint64_t closed;
    uint64_t dispatched[PANDA_MAX_LEVELS];     /* Handler calls per level. */
    uint64_t overtakes;     /* Dispatches that went ahead of a connection
                             * that had been ready longer. */
    uint64_t offloaded;     /* Handler calls on the worker. */
    uint64_t idle_closed;       /* Idle past idle_timeout_ms. */
    uint64_t request_timeouts;  /* Part of a request past
                                 * request_timeout_ms. */
    uint64_t incomplete_eof;    /* Part of a request, then the peer's
                                 * FIN (or an error). */
    uint64_t evicted;       /* Closed to make room for a new one. */
    uint64_t refused;       /* New ones closed at max_connections with
                             * none to make room. */
    uint64_t accept_pauses; /* Times the listeners were paused. */
};

/* Returns NULL with a malloc()ed message in '*errp' on failure. */
struct lg_ev_loop *lg_ev_create(const struct lg_ev_config *, char **errp);

/* Closes every connection (not the listeners) and frees 'loop'.  The loop
 * must not be running. */
void lg_ev_destroy(struct lg_ev_loop *loop);

/* Accepts connections from the listening socket 'fd' (the loop makes it
 * nonblocking; the caller keeps it and closes it after lg_ev_destroy()).
 * Their requests are classified by 'cls' (NULL: every request is level 0;
 * else it must outlive the loop and return levels < PANDA_MAX_LEVELS) and
 * handled by 'handler'.  Returns 0 or an errno value. */
int lg_ev_listen(struct lg_ev_loop *, int fd, const struct panda_classifier *,
                 lg_ev_handler *, void *aux);

/* Runs the loop until lg_ev_stop().  Returns 0, or an errno value if
 * polling failed. */
int lg_ev_run(struct lg_ev_loop *);

/* Makes lg_ev_run() return soon.  Async-signal-safe. */
void lg_ev_stop(struct lg_ev_loop *);

void lg_ev_stats(struct lg_ev_loop *, struct lg_ev_stats *);

/* The connection's socket, level (of the request being handled) and
 * classifier state; its mark, the DSCP the rule 'app' sees (0 unless the
 * application sets one); whether its peer has shut down its side (what
 * is unread is all that will come). */
int lg_ev_conn_fd(const struct lg_ev_conn *);
uint8_t lg_ev_conn_level(const struct lg_ev_conn *);
union panda_cls_state *lg_ev_conn_state(struct lg_ev_conn *);
void lg_ev_conn_set_mark(struct lg_ev_conn *, uint8_t dscp);
bool lg_ev_conn_eof(const struct lg_ev_conn *);

#endif /* lg-evloop.h */

/* Unit tests: the priority event loop (load_generator/lg-evloop.h).  Every
 * request is written before the loop starts, so the loop sees them all
 * ready at once and the dispatch order depends on nothing but the order
 * and the levels: no timing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <panda/classifier.h>
#include <panda/policy.h>

#include "lg-evloop.h"

#define N_CONNS 5

struct record {
    struct lg_ev_loop *loop;
    int n, stop_after;
    char types[16][5];
    uint8_t levels[16];
    bool on_caller[16];         /* Handled on the thread of lg_ev_run(). */
    int nice[16];               /* The handling thread's nice value. */
    pthread_t caller;
    pthread_mutex_t mutex;
};

static enum lg_ev_status
handler(struct lg_ev_conn *conn, void *rec_)
{
    struct record *rec = rec_;
    char buf[4];
    ssize_t n = recv(lg_ev_conn_fd(conn), buf, sizeof buf, MSG_DONTWAIT);

    if (n <= 0) {
        return LG_EV_CLOSE;
    }
    pthread_mutex_lock(&rec->mutex);
    memcpy(rec->types[rec->n], buf, 4);
    rec->types[rec->n][4] = '\0';
    rec->levels[rec->n] = lg_ev_conn_level(conn);
    rec->on_caller[rec->n] = pthread_equal(pthread_self(), rec->caller);
    rec->nice[rec->n] = getpriority(PRIO_PROCESS,
                                    (id_t) syscall(SYS_gettid));
    if (++rec->n == rec->stop_after) {
        lg_ev_stop(rec->loop);
    }
    pthread_mutex_unlock(&rec->mutex);
    return LG_EV_KEEP;
}

/* Runs a loop with 'order' and 'offload' over N_CONNS connections that
 * send 'types' (4 bytes each), one per connection, in that order. */
static void
run_nice(enum lg_ev_order order, uint8_t offload, uint8_t worker_nice,
         const char *policy_text, const char *const types[N_CONNS],
         struct record *rec)
{
    struct lg_ev_config cfg = { order, offload, worker_nice };
    struct sockaddr_in sin;
    struct panda_classifier cls;
    struct panda_policy policy;
    socklen_t len = sizeof sin;
    int lfd, fds[N_CONNS], i;
    char *err;

    assert_null(panda_policy_parse(policy_text, &policy));
    panda_cls_init(&cls, &policy);
    memset(rec, 0, sizeof *rec);
    pthread_mutex_init(&rec->mutex, NULL);
    rec->caller = pthread_self();
    rec->stop_after = N_CONNS;

    lfd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(lfd, (struct sockaddr *) &sin, sizeof sin), 0);
    assert_int_equal(listen(lfd, 16), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *) &sin, &len), 0);
    for (i = 0; i < N_CONNS; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        assert_int_equal(connect(fds[i], (struct sockaddr *) &sin,
                                 sizeof sin), 0);
        assert_int_equal(send(fds[i], types[i], 4, 0), 4);
    }

    rec->loop = lg_ev_create(&cfg, &err);
    assert_non_null(rec->loop);
    assert_int_equal(lg_ev_listen(rec->loop, lfd, &cls, handler, rec), 0);
    assert_int_equal(lg_ev_run(rec->loop), 0);
    lg_ev_destroy(rec->loop);
    for (i = 0; i < N_CONNS; i++) {
        close(fds[i]);
    }
    close(lfd);
    pthread_mutex_destroy(&rec->mutex);
}

static void
run(enum lg_ev_order order, uint8_t offload, const char *policy_text,
    const char *const types[N_CONNS], struct record *rec)
{
    run_nice(order, offload, 0, policy_text, types, rec);
}

static const char *const mixed[N_CONNS] = {
    "BULK", "BULK", "LATS", "BULK", "LATS",
};

#define MATCH "id=1,kind=match,match=LATS:0,levels=2"

static void
test_priority_order(void **state)
{
    static const char *const want[N_CONNS] = {
        "LATS", "LATS", "BULK", "BULK", "BULK",
    };
    struct record rec;
    int i;

    (void) state;
    run(LG_EV_PRIORITY, 0, MATCH, mixed, &rec);
    assert_int_equal(rec.n, N_CONNS);
    for (i = 0; i < N_CONNS; i++) {
        assert_string_equal(rec.types[i], want[i]);
        assert_int_equal(rec.levels[i], i < 2 ? 0 : 1);
        assert_true(rec.on_caller[i]);
    }
}

static void
test_fifo_order(void **state)
{
    struct record rec;
    int i;

    (void) state;
    run(LG_EV_FIFO, 0, MATCH, mixed, &rec);
    assert_int_equal(rec.n, N_CONNS);
    for (i = 0; i < N_CONNS; i++) {
        assert_string_equal(rec.types[i], mixed[i]);
        /* Still classified: the handler sees the level. */
        assert_int_equal(rec.levels[i], !strcmp(mixed[i], "LATS") ? 0 : 1);
    }
}

static void
test_offload(void **state)
{
    struct record rec;
    int i, n_lats = 0;

    (void) state;
    run(LG_EV_PRIORITY, 1, MATCH, mixed, &rec);
    assert_int_equal(rec.n, N_CONNS);
    for (i = 0; i < N_CONNS; i++) {
        bool lats = !strcmp(rec.types[i], "LATS");

        /* Level 0 on the loop's thread, level 1 on the worker. */
        assert_int_equal(rec.on_caller[i], lats);
        n_lats += lats;
    }
    assert_int_equal(n_lats, 2);
}

/* The worker runs at nice 'worker_nice' at least; the loop's thread keeps
 * its own.  A value beyond 19 is refused by name. */
static void
test_worker_nice(void **state)
{
    int own = getpriority(PRIO_PROCESS, 0);
    struct lg_ev_config bad = { LG_EV_PRIORITY, 1, 20 };
    struct record rec;
    char *err;
    int i;

    (void) state;
    assert_null(lg_ev_create(&bad, &err));
    assert_non_null(strstr(err, "worker nice value 20"));
    free(err);

    /* Already at the lowest (make check under nice 19), the two threads
     * cannot differ.  Not cmocka's skip(): its TAP output is "not ok #
     * SKIP", which automake's TAP driver counts as a failure. */
    if (own >= 19) {
        printf("# worker nice: the suite runs at nice %d, nothing to "
               "compare\n", own);
        return;
    }
    run_nice(LG_EV_PRIORITY, 1, 19, MATCH, mixed, &rec);
    assert_int_equal(rec.n, N_CONNS);
    for (i = 0; i < N_CONNS; i++) {
        assert_int_equal(rec.nice[i], rec.on_caller[i] ? own : 19);
    }
}

/* Any policy kind classifies: here the length rule (ADPS scenario 1) on
 * the bytes waiting. */
static void
test_length_rule(void **state)
{
    struct record rec;
    int i;

    (void) state;
    /* 4 bytes waiting on every connection: length=4 matches them all, so
     * they keep their order at level 1. */
    run(LG_EV_PRIORITY, 0, "id=1,kind=length,length=4:1,default_level=0",
        mixed, &rec);
    for (i = 0; i < N_CONNS; i++) {
        assert_string_equal(rec.types[i], mixed[i]);
        assert_int_equal(rec.levels[i], 1);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_priority_order),
        cmocka_unit_test(test_fifo_order),
        cmocka_unit_test(test_offload),
        cmocka_unit_test(test_worker_nice),
        cmocka_unit_test(test_length_rule),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

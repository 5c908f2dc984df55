/* bench-sched-glue: CPU cost of the userspace datapath's panda-sched glue.
 *
 *   bench-sched-glue FRAME_BYTES FLOWS ITERATIONS [THREADS]
 *
 * Runs batches of 32 TCP packets, cycling through FLOWS 5-tuples spread
 * over 4 levels (environment SCHED_GLUE_LEVELS=N: over N levels; 1 puts
 * every packet at level 0, as one rule's output does), through a
 * panda-sched scheduler with dp_sched_exchange()
 * (lib/dpif-netdev-sched.c of the patched OVS), as the datapath's output
 * flush does: the packets are classified (level, DSCP, ECN, flow hash from
 * the datapath's RSS hash) and enqueued, and up to a batch dequeued, under
 * the scheduler's mutex.  The scheduler is unshaped with the default
 * configuration (8 levels, per-flow queues), so every packet leaves in the
 * exchange it arrived in -- by the cut-through, panda_sched_pass(), which
 * sorts the batch by level without holding it -- : what forwarding
 * through an unshaped panda-sched port costs.  The same loop through a plain ring of packet pointers (the
 * floor of any queue) gives the baseline; one line per case:
 *
 *   ring NS_PER_PACKET
 *   sched NS_PER_PACKET
 *
 * All times are CPU time of the thread, so that a shared machine's
 * descheduling does not count.  With THREADS = 2, two threads run the loop
 * at once, on one scheduler (its mutex contended, as when two PMD threads
 * send to one port; a packet that the other thread dequeued goes back to
 * its owner's pool through a mutex-protected inbox, as a packet freed on
 * another thread goes back to its pool) and on one scheduler each
 * (uncontended), and print the CPU ns per packet of both threads together
 * (their CPU time over their packets: a thread that finds the other one
 * sending spins on empty batches, which counts) and the packets per second
 * of both (wall time: on a loaded machine, only comparable between the two
 * lines):
 *
 *   shared NS MPPS
 *   separate NS MPPS
 *
 * Built and run by bench/bench-sched-forwarding.py against the OVS build
 * tree. */
#include <config.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp-packet.h"
#include "dpif-netdev-sched.h"
#include "dummy.h"
#include "flow.h"
#include "hash.h"
#include "netdev.h"
#include "ovs-thread.h"
#include "packets.h"
#include "smap.h"

#define BATCH NETDEV_MAX_BURST
#define POOL 1024                 /* Packets per thread. */
#define RING (2 * POOL)           /* With two threads on one scheduler,
                                   * one may get all packets back. */

/* The levels the flows are spread over. */
static uint32_t n_levels = 4;

static double
clock_s(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A TCP packet of 'size' bytes, composed by OVS. */
static struct dp_packet *
make_packet(size_t size)
{
    struct dp_packet *p = dp_packet_new(size);
    struct flow flow;

    memset(&flow, 0, sizeof flow);
    flow.dl_type = htons(ETH_TYPE_IP);
    flow.nw_proto = IPPROTO_TCP;
    flow.nw_ttl = 64;
    flow.nw_tos = IP_ECN_ECT_0;
    flow.nw_src = htonl(0x0a010001);
    flow.nw_dst = htonl(0x0a000002);
    flow.tp_dst = htons(5001);
    eth_addr_from_uint64(0x020000009999ULL, &flow.dl_dst);
    eth_addr_from_uint64(0x020000000001ULL, &flow.dl_src);
    flow_compose(p, &flow, NULL, 0);
    packet_expand(p, &flow, size);
    return p;
}

/* Makes 'p' a packet of flow 'conn', as the datapath leaves it: its queue
 * set by set_queue, its RSS hash computed. */
static void
set_flow(struct dp_packet *p, uint32_t conn)
{
    struct tcp_header *tcp = dp_packet_l4(p);

    tcp->tcp_src = htons(1024 + conn % 60000);
    p->md.skb_priority = conn % n_levels;
    dp_packet_set_rss_hash(p, hash_2words(conn, 0));
}

struct worker {
    int id;
    struct dp_sched *sched;     /* NULL: the ring. */
    size_t frame;
    uint32_t flows;
    long iters;
    double ns;                  /* Result: CPU ns per packet offered. */
    double cpu, n, wall;        /* Result: CPU and wall seconds, packets
                                 * offered. */

    /* Packets of this worker that another one dequeued (two threads on one
     * scheduler), as a packet freed on another thread goes back to its
     * pool. */
    struct ovs_mutex inbox_mutex;
    struct dp_packet *inbox[RING];
    size_t n_inbox;
};

static struct worker workers[2];

static void *
worker_main(void *w_)
{
    struct worker *w = w_;
    struct dp_packet *ring[RING];
    struct dp_packet_batch batch;
    uint32_t conn = 0;
    size_t head = 0, n_free = POOL;
    double t0, c0, n = 0;
    bool more;
    long i;

    for (i = 0; i < POOL; i++) {
        ring[i] = make_packet(w->frame);
        ring[i]->md.recirc_id = w->id;      /* The owner. */
    }
    t0 = clock_s(CLOCK_MONOTONIC);
    c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    for (i = 0; i < w->iters; i++) {
        if (n_free < BATCH && w->n_inbox) {
            ovs_mutex_lock(&w->inbox_mutex);
            while (w->n_inbox) {
                ring[(head + n_free++) % RING] = w->inbox[--w->n_inbox];
            }
            ovs_mutex_unlock(&w->inbox_mutex);
        }
        dp_packet_batch_init(&batch);
        for (int j = 0; j < BATCH && n_free; j++) {
            struct dp_packet *p = ring[head];

            head = (head + 1) % RING;
            n_free--;
            set_flow(p, conn);
            conn = conn + 1 < w->flows ? conn + 1 : 0;
            dp_packet_batch_add(&batch, p);
        }
        n += dp_packet_batch_size(&batch);
        if (w->sched) {
            if (dp_sched_exchange(w->sched, &batch, 0, &more)) {
                dp_sched_send_done(w->sched);
            }
        }
        /* "Sent": back to the owner. */
        struct dp_packet *p;
        DP_PACKET_BATCH_FOR_EACH (k, p, &batch) {
            struct worker *owner = &workers[p->md.recirc_id];

            if (owner == w) {
                ring[(head + n_free++) % RING] = p;
            } else {
                ovs_mutex_lock(&owner->inbox_mutex);
                owner->inbox[owner->n_inbox++] = p;
                ovs_mutex_unlock(&owner->inbox_mutex);
            }
        }
    }
    /* CPU time, not wall time: on a shared machine the threads are
     * descheduled, which says nothing about the scheduler. */
    w->cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    w->wall = clock_s(CLOCK_MONOTONIC) - t0;
    w->n = n;
    w->ns = w->cpu * 1e9 / n;
    return NULL;
}

static struct dp_sched *
new_sched(struct dp_scheds *dp, const char *name)
{
    struct smap details = SMAP_INITIALIZER(&details);
    struct netdev *netdev;
    struct dp_sched *sched;

    if (netdev_open(name, "dummy", &netdev)) {
        fprintf(stderr, "cannot open dummy netdev %s\n", name);
        exit(1);
    }
    netdev_set_qos(netdev, "panda-sched", &details);
    sched = dp_sched_update(dp, NULL, netdev);
    if (!sched) {
        fprintf(stderr, "panda-sched refused\n");
        exit(1);
    }
    smap_destroy(&details);
    return sched;
}

static void
run_threads(struct worker *w, int n)
{
    pthread_t t[2];

    for (int i = 0; i < n; i++) {
        pthread_create(&t[i], NULL, worker_main, &w[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
    }
}

static void
print_pair(const char *name, const struct worker *w)
{
    printf("%s %.1f %.3f\n", name, (w[0].cpu + w[1].cpu) * 1e9
           / (w[0].n + w[1].n), (w[0].n / w[0].wall + w[1].n / w[1].wall)
           / 1e6);
}

int
main(int argc, char *argv[])
{
    struct worker *w = workers;
    struct dp_scheds *dp;
    struct dp_sched *a, *b;
    double ring_ns, sched_ns;
    int threads;

    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s FRAME_BYTES FLOWS ITERATIONS [THREADS]\n",
                argv[0]);
        return 2;
    }
    netdev_dummy_register(DUMMY_OVERRIDE_NONE);
    dp = dp_scheds_create("bench");
    a = new_sched(dp, "bench0");
    b = new_sched(dp, "bench1");
    for (int i = 0; i < 2; i++) {
        w[i].id = i;
        w[i].frame = strtoul(argv[1], NULL, 10);
        w[i].flows = strtoul(argv[2], NULL, 10);
        w[i].iters = strtol(argv[3], NULL, 10);
        ovs_mutex_init(&w[i].inbox_mutex);
    }
    threads = argc > 4 ? atoi(argv[4]) : 1;
    if (getenv("SCHED_GLUE_LEVELS")) {
        n_levels = strtoul(getenv("SCHED_GLUE_LEVELS"), NULL, 10);
        if (n_levels < 1 || n_levels > 8) {
            fprintf(stderr, "SCHED_GLUE_LEVELS: 1 to 8\n");
            return 2;
        }
    }

    /* Warm up, then alternate, best of 3 for each. */
    w[0].sched = a;
    run_threads(w, 1);
    ring_ns = sched_ns = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        w[0].sched = NULL;
        run_threads(w, 1);
        ring_ns = MIN(ring_ns, w[0].ns);
        w[0].sched = a;
        run_threads(w, 1);
        sched_ns = MIN(sched_ns, w[0].ns);
    }
    printf("ring %.1f\nsched %.1f\n", ring_ns, sched_ns);

    if (threads == 2) {
        w[0].sched = w[1].sched = a;
        run_threads(w, 2);
        print_pair("shared", w);
        w[1].sched = b;
        run_threads(w, 2);
        print_pair("separate", w);
    }
    return 0;
}

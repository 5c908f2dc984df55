/*
 * bench-scheduler: cost of the egress scheduler core (lib/panda/scheduler.h)
 * per packet, enqueue + dequeue, against a plain FIFO ring of handles
 * measured in the same run, and its memory per configured packet.
 *
 * Each case keeps a steady backlog of max(1024, flows) packets (so with
 * many flows every flow holds about one packet and every enqueue creates a
 * flow queue and every dequeue reclaims one: the worst case for per-flow
 * queueing), and moves packets through in batches of 32 (an OVS rx batch):
 * enqueue 32, dequeue 32.  The flows take turns.  The scheduler is unshaped
 * with 8 levels, packets spread over 4 of them; the "shaped" rows add a
 * token bucket that never runs dry (its arithmetic is what they measure).
 * The "fq-codel" rows run the per-flow queues as fq_codel (new and old
 * lists, a timestamp per packet, CoDel's check at every dequeue; the clock
 * stands still, so CoDel never drops: the per-packet cost is measured, not
 * the drops).
 * Each figure is the best of --reps runs, because other work on the machine
 * only ever makes a run slower.  Prints a table; there is no pass/fail.
 *
 *   bench-scheduler [--packets N] [--reps N] [--flows N]
 */
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <panda/scheduler.h>

#define BATCH 32

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sum of dequeued handles, printed, so nothing is optimised away. */
static uintptr_t sink;

struct ring {
    void **slot;
    size_t mask, head, tail;
};

static void
ring_init(struct ring *r, size_t min_size)
{
    size_t n = 1;

    while (n < min_size) {
        n <<= 1;
    }
    r->slot = calloc(n, sizeof *r->slot);
    if (!r->slot) {
        fprintf(stderr, "bench-scheduler: out of memory\n");
        exit(1);
    }
    r->mask = n - 1;
    r->head = r->tail = 0;
}

/* The baseline: the same traffic through a FIFO ring of handles, with the
 * same per-packet work outside the queue (flow number, length, level). */
static double
run_ring(size_t depth, uint32_t flows, uint32_t len, uint64_t packets)
{
    struct ring r;
    uint32_t flow = 0;
    uint64_t i, bytes = 0, t0;
    int k;

    ring_init(&r, depth + BATCH);
    for (i = 0; i < depth; i++) {
        r.slot[r.tail++ & r.mask] = (void *) (uintptr_t) (i + 1);
    }
    t0 = now_ns();
    for (i = 0; i < packets; i += BATCH) {
        for (k = 0; k < BATCH; k++) {
            uint32_t hash = flow * 0x9e3779b1u;

            bytes += len + (hash & 3);
            r.slot[r.tail++ & r.mask] = (void *) (uintptr_t) (i + k + 1);
            flow = flow + 1 == flows ? 0 : flow + 1;
        }
        for (k = 0; k < BATCH; k++) {
            sink += (uintptr_t) r.slot[r.head++ & r.mask];
        }
    }
    t0 = now_ns() - t0;
    sink += bytes;
    free(r.slot);
    return (double) t0 / packets;
}

static struct panda_sched *
make_sched(const char *extra, size_t depth, uint32_t len)
{
    struct panda_sched_config cfg;
    struct panda_sched *s;
    char text[256], *err;

    panda_sched_config_init(&cfg);
    snprintf(text, sizeof text, "levels=8,limit-packets=%zu,"
             "limit-bytes=%" PRIu64 "%s", depth + 2 * BATCH,
             (uint64_t) (depth + 2 * BATCH) * len, extra);
    err = panda_sched_config_parse(&cfg, text);
    s = err ? NULL : panda_sched_create(&cfg, NULL, &err);
    if (!s) {
        fprintf(stderr, "bench-scheduler: %s: %s\n", text, err);
        exit(1);
    }
    return s;
}

static double
run_sched(const char *extra, bool shaped, size_t depth, uint32_t flows,
          uint32_t len, uint64_t packets)
{
    struct panda_sched *s = make_sched(extra, depth, len);
    struct panda_sched_pkt pkt = { .len = len };
    void *out[BATCH];
    uint32_t flow = 0;
    uint64_t i, t0, drops = 0, clock = 1000000000;
    int k;

    for (i = 0; i < depth; i++) {
        pkt.flow_hash = flow * 0x9e3779b1u;
        pkt.level = flow & 3;
        drops += panda_sched_verdict_is_drop(
            panda_sched_enqueue(s, &pkt, (void *) (uintptr_t) (i + 1), 0));
        flow = flow + 1 == flows ? 0 : flow + 1;
    }
    t0 = now_ns();
    for (i = 0; i < packets; i += BATCH) {
        size_t n;

        for (k = 0; k < BATCH; k++) {
            pkt.flow_hash = flow * 0x9e3779b1u;
            pkt.level = flow & 3;
            drops += panda_sched_verdict_is_drop(
                panda_sched_enqueue(s, &pkt,
                                    (void *) (uintptr_t) (i + k + 1),
                                    clock));
            flow = flow + 1 == flows ? 0 : flow + 1;
        }
        if (shaped) {
            clock += 100000;    /* 100 us: the bucket never runs dry. */
        }
        n = panda_sched_dequeue_burst(s, clock, out, BATCH);
        for (k = 0; k < (int) n; k++) {
            sink += (uintptr_t) out[k];
        }
        if (n != BATCH) {
            fprintf(stderr, "bench-scheduler: short dequeue (%zu)\n", n);
            exit(1);
        }
    }
    t0 = now_ns() - t0;
    if (drops) {
        fprintf(stderr, "bench-scheduler: %" PRIu64 " drops\n", drops);
        exit(1);
    }
    panda_sched_drain(s, NULL, NULL);
    panda_sched_destroy(s);
    return (double) t0 / packets;
}

static double
min2(double a, double b)
{
    return a < b ? a : b;
}

static void
memory_row(const char *label, const char *text, uint32_t packets)
{
    struct panda_sched_config cfg;
    struct panda_sched *s;
    size_t before, after;
    char *err;

    panda_sched_config_init(&cfg);
    err = panda_sched_config_parse(&cfg, text);
    if (err) {
        fprintf(stderr, "bench-scheduler: %s\n", err);
        exit(1);
    }
    before = mallinfo2().uordblks + mallinfo2().hblkhd;
    s = panda_sched_create(&cfg, NULL, &err);
    if (!s) {
        fprintf(stderr, "bench-scheduler: %s\n", err);
        exit(1);
    }
    after = mallinfo2().uordblks + mallinfo2().hblkhd;
    printf("%-34s %10" PRIu32 " %12zu %10.1f %10.1f\n", label, packets,
           panda_sched_memory(s),
           (double) panda_sched_memory(s) / packets,
           (double) (after - before) / packets);
    panda_sched_destroy(s);
}

int
main(int argc, char *argv[])
{
    static const struct option opts[] = {
        { "packets", required_argument, NULL, 'n' },
        { "reps", required_argument, NULL, 'r' },
        { "flows", required_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    static const uint32_t flow_counts[] = { 1, 1000, 100000 };
    static const uint32_t sizes[] = { 64, 1500 };
    static const struct {
        const char *name, *extra;
        bool shaped;
    } modes[] = {
        { "per-flow", "", false },
        { "fifo", ",per-flow=false", false },
        { "fq-codel", ",fq-codel=true", false },
        { "per-flow+shaped", ",max-rate=1T", true },
    };
    uint64_t packets = 4000000;
    uint32_t only_flows = 0;
    int reps = 3, c;
    size_t fi, si, mi;

    while ((c = getopt_long(argc, argv, "n:r:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            packets = strtoull(optarg, NULL, 10) / BATCH * BATCH;
            break;
        case 'r':
            reps = atoi(optarg);
            break;
        case 'f':
            only_flows = (uint32_t) strtoul(optarg, NULL, 10);
            break;
        default:
            printf("usage: %s [--packets N] [--reps N] [--flows N]\n",
                   argv[0]);
            return c == 'h' ? 0 : 1;
        }
    }
    if (packets < BATCH || reps < 1) {
        fprintf(stderr, "bench-scheduler: --packets >= %d, --reps >= 1\n",
                BATCH);
        return 1;
    }

    printf("enqueue+dequeue, batches of %d, best of %d runs of %" PRIu64
           " packets\n", BATCH, reps, packets);
    printf("%7s %5s %-16s %12s %12s %7s\n", "flows", "bytes", "scheduler",
           "ns/pkt", "ring ns/pkt", "ratio");
    for (fi = 0; fi < sizeof flow_counts / sizeof *flow_counts; fi++) {
        for (si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            uint32_t flows = flow_counts[fi], len = sizes[si];
            size_t depth = flows > 1024 ? flows : 1024;

            if (only_flows && flows != only_flows) {
                continue;
            }
            for (mi = 0; mi < sizeof modes / sizeof *modes; mi++) {
                double best_s = 1e30, best_r = 1e30;
                int rep;

                /* Alternate so that both see the same machine load. */
                for (rep = 0; rep < reps; rep++) {
                    best_r = min2(best_r, run_ring(depth, flows, len,
                                                   packets));
                    best_s = min2(best_s, run_sched(modes[mi].extra,
                                                    modes[mi].shaped, depth,
                                                    flows, len, packets));
                }
                printf("%7" PRIu32 " %5" PRIu32 " %-16s %12.1f %12.1f %7.1f\n",
                       flows, len, modes[mi].name, best_s, best_r,
                       best_s / best_r);
            }
        }
    }

    printf("\nmemory (computed by panda_sched_memory; measured from the"
           " allocator)\n");
    printf("%-34s %10s %12s %10s %10s\n", "configuration", "packets",
           "bytes", "B/packet", "measured");
    memory_row("defaults (1000 packets)", "", 1000);
    memory_row("defaults, fq-codel", "fq-codel=true", 1000);
    memory_row("100k packets", "limit-packets=100000", 100000);
    memory_row("100k packets, 12.5k flow queues",
               "limit-packets=100000,flow-queues=12500", 100000);
    memory_row("1M packets", "limit-packets=1000000", 1000000);
    printf("(checksum %" PRIxPTR ")\n", sink);
    return 0;
}

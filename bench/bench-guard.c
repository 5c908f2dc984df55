/* bench-guard: what a demoted flow gets under an overload of the top level,
 * on lib/panda's scheduler, for a few panda-sched configurations.
 *
 * Two levels, unshaped, one dequeue per tick: the top level is offered two
 * 64-byte packets per tick (twice what leaves: a flood of small packets,
 * which Panda keeps on top); the lower level holds a window of up to 20
 * 1500-byte packets (a demoted bulk flow: it offers a packet whenever one
 * of its window has left or been dropped).  200000 ticks.  Prints, per
 * configuration, the demoted flow's packets sent and its share of the
 * bytes sent; the guard's target is guard/1000 of them.  No timing: the
 * figures are counts, the same on any machine.
 *
 *   bench/bench-guard ["CONFIG" ...]   (default: guard 0, 20, 50; push-out
 *                                       on and off)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <panda/scheduler.h>

#define TICKS 200000
#define WINDOW 20

static int in_flight;

static void *
handle(int level, uint32_t seq)
{
    return (void *) (uintptr_t) (((uint64_t) level << 32) | (seq + 1));
}

static int
level_of(void *h)
{
    return (int) ((uint64_t) (uintptr_t) h >> 32);
}

static void
dropped(void *h, enum panda_sched_drop why, void *aux)
{
    (void) why;
    (void) aux;
    if (level_of(h)) {
        in_flight--;            /* Lost: the sender sends it again. */
    }
}

static int
run(const char *text)
{
    struct panda_sched_config cfg;
    uint64_t sent[2] = { 0, 0 }, bytes[2] = { 0, 0 };
    struct panda_sched *s;
    uint32_t seq = 0;
    char *err;
    int t, k;

    panda_sched_config_init(&cfg);
    err = panda_sched_config_parse(&cfg, text);
    if (!err) {
        s = panda_sched_create(&cfg, NULL, &err);
    }
    if (err) {
        fprintf(stderr, "bench-guard: %s: %s\n", text, err);
        return 1;
    }
    panda_sched_set_drop(s, dropped, NULL);
    in_flight = 0;
    for (t = 0; t < TICKS; t++) {
        for (k = 0; k < 2; k++) {
            struct panda_sched_pkt p = { 64, 1, 0, 0, 0 };

            panda_sched_enqueue(s, &p, handle(0, seq++), t);
        }
        while (in_flight < WINDOW) {
            struct panda_sched_pkt p = { 1500, 2, 1, 0, 0 };

            in_flight++;
            if (panda_sched_verdict_is_drop(
                    panda_sched_enqueue(s, &p, handle(1, seq++), t))) {
                in_flight--;
                break;          /* Sent again next tick. */
            }
        }
        {
            uint32_t len;
            void *h = panda_sched_dequeue(s, t, &len);

            if (h) {
                int lv = level_of(h);

                sent[lv]++;
                bytes[lv] += len;
                in_flight -= lv;
            }
        }
    }
    printf("%-45s demoted: %6llu packets sent, %5.2f%% of the bytes "
           "(guard %u permille)\n", text, (unsigned long long) sent[1],
           100.0 * bytes[1] / (bytes[0] + bytes[1]), cfg.guard_permille);
    panda_sched_drain(s, NULL, NULL);
    panda_sched_destroy(s);
    return 0;
}

int
main(int argc, char *argv[])
{
    static const char *const defaults[] = {
        "levels=2,guard=0", "levels=2,guard=20", "levels=2,guard=50",
        "levels=2,guard=0,push-out=false", "levels=2,guard=20,push-out=false",
    };
    int i, rc = 0;

    if (argc > 1) {
        for (i = 1; i < argc; i++) {
            rc |= run(argv[i]);
        }
    } else {
        for (i = 0; i < (int) (sizeof defaults / sizeof *defaults); i++) {
            rc |= run(defaults[i]);
        }
    }
    return rc;
}

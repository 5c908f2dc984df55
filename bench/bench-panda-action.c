/* bench-panda-action: CPU cost of the userspace datapath's panda action.
 *
 *   bench-panda-action FRAME_BYTES CONNECTIONS ITERATIONS
 *
 * MAX_CONNECTIONS sets other_config:panda-max-connections; the environment
 * variable PANDA_HISTOGRAMS (true|false), other_config:panda-histograms
 * (bench-forwarding.py --histograms compares the two).
 *
 * Registers the action as a flow put does (dp_panda_flow_put()), then runs
 * dp_panda_execute() (lib/dpif-netdev-panda.c of the patched OVS) on
 * batches of 32 TCP packets cycling through CONNECTIONS 5-tuples, and the
 * same loop without the action (it still rewrites the packets' ports, as
 * the measured loop does), and prints the difference in ns per packet.
 * Built and run by bench-forwarding.py against the OVS build tree. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <panda/policy.h>
#include <panda/wire.h>

#include "dp-packet.h"
#include "dpif-netdev-panda.h"
#include "flow.h"
#include "netlink.h"
#include "odp-netlink.h"
#include "openvswitch/ofpbuf.h"
#include "packets.h"
#include "smap.h"

#define BATCH NETDEV_MAX_BURST
#define POOL 4096

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct dp_packet *
make_packet(size_t size)
{
    struct dp_packet *p = dp_packet_new(size);
    uint8_t *f = dp_packet_put_zeros(p, size);
    uint8_t *ip = f + 14, *tcp = f + 34;
    uint16_t tot = htons(size - 14);

    memcpy(f, "\x02\x00\x00\x00\x99\x99\x02\x00\x00\x00\x00\x01", 12);
    f[12] = 0x08;
    ip[0] = 0x45;
    memcpy(ip + 2, &tot, 2);
    ip[8] = 64;
    ip[9] = 6;
    memcpy(ip + 12, "\x0a\x01\x00\x01\x0a\x00\x00\x02", 8);
    tcp[3] = 0x89;
    tcp[12] = 5 << 4;
    tcp[13] = 0x10;
    parse_tcp_flags(p, NULL, NULL, NULL);
    return p;
}

static void
set_conn(struct dp_packet *p, uint32_t conn)
{
    struct tcp_header *tcp = dp_packet_l4(p);
    struct ip_header *ip = dp_packet_l3(p);

    tcp->tcp_src = htons(1024 + conn % 60000);
    put_16aligned_be32(&ip->ip_src, htonl(0x0a010001 + conn / 60000));
}

static double
run(struct dp_panda *dp, const struct nlattr *act,
    struct dp_packet **pool, uint32_t conns, long iters)
{
    struct dp_packet_batch batch;
    uint32_t conn = 0, slot = 0;
    double t0 = now();
    long i;
    int j;

    for (i = 0; i < iters; i++) {
        dp_packet_batch_init(&batch);
        for (j = 0; j < BATCH; j++) {
            struct dp_packet *p = pool[slot];

            slot = (slot + 1) % POOL;
            set_conn(p, conn);
            conn = conn + 1 < conns ? conn + 1 : 0;
            dp_packet_batch_add(&batch, p);
        }
        if (act) {
            dp_panda_execute(dp, &batch, act, (long long int) (now() * 1e3));
        }
    }
    return (now() - t0) / ((double) iters * BATCH);
}

int
main(int argc, char *argv[])
{
    static struct dp_packet *pool[POOL];
    struct panda_policy policy;
    struct ofpbuf actions;
    const struct nlattr *act;
    struct dp_panda *dp;
    double with, without;
    uint32_t conns;
    size_t size;
    long iters;
    char *err;
    int i;

    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s FRAME_BYTES CONNECTIONS ITERATIONS "
                "[MAX_CONNECTIONS]\n", argv[0]);
        return 2;
    }
    size = strtoul(argv[1], NULL, 10);
    conns = strtoul(argv[2], NULL, 10);
    iters = strtol(argv[3], NULL, 10);

    err = panda_policy_parse("id=1,threshold=1460,weights=1460:1/9000:2,"
                             "thresholds=100000/1000000/10000000,"
                             "dscp=46/26/18/0,queues=0/1/2/3", &policy);
    if (err) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    ofpbuf_init(&actions, 256);
    panda_wire_encode(&policy, nl_msg_put_unspec_uninit(&actions,
                                                        OVS_ACTION_ATTR_PANDA,
                                                        PANDA_WIRE_LEN));
    act = actions.data;

    for (i = 0; i < POOL; i++) {
        pool[i] = make_packet(size);
    }
    dp = dp_panda_create("bench");
    if (argc > 4 || getenv("PANDA_HISTOGRAMS")) {
        struct smap cfg = SMAP_INITIALIZER(&cfg);

        if (argc > 4) {
            smap_add(&cfg, "panda-max-connections", argv[4]);
        }
        if (getenv("PANDA_HISTOGRAMS")) {
            smap_add(&cfg, "panda-histograms", getenv("PANDA_HISTOGRAMS"));
        }
        dp_panda_set_config(dp, &cfg);
        smap_destroy(&cfg);
    }

    /* As when a flow with this action is installed. */
    if (dp_panda_flow_put(dp, actions.data, actions.size, false)) {
        fprintf(stderr, "flow put refused\n");
        return 1;
    }

    /* Warm up: every connection in the table, caches warm. */
    run(dp, act, pool, conns, conns / BATCH + 1000);

    without = run(dp, NULL, pool, conns, iters);
    with = run(dp, act, pool, conns, iters);
    without = (without + run(dp, NULL, pool, conns, iters)) / 2;
    with = (with + run(dp, act, pool, conns, iters)) / 2;
    printf("%.1f\n", (with - without) * 1e9);
    return 0;
}

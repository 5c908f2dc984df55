/* bench-blast: sends TCP segments as fast as it can on an AF_PACKET socket.
 *
 *   bench-blast IFNAME FRAME_BYTES CONNECTIONS SECONDS [DST_MAC [FIRST
 *               [COUNT [PAYLOAD [RATE]]]]]
 *
 * Builds Ethernet/IPv4/TCP frames of FRAME_BYTES (without FCS, >= 60) and
 * cycles through CONNECTIONS distinct 5-tuples (source address and port
 * vary), starting at tuple FIRST (default 0), sending batches with
 * sendmmsg() and PACKET_QDISC_BYPASS, for SECONDS or until COUNT frames
 * have been sent (if COUNT is given and nonzero).  The TCP payload is
 * zeros, or begins with the string PAYLOAD (bench-ingress.py's heartbeats:
 * "HB").  With RATE (frames per second, nonzero), it paces itself to that
 * rate instead of sending as fast as it can.  Prints the number of
 * frames sent.  Used by bench/bench-forwarding.py and bench-flood.py; the
 * forwarding rate is measured at the receiving interface, not here.
 * Built with -DBLAST_THROUGH_QDISC, the frames go through the interface's
 * qdisc and its tc hooks instead (bench-bpf-forwarding.py: the BPF
 * classifier on the egress). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static uint16_t
csum(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t sum = 0;
    size_t i;

    for (i = 0; i + 1 < len; i += 2) {
        sum += (p[i] << 8) | p[i + 1];
    }
    if (len & 1) {
        sum += p[len - 1] << 8;
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return htons(~sum & 0xffff);
}

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes connection 'conn' (source 10.1.0.1 + conn / 60000, port 1024 +
 * conn % 60000: 60000 tuples per address, so up to 2^32 distinct tuples)
 * into 'f'. */
static void
set_conn(uint8_t *f, uint32_t conn)
{
    uint32_t src = 0x0a010000 + 1 + conn / 60000;
    uint16_t sport = 1024 + conn % 60000;
    uint8_t *ip = f + 14, *tcp = f + 34;

    src = htonl(src);
    memcpy(ip + 12, &src, 4);
    ip[10] = ip[11] = 0;
    memcpy(ip + 10, &(uint16_t) { csum(ip, 20) }, 2);
    sport = htons(sport);
    memcpy(tcp, &sport, 2);
}

int
main(int argc, char *argv[])
{
    static uint8_t frames[BATCH][2048];
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    struct sockaddr_ll sll;
    unsigned long long sent = 0, count = 0;
    uint8_t dst[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint32_t conns, conn = 0;
    size_t size;
    double start, end, rate;
    int fd, i;

    if (argc < 5) {
        fprintf(stderr, "usage: %s IFNAME FRAME_BYTES CONNECTIONS SECONDS "
                "[DST_MAC [FIRST [COUNT [PAYLOAD [RATE]]]]]\n", argv[0]);
        return 2;
    }
    size = strtoul(argv[2], NULL, 10);
    conns = strtoul(argv[3], NULL, 10);
    if (size < 60 || size > 1514 || !conns) {
        fprintf(stderr, "bad frame size or connection count\n");
        return 2;
    }
    if (argc > 5 && sscanf(argv[5], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx",
                           &dst[0], &dst[1], &dst[2], &dst[3], &dst[4],
                           &dst[5]) != 6) {
        fprintf(stderr, "bad MAC %s\n", argv[5]);
        return 2;
    }
    if (argc > 6) {
        conn = strtoul(argv[6], NULL, 10) % conns;
    }
    if (argc > 7) {
        count = strtoull(argv[7], NULL, 10);
    }

    fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) {
        perror("socket");
        return 1;
    }
#ifndef BLAST_THROUGH_QDISC
    {
        int one = 1;

        setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
    }
#endif
    memset(&sll, 0, sizeof sll);
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = if_nametoindex(argv[1]);
    if (!sll.sll_ifindex || bind(fd, (struct sockaddr *) &sll, sizeof sll)) {
        perror(argv[1]);
        return 1;
    }

    for (i = 0; i < BATCH; i++) {
        uint8_t *f = frames[i], *ip = f + 14, *tcp = f + 34;
        uint16_t tot = htons(size - 14);

        memset(f, 0, sizeof frames[i]);
        memcpy(f, dst, 6);
        memcpy(f + 6, (uint8_t[]) { 0x02, 0, 0, 0, 0, 0x01 }, 6);
        f[12] = 0x08;
        ip[0] = 0x45;
        memcpy(ip + 2, &tot, 2);
        ip[8] = 64;
        ip[9] = 6;
        memcpy(ip + 16, &(uint32_t) { htonl(0x0a000002) }, 4);
        memcpy(tcp + 2, &(uint16_t) { htons(5001) }, 2);
        tcp[12] = 5 << 4;
        tcp[13] = 0x10;             /* ACK. */
        memcpy(tcp + 14, &(uint16_t) { htons(65535) }, 2);
        if (argc > 8 && size > 54) {
            size_t room = size - 54, n = strlen(argv[8]);

            memcpy(tcp + 20, argv[8], n < room ? n : room);
        }
        iov[i].iov_base = f;
        iov[i].iov_len = size;
        memset(&msgs[i], 0, sizeof msgs[i]);
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }

    start = now();
    rate = argc > 9 ? strtod(argv[9], NULL) : 0;
    end = start + strtod(argv[4], NULL);
    while (now() < end && (!count || sent < count)) {
        if (rate > 0) {
            /* Ahead of the schedule: wait for it. */
            double due = start + sent / rate, t = now();

            if (due > t) {
                struct timespec ts = { (time_t) (due - t),
                                       (long) ((due - t - (time_t) (due - t))
                                               * 1e9) };

                nanosleep(&ts, NULL);
            }
        }
        int n, batch = !count || count - sent >= BATCH ? BATCH
                                                       : (int) (count - sent);

        for (i = 0; i < batch; i++) {
            set_conn(frames[i], conn);
            if (++conn >= conns) {
                conn = 0;
            }
        }
        n = sendmmsg(fd, msgs, batch, 0);
        if (n > 0) {
            sent += n;
        }
        /* Frames not sent: their tuples go again, so that every tuple of a
         * COUNT-limited run gets its share. */
        conn = (uint32_t) ((conn + (uint64_t) conns
                            - (uint32_t) (batch - (n > 0 ? n : 0)) % conns)
                           % conns);
    }
    printf("%llu\n", sent);
    return 0;
}

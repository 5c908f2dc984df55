/* bench-blast: sends TCP segments as fast as it can on an AF_PACKET socket.
 *
 *   bench-blast IFNAME FRAME_BYTES CONNECTIONS SECONDS [DST_MAC]
 *
 * Builds Ethernet/IPv4/TCP frames of FRAME_BYTES (without FCS, >= 60) and
 * cycles through CONNECTIONS distinct 5-tuples (source address and port
 * vary), sending batches with sendmmsg() and PACKET_QDISC_BYPASS.  Prints
 * the number of frames sent.  Used by tools/bench-forwarding.py; the
 * forwarding rate is measured at the receiving interface, not here. */
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

/* Writes connection 'conn' (source 10.1.x.y, port 1024 + conn % 60000) into
 * 'f'. */
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
    unsigned long long sent = 0;
    uint8_t dst[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint32_t conns, conn = 0;
    size_t size;
    double end;
    int fd, one = 1, i;

    if (argc < 5) {
        fprintf(stderr, "usage: %s IFNAME FRAME_BYTES CONNECTIONS SECONDS "
                "[DST_MAC]\n", argv[0]);
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

    fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) {
        perror("socket");
        return 1;
    }
    setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
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
        iov[i].iov_base = f;
        iov[i].iov_len = size;
        memset(&msgs[i], 0, sizeof msgs[i]);
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }

    end = now() + strtod(argv[4], NULL);
    while (now() < end) {
        int n;

        for (i = 0; i < BATCH; i++) {
            set_conn(frames[i], conn);
            if (++conn >= conns) {
                conn = 0;
            }
        }
        n = sendmmsg(fd, msgs, BATCH, 0);
        if (n > 0) {
            sent += n;
        }
    }
    printf("%llu\n", sent);
    return 0;
}

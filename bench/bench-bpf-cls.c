/*
 * bench-bpf-cls: per-packet cost of the tc eBPF classifier (panda_cls,
 * bpf/panda-cls.bpf.c), measured with BPF_PROG_TEST_RUN, next to lib/panda
 * doing the same work in userspace, in the same run.  Prints a table;
 * there is no pass/fail.  Needs root.
 *
 * For 1, 1000 and 1000000 connections, and frames of 64 and 1500 bytes
 * (IPv4 TCP, 10 and 1446 bytes of payload), under panda-bench's Panda
 * policy:
 *
 *   bpf        ns per packet of the program in the kernel: the test run of
 *              panda_cls_bench (each repetition a packet of the next
 *              connection, its TOS reset, then the whole classification:
 *              parse, table, Algorithm 2, DSCP write with the checksum,
 *              skb->priority, counters) minus the test run of
 *              panda_cls_rotate (the same rotation, nothing else),
 *              alternated ABBA;
 *   lib parse  ns per packet of lib/panda in userspace on the same frames:
 *              panda_frame_parse() + panda_table_classify();
 *   lib table  panda_table_classify() alone on parsed packets: the work
 *              panda-bench times (lookup, update, level).
 *
 * Both sides count CPU time only: the kernel's test run stops its clock
 * while it yields the CPU, and userspace is timed by the process's CPU
 * clock, so that a shared machine's other load shows as little as it can
 * in either.
 *
 * The BPF table is an LRU hash sized 5/4 of the connections (no eviction),
 * lib/panda's table the same.  Every connection has an entry before the
 * timing starts.  Memory: the kernel's bytes per IPv4 entry (the map's
 * memlock / its capacity) next to lib/panda's 32.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <panda/conn-table.h>
#include <panda/frame.h>
#include <panda/policy.h>

#include <cli/clock.h>
#include <cli/log.h>
#include <cli/opt.h>
#include <cli/parse.h>

#include "loader.h"
#include "panda-cls.h"
#include "panda-cls.skel.h"

/* panda-bench's Panda policy. */
#define POLICY "id=1,threshold=1200,weights=9000:2,thresholds=10000/100000/" \
    "1000000/10000000/30000000/100000000/300000000"

struct point {
    double bpf_ns, lib_parse_ns, lib_table_ns, kernel_bytes_per_entry;
};

/* An Ethernet + IPv4 + TCP frame of 'len' bytes from 10.0.0.0 (the
 * rotation sets the low bits) to 10.128.0.1, port 40000 -> 80, ACK. */
static void
make_frame(uint8_t *f, uint32_t len)
{
    uint32_t ip_len = len - 14;

    memset(f, 0, len);
    memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00", 14);
    f[14] = 0x45;
    f[16] = ip_len >> 8;
    f[17] = ip_len & 0xff;
    f[22] = 64;
    f[23] = 6;
    f[26] = 10;
    f[30] = 10;
    f[31] = 128;
    f[33] = 1;
    f[34] = 40000 >> 8;
    f[35] = 40000 & 0xff;
    f[37] = 80;
    f[46] = 5 << 4;
    f[47] = 0x10;
    memset(f + 54, 'x', len - 54);
}

static void
set_src(uint8_t *f, uint32_t i)
{
    uint32_t src = 0x0a000000 + i;

    f[26] = src >> 24;
    f[27] = src >> 16;
    f[28] = src >> 8;
    f[29] = src;
}

/* Mean ns per repetition of one test run of 'prog' over 'frame'. */
static double
test_run(int prog, const uint8_t *frame, uint32_t len, uint32_t repeat)
{
    struct __sk_buff ctx;
    uint8_t out[2048];

    memset(&ctx, 0, sizeof ctx);
    LIBBPF_OPTS(bpf_test_run_opts, opts,
                .data_in = frame, .data_size_in = len,
                .data_out = out, .data_size_out = sizeof out,
                .ctx_in = &ctx, .ctx_size_in = sizeof ctx,
                .repeat = repeat);
    if (bpf_prog_test_run_opts(prog, &opts)) {
        cli_log_fatal("BPF_PROG_TEST_RUN: %s", strerror(errno));
    }
    return opts.duration;
}

static double
bench_bpf(const struct panda_policy *p, uint32_t conns, uint32_t len,
          uint32_t repeat, double *bytes_per_entry)
{
    struct pcls_policy slot;
    struct panda_cls *skel;
    uint8_t frame[1500];
    uint32_t zero = 0, capacity = conns + conns / 4 + 64;
    double a1, b1, b2, a2;
    int fd, bench, rotate;

    skel = panda_cls__open();
    if (!skel) {
        cli_log_fatal("opening the BPF object: %s", strerror(errno));
    }
    skel->rodata_config->pcls_config.capacity = capacity;
    skel->rodata_config->pcls_config.idle_timeout_ms = 0;
    skel->rodata_config->pcls_config.set_priority = 1;
    skel->rodata->bench_conns = conns;
    bpf_map__set_max_entries(skel->maps.conns4, capacity);
    bpf_map__set_max_entries(skel->maps.conns6, 64);
    if (panda_cls__load(skel)) {
        cli_log_fatal("loading the BPF program: %s (root?)", strerror(errno));
    }
    memset(&slot, 0, sizeof slot);
    slot.policy = *p;
    slot.valid = 1;
    slot.generation = 1;
    fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "policy", 4, sizeof slot, 1,
                        NULL);
    if (fd < 0 || bpf_map_update_elem(fd, &zero, &slot, BPF_ANY)
        || bpf_map_update_elem(bpf_map__fd(skel->maps.policy), &zero, &fd,
                               BPF_ANY)) {
        cli_log_fatal("installing the policy: %s", strerror(errno));
    }
    close(fd);
    bench = bpf_program__fd(skel->progs.panda_cls_bench);
    rotate = bpf_program__fd(skel->progs.panda_cls_rotate);
    make_frame(frame, len);

    test_run(bench, frame, len, conns);         /* Every connection in. */
    a1 = test_run(rotate, frame, len, repeat);
    b1 = test_run(bench, frame, len, repeat);
    b2 = test_run(bench, frame, len, repeat);
    a2 = test_run(rotate, frame, len, repeat);
    *bytes_per_entry = (double) bpf_loader_map_memlock(bpf_map__fd(skel->maps.conns4))
                       / capacity;
    panda_cls__destroy(skel);
    return (b1 + b2 - a1 - a2) / 2;
}

static void
bench_lib(const struct panda_policy *p, uint32_t conns, uint32_t len,
          uint32_t repeat, double *parse_ns, double *table_ns)
{
    struct panda_table_config cfg = {
        .capacity = conns + conns / 4 + 64, .seed = 1,
    };
    struct panda_table_verdict v;
    struct panda_frame f, scratch;
    struct panda_pkt *pkts;
    struct panda_table *t;
    uint8_t frame[1500];
    struct panda_frame_buf buf = { frame, len };
    uint32_t i, n_parsed = conns < 4096 ? conns : 4096;
    char *err;
    double t0;

    t = panda_table_create(&cfg, &err);
    if (!t) {
        cli_log_fatal("%s", err ? err : "out of memory");
    }
    make_frame(frame, len);
    for (i = 0; i < conns; i++) {
        set_src(frame, i);
        panda_frame_parse(&buf, &f, &scratch, p->tunnels);
        panda_table_classify(t, p, &f.pkt, 0, &v);
    }
    t0 = cli_clock_cpu_s();
    for (i = 0; i < repeat; i++) {
        set_src(frame, i % conns);
        frame[15] = 0;
        panda_frame_parse(&buf, &f, &scratch, p->tunnels);
        panda_table_classify(t, p, &f.pkt, 0, &v);
        frame[15] = (uint8_t) (v.dscp << 2);
    }
    *parse_ns = (cli_clock_cpu_s() - t0) * 1e9 / repeat;

    /* Parsed once: the table alone, over up to 4096 distinct packets
     * whose source address then steps through all connections. */
    pkts = calloc(n_parsed, sizeof *pkts);
    for (i = 0; i < n_parsed; i++) {
        set_src(frame, i);
        panda_frame_parse(&buf, &f, &scratch, p->tunnels);
        pkts[i] = f.pkt;
        pkts[i].data = NULL;
        pkts[i].data_len = 0;
    }
    t0 = cli_clock_cpu_s();
    for (i = 0; i < repeat; i++) {
        struct panda_pkt *k = &pkts[i % n_parsed];

        k->src.v4 = __builtin_bswap32(0x0a000000 + i % conns);
        panda_table_classify(t, p, k, 0, &v);
    }
    *table_ns = (cli_clock_cpu_s() - t0) * 1e9 / repeat;
    free(pkts);
    panda_table_destroy(t);
}

static void
usage(void)
{
    printf("usage: bench-bpf-cls [--packets N] [--max-conns N]\n"
           "Per-packet cost of the BPF classifier (BPF_PROG_TEST_RUN) "
           "next to lib/panda's\nat 1, 1000 and 1000000 connections, 64 and "
           "1500-byte frames (needs root).\n");
}

int
main(int argc, char *argv[])
{
    static const struct option options[] = {
        { "packets", required_argument, NULL, 'p' },
        { "max-conns", required_argument, NULL, 'm' },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    static const uint32_t conns[] = { 1, 1000, 1000000 };
    static const uint32_t lens[] = { 64, 1500 };
    uint32_t repeat = 2000000, max_conns = 1000000;
    struct panda_policy p;
    char *err;
    size_t i, j;
    int c;

    cli_log_set_program("bench-bpf-cls");
    while ((c = cli_opt_next(argc, argv, "h", options, usage)) != -1) {
        switch (c) {
        case 'p':
            repeat = cli_parse_u64("--packets", optarg, 1000, UINT32_MAX);
            break;
        case 'm':
            max_conns = cli_parse_u64("--max-conns", optarg, 1, 1u << 24);
            break;
        }
    }
    cli_opt_no_operands(argc, argv);
    err = panda_policy_parse(POLICY, &p);
    if (err) {
        cli_log_fatal("%s", err);
    }
    printf("bench-bpf-cls: %" PRIu32 " packets per point; policy %s\n",
           repeat, POLICY);
    printf("%8s %5s | %9s %10s %10s | %8s %8s | %s\n", "conns", "frame",
           "bpf ns", "lib parse", "lib table", "bpf/lib", "bpf/tbl",
           "kernel B/entry");
    for (i = 0; i < sizeof conns / sizeof *conns; i++) {
        for (j = 0; j < sizeof lens / sizeof *lens; j++) {
            struct point pt;

            if (conns[i] > max_conns) {
                continue;
            }
            pt.bpf_ns = bench_bpf(&p, conns[i], lens[j], repeat,
                                  &pt.kernel_bytes_per_entry);
            bench_lib(&p, conns[i], lens[j], repeat, &pt.lib_parse_ns,
                      &pt.lib_table_ns);
            printf("%8" PRIu32 " %5" PRIu32 " | %9.1f %10.1f %10.1f | "
                   "%8.2f %8.2f | %.1f\n", conns[i], lens[j], pt.bpf_ns,
                   pt.lib_parse_ns, pt.lib_table_ns,
                   pt.bpf_ns / pt.lib_parse_ns, pt.bpf_ns / pt.lib_table_ns,
                   pt.kernel_bytes_per_entry);
            fflush(stdout);
        }
    }
    printf("\nbpf: the program's ns per packet in the kernel (test run of "
           "the classification\nminus the test run of the rotation alone, "
           "ABBA); lib parse: lib/panda's frame\nparser and table in "
           "userspace; lib table: panda_table_classify() alone\n"
           "(panda-bench's work); both CPU time.  kernel B/entry: the IPv4 LRU map's "
           "memlock / its capacity\n(key + value are %zu bytes).\n",
           sizeof(struct pcls_key4) + sizeof(struct pcls_conn));
    return 0;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * panda_dctcp: what the BPF congestion control (panda-dctcp.bpf.c) and its
 * loader (panda-cc.c) share - the algorithm's registered name, the names of
 * its maps and the layout of the counters it keeps per network namespace.
 *
 * Included by both sides: the BPF program after vmlinux.h, the loader after
 * <linux/types.h>; it includes nothing itself, so __u32/__u64 come from
 * whichever of the two the includer has.
 *
 * The counters are cumulative from the registration (or from the first
 * event in a namespace) and never reset; a reader takes differences.  They
 * are kept per network namespace (key: the namespace's cookie, which a
 * process reads with getsockopt(SO_NETNS_COOKIE)), so that an experiment in
 * its own namespaces sees only its own connections, whatever else on the
 * machine runs panda_dctcp at the same time.
 */
#ifndef PANDA_DCTCP_H
#define PANDA_DCTCP_H 1

/* The name the algorithm registers under (net.ipv4.
 * tcp_available_congestion_control, "ip route ... congctl", TCP_CONGESTION)
 * and the name of its struct_ops map; both at most 15 characters.  Not
 * "dctcp": the kernel's own module registers that name, and one of the two
 * registrations would fail (or a reader could not tell which ran). */
#define PDCTCP_NAME "panda_dctcp"
/* The counters' map (BPF_MAP_TYPE_LRU_HASH, key: netns cookie). */
#define PDCTCP_STATS_MAP "pdctcp_stats"
#define PDCTCP_STATS_NETNS 256      /* Namespaces tracked at once (LRU). */

/* Fixed point of alpha and of the reduction factors: 1.0 = 1 << 20. */
#define PDCTCP_ONE_SHIFT 20
#define PDCTCP_ONE (1U << PDCTCP_ONE_SHIFT)

struct pdctcp_stats {
    /* Senders. */
    __u64 inits;            /* Connections that started with DCTCP. */
    __u64 fallbacks;        /* ...that had no ECN and went to Reno. */
    __u64 fallback_errors;  /* ...and could not (stayed, halving). */
    __u64 windows;          /* Observation windows closed (alpha
                             * updates). */
    __u64 marked_windows;   /* Of those, with CE-echoed deliveries. */
    __u64 reductions;       /* ECE-driven window reductions (CWR). */
    __u64 reduction_factor_sum; /* Sum of ssthresh/cwnd over them (Q20). */
    __u64 reduction_alpha_sum;  /* Sum of alpha at them (Q20). */
    __u64 reduction_cwnd_sum;   /* Sum of cwnd before them (packets). */
    __u64 recoveries;       /* Fast recoveries entered (loss). */
    __u64 timeouts;         /* Retransmission timeouts (CA_EVENT_LOSS). */
    __u64 undos;            /* Spurious reductions undone. */
    /* Receivers. */
    __u64 ce_changes;       /* CE state flips, each answered with an
                             * immediate ACK. */
    __u64 delayed_acks;     /* Of those, with a delayed ACK pending: sent
                             * first, with the previous state. */
};

#endif /* panda-dctcp.h */

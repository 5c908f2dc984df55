// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * panda_dctcp: DCTCP (RFC 8257) as a BPF tcp_congestion_ops, for kernels
 * built without the tcp_dctcp module but with BPF struct_ops.  It behaves
 * as the kernel's DCTCP does:
 *
 *   sender    alpha, the estimated fraction of CE-marked packets, moves by
 *             g = 1/16 towards the fraction seen in each observation
 *             window (one round trip of data: from the snd_nxt at the
 *             window's start until snd_una passes it); an ACK with ECE
 *             makes the kernel enter CWR at most once per window, and the
 *             new window is cwnd * (1 - alpha / 2) (ssthresh below).  Loss
 *             (fast recovery, timeout) halves the window as Reno does.
 *             Window growth is Reno's (the kernel's tcp_reno_cong_avoid).
 *   receiver  echoes CE exactly, under delayed ACKs: when the CE state of
 *             arriving data flips, a pending delayed ACK is sent at once
 *             with the old state, and the next ACK goes out immediately
 *             with the new one (RFC 8257 section 3.2).
 *   no ECN    a connection that did not negotiate ECN is handed to Reno,
 *             which also stops it from sending ECT packets.
 *
 * Alpha is kept with 20 fraction bits (the kernel's tcp_dctcp has 10), so
 * that its decay does not stall at a small residue.  Counters per network
 * namespace (panda-dctcp.h) let an experiment see what the algorithm did
 * with its own connections.
 *
 * Licence: BSD-2-Clause OR GPL-2.0-only; the "license" section says "Dual
 * BSD/GPL", which the kernel counts as GPL-compatible, as it requires of
 * struct_ops programs and of the GPL-only helpers and kfuncs used here.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "panda-dctcp.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Kernel constants that BTF does not carry (macros, not enums). */
#define TCP_CONG_NEEDS_ECN 0x2          /* include/net/tcp.h */
#define TCP_ECN_MODE_RFC3168 0x1        /* tp->ecn_flags (TCP_ECN_OK before
                                         * AccECN) */
#define TCP_ECN_DEMAND_CWR 0x4
#define TCP_ECN_MODE_ACCECN 0x10
#define SOL_TCP 6
#define TCP_CONGESTION 13

/* g = 1/2^G_SHIFT (RFC 8257 recommends 1/16), and alpha at the start:
 * 1, so that the first reduction halves the window as Reno would until
 * the connection has measured its marks (the kernel's default too). */
#define G_SHIFT 4
#define ALPHA_INIT PDCTCP_ONE
#define MIN_CWND 2

/* Per connection, in inet_csk_ca(sk) (ICSK_CA_PRIV_SIZE, 104 bytes). */
struct pdctcp {
    __u32 alpha;            /* Q20, 0..PDCTCP_ONE. */
    __u32 window_end;       /* The window ends once snd_una reaches it. */
    __u32 delivered_start;  /* tp->delivered at the window's start... */
    __u32 delivered_ce_start;   /* ...and tp->delivered_ce. */
    __u32 cwnd_before_cut;  /* cwnd before the last reduction (undo). */
    __u32 rcv_ce;           /* Receiver: the last data packet carried CE. */
    __u32 rcv_acked_to;     /* Receiver: rcv_nxt when rcv_ce was last set,
                             * what a delayed ACK of the old state acks. */
};

_Static_assert(sizeof(struct pdctcp) <= sizeof(((struct inet_connection_sock
                                                  *) 0)->icsk_ca_priv),
               "per-connection state exceeds icsk_ca_priv");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, PDCTCP_STATS_NETNS);
    __type(key, __u64);
    __type(value, struct pdctcp_stats);
} pdctcp_stats SEC(".maps");

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack,
                                __u32 acked) __ksym;

static __always_inline struct pdctcp *
ca_of(struct sock *sk)
{
    return (struct pdctcp *) ((struct inet_connection_sock *) sk)
        ->icsk_ca_priv;
}

static __always_inline struct tcp_sock *
tp_of(struct sock *sk)
{
    return (struct tcp_sock *) sk;
}

/* The counters of the namespace 'sk' lives in, created on first use; NULL
 * only if the map refuses (never for an LRU map in practice). */
static __always_inline struct pdctcp_stats *
stats_of(struct sock *sk)
{
    __u64 cookie = sk->__sk_common.skc_net.net->net_cookie;
    struct pdctcp_stats *st = bpf_map_lookup_elem(&pdctcp_stats, &cookie);

    if (!st) {
        struct pdctcp_stats zero = {};

        bpf_map_update_elem(&pdctcp_stats, &cookie, &zero, BPF_NOEXIST);
        st = bpf_map_lookup_elem(&pdctcp_stats, &cookie);
    }
    return st;
}

#define COUNT(sk, field, n) do {                        \
        struct pdctcp_stats *st_ = stats_of(sk);        \
        if (st_) {                                      \
            __sync_fetch_and_add(&st_->field, (n));     \
        }                                               \
    } while (0)

static __always_inline bool
ecn_negotiated(const struct tcp_sock *tp)
{
    return tp->ecn_flags & (TCP_ECN_MODE_RFC3168 | TCP_ECN_MODE_ACCECN);
}

/* Starts an observation window at the current send state. */
static __always_inline void
window_start(struct pdctcp *ca, const struct tcp_sock *tp)
{
    ca->window_end = tp->snd_nxt;
    ca->delivered_start = tp->delivered;
    ca->delivered_ce_start = tp->delivered_ce;
}

SEC("struct_ops/pdctcp_init")
void BPF_PROG(pdctcp_init, struct sock *sk)
{
    struct tcp_sock *tp = tp_of(sk);
    struct pdctcp *ca = ca_of(sk);
    int state = sk->__sk_common.skc_state;

    /* A listening or closed socket has negotiated nothing yet; its
     * children are initialised again once established. */
    if (!ecn_negotiated(tp) && state != TCP_LISTEN && state != TCP_CLOSE) {
        /* The peer refused ECN: without marks DCTCP would never back off
         * before loss, and the socket would still send ECT packets.  The
         * kernel's DCTCP falls back to Reno; so does this one, through
         * TCP_CONGESTION, which also clears ECT from the socket. */
        char reno[] = "reno";

        if (!bpf_setsockopt(sk, SOL_TCP, TCP_CONGESTION, reno,
                            sizeof reno)) {
            COUNT(sk, fallbacks, 1);
            return;
        }
        /* Could not switch: stay, and lose nothing but the marks (alpha
         * stays 1, so every reduction halves). */
        COUNT(sk, fallback_errors, 1);
    }
    ca->alpha = ALPHA_INIT;
    ca->cwnd_before_cut = 0;
    ca->rcv_ce = 0;
    ca->rcv_acked_to = tp->rcv_nxt;
    window_start(ca, tp);
    if (state != TCP_LISTEN && state != TCP_CLOSE) {
        COUNT(sk, inits, 1);
    }
}

/* Every ACK: closes the observation window once snd_una has passed its
 * end, moving alpha towards the fraction of delivered packets whose ACKs
 * echoed CE (Linux counts both per packet; with full-sized segments that
 * is RFC 8257's fraction of bytes). */
SEC("struct_ops/pdctcp_in_ack_event")
void BPF_PROG(pdctcp_in_ack_event, struct sock *sk, __u32 flags)
{
    struct tcp_sock *tp = tp_of(sk);
    struct pdctcp *ca = ca_of(sk);
    __u32 delivered, marked;
    __u64 alpha;

    if ((__s32) (tp->snd_una - ca->window_end) < 0) {
        return;
    }
    delivered = tp->delivered - ca->delivered_start;
    marked = tp->delivered_ce - ca->delivered_ce_start;
    /* alpha <- (1 - g) * alpha + g * F */
    alpha = ca->alpha;
    alpha -= alpha >> G_SHIFT;
    if (marked && delivered) {
        alpha += (((__u64) marked << PDCTCP_ONE_SHIFT) / delivered)
                 >> G_SHIFT;
    }
    ca->alpha = alpha > PDCTCP_ONE ? PDCTCP_ONE : alpha;
    window_start(ca, tp);
    COUNT(sk, windows, 1);
    if (marked) {
        COUNT(sk, marked_windows, 1);
    }
}

/* The window after a reduction: called by the kernel when it enters CWR
 * on ECE (at most once per window of data) and when it enters fast
 * recovery (set_state below then makes that a Reno halving). */
SEC("struct_ops/pdctcp_ssthresh")
__u32 BPF_PROG(pdctcp_ssthresh, struct sock *sk)
{
    struct tcp_sock *tp = tp_of(sk);
    struct pdctcp *ca = ca_of(sk);
    __u32 cwnd = tp->snd_cwnd;
    __u32 cut = ((__u64) cwnd * ca->alpha) >> (PDCTCP_ONE_SHIFT + 1);

    ca->cwnd_before_cut = cwnd;
    return cwnd - cut > MIN_CWND ? cwnd - cut : MIN_CWND;
}

/* Loss: Reno's halving, as the kernel's DCTCP does (a mark is a measured
 * signal, a loss is not). */
static __always_inline void
loss_halves(struct sock *sk)
{
    struct tcp_sock *tp = tp_of(sk);
    struct pdctcp *ca = ca_of(sk);
    __u32 cwnd = tp->snd_cwnd;

    ca->cwnd_before_cut = cwnd;
    tp->snd_ssthresh = cwnd / 2 > MIN_CWND ? cwnd / 2 : MIN_CWND;
}

SEC("struct_ops/pdctcp_set_state")
void BPF_PROG(pdctcp_set_state, struct sock *sk, __u8 new_state)
{
    struct inet_connection_sock *icsk = (struct inet_connection_sock *) sk;
    __u8 old_state = BPF_CORE_READ_BITFIELD(icsk, icsk_ca_state);

    if (new_state == old_state) {
        return;
    }
    if (new_state == TCP_CA_Recovery) {
        loss_halves(sk);
        COUNT(sk, recoveries, 1);
    } else if (new_state == TCP_CA_CWR && old_state < TCP_CA_CWR) {
        /* The kernel has just taken ssthresh from pdctcp_ssthresh() and
         * not yet lowered cwnd: the reduction this window makes. */
        struct tcp_sock *tp = tp_of(sk);
        __u32 cwnd = tp->snd_cwnd;

        if (cwnd) {
            COUNT(sk, reductions, 1);
            COUNT(sk, reduction_factor_sum,
                  ((__u64) tp->snd_ssthresh << PDCTCP_ONE_SHIFT) / cwnd);
            COUNT(sk, reduction_alpha_sum, ca_of(sk)->alpha);
            COUNT(sk, reduction_cwnd_sum, cwnd);
        }
    }
    /* A timeout (TCP_CA_Loss) is handled in cwnd_event(CA_EVENT_LOSS),
     * which the kernel calls once per timeout. */
}

/* Receiver: the CE state of arriving data.  The ACK that reports a state
 * must cover only data that arrived in it, so a flip first flushes a
 * delayed ACK (with the old state, acking up to where that state began to
 * hold) and then asks for an immediate ACK with the new one. */
static __always_inline void
ce_state_update(struct sock *sk, __u32 ce)
{
    struct inet_connection_sock *icsk = (struct inet_connection_sock *) sk;
    struct tcp_sock *tp = tp_of(sk);
    struct pdctcp *ca = ca_of(sk);

    if (ca->rcv_ce != ce) {
        COUNT(sk, ce_changes, 1);
        if (icsk->icsk_ack.pending & ICSK_ACK_TIMER) {
            if (ca->rcv_ce) {
                tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
            } else {
                tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
            }
            bpf_tcp_send_ack(tp, ca->rcv_acked_to);
            COUNT(sk, delayed_acks, 1);
        }
        icsk->icsk_ack.pending |= ICSK_ACK_NOW;
    }
    ca->rcv_ce = ce;
    ca->rcv_acked_to = tp->rcv_nxt;
    /* ECE on every ACK while data arrives marked (DEMAND_CWR makes the
     * kernel set it), on none otherwise. */
    if (ce) {
        tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
    } else {
        tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
    }
}

SEC("struct_ops/pdctcp_cwnd_event")
void BPF_PROG(pdctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
    switch (ev) {
    case CA_EVENT_ECN_IS_CE:
        ce_state_update(sk, 1);
        break;
    case CA_EVENT_ECN_NO_CE:
        ce_state_update(sk, 0);
        break;
    case CA_EVENT_LOSS:
        loss_halves(sk);
        COUNT(sk, timeouts, 1);
        break;
    default:
        break;
    }
}

/* A reduction found spurious (e.g. by DSACK): back to the window before
 * it, or the current one if that has grown past it since. */
SEC("struct_ops/pdctcp_undo_cwnd")
__u32 BPF_PROG(pdctcp_undo_cwnd, struct sock *sk)
{
    __u32 cwnd = tp_of(sk)->snd_cwnd;
    __u32 before = ca_of(sk)->cwnd_before_cut;

    COUNT(sk, undos, 1);
    return before > cwnd ? before : cwnd;
}

SEC("struct_ops/pdctcp_cong_avoid")
void BPF_PROG(pdctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
    tcp_reno_cong_avoid(sk, ack, acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops panda_dctcp = {
    .init = (void *) pdctcp_init,
    .in_ack_event = (void *) pdctcp_in_ack_event,
    .ssthresh = (void *) pdctcp_ssthresh,
    .set_state = (void *) pdctcp_set_state,
    .cwnd_event = (void *) pdctcp_cwnd_event,
    .undo_cwnd = (void *) pdctcp_undo_cwnd,
    .cong_avoid = (void *) pdctcp_cong_avoid,
    .flags = TCP_CONG_NEEDS_ECN,
    .name = PDCTCP_NAME,
};

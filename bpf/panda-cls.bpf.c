// SPDX-License-Identifier: Apache-2.0
/*
 * panda_cls: Panda's marking as a tc eBPF classifier, for hosts whose
 * packets never meet OVS's userspace datapath (the OVS kernel datapath, or
 * no OVS at all).  Attached with cls_bpf in direct-action mode to the
 * clsact egress hook of an uplink or of a VM's tap, it sees every packet
 * before the interface's qdisc and does what the datapath's panda action
 * does (docs/architecture.md, the packet's walk, steps 2-6):
 *
 *   - parses the frame with lib/panda's parser (panda/frame.h): the
 *     directional 5-tuple, TCP flags, payload length and first bytes; a
 *     Geneve or VXLAN packet of a tunnel the policy declares by its inner
 *     frame;
 *   - finds the connection in an LRU hash (conns4/conns6, panda-cls.h)
 *     with the rules of lib/panda/conn-table.c: only a packet with payload
 *     creates an entry; FIN and RST end it but keep its counter, which a
 *     SYN or data of the same tuple takes up again; nothing a sender sends
 *     resets the counter, only silence does (the table's idle timeout, the
 *     policy's idle_reset);
 *   - decides the level with lib/panda's one decision, panda_cls_level()
 *     (panda/classifier.h: the rules, Algorithm 2, the level of a counter),
 *     compiled here from the same header as the datapath's;
 *   - writes the level's DSCP into the IP header (and the outer one of a
 *     tunnel), ECN kept, checksums fixed; sets skb->priority to the tc
 *     class of the level's queue, 1:queue+1, the mapping of OVS's kernel
 *     datapath, so that linux-htb (or prio with handle 1:) puts the packet
 *     in its queue;
 *   - counts packets per level and TCP payload sizes per level
 *     (panda/sizehist.h's buckets).
 *
 * It never drops or redirects: every packet leaves with TC_ACT_OK.  (One
 * exception, the kernel's: a program that writes packet data in place
 * makes the verifier add a prologue that makes a cloned skb's header
 * writable, and drops the packet if there is no memory for that.)
 *
 * Where lib/panda's table and this one differ, and why: the table is the
 * kernel's LRU hash, whose replacement is least recently used (an entry
 * touched by a lookup is kept over one that is not), not conn-table.c's
 * "new tuples replace new tuples" (an LRU hash cannot refuse an insert;
 * tests/system/test_bpf_classifier.py measures what a flood does to
 * established connections); no lock is taken: one connection's packets
 * reach an egress hook from one
 * CPU at a time in practice (a socket's transmissions are serialised by
 * its lock; forwarded packets of a flow come from one receive queue), and
 * a race would lose one update of a counter, not corrupt the table.
 *
 * Licence: Apache-2.0, as lib/panda, whose headers are compiled in; the
 * program calls no GPL-only helper, so its licence string needs no GPL.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include <panda/policy.h>

/* Headers are read in place when they are in the skb's linear part (a
 * packet's headers nearly always are: a helper call each costs more than
 * the rest of the parsing), else with bpf_skb_load_bytes(), which also
 * reads the paged part.  Offsets below PCLS_DIRECT_MAX only, so that the
 * verifier can bound the packet pointer.  A length known at compile time
 * is one memcpy(); the one length that is not, the first bytes of a
 * payload shorter than PANDA_MAX_KEYWORD (every small packet's), is
 * copied a byte at a time by a loop bounded by PANDA_MAX_KEYWORD. */
#define PCLS_DIRECT_MAX 1024

static __always_inline int
pcls_load(struct __sk_buff *skb, uint32_t off, void *dst, uint32_t len)
{
    if (off < PCLS_DIRECT_MAX) {
        uint8_t *data = (uint8_t *) (long) skb->data;
        uint8_t *end = (uint8_t *) (long) skb->data_end;
        uint8_t *p = data + off;

        if (__builtin_constant_p(len)) {
            if (p + len <= end) {
                __builtin_memcpy(dst, p, len);
                return 0;
            }
        } else if (len <= PANDA_MAX_KEYWORD) {
            uint8_t *d = dst;
            uint32_t i;

            for (i = 0; i < PANDA_MAX_KEYWORD && i < len; i++) {
                if (p + i + 1 > end) {
                    break;
                }
                d[i] = p[i];
            }
            if (i == len) {
                return 0;
            }
        }
    }
    return bpf_skb_load_bytes(skb, off, dst, len);
}

#define PANDA_FRAME_CTX struct __sk_buff *
#define PANDA_FRAME_LOAD(CTX, OFF, DST, LEN) pcls_load(CTX, OFF, DST, LEN)
/* The parser's steps as global functions, each verified once. */
#define PANDA_FRAME_FN __attribute__((noinline))
#include <panda/frame.h>
#include <panda/sizehist.h>

#include "panda-cls.h"

char LICENSE[] SEC("license") = "Apache-2.0";

/* Load-time settings (the loader writes them before loading). */
const volatile struct pcls_config pcls_config SEC(".rodata.config") = {
    .idle_timeout_ms = 120 * 1000,
    .capacity = 1 << 18,
    .set_priority = 1,
};

/* The policy: an array of maps whose one slot holds a one-element array
 * with the running struct pcls_policy.  The loader replaces the inner map
 * to change the policy; until the first one, the slot holds 'policy0'
 * (valid = 0: packets pass as they are). */
struct pcls_policy_map {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, uint32_t);
    __type(value, struct pcls_policy);
} policy0 SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
    __uint(max_entries, 1);
    __type(key, uint32_t);
    __array(values, struct pcls_policy_map);
} policy SEC(".maps") = {
    .values = { [0] = &policy0 },
};

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 1 << 18);       /* The loader sets the capacity. */
    __type(key, struct pcls_key4);
    __type(value, struct pcls_conn);
} conns4 SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 1 << 18);
    __type(key, struct pcls_key6);
    __type(value, struct pcls_conn);
} conns6 SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, uint32_t);
    __type(value, struct pcls_stats);
} stats SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, PANDA_MAX_LEVELS * PCLS_HIST_BUCKETS);
    __type(key, uint32_t);
    __type(value, uint64_t);
} hist SEC(".maps");

/* The parser's scratch space for a tunnel's inner frame, per CPU, off the
 * stack: the verifier allows 512 bytes of stack to the whole chain of
 * calls, the classification and the parser's functions, and two frames
 * on it leave no room.  A tc program runs to its end before another one
 * starts on the same CPU (bottom halves are off on the transmit path), so
 * one buffer per CPU is enough. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, uint32_t);
    __type(value, struct panda_frame);
} scratch SEC(".maps");

/* The kernel's tick rate, from its configuration (libbpf reads it from
 * /proc/config.gz or /boot/config-*); 0 if libbpf found neither. */
extern const unsigned long CONFIG_HZ __kconfig __weak;

/* Now, in milliseconds: the connections' clock.  From jiffies, which the
 * verifier inlines as a load of the kernel's variable, rather than from
 * bpf_ktime_get_coarse_ns(), a helper call that reads the clock under
 * its sequence count; both advance once a tick, so the two differ in
 * cost only.  The coarse clock where the tick rate is not known. */
static __always_inline uint64_t
pcls_now_ms(void)
{
    if (CONFIG_HZ) {
        return bpf_jiffies64() * 1000 / CONFIG_HZ;
    }
    return bpf_ktime_get_coarse_ns() / 1000000;
}

/* Milliseconds from 'then' (modulo 2^40) to 'now'; 0 if 'then' is
 * later (conn-table.c, age40()). */
static __always_inline uint64_t
age40(uint64_t now, uint64_t then)
{
    uint64_t d = (now - then) & PCLS_SEEN_TIME_MASK;

    return d >> (PCLS_SEEN_TIME_BITS - 1) ? 0 : d;
}

/* A connection key of either family: the buffer the lookups read. */
union pcls_key {
    struct pcls_key4 v4;
    struct pcls_key6 v6;
};

/* The entry of TCP packet 'pkt''s connection in 'map' (key 'key'), found
 * or made, with the table's bookkeeping before the packet's counter update
 * done (conn-table.c, classify_tcp() and the first half of
 * entry_update()); '*counter' is the counter to update.  NULL if the packet
 * has no entry: then '*counter' is 0 if the packet carries no payload
 * (classified as a connection that has sent nothing yet, which an entry
 * made for it would be), and '*tracked' false if the table had no room
 * (untracked).
 *
 * Inline, and called with 'map' a constant (conns4 or conns6, one call
 * for each): the verifier then turns each map call into a direct call of
 * the LRU hash's own function.  A map that may be either at one call site
 * leaves it the generic helper, which calls through the map's operations,
 * an indirect call (a retpoline, on a kernel that mitigates Spectre v2)
 * for each of the lookups, updates and deletes. */
static __always_inline struct pcls_conn *
conn_find(void *map, const union pcls_key *key, const struct panda_pkt *pkt,
          const struct panda_policy *p, uint64_t now, int64_t *counter,
          bool *tracked, struct pcls_stats *st)
{
    uint64_t timeout = pcls_config.idle_timeout_ms;
    struct pcls_conn *e, fresh;

    *counter = 0;
    *tracked = true;
    e = bpf_map_lookup_elem(map, key);
    if (e && timeout && age40(now, e->seen) > timeout) {
        /* Silent past the timeout: forgotten, and this packet is the
         * first of a new connection. */
        bpf_map_delete_elem(map, key);
        st->expired++;
        e = NULL;
    }
    if (!e) {
        if (!pkt->payload) {
            return NULL;        /* Only a packet with payload makes one. */
        }
        fresh.counter = 0;
        fresh.seen = now & PCLS_SEEN_TIME_MASK;
        if (!bpf_map_update_elem(map, key, &fresh, BPF_NOEXIST)) {
            st->inserted++;
        }
        e = bpf_map_lookup_elem(map, key);
        if (!e) {
            st->insert_failed++;
            *tracked = false;
            return NULL;
        }
    }
    if (e->seen & PCLS_SEEN_ENDED
        && (pkt->payload || pkt->tcp_flags & PANDA_TCP_SYN)) {
        e->seen &= ~PCLS_SEEN_ENDED;    /* Resumed, counter kept. */
        st->resumed++;
    }
    *counter = e->counter;
    if (p->idle_reset_ms && age40(now, e->seen) > p->idle_reset_ms) {
        *counter = 0;
        st->idle_resets++;
    }
    return e;
}

/* Records packet 'pkt' in its entry 'e', whose counter is now 'counter':
 * the second half of conn-table.c's entry_update() (the packet's time, one
 * more packet, FIN or RST ends the entry and keeps its counter). */
static __always_inline void
conn_touch(struct pcls_conn *e, int64_t counter, const struct panda_pkt *pkt,
           uint64_t now, struct pcls_stats *st)
{
    uint64_t seen = e->seen, packets;

    packets = seen >> PCLS_SEEN_PACKETS_SHIFT & PCLS_SEEN_PACKETS_MAX;
    packets += packets < PCLS_SEEN_PACKETS_MAX;
    seen = (seen & ~(PCLS_SEEN_ENDED - 1))
           | packets << PCLS_SEEN_PACKETS_SHIFT
           | (now & PCLS_SEEN_TIME_MASK);
    if (pkt->tcp_flags & (PANDA_TCP_FIN | PANDA_TCP_RST)
        && !(seen & PCLS_SEEN_ENDED)) {
        seen |= PCLS_SEEN_ENDED;
        st->ended++;
    }
    e->counter = counter;
    e->seen = seen;
}

/* Writes 'dscp' into the IP header at 'nh' (family 'family', TOS or
 * traffic class byte 'tos' as received), keeping ECN.  IPv4: the header
 * checksum absorbs the change (so an outer UDP checksum over this header
 * stays right).  IPv6 has no header checksum; if the header is a tunnel's
 * inner one, the outer UDP checksum at 'udp_csum' (if nonzero, and unless
 * the kernel computes it on transmit) is updated.  In place when the
 * header is in the linear part, else with the helpers.  Returns 1 if the
 * header changed. */
static __always_inline int
set_dscp(struct __sk_buff *skb, uint32_t nh, uint8_t family, uint8_t tos,
         uint8_t dscp, uint32_t udp_csum)
{
    uint8_t new_tos = panda_pkt_tos_set_dscp(tos, dscp);
    uint8_t *data, *end, *ip;
    uint32_t old, new;

    if (new_tos == tos) {
        return 0;
    }
    data = (uint8_t *) (long) skb->data;
    end = (uint8_t *) (long) skb->data_end;
    ip = data + (nh < PCLS_DIRECT_MAX ? nh : 0);
    if (family == 4) {
        if (nh < PCLS_DIRECT_MAX && ip + 12 <= end) {
            /* RFC 1624, eqn. 3, over the 16-bit word that holds the TOS:
             * HC' = ~(~HC + ~m + m'). */
            uint32_t sum = (uint16_t) ~(ip[10] << 8 | ip[11]);

            sum += (uint16_t) ~(ip[0] << 8 | tos);
            sum += (uint32_t) (ip[0] << 8 | new_tos);
            sum = (sum & 0xffff) + (sum >> 16);
            sum = (sum & 0xffff) + (sum >> 16);
            sum = ~sum;
            ip[1] = new_tos;
            ip[10] = (uint8_t) (sum >> 8);
            ip[11] = (uint8_t) sum;
        } else {
            /* The TOS is the second byte of the header's first 16-bit
             * word. */
            bpf_l3_csum_replace(skb, nh + 10, bpf_htons(tos),
                                bpf_htons(new_tos), 2);
            bpf_skb_store_bytes(skb, nh + 1, &new_tos, 1, 0);
        }
        return 1;
    }
    if (nh < PCLS_DIRECT_MAX && ip + 4 <= end) {
        __builtin_memcpy(&old, ip, 4);
        new = bpf_htonl((bpf_ntohl(old) & ~(0xffu << 20))
                        | (uint32_t) new_tos << 20);
        __builtin_memcpy(ip, &new, 4);
    } else {
        if (bpf_skb_load_bytes(skb, nh, &old, 4)) {
            return 0;
        }
        new = bpf_htonl((bpf_ntohl(old) & ~(0xffu << 20))
                        | (uint32_t) new_tos << 20);
        bpf_skb_store_bytes(skb, nh, &new, 4, 0);
    }
    if (udp_csum) {
        bpf_l4_csum_replace(skb, udp_csum, old, new,
                            BPF_F_MARK_MANGLED_0 | 4);
    }
    return 1;
}

/* The whole classification of one packet.  A function of its own
 * (global, so verified once for every program that calls it), and
 * panda_cls_level() is inlined in it once: every path below ends in the
 * one call. */
__attribute__((noinline)) int
pcls_classify(struct __sk_buff *skb)
{
    const struct panda_policy *p;
    const struct pcls_policy *pp;
    struct pcls_conn *e = NULL;
    struct pcls_stats *st;
    union pcls_key key;
    struct panda_frame f, *tunnel;
    int64_t counter = 0, *counterp = NULL;
    bool tracked = false;
    uint32_t zero = 0, slot;
    uint64_t *count, now = 0;
    uint8_t level, dscp;
    void *inner;

    if (!skb) {
        return TC_ACT_OK;
    }
    st = bpf_map_lookup_elem(&stats, &zero);
    if (!st) {
        return TC_ACT_OK;
    }
    inner = bpf_map_lookup_elem(&policy, &zero);
    pp = inner ? bpf_map_lookup_elem(inner, &zero) : NULL;
    if (!pp || !pp->valid) {
        st->no_policy++;
        return TC_ACT_OK;
    }
    p = &pp->policy;
    tunnel = bpf_map_lookup_elem(&scratch, &zero);
    if (!tunnel) {
        return TC_ACT_OK;
    }
    if (!panda_frame_parse(skb, &f, tunnel, p->tunnels)) {
        st->not_ip++;
        return TC_ACT_OK;
    }
    if (f.outer_nh) {
        st->tunnel++;
    }

    /* The counter the decision updates: the entry's, 0 for a connection
     * without one, none for what cannot be tracked (rule kinds, not TCP,
     * a later fragment, no room). */
    if (panda_kind_has_counter(p->kind)
        && f.pkt.proto == PANDA_IPPROTO_TCP) {
        __builtin_memset(&key, 0, sizeof key);
        if (f.pkt.family == 4) {
            key.v4.id = p->id;
            key.v4.src = f.pkt.src.v4;
            key.v4.dst = f.pkt.dst.v4;
            key.v4.sport = f.pkt.sport;
            key.v4.dport = f.pkt.dport;
        } else {
            key.v6.id = p->id;
            __builtin_memcpy(key.v6.src, f.pkt.src.v6, 16);
            __builtin_memcpy(key.v6.dst, f.pkt.dst.v6, 16);
            key.v6.sport = f.pkt.sport;
            key.v6.dport = f.pkt.dport;
        }
        now = pcls_now_ms();
        if (f.pkt.family == 4) {
            e = conn_find(&conns4, &key, &f.pkt, p, now, &counter,
                          &tracked, st);
        } else {
            e = conn_find(&conns6, &key, &f.pkt, p, now, &counter,
                          &tracked, st);
        }
        if (tracked) {
            counterp = &counter;
        }
    }
    level = panda_cls_level(p, counterp, &f.pkt);
    level &= PANDA_MAX_LEVELS - 1;      /* Valid policies keep it so. */
    st->packets[level]++;
    st->segments[level] += skb->gso_segs ? skb->gso_segs : 1;
    if (e) {
        conn_touch(e, counter, &f.pkt, now, st);
        st->with_entry++;
        if (f.pkt.payload) {
            slot = level * PCLS_HIST_BUCKETS
                   + panda_sizehist_payload_bucket(f.pkt.payload);
            count = bpf_map_lookup_elem(&hist, &slot);
            if (count) {
                (*count)++;
            }
        }
    } else {
        st->without_entry++;
    }

    dscp = p->dscp[level];
    if (set_dscp(skb, f.nh, f.pkt.family, f.tos, dscp,
                 f.pkt.family == 6 ? f.udp_csum : 0)) {
        st->dscp_written++;
    }
    if (f.outer_nh) {
        set_dscp(skb, f.outer_nh, f.outer_family, f.outer_tos, dscp, 0);
    }
    if (pcls_config.set_priority) {
        skb->priority = PCLS_QUEUE_PRIORITY(p->queue[level]);
    }
    return TC_ACT_OK;
}

SEC("tc")
int
panda_cls(struct __sk_buff *skb)
{
    return pcls_classify(skb);
}

/* Benchmark only (bench/bench-bpf-cls.c; the loader never loads it): each
 * run of BPF_PROG_TEST_RUN's repetitions is a packet of another
 * connection.  The run counter lives in the skb's control block, which
 * the repetitions share; connection i of 'bench_conns' has IPv4 source
 * address 10.0.0.0 + i (the test packet's), and the TOS is reset so that
 * every run writes the DSCP.  panda_cls_rotate does the same without
 * classifying: the baseline that is subtracted. */
const volatile uint32_t bench_conns = 1;

static __always_inline void
bench_rotate(struct __sk_buff *skb)
{
    uint8_t *data = (uint8_t *) (long) skb->data;
    uint8_t *end = (uint8_t *) (long) skb->data_end;
    uint32_t i = skb->cb[0]++;
    uint32_t src = bpf_htonl(0x0a000000 + (bench_conns ? i % bench_conns
                                                       : 0));

    /* In place, with no stack: the verifier's 512 bytes are for the whole
     * chain of calls, the classification's included. */
    if (data + 14 + 20 <= end) {
        __builtin_memcpy(data + 14 + 12, &src, 4);
        data[14 + 1] = 0;
    }
}

SEC("tc")
int
panda_cls_bench(struct __sk_buff *skb)
{
    bench_rotate(skb);
    return pcls_classify(skb);
}

SEC("tc")
int
panda_cls_rotate(struct __sk_buff *skb)
{
    bench_rotate(skb);
    return TC_ACT_OK;
}

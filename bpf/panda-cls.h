/* SPDX-License-Identifier: Apache-2.0 */
/*
 * panda_cls: what the tc eBPF classifier (panda-cls.bpf.c) and its loader
 * (panda-bpf.c) share: the maps' names and the layouts of their keys and
 * values.  Included by both, after <stdint.h> and lib/panda's
 * panda/policy.h.
 *
 * Maps (the loader pins them in its pin directory under these names):
 *
 *   policy   array of maps, one slot: the running policy, a one-element
 *            array holding a struct pcls_policy.  set-policy makes a new
 *            inner map and swaps it in with one update of the slot, so that
 *            a packet sees the old policy or the new one, never a mixture.
 *   conns4   LRU hash, struct pcls_key4 -> struct pcls_conn: the IPv4
 *   conns6   (IPv6) connection table, capacity fixed at load.
 *   stats    per-CPU array, one struct pcls_stats: packets per level and
 *            what the table did.  Never reset: kept across policy changes.
 *   hist     per-CPU array of PANDA_MAX_LEVELS x PCLS_HIST_BUCKETS counts:
 *            TCP payload sizes per level (panda/sizehist.h's buckets), of
 *            the policy id in pcls_policy; reset when the id changes.
 *   config   the program's load-time settings (struct pcls_config,
 *            read-only once loaded).
 *   scratch  per-CPU array, one struct panda_frame: the parser's space for
 *            a tunnel's inner frame (the program's alone; not pinned).
 *   links    kept by the loader only: the interfaces it attached to;
 *   loader   kept by the loader only: its own counts (struct
 *            pcls_loader).
 */
#ifndef PANDA_CLS_H
#define PANDA_CLS_H 1

/* Map and program names (at most 15 characters: the kernel's limit). */
#define PCLS_PROG "panda_cls"
#define PCLS_MAP_POLICY "policy"
#define PCLS_MAP_CONNS4 "conns4"
#define PCLS_MAP_CONNS6 "conns6"
#define PCLS_MAP_STATS "stats"
#define PCLS_MAP_HIST "hist"
#define PCLS_MAP_CONFIG "config"
#define PCLS_MAP_LINKS "links"
#define PCLS_MAP_LOADER "loader"

#define PCLS_HIST_BUCKETS 276   /* PANDA_SIZEHIST_PAYLOAD_BUCKETS. */

/* The running policy.  'policy' is lib/panda's struct, as
 * panda_policy_parse() made and checked it in the loader: the BPF program
 * reads it as it is (the BPF target lays the struct out as x86-64 and
 * arm64 do: fixed-width fields, 8-byte alignment of 64-bit ones; the
 * assertions below check it on both sides). */
struct pcls_policy {
    struct panda_policy policy;
    uint64_t generation;        /* 1, 2, ...: set-policy's count. */
    uint32_t valid;             /* 0: no policy yet, packets pass as they
                                 * are. */
    uint32_t pad;
};

_Static_assert(sizeof(struct panda_policy) == 800,
               "struct panda_policy has the layout the BPF program reads");
_Static_assert(__builtin_offsetof(struct panda_policy, alpha) == 88
               && __builtin_offsetof(struct panda_policy, floor) == 168
               && __builtin_offsetof(struct panda_policy, rules) == 186
               && __builtin_offsetof(struct panda_policy, tunnels) == 794,
               "struct panda_policy has the layout the BPF program reads");

/* Connection keys: the directional 5-tuple (protocol always TCP) and the
 * policy id, so that a new id starts from fresh counters as it does in the
 * datapath (one table per id there).  Addresses and ports in network byte
 * order.  An IPv4 key and its value are 32 bytes. */
struct pcls_key4 {
    uint32_t id;
    uint32_t src, dst;
    uint16_t sport, dport;
};

struct pcls_key6 {
    uint32_t id;
    uint8_t src[16], dst[16];
    uint16_t sport, dport;
};

/* A connection: Algorithm 2's counter and one word of state, packed as in
 * lib/panda/conn-table.c:
 *   bits  0-39  last packet, ms modulo 2^40 (ages compare right up to
 *               2^39 ms, far beyond PANDA_MAX_DURATION_MS);
 *   bits 40-42  packets seen, saturating at 7;
 *   bit  43     ended by FIN or RST (conn-table.c: the tag's live bit). */
struct pcls_conn {
    int64_t counter;
    uint64_t seen;
};

_Static_assert(sizeof(struct pcls_key4) + sizeof(struct pcls_conn) == 32,
               "an IPv4 connection is 32 bytes");

#define PCLS_SEEN_TIME_BITS 40
#define PCLS_SEEN_TIME_MASK ((1ULL << PCLS_SEEN_TIME_BITS) - 1)
#define PCLS_SEEN_PACKETS_SHIFT 40
#define PCLS_SEEN_PACKETS_MAX 7ULL
#define PCLS_SEEN_ENDED (1ULL << 43)

/* Counters, per CPU (the loader sums them). */
struct pcls_stats {
    uint64_t packets[PANDA_MAX_LEVELS];     /* IP packets per level (a GSO
                                             * packet is one, as in the
                                             * datapath). */
    uint64_t not_ip;        /* Passed as they were: not IP. */
    uint64_t no_policy;     /* Passed as they were: no policy yet. */
    uint64_t tunnel;        /* Classified by a Geneve/VXLAN inner frame. */
    uint64_t with_entry;    /* Packets classified with a connection
                             * entry (counted in the histogram). */
    uint64_t without_entry; /* Classified without one (not TCP, later
                             * fragments, no room; rule kinds). */
    uint64_t inserted;      /* New entries (the LRU may have evicted one
                             * to make room: evicted = inserted - entries
                             * in the table, the loader's count). */
    uint64_t insert_failed; /* No entry could be had: untracked. */
    uint64_t ended;         /* Entries ended by FIN or RST... */
    uint64_t resumed;       /* ...and taken up again by SYN or data. */
    uint64_t expired;       /* Idle past the timeout: started afresh. */
    uint64_t idle_resets;   /* The policy's idle_reset restarted a
                             * counter. */
    uint64_t dscp_written;  /* Packets whose DSCP the program changed. */
    uint64_t segments[PANDA_MAX_LEVELS];    /* What 'packets' are on the
                                             * wire: a GSO packet is
                                             * gso_segs of them (and
                                             * counts so in the qdisc's
                                             * classes). */
};

/* The program's settings, fixed when it is loaded. */
struct pcls_config {
    uint64_t idle_timeout_ms;   /* 0: entries never expire (the LRU still
                                 * recycles the least recently used). */
    uint32_t capacity;          /* Entries per family (the maps' size). */
    uint32_t set_priority;      /* 1: skb->priority = the queue's class. */
};

/* The loader's record of an attachment (not read by the program). */
struct pcls_link_key {
    uint64_t netns_cookie;
    uint32_t ifindex;
    uint32_t pad;
};

struct pcls_link {
    char ifname[16];
    char netns[64];             /* As given to --netns, "" for the
                                 * loader's own. */
    uint32_t created_clsact;    /* The loader added the clsact qdisc. */
    uint32_t pad;
};

/* The loader's own counts. */
struct pcls_loader {
    uint64_t flushed;           /* Entries deleted by panda-bpf flush. */
};

/* skb->priority of queue 'q': tc class 1:q+1, the mapping of OVS's kernel
 * datapath (ovs: lib/dpif-netlink.c, dpif_netlink_queue_to_priority())
 * and of the classes netdev-linux's linux-htb and linux-hfsc make. */
#define PCLS_QUEUE_PRIORITY(q) ((1u << 16) | ((uint32_t) (q) + 1))

/* The tc filter: handle and priority of the one cls_bpf filter the loader
 * installs on an interface's clsact egress hook. */
#define PCLS_TC_HANDLE 0x9a4d
#define PCLS_TC_PRIORITY 0x4d9a

#endif /* panda-cls.h */

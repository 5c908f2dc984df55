/*
 * Copyright (c) 2026 Panda-OVS developers.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

#include <config.h>

#include "dpif-netdev-sched.h"

#include <errno.h>
#include <inttypes.h>
#include <panda/scheduler.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/timerfd.h>
#endif

#include "coverage.h"
#include "dp-packet.h"
#include "dpif-netdev-panda.h"
#include "flow.h"
#include "netdev.h"
#include "netdev-provider.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/list.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-thread.h"
#include "packets.h"
#include "smap.h"
#include "timeval.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_netdev_sched);

COVERAGE_DEFINE(panda_sched_drop_limit);    /* Port buffer full. */
COVERAGE_DEFINE(panda_sched_drop_budget);   /* Datapath bound reached. */
COVERAGE_DEFINE(panda_sched_drop_wred);
COVERAGE_DEFINE(panda_sched_drop_push_out); /* For a higher level. */
COVERAGE_DEFINE(panda_sched_mark);          /* CE written. */

#define DP_SCHED_QOS_TYPE "panda-sched"

/* The token bucket takes lib/panda's defaults, the same as every other
 * caller's (burst: 2 MTUs or 100 us at the rate, what may leave at once
 * after idleness).  A port served by a thread that comes back late (the
 * main thread, which polls netdev-linux ports, waiting for a CPU on a busy
 * host; a preempted PMD thread) needs no deeper bucket to keep its rate:
 * while it is backlogged, the library's catch-up lets it send what the link
 * would have sent meanwhile (other_config:catch-up, by default 10 ms at the
 * rate). */

/* Default of other_config:panda-sched-max-packets, the bound on the packets
 * held by all the schedulers of a datapath.  Held packets pin receive
 * buffers: an AF_XDP queue's umem has 16384 frames, of which its fill, rx,
 * tx and completion rings may take up to 8192, and a DPDK mempool starts at
 * 16384 mbufs; 10000 leaves each of them room to receive.  At most
 * PANDA_SCHED_MAX_PACKETS, like a port's limit-packets. */
#define DP_SCHED_DEFAULT_MAX_PACKETS 10000

/* Default of other_config:panda-sched-max-memory, in MiB: the bound on the
 * memory of all the schedulers of a datapath together (their pools,
 * panda_sched_memory(); not the packets they hold, which
 * panda-sched-max-packets bounds).  A scheduler's pools hold a packet node
 * for each packet it may hold, at most panda-sched-max-packets: with the
 * default 10000, some 0.55 MiB per port (1.2 MiB with fq_codel at every
 * level), so 128 MiB holds 200 ports at the largest, and a port's
 * limit-packets of 2^24 - 1 costs what the datapath may hold. */
#define DP_SCHED_DEFAULT_MAX_MEMORY_MB 128

/* The datapath's other_config keys, in the order of 'refused'. */
enum dp_scheds_key {
    DP_SCHEDS_MAX_PACKETS,
    DP_SCHEDS_MAX_MEMORY,
    DP_SCHEDS_N_KEYS
};

/* panda-sched/show lists at most this many flow queues per port. */
#define DP_SCHED_SHOW_MAX_FLOWS 64

/* The schedulers of one datapath. */
struct dp_scheds {
    struct ovs_list list_node;  /* In 'all_dp_scheds'. */
    char *name;                 /* The datapath's name. */
    struct ovs_list scheds;     /* Contains "struct dp_sched"s. */
    uint64_t max_packets;       /* panda-sched-max-packets. */
    uint64_t max_memory;        /* panda-sched-max-memory, in bytes. */
    struct panda_sched_budget *budget;  /* Shared by 'scheds'. */
    int timerfd;                /* Wakes the main thread to send, or -1. */

    /* Refusals in effect of the keys, for panda-sched/show. */
    struct dp_panda_refusal refused[DP_SCHEDS_N_KEYS];
};

/* The scheduler of one port. */
struct dp_sched {
    struct ovs_list list_node;  /* In its dp_scheds's 'scheds'. */
    struct dp_scheds *dp;
    struct netdev *netdev;      /* Its port's netdev (a reference). */
    struct panda_sched_config cfg;  /* In effect. */
    char *cfg_text;             /* 'cfg' with every key in effect,
                                 * defaults resolved, for status and show
                                 * (panda_sched_config_format_effective()):
                                 * two configurations with the same text
                                 * behave the same. */

    struct ovs_mutex mutex;
    struct panda_sched *core OVS_GUARDED;   /* Holds the packets. */
    struct dp_sched_totals {
        uint64_t sent_packets, sent_bytes, drops;
    } past[PANDA_SCHED_MAX_LEVELS] OVS_GUARDED;   /* Of replaced cores. */
    long long int created;      /* time_msec() at creation. */
    struct panda_sched_budget *budget OVS_GUARDED;  /* The one 'core'
                                                     * uses. */
    atomic_bool sending;        /* A thread has the turn to send. */
};

/* All the datapaths' schedulers, for panda-sched/show.  The lists change
 * only in the main thread, under this mutex. */
static struct ovs_mutex dp_scheds_mutex = OVS_MUTEX_INITIALIZER;
static struct ovs_list all_dp_scheds OVS_GUARDED_BY(dp_scheds_mutex)
    = OVS_LIST_INITIALIZER(&all_dp_scheds);

static void dp_sched_unixctl_show(struct unixctl_conn *, int argc,
                                  const char *argv[], void *aux);

void
dp_sched_init(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    if (ovsthread_once_start(&once)) {
        unixctl_command_register("panda-sched/show", "[port]", 0, 1,
                                 dp_sched_unixctl_show, NULL);
        ovsthread_once_done(&once);
    }
}

/* Packets. */

/* The bytes that 'packet' puts on the wire of a port whose MTU is 'mtu'.
 * A TSO packet (userspace-tso-enable) leaves as segments of at most 'mtu'
 * bytes of IP packet, each with a copy of the packet's Ethernet, IP and
 * TCP headers, so the shaper, the buffer limits and the ECN threshold are
 * charged for those copies too: for a 64 kB packet some 45 headers, 3.6%
 * of the bytes.  'mtu' <= 0 (unknown): the packet's own size. */
static uint32_t
dp_sched_wire_len(const struct dp_packet *packet, int mtu)
{
    uint32_t size = dp_packet_size(packet);
    const struct tcp_header *tcp = dp_packet_l4(packet);
    const char *l3 = dp_packet_l3(packet);
    uint32_t l2_len, l3_len, hdr_len, mss, segs;

    if (!dp_packet_hwol_is_tso(packet) || !tcp || !l3
        || dp_packet_l4_size(packet) < TCP_HEADER_LEN || mtu <= 0) {
        return size;
    }
    l2_len = l3 - (const char *) dp_packet_data(packet);
    l3_len = (const char *) tcp - l3;
    hdr_len = l2_len + l3_len + TCP_OFFSET(tcp->tcp_ctl) * 4;
    if (size <= hdr_len || mtu <= hdr_len - l2_len) {
        return size;
    }
    /* The segments' payload: the MTU less the IP and TCP headers. */
    mss = mtu - (hdr_len - l2_len);
    segs = DIV_ROUND_UP(size - hdr_len, mss);
    return size + (segs - 1) * hdr_len;
}

/* What the scheduler needs to know of 'packet', sent on a port of MTU
 * 'mtu' (dp_sched_wire_len()).  Returns the packet's IP version (4 or 6),
 * or 0 if it has no IP header that may be marked (not IP, inside MPLS,
 * truncated): such packets count as Not-ECT with DSCP 0. */
static int
dp_sched_classify(struct dp_packet *packet, int mtu,
                  struct panda_sched_pkt *pkt)
{
    const void *l3;
    size_t l3_size;
    ovs_be16 type;
    int version = 0;

    pkt->level = MIN(packet->md.skb_priority, UINT8_MAX);
    pkt->dscp = 0;
    pkt->ecn = IP_ECN_NOT_ECT;

    if (OVS_UNLIKELY(packet->l3_ofs == UINT16_MAX)
        && dp_packet_is_eth(packet)
        && dp_packet_size(packet) >= ETH_HEADER_LEN) {
        /* Not parsed yet (e.g. the packet took the simple-match fast
         * path): parse_tcp_flags() sets the L3 and L4 offsets. */
        parse_tcp_flags(packet, NULL, NULL, NULL);
    }

    l3 = dp_packet_l3(packet);
    if (l3 && packet->l2_5_ofs == UINT16_MAX) {
        /* The Ethertype just before the L3 header (after any VLAN). */
        if (!dp_packet_is_eth(packet)) {
            type = pt_ns_type_be(packet->packet_type);
        } else if (packet->l3_ofs >= ETH_HEADER_LEN) {
            memcpy(&type, (const char *) l3 - sizeof type, sizeof type);
        } else {
            type = 0;
        }
        l3_size = dp_packet_l3_size(packet);
        if (type == htons(ETH_TYPE_IP) && l3_size >= IP_HEADER_LEN
            && IP_VER(*(const uint8_t *) l3) == 4) {
            const struct ip_header *ip = l3;

            pkt->dscp = ip->ip_tos >> 2;
            pkt->ecn = ip->ip_tos & IP_ECN_MASK;
            version = 4;
        } else if (type == htons(ETH_TYPE_IPV6)
                   && l3_size >= IPV6_HEADER_LEN
                   && (*(const uint8_t *) l3 >> 4) == 6) {
            /* Version, traffic class, flow label. */
            uint8_t tc = ntohl(get_16aligned_be32(l3)) >> 20;

            pkt->dscp = tc >> 2;
            pkt->ecn = tc & IP_ECN_MASK;
            version = 6;
        }
    }

    if (OVS_UNLIKELY(!dp_packet_rss_valid(packet))) {
        /* The datapath computes the 5-tuple hash of every packet it
         * classifies through its flow caches; packets that took another
         * path get one here, the way the datapath's other paths do. */
        const uint8_t *l4 = dp_packet_l4(packet);
        const struct ip_header *ip = l3;
        const struct ovs_16aligned_ip6_hdr *ip6 = l3;
        uint8_t proto = (version == 4 ? ip->ip_proto
                         : version == 6 ? ip6->ip6_ctlun.ip6_un1.ip6_un1_nxt
                         : 0);
        bool ports = (l4 && dp_packet_l4_size(packet) >= 4
                      && (proto == IPPROTO_TCP || proto == IPPROTO_UDP));

        if (version == 4 && ports) {
            dp_packet_update_rss_hash_ipv4_tcp_udp(packet);
        } else if (version == 4) {
            dp_packet_update_rss_hash_ipv4(packet);
        } else if (version == 6 && ports) {
            dp_packet_update_rss_hash_ipv6_tcp_udp(packet);
        } else {
            struct flow flow;

            flow_extract(packet, &flow);
            dp_packet_set_rss_hash(packet, flow_hash_5tuple(&flow, 0));
        }
    }
    pkt->flow_hash = dp_packet_get_rss_hash(packet);
    pkt->len = dp_sched_wire_len(packet, mtu);
    return version;
}

/* Counts the packets that a scheduler of 'netdev' refused. */
static void
dp_sched_count_drops(struct netdev *netdev, const unsigned int *n_drops)
{
    unsigned int total = (n_drops[PANDA_SCHED_DROP_LIMIT]
                          + n_drops[PANDA_SCHED_DROP_BUDGET]
                          + n_drops[PANDA_SCHED_DROP_WRED]);

    if (total) {
        COVERAGE_ADD(panda_sched_drop_limit, n_drops[PANDA_SCHED_DROP_LIMIT]);
        COVERAGE_ADD(panda_sched_drop_budget,
                     n_drops[PANDA_SCHED_DROP_BUDGET]);
        COVERAGE_ADD(panda_sched_drop_wred, n_drops[PANDA_SCHED_DROP_WRED]);
        netdev_qos_count_tx_dropped(netdev, total);
    }
}

/* Offers 'packet' to 'core'.  Returns the verdict; the packet is held,
 * marked if so decided, unless the verdict is a drop. */
static enum panda_sched_verdict
dp_sched_offer(struct panda_sched *core, struct dp_packet *packet, int mtu,
               uint64_t now_ns)
{
    struct panda_sched_pkt pkt;
    int ip_version = dp_sched_classify(packet, mtu, &pkt);
    enum panda_sched_verdict v = panda_sched_enqueue(core, &pkt, packet,
                                                     now_ns);

    if (v == PANDA_SCHED_QUEUED_CE) {
        /* The scheduler marks only ECT packets, which are IP. */
        IP_ECN_set_ce(packet, ip_version == 6);
        COVERAGE_INC(panda_sched_mark);
    }
    return v;
}

/* A batch always fits the cut-through. */
BUILD_ASSERT_DECL(NETDEV_MAX_BURST <= PANDA_SCHED_PASS_MAX);

/* The cut-through of panda_sched_pass() for 'batch' at 'now_ns': its
 * packets' levels and lengths are in 'pkts', or, if null, all of them are
 * of level 'level' and 'bytes' long in all.  If the scheduler takes the
 * batch (unshaped, empty, nothing configured that could act on it) and no
 * other thread has the turn to send, puts 'batch' in the order it leaves,
 * takes the turn and returns true. */
static bool
dp_sched_pass(struct dp_sched *sched, struct dp_packet_batch *batch,
              const struct panda_sched_pkt *pkts, unsigned int level,
              uint64_t bytes, uint64_t now_ns)
    OVS_REQUIRES(sched->mutex)
{
    struct dp_packet *sorted[PANDA_SCHED_PASS_MAX];
    uint8_t order[PANDA_SCHED_PASS_MAX];
    size_t n = dp_packet_batch_size(batch);
    enum panda_sched_pass pass;
    bool sending;

    atomic_read_explicit(&sched->sending, &sending, memory_order_acquire);
    if (sending) {
        return false;
    }
    if (!pkts) {
        pass = (panda_sched_pass_level(sched->core, level, n, bytes, now_ns)
                ? PANDA_SCHED_PASS_IN_ORDER : PANDA_SCHED_PASS_REFUSED);
    } else {
        pass = panda_sched_pass(sched->core, pkts, n, now_ns, order);
    }
    if (pass == PANDA_SCHED_PASS_REFUSED) {
        return false;
    }
    atomic_store_relaxed(&sched->sending, true);
    if (pass == PANDA_SCHED_PASS_SORTED) {
        for (size_t i = 0; i < n; i++) {
            sorted[i] = batch->packets[order[i]];
        }
        memcpy(batch->packets, sorted, n * sizeof *sorted);
    }
    return true;
}

bool
dp_sched_exchange(struct dp_sched *sched, struct dp_packet_batch *batch,
                  long long int now_us, bool *more)
{
    struct panda_sched_pkt pkts[NETDEV_MAX_BURST];
    struct dp_packet *dropped[NETDEV_MAX_BURST];
    unsigned int n_drops[PANDA_SCHED_DROP_WRED + 1] = { 0 };
    uint64_t now_ns = now_us * 1000;
    struct dp_packet *packet;
    size_t n_dropped = 0;
    uint32_t first, diff = 0;
    uint64_t bytes = 0;
    bool tso = false;
    int mtu = 0;
    bool turn;

    /* What the cut-through reads of each packet: its level and length,
     * not its IP header or flow hash, which only a held packet needs.  A
     * batch of one level (the common one: one input's packets through one
     * rule) needs only the sum of the lengths. */
    first = (dp_packet_batch_is_empty(batch) ? 0
             : batch->packets[0]->md.skb_priority);
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        diff |= packet->md.skb_priority ^ first;
        bytes += dp_packet_size(packet);
        tso |= dp_packet_hwol_is_tso(packet);
    }
    if (OVS_UNLIKELY(tso)) {
        /* The port's MTU sizes the segments of TSO packets; read it
         * outside the scheduler's mutex. */
        if (netdev_get_mtu(sched->netdev, &mtu)) {
            mtu = 0;
        }
        bytes = 0;
        DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
            bytes += dp_sched_wire_len(packet, mtu);
        }
    }
    if (diff) {
        DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
            pkts[i].level = MIN(packet->md.skb_priority, UINT8_MAX);
            pkts[i].len = (OVS_UNLIKELY(tso)
                           ? dp_sched_wire_len(packet, mtu)
                           : dp_packet_size(packet));
        }
    }

    ovs_mutex_lock(&sched->mutex);
    if (dp_sched_pass(sched, batch, diff ? pkts : NULL, first, bytes,
                      now_ns)) {
        /* Cut-through: the batch leaves now, in level order. */
        *more = false;
        ovs_mutex_unlock(&sched->mutex);
        return true;
    }
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        enum panda_sched_verdict v = dp_sched_offer(sched->core, packet,
                                                    mtu, now_ns);

        if (panda_sched_verdict_is_drop(v)) {
            dropped[n_dropped++] = packet;
            n_drops[v]++;
        }
    }
    dp_packet_batch_init(batch);

    atomic_read_explicit(&sched->sending, &turn, memory_order_acquire);
    turn = !turn;
    if (turn) {
        void *out[NETDEV_MAX_BURST];
        size_t n_out;

        atomic_store_relaxed(&sched->sending, true);
        n_out = panda_sched_dequeue_burst(sched->core, now_ns, out,
                                          NETDEV_MAX_BURST);
        for (size_t i = 0; i < n_out; i++) {
            dp_packet_batch_add(batch, out[i]);
        }
    }
    *more = !panda_sched_is_empty(sched->core);
    ovs_mutex_unlock(&sched->mutex);

    for (size_t i = 0; i < n_dropped; i++) {
        dp_packet_delete(dropped[i]);
    }
    dp_sched_count_drops(sched->netdev, n_drops);
    return turn;
}

void
dp_sched_send_done(struct dp_sched *sched)
{
    atomic_store_explicit(&sched->sending, false, memory_order_release);
}

long long int
dp_sched_next_us(struct dp_sched *sched, long long int now_us)
{
    uint64_t next_ns;

    ovs_mutex_lock(&sched->mutex);
    next_ns = panda_sched_next_ns(sched->core, now_us * 1000);
    ovs_mutex_unlock(&sched->mutex);

    return (next_ns == UINT64_MAX ? LLONG_MAX
            : (long long int) DIV_ROUND_UP(next_ns, 1000));
}

/* Held packets, taken out of a scheduler in the order it would have sent
 * them. */
struct dp_sched_packets {
    struct dp_packet **packets;
    size_t n;
};

static void
dp_sched_collect_cb(void *handle, void *aux_)
{
    struct dp_sched_packets *aux = aux_;

    aux->packets[aux->n++] = handle;
}

/* Takes every packet out of 'core'. */
static void
dp_sched_take_all(struct panda_sched *core, struct dp_sched_packets *out)
{
    struct panda_sched_stats stats;

    panda_sched_stats(core, &stats);
    out->packets = xmalloc(MAX(stats.backlog_packets, 1)
                           * sizeof *out->packets);
    out->n = 0;
    panda_sched_drain(core, dp_sched_collect_cb, out);
}

void
dp_sched_drain(struct dp_sched *sched,
               void (*send)(struct dp_packet_batch *, void *aux), void *aux)
{
    struct dp_sched_packets held;
    struct dp_packet_batch batch;

    ovs_mutex_lock(&sched->mutex);
    dp_sched_take_all(sched->core, &held);
    ovs_mutex_unlock(&sched->mutex);

    dp_packet_batch_init(&batch);
    for (size_t i = 0; i < held.n; i++) {
        if (!send) {
            dp_packet_delete(held.packets[i]);
            continue;
        }
        dp_packet_batch_add(&batch, held.packets[i]);
        if (dp_packet_batch_is_full(&batch) || i + 1 == held.n) {
            send(&batch, aux);
            dp_packet_batch_init(&batch);
        }
    }
    free(held.packets);
}

/* Configuration. */

/* Queue keys that other QoS types take (linux-htb and linux-hfsc: OVS
 * users set them out of habit), and what panda-sched does with them.  One
 * that asks for nothing panda-sched would do differently is ignored, with
 * a warning; one whose intent panda-sched would silently not meet refuses
 * the configuration, naming what panda-sched has instead. */
static const struct dp_sched_foreign_key {
    const char *key;
    bool refuse;
    const char *why;
} dp_sched_foreign_keys[] = {
    { "priority", false, "ignored: panda-sched ranks queues by their"
      " number, queue 0 the highest level" },
    { "burst", false, "ignored: panda-sched's token bucket is the port's"
      " (QoS other_config:burst)" },
    { "min-rate", true, "panda-sched guarantees no rate to a queue; its"
      " starvation guard (QoS other_config:guard) gives waiting lower"
      " levels a share of the link" },
    { "max-rate", true, "panda-sched shapes the port, not a queue (QoS"
      " other_config:max-rate)" },
};

static const struct dp_sched_foreign_key *
dp_sched_foreign_key(const char *key)
{
    for (size_t i = 0; i < ARRAY_SIZE(dp_sched_foreign_keys); i++) {
        if (!strcmp(key, dp_sched_foreign_keys[i].key)) {
            return &dp_sched_foreign_keys[i];
        }
    }
    return NULL;
}

/* Fills 'cfg' from the panda-sched QoS configured on 'netdev': the QoS
 * record's other_config and its Queue records' other_config (queue N =
 * level N).  Returns NULL or a malloc()ed message naming the key.  Appends
 * to 'warnings' what it ignored that the user may have meant to work. */
static char *
dp_sched_read_config(const struct netdev *netdev,
                     struct panda_sched_config *cfg, struct ds *warnings)
{
    struct smap details = SMAP_INITIALIZER(&details);
    struct netdev_queue_dump dump;
    const struct smap_node **nodes;
    unsigned int queue_id;
    struct ds text = DS_EMPTY_INITIALIZER;
    const char *type;
    char *error = NULL;

    panda_sched_config_init(cfg);
    if (netdev_get_qos(netdev, &type, &details)) {
        smap_destroy(&details);
        return xstrdup("cannot read the QoS configuration");
    }

    /* The QoS record's keys, in lib/panda's text form, which takes the
     * port-wide keys and "LEVEL.key"; sorted, so that the key an error
     * names does not depend on hash order. */
    nodes = smap_sort(&details);
    for (size_t i = 0; i < smap_count(&details) && !error; i++) {
        const char *key = nodes[i]->key, *value = nodes[i]->value;

        if (strpbrk(key, ",=") || strchr(value, ',')) {
            error = xasprintf("%s: ',' and '=' are not allowed in keys,"
                              " nor ',' in values", key);
        }
        ds_put_format(&text, "%s%s=%s", i ? "," : "", key, value);
    }
    free(nodes);
    smap_destroy(&details);
    if (!error) {
        error = panda_sched_config_parse(cfg, ds_cstr(&text));
    }
    ds_destroy(&text);

    /* The Queue records: per-level settings (sorted by key, and the dump
     * gives the queues in ascending order, so that the key an error names
     * does not depend on hash order). */
    smap_init(&details);
    NETDEV_QUEUE_FOR_EACH (&queue_id, &details, &dump, netdev) {
        if (error) {
            continue;
        }
        nodes = smap_sort(&details);
        for (size_t i = 0; i < smap_count(&details) && !error; i++) {
            const char *key = nodes[i]->key;
            const struct dp_sched_foreign_key *fk = dp_sched_foreign_key(key);

            if (fk && fk->refuse) {
                error = xasprintf("queue %u: %s: %s", queue_id, key,
                                  fk->why);
            } else if (fk) {
                ds_put_format(warnings, "%squeue %u: %s %s",
                              warnings->length ? "; " : "", queue_id, key,
                              fk->why);
            } else if (queue_id >= cfg->n_levels) {
                error = xasprintf("queue %u: no such level (levels=%u:"
                                  " queues 0..%u; packets of queues beyond"
                                  " go to the lowest level)", queue_id,
                                  cfg->n_levels, cfg->n_levels - 1);
            } else {
                error = panda_sched_config_set_level(cfg, queue_id, key,
                                                     nodes[i]->value);
            }
        }
        free(nodes);
    }
    smap_destroy(&details);

    if (!error) {
        error = panda_sched_config_validate(cfg);
    }
    return error;
}

/* Frees a packet that a core of port 'netdev_' pushed out to make room for
 * a higher level's.  Called under the scheduler's mutex, from within
 * panda_sched_enqueue(). */
static void
dp_sched_push_out(void *packet, void *netdev_)
{
    dp_packet_delete(packet);
    COVERAGE_INC(panda_sched_drop_push_out);
    netdev_qos_count_tx_dropped(netdev_, 1);
}

/* Returns a new scheduler core for 'cfg' on port 'netdev', or NULL with a
 * message in '*errorp'. */
static struct panda_sched *
dp_sched_create_core(struct netdev *netdev,
                     const struct panda_sched_config *cfg,
                     struct panda_sched_budget *budget, char **errorp)
{
    struct panda_sched *core = panda_sched_create(cfg, budget, errorp);

    if (!core && !*errorp) {
        *errorp = xstrdup("out of memory");
    }
    if (core) {
        panda_sched_set_push_out(core, dp_sched_push_out, netdev);
    }
    return core;
}

/* Adds the counters of 'core' to those of the cores that 'sched' had, so
 * that OpenFlow queue statistics never go back. */
static void
dp_sched_add_totals(struct dp_sched *sched, const struct panda_sched *core)
    OVS_REQUIRES(sched->mutex)
{
    struct panda_sched_stats st;

    panda_sched_stats(core, &st);
    for (int i = 0; i < st.n_levels; i++) {
        const struct panda_sched_level_stats *l = &st.level[i];

        sched->past[i].sent_packets += l->sent_packets;
        sched->past[i].sent_bytes += l->sent_bytes;
        sched->past[i].drops += (l->drop_limit + l->drop_budget
                                 + l->drop_wred + l->drop_push_out);
    }
}

/* Statistics of queue 'queue_id' (level 'queue_id') since the scheduler
 * was created, for OpenFlow queue statistics (netdev_get_queue_stats()). */
static int
dp_sched_queue_stats(unsigned int queue_id, struct netdev_queue_stats *stats,
                     void *sched_)
{
    struct dp_sched *sched = sched_;
    struct panda_sched_stats st;
    int error = 0;

    ovs_mutex_lock(&sched->mutex);
    panda_sched_stats(sched->core, &st);
    if (queue_id < st.n_levels) {
        const struct panda_sched_level_stats *l = &st.level[queue_id];
        const struct dp_sched_totals *past = &sched->past[queue_id];

        stats->tx_packets = past->sent_packets + l->sent_packets;
        stats->tx_bytes = past->sent_bytes + l->sent_bytes;
        stats->tx_errors = (past->drops + l->drop_limit + l->drop_budget
                            + l->drop_wred + l->drop_push_out);
        stats->created = sched->created;
    } else {
        error = ENOENT;         /* Its packets are in the lowest level. */
    }
    ovs_mutex_unlock(&sched->mutex);
    return error;
}

/* Replaces the core of 'sched' by 'core', which uses 'budget', moving the
 * packets over (those 'core' refuses are dropped and counted). */
static void
dp_sched_replace_core(struct dp_sched *sched, struct panda_sched *core,
                      struct panda_sched_budget *budget, long long int now_us)
{
    unsigned int n_drops[PANDA_SCHED_DROP_WRED + 1] = { 0 };
    struct dp_sched_packets held;
    struct panda_sched *old;
    int mtu;

    if (netdev_get_mtu(sched->netdev, &mtu)) {
        mtu = 0;
    }
    ovs_mutex_lock(&sched->mutex);
    old = sched->core;
    dp_sched_take_all(old, &held);
    for (size_t i = 0; i < held.n; i++) {
        enum panda_sched_verdict v;

        v = dp_sched_offer(core, held.packets[i], mtu, now_us * 1000);
        if (panda_sched_verdict_is_drop(v)) {
            dp_packet_delete(held.packets[i]);
            n_drops[v]++;
        }
    }
    sched->core = core;
    sched->budget = budget;
    dp_sched_add_totals(sched, old);
    ovs_mutex_unlock(&sched->mutex);

    free(held.packets);
    panda_sched_destroy(old);
    dp_sched_count_drops(sched->netdev, n_drops);
}

static void
dp_sched_set_status(struct netdev *netdev, const char *cfg_text,
                    const struct ds *warnings, const char *error)
{
    struct smap status = SMAP_INITIALIZER(&status);

    smap_add(&status, "state", error ? "refused" : "active");
    if (error) {
        smap_add(&status, "error", error);
    } else {
        smap_add(&status, "config", cfg_text);
    }
    if (warnings->length) {
        smap_add(&status, "warning", ds_cstr_ro(warnings));
    }
    netdev_set_qos_status(netdev, &status);
    smap_destroy(&status);
}

/* The memory that the schedulers of 'dp' would take with a budget of
 * 'max_packets' packets, 'except' (if nonnull) left out. */
static uint64_t
dp_scheds_memory(const struct dp_scheds *dp, uint64_t max_packets,
                 const struct dp_sched *except)
{
    const struct dp_sched *sched;
    uint64_t total = 0;

    LIST_FOR_EACH (sched, list_node, &dp->scheds) {
        if (sched != except) {
            total += panda_sched_config_memory(&sched->cfg, max_packets);
        }
    }
    return total;
}

static double
dp_sched_mib(uint64_t bytes)
{
    return bytes / 1048576.0;
}

/* Checks that a scheduler of 'cfg' for the port that has 'sched' (NULL:
 * none yet) fits in what the datapath's schedulers may take together.
 * Returns NULL or a malloc()ed message naming the key. */
static char *
dp_scheds_check_memory(const struct dp_scheds *dp,
                       const struct dp_sched *sched,
                       const struct panda_sched_config *cfg)
{
    uint64_t need = panda_sched_config_memory(cfg, dp->max_packets);
    uint64_t others = dp_scheds_memory(dp, dp->max_packets, sched);

    if (others + need <= dp->max_memory) {
        return NULL;
    }
    return xasprintf("limit-packets: a scheduler of %"PRIu32" packets (of "
                     "which the datapath may hold %"PRIu64") takes %.1f MiB,"
                     " and the datapath's other schedulers %.1f MiB: more "
                     "than Open_vSwitch other_config:panda-sched-max-memory"
                     " (%"PRIu64" MiB)", cfg->limit_packets,
                     dp->max_packets, dp_sched_mib(need),
                     dp_sched_mib(others), dp->max_memory >> 20);
}

struct dp_sched *
dp_sched_update(struct dp_scheds *dp, struct dp_sched *sched,
                struct netdev *netdev)
{
    struct ds warnings = DS_EMPTY_INITIALIZER;
    struct panda_sched_config cfg;
    struct panda_sched *core;
    struct smap details;
    const char *type;
    char *error, *cfg_text;
    bool configured;

    smap_init(&details);
    configured = (!netdev_get_qos(netdev, &type, &details)
                  && !strcmp(type, DP_SCHED_QOS_TYPE));
    smap_destroy(&details);
    if (!configured) {
        return NULL;
    }

    error = dp_sched_read_config(netdev, &cfg, &warnings);
    if (warnings.length) {
        VLOG_WARN("%s: panda-sched: %s", netdev_get_name(netdev),
                  ds_cstr(&warnings));
    }
    if (error) {
        goto refused;
    }
    cfg_text = panda_sched_config_format_effective(&cfg);
    if (sched && !strcmp(cfg_text, sched->cfg_text)) {
        /* Only the text of the records changed (e.g. "50M" for
         * "50000000"). */
        free(cfg_text);
        dp_sched_set_status(netdev, sched->cfg_text, &warnings, NULL);
        ds_destroy(&warnings);
        return sched;
    }

    error = dp_scheds_check_memory(dp, sched, &cfg);
    if (error) {
        free(cfg_text);
        goto refused;
    }
    core = dp_sched_create_core(netdev, &cfg, dp->budget, &error);
    if (!core) {
        free(cfg_text);
        goto refused;
    }
    if (sched) {
        dp_sched_replace_core(sched, core, dp->budget, time_usec());
        free(sched->cfg_text);
    } else {
        sched = xzalloc(sizeof *sched);
        sched->dp = dp;
        sched->netdev = netdev_ref(netdev);
        ovs_mutex_init(&sched->mutex);
        sched->core = core;
        sched->budget = dp->budget;
        sched->created = time_msec();
        atomic_init(&sched->sending, false);
        netdev_set_qos_queue_stats(netdev, dp_sched_queue_stats, sched);
        ovs_mutex_lock(&dp_scheds_mutex);
        ovs_list_push_back(&dp->scheds, &sched->list_node);
        ovs_mutex_unlock(&dp_scheds_mutex);
    }
    sched->cfg = cfg;
    sched->cfg_text = cfg_text;
    VLOG_INFO("%s: panda-sched: %s", netdev_get_name(netdev), cfg_text);
    dp_sched_set_status(netdev, cfg_text, &warnings, NULL);
    ds_destroy(&warnings);
    return sched;

refused:
    VLOG_WARN("%s: panda-sched configuration refused, the port forwards"
              " without QoS: %s", netdev_get_name(netdev), error);
    dp_sched_set_status(netdev, NULL, &warnings, error);
    ds_destroy(&warnings);
    free(error);
    return NULL;
}

void
dp_sched_destroy(struct dp_sched *sched)
{
    if (sched) {
        netdev_set_qos_queue_stats(sched->netdev, NULL, NULL);
        dp_sched_drain(sched, NULL, NULL);
        ovs_mutex_lock(&dp_scheds_mutex);
        ovs_list_remove(&sched->list_node);
        ovs_mutex_unlock(&dp_scheds_mutex);
        panda_sched_destroy(sched->core);
        ovs_mutex_destroy(&sched->mutex);
        netdev_close(sched->netdev);
        free(sched->cfg_text);
        free(sched);
    }
}

/* The datapath's schedulers. */

/* The main thread serves the schedulers of ports that no PMD thread polls
 * (netdev-linux ports): it sends what may leave, then sleeps in its poll
 * loop until the next packet may.  Poll loop timers count milliseconds, so
 * on a shaped port the thread would come back up to a millisecond late for
 * every packet, and a high-priority packet arriving meanwhile would wait for
 * it: at 50 Mbit/s a frame takes 0.24 ms.  A timerfd wakes poll() when the
 * next packet may leave, to within the kernel's timer slack.  Where there is
 * none, the millisecond timer alone still serves the port, less precisely. */
static int
dp_scheds_timerfd_create(const char *dp_name)
{
#ifdef __linux__
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

    if (fd < 0) {
        VLOG_WARN("%s: panda-sched: timerfd_create failed (%s): ports "
                  "served by the main thread send on millisecond timers",
                  dp_name, ovs_strerror(errno));
    }
    return fd;
#else
    (void) dp_name;
    return -1;
#endif
}

/* Makes the poll loop wake when the scheduler whose next packet may leave
 * first, at 'next_us', may send: now if 'next_us' <= 'now_us', never if
 * 'next_us' is LLONG_MAX.  Both times are time_usec()'s. */
void
dp_scheds_wait_until(struct dp_scheds *dp, long long int next_us,
                     long long int now_us)
{
    if (next_us <= now_us) {
        poll_immediate_wake();
        return;
    }
    if (next_us == LLONG_MAX) {
        return;
    }
    /* The millisecond timer stays: it is what a warped clock (time/warp in
     * the tests) moves, and the fallback without a timerfd. */
    poll_timer_wait_until(DIV_ROUND_UP(next_us, 1000));
#ifdef __linux__
    if (dp->timerfd >= 0) {
        /* Relative to now, since time_usec() may be warped.  Arming it
         * again also resets its expiry count, so a fired timer does not
         * keep the loop awake. */
        long long int delay_us = next_us - now_us;
        struct itimerspec its = {
            .it_value = { .tv_sec = delay_us / 1000000,
                          .tv_nsec = delay_us % 1000000 * 1000 },
        };

        if (!timerfd_settime(dp->timerfd, 0, &its, NULL)) {
            poll_fd_wait(dp->timerfd, POLLIN);
        }
    }
#endif
}

struct dp_scheds *
dp_scheds_create(const char *dp_name)
{
    struct dp_scheds *dp = xzalloc(sizeof *dp);

    dp->name = xstrdup(dp_name);
    ovs_list_init(&dp->scheds);
    dp->max_packets = DP_SCHED_DEFAULT_MAX_PACKETS;
    dp->max_memory = (uint64_t) DP_SCHED_DEFAULT_MAX_MEMORY_MB << 20;
    dp->budget = panda_sched_budget_create(dp->max_packets);
    if (!dp->budget) {
        out_of_memory();
    }
    dp->timerfd = dp_scheds_timerfd_create(dp_name);
    ovs_mutex_lock(&dp_scheds_mutex);
    ovs_list_push_back(&all_dp_scheds, &dp->list_node);
    ovs_mutex_unlock(&dp_scheds_mutex);
    return dp;
}

void
dp_scheds_destroy(struct dp_scheds *dp)
{
    if (dp) {
        /* The datapath destroyed its ports, and their schedulers, first. */
        ovs_assert(ovs_list_is_empty(&dp->scheds));
        ovs_mutex_lock(&dp_scheds_mutex);
        ovs_list_remove(&dp->list_node);
        ovs_mutex_unlock(&dp_scheds_mutex);
        panda_sched_budget_destroy(dp->budget);
        if (dp->timerfd >= 0) {
            close(dp->timerfd);
        }
        for (int i = 0; i < DP_SCHEDS_N_KEYS; i++) {
            dp_panda_refusal_destroy(&dp->refused[i]);
        }
        free(dp->name);
        free(dp);
    }
}

/* The largest panda-sched-max-memory: the machine's memory, in MiB. */
static unsigned long long int
dp_scheds_max_memory_mb(void)
{
    long long int pages = sysconf(_SC_PHYS_PAGES);
    long long int page_size = sysconf(_SC_PAGESIZE);

    return pages > 0 && page_size > 0 ? (pages * page_size) >> 20 : 1 << 20;
}

/* Applies other_config:panda-sched-max-packets and panda-sched-max-memory,
 * checked as every datapath key is (dpif-netdev-panda.h, "Datapath
 * other_config keys"): a value that is not an integer in range, a memory
 * bound below what the schedulers hold, or a packet bound for which their
 * pools would not fit in it is refused, and the key keeps its setting. */
void
dp_scheds_set_config(struct dp_scheds *dp, const struct smap *other_config)
{
    char *msgs[DP_SCHEDS_N_KEYS] = { NULL };
    struct panda_sched_budget *budget;
    struct panda_sched **cores;
    struct dp_sched *sched;
    unsigned long long int max, mem_mb;
    uint64_t mem, need;
    size_t n = 0;

    max = dp_panda_config_uint(other_config, "panda-sched-max-packets", 1,
                               PANDA_SCHED_MAX_PACKETS, "",
                               DP_SCHED_DEFAULT_MAX_PACKETS, dp->max_packets,
                               &msgs[DP_SCHEDS_MAX_PACKETS]);
    mem_mb = dp_panda_config_uint(other_config, "panda-sched-max-memory", 1,
                                  dp_scheds_max_memory_mb(), " MiB",
                                  DP_SCHED_DEFAULT_MAX_MEMORY_MB,
                                  dp->max_memory >> 20,
                                  &msgs[DP_SCHEDS_MAX_MEMORY]);
    mem = (uint64_t) mem_mb << 20;

    /* A bound on memory below what the schedulers take now: refused. */
    need = dp_scheds_memory(dp, dp->max_packets, NULL);
    if (mem != dp->max_memory && need > mem) {
        free(msgs[DP_SCHEDS_MAX_MEMORY]);
        msgs[DP_SCHEDS_MAX_MEMORY] = xasprintf(
            "other_config:panda-sched-max-memory=\"%s\": the schedulers "
            "take %.1f MiB; keeping %"PRIu64" MiB",
            smap_get_def(other_config, "panda-sched-max-memory",
                         "(default)"),
            dp_sched_mib(need), dp->max_memory >> 20);
        mem = dp->max_memory;
    }
    /* A bound on packets for which the schedulers' pools would not fit. */
    need = dp_scheds_memory(dp, max, NULL);
    if (max != dp->max_packets && need > mem) {
        free(msgs[DP_SCHEDS_MAX_PACKETS]);
        msgs[DP_SCHEDS_MAX_PACKETS] = xasprintf(
            "other_config:panda-sched-max-packets=\"%s\": the schedulers "
            "would take %.1f MiB, more than panda-sched-max-memory (%"PRIu64
            " MiB); keeping %"PRIu64,
            smap_get_def(other_config, "panda-sched-max-packets",
                         "(default)"),
            dp_sched_mib(need), mem >> 20, dp->max_packets);
        max = dp->max_packets;
    }
    for (int i = 0; i < DP_SCHEDS_N_KEYS; i++) {
        dp_panda_refusal_update(&dp->refused[i], dp->name, msgs[i]);
    }
    if (mem != dp->max_memory) {
        dp->max_memory = mem;
        VLOG_INFO("%s: panda-sched schedulers take at most %"PRIu64" MiB",
                  dp->name, mem >> 20);
    }
    if (max == dp->max_packets) {
        return;
    }

    /* Every scheduler moves to a new budget with its packets (those that
     * the new bound no longer allows are dropped and counted); all or none,
     * so that the old budget can go. */
    budget = panda_sched_budget_create(max);
    cores = xmalloc(MAX(ovs_list_size(&dp->scheds), 1) * sizeof *cores);
    LIST_FOR_EACH (sched, list_node, &dp->scheds) {
        char *error = NULL;

        cores[n] = (budget
                    ? dp_sched_create_core(sched->netdev, &sched->cfg, budget,
                                           &error)
                    : NULL);
        if (!cores[n]) {
            VLOG_WARN("panda-sched-max-packets=%llu not applied: %s: %s",
                      max, netdev_get_name(sched->netdev),
                      error ? error : "out of memory");
            free(error);
            while (n) {
                panda_sched_destroy(cores[--n]);
            }
            free(cores);
            panda_sched_budget_destroy(budget);
            return;
        }
        n++;
    }
    n = 0;
    LIST_FOR_EACH (sched, list_node, &dp->scheds) {
        dp_sched_replace_core(sched, cores[n++], budget, time_usec());
    }
    free(cores);
    panda_sched_budget_destroy(dp->budget);
    dp->budget = budget;
    dp->max_packets = max;
    VLOG_INFO("%s: panda-sched schedulers hold at most %llu packets",
              dp->name, max);
}

/* panda-sched/show. */

struct dp_sched_show_aux {
    struct ds *ds;
    size_t n;                   /* Queues seen (shown or not). */
};

/* Shows a queue that holds packets, the first DP_SCHED_SHOW_MAX_FLOWS of
 * them. */
static bool
dp_sched_show_flow(const struct panda_sched_flow_info *f, void *aux_)
{
    struct dp_sched_show_aux *aux = aux_;
    struct ds *ds = aux->ds;

    if (aux->n++ >= DP_SCHED_SHOW_MAX_FLOWS) {
        return true;            /* Keep counting. */
    }
    if (f->shared) {
        ds_put_format(ds, "    level %u shared:", f->level);
    } else {
        ds_put_format(ds, "    level %u flow 0x%08"PRIx32":", f->level,
                      f->flow_hash);
    }
    ds_put_format(ds, " backlog=%"PRIu32"p/%"PRIu32"B deficit=%"PRId32"\n",
                  f->backlog_packets, f->backlog_bytes, f->deficit);
    return true;
}

static void
dp_sched_show(struct ds *ds, struct dp_sched *sched)
    OVS_REQUIRES(dp_scheds_mutex)
{
    struct dp_sched_show_aux aux = { .ds = ds, .n = 0 };
    struct panda_sched_stats st;
    uint64_t held, max;

    ovs_mutex_lock(&sched->mutex);
    panda_sched_stats(sched->core, &st);
    ds_put_format(ds, "%s (datapath %s): panda-sched\n",
                  netdev_get_name(sched->netdev), sched->dp->name);
    ds_put_format(ds, "  config: %s\n", sched->cfg_text);
    held = panda_sched_budget_held(sched->budget);
    max = sched->dp->max_packets;
    ds_put_format(ds, "  backlog=%"PRIu64"p/%"PRIu64"B max-backlog=%"PRIu64
                  "B burst=%"PRIu32"B catch-up=%"PRIu32"B flow-queues=%"
                  PRIu32"/%"PRIu32" datapath-held=%"PRIu64"/%"PRIu64"p\n",
                  st.backlog_packets, st.backlog_bytes, st.max_backlog_bytes,
                  st.burst_bytes, st.catch_up_bytes, st.flow_queues_used,
                  st.flow_queues_max, held, max);
    for (int i = 0; i < st.n_levels; i++) {
        const struct panda_sched_level_stats *l = &st.level[i];

        ds_put_format(ds, "  level %d: backlog=%"PRIu64"p/%"PRIu64"B"
                      " flow-queues=%"PRIu32" enqueued=%"PRIu64"p/%"PRIu64"B"
                      " sent=%"PRIu64"p/%"PRIu64"B guard=%"PRIu64"p"
                      " drop-limit=%"PRIu64" drop-budget=%"PRIu64
                      " drop-wred=%"PRIu64" drop-push-out=%"PRIu64
                      " mark-ecn=%"PRIu64" mark-wred=%"PRIu64
                      " shared=%"PRIu64"\n", i,
                      l->backlog_packets, l->backlog_bytes, l->flow_queues,
                      l->enqueued_packets, l->enqueued_bytes,
                      l->sent_packets, l->sent_bytes, l->guard_packets,
                      l->drop_limit, l->drop_budget, l->drop_wred,
                      l->drop_push_out, l->mark_ecn, l->mark_wred,
                      l->shared_queue_packets);
    }
    if (st.backlog_packets) {
        ds_put_cstr(ds, "  queues holding packets, in service order:\n");
        panda_sched_foreach_flow(sched->core, dp_sched_show_flow, &aux);
        if (aux.n > DP_SCHED_SHOW_MAX_FLOWS) {
            ds_put_format(ds, "    ... and %"PRIuSIZE" more\n",
                          aux.n - DP_SCHED_SHOW_MAX_FLOWS);
        }
    }
    ovs_mutex_unlock(&sched->mutex);
}

/* The datapath's bounds, what its schedulers take of them, and the
 * refusals in effect of its keys; nothing if it has neither schedulers
 * nor refusals. */
static void
dp_scheds_show(struct ds *ds, const struct dp_scheds *dp)
    OVS_REQUIRES(dp_scheds_mutex)
{
    bool refused = false;

    for (int i = 0; i < DP_SCHEDS_N_KEYS; i++) {
        refused |= dp->refused[i].msg != NULL;
    }
    if (ovs_list_is_empty(&dp->scheds) && !refused) {
        return;
    }
    ds_put_format(ds, "datapath %s: held %"PRIu64" of %"PRIu64" packets, "
                  "schedulers' memory %.1f of %"PRIu64" MiB\n", dp->name,
                  panda_sched_budget_held(dp->budget), dp->max_packets,
                  dp_sched_mib(dp_scheds_memory(dp, dp->max_packets, NULL)),
                  dp->max_memory >> 20);
    for (int i = 0; i < DP_SCHEDS_N_KEYS; i++) {
        if (dp->refused[i].msg) {
            ds_put_format(ds, "  refused: %s\n", dp->refused[i].msg);
        }
    }
}

static int
dp_sched_compare_by_name(const void *a_, const void *b_)
{
    const struct dp_sched *const *a = a_;
    const struct dp_sched *const *b = b_;

    return strcmp(netdev_get_name((*a)->netdev),
                  netdev_get_name((*b)->netdev));
}

static void
dp_sched_unixctl_show(struct unixctl_conn *conn, int argc,
                      const char *argv[], void *aux OVS_UNUSED)
{
    const char *port = argc > 1 ? argv[1] : NULL;
    struct ds ds = DS_EMPTY_INITIALIZER;
    struct dp_scheds *dp;
    size_t n_shown = 0;

    ovs_mutex_lock(&dp_scheds_mutex);
    LIST_FOR_EACH (dp, list_node, &all_dp_scheds) {
        size_t n = ovs_list_size(&dp->scheds), i = 0;
        struct dp_sched **scheds = xmalloc(MAX(n, 1) * sizeof *scheds);
        struct dp_sched *sched;

        if (!port) {
            dp_scheds_show(&ds, dp);
        }

        LIST_FOR_EACH (sched, list_node, &dp->scheds) {
            scheds[i++] = sched;
        }
        qsort(scheds, n, sizeof *scheds, dp_sched_compare_by_name);
        for (i = 0; i < n; i++) {
            if (!port || !strcmp(port, netdev_get_name(scheds[i]->netdev))) {
                dp_sched_show(&ds, scheds[i]);
                n_shown++;
            }
        }
        free(scheds);
    }
    ovs_mutex_unlock(&dp_scheds_mutex);

    if (port && !n_shown) {
        struct netdev *netdev = netdev_from_name(port);
        struct smap status = SMAP_INITIALIZER(&status);
        const char *error = NULL;

        if (netdev) {
            netdev_get_qos_status(netdev, &status);
            error = smap_get(&status, "error");
            netdev_close(netdev);
        }
        ds_put_format(&ds, "%s: no panda-sched scheduler%s%s", port,
                      error ? ": " : "", error ? error : "");
        unixctl_command_reply_error(conn, ds_cstr(&ds));
        smap_destroy(&status);
    } else {
        if (!n_shown) {
            ds_put_cstr(&ds, "no port has a panda-sched scheduler\n");
        }
        unixctl_command_reply(conn, ds_cstr(&ds));
    }
    ds_destroy(&ds);
}

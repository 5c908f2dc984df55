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

#include "dpif-netdev-panda.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/ip6.h>
#include <panda/classifier.h>
#include <panda/conn-table.h>
#include <panda/packet.h>
#include <panda/policy.h>
#include <panda/sizehist.h>
#include <panda/wire.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "cmap.h"
#include "coverage.h"
#include "csum.h"
#include "dp-packet.h"
#include "dpif.h"
#include "flow.h"
#include "hash.h"
#include "netlink.h"
#include "odp-netlink.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/geneve.h"
#include "openvswitch/list.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/vlog.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "packets.h"
#include "smap.h"
#include "timeval.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_netdev_panda);

COVERAGE_DEFINE(panda_packet);          /* Packets classified. */
COVERAGE_DEFINE(panda_not_ip);          /* Packets left alone: not IP. */
COVERAGE_DEFINE(panda_bad_action);      /* Malformed action argument. */
COVERAGE_DEFINE(panda_no_table);        /* Connection table unavailable. */
COVERAGE_DEFINE(panda_table_created);
COVERAGE_DEFINE(panda_table_shared);    /* Policy ids put in the overflow
                                         * table. */
COVERAGE_DEFINE(panda_table_reclaimed); /* Idle tables given to another id. */
COVERAGE_DEFINE(panda_too_many_ids);    /* Flow puts refused: more than
                                         * DP_PANDA_MAX_IDS policy ids. */
COVERAGE_DEFINE(panda_unregistered);    /* Batches whose policy no flow put
                                         * registered: checked on the spot. */
COVERAGE_DEFINE(panda_id_forgotten);    /* Policy ids no flow used for the
                                         * grace period. */

/* How many policies (distinct wire bodies) are kept per policy id.  A flow
 * put registers its policy as the most recent; the oldest beyond this many
 * is forgotten, so a controller that keeps changing the thresholds of one id
 * cannot make the datapath's memory grow.  A flow whose policy was forgotten
 * still works: its batches are checked on the spot (panda_unregistered). */
#define DP_PANDA_MAX_VERSIONS 4

/* Limits.
 *
 * A connection table costs 24 bytes per IPv4 and 48 bytes per IPv6
 * connection (panda/conn-table.h), for other_config:panda-max-connections
 * connections per address family, and each policy id has its own table.
 * DP_PANDA_MAX_CONNECTIONS (2^24) bounds one table at 1.1 GiB (384 MiB of
 * IPv4 and 768 MiB of IPv6 entries), five times the 3,000,000 connections of
 * Open vSwitch's own userspace conntrack default: enough for a hypervisor,
 * and no typo can ask for tens of GiB on the first packet.
 *
 * Tables are bounded in number (panda-max-policies, default 8) and in the
 * memory they may take together (panda-max-memory, default 1024 MiB),
 * counted for each table as if both of its address families were full
 * (panda_table_max_bytes()), since it can fill at any time.  The defaults
 * fit: 8 tables and the overflow table of 1048576 connections take 9 x 96
 * MiB.  A policy id beyond either limit shares one overflow table with the
 * other such ids (counters are still per connection; the ids compete for
 * its slots), unless a table idle for the idle timeout can be reclaimed
 * for it first.  Memory is checked against the budget when a table is
 * created; the overflow table always fits, since configuration refuses a
 * budget smaller than one table and own tables leave room for it.
 *
 * DP_PANDA_MAX_IDS bounds the number of policy ids known at all (the few
 * hundred bytes that registered policies take per id): flows with more ids
 * are refused.
 *
 * Allocation.  What configuration or traffic sizes (a table's slots, up to
 * gigabytes) is allocated by lib/panda, which never aborts: a table that
 * cannot be created, or an address family whose slots cannot be allocated
 * (on the first connection that needs them), leaves packets untracked, and
 * counted.  The fixed-size bookkeeping here (an id's state, its registered
 * policies: a few hundred bytes, bounded by DP_PANDA_MAX_IDS) uses Open
 * vSwitch's x-allocators, like the flow table it sits next to: a datapath
 * that cannot get those cannot install a flow either. */
#define DP_PANDA_MAX_CONNECTIONS (1u << 24)
#define DP_PANDA_DEFAULT_POLICIES 8
#define DP_PANDA_MAX_POLICIES 4096
#define DP_PANDA_DEFAULT_MEMORY_MB 1024
#define DP_PANDA_MAX_IDS 65536

/* A policy that a flow put has checked, found again by its wire body. */
struct dp_panda_version {
    size_t body_len;                    /* PANDA_WIRE_LEN unless it has
                                         * rules. */
    uint8_t body[PANDA_WIRE_MAX_LEN];
    struct panda_policy policy;
};

/* True if 'v' has the 'len'-byte wire body 'body'. */
static inline bool
dp_panda_version_is(const struct dp_panda_version *v, const void *body,
                    size_t len)
{
    return v->body_len == len && !memcmp(v->body, body, len);
}

/* The registered policies of one id, the most recently registered first.
 * Never changed once published: a registration publishes a new copy. */
struct dp_panda_versions {
    size_t n;
    struct dp_panda_version v[DP_PANDA_MAX_VERSIONS];
};

/* The state of one policy id. */
struct dp_panda_table {
    struct cmap_node node;      /* In dp_panda's 'tables', by 'id'. */
    uint32_t id;                /* Policy id. */

    /* The connection table: the id's own, or dp_panda's 'overflow'; NULL
     * until the id's first packet, or after a reset or reclaim (attached
     * again by the next packet).  Written under dp_panda's 'mutex'. */
    OVSRCU_TYPE(struct panda_table *) table;
    bool shared;                /* 'table' is the overflow table. */

    /* time_msec() of the last batch, to within a second: an own table
     * unused for the idle timeout may be given to another id. */
    atomic_llong last_used;

    /* Registered policies; NULL until a flow put registers one.  Written
     * under dp_panda's 'mutex'. */
    OVSRCU_TYPE(struct dp_panda_versions *) versions;

    /* Payload-size and flow-size histograms (panda/sizehist.h): the id's
     * own ('hist_own') while it has or has had its own table, dp_panda's
     * 'overflow_hist' while it shares the overflow table, NULL before its
     * first packet.  Every thread counts payloads into them with relaxed
     * atomic adds, no lock; the connection table counts each flow that
     * ends, expires, is evicted or flushed (panda_table_set_flow_hist()).
     * Kept as long as the id keeps its table, so that they bound memory as
     * the tables do (19680 bytes each, panda-max-policies + 1 of them);
     * the id whose idle table is reclaimed loses its counts with it (its
     * connections, silent past the idle timeout, are not counted: flushing
     * the table there would cost a walk of all its slots on the packet
     * path, for a histogram about to be freed).  Written under dp_panda's
     * 'mutex'. */
    OVSRCU_TYPE(struct panda_sizehist *) hist;
    bool hist_own;

    /* Packets per level under a rule kind (app, match, length), which
     * keeps no table to count them in.  Relaxed atomic adds. */
    atomic_ullong rule_packets[PANDA_MAX_LEVELS];

    /* Datapath flows whose actions use the id (dp_panda_flow_ref()), and,
     * while there are none, since when: the id is forgotten a grace period
     * later (dp_panda_run()).  Creating the id or registering a policy for
     * it starts the period again, so that a flow being put finds it.
     * Under dp_panda's 'mutex'. */
    size_t n_flows;
    long long int unused_since;
    bool forgotten;             /* No longer in 'tables': a thread that
                                 * found it before attaches no table. */
};

/* What other_config sets, once validated. */
struct dp_panda_settings {
    struct panda_table_config table;    /* Capacity and idle timeout. */
    unsigned long long int max_policies;
    unsigned long long int max_memory;  /* Bytes. */
};

/* The other_config keys, in the order of their 'enum dp_panda_key'. */
enum dp_panda_key {
    KEY_CONNECTIONS,
    KEY_IDLE_TIMEOUT,
    KEY_POLICIES,
    KEY_MEMORY,
    N_KEYS
};

/* Refusals, by index: one per integer key above, and one of
 * panda-histograms. */
#define REFUSAL_HISTOGRAMS N_KEYS
#define N_REFUSALS (N_KEYS + 1)

/* Panda state of one userspace datapath. */
struct dp_panda {
    struct ovs_list list_node;  /* In 'dp_pandas'. */
    char *name;                 /* Name of the datapath. */

    struct ovs_mutex mutex;     /* Protects the members below and writes to
                                 * 'tables'. */
    struct cmap tables;         /* Contains "struct dp_panda_table"s. */
    size_t n_ids;               /* Entries in 'tables'. */
    struct dp_panda_settings settings;
    uint64_t table_bytes;       /* panda_table_max_bytes() of 'settings'. */
    size_t n_own;               /* Policy ids with their own table. */
    struct panda_table *overflow;   /* Shared by the ids beyond; or NULL. */
    size_t n_shared;            /* Policy ids in 'overflow'. */
    struct panda_sizehist *overflow_hist;   /* The histograms of those ids,
                                             * together; NULL until the
                                             * first is attached. */

    /* other_config:panda-histograms (default true): count payload sizes
     * (dp_panda_execute()).  Read per batch, relaxed. */
    atomic_bool histograms;

    /* The refusal in effect of each other_config key, for panda/show (and
     * so that it is logged once, not at every reconfiguration). */
    struct dp_panda_refusal refused[N_REFUSALS];

    /* When the first policy id that no flow uses (dp_panda_table's
     * 'n_flows' is 0) is due to be forgotten (dp_panda_run()). */
    atomic_llong next_sweep;    /* LLONG_MAX: none. */
};

static struct ovs_mutex dp_pandas_mutex = OVS_MUTEX_INITIALIZER;
static struct ovs_list dp_pandas OVS_GUARDED_BY(dp_pandas_mutex)
    = OVS_LIST_INITIALIZER(&dp_pandas);

static void dp_panda_unixctl_show(struct unixctl_conn *, int argc,
                                  const char *argv[], void *aux);
static void dp_panda_unixctl_flush(struct unixctl_conn *, int argc,
                                   const char *argv[], void *aux);

void
dp_panda_init(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    if (ovsthread_once_start(&once)) {
        unixctl_command_register("panda/show", "[policy-id]", 0, 1,
                                 dp_panda_unixctl_show, NULL);
        unixctl_command_register("panda/flush", "[policy-id]", 0, 1,
                                 dp_panda_unixctl_flush, NULL);
        ovsthread_once_done(&once);
    }
}

static void
dp_panda_default_settings(struct dp_panda_settings *s)
{
    memset(s, 0, sizeof *s);
    s->table.capacity = PANDA_TABLE_DEFAULT_CAPACITY;
    s->table.idle_timeout_ms = PANDA_TABLE_DEFAULT_IDLE_MS;
    s->max_policies = DP_PANDA_DEFAULT_POLICIES;
    s->max_memory = (unsigned long long int) DP_PANDA_DEFAULT_MEMORY_MB
                    << 20;
}

struct dp_panda *
dp_panda_create(const char *dp_name)
{
    struct dp_panda *dp = xzalloc(sizeof *dp);

    dp->name = xstrdup(dp_name);
    ovs_mutex_init(&dp->mutex);
    cmap_init(&dp->tables);
    atomic_init(&dp->histograms, true);
    atomic_init(&dp->next_sweep, LLONG_MAX);
    dp_panda_default_settings(&dp->settings);
    dp->table_bytes = panda_table_max_bytes(&dp->settings.table);

    ovs_mutex_lock(&dp_pandas_mutex);
    ovs_list_push_back(&dp_pandas, &dp->list_node);
    ovs_mutex_unlock(&dp_pandas_mutex);
    return dp;
}

/* Frees 't' and its own table (not the overflow table it may share). */
static void
dp_panda_table_free(struct dp_panda_table *t)
{
    if (!t->shared) {
        panda_table_destroy(ovsrcu_get_protected(struct panda_table *,
                                                 &t->table));
    }
    free(ovsrcu_get_protected(struct dp_panda_versions *, &t->versions));
    if (t->hist_own) {
        free(ovsrcu_get_protected(struct panda_sizehist *, &t->hist));
    }
    free(t);
}

static void
dp_panda_postpone_table_destroy(struct panda_table *table)
{
    if (table) {
        /* Not ovsrcu_postpone(), which needs a complete type. */
        ovsrcu_postpone__((void (*)(void *)) panda_table_destroy, table);
    }
}

void
dp_panda_destroy(struct dp_panda *dp)
{
    struct dp_panda_table *t;
    int i;

    if (!dp) {
        return;
    }

    ovs_mutex_lock(&dp_pandas_mutex);
    ovs_list_remove(&dp->list_node);
    ovs_mutex_unlock(&dp_pandas_mutex);

    ovs_mutex_lock(&dp->mutex);
    CMAP_FOR_EACH (t, node, &dp->tables) {
        cmap_remove(&dp->tables, &t->node, hash_int(t->id, 0));
        ovsrcu_postpone(dp_panda_table_free, t);
    }
    dp_panda_postpone_table_destroy(dp->overflow);
    if (dp->overflow_hist) {
        ovsrcu_postpone(free, dp->overflow_hist);
    }
    for (i = 0; i < N_REFUSALS; i++) {
        dp_panda_refusal_destroy(&dp->refused[i]);
    }
    ovs_mutex_unlock(&dp->mutex);

    ovsrcu_postpone(cmap_destroy, &dp->tables);
    ovsrcu_postpone(free, dp->name);
    ovsrcu_postpone(free, dp);
}

/* Creates a connection table with 'dp''s configuration for 'what' (for
 * the log).  Returns NULL, with a log line, if it cannot. */
static struct panda_table *
dp_panda_new_table(struct dp_panda *dp, const char *what)
    OVS_REQUIRES(dp->mutex)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);
    char *error = NULL;
    struct panda_table *table = panda_table_create(&dp->settings.table,
                                                   &error);

    if (table) {
        COVERAGE_INC(panda_table_created);
    } else {
        VLOG_WARN_RL(&rl, "%s: cannot create the connection table of %s: "
                     "%s", dp->name, what, error ? error : "out of memory");
    }
    free(error);
    return table;
}

/* Lets 'table' count the flows that end in it into 'hist' (the flow
 * histogram, panda_table_set_flow_hist()) while counting is on. */
static void
dp_panda_set_flow_hist(struct dp_panda *dp, struct panda_table *table,
                       struct panda_sizehist *hist)
{
    bool histograms;

    atomic_read_relaxed(&dp->histograms, &histograms);
    panda_table_set_flow_hist(table, histograms ? hist : NULL);
}

/* other_config:panda-histograms changed: every table counts its flows, or
 * none does. */
static void
dp_panda_set_flow_hists(struct dp_panda *dp)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_panda_table *t;

    CMAP_FOR_EACH (t, node, &dp->tables) {
        struct panda_table *table = ovsrcu_get_protected(struct panda_table *,
                                                         &t->table);

        if (table && !t->shared) {
            dp_panda_set_flow_hist(dp, table,
                                   ovsrcu_get_protected(
                                       struct panda_sizehist *, &t->hist));
        }
    }
    if (dp->overflow) {
        dp_panda_set_flow_hist(dp, dp->overflow, dp->overflow_hist);
    }
}

/* Flushes 'table' (if nonnull), which counts its live connections into
 * the flow histogram that it has, and frees it after a grace period.  The
 * few connections that threads still in the table start before then are
 * not counted. */
static void
dp_panda_retire_table(struct panda_table *table)
{
    if (table) {
        panda_table_flush(table);
        dp_panda_postpone_table_destroy(table);
    }
}

/* Forgets every connection table: each id gets one again (its own or the
 * overflow table) with its next packet.  Registered policies are kept, and
 * so are the histograms, where the connections of the tables are counted
 * as finished flows. */
static void
dp_panda_reset_tables(struct dp_panda *dp)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_panda_table *t;

    CMAP_FOR_EACH (t, node, &dp->tables) {
        if (!t->shared) {
            dp_panda_retire_table(
                ovsrcu_get_protected(struct panda_table *, &t->table));
        }
        ovsrcu_set(&t->table, NULL);
        t->shared = false;
    }
    dp_panda_retire_table(dp->overflow);
    dp->overflow = NULL;
    dp->n_own = dp->n_shared = 0;
}

/* ---- Configuration (other_config), checked where it enters. ---- */

struct dp_panda_key_def {
    const char *name;
    const char *unit;           /* For messages. */
    unsigned long long int min, max;
};

/* The largest panda-max-memory: the machine's memory, in MiB. */
static unsigned long long int
dp_panda_max_memory_mb(void)
{
    long long int pages = sysconf(_SC_PHYS_PAGES);
    long long int page_size = sysconf(_SC_PAGESIZE);

    return pages > 0 && page_size > 0 ? (pages * page_size) >> 20 : 1 << 20;
}

static void
dp_panda_key_def(enum dp_panda_key key, struct dp_panda_key_def *def)
{
    switch (key) {
    case KEY_CONNECTIONS:
        *def = (struct dp_panda_key_def) {
            "panda-max-connections", "", 1, DP_PANDA_MAX_CONNECTIONS };
        break;
    case KEY_IDLE_TIMEOUT:
        *def = (struct dp_panda_key_def) {
            "panda-idle-timeout", " ms", 0, PANDA_MAX_DURATION_MS };
        break;
    case KEY_POLICIES:
        *def = (struct dp_panda_key_def) {
            "panda-max-policies", "", 1, DP_PANDA_MAX_POLICIES };
        break;
    case KEY_MEMORY:
        *def = (struct dp_panda_key_def) {
            "panda-max-memory", " MiB", 1, dp_panda_max_memory_mb() };
        break;
    case N_KEYS:
    default:
        OVS_NOT_REACHED();
    }
}

static unsigned long long int
dp_panda_setting(const struct dp_panda_settings *s, enum dp_panda_key key)
{
    switch (key) {
    case KEY_CONNECTIONS:
        return s->table.capacity;
    case KEY_IDLE_TIMEOUT:
        return s->table.idle_timeout_ms;
    case KEY_POLICIES:
        return s->max_policies;
    case KEY_MEMORY:
        return s->max_memory >> 20;
    case N_KEYS:
    default:
        OVS_NOT_REACHED();
    }
}

static void
dp_panda_set_setting(struct dp_panda_settings *s, enum dp_panda_key key,
                     unsigned long long int value)
{
    switch (key) {
    case KEY_CONNECTIONS:
        s->table.capacity = value;
        break;
    case KEY_IDLE_TIMEOUT:
        s->table.idle_timeout_ms = value;
        break;
    case KEY_POLICIES:
        s->max_policies = value;
        break;
    case KEY_MEMORY:
        s->max_memory = value << 20;
        break;
    case N_KEYS:
    default:
        OVS_NOT_REACHED();
    }
}

/* Strict decimal integers: digits alone, no sign, space or suffix, and no
 * wrap (strtoull() would take "-1" as 2^64 - 1 and " 5" as 5). */
static bool
dp_panda_parse_ullong(const char *s, unsigned long long int *value)
{
    return isdigit((unsigned char) s[0]) && str_to_ullong(s, 10, value);
}

unsigned long long int
dp_panda_config_uint(const struct smap *other_config, const char *key,
                     unsigned long long int min, unsigned long long int max,
                     const char *unit, unsigned long long int def,
                     unsigned long long int current, char **msgp)
{
    const char *s = smap_get(other_config, key);
    unsigned long long int value;

    if (!s) {
        return def;
    }
    if (!dp_panda_parse_ullong(s, &value) || value < min || value > max) {
        *msgp = xasprintf("other_config:%s=\"%s\": not an integer from %llu"
                          " to %llu%s; keeping %llu%s", key, s, min, max,
                          unit, current, unit);
        return current;
    }
    return value;
}

bool
dp_panda_config_bool(const struct smap *other_config, const char *key,
                     bool def, bool current, char **msgp)
{
    const char *s = smap_get(other_config, key);

    if (!s) {
        return def;
    } else if (!strcmp(s, "true") || !strcmp(s, "false")) {
        return s[0] == 't';
    }
    *msgp = xasprintf("other_config:%s=\"%s\": not \"true\" or \"false\";"
                      " keeping %s", key, s, current ? "true" : "false");
    return current;
}

void
dp_panda_refusal_update(struct dp_panda_refusal *r, const char *dp_name,
                        char *msg)
{
    if (msg && !nullable_string_is_equal(msg, r->msg)) {
        VLOG_WARN("%s: %s", dp_name, msg);
    }
    free(r->msg);
    r->msg = msg;
}

void
dp_panda_refusal_destroy(struct dp_panda_refusal *r)
{
    free(r->msg);
    r->msg = NULL;
}

/* A refusal message for key 'key' of 'dp', whose value 'value' is refused
 * for 'problem': what it keeps is its current setting. */
static char * OVS_PRINTF_FORMAT(4, 5)
dp_panda_refusal_msg(const struct dp_panda *dp, enum dp_panda_key key,
                     const char *value, const char *problem, ...)
{
    struct dp_panda_key_def def;
    struct ds msg = DS_EMPTY_INITIALIZER;
    va_list args;

    dp_panda_key_def(key, &def);
    ds_put_format(&msg, "other_config:%s=\"%s\": ", def.name, value);
    va_start(args, problem);
    ds_put_format_valist(&msg, problem, args);
    va_end(args);
    ds_put_format(&msg, "; keeping %llu%s",
                  dp_panda_setting(&dp->settings, key), def.unit);
    return ds_steal_cstr(&msg);
}

/* Reads key 'key' of 'other_config' into 'new': its default if it is not
 * set, the value if it is an integer in range, otherwise the current
 * setting, with the refusal in 'msgs[key]'. */
static void
dp_panda_read_key(const struct dp_panda *dp, const struct smap *other_config,
                  enum dp_panda_key key, struct dp_panda_settings *new,
                  char **msgs)
{
    struct dp_panda_settings defaults;
    struct dp_panda_key_def def;

    dp_panda_key_def(key, &def);
    dp_panda_default_settings(&defaults);
    dp_panda_set_setting(new, key,
                         dp_panda_config_uint(
                             other_config, def.name, def.min, def.max,
                             def.unit, dp_panda_setting(&defaults, key),
                             dp_panda_setting(&dp->settings, key),
                             &msgs[key]));
}

/* The value of 'key' in 'other_config' as written, or if it is not set,
 * "default N", for messages.  Returns 'buf' or the string in the map. */
static const char *
dp_panda_key_text(const struct smap *other_config, enum dp_panda_key key,
                  char *buf, size_t size)
{
    struct dp_panda_settings defaults;
    struct dp_panda_key_def def;
    const char *s;

    dp_panda_key_def(key, &def);
    s = smap_get(other_config, def.name);
    if (!s) {
        dp_panda_default_settings(&defaults);
        snprintf(buf, size, "default %llu",
                 dp_panda_setting(&defaults, key));
        s = buf;
    }
    return s;
}

static bool
dp_panda_settings_equal(const struct dp_panda_settings *a,
                        const struct dp_panda_settings *b)
{
    int key;

    for (key = 0; key < N_KEYS; key++) {
        if (dp_panda_setting(a, key) != dp_panda_setting(b, key)) {
            return false;
        }
    }
    return true;
}

/* Applies other_config:panda-max-connections, panda-idle-timeout,
 * panda-max-policies, panda-max-memory and panda-histograms.  Each is
 * checked here, once (dpif-netdev-panda.h, "Datapath other_config keys"):
 * a value that is not one the key takes, or a memory budget that cannot
 * hold one table of that many connections, is refused and the key keeps
 * its setting; 'ovs-appctl panda/show' lists the refusals in effect.
 * (dpif-netdev has no path to a status column in the database, and its
 * other settings report the same way: a log line, and the effective value
 * in an ovs-appctl command.)
 *
 * The connection tables are sized when they are created, so any change
 * forgets them (their counters are lost, their connections counted as
 * finished flows); registered policies are kept. */
void
dp_panda_set_config(struct dp_panda *dp, const struct smap *other_config)
{
    char *msgs[N_REFUSALS] = { NULL };
    struct dp_panda_settings new;
    bool histograms, old_histograms;
    uint64_t bytes;
    char buf[64];
    int key;

    ovs_mutex_lock(&dp->mutex);
    atomic_read_relaxed(&dp->histograms, &old_histograms);
    histograms = dp_panda_config_bool(other_config, "panda-histograms", true,
                                      old_histograms,
                                      &msgs[REFUSAL_HISTOGRAMS]);
    atomic_store_relaxed(&dp->histograms, histograms);
    if (histograms != old_histograms) {
        dp_panda_set_flow_hists(dp);
    }

    new = dp->settings;
    for (key = 0; key < N_KEYS; key++) {
        dp_panda_read_key(dp, other_config, key, &new, msgs);
    }

    /* The budget must hold at least one table (the overflow table).  A
     * budget too small for the table size: refuse the key that changed,
     * the budget first. */
    bytes = panda_table_max_bytes(&new.table);
    if (bytes > new.max_memory && new.max_memory != dp->settings.max_memory) {
        free(msgs[KEY_MEMORY]);
        msgs[KEY_MEMORY] = dp_panda_refusal_msg(
            dp, KEY_MEMORY,
            dp_panda_key_text(other_config, KEY_MEMORY, buf, sizeof buf),
            "cannot hold one connection table of %"PRIu32" connections (%"
            PRIu64" MiB: %"PRIuSIZE" bytes per IPv4 and %"PRIuSIZE" per IPv6"
            " connection)", new.table.capacity, (bytes + (1 << 20) - 1) >> 20,
            panda_table_entry_size(4), panda_table_entry_size(6));
        new.max_memory = dp->settings.max_memory;
    }
    bytes = panda_table_max_bytes(&new.table);
    if (bytes > new.max_memory) {
        free(msgs[KEY_CONNECTIONS]);
        msgs[KEY_CONNECTIONS] = dp_panda_refusal_msg(
            dp, KEY_CONNECTIONS,
            dp_panda_key_text(other_config, KEY_CONNECTIONS, buf, sizeof buf),
            "a table of that many connections (%"PRIu64" MiB) does not fit"
            " in other_config:panda-max-memory (%llu MiB)",
            (bytes + (1 << 20) - 1) >> 20, new.max_memory >> 20);
        new.table.capacity = dp->settings.table.capacity;
    }
    for (key = 0; key < N_REFUSALS; key++) {
        dp_panda_refusal_update(&dp->refused[key], dp->name, msgs[key]);
    }

    if (!dp_panda_settings_equal(&new, &dp->settings)) {
        dp->settings = new;
        dp->table_bytes = panda_table_max_bytes(&new.table);
        if (!cmap_is_empty(&dp->tables)) {
            VLOG_INFO("%s: panda connection tables reset for new "
                      "configuration (%"PRIu32" connections, idle timeout "
                      "%"PRIu64" ms, %llu policies, %llu MiB)", dp->name,
                      new.table.capacity, new.table.idle_timeout_ms,
                      new.max_policies, new.max_memory >> 20);
        }
        dp_panda_reset_tables(dp);
    }
    ovs_mutex_unlock(&dp->mutex);
}

/* ---- Policy ids and their tables. ---- */

static struct dp_panda_table *
dp_panda_lookup(const struct dp_panda *dp, uint32_t id)
{
    struct dp_panda_table *t;

    CMAP_FOR_EACH_WITH_HASH (t, node, hash_int(id, 0), &dp->tables) {
        if (t->id == id) {
            return t;
        }
    }
    return NULL;
}

/* How long a policy id that no flow uses is kept: its connections' idle
 * timeout, as long as their counters would live without packets, but at
 * least DP_PANDA_MIN_GRACE_MS: a flow put registers its ids before the
 * flow is created, and the id must still be there then. */
#define DP_PANDA_MIN_GRACE_MS 10000
static long long int
dp_panda_grace_ms(const struct dp_panda *dp)
    OVS_REQUIRES(dp->mutex)
{
    long long int idle = (dp->settings.table.idle_timeout_ms
                          ? dp->settings.table.idle_timeout_ms
                          : PANDA_TABLE_DEFAULT_IDLE_MS);

    return MAX(idle, DP_PANDA_MIN_GRACE_MS);
}

/* Starts the grace period of 't' again, if no flow uses it. */
static void
dp_panda_touch(struct dp_panda *dp, struct dp_panda_table *t)
    OVS_REQUIRES(dp->mutex)
{
    if (!t->n_flows) {
        long long int next;

        t->unused_since = time_msec();
        atomic_read_relaxed(&dp->next_sweep, &next);
        next = MIN(next, t->unused_since + dp_panda_grace_ms(dp));
        atomic_store_relaxed(&dp->next_sweep, next);
    }
}

/* Returns the state of policy 'id', created (without a table) if needed,
 * or NULL if there are DP_PANDA_MAX_IDS ids already. */
static struct dp_panda_table *
dp_panda_get_id(struct dp_panda *dp, uint32_t id)
    OVS_REQUIRES(dp->mutex)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);
    struct dp_panda_table *t = dp_panda_lookup(dp, id);
    int i;

    if (t) {
        return t;
    }
    if (dp->n_ids >= DP_PANDA_MAX_IDS) {
        COVERAGE_INC(panda_too_many_ids);
        VLOG_WARN_RL(&rl, "%s: panda policy %"PRIu32" refused: %d policy "
                     "ids are in use already", dp->name, id,
                     DP_PANDA_MAX_IDS);
        return NULL;
    }
    t = xzalloc(sizeof *t);
    t->id = id;
    ovsrcu_init(&t->table, NULL);
    atomic_init(&t->last_used, time_msec());
    ovsrcu_init(&t->versions, NULL);
    ovsrcu_init(&t->hist, NULL);
    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        atomic_init(&t->rule_packets[i], 0);
    }
    t->n_flows = 0;
    dp_panda_touch(dp, t);
    cmap_insert(&dp->tables, &t->node, hash_int(id, 0));
    dp->n_ids++;
    return t;
}

/* How many ids may have their own table: panda-max-policies, and what the
 * memory budget holds besides the overflow table. */
static size_t
dp_panda_own_limit(const struct dp_panda *dp)
    OVS_REQUIRES(dp->mutex)
{
    uint64_t fit = dp->settings.max_memory / dp->table_bytes;

    fit = fit ? fit - 1 : 0;
    return MIN(dp->settings.max_policies, fit);
}

/* Takes the own table of the id that has used its table least recently,
 * if that was longer ago than the idle timeout (all its connections have
 * expired); returns true if it did. */
static bool
dp_panda_reclaim(struct dp_panda *dp, uint32_t for_id)
    OVS_REQUIRES(dp->mutex)
{
    long long int now = time_msec(), oldest = LLONG_MAX;
    struct dp_panda_table *t, *victim = NULL;

    if (!dp->settings.table.idle_timeout_ms) {
        return false;
    }
    CMAP_FOR_EACH (t, node, &dp->tables) {
        long long int used;

        atomic_read_relaxed(&t->last_used, &used);
        if (!t->shared && ovsrcu_get_protected(struct panda_table *,
                                               &t->table)
            && used < oldest) {
            oldest = used;
            victim = t;
        }
    }
    if (!victim
        || now - oldest <= (long long int) dp->settings.table.idle_timeout_ms
                           + 1000) {
        return false;
    }
    VLOG_INFO("%s: panda policy %"PRIu32" unused for %lld ms: its "
              "connection table goes to policy %"PRIu32, dp->name,
              victim->id, now - oldest, for_id);
    COVERAGE_INC(panda_table_reclaimed);
    dp_panda_postpone_table_destroy(
        ovsrcu_get_protected(struct panda_table *, &victim->table));
    ovsrcu_set(&victim->table, NULL);
    if (victim->hist_own) {
        ovsrcu_postpone(free, ovsrcu_get_protected(struct panda_sizehist *,
                                                   &victim->hist));
        ovsrcu_set(&victim->hist, NULL);
        victim->hist_own = false;
    }
    dp->n_own--;
    return true;
}

/* Gives 't', attached to 'table', histograms of its own ('own') or the
 * overflow histograms, and 'table' the flow histogram of those. */
static void
dp_panda_attach_hist(struct dp_panda *dp, struct dp_panda_table *t,
                     struct panda_table *table, bool own)
    OVS_REQUIRES(dp->mutex)
{
    struct panda_sizehist *old = ovsrcu_get_protected(struct panda_sizehist *,
                                                      &t->hist);

    if (own && !t->hist_own) {
        ovsrcu_set(&t->hist, xzalloc(sizeof *old));
        t->hist_own = true;
    } else if (!own) {
        if (!dp->overflow_hist) {
            dp->overflow_hist = xzalloc(sizeof *dp->overflow_hist);
        }
        if (t->hist_own) {
            ovsrcu_postpone(free, old);
            t->hist_own = false;
        }
        ovsrcu_set(&t->hist, dp->overflow_hist);
    }
    dp_panda_set_flow_hist(dp, table,
                           ovsrcu_get_protected(struct panda_sizehist *,
                                                &t->hist));
}

/* Gives 't', which has no table, one: its own if the limits allow (after
 * reclaiming an idle one if needed), else the overflow table.  Returns the
 * table or NULL (no memory, logged). */
static struct panda_table *
dp_panda_attach(struct dp_panda *dp, struct dp_panda_table *t)
    OVS_REQUIRES(dp->mutex)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);
    struct panda_table *table;
    char what[64];

    if (dp->n_own < dp_panda_own_limit(dp)
        || (dp_panda_own_limit(dp) && dp_panda_reclaim(dp, t->id))) {
        snprintf(what, sizeof what, "panda policy %"PRIu32, t->id);
        table = dp_panda_new_table(dp, what);
        if (table) {
            dp->n_own++;
            t->shared = false;
            dp_panda_attach_hist(dp, t, table, true);
            ovsrcu_set(&t->table, table);
        }
        return table;
    }

    if (!dp->overflow) {
        dp->overflow = dp_panda_new_table(dp, "the panda overflow table");
        if (!dp->overflow) {
            return NULL;
        }
    }
    VLOG_WARN_RL(&rl, "%s: panda policy %"PRIu32" shares the overflow "
                 "connection table: %"PRIuSIZE" policy ids have their own "
                 "(other_config:panda-max-policies=%llu, panda-max-memory="
                 "%llu MiB holds %"PRIu64" tables of %"PRIu64" MiB with the "
                 "overflow table)", dp->name, t->id, dp->n_own,
                 dp->settings.max_policies, dp->settings.max_memory >> 20,
                 (uint64_t) (dp->settings.max_memory / dp->table_bytes),
                 (dp->table_bytes + (1 << 20) - 1) >> 20);
    COVERAGE_INC(panda_table_shared);
    dp->n_shared++;
    t->shared = true;
    dp_panda_attach_hist(dp, t, dp->overflow, false);
    ovsrcu_set(&t->table, dp->overflow);
    return dp->overflow;
}

/* Returns the connection table of 't', attaching one if it has none, or
 * NULL.  Notes the time of use. */
static struct panda_table *
dp_panda_get_table(struct dp_panda *dp, struct dp_panda_table *t,
                   long long int now_ms)
{
    struct panda_table *table = ovsrcu_get(struct panda_table *, &t->table);
    long long int used;

    atomic_read_relaxed(&t->last_used, &used);
    if (OVS_UNLIKELY(now_ms - used >= 1000)) {
        atomic_store_relaxed(&t->last_used, now_ms);
    }
    if (OVS_UNLIKELY(!table)) {
        ovs_mutex_lock(&dp->mutex);
        table = ovsrcu_get_protected(struct panda_table *, &t->table);
        if (!table && !t->forgotten) {
            table = dp_panda_attach(dp, t);
        }
        ovs_mutex_unlock(&dp->mutex);
    }
    return table;
}

/* Makes the policy in 'body' (already checked, decoded in 'policy') the
 * most recently registered one of 't'. */
static void
dp_panda_register(struct dp_panda_table *t, const uint8_t *body,
                  size_t len, const struct panda_policy *policy)
{
    struct dp_panda_versions *old, *new;
    size_t i;

    old = ovsrcu_get_protected(struct dp_panda_versions *, &t->versions);
    if (old && old->n && dp_panda_version_is(&old->v[0], body, len)) {
        return;                 /* Already the latest: nothing to publish. */
    }

    new = xmalloc(sizeof *new);
    memcpy(new->v[0].body, body, len);
    new->v[0].body_len = len;
    new->v[0].policy = *policy;
    new->n = 1;
    for (i = 0; old && i < old->n && new->n < DP_PANDA_MAX_VERSIONS; i++) {
        if (!dp_panda_version_is(&old->v[i], body, len)) {
            new->v[new->n++] = old->v[i];
        }
    }
    ovsrcu_set(&t->versions, new);
    if (old) {
        ovsrcu_postpone(free, old);
    }
}

/* Checks the panda action 'a' of a flow being put and, unless 'probe',
 * registers its policy.  Returns 0 or a positive errno value, with a log
 * line naming the problem. */
static int
dp_panda_put_action(struct dp_panda *dp, const struct nlattr *a, bool probe)
    OVS_REQUIRES(dp->mutex)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);
    char msg[PANDA_WIRE_MSG_SIZE];
    struct panda_policy policy;
    struct dp_panda_table *t;

    if (panda_wire_decode(nl_attr_get(a), nl_attr_get_size(a), &policy,
                          msg)) {
        VLOG_WARN_RL(&rl, "%s: flow refused: panda: %s", dp->name, msg);
        return EINVAL;
    }
    if (probe) {
        return 0;
    }
    t = dp_panda_get_id(dp, policy.id);
    if (!t) {
        return ENOSPC;
    }
    dp_panda_register(t, nl_attr_get(a), nl_attr_get_size(a), &policy);
    dp_panda_touch(dp, t);
    return 0;
}

static int
dp_panda_put_actions(struct dp_panda *dp, const struct nlattr *actions,
                     size_t actions_len, bool probe)
    OVS_REQUIRES(dp->mutex)
{
    const struct nlattr *a, *nested;
    size_t left, nleft;
    int error = 0;

    NL_ATTR_FOR_EACH (a, left, actions, actions_len) {
        switch (nl_attr_type(a)) {
        case OVS_ACTION_ATTR_PANDA:
            error = dp_panda_put_action(dp, a, probe);
            break;

        case OVS_ACTION_ATTR_CLONE:
            error = dp_panda_put_actions(dp, nl_attr_get(a),
                                         nl_attr_get_size(a), probe);
            break;

        case OVS_ACTION_ATTR_SAMPLE:
            nested = nl_attr_find_nested(a, OVS_SAMPLE_ATTR_ACTIONS);
            if (nested) {
                error = dp_panda_put_actions(dp, nl_attr_get(nested),
                                             nl_attr_get_size(nested),
                                             probe);
            }
            break;

        case OVS_ACTION_ATTR_CHECK_PKT_LEN:
            NL_NESTED_FOR_EACH (nested, nleft, a) {
                uint16_t type = nl_attr_type(nested);

                if (!error
                    && (type == OVS_CHECK_PKT_LEN_ATTR_ACTIONS_IF_GREATER
                        || type
                           == OVS_CHECK_PKT_LEN_ATTR_ACTIONS_IF_LESS_EQUAL)) {
                    error = dp_panda_put_actions(dp, nl_attr_get(nested),
                                                 nl_attr_get_size(nested),
                                                 probe);
                }
            }
            break;

        default:
            break;
        }
        if (error) {
            return error;
        }
    }
    return 0;
}

int
dp_panda_flow_put(struct dp_panda *dp, const struct nlattr *actions,
                  size_t actions_len, bool probe)
{
    int error;

    ovs_mutex_lock(&dp->mutex);
    error = dp_panda_put_actions(dp, actions, actions_len, probe);
    ovs_mutex_unlock(&dp->mutex);
    return error;
}

/* Flows per policy id. */

/* Adds 'delta' to the flows of the id of the panda action 'a'. */
static void
dp_panda_ref_action(struct dp_panda *dp, const struct nlattr *a, int delta)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_panda_table *t;

    if (nl_attr_get_size(a) < PANDA_WIRE_LEN) {
        return;                 /* Malformed: the put refused it. */
    }
    t = dp_panda_lookup(dp, panda_wire_id(nl_attr_get(a)));
    if (!t || (delta < 0 && !t->n_flows)) {
        /* A probe's flow, whose put registers nothing, so that a feature
         * probe leaves no id behind.  (The put of any other flow has just
         * registered its id, and the grace period, at least
         * DP_PANDA_MIN_GRACE_MS, keeps it until the flow is created.) */
        return;
    }
    t->n_flows += delta;
    if (!t->n_flows) {
        dp_panda_touch(dp, t);
    }
}

/* Calls dp_panda_ref_action() on every panda action in 'actions' (inside
 * clone, sample and check_pkt_len too). */
static void
dp_panda_ref_actions(struct dp_panda *dp, const struct nlattr *actions,
                     size_t actions_len, int delta)
    OVS_REQUIRES(dp->mutex)
{
    const struct nlattr *a, *nested;
    size_t left, nleft;

    NL_ATTR_FOR_EACH (a, left, actions, actions_len) {
        switch (nl_attr_type(a)) {
        case OVS_ACTION_ATTR_PANDA:
            dp_panda_ref_action(dp, a, delta);
            break;

        case OVS_ACTION_ATTR_CLONE:
            dp_panda_ref_actions(dp, nl_attr_get(a), nl_attr_get_size(a),
                                 delta);
            break;

        case OVS_ACTION_ATTR_SAMPLE:
            nested = nl_attr_find_nested(a, OVS_SAMPLE_ATTR_ACTIONS);
            if (nested) {
                dp_panda_ref_actions(dp, nl_attr_get(nested),
                                     nl_attr_get_size(nested), delta);
            }
            break;

        case OVS_ACTION_ATTR_CHECK_PKT_LEN:
            NL_NESTED_FOR_EACH (nested, nleft, a) {
                uint16_t type = nl_attr_type(nested);

                if (type == OVS_CHECK_PKT_LEN_ATTR_ACTIONS_IF_GREATER
                    || type == OVS_CHECK_PKT_LEN_ATTR_ACTIONS_IF_LESS_EQUAL) {
                    dp_panda_ref_actions(dp, nl_attr_get(nested),
                                         nl_attr_get_size(nested), delta);
                }
            }
            break;

        default:
            break;
        }
    }
}

/* True if 'actions' may hold a panda action: one of its own, or nested
 * actions, which dp_panda_ref_actions() looks into. */
static bool
dp_panda_may_have_action(const struct nlattr *actions, size_t actions_len)
{
    const struct nlattr *a;
    size_t left;

    NL_ATTR_FOR_EACH (a, left, actions, actions_len) {
        switch (nl_attr_type(a)) {
        case OVS_ACTION_ATTR_PANDA:
        case OVS_ACTION_ATTR_CLONE:
        case OVS_ACTION_ATTR_SAMPLE:
        case OVS_ACTION_ATTR_CHECK_PKT_LEN:
            return true;
        default:
            break;
        }
    }
    return false;
}

void
dp_panda_flow_ref(struct dp_panda *dp, const struct nlattr *actions,
                  size_t actions_len, int delta)
{
    /* Flows without a panda action, most of a datapath's flows where
     * Panda is not in use, take no lock. */
    if (dp_panda_may_have_action(actions, actions_len)) {
        ovs_mutex_lock(&dp->mutex);
        dp_panda_ref_actions(dp, actions, actions_len, delta);
        ovs_mutex_unlock(&dp->mutex);
    }
}

/* Forgets 't', which no flow uses.  Threads that found it before keep
 * using it until they quiesce. */
static void
dp_panda_forget(struct dp_panda *dp, struct dp_panda_table *t)
    OVS_REQUIRES(dp->mutex)
{
    if (ovsrcu_get_protected(struct panda_table *, &t->table)) {
        if (t->shared) {
            dp->n_shared--;
        } else {
            dp->n_own--;
        }
    }
    t->forgotten = true;
    cmap_remove(&dp->tables, &t->node, hash_int(t->id, 0));
    ovsrcu_postpone(dp_panda_table_free, t);
    dp->n_ids--;
    COVERAGE_INC(panda_id_forgotten);
}

void
dp_panda_run(struct dp_panda *dp)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);
    long long int now = time_msec(), next;
    struct dp_panda_table *t;
    long long int grace;
    size_t n = 0;

    atomic_read_relaxed(&dp->next_sweep, &next);
    if (now < next) {
        return;
    }
    ovs_mutex_lock(&dp->mutex);
    grace = dp_panda_grace_ms(dp);
    next = LLONG_MAX;
    CMAP_FOR_EACH (t, node, &dp->tables) {
        if (t->n_flows) {
            continue;
        }
        if (now - t->unused_since >= grace) {
            dp_panda_forget(dp, t);
            n++;
        } else {
            next = MIN(next, t->unused_since + grace);
        }
    }
    atomic_store_relaxed(&dp->next_sweep, next);
    if (n) {
        VLOG_INFO_RL(&rl, "%s: %"PRIuSIZE" panda policy ids forgotten: no "
                     "flow used them for %lld ms", dp->name, n, grace);
    }
    ovs_mutex_unlock(&dp->mutex);
}

void
dp_panda_wait(struct dp_panda *dp)
{
    long long int next;

    atomic_read_relaxed(&dp->next_sweep, &next);
    if (next != LLONG_MAX) {
        poll_timer_wait_until(next);
    }
}

/* Returns the registered policy of 't' whose wire body is 'body', or NULL.
 * Normally there is one, the first. */
static const struct panda_policy *
dp_panda_find_version(const struct dp_panda_table *t, const void *body,
                      size_t len)
{
    const struct dp_panda_versions *vs;
    size_t i;

    vs = ovsrcu_get(struct dp_panda_versions *, &t->versions);
    for (i = 0; vs && i < vs->n; i++) {
        if (dp_panda_version_is(&vs->v[i], body, len)) {
            return &vs->v[i].policy;
        }
    }
    return NULL;
}

/* The slow path of dp_panda_execute(): an action that no flow put
 * registered (dpctl/execute, packet-out, a flow whose policy has been
 * forgotten).  Checks it into '*policy' and finds or creates its state in
 * '*tp' (NULL if it cannot: the packets are then untracked).  Returns false
 * if the batch must be left alone (a malformed action). */
static bool
dp_panda_check_unregistered(struct dp_panda *dp, const struct nlattr *a,
                            size_t n_packets, struct panda_policy *policy,
                            struct dp_panda_table **tp)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);
    char msg[PANDA_WIRE_MSG_SIZE];

    COVERAGE_INC(panda_unregistered);
    if (panda_wire_decode(nl_attr_get(a), nl_attr_get_size(a), policy,
                          msg)) {
        VLOG_WARN_RL(&rl, "%s: malformed panda action (%s), packets "
                     "forwarded unchanged", dp->name, msg);
        COVERAGE_ADD(panda_bad_action, n_packets);
        return false;
    }
    *tp = dp_panda_lookup(dp, policy->id);
    if (!*tp) {
        ovs_mutex_lock(&dp->mutex);
        *tp = dp_panda_get_id(dp, policy->id);
        ovs_mutex_unlock(&dp->mutex);
    }
    return true;
}

/* Ethertype of the L3 header of 'packet', or 0 if it has none that the
 * panda action may rewrite (e.g. it is inside MPLS). */
static ovs_be16
dp_panda_l3_type(const struct dp_packet *packet)
{
    if (packet->l3_ofs == UINT16_MAX || packet->l2_5_ofs != UINT16_MAX) {
        return 0;
    }
    if (dp_packet_is_eth(packet)) {
        ovs_be16 type;

        if (packet->l3_ofs < ETH_HEADER_LEN) {
            return 0;
        }
        /* The Ethertype just before the L3 header (after any VLANs). */
        memcpy(&type, (const char *) dp_packet_data(packet)
                      + packet->l3_ofs - sizeof type, sizeof type);
        return type;
    }
    return pt_ns_type_be(packet->packet_type);
}

/* Points 'pkt' at the first bytes of the 'len'-byte payload at 'data', for
 * the policies' keyword rules, which look at PANDA_MAX_KEYWORD bytes at
 * most. */
static void
dp_panda_set_payload(struct panda_pkt *pkt, const void *data, size_t len)
{
    pkt->payload = len;
    pkt->data = len ? data : NULL;
    pkt->data_len = MIN(len, PANDA_MAX_KEYWORD);
}

/* Fills in the transport part of 'pkt' from the TCP header of 'packet', if
 * it has a complete one. */
static void
dp_panda_extract_tcp(const struct dp_packet *packet, struct panda_pkt *pkt)
{
    const struct tcp_header *tcp = dp_packet_l4(packet);
    size_t l4_size = dp_packet_l4_size(packet);
    size_t hdr_len;

    if (!tcp || l4_size < TCP_HEADER_LEN) {
        pkt->proto = 0;         /* Treated like a non-TCP packet. */
        return;
    }
    hdr_len = TCP_OFFSET(tcp->tcp_ctl) * 4;
    /* IP header, options and extension headers included. */
    pkt->hdr_len = ((const char *) tcp - (const char *) dp_packet_l3(packet)
                    + hdr_len);
    pkt->sport = tcp->tcp_src;
    pkt->dport = tcp->tcp_dst;
    pkt->tcp_flags = TCP_FLAGS(tcp->tcp_ctl) & 0xff;
    if (l4_size > hdr_len) {
        dp_panda_set_payload(pkt, (const char *) tcp + hdr_len,
                             l4_size - hdr_len);
    }
}

/* Fills in the payload of the UDP datagram 'packet', for the rules of the
 * policies (heartbeats and requests are often UDP); UDP keeps no
 * connection state. */
static void
dp_panda_extract_udp(const struct dp_packet *packet, struct panda_pkt *pkt)
{
    const struct udp_header *udp = dp_packet_l4(packet);
    size_t l4_size = dp_packet_l4_size(packet);

    if (udp && l4_size > UDP_HEADER_LEN) {
        pkt->sport = udp->udp_src;
        pkt->dport = udp->udp_dst;
        dp_panda_set_payload(pkt, udp + 1, l4_size - UDP_HEADER_LEN);
    }
}

/* Extracts what the classifier needs from 'packet' into 'pkt'.  Returns the
 * packet's IP header, or NULL if it is not an IP packet. */
static void *
dp_panda_extract(struct dp_packet *packet, struct panda_pkt *pkt)
{
    ovs_be16 l3_type;
    size_t l3_size;
    void *l3;

    if (packet->l3_ofs == UINT16_MAX && dp_packet_is_eth(packet)
        && dp_packet_size(packet) >= ETH_HEADER_LEN) {
        /* Not parsed yet (e.g. the packet took the datapath's simple-match
         * fast path): parse_tcp_flags() sets the L3 and L4 offsets. */
        parse_tcp_flags(packet, NULL, NULL, NULL);
    }

    l3_type = dp_panda_l3_type(packet);
    l3 = dp_packet_l3(packet);
    l3_size = l3 ? dp_packet_l3_size(packet) : 0;
    memset(pkt, 0, sizeof *pkt);

    if (l3_type == htons(ETH_TYPE_IP)) {
        struct ip_header *nh = l3;

        if (l3_size < IP_HEADER_LEN || IP_VER(nh->ip_ihl_ver) != 4) {
            return NULL;
        }
        pkt->family = 4;
        pkt->src.v4 = get_16aligned_be32(&nh->ip_src);
        pkt->dst.v4 = get_16aligned_be32(&nh->ip_dst);
        pkt->proto = nh->ip_proto;
        pkt->dscp = (nh->ip_tos & IP_DSCP_MASK) >> 2;
        if (nh->ip_frag_off & htons(IP_FRAG_OFF_MASK)) {
            pkt->proto = 0;     /* A later fragment: no L4 header. */
        } else if (pkt->proto == IPPROTO_TCP) {
            dp_panda_extract_tcp(packet, pkt);
        } else if (pkt->proto == IPPROTO_UDP) {
            dp_panda_extract_udp(packet, pkt);
        }
        return nh;
    } else if (l3_type == htons(ETH_TYPE_IPV6)) {
        struct ovs_16aligned_ip6_hdr *nh = l3;

        if (l3_size < IPV6_HEADER_LEN) {
            return NULL;
        }
        pkt->family = 6;
        memcpy(pkt->src.v6, &nh->ip6_src, sizeof pkt->src.v6);
        memcpy(pkt->dst.v6, &nh->ip6_dst, sizeof pkt->dst.v6);
        pkt->proto = nh->ip6_nxt;
        pkt->dscp = (ntohl(get_16aligned_be32(&nh->ip6_flow)) >> 22) & 0x3f;
        if (pkt->proto != IPPROTO_TCP) {
            const struct ovs_16aligned_ip6_frag *frag_hdr;
            const void *data = nh + 1;
            size_t size = l3_size - IPV6_HEADER_LEN;
            uint8_t nw_frag = 0;

            if (!parse_ipv6_ext_hdrs(&data, &size, &pkt->proto, &nw_frag,
                                     &frag_hdr)
                || nw_frag & FLOW_NW_FRAG_LATER) {
                pkt->proto = 0;
            }
        }
        if (pkt->proto == IPPROTO_TCP) {
            dp_panda_extract_tcp(packet, pkt);
        } else if (pkt->proto == IPPROTO_UDP) {
            dp_panda_extract_udp(packet, pkt);
        }
        return nh;
    }
    return NULL;
}

/* Writes 'dscp' into the IP header 'nh' ('family' 4 or 6), keeping ECN.
 * The header need not be the packet's L3 header (it may be the inner one of
 * a tunnelled packet), so this writes it directly.  An IPv4 header's own
 * checksum absorbs the change, so a checksum over the whole header (an
 * outer UDP one) stays right; for IPv6, '*l4_csum' (an outer UDP checksum,
 * if not NULL and in use) is updated. */
static void
dp_panda_set_dscp(void *nh, int family, uint8_t dscp, ovs_be16 *l4_csum)
{
    if (family == 4) {
        struct ip_header *ip = nh;
        uint8_t tos = panda_pkt_tos_set_dscp(ip->ip_tos, dscp);

        if (tos != ip->ip_tos) {
            ip->ip_csum = recalc_csum16(ip->ip_csum, htons(ip->ip_tos),
                                        htons(tos));
            ip->ip_tos = tos;
        }
    } else {
        struct ovs_16aligned_ip6_hdr *ip6 = nh;
        ovs_be32 old = get_16aligned_be32(&ip6->ip6_flow);
        uint32_t flow = ntohl(old);
        uint8_t tc = panda_pkt_tos_set_dscp((flow >> 20) & 0xff, dscp);

        flow = (flow & ~(UINT32_C(0xff) << 20)) | ((uint32_t) tc << 20);
        put_16aligned_be32(&ip6->ip6_flow, htonl(flow));
        if (l4_csum && *l4_csum) {
            *l4_csum = recalc_csum32(*l4_csum, old, htonl(flow));
        }
    }
}

/* Tunnels.
 *
 * Behind a Geneve or VXLAN tunnel every connection of the VMs shares the
 * outer addresses and protocol, so the panda action, run after the tunnel
 * header is pushed (in the flows of the bridge that carries the tunnel's
 * underlay), looks into the packet: it classifies by the inner connection
 * and writes the level's DSCP into the inner and the outer IP header.  It
 * does so only for the tunnels that the policy declares ('tunnels' of
 * struct panda_policy): a port and a valid-looking header are no proof of
 * a tunnel (any sender can make them up, with the inner tuple of a small
 * connection), so the operator declares where the packets are this host's
 * own tunnels -- the flow's match, e.g. in_port=LOCAL on the underlay
 * bridge -- and everywhere else a Geneve or VXLAN datagram is UDP.  A
 * tunnel is recognised by the IANA destination port of its outer UDP header
 * and a valid header (Ethernet payload); a tunnel configured with another
 * dst_port is classified by its outer header. */

/* Where the level of a packet is written. */
struct dp_panda_marks {
    void *nh;                   /* IP header classified, NULL if none. */
    void *outer_nh;             /* Outer IP header of a tunnel, or NULL. */
    ovs_be16 *udp_csum;         /* Its UDP checksum (if 'outer_nh'). */
    uint8_t outer_family;
};

/* Returns the length of the tunnel header at 'p' ('size' bytes follow the
 * outer UDP header) if the UDP destination port 'dport' is that of a tunnel
 * in 'tunnels' (a policy's declaration) and the header says an Ethernet
 * frame follows, else 0. */
static size_t
dp_panda_tunnel_hlen(uint8_t tunnels, ovs_be16 dport, const void *p,
                     size_t size)
{
    switch (panda_policy_tunnel(tunnels, ntohs(dport))) {
    case PANDA_TUNNEL_GENEVE: {
        const struct genevehdr *gnh = p;
        size_t hlen;

        if (size < sizeof *gnh || gnh->ver != 0
            || gnh->proto_type != htons(ETH_TYPE_TEB)) {
            return 0;
        }
        hlen = sizeof *gnh + gnh->opt_len * 4;
        return hlen <= size ? hlen : 0;
    }
    case PANDA_TUNNEL_VXLAN: {
        const struct vxlanhdr *vxh = p;
        uint32_t flags;

        if (size < sizeof *vxh) {
            return 0;
        }
        flags = ntohl(get_16aligned_be32(&vxh->vx_flags));
        return (flags & VXLAN_FLAGS) && !(flags & VXLAN_HF_GPE)
               ? sizeof *vxh : 0;
    }
    default:
        return 0;               /* Not a declared tunnel: UDP. */
    }
}

/* dp_panda_extract_marks() of the common packet, one the datapath parsed
 * that is an unfragmented IPv4 TCP segment with a whole TCP header, directly
 * from the parsed offsets; returns false, having written nothing, for any
 * other, which takes the general path. */
static inline ALWAYS_INLINE bool
dp_panda_extract_tcp4(struct dp_packet *packet, struct panda_pkt *pkt,
                      struct dp_panda_marks *marks)
{
    const struct tcp_header *tcp;
    char *data, *tail;
    struct ip_header *nh;
    size_t l4_size, hdr_len;
    ovs_be16 type;

    /* dp_panda_l3_type() and the dp_packet_l3/l4() accessors, with the
     * packet's data pointer read once. */
    if (OVS_UNLIKELY(packet->l4_ofs == UINT16_MAX
                     || packet->l3_ofs < ETH_HEADER_LEN
                     || packet->l3_ofs == UINT16_MAX
                     || packet->l2_5_ofs != UINT16_MAX
                     || !dp_packet_is_eth(packet))) {
        return false;
    }
    data = dp_packet_data(packet);
    tail = data + dp_packet_size(packet) - dp_packet_l2_pad_size(packet);
    nh = (void *) (data + packet->l3_ofs);
    tcp = (void *) (data + packet->l4_ofs);
    memcpy(&type, (const char *) nh - sizeof type, sizeof type);
    if (type != htons(ETH_TYPE_IP)
        || tail - (char *) nh < IP_HEADER_LEN
        || nh->ip_ihl_ver >> 4 != 4 || nh->ip_proto != IPPROTO_TCP
        || nh->ip_frag_off & htons(IP_FRAG_OFF_MASK)
        || tail - (const char *) tcp < TCP_HEADER_LEN) {
        return false;
    }
    l4_size = tail - (const char *) tcp;
    hdr_len = TCP_OFFSET(tcp->tcp_ctl) * 4;

    pkt->family = 4;
    /* IP header and its options included, as dp_panda_extract_tcp(). */
    pkt->hdr_len = (const char *) tcp - (const char *) nh + hdr_len;
    pkt->proto = IPPROTO_TCP;
    pkt->tcp_flags = TCP_FLAGS(tcp->tcp_ctl) & 0xff;
    pkt->dscp = (nh->ip_tos & IP_DSCP_MASK) >> 2;
    pkt->sport = tcp->tcp_src;
    pkt->dport = tcp->tcp_dst;
    pkt->src.v4 = get_16aligned_be32(&nh->ip_src);
    pkt->dst.v4 = get_16aligned_be32(&nh->ip_dst);
    if (l4_size > hdr_len) {
        dp_panda_set_payload(pkt, (const char *) tcp + hdr_len,
                             l4_size - hdr_len);
    } else {
        dp_panda_set_payload(pkt, NULL, 0);
    }
    marks->nh = nh;
    marks->outer_nh = NULL;
    return true;
}

/* Extracts what the classifier needs from 'packet' into 'pkt' and fills in
 * 'marks'; for a packet of a tunnel in 'tunnels' whose inner frame is IP,
 * the inner connection.  Returns false if the packet is not IP. */
static bool
dp_panda_extract_marks(struct dp_packet *packet, struct panda_pkt *pkt,
                       struct dp_panda_marks *marks, uint8_t tunnels)
{
    struct udp_header *udp;
    struct dp_packet inner;
    struct panda_pkt ipkt;
    size_t size, hlen;
    void *inner_nh;

    if (dp_panda_extract_tcp4(packet, pkt, marks)) {
        return true;
    }
    marks->nh = dp_panda_extract(packet, pkt);
    marks->outer_nh = NULL;
    if (!marks->nh || pkt->proto != IPPROTO_UDP || !pkt->payload) {
        return marks->nh != NULL;
    }
    udp = dp_packet_l4(packet);
    size = dp_packet_l4_size(packet) - UDP_HEADER_LEN;
    hlen = dp_panda_tunnel_hlen(tunnels, udp->udp_dst, udp + 1, size);
    if (!hlen || size - hlen < ETH_HEADER_LEN) {
        return true;
    }

    /* A view of the inner frame: parsing it sets its offsets only. */
    dp_packet_use_const(&inner, (const uint8_t *) (udp + 1) + hlen,
                        size - hlen);
    inner_nh = dp_panda_extract(&inner, &ipkt);
    if (inner_nh) {
        marks->outer_nh = marks->nh;
        marks->outer_family = pkt->family;
        marks->udp_csum = &udp->udp_csum;
        marks->nh = inner_nh;
        *pkt = ipkt;
    }
    return true;
}

bool
dp_panda_extract_pkt(struct dp_packet *packet, struct panda_pkt *pkt,
                     uint8_t tunnels)
{
    struct dp_panda_marks marks;

    return dp_panda_extract_marks(packet, pkt, &marks, tunnels);
}

/* Writes 'dscp' wherever 'marks' says. */
static void
dp_panda_mark(const struct dp_panda_marks *marks, int family, uint8_t dscp)
{
    dp_panda_set_dscp(marks->nh, family, dscp,
                      marks->outer_nh ? marks->udp_csum : NULL);
    if (marks->outer_nh) {
        dp_panda_set_dscp(marks->outer_nh, marks->outer_family, dscp, NULL);
    }
}

/* Marks the 'n' packets 'packets' ('pkts', 'marks') with their 'verdicts'
 * and counts their payloads in 'hist' (if nonnull).  'all_plain' says that
 * every packet is one that dp_panda_extract_tcp4() took (an IPv4 header
 * outside any tunnel), the common batch, which then writes each header
 * inline without looking at its marks' tunnel and family. */
static inline ALWAYS_INLINE void
dp_panda_mark_batch(struct dp_packet **packets, const struct panda_pkt *pkts,
                    const struct dp_panda_marks *marks,
                    const struct panda_table_verdict *verdicts, size_t n,
                    struct panda_sizehist *hist, bool all_plain)
{
    struct panda_sizehist_run run;

    panda_sizehist_run_init(&run);
    for (size_t k = 0; k < n; k++) {
        const struct panda_table_verdict *v = &verdicts[k];

        if (all_plain
            || OVS_LIKELY(!marks[k].outer_nh && pkts[k].family == 4)) {
            struct ip_header *ip = marks[k].nh;
            uint8_t tos = panda_pkt_tos_set_dscp(ip->ip_tos, v->dscp);

            if (tos != ip->ip_tos) {
                ip->ip_csum = recalc_csum16(ip->ip_csum, htons(ip->ip_tos),
                                            htons(tos));
                ip->ip_tos = tos;
            }
        } else {
            dp_panda_mark(&marks[k], pkts[k].family, v->dscp);
        }
        packets[k]->md.skb_priority = v->queue;
        if (hist && v->stateful && pkts[k].payload) {
            panda_sizehist_run_add(hist, &run, v->level, pkts[k].payload);
        }
    }
    if (hist) {
        panda_sizehist_run_end(&run);
    }
}

void
dp_panda_execute(struct dp_panda *dp, struct dp_packet_batch *batch,
                 const struct nlattr *action, long long int now_ms)
{
    struct panda_pkt pkts[NETDEV_MAX_BURST];
    struct dp_panda_marks marks[NETDEV_MAX_BURST];
    struct panda_table_verdict verdicts[NETDEV_MAX_BURST];
    struct dp_packet *packets[NETDEV_MAX_BURST];
    const struct panda_policy *policy = NULL;
    struct panda_policy unregistered;
    struct dp_panda_table *t = NULL;
    struct panda_table *table = NULL;
    struct panda_sizehist *hist = NULL;
    struct dp_packet *packet;
    size_t n_plain = 0;         /* Packets that dp_panda_extract_tcp4()
                                 * took. */
    size_t n = 0;
    unsigned long long int orig;
    bool histograms, stateless;

    /* Fast path: the policy that the flow put checked and registered,
     * found by the id and the bytes of the action, once per batch. */
    if (OVS_LIKELY(nl_attr_get_size(action) >= PANDA_WIRE_LEN)) {
        t = dp_panda_lookup(dp, panda_wire_id(nl_attr_get(action)));
        if (OVS_LIKELY(t)) {
            policy = dp_panda_find_version(t, nl_attr_get(action),
                                           nl_attr_get_size(action));
        }
    }
    if (OVS_UNLIKELY(!policy)) {
        if (!dp_panda_check_unregistered(dp, action,
                                         dp_packet_batch_size(batch),
                                         &unregistered, &t)) {
            return;
        }
        policy = &unregistered;
    }
    stateless = !panda_kind_has_counter(policy->kind);
    if (OVS_UNLIKELY(stateless)) {
        /* Kinds app, match and length classify each packet by its rules
         * alone: no connection table, so they take none of the memory and
         * none of the panda-max-policies that the counter kinds need. */
    } else if (OVS_LIKELY(t)) {
        table = dp_panda_get_table(dp, t, now_ms);
        atomic_read_relaxed(&dp->histograms, &histograms);
        if (histograms) {
            /* Set with the table, so after dp_panda_get_table(). */
            hist = ovsrcu_get(struct panda_sizehist *, &t->hist);
        }
    }
    if (OVS_UNLIKELY(!table && !stateless)) {
        /* No table (no memory, or too many ids): the packets are marked as
         * lib/panda classifies packets it cannot track (a compose policy's
         * rules, else the untracked level), and counted. */
        COVERAGE_ADD(panda_no_table, dp_packet_batch_size(batch));
    }

    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        /* The common packet inline, the rest (IPv6, tunnels, fragments,
         * packets the datapath did not parse) by the general path. */
        if (OVS_LIKELY(dp_panda_extract_tcp4(packet, &pkts[n], &marks[n]))) {
            packets[n++] = packet;
            n_plain++;
        } else if (dp_panda_extract_marks(packet, &pkts[n], &marks[n],
                                          policy->tunnels)) {
            packets[n++] = packet;
        }
    }
    /* lib/panda decides the levels, their DSCPs and queues, with or
     * without a table: the whole batch in one call, which hashes and
     * prefetches every lookup before the first. */
    panda_table_classify_batch(table, policy, pkts, n, now_ms, verdicts);
    /* The common batches (every packet plain IPv4, histograms on or off)
     * get copies of the loop with those tests decided once per batch. */
    if (OVS_LIKELY(n_plain == n) && hist) {
        dp_panda_mark_batch(packets, pkts, marks, verdicts, n, hist, true);
    } else if (OVS_LIKELY(n_plain == n)) {
        dp_panda_mark_batch(packets, pkts, marks, verdicts, n, NULL, true);
    } else {
        dp_panda_mark_batch(packets, pkts, marks, verdicts, n, hist, false);
    }
    if (OVS_UNLIKELY(stateless) && t) {
        /* Counted per batch: one atomic addition per level, not one per
         * packet, on counters that every thread of the id writes. */
        unsigned int per_level[PANDA_MAX_LEVELS] = { 0 };

        for (size_t k = 0; k < n; k++) {
            per_level[verdicts[k].level]++;
        }
        for (size_t j = 0; j < PANDA_MAX_LEVELS; j++) {
            if (per_level[j]) {
                atomic_add_relaxed(&t->rule_packets[j], per_level[j], &orig);
            }
        }
    }

    COVERAGE_ADD(panda_packet, n);
    if (n < dp_packet_batch_size(batch)) {
        COVERAGE_ADD(panda_not_ip, dp_packet_batch_size(batch) - n);
    }
}

/* Histograms. */

static int
dp_panda_hist_cmp(const void *a_, const void *b_)
{
    const struct dpif_panda_hist *a = a_, *b = b_;

    return a->id < b->id ? -1 : a->id > b->id;
}

int
dp_panda_histograms(struct dp_panda *dp, const uint32_t *id,
                    struct dpif_panda_hist **histsp, size_t *n_histsp)
{
    struct dpif_panda_hist *hists = NULL;
    struct dp_panda_table *t;
    size_t n = 0, allocated = 0;

    ovs_mutex_lock(&dp->mutex);
    CMAP_FOR_EACH (t, node, &dp->tables) {
        const struct panda_sizehist *hist;
        struct dpif_panda_hist *h;

        if (id && t->id != *id) {
            continue;
        }
        if (n >= allocated) {
            hists = x2nrealloc(hists, &allocated, sizeof *hists);
        }
        h = &hists[n++];
        h->id = t->id;
        h->shared = t->shared;
        hist = ovsrcu_get_protected(struct panda_sizehist *, &t->hist);
        if (hist) {
            panda_sizehist_snapshot(&h->hist, hist);
        } else {
            panda_sizehist_reset(&h->hist);
        }
    }
    ovs_mutex_unlock(&dp->mutex);

    if (n) {
        qsort(hists, n, sizeof *hists, dp_panda_hist_cmp);
    }
    *histsp = hists;
    *n_histsp = n;
    return id && !n ? ENOENT : 0;
}

/* ovs-appctl commands. */

static bool
parse_policy_id(struct unixctl_conn *conn, int argc, const char *argv[],
                bool *all, uint32_t *id)
{
    *all = argc < 2;
    *id = 0;
    if (!*all && !str_to_uint(argv[1], 10, id)) {
        unixctl_command_reply_error(conn, "policy-id: not a valid policy "
                                    "id (an integer 0 to 4294967295)");
        return false;
    }
    return true;
}

struct dp_panda_show_aux {
    struct ds *ds;
    const struct panda_policy *policy;
    panda_msec_t now_ms;
    size_t n, max;
};

static void
format_addr(struct ds *ds, const struct panda_pkt *key,
            const void *addr, ovs_be16 port)
{
    if (key->family == 4) {
        ds_put_format(ds, IP_FMT, IP_ARGS(*(const ovs_be32 *) addr));
    } else {
        ds_put_char(ds, '[');
        ipv6_format_addr(addr, ds);
        ds_put_char(ds, ']');
    }
    ds_put_format(ds, ":%"PRIu16, ntohs(port));
}

static bool
dp_panda_show_conn(const struct panda_table_conn_info *c, void *aux_)
{
    struct dp_panda_show_aux *aux = aux_;
    struct ds *ds = aux->ds;

    if (aux->n++ >= aux->max) {
        return false;
    }
    ds_put_cstr(ds, "    ");
    format_addr(ds, &c->key, &c->key.src, c->key.sport);
    ds_put_cstr(ds, " > ");
    format_addr(ds, &c->key, &c->key.dst, c->key.dport);
    ds_put_format(ds, " counter=%"PRId64, c->counter);
    if (aux->policy) {
        ds_put_format(ds, " level=%d",
                      panda_policy_level(aux->policy, c->counter));
    }
    ds_put_format(ds, " idle=%"PRIu64"ms\n",
                  panda_table_age(aux->now_ms, c->last_seen_ms));
    return true;
}

/* Appends the statistics of 'table', with the levels of 'policy' (if
 * nonnull), and with 'list' its connections. */
static void
dp_panda_show_stats(struct ds *ds, struct panda_table *table,
                    const struct panda_policy *policy, bool list)
{
    struct panda_table_stats s;
    int i, n_levels;

    panda_table_stats(table, &s);
    ds_put_format(ds, "    connections: %"PRIu64" (capacity %"PRIu64
                  " per address family)\n", s.connections, s.capacity);
    ds_put_format(ds, "    inserted: %"PRIu64", removed: %"PRIu64
                  ", resumed: %"PRIu64", expired: %"PRIu64"\n",
                  s.inserted, s.removed, s.resumed, s.expired);
    ds_put_format(ds, "    evicted: %"PRIu64" (established: %"PRIu64
                  "), refused: %"PRIu64"\n", s.evicted,
                  s.evicted_established, s.refused);
    if (s.alloc_failures) {
        ds_put_format(ds, "    packets not tracked for lack of memory: %"
                      PRIu64"\n", s.alloc_failures);
    }
    n_levels = policy ? policy->n_levels : PANDA_MAX_LEVELS;
    ds_put_cstr(ds, "    packets per level:");
    for (i = 0; i < n_levels; i++) {
        ds_put_format(ds, " %d:%"PRIu64, i, s.packets[i]);
    }
    ds_put_format(ds, "\n    memory: %"PRIu64" bytes\n", s.bytes_allocated);

    if (list) {
        struct dp_panda_show_aux aux = {
            .ds = ds,
            .policy = policy,
            .now_ms = time_msec(),
            .max = 1000,
        };

        panda_table_foreach(table, dp_panda_show_conn, &aux);
        if (aux.n > aux.max) {
            ds_put_format(ds, "    (only the first %"PRIuSIZE
                          " connections are shown)\n", aux.max);
        }
    }
}

static const struct panda_policy *
dp_panda_latest_policy(const struct dp_panda_table *t)
{
    const struct dp_panda_versions *vs
        = ovsrcu_get(struct dp_panda_versions *, &t->versions);

    return vs && vs->n ? &vs->v[0].policy : NULL;
}

/* Appends policy id 't' and its table; with 'one' (panda/show ID), its
 * connections too, and the overflow table if it shares that. */
static void
dp_panda_show_id(struct ds *ds, struct dp_panda_table *t, bool one)
{
    const struct panda_policy *policy = dp_panda_latest_policy(t);
    struct panda_table *table = ovsrcu_get(struct panda_table *, &t->table);

    ds_put_format(ds, "  policy %"PRIu32":", t->id);
    if (policy) {
        char buf[PANDA_POLICY_TEXT_MAX];

        panda_policy_format(policy, buf, sizeof buf);
        ds_put_format(ds, " panda(%s)", buf);
    }
    ds_put_char(ds, '\n');
    if (policy && !panda_kind_has_counter(policy->kind)) {
        int i;

        ds_put_format(ds, "    no connection table: kind=%s keeps no "
                      "connection state\n    packets per level:",
                      panda_policy_kind_name(policy->kind));
        for (i = 0; i < policy->n_levels; i++) {
            unsigned long long int n;

            atomic_read_relaxed(&t->rule_packets[i], &n);
            ds_put_format(ds, " %d:%llu", i, n);
        }
        ds_put_char(ds, '\n');
    } else if (!table) {
        ds_put_cstr(ds, "    no connection table (no packet since the "
                    "policy was installed or the tables were reset)\n");
    } else if (t->shared) {
        ds_put_cstr(ds, "    shares the overflow table\n");
        if (one) {
            dp_panda_show_stats(ds, table, policy, true);
        }
    } else {
        dp_panda_show_stats(ds, table, policy, one);
    }
}

/* Appends the configuration and the limits of 'dp'. */
static void
dp_panda_show_dp(struct ds *ds, struct dp_panda *dp)
    OVS_REQUIRES(dp->mutex)
{
    const struct dp_panda_settings *st = &dp->settings;
    size_t n_tables = dp->n_own + (dp->overflow != NULL);
    int key;

    ds_put_format(ds, "%s: connection tables of %"PRIu32" connections per "
                  "address family (%.1f MiB at most), idle timeout %"PRIu64
                  " ms\n", dp->name, st->table.capacity,
                  dp->table_bytes / 1048576.0, st->table.idle_timeout_ms);
    ds_put_format(ds, "  policies with their own table: %"PRIuSIZE" of at "
                  "most %"PRIuSIZE" (panda-max-policies %llu, panda-max-"
                  "memory %llu MiB); sharing the overflow table: %"PRIuSIZE
                  "\n", dp->n_own, dp_panda_own_limit(dp), st->max_policies,
                  st->max_memory >> 20, dp->n_shared);
    ds_put_format(ds, "  memory reserved: %.1f MiB of %llu MiB\n",
                  n_tables * (dp->table_bytes / 1048576.0),
                  st->max_memory >> 20);
    for (key = 0; key < N_REFUSALS; key++) {
        if (dp->refused[key].msg) {
            ds_put_format(ds, "  refused: %s\n", dp->refused[key].msg);
        }
    }
}

static void
dp_panda_unixctl_show(struct unixctl_conn *conn, int argc,
                      const char *argv[], void *aux OVS_UNUSED)
{
    struct ds ds = DS_EMPTY_INITIALIZER;
    struct dp_panda *dp;
    bool all, found = false;
    uint32_t id;

    if (!parse_policy_id(conn, argc, argv, &all, &id)) {
        return;
    }

    ovs_mutex_lock(&dp_pandas_mutex);
    LIST_FOR_EACH (dp, list_node, &dp_pandas) {
        struct dp_panda_table *t;

        ovs_mutex_lock(&dp->mutex);
        dp_panda_show_dp(&ds, dp);
        CMAP_FOR_EACH (t, node, &dp->tables) {
            if (all || t->id == id) {
                dp_panda_show_id(&ds, t, !all);
                found = true;
            }
        }
        if (all && dp->overflow) {
            ds_put_cstr(&ds, "  overflow table:\n");
            dp_panda_show_stats(&ds, dp->overflow, NULL, false);
        }
        ovs_mutex_unlock(&dp->mutex);
    }
    ovs_mutex_unlock(&dp_pandas_mutex);

    if (!all && !found) {
        unixctl_command_reply_error(conn, "no such panda policy (no flow "
                                    "has used that id)");
    } else {
        unixctl_command_reply(conn, ds_cstr(&ds));
    }
    ds_destroy(&ds);
}

static void
dp_panda_unixctl_flush(struct unixctl_conn *conn, int argc,
                       const char *argv[], void *aux OVS_UNUSED)
{
    struct dp_panda *dp;
    bool all, found = false;
    uint32_t id;

    if (!parse_policy_id(conn, argc, argv, &all, &id)) {
        return;
    }

    ovs_mutex_lock(&dp_pandas_mutex);
    LIST_FOR_EACH (dp, list_node, &dp_pandas) {
        struct dp_panda_table *t;

        ovs_mutex_lock(&dp->mutex);
        CMAP_FOR_EACH (t, node, &dp->tables) {
            if (all || t->id == id) {
                struct panda_table *table;

                table = ovsrcu_get_protected(struct panda_table *,
                                             &t->table);
                if (table) {
                    panda_table_flush(table);
                }
                found = true;
            }
        }
        ovs_mutex_unlock(&dp->mutex);
    }
    ovs_mutex_unlock(&dp_pandas_mutex);

    if (!all && !found) {
        unixctl_command_reply_error(conn, "no such panda policy (no flow "
                                    "has used that id)");
    } else {
        unixctl_command_reply(conn, NULL);
    }
}

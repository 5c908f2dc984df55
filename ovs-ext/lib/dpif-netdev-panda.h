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

#ifndef DPIF_NETDEV_PANDA_H
#define DPIF_NETDEV_PANDA_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The userspace datapath's side of the 'panda' action.
 *
 * Each datapath keeps, per policy id, one connection table (lib/panda) and
 * the policies registered for that id.  The tables live here, outside the
 * flow tables: megaflows wildcard the transport ports, exist once per PMD
 * thread and come and go with revalidation, whereas a connection's counter
 * must persist for the life of the connection and be shared by every thread
 * that sees its packets.  The policy travels in the action (lib/panda's wire
 * body, panda/wire.h), so a flow that changes the thresholds of a policy
 * keeps the counters of that policy's connections.
 *
 * A policy is checked once, when a flow that uses it is put: the put fails
 * (EINVAL, with a log line naming the field) if a panda action is malformed,
 * and otherwise the policy is registered under its id, keyed by its bytes.
 * Executing the action then finds the table and the registered policy by
 * the id and a memcmp() of the bytes, without decoding anything per batch,
 * as the meter action finds its meter by id.  Actions executed without a
 * flow put (dpctl/execute, packet-out) are checked on the spot instead. */

struct dp_packet;
struct dp_packet_batch;
struct dp_panda;
struct dpif_panda_hist;
struct nlattr;
struct panda_pkt;
struct smap;

void dp_panda_init(void);

struct dp_panda *dp_panda_create(const char *dp_name);
void dp_panda_destroy(struct dp_panda *);
void dp_panda_set_config(struct dp_panda *, const struct smap *other_config);

/* Policy ids are forgotten when no flow uses them.  The datapath counts,
 * per policy id, the flows whose actions have a panda action of that id:
 * call dp_panda_flow_ref() with +1 when a flow gets 'actions' (created,
 * or modified to them) and with -1 when it loses them (removed, or
 * modified to others).  An id that no flow has used for a grace period is
 * forgotten with its connection table, its histograms and its registered
 * policies (dp_panda_run(), main thread; dp_panda_wait() wakes it for
 * that).  The grace period is the connections' idle timeout
 * (other_config:panda-idle-timeout, or its default if that is 0), and at
 * least 10 s, so that a flow deleted and put again (a datapath flow idle
 * for max-idle and then needed again, a revalidated flow) finds its
 * connections' counters as long as they would have lived anyway.  A
 * flow's id must have been registered by its put (dp_panda_flow_put());
 * a flow whose id is not known (a feature probe's, whose put registers
 * nothing) is not counted. */
void dp_panda_flow_ref(struct dp_panda *, const struct nlattr *actions,
                       size_t actions_len, int delta);
void dp_panda_run(struct dp_panda *);
void dp_panda_wait(struct dp_panda *);

/* Datapath other_config keys.
 *
 * The datapath's Panda-OVS keys (panda-*, panda-sched-*) are checked where
 * they enter, one way for all: an integer is decimal digits alone (no
 * sign, space or suffix) within the key's range, a boolean is "true" or
 * "false".  A key set to anything else, or to a value that the other keys
 * do not allow, is refused: it keeps the setting it had, the refusal is
 * logged once (and again only when it changes), and the show commands
 * (panda/show, panda-sched/show) list it for as long as it is in effect:
 * until the key is set to a value in effect, or removed. */

/* A refusal of one key: the message, or NULL. */
struct dp_panda_refusal {
    char *msg;
};

/* Reads integer key 'key' of 'other_config': its value if that is a
 * decimal integer from 'min' to 'max', 'def' if the key is not set.
 * Otherwise returns 'current' and stores in '*msgp' a malloc()ed message
 * naming the key, the value and the range in 'unit' ("", " ms", " MiB"),
 * for dp_panda_refusal_update(); '*msgp' is left alone if the key is
 * accepted. */
unsigned long long int dp_panda_config_uint(const struct smap *other_config,
                                            const char *key,
                                            unsigned long long int min,
                                            unsigned long long int max,
                                            const char *unit,
                                            unsigned long long int def,
                                            unsigned long long int current,
                                            char **msgp);

/* The same for boolean key 'key'. */
bool dp_panda_config_bool(const struct smap *other_config, const char *key,
                          bool def, bool current, char **msgp);

/* Makes 'msg' (malloc()ed, owned by 'r' from now on; NULL: none) the
 * refusal in effect of a key of datapath 'dp_name', logging it if it
 * differs from the one in effect before. */
void dp_panda_refusal_update(struct dp_panda_refusal *r, const char *dp_name,
                             char *msg);
void dp_panda_refusal_destroy(struct dp_panda_refusal *);

/* Checks every panda action in 'actions' (inside clone, sample and
 * check_pkt_len too) of a flow about to be put and, unless 'probe',
 * registers their policies.  Returns 0, EINVAL for a malformed action or
 * ENOMEM if a connection table cannot be created. */
int dp_panda_flow_put(struct dp_panda *, const struct nlattr *actions,
                      size_t actions_len, bool probe);

/* Snapshots the payload-size histograms of policy '*id', or of every
 * policy id if 'id' is NULL, in ascending id order, into a malloc()ed array
 * of '*n_hists' entries.  Returns 0, or ENOENT if no flow has used '*id'.
 * Histograms are counted only while other_config:panda-histograms is true
 * (the default). */
int dp_panda_histograms(struct dp_panda *, const uint32_t *id,
                        struct dpif_panda_hist **hists, size_t *n_hists);

/* Executes the OVS_ACTION_ATTR_PANDA action 'action' on 'batch'. */
void dp_panda_execute(struct dp_panda *, struct dp_packet_batch *,
                      const struct nlattr *action, long long int now_ms);

/* Extracts from 'packet' what lib/panda classifies a packet by (its
 * connection, TCP flags, DSCP and the start of its payload: struct
 * panda_pkt) into 'pkt', as the panda action does: for a packet of a
 * Geneve or VXLAN tunnel that 'tunnels' declares (a policy's 'tunnels'),
 * the inner packet's.  Returns false if 'packet' is not IP. */
bool dp_panda_extract_pkt(struct dp_packet *, struct panda_pkt *pkt,
                          uint8_t tunnels);

#endif /* dpif-netdev-panda.h */

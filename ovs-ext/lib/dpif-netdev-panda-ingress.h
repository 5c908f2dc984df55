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

#ifndef DPIF_NETDEV_PANDA_INGRESS_H
#define DPIF_NETDEV_PANDA_INGRESS_H 1

#include <stdbool.h>

/* Ingress priority of a port of the userspace datapath (Interface
 * other_config:panda-ingress-priority): a lib/panda policy of a rule kind
 * (app, match or length), whose level 0 is high priority and every other
 * level low.  A packet is classified alone, as it is received, before any
 * flow lookup: rule kinds keep no connection state, so this needs none of
 * the panda action's connection tables.
 *
 * An ingress priority is immutable once created: the main thread creates
 * a new one when the key changes and publishes it with RCU, and any thread
 * may classify with it meanwhile. */

struct dp_packet;
struct dp_panda_ingress;
struct panda_policy;

/* Parses 'text' into a new ingress priority.  Returns NULL with a
 * malloc()ed message naming the problem in '*errp' if it is not a valid
 * policy of a rule kind. */
struct dp_panda_ingress *dp_panda_ingress_create(const char *text,
                                                 char **errp);
void dp_panda_ingress_destroy(struct dp_panda_ingress *);
const char *dp_panda_ingress_text(const struct dp_panda_ingress *);

/* The policy as lib/panda parsed it, valid as long as 'ingress' is: what
 * the kernel split of a system port's receive classifies with
 * (netdev_linux_set_rx_split()). */
const struct panda_policy *dp_panda_ingress_policy(
    const struct dp_panda_ingress *);

/* True if 'packet' has high priority under 'ingress': an IP packet that a
 * rule puts at level 0 (or the default level is 0), or, of the frames that
 * are not IP, link control (ARP, RARP, LACP and the other slow protocols,
 * LLDP, STP BPDUs), which is never held back; any other frame that is not
 * IP is low.  A Geneve or VXLAN packet is classified by its inner packet
 * if the policy declares that tunnel ('tunnels'), as the panda action
 * does. */
bool dp_panda_ingress_is_high(const struct dp_panda_ingress *,
                              struct dp_packet *);

#endif /* dpif-netdev-panda-ingress.h */

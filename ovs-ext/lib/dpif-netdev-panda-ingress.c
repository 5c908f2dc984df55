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

#include "dpif-netdev-panda-ingress.h"

#include <panda/classifier.h>
#include <panda/frame.h>
#include <panda/packet.h>
#include <panda/policy.h>
#include <stdlib.h>

#include "dp-packet.h"
#include "dpif-netdev-panda.h"
#include "flow.h"
#include "packets.h"
#include "util.h"

struct dp_panda_ingress {
    struct panda_policy policy;
    char *text;
};

struct dp_panda_ingress *
dp_panda_ingress_create(const char *text, char **errp)
{
    struct dp_panda_ingress *in;
    struct panda_policy policy;
    char *error;

    error = panda_policy_parse(text, &policy);
    if (error) {
        *errp = error;
        return NULL;
    }
    if (panda_kind_has_counter(policy.kind)) {
        /* Counters need the connection tables, which the flows' panda
         * actions own; at ingress a packet is classified alone. */
        *errp = xasprintf("kind: kind=%s keeps connection state; the "
                          "ingress priority takes kind=app, match or "
                          "length", panda_policy_kind_name(policy.kind));
        return NULL;
    }
    in = xmalloc(sizeof *in);
    in->policy = policy;
    in->text = xstrdup(text);
    return in;
}

void
dp_panda_ingress_destroy(struct dp_panda_ingress *in)
{
    if (in) {
        free(in->text);
        free(in);
    }
}

const char *
dp_panda_ingress_text(const struct dp_panda_ingress *in)
{
    return in->text;
}

/* True if 'packet', which is not an IP packet the panda action can read,
 * is link control (ARP, the slow protocols, LLDP, STP BPDUs), which is high
 * on purpose: lib/panda's panda_frame_is_link_control() decides, the one
 * decision the kernel split of a port's receive takes too.  Any other frame
 * that is not IP, malformed IP included, is low: a flood of it must not
 * pass ahead of the traffic the policy ranks high. */
static bool
dp_panda_ingress_is_link_control(struct dp_packet *packet)
{
    const struct eth_header *eth;
    ovs_be16 dl_type;

    if (!dp_packet_is_eth(packet)
        || dp_packet_size(packet) < ETH_HEADER_LEN) {
        return false;
    }
    eth = dp_packet_data(packet);
    parse_tcp_flags(packet, &dl_type, NULL, NULL);
    /* An 802.3 frame's dl_type is FLOW_DL_TYPE_NONE, below 0x600. */
    return panda_frame_is_link_control(ntohs(dl_type), eth->eth_dst.ea);
}

const struct panda_policy *
dp_panda_ingress_policy(const struct dp_panda_ingress *in)
{
    return &in->policy;
}

bool
dp_panda_ingress_is_high(const struct dp_panda_ingress *in,
                         struct dp_packet *packet)
{
    struct panda_pkt pkt;

    if (!dp_panda_extract_pkt(packet, &pkt, in->policy.tunnels)) {
        return dp_panda_ingress_is_link_control(packet);
    }
    return !panda_cls_level(&in->policy, NULL, &pkt);
}

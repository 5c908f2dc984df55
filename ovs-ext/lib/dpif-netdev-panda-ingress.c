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
#include <panda/packet.h>
#include <panda/policy.h>
#include <stdlib.h>

#include "dpif-netdev-panda.h"
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

bool
dp_panda_ingress_is_high(const struct dp_panda_ingress *in,
                         struct dp_packet *packet)
{
    struct panda_pkt pkt;

    if (!dp_panda_extract_pkt(packet, &pkt)) {
        return true;
    }
    return !panda_cls_level(&in->policy, NULL, &pkt);
}

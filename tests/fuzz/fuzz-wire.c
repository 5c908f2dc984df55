/* Fuzz target: the policy's wire body (lib/panda/wire.h), which both the
 * NXAST_PANDA OpenFlow action and the OVS_ACTION_ATTR_PANDA datapath
 * action carry and decode.  A body that decodes must re-encode to the same
 * bytes (bodies are canonical: the datapath compares them with memcmp),
 * and its text form must parse back to the same policy. */
#include "fuzz.h"

#include <string.h>

#include <panda/policy.h>
#include <panda/wire.h>

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[PANDA_WIRE_MSG_SIZE], text[4096];
    struct panda_policy p, q;
    uint8_t body[PANDA_WIRE_MAX_LEN];
    enum panda_wire_error e;
    char *err;

    e = panda_wire_decode(data, size, &p, msg);
    FUZZ_CHECK(panda_wire_error_name(e) != NULL);
    if (e != PANDA_WIRE_OK) {
        FUZZ_CHECK(memchr(msg, '\0', sizeof msg) != NULL);
        return 0;
    }
    FUZZ_CHECK(size == panda_wire_len(&p));
    FUZZ_CHECK(panda_wire_id(data) == p.id);
    panda_wire_encode(&p, body);
    FUZZ_CHECK(!memcmp(body, data, size));
    FUZZ_CHECK(panda_policy_format(&p, text, sizeof text)
               < (int) sizeof text);
    err = panda_policy_parse(text, &q);
    FUZZ_CHECK(err == NULL);
    FUZZ_CHECK(panda_policy_equal(&p, &q));
    return 0;
}

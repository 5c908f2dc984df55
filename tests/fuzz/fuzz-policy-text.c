/* Fuzz target: the policy text parser (panda_policy_parse), the syntax of
 * the OVS action, ovs-ofctl, dpctl and the tools.  A text that parses is
 * valid, prints back to a text that parses to the same policy, and packs
 * into a wire body that decodes to it again. */
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
    char *s, *err;

    s = malloc(size + 1);
    FUZZ_CHECK(s != NULL);
    memcpy(s, data, size);
    s[size] = '\0';
    err = panda_policy_parse(s, &p);
    free(s);
    if (err) {
        FUZZ_CHECK(*err != '\0');
        free(err);
        return 0;
    }
    err = panda_policy_validate(&p);
    FUZZ_CHECK(err == NULL);
    FUZZ_CHECK(panda_policy_format(&p, text, sizeof text)
               < (int) sizeof text);
    err = panda_policy_parse(text, &q);
    FUZZ_CHECK(err == NULL);
    FUZZ_CHECK(panda_policy_equal(&p, &q));
    FUZZ_CHECK(panda_wire_encode(&p, body) <= sizeof body);
    FUZZ_CHECK(panda_wire_decode(body, panda_wire_len(&p), &q, msg)
               == PANDA_WIRE_OK);
    FUZZ_CHECK(panda_policy_equal(&p, &q));
    return 0;
}

/* Fuzz target: panda-fg-server's request decoder (lg_fg_req_decode).  A
 * request that decodes is within the protocol's limits and encodes back
 * to the same 24 bytes. */
#include "fuzz.h"

#include <string.h>

#include "lg-common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t buf[LG_FG_REQ_LEN], again[LG_FG_REQ_LEN];
    struct lg_fg_req r;

    if (size < LG_FG_REQ_LEN) {
        return 0;
    }
    memcpy(buf, data, LG_FG_REQ_LEN);
    if (lg_fg_req_decode(buf, &r)) {
        return 0;
    }
    FUZZ_CHECK(r.size >= 1 && r.size <= LG_FG_MAX_SIZE);
    FUZZ_CHECK(!(r.flags & ~(LG_FG_CLOSE | LG_FG_DSCP)));
    FUZZ_CHECK(!(r.flags & LG_FG_DSCP) || r.dscp <= 63);
    lg_fg_req_encode(&r, again);
    /* The reserved bytes are not checked by the decoder: compare the
     * rest. */
    FUZZ_CHECK(!memcmp(again, buf, 6) && !memcmp(again + 8, buf + 8, 16));
    return 0;
}

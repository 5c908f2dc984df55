/* Fuzz target: panda-mc-client's memcached reply parser
 * (lg_mc_parse_reply).  Whatever arrives, the parser either completes
 * exactly at the end of what it was given, asks for more than it has
 * (never less: the client would spin), or says what is wrong; fed the
 * reply in two parts it decides the same as fed it whole. */
#include "fuzz.h"

#include <string.h>

#include "lg-common.h"

static enum lg_mc_reply
parse(const uint8_t *data, size_t size, bool get, size_t *need,
      uint32_t *value_len)
{
    char why[160];
    enum lg_mc_reply r;

    why[0] = '\0';
    r = lg_mc_parse_reply((const char *) data, size, get, 1024 * 1024,
                          need, value_len, why, sizeof why);
    if (r == LG_MC_BAD) {
        FUZZ_CHECK(why[0] != '\0');
    }
    return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int get = 0; get < 2; get++) {
        size_t need = 0, cut;
        uint32_t len = 0;
        enum lg_mc_reply r = parse(data, size, get, &need, &len);

        if (r == LG_MC_NEED_MORE) {
            FUZZ_CHECK(need > size);
        } else if (r == LG_MC_HIT) {
            FUZZ_CHECK(get && len <= 1024 * 1024 && len + 12 <= size);
        }
        /* A prefix of a complete reply is incomplete or already bad. */
        cut = size ? data[0] % size : 0;
        if (r != LG_MC_NEED_MORE && r != LG_MC_BAD && cut < size) {
            enum lg_mc_reply p = parse(data, cut, get, &need, &len);

            FUZZ_CHECK(p == LG_MC_NEED_MORE || p == LG_MC_BAD);
            if (p == LG_MC_NEED_MORE) {
                FUZZ_CHECK(need > cut && need <= size);
            }
        }
    }
    return 0;
}

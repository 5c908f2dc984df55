/* Fuzz target: the CDF parser (panda_cdf_parse), used by the load
 * generator and panda-model.  A CDF that parses passes panda_cdf_check(),
 * has a finite mean within its values' range, and its quantiles and
 * samples stay within [first, last] value. */
#include "fuzz.h"

#include <math.h>
#include <string.h>

#include <panda/cdf.h>
#include <panda/rng.h>

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct panda_cdf cdf;
    struct panda_rng rng;
    double lo, hi, mean, prev = -1;
    char *s, *err;
    int i;

    s = malloc(size + 1);
    FUZZ_CHECK(s != NULL);
    memcpy(s, data, size);
    s[size] = '\0';
    err = panda_cdf_parse(&cdf, s, "fuzz.cdf");
    free(s);
    if (err) {
        FUZZ_CHECK(cdf.n == 0 && !strncmp(err, "fuzz.cdf", 8));
        free(err);
        return 0;
    }
    err = panda_cdf_check(&cdf);
    FUZZ_CHECK(err == NULL);
    lo = cdf.value[0];
    hi = cdf.value[cdf.n - 1];
    mean = panda_cdf_mean(&cdf);
    FUZZ_CHECK(isfinite(mean));
    FUZZ_CHECK(mean >= 0 && mean <= hi * (1 + 1e-9));
    for (i = 0; i <= 16; i++) {
        double q = panda_cdf_quantile(&cdf, i / 16.0);

        FUZZ_CHECK(q >= lo && q <= hi && q >= prev);
        prev = q;
        FUZZ_CHECK(panda_cdf_eval(&cdf, q) >= 0
                   && panda_cdf_eval(&cdf, q) <= 1);
    }
    panda_rng_seed(&rng, size);
    for (i = 0; i < 16; i++) {
        double v = panda_cdf_sample(&cdf, &rng);

        FUZZ_CHECK(v >= lo && v <= hi);
    }
    panda_cdf_destroy(&cdf);
    return 0;
}

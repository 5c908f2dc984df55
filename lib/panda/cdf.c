/* Flow-size distributions: parsing, evaluation and sampling. */
#include "cdf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void
panda_cdf_destroy(struct panda_cdf *cdf)
{
    free(cdf->value);
    free(cdf->prob);
    cdf->value = cdf->prob = NULL;
    cdf->n = 0;
}

static char *
cdf_fail(struct panda_cdf *cdf, const char *fmt, ...)
{
    va_list args;
    char *msg;

    panda_cdf_destroy(cdf);
    va_start(args, fmt);
    msg = panda_vasprintf(fmt, args);
    va_end(args);
    return msg;
}

char *
panda_cdf_parse(struct panda_cdf *cdf, const char *text, const char *name)
{
    size_t cap = 0;
    unsigned int lineno = 0;
    const char *line = text;

    cdf->n = 0;
    cdf->value = cdf->prob = NULL;

    while (*line) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t) (eol - line) : strlen(line);
        char buf[256];
        char *p, *end;
        double v, pr;

        lineno++;
        if (len >= sizeof buf) {
            return cdf_fail(cdf, "%s:%u: line too long", name, lineno);
        }
        memcpy(buf, line, len);
        buf[len] = '\0';
        line = eol ? eol + 1 : line + len;

        p = buf + strspn(buf, " \t\r");
        if (*p == '\0' || *p == '#') {
            continue;
        }
        errno = 0;
        v = strtod(p, &end);
        if (end == p || errno || !isfinite(v)) {
            return cdf_fail(cdf, "%s:%u: expected \"<value> <probability>\","
                            " got \"%s\"", name, lineno, p);
        }
        p = end;
        pr = strtod(p, &end);
        if (end == p || errno || !isfinite(pr)) {
            return cdf_fail(cdf, "%s:%u: missing cumulative probability after"
                            " value %g", name, lineno, v);
        }
        end += strspn(end, " \t\r");
        if (*end != '\0' && *end != '#') {
            return cdf_fail(cdf, "%s:%u: trailing text \"%s\"",
                            name, lineno, end);
        }
        if (v < 0) {
            return cdf_fail(cdf, "%s:%u: negative value %g",
                            name, lineno, v);
        }
        if (pr < 0 || pr > 1 + 1e-6) {
            return cdf_fail(cdf, "%s:%u: probability %g outside [0, 1]",
                            name, lineno, pr);
        }
        if (cdf->n > 0 && v < cdf->value[cdf->n - 1]) {
            return cdf_fail(cdf, "%s:%u: values not sorted (%g after %g)",
                            name, lineno, v, cdf->value[cdf->n - 1]);
        }
        if (cdf->n > 0 && pr < cdf->prob[cdf->n - 1]) {
            return cdf_fail(cdf, "%s:%u: probabilities decrease (%g after"
                            " %g)", name, lineno, pr, cdf->prob[cdf->n - 1]);
        }
        if (cdf->n == cap) {
            cap = cap ? 2 * cap : 16;
            cdf->value = panda_xrealloc(cdf->value, cap * sizeof *cdf->value);
            cdf->prob = panda_xrealloc(cdf->prob, cap * sizeof *cdf->prob);
        }
        cdf->value[cdf->n] = v;
        cdf->prob[cdf->n] = pr > 1 ? 1 : pr;
        cdf->n++;
    }

    if (cdf->n == 0) {
        return cdf_fail(cdf, "%s: no data points", name);
    }
    if (fabs(cdf->prob[cdf->n - 1] - 1.0) > 1e-6) {
        return cdf_fail(cdf, "%s: last cumulative probability is %g, not 1",
                        name, cdf->prob[cdf->n - 1]);
    }
    cdf->prob[cdf->n - 1] = 1.0;
    return NULL;
}

char *
panda_cdf_load(struct panda_cdf *cdf, const char *file)
{
    FILE *f = fopen(file, "r");
    char *text, *err;
    size_t len = 0, cap = 4096, n;

    cdf->n = 0;
    cdf->value = cdf->prob = NULL;
    if (!f) {
        return panda_asprintf("%s: cannot open CDF file (%s)",
                              file, strerror(errno));
    }
    text = panda_xmalloc(cap);
    while ((n = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            cap *= 2;
            text = panda_xrealloc(text, cap);
        }
    }
    if (ferror(f)) {
        int error = errno;

        fclose(f);
        free(text);
        return panda_asprintf("%s: read error (%s)", file, strerror(error));
    }
    fclose(f);
    text[len] = '\0';
    if (memchr(text, '\0', len)) {
        free(text);
        return panda_asprintf("%s: not a text file", file);
    }
    err = panda_cdf_parse(cdf, text, file);
    free(text);
    return err;
}

double
panda_cdf_quantile(const struct panda_cdf *cdf, double u)
{
    size_t lo = 0, hi = cdf->n - 1;

    if (u <= cdf->prob[0]) {
        return cdf->value[0];
    }
    if (u >= 1.0) {
        return cdf->value[cdf->n - 1];
    }
    /* Smallest index with prob >= u. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (cdf->prob[mid] < u) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    /* prob[lo - 1] < u <= prob[lo], and lo >= 1. */
    {
        double p0 = cdf->prob[lo - 1], p1 = cdf->prob[lo];
        double v0 = cdf->value[lo - 1], v1 = cdf->value[lo];

        return p1 > p0 ? v0 + (v1 - v0) * (u - p0) / (p1 - p0) : v1;
    }
}

double
panda_cdf_eval(const struct panda_cdf *cdf, double x)
{
    size_t i;

    if (x < cdf->value[0]) {
        return 0.0;
    }
    for (i = 1; i < cdf->n; i++) {
        if (x < cdf->value[i]) {
            double v0 = cdf->value[i - 1], v1 = cdf->value[i];
            double p0 = cdf->prob[i - 1], p1 = cdf->prob[i];

            return v1 > v0 ? p0 + (p1 - p0) * (x - v0) / (v1 - v0) : p0;
        }
    }
    return 1.0;
}

double
panda_cdf_mean(const struct panda_cdf *cdf)
{
    double mean = cdf->value[0] * cdf->prob[0];
    size_t i;

    for (i = 1; i < cdf->n; i++) {
        mean += (cdf->prob[i] - cdf->prob[i - 1])
                * (cdf->value[i] + cdf->value[i - 1]) / 2;
    }
    return mean;
}

/* splitmix64, to spread a user seed over xoshiro's state. */
static uint64_t
splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void
panda_rng_seed(struct panda_rng *rng, uint64_t seed)
{
    int i;

    for (i = 0; i < 4; i++) {
        rng->s[i] = splitmix64(&seed);
    }
}

static inline uint64_t
rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t
panda_rng_next(struct panda_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double
panda_rng_uniform(struct panda_rng *rng)
{
    return (panda_rng_next(rng) >> 11) * 0x1.0p-53;
}

double
panda_rng_exp(struct panda_rng *rng, double mean)
{
    return -mean * log1p(-panda_rng_uniform(rng));
}

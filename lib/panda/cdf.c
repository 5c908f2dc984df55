/* Flow-size distributions: parsing, evaluation and sampling. */
#include <panda/cdf.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/base.h>

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

/* The rules a CDF obeys, checked once here for the parser and for
 * panda_cdf_check(): whether point (v, pr) may follow the points of 'cdf'.
 * Returns NULL or a malloc()ed message. */
static char *
point_error(const struct panda_cdf *cdf, double v, double pr)
{
    if (!isfinite(v)) {
        return panda_asprintf("invalid value %g", v);
    }
    if (v < 0) {
        return panda_asprintf("negative value %g", v);
    }
    if (v > PANDA_CDF_MAX_VALUE) {
        return panda_asprintf("value %g above the largest supported, %.0f "
                              "(2^40)", v, PANDA_CDF_MAX_VALUE);
    }
    if (!(pr >= 0 && pr <= 1 + 1e-6)) {
        return panda_asprintf("probability %g outside [0, 1]", pr);
    }
    if (cdf->n > 0 && v < cdf->value[cdf->n - 1]) {
        return panda_asprintf("values not sorted (%g after %g)",
                              v, cdf->value[cdf->n - 1]);
    }
    if (cdf->n > 0 && pr < cdf->prob[cdf->n - 1]) {
        return panda_asprintf("probabilities decrease (%g after %g)",
                              pr, cdf->prob[cdf->n - 1]);
    }
    return NULL;
}

/* Whether 'cdf' is complete: it has points and its last probability is 1.
 * Returns NULL or a malloc()ed message. */
static char *
end_error(const struct panda_cdf *cdf)
{
    if (cdf->n == 0) {
        return panda_asprintf("empty (no data points)");
    }
    if (fabs(cdf->prob[cdf->n - 1] - 1.0) > 1e-6) {
        return panda_asprintf("last cumulative probability is %g, not 1",
                              cdf->prob[cdf->n - 1]);
    }
    return NULL;
}

char *
panda_cdf_parse(struct panda_cdf *cdf, const char *text, const char *name)
{
    char *msg, *err;
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
        msg = point_error(cdf, v, pr);
        if (msg) {
            err = cdf_fail(cdf, "%s:%u: %s", name, lineno, msg);
            free(msg);
            return err;
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

    msg = end_error(cdf);
    if (msg) {
        err = cdf_fail(cdf, "%s: %s", name, msg);
        free(msg);
        return err;
    }
    cdf->prob[cdf->n - 1] = 1.0;
    return NULL;
}

char *
panda_cdf_check(const struct panda_cdf *cdf)
{
    struct panda_cdf prefix = *cdf;
    char *msg, *err;
    size_t i;

    for (i = 0; cdf->n && i < cdf->n; i++) {
        prefix.n = i;
        msg = point_error(&prefix, cdf->value[i], cdf->prob[i]);
        if (msg) {
            err = panda_asprintf("point %zu: %s", i + 1, msg);
            free(msg);
            return err;
        }
    }
    return end_error(cdf);
}

char *
panda_cdf_load(struct panda_cdf *cdf, const char *file)
{
    char *text, *err;
    size_t len = 0, cap = 4096, n;
    FILE *f;

    cdf->n = 0;
    cdf->value = cdf->prob = NULL;
    f = panda_open_input(file, PANDA_CDF_MAX_FILE_BYTES, "CDF file", &err);
    if (!f) {
        return err;
    }
    text = panda_xmalloc(cap);
    while ((n = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len > PANDA_CDF_MAX_FILE_BYTES) {
            /* It grew while it was read. */
            fclose(f);
            free(text);
            return panda_asprintf("%s: more than %" PRIu64 " bytes, the "
                                  "largest CDF file read", file,
                                  PANDA_CDF_MAX_FILE_BYTES);
        }
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

/* The point at 'num'/'den' of the way from 'a0' to 'a1' (a0 <= a1,
 * 0 <= num <= den, den > 0).  The fraction is taken first and both it and
 * the result are clamped: computed as (a1 - a0) * num / den, a product that
 * underflows into the subnormal range loses its precision and the quotient
 * overshoots a1 (found by tests/fuzz/fuzz-cdf: a quantile above the CDF's
 * last value, and quantiles that were not monotonic). */
static double
lerp(double a0, double a1, double num, double den)
{
    double frac = num / den;
    double r;

    frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
    r = a0 + (a1 - a0) * frac;
    return r < a0 ? a0 : r > a1 ? a1 : r;
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

        return p1 > p0 ? lerp(v0, v1, u - p0, p1 - p0) : v1;
    }
}

/* F(x) for x >= value[0], given 'lo', the first point above x (n if
 * none). */
static double
eval_at(const struct panda_cdf *cdf, double x, size_t lo)
{
    if (lo < cdf->n) {
        double v0 = cdf->value[lo - 1], v1 = cdf->value[lo];
        double p0 = cdf->prob[lo - 1], p1 = cdf->prob[lo];

        /* The last probability may be up to 1e-6 above 1 (rounding in the
         * files); what is returned is a probability, so at most 1. */
        double p = v1 > v0 ? lerp(p0, p1, x - v0, v1 - v0) : p0;

        return p > 1 ? 1 : p;
    }
    return 1.0;
}

double
panda_cdf_eval(const struct panda_cdf *cdf, double x)
{
    size_t lo = 1, hi = cdf->n;

    if (x < cdf->value[0]) {
        return 0.0;
    }
    /* The first point above x (binary search: the solvers evaluate the
     * CDF at every breakpoint, so a linear scan made them quadratic in
     * the number of points). */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (x < cdf->value[mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return eval_at(cdf, x, lo);
}

double
panda_cdf_eval_near(const struct panda_cdf *cdf, double x, size_t *hint)
{
    size_t lo = *hint < 1 ? 1 : *hint > cdf->n ? cdf->n : *hint;

    if (x < cdf->value[0]) {
        *hint = 1;
        return 0.0;
    }
    /* The same point as panda_cdf_eval()'s search, walking from the hint:
     * the first index >= 1 whose value is above x. */
    while (lo < cdf->n && !(x < cdf->value[lo])) {
        lo++;
    }
    while (lo > 1 && x < cdf->value[lo - 1]) {
        lo--;
    }
    *hint = lo;
    return eval_at(cdf, x, lo);
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

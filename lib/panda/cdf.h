/*
 * Flow-size (or value-size) cumulative distributions read from text files.
 *
 * File format: one "<value> <cumulative probability>" pair per line, values
 * and probabilities both nondecreasing, the last probability 1 (within
 * 1e-6).  Blank lines and lines starting with '#' are ignored.  Sampling uses
 * inverse-transform sampling with linear interpolation between points; the
 * first point's probability is the mass at (or below) its value.
 */
#ifndef PANDA_CDF_H
#define PANDA_CDF_H 1

#include <stddef.h>
#include <stdint.h>

#include <panda/rng.h>

#ifdef __cplusplus
extern "C" {
#endif

struct panda_cdf {
    size_t n;
    double *value;      /* n values, nondecreasing. */
    double *prob;       /* n cumulative probabilities, last is 1. */
};

/* Reads 'file'.  Returns NULL on success, else a malloc()ed message naming
 * the file and line (caller frees); 'cdf' is then left empty. */
char *panda_cdf_load(struct panda_cdf *cdf, const char *file);

/* Parses the same format from a NUL-terminated string ('name' is used in
 * error messages). */
char *panda_cdf_parse(struct panda_cdf *cdf, const char *text,
                      const char *name);

/* Checks a CDF built in memory against the same rules as the parser (at
 * least one point, values >= 0, values and probabilities nondecreasing,
 * probabilities in [0, 1], the last 1), with the same messages.  Returns
 * NULL or a malloc()ed message naming the point (caller frees). */
char *panda_cdf_check(const struct panda_cdf *cdf);

void panda_cdf_destroy(struct panda_cdf *);

/* Value at cumulative probability 'u' in [0, 1] (inverse CDF). */
double panda_cdf_quantile(const struct panda_cdf *, double u);

/* F(x): fraction of the distribution at or below 'x'. */
double panda_cdf_eval(const struct panda_cdf *, double x);

/* Mean of the (piecewise-linear) distribution. */
double panda_cdf_mean(const struct panda_cdf *);

/* Draws from 'cdf'. */
static inline double
panda_cdf_sample(const struct panda_cdf *cdf, struct panda_rng *rng)
{
    return panda_cdf_quantile(cdf, panda_rng_uniform(rng));
}

#ifdef __cplusplus
}
#endif

#endif /* cdf.h */

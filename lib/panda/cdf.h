/*
 * Flow-size (or value-size) cumulative distributions read from text files.
 *
 * File format: one "<value> <cumulative probability>" pair per line, values
 * and probabilities both nondecreasing, the last probability 1 (within
 * 1e-6), values at most PANDA_CDF_MAX_VALUE.  Blank lines and lines
 * starting with '#' are ignored.  Sampling uses
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

/* Largest value a CDF may hold: 2^40 (1.1e12; flow sizes of 1 TiB, the load
 * generator's largest request).  The bound keeps every number derived from
 * a CDF finite and exact enough: the mean is at most this, and a value
 * scaled by any MSS (< 2^16, panda-model's packets unit) stays below 2^56,
 * so the model's byte thresholds convert to uint64_t and long long without
 * overflow.  Near DBL_MAX the mean was inf or NaN. */
#define PANDA_CDF_MAX_VALUE 1099511627776.0

struct panda_cdf {
    size_t n;
    double *value;      /* n values, nondecreasing. */
    double *prob;       /* n cumulative probabilities, last is 1. */
};

/* Largest CDF file read: 64 MiB, over a million points at the longest
 * line the parser takes (panda_cdf_parse(): 255 characters); a flow-size
 * distribution needs thousands at most. */
#define PANDA_CDF_MAX_FILE_BYTES (UINT64_C(64) << 20)

/* Reads 'file', a regular file of at most PANDA_CDF_MAX_FILE_BYTES
 * (panda_open_input(): a FIFO or a device is refused).  Returns NULL on
 * success, else a malloc()ed message naming the file and line (caller
 * frees); 'cdf' is then left empty. */
char *panda_cdf_load(struct panda_cdf *cdf, const char *file);

/* Parses the same format from a NUL-terminated string ('name' is used in
 * error messages). */
char *panda_cdf_parse(struct panda_cdf *cdf, const char *text,
                      const char *name);

/* Checks a CDF built in memory against the same rules as the parser (at
 * least one point, values in [0, PANDA_CDF_MAX_VALUE], values and
 * probabilities nondecreasing,
 * probabilities in [0, 1], the last 1), with the same messages.  Returns
 * NULL or a malloc()ed message naming the point (caller frees). */
char *panda_cdf_check(const struct panda_cdf *cdf);

void panda_cdf_destroy(struct panda_cdf *);

/* Value at cumulative probability 'u' in [0, 1] (inverse CDF). */
double panda_cdf_quantile(const struct panda_cdf *, double u);

/* F(x): fraction of the distribution at or below 'x'.  O(log n). */
double panda_cdf_eval(const struct panda_cdf *, double x);

/* The same, searching from point '*hint' (in [0, n]) and leaving there the
 * point found: O(1) when successive calls ask about nearby values (the
 * solvers scanning the breakpoints in order). */
double panda_cdf_eval_near(const struct panda_cdf *, double x, size_t *hint);

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

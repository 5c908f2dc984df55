/*
 * A small, fast, seedable PRNG (xoshiro256** seeded by splitmix64), so that
 * the same seed gives the same sequence on every machine: the load
 * generator, the demo and the benchmarks draw from it.
 */
#ifndef PANDA_RNG_H
#define PANDA_RNG_H 1

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct panda_rng {
    uint64_t s[4];
};

void panda_rng_seed(struct panda_rng *, uint64_t seed);
uint64_t panda_rng_next(struct panda_rng *);
double panda_rng_uniform(struct panda_rng *);       /* [0, 1) */
double panda_rng_exp(struct panda_rng *, double mean);

#ifdef __cplusplus
}
#endif

#endif /* panda/rng.h */

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
static inline uint64_t panda_rng_next(struct panda_rng *);
double panda_rng_uniform(struct panda_rng *);       /* [0, 1) */
double panda_rng_exp(struct panda_rng *, double mean);

/* Inline: the connection table draws from it on the per-packet path (the
 * flow bytes' rounding, conn-table.c). */
static inline uint64_t
panda_rng_rotl_(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* A uniform 64-bit draw (xoshiro256**). */
static inline uint64_t
panda_rng_next(struct panda_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = panda_rng_rotl_(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = panda_rng_rotl_(s[3], 45);
    return result;
}

#ifdef __cplusplus
}
#endif

#endif /* panda/rng.h */

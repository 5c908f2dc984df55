/* The seedable PRNG of lib/panda; see rng.h. */
#include <panda/rng.h>

#include <math.h>

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

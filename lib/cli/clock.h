/*
 * Clocks of the command-line programs and benchmarks.
 */
#ifndef CLI_CLOCK_H
#define CLI_CLOCK_H 1

#include <stdint.h>

uint64_t cli_clock_mono_ns(void);   /* CLOCK_MONOTONIC, nanoseconds. */
uint64_t cli_clock_real_ns(void);   /* CLOCK_REALTIME, nanoseconds. */
double cli_clock_mono_s(void);      /* CLOCK_MONOTONIC, seconds. */

/* CPU time of this process in seconds: on a shared machine the wall clock
 * also counts time spent waiting for a core. */
double cli_clock_cpu_s(void);

/* Maps monotonic timestamps to wall-clock seconds: durations are measured
 * on the monotonic clock, and reported start/end times come from one
 * CLOCK_REALTIME reading taken together with a monotonic one. */
struct cli_clock {
    uint64_t mono0;
    uint64_t real0;
};
void cli_clock_init(struct cli_clock *);
double cli_clock_real_s(const struct cli_clock *, uint64_t mono_ns);

#endif /* cli/clock.h */

/* Clocks of the command-line programs; see clock.h. */
#include <cli/clock.h>

#include <time.h>

static uint64_t
clock_ns(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

uint64_t
cli_clock_mono_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

uint64_t
cli_clock_real_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

double
cli_clock_mono_s(void)
{
    return clock_ns(CLOCK_MONOTONIC) / 1e9;
}

double
cli_clock_cpu_s(void)
{
    return clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9;
}

void
cli_clock_init(struct cli_clock *c)
{
    c->mono0 = cli_clock_mono_ns();
    c->real0 = cli_clock_real_ns();
}

double
cli_clock_real_s(const struct cli_clock *c, uint64_t mono_ns)
{
    double delta = (double) mono_ns - (double) c->mono0;

    return (c->real0 + delta) / 1e9;
}

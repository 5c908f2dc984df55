/*
 * Option values of the command-line programs: integers, numbers, sizes,
 * rates and durations, each checked against a range.  On bad input the
 * exiting forms end the program as a usage error (cli_log_usage(), exit
 * status 2) with a message naming the option, e.g.
 *     panda-fg-client: --size: "ten" is not a size (e.g. 1000, 10K, 1.5Mi,
 *     64KiB)
 *     panda-model: --levels: 9 is out of range [1, 8]
 *
 * Sizes, rates and durations share one syntax, the same in every program
 * of the project, C and Python (pandaovs.cli; tests/vectors/cli-units.txt
 * holds the cases both implementations are tested on): a decimal number,
 * optionally with a fraction ("1.5"), then a unit:
 *     sizes, bytes     K M G T (10^3, 10^6, 10^9, 10^12), Ki Mi Gi Ti
 *                      (2^10, ...), case-insensitive, optionally followed
 *                      by B: 1500, 1.5K, 64KiB, 2MB; whole bytes only
 *     rates, bit/s     the same multipliers, optionally followed by
 *                      "bit": 50M, 50Mbit, 1.5G, 100mbit ("bps" is refused:
 *                      tc reads it as bytes per second)
 *     durations        ns us ms s m (or min) h: 500ms, 10s, 1.5m
 * A size is in bytes unless the option's name says bits; a number without
 * a unit is the option's own unit (bytes; for rates and durations the
 * caller says which, and --help documents it).
 */
#ifndef CLI_PARSE_H
#define CLI_PARSE_H 1

#include <stdbool.h>
#include <stdint.h>

/* A decimal integer in [min, max] (no unit). */
uint64_t cli_parse_u64(const char *option, const char *s,
                       uint64_t min, uint64_t max);

/* A finite number in [min, max] (no unit). */
double cli_parse_double(const char *option, const char *s,
                        double min, double max);

/* A size in bytes in [min, max]. */
uint64_t cli_parse_bytes(const char *option, const char *s,
                         uint64_t min, uint64_t max);

/* A rate in bit/s in [min, max]; a number without a unit is 'bare_unit'
 * bit/s (1, or 1e6 for an option that has always taken Mbit/s). */
double cli_parse_rate(const char *option, const char *s, double bare_unit,
                      double min, double max);

/* A duration in seconds in [min, max]; a number without a unit is
 * 'bare_unit' seconds.  Options whose bare numbers were not seconds
 * (bare_unit != 1) warn that a unit should be given: bare numbers mean
 * seconds everywhere else. */
double cli_parse_duration(const char *option, const char *s,
                          double bare_unit, double min, double max);

/* The forms that do not exit: true and the value in '*out' if 's' is a
 * size, rate or duration (range unchecked), else false.  '*bare' (may be
 * NULL) tells whether the duration had no unit. */
bool cli_parse_bytes_value(const char *s, uint64_t *out);
bool cli_parse_rate_value(const char *s, double bare_unit, double *out);
bool cli_parse_duration_value(const char *s, double bare_unit, double *out,
                              bool *bare);

#endif /* cli/parse.h */

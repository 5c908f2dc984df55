/*
 * Option values of the command-line programs: integers, byte sizes and
 * numbers, each checked against a range.  On bad input these exit through
 * cli_log_fatal() with a message naming the option, e.g.
 *     panda-fg-client: --size: "ten" is not a valid size (e.g. 1000, 10K,
 *     10M, 64KiB)
 *     panda-model: --levels: 9 is out of range [1, 8]
 */
#ifndef CLI_PARSE_H
#define CLI_PARSE_H 1

#include <stdint.h>

/* A decimal integer in [min, max]. */
uint64_t cli_parse_u64(const char *option, const char *s,
                       uint64_t min, uint64_t max);

/* A byte count in [min, max]: a decimal integer with an optional suffix,
 * decimal K, M, G (10^3, 10^6, 10^9) or binary Ki, Mi, Gi, optionally
 * followed by "B". */
uint64_t cli_parse_bytes(const char *option, const char *s,
                         uint64_t min, uint64_t max);

/* A finite number in [min, max]. */
double cli_parse_double(const char *option, const char *s,
                        double min, double max);

#endif /* cli/parse.h */

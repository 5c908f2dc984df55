/* Option values of the command-line programs; see parse.h. */
#include <cli/parse.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cli/log.h>

static uint64_t
parse_u64_scaled(const char *option, const char *s, uint64_t min,
                 uint64_t max, bool suffixes)
{
    static const struct {
        const char *name;
        uint64_t mult;
    } units[] = {
        { "", 1 }, { "B", 1 },
        { "K", 1000 }, { "KB", 1000 }, { "k", 1000 }, { "kB", 1000 },
        { "M", 1000000 }, { "MB", 1000000 },
        { "G", 1000000000 }, { "GB", 1000000000 },
        { "Ki", 1024 }, { "KiB", 1024 },
        { "Mi", 1048576 }, { "MiB", 1048576 },
        { "Gi", 1073741824 }, { "GiB", 1073741824 },
    };
    unsigned long long v;
    uint64_t mult = 0;
    char *end;
    size_t i;

    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') {
        goto bad;
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (end == s || errno) {
        goto bad;
    }
    for (i = 0; i < sizeof units / sizeof *units; i++) {
        if (!strcmp(end, units[i].name)) {
            mult = units[i].mult;
            break;
        }
    }
    if (!mult || (!suffixes && mult != 1)) {
        goto bad;
    }
    if (v > UINT64_MAX / mult) {
        goto range;
    }
    v *= mult;
    if (v < min || v > max) {
        goto range;
    }
    return v;

bad:
    cli_log_fatal("%s: \"%s\" is not a valid %s", option, s ? s : "",
                  suffixes ? "size (e.g. 1000, 10K, 10M, 64KiB)"
                           : "non-negative integer");
range:
    cli_log_fatal("%s: %s is out of range [%llu, %llu]", option, s,
                  (unsigned long long) min, (unsigned long long) max);
}

uint64_t
cli_parse_u64(const char *option, const char *s, uint64_t min, uint64_t max)
{
    return parse_u64_scaled(option, s, min, max, false);
}

uint64_t
cli_parse_bytes(const char *option, const char *s, uint64_t min, uint64_t max)
{
    return parse_u64_scaled(option, s, min, max, true);
}

double
cli_parse_double(const char *option, const char *s, double min, double max)
{
    char *end;
    double v;

    errno = 0;
    v = s && *s ? strtod(s, &end) : NAN;
    if (!s || !*s || *end || errno || !isfinite(v)) {
        cli_log_fatal("%s: \"%s\" is not a valid number", option, s ? s : "");
    }
    if (v < min || v > max) {
        cli_log_fatal("%s: %s is out of range [%g, %g]", option, s, min, max);
    }
    return v;
}

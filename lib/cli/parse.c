/* Option values of the command-line programs; see parse.h. */
#include <cli/parse.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cli/log.h>

struct unit {
    const char *name;
    double mult;
};

/* Multipliers of sizes and rates (matched case-insensitively). */
static const struct unit multipliers[] = {
    { "", 1 },
    { "k", 1e3 }, { "m", 1e6 }, { "g", 1e9 }, { "t", 1e12 },
    { "ki", 1024.0 }, { "mi", 1048576.0 }, { "gi", 1073741824.0 },
    { "ti", 1099511627776.0 },
};

static const struct unit time_units[] = {
    { "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 },
    { "m", 60 }, { "min", 60 }, { "h", 3600 },
};

/* Splits 's' into a non-negative decimal number (digits, optionally a
 * fraction) and the rest ('*unit'). */
static bool
scan_number(const char *s, double *value, const char **unit)
{
    const char *p = s;
    char *end;

    if (!s || !isdigit((unsigned char) *p)) {
        return false;
    }
    while (isdigit((unsigned char) *p)) {
        p++;
    }
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char) *p)) {
            return false;
        }
        while (isdigit((unsigned char) *p)) {
            p++;
        }
    }
    errno = 0;
    *value = strtod(s, &end);
    if (end != p || errno || !isfinite(*value)) {
        return false;
    }
    *unit = p;
    return true;
}

/* The multiplier named by the start of 'unit' (the longest match), with
 * the rest of 'unit' in '*rest'; false if none. */
static bool
find_multiplier(const char *unit, double *mult, const char **rest)
{
    size_t best = 0, i;
    bool found = false;

    for (i = 0; i < sizeof multipliers / sizeof *multipliers; i++) {
        size_t n = strlen(multipliers[i].name);

        if (!strncasecmp(unit, multipliers[i].name, n)
            && (!found || n > best)) {
            best = n;
            *mult = multipliers[i].mult;
            found = true;
        }
    }
    *rest = unit + best;
    return found;
}

bool
cli_parse_bytes_value(const char *s, uint64_t *out)
{
    const char *unit, *rest;
    double v, mult;

    if (!scan_number(s, &v, &unit) || !find_multiplier(unit, &mult, &rest)
        || (*rest && strcasecmp(rest, "b"))) {
        return false;
    }
    v *= mult;
    /* Whole bytes, and exactly representable (2^53). */
    if (v != floor(v) || v > 9007199254740992.0) {
        return false;
    }
    *out = (uint64_t) v;
    return true;
}

bool
cli_parse_rate_value(const char *s, double bare_unit, double *out)
{
    const char *unit, *rest;
    double v, mult;

    if (!scan_number(s, &v, &unit)) {
        return false;
    }
    if (!*unit) {
        *out = v * bare_unit;
        return true;
    }
    if (!find_multiplier(unit, &mult, &rest)
        || (*rest && strcasecmp(rest, "bit"))) {
        return false;
    }
    *out = v * mult;
    return true;
}

bool
cli_parse_duration_value(const char *s, double bare_unit, double *out,
                         bool *bare)
{
    const char *unit;
    double v;
    size_t i;

    if (!scan_number(s, &v, &unit)) {
        return false;
    }
    if (bare) {
        *bare = !*unit;
    }
    if (!*unit) {
        *out = v * bare_unit;
        return true;
    }
    for (i = 0; i < sizeof time_units / sizeof *time_units; i++) {
        if (!strcmp(unit, time_units[i].name)) {
            *out = v * time_units[i].mult;
            return true;
        }
    }
    return false;
}

uint64_t
cli_parse_u64(const char *option, const char *s, uint64_t min, uint64_t max)
{
    unsigned long long v;
    char *end;

    if (!s || !isdigit((unsigned char) *s)) {
        goto bad;
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (*end) {
        goto bad;
    }
    if (errno || v < min || v > max) {
        cli_log_usage("%s: %s is out of range [%llu, %llu]", option, s,
                      (unsigned long long) min, (unsigned long long) max);
    }
    return v;

bad:
    cli_log_usage("%s: \"%s\" is not a non-negative integer", option,
                  s ? s : "");
}

uint64_t
cli_parse_bytes(const char *option, const char *s, uint64_t min, uint64_t max)
{
    uint64_t v;

    if (!cli_parse_bytes_value(s, &v)) {
        cli_log_usage("%s: \"%s\" is not a size in bytes (e.g. 1000, 10K,"
                      " 1.5Mi, 64KiB)", option, s ? s : "");
    }
    if (v < min || v > max) {
        cli_log_usage("%s: %s is out of range [%llu, %llu] bytes", option, s,
                      (unsigned long long) min, (unsigned long long) max);
    }
    return v;
}

double
cli_parse_rate(const char *option, const char *s, double bare_unit,
               double min, double max)
{
    double v;

    if (!cli_parse_rate_value(s, bare_unit, &v)) {
        cli_log_usage("%s: \"%s\" is not a rate (e.g. 50M, 1.5G, 100Mbit;"
                      " bit/s)", option, s ? s : "");
    }
    if (v < min || v > max) {
        cli_log_usage("%s: %s is out of range [%g, %g] bit/s", option, s,
                      min, max);
    }
    return v;
}

double
cli_parse_duration(const char *option, const char *s, double bare_unit,
                   double min, double max)
{
    bool bare;
    double v;

    if (!cli_parse_duration_value(s, bare_unit, &v, &bare)) {
        cli_log_usage("%s: \"%s\" is not a duration (e.g. 10s, 500ms, 2m)",
                      option, s ? s : "");
    }
    if (v < min || v > max) {
        cli_log_usage("%s: %s is out of range [%g s, %g s]", option, s, min,
                      max);
    }
    if (bare && bare_unit != 1) {
        cli_log_warn("%s %s: a number without a unit is taken as %s here,"
                     " as before; give the unit (e.g. %s%s): bare numbers"
                     " mean seconds in every other option", option, s,
                     bare_unit == 1e-3 ? "milliseconds"
                     : bare_unit == 1e-6 ? "microseconds" : "seconds",
                     s, bare_unit == 1e-3 ? "ms"
                     : bare_unit == 1e-6 ? "us" : "s");
    }
    return v;
}

double
cli_parse_double(const char *option, const char *s, double min, double max)
{
    char *end;
    double v;

    errno = 0;
    v = s && *s ? strtod(s, &end) : NAN;
    if (!s || !*s || *end || errno || !isfinite(v)) {
        cli_log_usage("%s: \"%s\" is not a number", option, s ? s : "");
    }
    if (v < min || v > max) {
        cli_log_usage("%s: %s is out of range [%g, %g]", option, s, min, max);
    }
    return v;
}

#include <panda/base.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static void
out_of_memory(void)
{
    fputs("panda: out of memory\n", stderr);
    abort();
}

void *
panda_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p) {
        out_of_memory();
    }
    return p;
}

void *
panda_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);

    if (!p) {
        out_of_memory();
    }
    return p;
}

void *
panda_xrealloc(void *old, size_t n)
{
    void *p = realloc(old, n ? n : 1);

    if (!p) {
        out_of_memory();
    }
    return p;
}

char *
panda_vasprintf(const char *fmt, va_list args)
{
    va_list copy;
    int n;
    char *s;

    va_copy(copy, args);
    n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) {
        n = 0;
    }
    s = panda_xmalloc((size_t) n + 1);
    vsnprintf(s, (size_t) n + 1, fmt, args);
    return s;
}

char *
panda_asprintf(const char *fmt, ...)
{
    va_list args;
    char *s;

    va_start(args, fmt);
    s = panda_vasprintf(fmt, args);
    va_end(args);
    return s;
}

void
panda_append(char **s, const char *sep, const char *fmt, ...)
{
    va_list args;
    char *more;

    va_start(args, fmt);
    more = panda_vasprintf(fmt, args);
    va_end(args);
    if (*s) {
        char *joined = panda_asprintf("%s%s%s", *s, sep, more);

        free(*s);
        free(more);
        *s = joined;
    } else {
        *s = more;
    }
}

char *
panda_parse_uint(const char *field, const char *s, uint64_t min,
                 uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (*s == '-' || *s == '\0') {
        return panda_asprintf("%s: \"%s\" is not a nonnegative integer",
                              field, s);
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || end == s) {
        return panda_asprintf("%s: \"%s\" is not a nonnegative integer",
                              field, s);
    }
    if (v < min || v > max) {
        return min
               ? panda_asprintf("%s: %s out of range (%" PRIu64 "..%" PRIu64
                                ")", field, s, min, max)
               : panda_asprintf("%s: %s out of range (max %" PRIu64 ")",
                                field, s, max);
    }
    *out = v;
    return NULL;
}

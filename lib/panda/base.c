#include <panda/base.h>

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

#include <panda/base.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

    /* Digits alone: strtoull() would also take leading space, a sign
     * ("+5"), and "-1" as 2^64 - 1. */
    if (*s < '0' || *s > '9') {
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

static const char *
file_kind(mode_t mode)
{
    return (S_ISDIR(mode) ? "a directory"
            : S_ISCHR(mode) ? "a character device"
            : S_ISBLK(mode) ? "a block device"
            : S_ISFIFO(mode) ? "a FIFO"
            : S_ISSOCK(mode) ? "a socket"
            : "not a plain file");
}

FILE *
panda_open_input(const char *file, uint64_t max_bytes, const char *what,
                 char **errp)
{
    struct stat st;
    int fd, flags;
    FILE *f;

    *errp = NULL;
    /* O_NONBLOCK: opening a FIFO without a writer would block. */
    fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *errp = panda_asprintf("%s: cannot open%s%s (%s)", file,
                               what ? " " : "", what ? what : "",
                               strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st)) {
        *errp = panda_asprintf("%s: cannot stat (%s)", file,
                               strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        *errp = panda_asprintf("%s: not a regular file (%s): refused",
                               file, file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    if ((uint64_t) st.st_size > max_bytes) {
        *errp = panda_asprintf("%s: %" PRIu64 " bytes, above the limit of %"
                               PRIu64 " bytes", file,
                               (uint64_t) st.st_size, max_bytes);
        close(fd);
        return NULL;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0
        || !(f = fdopen(fd, "rb"))) {
        *errp = panda_asprintf("%s: cannot open%s%s (%s)", file,
                               what ? " " : "", what ? what : "",
                               strerror(errno));
        close(fd);
        return NULL;
    }
    return f;
}

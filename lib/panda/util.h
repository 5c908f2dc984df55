/* Small helpers shared by lib/panda and the tools. */
#ifndef PANDA_UTIL_H
#define PANDA_UTIL_H 1

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PANDA_PRINTF(FMT, ARGS) __attribute__((__format__(printf, FMT, ARGS)))
#else
#define PANDA_PRINTF(FMT, ARGS)
#endif

/* Allocation that aborts with a message on failure. */
void *panda_xmalloc(size_t);
void *panda_xcalloc(size_t, size_t);
void *panda_xrealloc(void *, size_t);

/* malloc()ed formatted strings. */
char *panda_asprintf(const char *fmt, ...) PANDA_PRINTF(1, 2);
char *panda_vasprintf(const char *fmt, va_list);

/* Appends formatted text to the malloc()ed string '*s' (NULL: none yet),
 * with 'sep' between the old text and the new. */
void panda_append(char **s, const char *sep, const char *fmt, ...)
    PANDA_PRINTF(3, 4);

/* A 64-bit finaliser (MurmurHash3's fmix64): every input bit moves every
 * output bit, for hash indexes over caller-supplied keys and for seeds. */
static inline uint64_t
panda_mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* Parses 's' as a decimal integer in [min, max] into '*out'.  Returns NULL,
 * or a malloc()ed message starting with "'field': " (e.g. "levels: 9 out
 * of range (1..8)"); '*out' is unchanged on error.  The text parsers of
 * lib/panda share it so that their messages read alike. */
char *panda_parse_uint(const char *field, const char *s, uint64_t min,
                       uint64_t max, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* util.h */

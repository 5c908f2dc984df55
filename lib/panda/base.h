/*
 * Small helpers shared by lib/panda and the tools: printf-format checking,
 * branch hints, allocation and formatted strings.
 *
 * The x-allocators abort with a message when memory runs out.  They are for
 * the tools and for the offline model (CDF files, histograms, solvers); the
 * code that Open vSwitch's datapath calls (policy checks, the wire codec,
 * the connection table) never uses them and reports allocation failure as
 * an error instead, so that ovs-vswitchd never aborts inside lib/panda.
 */
#ifndef PANDA_BASE_H
#define PANDA_BASE_H 1

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PANDA_PRINTF(FMT, ARGS) __attribute__((__format__(printf, FMT, ARGS)))
#define PANDA_LIKELY(x) __builtin_expect(!!(x), 1)
#define PANDA_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define PANDA_PRINTF(FMT, ARGS)
#define PANDA_LIKELY(x) (x)
#define PANDA_UNLIKELY(x) (x)
#endif

/* Allocation that aborts with a message on failure (tools only). */
void *panda_xmalloc(size_t);
void *panda_xcalloc(size_t, size_t);
void *panda_xrealloc(void *, size_t);

/* malloc()ed formatted strings (aborting on failure, like the above). */
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

/* Opens 'file' for reading (tools: CDF files, the offline model's inputs)
 * if it is a regular file of at most 'max_bytes' bytes: a FIFO, a device
 * (/dev/zero), a socket or a directory is refused, without blocking on it,
 * and so is a file over the limit, so that no input can make a tool read
 * without end.  A caller that reads to the end also stops at 'max_bytes'
 * (a file that grows while it is read).  Returns the stream, or NULL with
 * a malloc()ed message naming the file in '*errp' ("FILE: cannot open
 * WHAT (reason)", "FILE: not a regular file (a character device)", "FILE:
 * N bytes, above the limit of M bytes"); 'what' (e.g. "CDF file") may be
 * NULL. */
FILE *panda_open_input(const char *file, uint64_t max_bytes,
                       const char *what, char **errp);

/* Parses 's' as a decimal integer in [min, max] into '*out'.  Returns NULL,
 * or a malloc()ed message starting with "'field': " (e.g. "levels: 9 out
 * of range (1..8)"); '*out' is unchanged on error.  The text parsers of
 * lib/panda share it so that their messages read alike. */
char *panda_parse_uint(const char *field, const char *s, uint64_t min,
                       uint64_t max, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* panda/base.h */

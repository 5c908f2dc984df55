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

#ifdef __cplusplus
}
#endif

#endif /* panda/base.h */

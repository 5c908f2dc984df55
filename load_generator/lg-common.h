/*
 * Code shared by the load generator programs (panda-fg-server,
 * panda-fg-client, panda-mc-client): clocks, percentiles, a small JSON
 * writer, argument parsing, the progress line, socket helpers and the flow
 * generator's request format.
 */
#ifndef LG_COMMON_H
#define LG_COMMON_H 1

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <panda/base.h>

/* ---- Clocks. ---- */

uint64_t lg_mono_ns(void);          /* CLOCK_MONOTONIC, nanoseconds. */
uint64_t lg_real_ns(void);          /* CLOCK_REALTIME, nanoseconds. */

/* Maps monotonic timestamps to wall-clock seconds: durations are measured
 * on the monotonic clock, and reported start/end times come from one
 * CLOCK_REALTIME reading taken together with a monotonic one. */
struct lg_clock {
    uint64_t mono0;
    uint64_t real0;
};
void lg_clock_init(struct lg_clock *);
double lg_clock_real_s(const struct lg_clock *, uint64_t mono_ns);

/* ---- Statistics. ---- */

/* Nearest-rank percentile of 'n' ascending 'sorted' values: the smallest
 * value such that at least p percent of the values are at or below it,
 * i.e. sorted[ceil(p / 100 * n) - 1] (p = 0 gives the minimum).  Returns NAN
 * when n == 0.  'p' is in percent, 0..100. */
double lg_percentile(const double *sorted, size_t n, double p);

struct lg_summary {
    size_t n;
    double mean, min, max;
    double p50, p90, p99, p999;
};

/* Sorts 'values' in place and fills 's'; all fields but 'n' are NAN when
 * n == 0. */
void lg_summarize(double *values, size_t n, struct lg_summary *s);

/* A growable array of doubles. */
struct lg_vec {
    double *v;
    size_t n, cap;
};
void lg_vec_push(struct lg_vec *, double);
void lg_vec_free(struct lg_vec *);

/* ---- JSON output. ---- */

#define LG_JSON_MAX_DEPTH 8
struct lg_json {
    FILE *f;
    int depth;
    bool comma[LG_JSON_MAX_DEPTH];
};

/* 'key' is NULL for the top-level object and for array elements. */
void lg_json_start(struct lg_json *, FILE *);
void lg_json_finish(struct lg_json *);
void lg_json_object(struct lg_json *, const char *key);
void lg_json_end_object(struct lg_json *);
void lg_json_array(struct lg_json *, const char *key);
void lg_json_end_array(struct lg_json *);
void lg_json_str(struct lg_json *, const char *key, const char *value);
void lg_json_double(struct lg_json *, const char *key, double value);
void lg_json_u64(struct lg_json *, const char *key, uint64_t value);
void lg_json_bool(struct lg_json *, const char *key, bool value);
void lg_json_null(struct lg_json *, const char *key);
/* Writes 's' as {"count", "mean", "min", "p50", "p90", "p99", "p99.9",
 * "max"}; undefined statistics (no samples) are written as null. */
void lg_json_summary(struct lg_json *, const char *key,
                     const struct lg_summary *s);

/* Opens 'name' for writing ("-" is stdout).  Exits with a message on
 * failure. */
FILE *lg_open_output(const char *name);
/* Closes 'f' (unless stdout) and exits with a message on a write error. */
void lg_close_output(FILE *f, const char *name);

/* ---- Errors and argument parsing. ---- */

extern const char *lg_program;

void lg_fatal(const char *fmt, ...) PANDA_PRINTF(1, 2)
    __attribute__((__noreturn__));
void lg_warn(const char *fmt, ...) PANDA_PRINTF(1, 2);

/* These parse option values and exit with a clear message naming 'option'
 * on bad input.  lg_parse_bytes() accepts the decimal suffixes K, M, G
 * (10^3, 10^6, 10^9) and the binary ones Ki, Mi, Gi, optionally followed by
 * "B". */
uint64_t lg_parse_u64(const char *option, const char *s,
                      uint64_t min, uint64_t max);
uint64_t lg_parse_bytes(const char *option, const char *s,
                        uint64_t min, uint64_t max);
double lg_parse_double(const char *option, const char *s,
                       double min, double max);

/* ---- Progress line (stderr, only when it is a terminal). ---- */

struct lg_progress {
    bool enabled;
    bool shown;
    uint64_t next_ns;
};
void lg_progress_init(struct lg_progress *, int mode); /* -1 auto, 0, 1 */
/* Redraws the line at most once a second. */
void lg_progress_update(struct lg_progress *, uint64_t now_ns,
                        const char *fmt, ...) PANDA_PRINTF(3, 4);
void lg_progress_end(struct lg_progress *);

/* ---- Sockets. ---- */

/* Resolves 'host' and 'port' (numeric or service name) into 'ss'.  With
 * 'passive', a NULL host means the wildcard address.  Returns NULL or a
 * malloc()ed error message. */
char *lg_resolve(const char *host, const char *port, bool passive,
                 struct sockaddr_storage *ss, socklen_t *len);
/* "host:port" (IPv6 in brackets) in a static buffer. */
const char *lg_addr_str(const struct sockaddr_storage *, socklen_t);
/* Sets the DSCP (0..63) of outgoing packets on 'fd'.  Returns 0 or errno. */
int lg_set_dscp(int fd, int family, int dscp);
/* Raises RLIMIT_NOFILE to its hard limit. */
void lg_raise_nofile(void);

/* ---- Flow generator request. ----
 *
 * The client sends one 24-byte request per flow; all fields are in network
 * byte order:
 *     0  magic "PFG1" (0x50464731)
 *     4  flags  (LG_FG_*)
 *     5  dscp   (0..63, used with LG_FG_DSCP)
 *     6  reserved, 0
 *     8  flow id
 *    16  response size in bytes (1 .. LG_FG_MAX_SIZE)
 * The server answers with exactly 'size' bytes.  With LG_FG_CLOSE it then
 * closes the connection, otherwise it waits for the next request. */
#define LG_FG_MAGIC 0x50464731u
#define LG_FG_REQ_LEN 24
#define LG_FG_CLOSE 0x01
#define LG_FG_DSCP 0x02
#define LG_FG_MAX_SIZE (UINT64_C(1) << 40)

struct lg_fg_req {
    uint8_t flags;
    uint8_t dscp;
    uint64_t flow_id;
    uint64_t size;
};
void lg_fg_req_encode(const struct lg_fg_req *, uint8_t buf[LG_FG_REQ_LEN]);
/* Returns NULL, or a static string saying what is wrong. */
const char *lg_fg_req_decode(const uint8_t buf[LG_FG_REQ_LEN],
                             struct lg_fg_req *);

#endif /* lg-common.h */

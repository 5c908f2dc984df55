/*
 * Code shared by the load generator programs (panda-fg-server,
 * panda-fg-client, panda-mc-client, panda-adp-server, panda-adp-client): percentiles, output files, the progress
 * line, socket helpers and the flow generator's request format.  The JSON
 * writer, option parsing, clocks and error exits are the project's shared
 * tool layer (lib/cli), which these headers pull in.
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

#include <cli/clock.h>
#include <cli/json.h>
#include <cli/log.h>
#include <cli/opt.h>
#include <cli/parse.h>

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

/* ---- Output. ---- */

/* Writes 's' as {"count", "mean", "min", "p50", "p90", "p99", "p99.9",
 * "max"}; undefined statistics (no samples) are written as null. */
void lg_json_summary(struct cli_json *, const char *key,
                     const struct lg_summary *s);

/* Opens 'name' for writing ("-" is stdout).  Exits with a message on
 * failure. */
FILE *lg_open_output(const char *name);
/* Closes 'f' (unless stdout) and exits with a message on a write error. */
void lg_close_output(FILE *f, const char *name);

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

/* ---- ADPS request/response (panda-adp-server, panda-adp-client). ----
 *
 * A 16-byte request, which the server answers by sending it back after
 * 'work_us' microseconds of processing:
 *     0  type     4 bytes for the server's classifier to match (a keyword
 *                 rule, e.g. "LATS" latency-sensitive, "BULK")
 *     4  work_us  processing time asked for (network byte order)
 *     8  id       the client's request number (network byte order) */
#define LG_ADP_REQ_LEN 16
#define LG_ADP_MAX_WORK_US 10000000u    /* 10 s. */

struct lg_adp_req {
    char type[4];
    uint32_t work_us;
    uint64_t id;
};
void lg_adp_req_encode(const struct lg_adp_req *,
                       uint8_t buf[LG_ADP_REQ_LEN]);
/* Returns NULL, or a static string saying what is wrong. */
const char *lg_adp_req_decode(const uint8_t buf[LG_ADP_REQ_LEN],
                              struct lg_adp_req *);

/* ---- memcached text protocol: replies. ----
 *
 * The replies panda-mc-client expects, one request outstanding:
 *     SET: "STORED\r\n"
 *     GET: "END\r\n" (a miss) or
 *          "VALUE <key> <flags> <bytes>\r\n<data>\r\nEND\r\n"
 * and nothing after them.  The parser works on what has been received so
 * far and says how much more it needs, so that it never reads a byte past
 * the reply and is the same code for the client and its fuzz target. */
enum lg_mc_reply {
    LG_MC_NEED_MORE,    /* Incomplete: receive until 'need' bytes. */
    LG_MC_STORED,       /* SET done. */
    LG_MC_HIT,          /* GET hit: 'value_len' bytes of data. */
    LG_MC_MISS,         /* GET miss. */
    LG_MC_BAD,          /* Malformed or unexpected: 'why' says what. */
};

/* Longest reply line accepted before its "\r\n". */
#define LG_MC_MAX_LINE 4096

/* Parses the 'len' bytes at 'buf', the reply to a GET ('get') or a SET
 * whose values are at most 'max_value' bytes.  On LG_MC_NEED_MORE, '*need'
 * (> len) is the total the reply needs at least; on LG_MC_HIT,
 * '*value_len' is the value's size; on LG_MC_BAD, 'why' (of 'why_size'
 * bytes) says what is wrong. */
enum lg_mc_reply lg_mc_parse_reply(const char *buf, size_t len, bool get,
                                   uint32_t max_value, size_t *need,
                                   uint32_t *value_len, char *why,
                                   size_t why_size);

#endif /* lg-common.h */

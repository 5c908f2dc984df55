/* Code shared by the load generator programs; see lg-common.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "lg-common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ---- Statistics. ---- */

double
lg_percentile(const double *sorted, size_t n, double p)
{
    double rank;
    size_t r;

    if (n == 0) {
        return NAN;
    }
    if (p <= 0) {
        return sorted[0];
    }
    if (p >= 100) {
        return sorted[n - 1];
    }
    /* The epsilon keeps e.g. 99.9% of 1000 at rank 999 despite rounding in
     * 99.9 * 1000 / 100. */
    rank = ceil(p * (double) n / 100.0 - 1e-9);
    r = rank < 1 ? 1 : (size_t) rank;
    if (r > n) {
        r = n;
    }
    return sorted[r - 1];
}

static int
cmp_double(const void *a_, const void *b_)
{
    double a = *(const double *) a_;
    double b = *(const double *) b_;

    return a < b ? -1 : a > b;
}

void
lg_summarize(double *values, size_t n, struct lg_summary *s)
{
    double sum = 0;
    size_t i;

    s->n = n;
    if (n == 0) {
        s->mean = s->min = s->max = NAN;
        s->p50 = s->p90 = s->p99 = s->p999 = NAN;
        return;
    }
    qsort(values, n, sizeof *values, cmp_double);
    for (i = 0; i < n; i++) {
        sum += values[i];
    }
    s->mean = sum / n;
    s->min = values[0];
    s->max = values[n - 1];
    s->p50 = lg_percentile(values, n, 50);
    s->p90 = lg_percentile(values, n, 90);
    s->p99 = lg_percentile(values, n, 99);
    s->p999 = lg_percentile(values, n, 99.9);
}

void
lg_vec_push(struct lg_vec *v, double x)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 256;
        v->v = panda_xrealloc(v->v, v->cap * sizeof *v->v);
    }
    v->v[v->n++] = x;
}

void
lg_vec_free(struct lg_vec *v)
{
    free(v->v);
    v->v = NULL;
    v->n = v->cap = 0;
}

/* ---- Output. ---- */

void
lg_json_summary(struct cli_json *j, const char *key,
                const struct lg_summary *s)
{
    cli_json_object(j, key);
    cli_json_u64(j, "count", s->n);
    cli_json_double(j, "mean", s->mean);
    cli_json_double(j, "min", s->min);
    cli_json_double(j, "p50", s->p50);
    cli_json_double(j, "p90", s->p90);
    cli_json_double(j, "p99", s->p99);
    cli_json_double(j, "p99.9", s->p999);
    cli_json_double(j, "max", s->max);
    cli_json_end_object(j);
}

FILE *
lg_open_output(const char *name)
{
    FILE *f;

    if (!strcmp(name, "-")) {
        return stdout;
    }
    f = fopen(name, "w");
    if (!f) {
        cli_log_fatal("%s: cannot open for writing (%s)", name, strerror(errno));
    }
    return f;
}

void
lg_close_output(FILE *f, const char *name)
{
    bool bad = ferror(f) != 0;

    if (f == stdout) {
        bad |= fflush(f) != 0;
    } else {
        bad |= fclose(f) != 0;
    }
    if (bad) {
        cli_log_fatal("%s: write error (%s)", name, strerror(errno));
    }
}

/* ---- Progress line. ---- */

void
lg_progress_init(struct lg_progress *p, int mode)
{
    p->enabled = mode < 0 ? isatty(STDERR_FILENO) : mode > 0;
    p->shown = false;
    p->next_ns = 0;
}

void
lg_progress_update(struct lg_progress *p, uint64_t now_ns,
                   const char *fmt, ...)
{
    va_list args;

    if (!p->enabled || now_ns < p->next_ns) {
        return;
    }
    p->next_ns = now_ns + 1000000000u;
    fprintf(stderr, "\r%s: ", cli_log_program());
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputs("\033[K", stderr);
    fflush(stderr);
    p->shown = true;
}

void
lg_progress_end(struct lg_progress *p)
{
    if (p->shown) {
        fputc('\n', stderr);
        p->shown = false;
    }
}

/* ---- Sockets. ---- */

char *
lg_resolve(const char *host, const char *port, bool passive,
           struct sockaddr_storage *ss, socklen_t *len)
{
    struct addrinfo hints, *res;
    int error;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    error = getaddrinfo(host, port, &hints, &res);
    if (error) {
        return panda_asprintf("cannot resolve \"%s\" port \"%s\" (%s)",
                              host ? host : "*", port ? port : "",
                              gai_strerror(error));
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return NULL;
}

const char *
lg_addr_str(const struct sockaddr_storage *ss, socklen_t len)
{
    static char buf[INET6_ADDRSTRLEN + 16];
    char host[INET6_ADDRSTRLEN], serv[16];

    if (getnameinfo((const struct sockaddr *) ss, len, host, sizeof host,
                    serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV)) {
        return "?";
    }
    snprintf(buf, sizeof buf, ss->ss_family == AF_INET6 ? "[%s]:%s"
                                                         : "%s:%s",
             host, serv);
    return buf;
}

int
lg_set_dscp(int fd, int family, int dscp)
{
    int tos = dscp << 2;
    int r;

    if (family == AF_INET6) {
        r = setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos);
    } else {
        r = setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
    }
    return r ? errno : 0;
}

void
lg_raise_nofile(void)
{
    struct rlimit rl;

    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* ---- Flow generator request. ---- */

static void
put32(uint8_t *p, uint32_t x)
{
    p[0] = x >> 24;
    p[1] = x >> 16;
    p[2] = x >> 8;
    p[3] = x;
}

static uint32_t
get32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16)
           | ((uint32_t) p[2] << 8) | p[3];
}

void
lg_fg_req_encode(const struct lg_fg_req *r, uint8_t buf[LG_FG_REQ_LEN])
{
    put32(buf, LG_FG_MAGIC);
    buf[4] = r->flags;
    buf[5] = r->dscp;
    buf[6] = buf[7] = 0;
    put32(buf + 8, r->flow_id >> 32);
    put32(buf + 12, (uint32_t) r->flow_id);
    put32(buf + 16, r->size >> 32);
    put32(buf + 20, (uint32_t) r->size);
}

const char *
lg_fg_req_decode(const uint8_t buf[LG_FG_REQ_LEN], struct lg_fg_req *r)
{
    if (get32(buf) != LG_FG_MAGIC) {
        return "bad magic (not a panda-fg-client request)";
    }
    r->flags = buf[4];
    r->dscp = buf[5];
    r->flow_id = ((uint64_t) get32(buf + 8) << 32) | get32(buf + 12);
    r->size = ((uint64_t) get32(buf + 16) << 32) | get32(buf + 20);
    if (r->flags & ~(LG_FG_CLOSE | LG_FG_DSCP)) {
        return "unknown flags";
    }
    if ((r->flags & LG_FG_DSCP) && r->dscp > 63) {
        return "DSCP out of range";
    }
    if (r->size == 0 || r->size > LG_FG_MAX_SIZE) {
        return "size out of range";
    }
    return NULL;
}

/* ---- ADPS request/response. ---- */

void
lg_adp_req_encode(const struct lg_adp_req *r, uint8_t buf[LG_ADP_REQ_LEN])
{
    memcpy(buf, r->type, 4);
    put32(buf + 4, r->work_us);
    put32(buf + 8, r->id >> 32);
    put32(buf + 12, (uint32_t) r->id);
}

const char *
lg_adp_req_decode(const uint8_t buf[LG_ADP_REQ_LEN], struct lg_adp_req *r)
{
    memcpy(r->type, buf, 4);
    r->work_us = get32(buf + 4);
    r->id = ((uint64_t) get32(buf + 8) << 32) | get32(buf + 12);
    if (r->work_us > LG_ADP_MAX_WORK_US) {
        return "processing time out of range (at most 10 s)";
    }
    return NULL;
}

/* ---- memcached text protocol: replies. ---- */

static enum lg_mc_reply
mc_bad(char *why, size_t why_size, const char *what, const char *line,
       size_t line_len)
{
    snprintf(why, why_size, "%s \"%.*s\"", what,
             (int) (line_len < 100 ? line_len : 100), line);
    return LG_MC_BAD;
}

enum lg_mc_reply
lg_mc_parse_reply(const char *buf, size_t len, bool get, uint32_t max_value,
                  size_t *need, uint32_t *value_len, char *why,
                  size_t why_size)
{
    const char *eol = len ? memmem(buf, len, "\r\n", 2) : NULL;
    unsigned long long bytes;
    size_t line, total;
    const char *sp, *p;

    if (!eol) {
        if (len > LG_MC_MAX_LINE) {
            snprintf(why, why_size, "response line longer than %d bytes",
                     LG_MC_MAX_LINE);
            return LG_MC_BAD;
        }
        *need = len + 1;
        return LG_MC_NEED_MORE;
    }
    line = eol - buf;
    if (!get) {
        if (line != 6 || memcmp(buf, "STORED", 6)) {
            return mc_bad(why, why_size, "unexpected response", buf, line);
        }
    } else if (line != 3 || memcmp(buf, "END", 3)) {
        goto value;
    }
    if (len != line + 2) {
        snprintf(why, why_size, "extra data after the response");
        return LG_MC_BAD;
    }
    return get ? LG_MC_MISS : LG_MC_STORED;

value:
    /* VALUE <key> <flags> <bytes> */
    if (line < 6 || memcmp(buf, "VALUE ", 6)) {
        return mc_bad(why, why_size, "unexpected response", buf, line);
    }
    sp = memrchr(buf, ' ', line);
    bytes = 0;
    for (p = sp + 1; p < eol; p++) {
        if (*p < '0' || *p > '9' || bytes > max_value) {
            break;
        }
        bytes = bytes * 10 + (*p - '0');
    }
    if (p == sp + 1 || p != eol || bytes > max_value) {
        return mc_bad(why, why_size, "bad value length in", buf, line);
    }
    total = line + 2 + bytes + 7;       /* data "\r\nEND\r\n" */
    if (len < total) {
        *need = total;
        return LG_MC_NEED_MORE;
    }
    if (memcmp(buf + line + 2 + bytes, "\r\nEND\r\n", 7)) {
        snprintf(why, why_size, "malformed GET response (no END after "
                 "%llu bytes of data)", bytes);
        return LG_MC_BAD;
    }
    if (len != total) {
        snprintf(why, why_size, "extra data after the response");
        return LG_MC_BAD;
    }
    *value_len = bytes;
    return LG_MC_HIT;
}

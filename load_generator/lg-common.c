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

const char *lg_program = "panda-loadgen";

/* ---- Clocks. ---- */

static uint64_t
clock_ns(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

uint64_t
lg_mono_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

uint64_t
lg_real_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

void
lg_clock_init(struct lg_clock *c)
{
    c->mono0 = lg_mono_ns();
    c->real0 = lg_real_ns();
}

double
lg_clock_real_s(const struct lg_clock *c, uint64_t mono_ns)
{
    double delta = (double) mono_ns - (double) c->mono0;

    return (c->real0 + delta) / 1e9;
}

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

/* ---- JSON output. ---- */

static void json_string(FILE *, const char *);

static void
json_key(struct lg_json *j, const char *key)
{
    if (j->depth > 0) {
        if (j->comma[j->depth - 1]) {
            fputc(',', j->f);
        }
        j->comma[j->depth - 1] = true;
        fputc('\n', j->f);
        fprintf(j->f, "%*s", 2 * j->depth, "");
    }
    if (key) {
        json_string(j->f, key);
        fputs(": ", j->f);
    }
}

void
lg_json_start(struct lg_json *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    lg_json_object(j, NULL);
}

void
lg_json_finish(struct lg_json *j)
{
    while (j->depth > 0) {
        lg_json_end_object(j);
    }
    fputc('\n', j->f);
}

static void
json_open(struct lg_json *j, const char *key, char c)
{
    json_key(j, key);
    fputc(c, j->f);
    if (j->depth >= LG_JSON_MAX_DEPTH) {
        lg_fatal("internal error: JSON nested too deeply");
    }
    j->comma[j->depth++] = false;
}

static void
json_close(struct lg_json *j, char c)
{
    bool had_items = j->comma[--j->depth];

    if (had_items) {
        fprintf(j->f, "\n%*s", 2 * j->depth, "");
    }
    fputc(c, j->f);
}

void
lg_json_object(struct lg_json *j, const char *key)
{
    json_open(j, key, '{');
}

void
lg_json_end_object(struct lg_json *j)
{
    json_close(j, '}');
}

void
lg_json_array(struct lg_json *j, const char *key)
{
    json_open(j, key, '[');
}

void
lg_json_end_array(struct lg_json *j)
{
    json_close(j, ']');
}

static void
json_string(FILE *f, const char *value)
{
    const unsigned char *p;

    fputc('"', f);
    for (p = (const unsigned char *) value; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        default:
            if (*p < 0x20) {
                fprintf(f, "\\u%04x", *p);
            } else {
                fputc(*p, f);
            }
        }
    }
    fputc('"', f);
}

void
lg_json_str(struct lg_json *j, const char *key, const char *value)
{
    json_key(j, key);
    if (value) {
        json_string(j->f, value);
    } else {
        fputs("null", j->f);
    }
}

void
lg_json_double(struct lg_json *j, const char *key, double value)
{
    json_key(j, key);
    if (isfinite(value)) {
        /* The shortest form that reads back as the same double. */
        char buf[40];
        int prec;

        for (prec = 15; prec < 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, value);
            if (strtod(buf, NULL) == value) {
                break;
            }
        }
        snprintf(buf, sizeof buf, "%.*g", prec, value);
        fputs(buf, j->f);
    } else {
        fputs("null", j->f);
    }
}

void
lg_json_u64(struct lg_json *j, const char *key, uint64_t value)
{
    json_key(j, key);
    fprintf(j->f, "%llu", (unsigned long long) value);
}

void
lg_json_bool(struct lg_json *j, const char *key, bool value)
{
    json_key(j, key);
    fputs(value ? "true" : "false", j->f);
}

void
lg_json_null(struct lg_json *j, const char *key)
{
    json_key(j, key);
    fputs("null", j->f);
}

void
lg_json_summary(struct lg_json *j, const char *key,
                const struct lg_summary *s)
{
    lg_json_object(j, key);
    lg_json_u64(j, "count", s->n);
    lg_json_double(j, "mean", s->mean);
    lg_json_double(j, "min", s->min);
    lg_json_double(j, "p50", s->p50);
    lg_json_double(j, "p90", s->p90);
    lg_json_double(j, "p99", s->p99);
    lg_json_double(j, "p99.9", s->p999);
    lg_json_double(j, "max", s->max);
    lg_json_end_object(j);
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
        lg_fatal("%s: cannot open for writing (%s)", name, strerror(errno));
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
        lg_fatal("%s: write error (%s)", name, strerror(errno));
    }
}

/* ---- Errors and argument parsing. ---- */

void
lg_fatal(const char *fmt, ...)
{
    va_list args;

    fprintf(stderr, "%s: ", lg_program);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    exit(1);
}

void
lg_warn(const char *fmt, ...)
{
    va_list args;

    fprintf(stderr, "%s: warning: ", lg_program);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
}

static uint64_t
parse_u64_scaled(const char *option, const char *s, uint64_t min,
                 uint64_t max, bool suffixes)
{
    static const struct {
        const char *name;
        uint64_t mult;
    } units[] = {
        { "", 1 }, { "B", 1 },
        { "K", 1000 }, { "KB", 1000 }, { "k", 1000 }, { "kB", 1000 },
        { "M", 1000000 }, { "MB", 1000000 },
        { "G", 1000000000 }, { "GB", 1000000000 },
        { "Ki", 1024 }, { "KiB", 1024 },
        { "Mi", 1048576 }, { "MiB", 1048576 },
        { "Gi", 1073741824 }, { "GiB", 1073741824 },
    };
    unsigned long long v;
    uint64_t mult = 0;
    char *end;
    size_t i;

    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') {
        goto bad;
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (end == s || errno) {
        goto bad;
    }
    for (i = 0; i < sizeof units / sizeof *units; i++) {
        if (!strcmp(end, units[i].name)) {
            mult = units[i].mult;
            break;
        }
    }
    if (!mult || (!suffixes && mult != 1)) {
        goto bad;
    }
    if (v > UINT64_MAX / mult) {
        goto range;
    }
    v *= mult;
    if (v < min || v > max) {
        goto range;
    }
    return v;

bad:
    lg_fatal("%s: \"%s\" is not a valid %s", option, s ? s : "",
             suffixes ? "size (e.g. 1000, 10K, 10M, 64KiB)"
                      : "non-negative integer");
range:
    lg_fatal("%s: %s is out of range [%llu, %llu]", option, s,
             (unsigned long long) min, (unsigned long long) max);
}

uint64_t
lg_parse_u64(const char *option, const char *s, uint64_t min, uint64_t max)
{
    return parse_u64_scaled(option, s, min, max, false);
}

uint64_t
lg_parse_bytes(const char *option, const char *s, uint64_t min, uint64_t max)
{
    return parse_u64_scaled(option, s, min, max, true);
}

double
lg_parse_double(const char *option, const char *s, double min, double max)
{
    char *end;
    double v;

    errno = 0;
    v = s && *s ? strtod(s, &end) : NAN;
    if (!s || !*s || *end || errno || !isfinite(v)) {
        lg_fatal("%s: \"%s\" is not a valid number", option, s ? s : "");
    }
    if (v < min || v > max) {
        lg_fatal("%s: %s is out of range [%g, %g]", option, s, min, max);
    }
    return v;
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
    fprintf(stderr, "\r%s: ", lg_program);
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

/* A small streaming JSON writer; see json.h. */
#include <cli/json.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cli/log.h>

static void
put_string(FILE *f, const char *value)
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

/* Writes what comes before a member or element: the separator from the
 * previous one, the line break and indentation, and the key (if any). */
static void
put_key(struct cli_json *j, const char *key)
{
    if (j->depth > 0) {
        bool compact = j->compact[j->depth - 1];

        if (j->comma[j->depth - 1]) {
            fputs(compact ? ", " : ",", j->f);
        }
        j->comma[j->depth - 1] = true;
        if (!compact) {
            fprintf(j->f, "\n%*s", 2 * j->depth, "");
        }
    }
    if (key) {
        put_string(j->f, key);
        fputs(": ", j->f);
    }
}

static void
open_container(struct cli_json *j, const char *key, char c, bool compact)
{
    put_key(j, key);
    fputc(c, j->f);
    if (j->depth >= CLI_JSON_MAX_DEPTH) {
        cli_log_fatal("internal error: JSON nested too deeply");
    }
    /* Inside a one-line container, everything is on that line. */
    j->compact[j->depth] = compact
                           || (j->depth > 0 && j->compact[j->depth - 1]);
    j->closer[j->depth] = c == '{' ? '}' : ']';
    j->comma[j->depth++] = false;
}

static void
close_container(struct cli_json *j)
{
    bool had_members;

    if (j->depth <= 0) {
        cli_log_fatal("internal error: JSON container closed twice");
    }
    had_members = j->comma[--j->depth];
    if (had_members && !j->compact[j->depth]) {
        fprintf(j->f, "\n%*s", 2 * j->depth, "");
    }
    fputc(j->closer[j->depth], j->f);
}

void
cli_json_start(struct cli_json *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    cli_json_object(j, NULL);
}

void
cli_json_finish(struct cli_json *j)
{
    while (j->depth > 0) {
        close_container(j);
    }
    fputc('\n', j->f);
}

void
cli_json_set_precision(struct cli_json *j, int digits)
{
    j->precision = digits;
}

void
cli_json_object(struct cli_json *j, const char *key)
{
    open_container(j, key, '{', false);
}

void
cli_json_end_object(struct cli_json *j)
{
    close_container(j);
}

void
cli_json_array(struct cli_json *j, const char *key)
{
    open_container(j, key, '[', false);
}

void
cli_json_array_compact(struct cli_json *j, const char *key)
{
    open_container(j, key, '[', true);
}

void
cli_json_end_array(struct cli_json *j)
{
    close_container(j);
}

void
cli_json_str(struct cli_json *j, const char *key, const char *value)
{
    put_key(j, key);
    if (value) {
        put_string(j->f, value);
    } else {
        fputs("null", j->f);
    }
}

void
cli_json_double(struct cli_json *j, const char *key, double value)
{
    char buf[40];
    int prec;

    put_key(j, key);
    if (!isfinite(value)) {
        fputs("null", j->f);
        return;
    }
    if (j->precision > 0) {
        prec = j->precision;
    } else {
        /* The shortest form that reads back as the same double. */
        for (prec = 15; prec < 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, value);
            if (strtod(buf, NULL) == value) {
                break;
            }
        }
    }
    snprintf(buf, sizeof buf, "%.*g", prec, value);
    fputs(buf, j->f);
}

void
cli_json_i64(struct cli_json *j, const char *key, int64_t value)
{
    put_key(j, key);
    fprintf(j->f, "%" PRId64, value);
}

void
cli_json_u64(struct cli_json *j, const char *key, uint64_t value)
{
    put_key(j, key);
    fprintf(j->f, "%" PRIu64, value);
}

void
cli_json_bool(struct cli_json *j, const char *key, bool value)
{
    put_key(j, key);
    fputs(value ? "true" : "false", j->f);
}

void
cli_json_null(struct cli_json *j, const char *key)
{
    put_key(j, key);
    fputs("null", j->f);
}

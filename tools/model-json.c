/* A minimal pretty-printing JSON writer for panda-model. */
#include <config.h>

#include "model-json.h"

#include <inttypes.h>
#include <math.h>

void
mj_init(struct model_json *j, FILE *f)
{
    int i;

    j->f = f;
    j->depth = 0;
    j->after_key = false;
    for (i = 0; i < MODEL_JSON_MAX_DEPTH; i++) {
        j->need_comma[i] = false;
        j->compact[i] = false;
    }
}

static void
newline(struct model_json *j)
{
    int i;

    fputc('\n', j->f);
    for (i = 0; i < j->depth; i++) {
        fputs("  ", j->f);
    }
}

/* Writes the separator before a value (or a key). */
static void
before_value(struct model_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->need_comma[j->depth]) {
        fputc(',', j->f);
        if (j->compact[j->depth]) {
            fputc(' ', j->f);
        }
    }
    if (j->depth > 0 && !j->compact[j->depth]) {
        newline(j);
    }
    j->need_comma[j->depth] = true;
}

static void
put_string(struct model_json *j, const char *s)
{
    fputc('"', j->f);
    for (; *s; s++) {
        unsigned char c = (unsigned char) *s;

        if (c == '"' || c == '\\') {
            fputc('\\', j->f);
            fputc(c, j->f);
        } else if (c == '\n') {
            fputs("\\n", j->f);
        } else if (c == '\t') {
            fputs("\\t", j->f);
        } else if (c < 0x20) {
            fprintf(j->f, "\\u%04x", c);
        } else {
            fputc(c, j->f);
        }
    }
    fputc('"', j->f);
}

void
mj_key(struct model_json *j, const char *key)
{
    before_value(j);
    put_string(j, key);
    fputs(": ", j->f);
    j->after_key = true;
}

static void
open_(struct model_json *j, char c, bool compact)
{
    bool parent_compact = j->compact[j->depth];

    before_value(j);
    fputc(c, j->f);
    if (j->depth + 1 < MODEL_JSON_MAX_DEPTH) {
        j->depth++;
    }
    j->need_comma[j->depth] = false;
    j->compact[j->depth] = compact || parent_compact;
}

static void
close_(struct model_json *j, char c)
{
    bool had = j->need_comma[j->depth], compact = j->compact[j->depth];

    j->need_comma[j->depth] = false;
    j->compact[j->depth] = false;
    if (j->depth > 0) {
        j->depth--;
    }
    if (had && !compact) {
        newline(j);
    }
    fputc(c, j->f);
}

void
mj_obj(struct model_json *j)
{
    open_(j, '{', false);
}

void
mj_obj_end(struct model_json *j)
{
    close_(j, '}');
}

void
mj_arr(struct model_json *j, bool compact)
{
    open_(j, '[', compact);
}

void
mj_arr_end(struct model_json *j)
{
    close_(j, ']');
}

void
mj_str(struct model_json *j, const char *s)
{
    before_value(j);
    put_string(j, s ? s : "");
}

void
mj_num(struct model_json *j, double v)
{
    before_value(j);
    if (isfinite(v)) {
        fprintf(j->f, "%.12g", v);
    } else {
        fputs("null", j->f);
    }
}

void
mj_int(struct model_json *j, int64_t v)
{
    before_value(j);
    fprintf(j->f, "%" PRId64, v);
}

void
mj_uint(struct model_json *j, uint64_t v)
{
    before_value(j);
    fprintf(j->f, "%" PRIu64, v);
}

void
mj_bool(struct model_json *j, bool v)
{
    before_value(j);
    fputs(v ? "true" : "false", j->f);
}

void
mj_null(struct model_json *j)
{
    before_value(j);
    fputs("null", j->f);
}

void
mj_end(struct model_json *j)
{
    fputc('\n', j->f);
}

/*
 * A small streaming JSON writer for the command-line programs' reports
 * (panda-model's policy JSON, the load generator's summaries): objects and
 * arrays indented by two spaces per level, one member per line, arrays
 * optionally on one line ("compact").  Members take their key as an
 * argument; array elements pass NULL.
 */
#ifndef CLI_JSON_H
#define CLI_JSON_H 1

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_JSON_MAX_DEPTH 16

struct cli_json {
    FILE *f;
    int depth;
    int precision;                      /* See cli_json_set_precision(). */
    bool comma[CLI_JSON_MAX_DEPTH];     /* Container has a member already. */
    bool compact[CLI_JSON_MAX_DEPTH];   /* Container is on one line. */
    char closer[CLI_JSON_MAX_DEPTH];    /* '}' or ']'. */
};

/* Starts a document on 'f' and opens its top-level object. */
void cli_json_start(struct cli_json *, FILE *);
/* Closes whatever is open and ends the document with a newline. */
void cli_json_finish(struct cli_json *);

/* Numbers are written with the fewest digits that read back as the same
 * double (the default, 0), or with printf's "%.<digits>g". */
void cli_json_set_precision(struct cli_json *, int digits);

void cli_json_object(struct cli_json *, const char *key);
void cli_json_end_object(struct cli_json *);
void cli_json_array(struct cli_json *, const char *key);
void cli_json_array_compact(struct cli_json *, const char *key);
void cli_json_end_array(struct cli_json *);

void cli_json_str(struct cli_json *, const char *key, const char *value);
void cli_json_double(struct cli_json *, const char *key, double value);
void cli_json_i64(struct cli_json *, const char *key, int64_t value);
void cli_json_u64(struct cli_json *, const char *key, uint64_t value);
void cli_json_bool(struct cli_json *, const char *key, bool value);
void cli_json_null(struct cli_json *, const char *key);

#endif /* cli/json.h */

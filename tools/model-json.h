/* A minimal pretty-printing JSON writer for panda-model. */
#ifndef MODEL_JSON_H
#define MODEL_JSON_H 1

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define MODEL_JSON_MAX_DEPTH 16

struct model_json {
    FILE *f;
    int depth;
    bool need_comma[MODEL_JSON_MAX_DEPTH];
    bool after_key;
    bool compact[MODEL_JSON_MAX_DEPTH];
};

void mj_init(struct model_json *, FILE *);
void mj_key(struct model_json *, const char *key);
void mj_obj(struct model_json *);            /* { */
void mj_obj_end(struct model_json *);        /* } */
void mj_arr(struct model_json *, bool compact);  /* [ (compact: one line) */
void mj_arr_end(struct model_json *);        /* ] */
void mj_str(struct model_json *, const char *);
void mj_num(struct model_json *, double);    /* null if not finite */
void mj_int(struct model_json *, int64_t);
void mj_uint(struct model_json *, uint64_t);
void mj_bool(struct model_json *, bool);
void mj_null(struct model_json *);
void mj_end(struct model_json *);            /* Final newline. */

#endif /* model-json.h */

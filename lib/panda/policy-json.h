/*
 * The JSON forms of a policy: the one reader and writer of a policy as a
 * JSON object, beside the text syntax (panda/policy.h) and the wire body
 * (panda/wire.h).  Tools only: it uses jansson and allocates; the datapath
 * never links it.
 *
 * Two forms, one key table (policy-json.c):
 *
 *   PANDA_JSON_DOC     the policy file that panda-model writes and the
 *                      controller reads (tools/README-panda-model.md):
 *                      weights as numbers ([[9000, 2.5]]), rules as
 *                      "priority_rules": [{"match": "GET\x20", "level": 1}]
 *                      with keywords as the text syntax writes them, plus
 *                      "version" and "action" (the canonical text, checked
 *                      against the structured fields: a warning when they
 *                      differ) and the model's own keys (ignored).
 *                      Optional keys are written only when they differ
 *                      from their defaults.
 *   PANDA_JSON_FIELDS  every field of struct panda_policy under its text
 *                      key, in the library's units: weights in hundredths
 *                      ([[9000, 250]]), rules as "rules": [[TYPE, VALUE,
 *                      LEVEL]] with a keyword as a list of byte values, and
 *                      "levels" (K) always.  What a language binding maps
 *                      onto its own objects (python/pandaovs/policy.py)
 *                      without knowing any key.  Read back, omitted keys
 *                      take their defaults, as in the text syntax.
 *
 * Either form read is checked field by field (JSON types, the ranges of the
 * struct's fields) and then by panda_policy_check(); every message names
 * the source and the field, e.g.
 *   "p.json: dscp[0]: 64 out of range (0..63)"
 *   "p.json: policy id 7: thresholds: not strictly ascending (50 after 500)"
 */
#ifndef PANDA_POLICY_JSON_H
#define PANDA_POLICY_JSON_H 1

#include <panda/policy.h>

#ifdef __cplusplus
extern "C" {
#endif

enum panda_json_form {
    PANDA_JSON_DOC,
    PANDA_JSON_FIELDS,
};

/* Reads the JSON text 'json' (an object in 'form') into 'p', validated.
 * 'src' names the source in messages (a file name; NULL or "" for none).
 * Returns NULL on success, else a malloc()ed message (caller frees); 'p' is
 * unchanged on error.  If 'warning' is nonnull, it is set to NULL or to a
 * malloc()ed warning (PANDA_JSON_DOC: "action" differs from the fields). */
char *panda_policy_json_read(const char *json, const char *src,
                             enum panda_json_form form,
                             struct panda_policy *p, char **warning);

/* Writes 'p' (valid) as a JSON object in 'form'.  Returns a malloc()ed
 * string (caller frees). */
char *panda_policy_json_write(const struct panda_policy *p,
                              enum panda_json_form form);

#ifdef __cplusplus
}
#endif

#endif /* panda/policy-json.h */

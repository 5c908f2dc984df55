/*
 * The stable C API of Panda policies for other languages: what
 * libpanda-policy.so.1 exports, and nothing else (policy-api.map).  Python
 * binds it with ctypes (python/pandaovs/policy.py); the library is the one
 * parser, validator, formatter and wire codec of a policy, so a binding
 * holds no policy logic and no copied constant.
 *
 * Contract.
 *   - A policy is an opaque handle, valid (every constructor validates),
 *     immutable, owned by the caller: free it with panda_api_free().
 *   - Strings returned are malloc()ed, NUL-terminated UTF-8 (messages,
 *     texts, JSON); free them with panda_api_free().  NULL means success
 *     where a function returns an error message.
 *   - Errors are messages that name the field ("thresholds: not strictly
 *     ascending (5 after 5)"), the same that ovs-ofctl and the datapath
 *     print.  No function aborts on bad input.
 *   - Thread-safe: no global state.
 *   - Stability: PANDA_API_VERSION counts incompatible changes (the
 *     soname's number); functions are only ever added, under a new symbol
 *     version node.  Structs never cross the API: constants are read by
 *     name (panda_api_constant), the fields through the JSON fields form
 *     (panda/policy-json.h).
 */
#ifndef PANDA_POLICY_API_H
#define PANDA_POLICY_API_H 1

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PANDA_API_VERSION 1

struct panda_policy;

/* PANDA_API_VERSION of the library. */
int panda_api_version(void);

/* Looks up the constant 'name' ("max_levels", "wire_len", ...; the table
 * in policy-api.c).  Returns 1 and sets '*value', or 0 if there is no such
 * constant. */
int panda_api_constant(const char *name, int64_t *value);

/* The name of constant number 'i' (0, 1, ...), NULL past the last. */
const char *panda_api_constant_name(int i);

/* Frees a policy or a string that this API returned (NULL is fine). */
void panda_api_free(void *);

/* Parses the text syntax (panda_policy_parse()).  Returns a policy, or
 * NULL with '*error' set to the message. */
struct panda_policy *panda_api_parse(const char *text, char **error);

/* Reads a JSON object; 'form' 0 is panda-model's policy document, 1 the
 * fields form (panda/policy-json.h).  'src' names the source in messages
 * (may be NULL).  Returns a policy, or NULL with '*error' set.  '*warning'
 * (if 'warning' is nonnull) is NULL or a warning. */
struct panda_policy *panda_api_from_json(const char *json, const char *src,
                                         int form, char **error,
                                         char **warning);

/* The policy as JSON in 'form' (as above). */
char *panda_api_to_json(const struct panda_policy *, int form);

/* The canonical text (panda_policy_format()). */
char *panda_api_format(const struct panda_policy *);

/* Writes the wire body (panda/wire.h) into 'buf' if it has room for it.
 * Returns the body's length either way. */
size_t panda_api_wire_encode(const struct panda_policy *, uint8_t *buf,
                             size_t size);

/* Decodes and validates a wire body.  Returns a policy, or NULL with
 * '*error' set to the decoder's message. */
struct panda_policy *panda_api_wire_decode(const uint8_t *body, size_t len,
                                           char **error);

/* The level of the first rule that a packet matches (the DSCP it carries,
 * the first 'len' bytes of its payload at 'data', its payload length), or
 * -1 if none does (panda_cls_rules()). */
int panda_api_rule_level(const struct panda_policy *, uint8_t dscp,
                         const uint8_t *data, size_t len, uint32_t payload);

/* A weight in hundredths as the text syntax writes it ("2.25"). */
char *panda_api_format_weight(uint16_t hundredths);

#ifdef __cplusplus
}
#endif

#endif /* panda/policy-api.h */

/* The stable C API of Panda policies; see policy-api.h. */
#include <panda/policy-api.h>

#include <stdlib.h>
#include <string.h>

#include <panda/base.h>
#include <panda/classifier.h>
#include <panda/packet.h>
#include <panda/policy-json.h>
#include <panda/policy.h>
#include <panda/time.h>
#include <panda/wire.h>

/* The constants a binding needs, by name: the limits of the fields and the
 * sizes of the wire body. */
static const struct {
    const char *name;
    int64_t value;
} constants[] = {
    { "api_version", PANDA_API_VERSION },
    { "max_levels", PANDA_MAX_LEVELS },
    { "max_weights", PANDA_MAX_WEIGHTS },
    { "weight_one", PANDA_WEIGHT_ONE },
    { "max_dscp", PANDA_MAX_DSCP },
    { "max_pkt_size", PANDA_MAX_PKT_SIZE },
    { "max_rules", PANDA_MAX_RULES },
    { "max_keyword", PANDA_MAX_KEYWORD },
    { "max_duration_ms", PANDA_MAX_DURATION_MS },
    { "text_max", PANDA_POLICY_TEXT_MAX },
    { "wire_len", PANDA_WIRE_LEN },
    { "wire_max_len", PANDA_WIRE_MAX_LEN },
    { "wire_rule_hdr", PANDA_WIRE_RULE_HDR },
};
#define N_CONSTANTS (sizeof constants / sizeof constants[0])

int
panda_api_version(void)
{
    return PANDA_API_VERSION;
}

int
panda_api_constant(const char *name, int64_t *value)
{
    size_t i;

    for (i = 0; name && i < N_CONSTANTS; i++) {
        if (!strcmp(constants[i].name, name)) {
            *value = constants[i].value;
            return 1;
        }
    }
    return 0;
}

const char *
panda_api_constant_name(int i)
{
    return i >= 0 && (size_t) i < N_CONSTANTS ? constants[i].name : NULL;
}

void
panda_api_free(void *p)
{
    free(p);
}

static struct panda_policy *
copy(const struct panda_policy *p)
{
    struct panda_policy *out = panda_xmalloc(sizeof *out);

    *out = *p;
    return out;
}

struct panda_policy *
panda_api_parse(const char *text, char **error)
{
    struct panda_policy p;

    *error = panda_policy_parse(text ? text : "", &p);
    return *error ? NULL : copy(&p);
}

struct panda_policy *
panda_api_from_json(const char *json, const char *src, int form,
                    char **error, char **warning)
{
    struct panda_policy p;

    if (form != PANDA_JSON_DOC && form != PANDA_JSON_FIELDS) {
        *error = panda_asprintf("JSON form %d: expected 0 (document) or 1 "
                                "(fields)", form);
        return NULL;
    }
    *error = panda_policy_json_read(json ? json : "", src, form, &p,
                                    warning);
    return *error ? NULL : copy(&p);
}

char *
panda_api_to_json(const struct panda_policy *p, int form)
{
    return panda_policy_json_write(p, form == PANDA_JSON_FIELDS
                                      ? PANDA_JSON_FIELDS : PANDA_JSON_DOC);
}

char *
panda_api_format(const struct panda_policy *p)
{
    int n = panda_policy_format(p, NULL, 0);
    char *s = panda_xmalloc(n + 1);

    panda_policy_format(p, s, n + 1);
    return s;
}

size_t
panda_api_wire_encode(const struct panda_policy *p, uint8_t *buf,
                      size_t size)
{
    size_t len = panda_wire_len(p);

    if (buf && size >= len) {
        panda_wire_encode(p, buf);
    }
    return len;
}

struct panda_policy *
panda_api_wire_decode(const uint8_t *body, size_t len, char **error)
{
    char msg[PANDA_WIRE_MSG_SIZE];
    struct panda_policy p;

    if (!body && len) {
        *error = panda_asprintf("wire body: NULL");
        return NULL;
    }
    if (panda_wire_decode(body, len, &p, msg) != PANDA_WIRE_OK) {
        *error = panda_asprintf("%s", msg);
        return NULL;
    }
    *error = NULL;
    return copy(&p);
}

int
panda_api_rule_level(const struct panda_policy *p, uint8_t dscp,
                     const uint8_t *data, size_t len, uint32_t payload)
{
    struct panda_pkt pkt;

    memset(&pkt, 0, sizeof pkt);
    pkt.family = 4;
    pkt.proto = 6;
    pkt.dscp = dscp;
    pkt.payload = payload;
    pkt.data_len = (uint32_t) (len < payload ? len : payload);
    pkt.data = pkt.data_len ? data : NULL;
    return panda_cls_rules(p, &pkt);
}

char *
panda_api_format_weight(uint16_t hundredths)
{
    char buf[16];

    panda_policy_format_weight(hundredths, buf, sizeof buf);
    return panda_asprintf("%s", buf);
}

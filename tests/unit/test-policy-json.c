/* Unit tests: the JSON forms of a policy (panda/policy-json.h), on every
 * valid policy of the shared vectors (tests/vectors/policies.txt), so that
 * a field the JSON key table misses fails here. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/policy-json.h>
#include <panda/policy.h>

/* The "canonical:" lines of the vectors file, NULL-terminated. */
static char **
read_canonical(void)
{
    const char *top = getenv("top_srcdir");
    char path[4096], line[8192];
    char **out = calloc(1024, sizeof *out);
    size_t n = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/tests/vectors/policies.txt",
             top ? top : ".");
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f) && n < 1023) {
        if (!strncmp(line, "canonical: ", 11)) {
            line[strcspn(line, "\r\n")] = '\0';
            out[n++] = strdup(line + 11);
        }
    }
    fclose(f);
    assert_true(n >= 20);
    return out;
}

/* 'text' -> JSON in 'form' -> policy: the same policy, no warning. */
static void
round_trip(const char *text, enum panda_json_form form)
{
    struct panda_policy p, q;
    char *json, *err, *warning = NULL, back[PANDA_POLICY_TEXT_MAX];

    err = panda_policy_parse(text, &p);
    assert_null(err);
    json = panda_policy_json_write(&p, form);
    memset(&q, 0xa5, sizeof q);
    err = panda_policy_json_read(json, "v.json", form, &q, &warning);
    if (err) {
        fail_msg("%s -> %s: %s", text, json, err);
    }
    assert_null(warning);
    assert_true(panda_policy_equal(&p, &q));
    panda_policy_format(&q, back, sizeof back);
    assert_string_equal(back, text);
    free(json);
}

static void
test_vectors_round_trip(void **state)
{
    char **texts = read_canonical();
    size_t i;

    (void) state;
    for (i = 0; texts[i]; i++) {
        round_trip(texts[i], PANDA_JSON_DOC);
        round_trip(texts[i], PANDA_JSON_FIELDS);
        free(texts[i]);
    }
    free(texts);
}

static void
expect_error(const char *json, enum panda_json_form form, const char *msg)
{
    struct panda_policy p;
    char *err = panda_policy_json_read(json, "f", form, &p, NULL);

    assert_non_null(err);
    assert_string_equal(err, msg);
    free(err);
}

static void
test_errors_name_the_field(void **state)
{
    (void) state;
    expect_error("{\"id\": 1, \"dscp\": [64]}", PANDA_JSON_DOC,
                 "f: dscp[0]: 64 out of range (0..63)");
    expect_error("{\"id\": 1, \"weights\": [[100, 1.234]]}", PANDA_JSON_DOC,
                 "f: weights[0][1]: 1.234 has more than two decimals");
    expect_error("{\"id\": 7, \"thresholds\": [500, 50]}", PANDA_JSON_DOC,
                 "f: policy id 7: thresholds: not strictly ascending "
                 "(50 after 500)");
    expect_error("{\"id\": 1, \"treshold\": 5}", PANDA_JSON_DOC,
                 "f: unknown key treshold (policy keys: ctl_level, "
                 "default_level, dscp, floor, id, idle_reset, kind, levels, "
                 "priority_rules, queues, threshold, thresholds, "
                 "tunnels, untracked_level, weights)");
    /* The tunnels: names, each once. */
    expect_error("{\"id\": 1, \"tunnels\": [\"gre\"]}", PANDA_JSON_DOC,
                 "f: tunnels: \"gre\" is not geneve or vxlan");
    expect_error("{\"id\": 1, \"tunnels\": [\"vxlan\", \"vxlan\"]}",
                 PANDA_JSON_FIELDS, "f: tunnels: vxlan given twice");
    expect_error("{\"id\": 1, \"tunnels\": \"geneve\"}", PANDA_JSON_DOC,
                 "f: tunnels: expected a list of tunnel names, got "
                 "\"geneve\"");
    expect_error("[1]", PANDA_JSON_DOC, "f: a policy must be a JSON object");
    expect_error("{\"id\": 1,", PANDA_JSON_DOC,
                 "f: line 1, column 9: string or '}' expected near end of "
                 "file");
    /* The fields form: hundredths, rules as [type, bytes, level]. */
    expect_error("{\"id\": 1, \"weights\": [[10, 99]]}", PANDA_JSON_FIELDS,
                 "f: weights: weight 0.99 below 1");
    expect_error("{\"id\": 1, \"kind\": \"match\", \"rules\": [[\"match\", "
                 "[], 0]]}", PANDA_JSON_FIELDS,
                 "f: match: keyword of 0 bytes, must be 1 to 32");
}

/* A document's "action" is checked against the fields it carries. */
static void
test_stale_action_warns(void **state)
{
    struct panda_policy p;
    char *warning = NULL;
    char *err = panda_policy_json_read(
        "{\"id\": 3, \"thresholds\": [10], \"action\": \"id=3\"}", "f",
        PANDA_JSON_DOC, &p, &warning);

    (void) state;
    assert_null(err);
    assert_non_null(warning);
    assert_non_null(strstr(warning, "differs from the structured fields"));
    assert_int_equal(p.n_levels, 2);
    free(warning);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_round_trip),
        cmocka_unit_test(test_errors_name_the_field),
        cmocka_unit_test(test_stale_action_warns),
    };

    return cmocka_run_group_tests_name("policy-json", tests, NULL, NULL);
}

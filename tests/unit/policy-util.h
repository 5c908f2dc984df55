/* Policy parsing helpers shared by the C unit tests.  Include after
 * <cmocka.h>: failures go through cmocka's fail_msg(). */
#ifndef TESTS_UNIT_POLICY_UTIL_H
#define TESTS_UNIT_POLICY_UTIL_H 1

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <panda/policy.h>

/* Parses 's' into '*p', failing the test with the parser's message. */
static inline void
parse_ok(const char *s, struct panda_policy *p)
{
    char *err = panda_policy_parse(s, p);

    if (err) {
        fail_msg("parse of \"%s\" failed: %s", s, err);
    }
}

/* Expects 's' refused with a message equal to 'want' ('exact') or starting
 * with it (the field name, when the rest of the message is not the point of
 * the test). */
static inline void
parse_refused(const char *s, const char *want, bool exact)
{
    struct panda_policy p;
    char *err = panda_policy_parse(s, &p);

    if (!err) {
        fail_msg("\"%s\" was accepted", s);
    }
    if (exact ? strcmp(err, want) != 0
              : strncmp(err, want, strlen(want)) != 0) {
        fail_msg("\"%s\": error \"%s\", expected %s \"%s\"", s, err,
                 exact ? "exactly" : "a message starting with", want);
    }
    free(err);
}

/* Expects 's' refused with a message starting with 'field': errors name
 * their field first. */
static inline void
parse_err(const char *s, const char *field)
{
    parse_refused(s, field, false);
}

/* Expects 's' refused with exactly the message 'want'. */
static inline void
parse_err_exact(const char *s, const char *want)
{
    parse_refused(s, want, true);
}

#endif

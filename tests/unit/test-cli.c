/* Unit tests: the shared tool layer (lib/cli): JSON writer, option values,
 * clocks. */
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cli/clock.h>
#include <cli/json.h>
#include <cli/parse.h>

/* Writes a document with 'write' and returns it (caller frees). */
static char *
render(void (*write)(struct cli_json *), int precision)
{
    struct cli_json j;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    cli_json_start(&j, f);
    cli_json_set_precision(&j, precision);
    write(&j);
    cli_json_finish(&j);
    fclose(f);
    return buf;
}

static void
write_doc(struct cli_json *j)
{
    cli_json_i64(j, "version", -1);
    cli_json_array_compact(j, "weights");
    cli_json_array_compact(j, NULL);
    cli_json_u64(j, NULL, 1459);
    cli_json_double(j, NULL, 1.5);
    cli_json_end_array(j);
    cli_json_end_array(j);
    cli_json_array_compact(j, "empty");
    cli_json_end_array(j);
    cli_json_object(j, "model");
    cli_json_double(j, "third", 1.0 / 3);
    cli_json_array(j, "notes");
    cli_json_str(j, NULL, "tab\there");
    cli_json_str(j, NULL, NULL);
    cli_json_end_array(j);
    cli_json_bool(j, "ok", true);
    /* Left open: cli_json_finish() closes it. */
}

static void
test_json_layout(void **state)
{
    char *doc;

    (void) state;
    doc = render(write_doc, 12);
    assert_string_equal(doc,
        "{\n"
        "  \"version\": -1,\n"
        "  \"weights\": [[1459, 1.5]],\n"
        "  \"empty\": [],\n"
        "  \"model\": {\n"
        "    \"third\": 0.333333333333,\n"
        "    \"notes\": [\n"
        "      \"tab\\there\",\n"
        "      null\n"
        "    ],\n"
        "    \"ok\": true\n"
        "  }\n"
        "}\n");
    free(doc);

    /* Default precision: the shortest form that reads back exactly. */
    doc = render(write_doc, 0);
    assert_non_null(strstr(doc, "\"third\": 0.3333333333333333,\n"));
    assert_non_null(strstr(doc, "[[1459, 1.5]]"));
    free(doc);
}

static void
test_parse_values(void **state)
{
    (void) state;
    assert_int_equal(cli_parse_u64("--n", "42", 0, 100), 42);
    assert_true(cli_parse_u64("--n", "18446744073709551615", 0, UINT64_MAX)
                == UINT64_MAX);
    assert_int_equal(cli_parse_bytes("--size", "10K", 1, UINT64_MAX), 10000);
    assert_int_equal(cli_parse_bytes("--size", "64KiB", 1, UINT64_MAX),
                     65536);
    assert_int_equal(cli_parse_bytes("--size", "2MB", 1, UINT64_MAX),
                     2000000);
    assert_true(cli_parse_double("--load", "0.25", 0, 1) == 0.25);
}

/* Every case of tests/vectors/cli-units.txt (shared with the Python side,
 * which must agree). */
static void
test_unit_vectors(void **state)
{
    char path[4096], line[256];
    int n = 0;
    FILE *f;

    (void) state;
    snprintf(path, sizeof path, "%s/tests/vectors/cli-units.txt",
             getenv("top_srcdir") ? getenv("top_srcdir") : ".");
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        char kind[16], input[64], want[64];
        bool ok;
        double v = 0;

        if (line[0] == '#' || line[0] == '\n'
            || sscanf(line, "%15s %63s %63s", kind, input, want) != 3) {
            continue;
        }
        if (!strcmp(kind, "size")) {
            uint64_t b;

            ok = cli_parse_bytes_value(input, &b);
            v = b;
        } else if (!strcmp(kind, "rate")) {
            ok = cli_parse_rate_value(input, 1, &v);
        } else {
            assert_string_equal(kind, "duration");
            ok = cli_parse_duration_value(input, 1, &v, NULL);
        }
        if (!strcmp(want, "error")) {
            if (ok) {
                fail_msg("%s %s: accepted as %g, should be refused", kind,
                         input, v);
            }
        } else {
            double w = strtod(want, NULL);

            if (!ok || fabs(v - w) > 1e-9 * fmax(1, w)) {
                fail_msg("%s %s: %s %g, want %s", kind, input,
                         ok ? "got" : "refused", v, want);
            }
        }
        n++;
    }
    fclose(f);
    assert_true(n > 40);
}

static void
test_clocks(void **state)
{
    struct cli_clock c;
    uint64_t a, b;

    (void) state;
    a = cli_clock_mono_ns();
    b = cli_clock_mono_ns();
    assert_true(b >= a);
    cli_clock_init(&c);
    /* The reference point maps to the wall-clock reading taken with it. */
    assert_true(fabs(cli_clock_real_s(&c, c.mono0) - c.real0 / 1e9) < 1e-6);
    assert_true(cli_clock_real_s(&c, c.mono0 + 2000000000u)
                - cli_clock_real_s(&c, c.mono0) > 1.999);
    assert_true(cli_clock_cpu_s() >= 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_layout),
        cmocka_unit_test(test_parse_values),
        cmocka_unit_test(test_unit_vectors),
        cmocka_unit_test(test_clocks),
    };

    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}

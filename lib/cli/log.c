/* Error reporting for the command-line programs; see log.h. */
#include <cli/log.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *program = "panda";

void
cli_log_set_program(const char *name)
{
    program = name;
}

const char *
cli_log_program(void)
{
    return program;
}

static void
report(const char *what, const char *fmt, va_list args)
{
    fprintf(stderr, "%s: %s", program, what);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
}

void
cli_log_fatal(const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    report("", fmt, args);
    va_end(args);
    exit(CLI_EXIT_FAILURE);
}

void
cli_log_usage(const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    report("", fmt, args);
    va_end(args);
    fprintf(stderr, "Try '%s --help' for more information.\n", program);
    exit(CLI_EXIT_USAGE);
}

void
cli_log_warn(const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    report("warning: ", fmt, args);
    va_end(args);
}

void
cli_log_deprecated(const char *old, const char *new)
{
    /* A handful of spellings per program: a linear list is enough. */
    static const char *warned[16];
    static size_t n_warned;
    size_t i;

    for (i = 0; i < n_warned; i++) {
        if (!strcmp(warned[i], old)) {
            return;
        }
    }
    if (n_warned < sizeof warned / sizeof *warned) {
        warned[n_warned++] = old;
    }
    cli_log_warn("%s is deprecated and will go; use %s", old, new);
}

/* Error reporting for the command-line programs; see log.h. */
#include <cli/log.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
    exit(1);
}

void
cli_log_warn(const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    report("warning: ", fmt, args);
    va_end(args);
}

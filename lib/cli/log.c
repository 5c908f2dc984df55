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

void
cli_log_fatal(const char *fmt, ...)
{
    va_list args;

    fprintf(stderr, "%s: ", program);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    exit(1);
}

void
cli_log_warn(const char *fmt, ...)
{
    va_list args;

    fprintf(stderr, "%s: warning: ", program);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
}

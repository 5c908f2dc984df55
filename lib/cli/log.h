/*
 * Error reporting and exit statuses of the command-line programs (tools,
 * load generator, the BPF loader): messages on stderr prefixed with the
 * program's name, and the exits.
 *
 * Exit statuses, the same for every program of the project (C and Python;
 * docs/reference.md, "Command-line convention"):
 *     0  success (and --help, --version)
 *     1  a runtime failure: a file that cannot be read, a server that
 *        cannot be reached, a refused configuration
 *     2  a usage error: an unknown option, a bad or missing value, options
 *        that exclude each other (the message names the option)
 *     3  the program ran to its end but its measurement is incomplete:
 *        some flows or requests did not complete, or a run stopped early;
 *        what it wrote says which
 * (panda-cc status keeps LSB's 3 for "not registered": it measures
 * nothing.)
 */
#ifndef CLI_LOG_H
#define CLI_LOG_H 1

#include <panda/base.h>

#define CLI_EXIT_FAILURE 1
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_INCOMPLETE 3

/* Sets the name that prefixes every message (default "panda"). */
void cli_log_set_program(const char *name);
const char *cli_log_program(void);

/* Prints "PROGRAM: MESSAGE" on stderr and exits with CLI_EXIT_FAILURE. */
void cli_log_fatal(const char *fmt, ...) PANDA_PRINTF(1, 2)
    __attribute__((__noreturn__));

/* A usage error: prints "PROGRAM: MESSAGE" and a pointer to --help on
 * stderr and exits with CLI_EXIT_USAGE. */
void cli_log_usage(const char *fmt, ...) PANDA_PRINTF(1, 2)
    __attribute__((__noreturn__));

/* Prints "PROGRAM: warning: MESSAGE" on stderr. */
void cli_log_warn(const char *fmt, ...) PANDA_PRINTF(1, 2);

/* Warns, once per program run, that option spelling 'old' is deprecated
 * in favour of 'new' (both as the user writes them, e.g. "--conns",
 * "--connections"). */
void cli_log_deprecated(const char *old, const char *new);

#endif /* cli/log.h */

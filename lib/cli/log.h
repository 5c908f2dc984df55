/*
 * Error reporting for the command-line programs (tools, load generator):
 * messages on stderr prefixed with the program's name, and the exit on a
 * fatal error.
 */
#ifndef CLI_LOG_H
#define CLI_LOG_H 1

#include <panda/base.h>

/* Sets the name that prefixes every message (default "panda"). */
void cli_log_set_program(const char *name);
const char *cli_log_program(void);

/* Prints "PROGRAM: MESSAGE" on stderr and exits with status 1. */
void cli_log_fatal(const char *fmt, ...) PANDA_PRINTF(1, 2)
    __attribute__((__noreturn__));

/* Prints "PROGRAM: warning: MESSAGE" on stderr. */
void cli_log_warn(const char *fmt, ...) PANDA_PRINTF(1, 2);

#endif /* cli/log.h */

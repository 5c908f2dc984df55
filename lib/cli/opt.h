/*
 * The command-line convention every program of the project follows (C
 * here, Python in pandaovs.cli; docs/reference.md, "Command-line convention"):
 * GNU long options (getopt_long), --help on stdout with exit status 0,
 * --version with the project's version and git commit, a usage error on
 * stderr with exit status 2 (cli/log.h lists every status).
 *
 * A program lists CLI_OPT_COMMON among its long options, reads them with
 * cli_opt_next() and never sees --help, --version or a bad option:
 *
 *     static const struct option longopts[] = {
 *         { "port", required_argument, NULL, 'p' },
 *         CLI_OPT_COMMON,
 *         { NULL, 0, NULL, 0 },
 *     };
 *     cli_log_set_program("panda-x");
 *     while ((c = cli_opt_next(argc, argv, "p:h", longopts, usage)) != -1)
 *         ...
 *     cli_opt_no_operands(argc, argv);
 */
#ifndef CLI_OPT_H
#define CLI_OPT_H 1

#include <getopt.h>

/* getopt_long()'s value for --version (beyond any character). */
#define CLI_OPT_VERSION 0x10000

#define CLI_OPT_COMMON                                      \
    { "help", no_argument, NULL, 'h' },                     \
    { "version", no_argument, NULL, CLI_OPT_VERSION }

/* getopt_long() that handles the common options: 'h' (--help or -h) calls
 * 'usage', which prints the help on stdout, and exits 0; --version prints
 * cli_opt_version_string() and exits 0; an unknown option or a missing
 * argument is a usage error (getopt's message, exit 2).  Returns the next
 * other option, or -1 at the end. */
int cli_opt_next(int argc, char *argv[], const char *shortopts,
                 const struct option *longopts, void (*usage)(void));

/* A usage error if arguments remain after the options (programs that
 * take none). */
void cli_opt_no_operands(int argc, char *argv[]);

/* "PROGRAM (Panda-OVS) VERSION (git COMMIT)": the project's version
 * (configure.ac) and the commit the build came from (COMMIT ends in
 * "-dirty" if the tree had uncommitted changes, "unknown" without git). */
const char *cli_opt_version_string(void);

#endif /* cli/opt.h */

/* The command-line convention; see opt.h. */
#include <config.h>
#include <cli/opt.h>

#include <stdio.h>
#include <stdlib.h>

#include <cli/log.h>
#include "lib/cli/git-commit.h"     /* Generated: CLI_GIT_COMMIT. */

int
cli_opt_next(int argc, char *argv[], const char *shortopts,
             const struct option *longopts, void (*usage)(void))
{
    int c;

    /* getopt's messages name argv[0], which may be a long path. */
    argv[0] = (char *) cli_log_program();
    c = getopt_long(argc, argv, shortopts, longopts, NULL);
    switch (c) {
    case 'h':
        usage();
        exit(0);
    case CLI_OPT_VERSION:
        printf("%s\n", cli_opt_version_string());
        exit(0);
    case '?':
    case ':':
        /* getopt has said what is wrong. */
        fprintf(stderr, "Try '%s --help' for more information.\n",
                cli_log_program());
        exit(CLI_EXIT_USAGE);
    default:
        return c;
    }
}

void
cli_opt_no_operands(int argc, char *argv[])
{
    if (optind < argc) {
        cli_log_usage("unexpected argument \"%s\"", argv[optind]);
    }
}

const char *
cli_opt_version_string(void)
{
    static char buf[256];

    snprintf(buf, sizeof buf, "%s (Panda-OVS) %s (git %s)",
             cli_log_program(), PACKAGE_VERSION, CLI_GIT_COMMIT);
    return buf;
}

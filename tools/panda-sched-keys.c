/*
 * panda-sched-keys: prints the egress scheduler's configuration keys
 * (lib/panda/scheduler.h, panda_sched_keys[]) for documentation, so that
 * the docs are generated from the table the parser reads rather than
 * written by hand:
 *
 *   panda-sched-keys --markdown        the key reference table
 *                                      (docs/panda-sched-keys.md)
 *   panda-sched-keys --vswitch-xml=qos|queue
 *                                      vswitch.xml <column> elements of the
 *                                      QoS and Queue tables
 *   panda-sched-keys --names           the known keys, one line
 *   panda-sched-keys --effective[=TEXT]
 *                                      TEXT (default: no key) parsed, and
 *                                      every key in effect
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/scheduler.h>

#include <cli/log.h>
#include <cli/opt.h>

static void
usage(void)
{
    printf("usage: panda-sched-keys --markdown | --vswitch-xml=qos|queue"
           " | --names | --effective[=KEY=VALUE,...]\n"
           "Prints panda-sched's configuration keys from the table its"
           " parser reads:\n"
           "  --markdown          the key reference (docs/"
           "panda-sched-keys.md)\n"
           "  --vswitch-xml=qos|queue  vswitch.xml <column> elements\n"
           "  --names             the known keys, one line\n"
           "  --effective[=TEXT]  TEXT parsed, and every key in effect\n"
           "  -h, --help          show this help and exit\n"
           "  --version           show the version and exit\n");
}

int
main(int argc, char *argv[])
{
    static const struct option options[] = {
        { "markdown", no_argument, NULL, 'm' },
        { "vswitch-xml", required_argument, NULL, 'x' },
        { "names", no_argument, NULL, 'n' },
        { "effective", optional_argument, NULL, 'e' },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    const char *arg = NULL;
    char *text = NULL;
    int c = -1, opt;

    cli_log_set_program("panda-sched-keys");
    while ((opt = cli_opt_next(argc, argv, "h", options, usage)) != -1) {
        if (c != -1) {
            cli_log_usage("give one of --markdown, --vswitch-xml, --names"
                          " and --effective");
        }
        c = opt;
        arg = optarg;
    }
    cli_opt_no_operands(argc, argv);
    if (c == -1) {
        cli_log_usage("give one of --markdown, --vswitch-xml, --names and"
                      " --effective");
    }
    switch (c) {
    case 'm':
        text = panda_sched_keys_doc(PANDA_SCHED_DOC_MARKDOWN);
        break;
    case 'x':
        if (!strcmp(arg, "qos")) {
            text = panda_sched_keys_doc(PANDA_SCHED_DOC_VSWITCH_QOS);
        } else if (!strcmp(arg, "queue")) {
            text = panda_sched_keys_doc(PANDA_SCHED_DOC_VSWITCH_QUEUE);
        } else {
            cli_log_usage("--vswitch-xml=%s: qos or queue", arg);
        }
        break;
    case 'n':
        text = panda_sched_keys_doc(PANDA_SCHED_DOC_NAMES);
        break;
    case 'e': {
        struct panda_sched_config cfg;
        char *err;

        panda_sched_config_init(&cfg);
        err = panda_sched_config_parse(&cfg, arg ? arg : "");
        if (err) {
            /* The answer to "is this configuration valid?": a refusal, as
             * ovs-vswitchd's, not a usage error. */
            cli_log_fatal("%s", err);
        }
        text = panda_sched_config_format_effective(&cfg);
        break;
    }
    default:
        abort();
    }
    fputs(text, stdout);
    if (*text && text[strlen(text) - 1] != '\n') {
        putchar('\n');
    }
    free(text);
    return ferror(stdout) || fflush(stdout) ? 1 : 0;
}

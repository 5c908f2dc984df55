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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/scheduler.h>

static void
usage(FILE *f)
{
    fprintf(f, "usage: panda-sched-keys --markdown | --vswitch-xml=qos|queue"
            " | --names | --effective[=KEY=VALUE,...]\n");
}

int
main(int argc, char *argv[])
{
    static const struct option options[] = {
        { "markdown", no_argument, NULL, 'm' },
        { "vswitch-xml", required_argument, NULL, 'x' },
        { "names", no_argument, NULL, 'n' },
        { "effective", optional_argument, NULL, 'e' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *arg = NULL;
    char *text = NULL;
    int c = -1, opt;

    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (c != -1 || opt == '?') {
            usage(stderr);
            return 2;
        }
        c = opt;
        arg = optarg;
    }
    if (c == -1 || optind != argc) {
        usage(stderr);
        return 2;
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
            fprintf(stderr, "panda-sched-keys: --vswitch-xml=%s: qos or"
                    " queue\n", arg);
            return 2;
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
            fprintf(stderr, "panda-sched-keys: %s\n", err);
            free(err);
            return 1;
        }
        text = panda_sched_config_format_effective(&cfg);
        break;
    }
    case 'h':
        usage(stdout);
        return 0;
    default:
        usage(stderr);
        return 2;
    }
    fputs(text, stdout);
    if (*text && text[strlen(text) - 1] != '\n') {
        putchar('\n');
    }
    free(text);
    return ferror(stdout) || fflush(stdout) ? 1 : 0;
}

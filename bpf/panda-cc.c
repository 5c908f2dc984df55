/*
 * panda-cc: registers, unregisters and reports the project's BPF TCP
 * congestion control, panda_dctcp (panda-dctcp.bpf.c), on kernels that have
 * BPF struct_ops but no tcp_dctcp module.
 *
 *   panda-cc load [--object FILE]   register (nothing to do if registered)
 *   panda-cc unload                 unregister (nothing to do if not)
 *   panda-cc status                 exit 0 if registered, 3 if not
 *   panda-cc stats [--netns-cookie N]  the per-namespace counters, JSON
 *
 * Why a loader of our own rather than "bpftool struct_ops register": one
 * program installed with the tools, with messages that name the problem
 * (not root, no BTF, the name taken), an idempotent load that says whether
 * it registered or found the algorithm registered (so that whoever loaded
 * it unloads it), and the counters, which bpftool shows only as raw map
 * dumps.
 *
 * The registration outlives this process: with libbpf 1.1 and a
 * ".struct_ops" map (no BPF_F_LINK) the kernel holds the map while the
 * algorithm is registered, and the link object libbpf hands back is
 * disconnected before it is freed, so nothing unregisters on exit.
 * "unload" deletes the map's element, which unregisters it; connections
 * still using the algorithm keep it (and its maps) until they close.
 *
 * The maps are found by name among the kernel's BPF maps: the struct_ops
 * map is named after the algorithm (panda-dctcp.h), and the registered one
 * is the one in state "in use" (an unregistered map lives on while
 * connections still use it); of several counter maps (such a map keeps its
 * own) the newest, the highest id, is the registered one's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cli/json.h>
#include <cli/log.h>
#include <cli/opt.h>
#include <cli/parse.h>

#include "loader.h"
#include "panda-dctcp.h"

#ifndef PANDA_BPF_DIR
#define PANDA_BPF_DIR "/usr/local/lib/panda-ovs/bpf"
#endif
#define DEFAULT_OBJECT PANDA_BPF_DIR "/panda-dctcp.bpf.o"
#define AVAILABLE "/proc/sys/net/ipv4/tcp_available_congestion_control"

/* LSB's "program is not running" for status. */
#define EXIT_NOT_LOADED 3

static bool verbose;

static void
usage(void)
{
    printf("usage: panda-cc COMMAND [OPTIONS]\n"
           "Registers the BPF DCTCP congestion control \"%s\" on kernels\n"
           "without the tcp_dctcp module (needs root, BPF struct_ops and\n"
           "kernel BTF).\n\n"
           "  load [--object FILE]    register it (default object %s);\n"
           "                          nothing to do if it is registered\n"
           "  unload                  unregister it; nothing to do if not\n"
           "  status                  exit 0 if registered, %d if not\n"
           "  stats [--netns-cookie N]  its counters per network namespace\n"
           "                          (JSON; N: getsockopt SO_NETNS_COOKIE)\n"
           "  -v, --verbose           libbpf's messages (the verifier's log\n"
           "                          when loading fails)\n"
           "  -h, --help              show this help and exit\n"
           "      --version           show the version and exit\n\n"
           "Exit status: 0, 1 on errors, 2 on bad arguments; status: %d if\n"
           "not registered (LSB's \"not running\").\n",
           PDCTCP_NAME, DEFAULT_OBJECT, EXIT_NOT_LOADED, EXIT_NOT_LOADED);
}

/* Is 'name' in net.ipv4.tcp_available_congestion_control? */
static bool
cc_available(const char *name)
{
    char buf[1024], *save = NULL;
    FILE *f = fopen(AVAILABLE, "r");
    bool found = false;

    if (!f) {
        return false;
    }
    if (fgets(buf, sizeof buf, f)) {
        for (char *tok = strtok_r(buf, " \t\n", &save); tok;
             tok = strtok_r(NULL, " \t\n", &save)) {
            if (!strcmp(tok, name)) {
                found = true;
            }
        }
    }
    fclose(f);
    return found;
}

/* A hint for errno 'err' of a BPF operation. */
static const char *
hint(int err)
{
    switch (err) {
    case EPERM:
    case EACCES:
        return " (needs CAP_BPF and CAP_NET_ADMIN: run as root)";
    case EOPNOTSUPP:            /* = ENOTSUP on Linux. */
    case ENOENT:
        return " (does the kernel have BPF struct_ops for "
               "tcp_congestion_ops and BTF in /sys/kernel/btf/vmlinux?)";
    default:
        return "";
    }
}

/* Is struct_ops map 'fd' registered?  Its value starts with the kernel's
 * struct bpf_struct_ops_common_value: a refcount, then the state, which is
 * BPF_STRUCT_OPS_STATE_INUSE while registered (and stays INIT, or becomes
 * TOBEFREE, when not). */
#define STRUCT_OPS_STATE_OFS 4
#define STRUCT_OPS_STATE_INUSE 1

static bool
struct_ops_in_use(int fd, __u32 value_size)
{
    __u32 key = 0, state;
    bool in_use = false;
    char *value;

    if (value_size < STRUCT_OPS_STATE_OFS + sizeof state) {
        return false;
    }
    value = calloc(1, value_size);
    if (value && !bpf_map_lookup_elem(fd, &key, value)) {
        memcpy(&state, value + STRUCT_OPS_STATE_OFS, sizeof state);
        in_use = state == STRUCT_OPS_STATE_INUSE;
    }
    free(value);
    return in_use;
}

/* The id of the newest BPF map named 'name' of 'type' (and a file
 * descriptor to it in '*fd', if 'fd'); 0 if there is none.  A struct_ops
 * map counts only while registered.  Dies on errors other than maps
 * vanishing while we look. */
static __u32
find_map(const char *name, enum bpf_map_type type, int *fd)
{
    __u32 id = 0, best = 0;
    int best_fd = -1;

    for (;;) {
        struct bpf_map_info info;
        __u32 len = sizeof info;
        int mfd;

        if (bpf_map_get_next_id(id, &id)) {
            if (errno == ENOENT) {
                break;
            }
            cli_log_fatal("listing BPF maps: %s%s", strerror(errno),
                          hint(errno));
        }
        mfd = bpf_map_get_fd_by_id(id);
        if (mfd < 0) {
            if (errno == ENOENT) {
                continue;           /* Freed meanwhile. */
            }
            cli_log_fatal("BPF map %"PRIu32": %s%s", id, strerror(errno),
                          hint(errno));
        }
        memset(&info, 0, sizeof info);
        if (!bpf_obj_get_info_by_fd(mfd, &info, &len)
            && info.type == type && !strcmp(info.name, name)
            && id > best
            && (type != BPF_MAP_TYPE_STRUCT_OPS
                || struct_ops_in_use(mfd, info.value_size))) {
            if (best_fd >= 0) {
                close(best_fd);
            }
            best = id;
            best_fd = mfd;
        } else {
            close(mfd);
        }
    }
    if (fd) {
        *fd = best_fd;
    } else if (best_fd >= 0) {
        close(best_fd);
    }
    return best;
}

static __u32
registered_map(int *fd)
{
    return find_map(PDCTCP_NAME, BPF_MAP_TYPE_STRUCT_OPS, fd);
}

static int
cmd_load(const char *object)
{
    struct bpf_object *obj;
    struct bpf_map *map;
    __u32 id;
    int err;

    id = registered_map(NULL);
    if (id) {
        printf("%s: already loaded (struct_ops map id %"PRIu32")\n",
               PDCTCP_NAME, id);
        return 0;
    }
    if (cc_available(PDCTCP_NAME)) {
        cli_log_fatal("load: the kernel has an algorithm named %s that is "
                      "not this program's struct_ops map; refusing to "
                      "touch it", PDCTCP_NAME);
    }
    if (access(object, R_OK)) {
        cli_log_fatal("load: %s: %s", object, strerror(errno));
    }
    obj = bpf_object__open_file(object, NULL);
    if (!obj) {
        err = errno;
        cli_log_fatal("load: opening %s: %s", object, strerror(err));
    }
    err = bpf_object__load(obj);
    if (err) {
        bpf_object__close(obj);
        cli_log_fatal("load: %s: the kernel refused it: %s%s%s", object,
                      strerror(-err), hint(-err),
                      verbose ? "" : " (-v shows libbpf's and the "
                      "verifier's messages)");
    }
    bpf_object__for_each_map(map, obj) {
        struct bpf_link *link;

        if (bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS) {
            continue;
        }
        link = bpf_map__attach_struct_ops(map);
        if (!link) {
            err = errno;
            bpf_object__close(obj);
            if (err == EEXIST) {
                /* Another loader registered it between our check and
                 * now: it is there, and it is theirs to unload. */
                printf("%s: already loaded (by another process)\n",
                       PDCTCP_NAME);
                return 0;
            }
            cli_log_fatal("load: registering %s: %s%s", bpf_map__name(map),
                          strerror(err), hint(err));
        }
        /* Keep the registration when the link object goes. */
        bpf_link__disconnect(link);
        bpf_link__destroy(link);
    }
    bpf_object__close(obj);
    id = registered_map(NULL);
    if (!id || !cc_available(PDCTCP_NAME)) {
        cli_log_fatal("load: %s did not appear among the registered "
                      "congestion controls", PDCTCP_NAME);
    }
    printf("%s: loaded (struct_ops map id %"PRIu32")\n", PDCTCP_NAME, id);
    return 0;
}

static int
cmd_unload(void)
{
    __u32 key = 0;
    int fd;
    __u32 id = registered_map(&fd);

    if (!id) {
        printf("%s: not loaded\n", PDCTCP_NAME);
        return 0;
    }
    if (bpf_map_delete_elem(fd, &key)) {
        int err = errno;

        close(fd);
        if (err == ENOENT) {
            /* Unregistered by someone else meanwhile. */
            printf("%s: not loaded\n", PDCTCP_NAME);
            return 0;
        }
        cli_log_fatal("unload: struct_ops map id %"PRIu32": %s%s", id,
                      strerror(err), hint(err));
    }
    close(fd);
    if (cc_available(PDCTCP_NAME)) {
        cli_log_fatal("unload: %s is still registered", PDCTCP_NAME);
    }
    printf("%s: unloaded (struct_ops map id %"PRIu32")\n", PDCTCP_NAME, id);
    return 0;
}

static int
cmd_status(void)
{
    __u32 id = registered_map(NULL);
    bool avail = cc_available(PDCTCP_NAME);

    if (id && avail) {
        printf("%s: loaded (struct_ops map id %"PRIu32")\n", PDCTCP_NAME,
               id);
        return 0;
    }
    if (avail) {
        printf("%s: registered, but not by this program's struct_ops map\n",
               PDCTCP_NAME);
        return 1;
    }
    printf("%s: not loaded\n", PDCTCP_NAME);
    return EXIT_NOT_LOADED;
}

static void
stats_json(struct cli_json *j, __u64 cookie, const struct pdctcp_stats *s)
{
    char key[32];

    snprintf(key, sizeof key, "%llu", (unsigned long long) cookie);
    cli_json_object(j, key);
#define F(NAME) cli_json_u64(j, #NAME, s->NAME)
    F(inits);
    F(fallbacks);
    F(fallback_errors);
    F(windows);
    F(marked_windows);
    F(reductions);
    F(reduction_factor_sum);
    F(reduction_alpha_sum);
    F(reduction_cwnd_sum);
    F(recoveries);
    F(timeouts);
    F(undos);
    F(ce_changes);
    F(delayed_acks);
#undef F
    cli_json_end_object(j);
}

static int
cmd_stats(bool one, __u64 cookie)
{
    struct cli_json j;
    int fd;
    __u32 id = find_map(PDCTCP_STATS_MAP, BPF_MAP_TYPE_LRU_HASH, &fd);

    cli_json_start(&j, stdout);
    cli_json_str(&j, "name", PDCTCP_NAME);
    cli_json_bool(&j, "loaded", registered_map(NULL) != 0);
    cli_json_u64(&j, "stats_map_id", id);
    cli_json_u64(&j, "fixed_point_one", PDCTCP_ONE);
    cli_json_object(&j, "netns");
    if (id) {
        struct pdctcp_stats s;
        __u64 key, next;
        bool first = true;

        if (one) {
            if (!bpf_map_lookup_elem(fd, &cookie, &s)) {
                stats_json(&j, cookie, &s);
            }
        } else {
            while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
                first = false;
                key = next;
                if (!bpf_map_lookup_elem(fd, &key, &s)) {
                    stats_json(&j, key, &s);
                }
            }
        }
        close(fd);
    }
    cli_json_end_object(&j);
    cli_json_finish(&j);
    return 0;
}

int
main(int argc, char *argv[])
{
    static const struct option longopts[] = {
        {"object", required_argument, NULL, 'o'},
        {"netns-cookie", required_argument, NULL, 'n'},
        {"verbose", no_argument, NULL, 'v'},
        CLI_OPT_COMMON,
        {NULL, 0, NULL, 0},
    };
    const char *object = DEFAULT_OBJECT;
    const char *cmd;
    bool one_netns = false;
    __u64 cookie = 0;
    int c;

    cli_log_set_program("panda-cc");
    while ((c = cli_opt_next(argc, argv, "o:n:vh", longopts, usage)) != -1) {
        switch (c) {
        case 'o':
            object = optarg;
            break;
        case 'n':
            cookie = cli_parse_u64("--netns-cookie", optarg, 0, UINT64_MAX);
            one_netns = true;
            break;
        case 'v':
            verbose = true;
            break;
        }
    }
    if (optind != argc - 1) {
        cli_log_usage("%s", optind == argc ? "a command is needed"
                      : "one command only");
    }
    cmd = argv[optind];
    bpf_loader_log_init(verbose);
    if (!strcmp(cmd, "load")) {
        return cmd_load(object);
    } else if (!strcmp(cmd, "unload")) {
        return cmd_unload();
    } else if (!strcmp(cmd, "status")) {
        return cmd_status();
    } else if (!strcmp(cmd, "stats")) {
        return cmd_stats(one_netns, cookie);
    }
    cli_log_usage("unknown command '%s'", cmd);
}

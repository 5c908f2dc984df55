/*
 * panda-bpf: Panda's marking on hosts without OVS's userspace datapath, as
 * the tc eBPF classifier panda_cls (panda-cls.bpf.c): loads it, attaches it
 * to interfaces (clsact egress, cls_bpf direct-action), replaces its policy
 * and reports what it did.
 *
 *   panda-bpf attach IFACE... [--policy FILE | --policy-text TEXT]
 *                             [--capacity N] [--capacity6 N]
 *                             [--idle-timeout MS] [--no-priority]
 *   panda-bpf detach IFACE... | --all
 *   panda-bpf set-policy FILE | --text TEXT
 *   panda-bpf show [--json]
 *   panda-bpf histogram [ID]
 *   panda-bpf flush
 *   panda-bpf replay (--policy FILE | --policy-text TEXT) PCAP
 *   panda-bpf probe
 *
 * One loaded instance (its program and maps pinned in a BPF filesystem,
 * --pin-dir) serves every interface it is attached to: one policy, one
 * connection table, one set of counters.  The first attach loads it with
 * the load-time settings (table capacity, idle timeout, whether to set
 * skb->priority); "detach --all" detaches it everywhere and unloads it.
 *
 * The policy is lib/panda's: the text or the file is parsed and checked by
 * panda_policy_parse() here, never in the kernel, and the program reads
 * the resulting struct panda_policy from a map.  A replacement is one
 * update of an array-of-maps slot (a new one-element array holding the new
 * policy), so a packet sees the old policy or the new one, never a mix; the
 * counters and the connection table stay (a new policy id starts its
 * connections afresh: the id is part of the key, as the datapath keeps a
 * table per id).  A bad policy is refused with lib/panda's message and the
 * running one stays.
 *
 * Commands that change the instance hold an exclusive lock on the pin
 * directory, so that two of them never interleave.
 */
#define _GNU_SOURCE             /* setns() */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/if_arp.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifdef HAVE_PCAP
/* libpcap's own struct bpf_insn (classic BPF) would clash with the
 * kernel's. */
#define PCAP_DONT_INCLUDE_PCAP_BPF_H 1
#include <pcap/pcap.h>
#endif

#include <panda/frame.h>
#include <panda/policy.h>
#include <panda/policy-json.h>
#include <panda/sizehist.h>

#include <cli/json.h>
#include <cli/log.h>
#include <cli/opt.h>
#include <cli/parse.h>

#include "loader.h"
#include "panda-cls.h"
#include "panda-cls.skel.h"

#define DEFAULT_PIN_DIR "/sys/fs/bpf/panda-ovs"
#define BPFFS_ROOT "/sys/fs/bpf"
#define DEFAULT_CAPACITY (1u << 18)
#define MAX_CAPACITY (1u << 26)
#define DEFAULT_IDLE_MS (120 * 1000)
#define LINKS_MAX 1024
#define POLICY_FILE_MAX (64 * 1024)
#define TEST_RUN_MAX 3072           /* Frame bytes given to a test run. */

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static const char *pin_dir = DEFAULT_PIN_DIR;
static const char *netns_name;      /* --netns, or NULL. */
static int orig_netns = -1;         /* Our own namespace, to come back. */
static bool verbose;

/* ---- Messages. ---- */

static void
usage(void)
{
    printf("usage: panda-bpf [OPTIONS] COMMAND [ARGS]\n"
           "Panda's marking as a tc eBPF classifier (clsact egress,\n"
           "cls_bpf direct-action): the level of every packet from its\n"
           "connection, written as DSCP and as the skb priority of the\n"
           "level's queue (tc class 1:queue+1, as OVS's linux-htb wants).\n"
           "\n"
           "Commands:\n"
           "  attach IFACE...       load (first time) and attach to the\n"
           "                        interfaces' egress\n"
           "      --policy FILE     the policy: panda-model's JSON, or the\n"
           "                        text panda(...) takes; '-' reads stdin\n"
           "      --policy-text TEXT  the policy as text\n"
           "      --capacity N      IPv4 connections the table holds\n"
           "                        (load time; default %u)\n"
           "      --capacity6 N     IPv6 connections (default: --capacity)\n"
           "      --idle-timeout MS forget a connection silent this long\n"
           "                        (load time; default %u; 0: never)\n"
           "      --no-priority     mark DSCP only, leave skb->priority\n"
           "  detach IFACE...       detach from the interfaces\n"
           "  detach --all          detach everywhere and unload\n"
           "  set-policy FILE       replace the policy (FILE or --text TEXT)\n"
           "  show [--json]         policy, interfaces, packets per level,\n"
           "                        table occupancy and evictions\n"
           "  histogram [ID]        TCP payload sizes per level, the text\n"
           "                        of ovs-appctl panda/histogram\n"
           "  flush                 forget every connection (counters stay)\n"
           "  replay --policy FILE PCAP  the level of every packet of a\n"
           "                        capture through the program\n"
           "                        (BPF_PROG_TEST_RUN; nothing attached)\n"
           "  probe                 whether this kernel can run it\n"
           "\n"
           "Options:\n"
           "  --pin-dir DIR         where the instance is pinned (default\n"
           "                        %s)\n"
           "  --netns NAME          interfaces are in network namespace\n"
           "                        NAME (ip netns)\n"
           "  -v, --verbose         libbpf's and the verifier's messages\n"
           "  -h, --help            this help\n"
           "  --version             the version\n",
           DEFAULT_CAPACITY, DEFAULT_IDLE_MS, DEFAULT_PIN_DIR);
}

/* A hint for errno 'err' of a BPF or tc operation. */
static const char *
hint(int err)
{
    switch (err) {
    case EPERM:
    case EACCES:
        return " (needs CAP_BPF and CAP_NET_ADMIN: run as root)";
    case EOPNOTSUPP:
        return " (unavailable: does the kernel have BPF and cls_bpf?)";
    default:
        return "";
    }
}

/* ---- Network namespaces. ---- */

/* Enters network namespace 'name' (ip netns's /run/netns/NAME), or our
 * own if NULL. */
static void
netns_enter(const char *name)
{
    char path[PATH_MAX];
    int fd;

    if (orig_netns < 0) {
        orig_netns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (orig_netns < 0) {
            cli_log_fatal("/proc/self/ns/net: %s", strerror(errno));
        }
    }
    if (!name || !*name) {
        if (setns(orig_netns, CLONE_NEWNET)) {
            cli_log_fatal("returning to our network namespace: %s",
                          strerror(errno));
        }
        return;
    }
    if (strchr(name, '/')) {
        snprintf(path, sizeof path, "%s", name);
    } else {
        snprintf(path, sizeof path, "/run/netns/%s", name);
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_log_fatal("network namespace %s: %s (ip netns list shows "
                      "them)", name, strerror(errno));
    }
    if (setns(fd, CLONE_NEWNET)) {
        cli_log_fatal("entering network namespace %s: %s%s", name,
                      strerror(errno), hint(errno));
    }
    close(fd);
}

/* The cookie of the network namespace we are in. */
static uint64_t
netns_cookie(void)
{
    uint64_t cookie = 0;
    socklen_t len = sizeof cookie;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (fd >= 0) {
        if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len)) {
            cookie = 0;
        }
        close(fd);
    }
    return cookie;
}

/* ---- The pin directory. ---- */

static char *
pin_path(const char *name)
{
    return panda_asprintf("%s/%s", pin_dir, name);
}

static bool
is_bpffs(const char *path)
{
    struct statfs st;

    return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

/* Makes sure that the pin directory exists on a BPF filesystem: mounts
 * one on /sys/fs/bpf if the directory is under it and nothing is mounted
 * there (as tc does), creates the directory. */
static void
pin_dir_prepare(void)
{
    char *parent = panda_xmalloc(strlen(pin_dir) + 1);
    char *slash;

    strcpy(parent, pin_dir);
    slash = strrchr(parent, '/');
    if (!slash || slash == parent) {
        cli_log_fatal("--pin-dir %s: give a directory inside a BPF "
                      "filesystem, e.g. %s", pin_dir, DEFAULT_PIN_DIR);
    }
    *slash = '\0';
    if (!is_bpffs(parent)) {
        if (!strcmp(parent, BPFFS_ROOT)) {
            if (mount("bpf", BPFFS_ROOT, "bpf", 0, "mode=0700")) {
                cli_log_fatal("mounting a BPF filesystem on %s: %s%s",
                              BPFFS_ROOT, strerror(errno), hint(errno));
            }
        } else {
            cli_log_fatal("%s is not on a BPF filesystem (mount -t bpf bpf "
                          "%s)", parent, parent);
        }
    }
    if (mkdir(pin_dir, 0700) && errno != EEXIST) {
        cli_log_fatal("%s: %s", pin_dir, strerror(errno));
    }
    free(parent);
}

/* Locks the pin directory (exclusive, until exit).  Returns false if it
 * does not exist (nothing loaded). */
static bool
pin_dir_lock(void)
{
    int fd = open(pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0) {
        if (errno == ENOENT) {
            return false;
        }
        cli_log_fatal("%s: %s%s", pin_dir, strerror(errno), hint(errno));
    }
    if (flock(fd, LOCK_EX)) {
        cli_log_fatal("locking %s: %s", pin_dir, strerror(errno));
    }
    return true;                /* The descriptor stays open: the lock. */
}

/* ---- The instance. ---- */

struct instance {
    int prog, policy, conns4, conns6, stats, hist, config, links, loader;
    struct pcls_config cfg;
    uint32_t prog_id;
};

static const char *const pin_names[] = {
    PCLS_PROG, PCLS_MAP_POLICY, PCLS_MAP_CONNS4, PCLS_MAP_CONNS6,
    PCLS_MAP_STATS, PCLS_MAP_HIST, PCLS_MAP_CONFIG, PCLS_MAP_LINKS,
    PCLS_MAP_LOADER,
};
#define N_PINS (sizeof pin_names / sizeof pin_names[0])

static int *
instance_fd(struct instance *in, size_t i)
{
    int *fds[] = { &in->prog, &in->policy, &in->conns4, &in->conns6,
                   &in->stats, &in->hist, &in->config, &in->links,
                   &in->loader };

    return fds[i];
}

static uint32_t
prog_id(int fd)
{
    struct bpf_prog_info info;
    uint32_t len = sizeof info;

    memset(&info, 0, sizeof info);
    return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* Opens the pinned instance.  Returns false if none is loaded.  With
 * 'partial', a pin that is missing (an instance left half removed, or
 * pinned by an older panda-bpf) is left at -1 instead of being an error:
 * what detach --all needs to clean it up. */
static bool
instance_open__(struct instance *in, bool partial)
{
    uint32_t zero = 0;
    size_t i;

    for (i = 0; i < N_PINS; i++) {
        char *path = pin_path(pin_names[i]);

        *instance_fd(in, i) = bpf_obj_get(path);
        if (*instance_fd(in, i) < 0) {
            int err = errno;

            free(path);
            if (err == ENOENT && i == 0) {
                return false;
            }
            if (err == ENOENT && partial) {
                continue;
            }
            cli_log_fatal("%s/%s: %s%s (a partly removed instance: "
                          "panda-bpf detach --all cleans it up)", pin_dir,
                          pin_names[i], strerror(err), hint(err));
        }
        free(path);
    }
    memset(&in->cfg, 0, sizeof in->cfg);
    if (in->config >= 0
        && bpf_map_lookup_elem(in->config, &zero, &in->cfg)) {
        cli_log_fatal("reading %s/%s: %s", pin_dir, PCLS_MAP_CONFIG,
                      strerror(errno));
    }
    in->prog_id = prog_id(in->prog);
    return true;
}

static bool
instance_open(struct instance *in)
{
    return instance_open__(in, false);
}

/* Removes the pins (the kernel frees what no attachment holds). */
static void
instance_unpin(void)
{
    size_t i;

    for (i = 0; i < N_PINS; i++) {
        char *path = pin_path(pin_names[i]);

        if (unlink(path) && errno != ENOENT) {
            cli_log_warn("removing %s: %s", path, strerror(errno));
        }
        free(path);
    }
    if (rmdir(pin_dir) && errno != ENOENT) {
        cli_log_warn("removing %s: %s", pin_dir, strerror(errno));
    }
}

/* Loads the program (not pinned): the skeleton, with the settings. */
static struct panda_cls *
skel_load(const struct pcls_config *cfg, uint32_t capacity6, bool bench)
{
    struct panda_cls *skel;
    int err;

    skel = panda_cls__open();
    if (!skel) {
        cli_log_fatal("opening the BPF object: %s", strerror(errno));
    }
    skel->rodata_config->pcls_config = *cfg;
    bpf_map__set_max_entries(skel->maps.conns4, cfg->capacity);
    bpf_map__set_max_entries(skel->maps.conns6, capacity6);
    bpf_program__set_autoload(skel->progs.panda_cls_bench, bench);
    bpf_program__set_autoload(skel->progs.panda_cls_rotate, bench);
    err = panda_cls__load(skel);
    if (err) {
        panda_cls__destroy(skel);
        cli_log_fatal("loading the BPF program: %s%s%s", strerror(-err),
                      hint(-err), verbose ? ""
                      : " (-v shows libbpf's and the verifier's messages)");
    }
    return skel;
}

static void
pin_fd(int fd, const char *name)
{
    char *path = pin_path(name);

    if (bpf_obj_pin(fd, path)) {
        int err = errno;

        instance_unpin();
        cli_log_fatal("pinning %s: %s%s", path, strerror(err), hint(err));
    }
    free(path);
}

/* Loads and pins a new instance. */
static void
instance_load(const struct pcls_config *cfg, uint32_t capacity6)
{
    struct panda_cls *skel = skel_load(cfg, capacity6, false);
    int links, loader;

    links = bpf_map_create(BPF_MAP_TYPE_HASH, PCLS_MAP_LINKS,
                           sizeof(struct pcls_link_key),
                           sizeof(struct pcls_link), LINKS_MAX, NULL);
    if (links < 0) {
        int err = errno;

        panda_cls__destroy(skel);
        cli_log_fatal("creating the links map: %s%s", strerror(err),
                      hint(err));
    }
    pin_fd(bpf_program__fd(skel->progs.panda_cls), PCLS_PROG);
    pin_fd(bpf_map__fd(skel->maps.policy), PCLS_MAP_POLICY);
    pin_fd(bpf_map__fd(skel->maps.conns4), PCLS_MAP_CONNS4);
    pin_fd(bpf_map__fd(skel->maps.conns6), PCLS_MAP_CONNS6);
    pin_fd(bpf_map__fd(skel->maps.stats), PCLS_MAP_STATS);
    pin_fd(bpf_map__fd(skel->maps.hist), PCLS_MAP_HIST);
    pin_fd(bpf_map__fd(skel->maps.rodata_config), PCLS_MAP_CONFIG);
    pin_fd(links, PCLS_MAP_LINKS);
    close(links);
    loader = bpf_map_create(BPF_MAP_TYPE_ARRAY, PCLS_MAP_LOADER,
                            sizeof(uint32_t), sizeof(struct pcls_loader), 1,
                            NULL);
    if (loader < 0) {
        int err = errno;

        instance_unpin();
        cli_log_fatal("creating the loader's map: %s%s", strerror(err),
                      hint(err));
    }
    pin_fd(loader, PCLS_MAP_LOADER);
    close(loader);
    panda_cls__destroy(skel);
}

/* ---- Policies. ---- */

/* Reads a policy from 'file' ("-": stdin) or, if 'file' is NULL, from
 * 'text', with lib/panda's parsers: a file is panda-model's JSON (read by
 * panda/policy-json.h, as the controller reads it) or holds the policy
 * text (comment lines starting with '#' allowed).  Dies with lib/panda's
 * message on error. */
static void
policy_read(const char *file, const char *text, struct panda_policy *p)
{
    char *buf = NULL, *buf_json = NULL, *err, *line, *save = NULL;
    char *found = NULL, open_err[256];
    bool json = false;

    if (file) {
        FILE *f;
        size_t n;

        if (!strcmp(file, "-")) {
            f = stdin;
        } else {
            char *errp = NULL;

            f = panda_open_input(file, POLICY_FILE_MAX, "policy file",
                                 &errp);
            if (!f) {
                snprintf(open_err, sizeof open_err, "%s", errp);
                free(errp);
                cli_log_fatal("%s", open_err);
            }
        }
        buf = panda_xmalloc(POLICY_FILE_MAX + 1);
        n = fread(buf, 1, POLICY_FILE_MAX + 1, f);
        if (f != stdin) {
            fclose(f);
        }
        if (n > POLICY_FILE_MAX) {
            cli_log_fatal("%s: longer than %d bytes: not a policy", file,
                          POLICY_FILE_MAX);
        }
        buf[n] = '\0';
        buf_json = panda_xmalloc(n + 1);
        memcpy(buf_json, buf, n + 1);
        /* A JSON document, or one policy: the one line that is not empty
         * or a comment. */
        for (line = strtok_r(buf, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
            line += strspn(line, " \t\r");
            line[strcspn(line, "\r")] = '\0';
            while (*line && strchr(" \t", line[strlen(line) - 1])) {
                line[strlen(line) - 1] = '\0';
            }
            if (!*line || *line == '#') {
                continue;
            }
            if (*line == '{') {
                json = true;
                break;
            }
            if (found) {
                cli_log_fatal("%s: more than one policy (one line of text, "
                              "as panda(...) takes it)", file);
            }
            found = line;
        }
        if (json) {
            /* panda-model's policy file, read by lib/panda's JSON reader
             * (the structured fields; a stale "action" is a warning). */
            char *warning = NULL;

            err = panda_policy_json_read(buf_json, file, PANDA_JSON_DOC, p,
                                         &warning);
            if (err) {
                cli_log_fatal("bad policy, nothing changed: %s", err);
            }
            if (warning) {
                cli_log_warn("%s", warning);
                free(warning);
            }
            free(buf_json);
            free(buf);
            return;
        }
        if (!found) {
            cli_log_fatal("%s: no policy in it", file);
        }
        text = found;
    }
    err = panda_policy_parse(text, p);
    if (err) {
        cli_log_fatal("%s%sbad policy, nothing changed: %s",
                      file ? file : "", file ? ": " : "", err);
    }
    free(buf_json);
    free(buf);
}

/* Reads the running policy slot.  Returns false if there is none. */
static bool
policy_current(const struct instance *in, struct pcls_policy *slot)
{
    uint32_t zero = 0, inner_id;
    bool ok = false;
    int fd;

    if (bpf_map_lookup_elem(in->policy, &zero, &inner_id)) {
        return false;
    }
    fd = bpf_map_get_fd_by_id(inner_id);
    if (fd >= 0) {
        ok = !bpf_map_lookup_elem(fd, &zero, slot) && slot->valid;
        close(fd);
    }
    return ok;
}

/* Zeroes a per-CPU array of u64 counters. */
static void
percpu_zero(int fd, uint32_t n_keys, size_t value_size)
{
    int n_cpus = libbpf_num_possible_cpus();
    size_t stride = (value_size + 7) & ~(size_t) 7;
    void *zeros = calloc(n_cpus > 0 ? n_cpus : 1, stride);
    uint32_t k;

    for (k = 0; zeros && k < n_keys; k++) {
        bpf_map_update_elem(fd, &k, zeros, BPF_ANY);
    }
    free(zeros);
}

/* Makes 'p' the running policy: a new inner map holding it, swapped into
 * the policy slot in one update.  A new policy id resets the histograms
 * (they are per id).  Returns the new generation. */
static uint64_t
policy_install(const struct instance *in, const struct panda_policy *p)
{
    struct pcls_policy slot, old;
    bool had = policy_current(in, &old);
    uint32_t zero = 0;
    int fd;

    memset(&slot, 0, sizeof slot);
    slot.policy = *p;
    slot.generation = had ? old.generation + 1 : 1;
    slot.valid = 1;
    fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "policy", sizeof(uint32_t),
                        sizeof slot, 1, NULL);
    if (fd < 0) {
        cli_log_fatal("creating the policy map: %s%s", strerror(errno),
                      hint(errno));
    }
    if (bpf_map_update_elem(fd, &zero, &slot, BPF_ANY)
        || bpf_map_update_elem(in->policy, &zero, &fd, BPF_ANY)) {
        cli_log_fatal("installing the policy: %s%s", strerror(errno),
                      hint(errno));
    }
    close(fd);
    if (had && old.policy.id != p->id) {
        percpu_zero(in->hist, PANDA_MAX_LEVELS * PCLS_HIST_BUCKETS,
                    sizeof(uint64_t));
    }
    return slot.generation;
}

/* ---- tc. ---- */

/* Counts the tc filters of 'ifindex' on the clsact hook 'parent'
 * (RTM_GETTFILTER dump: one message per filter and per filter kind). */
static int
tc_count_filters(int ifindex, uint32_t parent)
{
    struct {
        struct nlmsghdr nh;
        struct tcmsg tc;
    } req;
    char buf[16384];
    int fd, n = 0;
    bool done = false;

    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) {
        return -1;
    }
    memset(&req, 0, sizeof req);
    req.nh.nlmsg_len = sizeof req;
    req.nh.nlmsg_type = RTM_GETTFILTER;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.nh.nlmsg_seq = 1;
    req.tc.tcm_family = AF_UNSPEC;
    req.tc.tcm_ifindex = ifindex;
    req.tc.tcm_parent = parent;
    if (send(fd, &req, sizeof req, 0) < 0) {
        close(fd);
        return -1;
    }
    while (!done) {
        ssize_t len = recv(fd, buf, sizeof buf, 0);
        struct nlmsghdr *nh;

        if (len <= 0) {
            n = -1;
            break;
        }
        for (nh = (struct nlmsghdr *) buf; NLMSG_OK(nh, (size_t) len);
             nh = NLMSG_NEXT(nh, len)) {
            if (nh->nlmsg_type == NLMSG_DONE) {
                done = true;
                break;
            } else if (nh->nlmsg_type == NLMSG_ERROR) {
                n = -1;
                done = true;
                break;
            } else if (nh->nlmsg_type == RTM_NEWTFILTER) {
                n++;
            }
        }
    }
    close(fd);
    return n;
}

/* The interface index of 'ifname' (in the current namespace), which must
 * be an Ethernet device. */
static int
iface_index(const char *ifname)
{
    char path[PATH_MAX];
    unsigned int type = 0;
    int ifindex = if_nametoindex(ifname);
    FILE *f;

    if (!ifindex) {
        cli_log_fatal("%s: no such interface%s%s", ifname,
                      netns_name ? " in network namespace " : "",
                      netns_name ? netns_name : "");
    }
    snprintf(path, sizeof path, "/sys/class/net/%s/type", ifname);
    f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%u", &type) != 1) {
            type = 0;
        }
        fclose(f);
    }
    if (f && type != ARPHRD_ETHER) {
        cli_log_fatal("%s: not an Ethernet interface (type %u): the "
                      "classifier parses Ethernet frames", ifname, type);
    }
    return ifindex;
}

static void
tc_hook_init(struct bpf_tc_hook *hook, int ifindex)
{
    memset(hook, 0, sizeof *hook);
    hook->sz = sizeof *hook;
    hook->ifindex = ifindex;
    hook->attach_point = BPF_TC_EGRESS;
}

static void
tc_opts_init(struct bpf_tc_opts *opts, int prog_fd)
{
    memset(opts, 0, sizeof *opts);
    opts->sz = sizeof *opts;
    opts->prog_fd = prog_fd;
    opts->handle = PCLS_TC_HANDLE;
    opts->priority = PCLS_TC_PRIORITY;
}

/* The id of the program that our filter on 'ifindex' runs, 0 if none. */
static uint32_t
tc_attached_id(int ifindex)
{
    struct bpf_tc_hook hook;
    struct bpf_tc_opts opts;

    tc_hook_init(&hook, ifindex);
    tc_opts_init(&opts, 0);
    return bpf_tc_query(&hook, &opts) ? 0 : opts.prog_id;
}

/* Attaches the program to 'ifname''s egress (in the current namespace),
 * replacing our filter if there is one.  Records the attachment. */
static void
tc_attach(const struct instance *in, const char *ifname)
{
    struct pcls_link_key key;
    struct pcls_link link;
    struct bpf_tc_hook hook;
    struct bpf_tc_opts opts;
    int ifindex = iface_index(ifname);
    bool created = false;
    int err;

    memset(&key, 0, sizeof key);
    key.netns_cookie = netns_cookie();
    key.ifindex = ifindex;
    memset(&link, 0, sizeof link);
    if (!bpf_map_lookup_elem(in->links, &key, &link)) {
        created = link.created_clsact;
    }

    tc_hook_init(&hook, ifindex);
    err = bpf_tc_hook_create(&hook);
    if (!err) {
        created = true;
    } else if (err != -EEXIST) {
        cli_log_fatal("%s: adding the clsact qdisc: %s%s", ifname,
                      strerror(-err), err == -EOPNOTSUPP || err == -ENOENT
                      ? " (unavailable: the kernel has no clsact qdisc, "
                        "CONFIG_NET_SCH_INGRESS)" : hint(-err));
    }
    tc_opts_init(&opts, in->prog);
    opts.flags = BPF_TC_F_REPLACE;
    err = bpf_tc_attach(&hook, &opts);
    if (err) {
        cli_log_fatal("%s: attaching to egress: %s%s", ifname,
                      strerror(-err), err == -EOPNOTSUPP || err == -ENOENT
                      ? " (unavailable: the kernel has no cls_bpf, "
                        "CONFIG_NET_CLS_BPF)" : hint(-err));
    }
    snprintf(link.ifname, sizeof link.ifname, "%s", ifname);
    snprintf(link.netns, sizeof link.netns, "%s",
             netns_name ? netns_name : "");
    link.created_clsact = created;
    if (bpf_map_update_elem(in->links, &key, &link, BPF_ANY)) {
        cli_log_warn("%s: attached, but not recorded (%s): detach --all "
                     "will not find it", ifname, strerror(errno));
    }
}

/* Detaches our filter from 'ifindex' ('ifname' for messages) and removes
 * the clsact qdisc if we added it and no other filter uses it. */
static void
tc_detach(int ifindex, const char *ifname, bool created_clsact)
{
    struct bpf_tc_hook hook;
    struct bpf_tc_opts opts;
    int err;

    tc_hook_init(&hook, ifindex);
    tc_opts_init(&opts, 0);
    err = bpf_tc_detach(&hook, &opts);
    if (err && err != -ENOENT) {
        cli_log_fatal("%s: detaching: %s%s", ifname, strerror(-err),
                      hint(-err));
    }
    if (created_clsact
        && !tc_count_filters(ifindex, TC_H_MAKE(TC_H_CLSACT,
                                                TC_H_MIN_EGRESS))
        && !tc_count_filters(ifindex, TC_H_MAKE(TC_H_CLSACT,
                                                TC_H_MIN_INGRESS))) {
        hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
        bpf_tc_hook_destroy(&hook);
    }
}

/* ---- Counters. ---- */

static void
stats_read(const struct instance *in, struct pcls_stats *sum)
{
    int n_cpus = libbpf_num_possible_cpus();
    struct pcls_stats *per = calloc(n_cpus, sizeof *per);
    uint32_t zero = 0;
    int c;
    size_t i;

    memset(sum, 0, sizeof *sum);
    if (!per || bpf_map_lookup_elem(in->stats, &zero, per)) {
        cli_log_fatal("reading the counters: %s", strerror(errno));
    }
    for (c = 0; c < n_cpus; c++) {
        const uint64_t *src = (const uint64_t *) &per[c];
        uint64_t *dst = (uint64_t *) sum;

        for (i = 0; i < sizeof *sum / sizeof(uint64_t); i++) {
            dst[i] += src[i];
        }
    }
    free(per);
}

static void
loader_read(const struct instance *in, struct pcls_loader *ls)
{
    uint32_t zero = 0;

    if (bpf_map_lookup_elem(in->loader, &zero, ls)) {
        memset(ls, 0, sizeof *ls);
    }
}

static void
hist_read(const struct instance *in, struct panda_sizehist *h)
{
    int n_cpus = libbpf_num_possible_cpus();
    uint64_t *per = calloc(n_cpus, sizeof *per);
    uint32_t k;
    int c;

    panda_sizehist_reset(h);
    for (k = 0; per && k < PANDA_MAX_LEVELS * PCLS_HIST_BUCKETS; k++) {
        uint64_t s = 0;

        if (bpf_map_lookup_elem(in->hist, &k, per)) {
            cli_log_fatal("reading the histograms: %s", strerror(errno));
        }
        for (c = 0; c < n_cpus; c++) {
            s += per[c];
        }
        h->payload[k / PCLS_HIST_BUCKETS][k % PCLS_HIST_BUCKETS] = s;
    }
    free(per);
}

/* Entries of a connection table, and how many of them ended (FIN/RST). */
struct table_count {
    uint64_t entries, ended, current_id;
};

static void
table_count(int fd, size_t key_size, uint32_t id, struct table_count *tc)
{
    enum { BATCH = 4096 };
    void *keys = panda_xmalloc(BATCH * key_size);
    struct pcls_conn *values = panda_xmalloc(BATCH * sizeof *values);
    uint64_t batch = 0;
    bool first = true;

    memset(tc, 0, sizeof *tc);
    for (;;) {
        uint32_t n = BATCH, i;
        int err;

        err = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, keys,
                                   values, &n, NULL);
        first = false;
        if (err && errno != ENOENT) {
            cli_log_fatal("reading the connection table: %s",
                          strerror(errno));
        }
        for (i = 0; i < n; i++) {
            uint32_t key_id;

            memcpy(&key_id, (char *) keys + i * key_size, sizeof key_id);
            tc->entries++;
            tc->ended += !!(values[i].seen & PCLS_SEEN_ENDED);
            tc->current_id += key_id == id;
        }
        if (err) {
            break;
        }
    }
    free(keys);
    free(values);
}

/* ---- Commands. ---- */

struct attach_opts {
    const char *policy_file, *policy_text;
    uint32_t capacity, capacity6;
    uint64_t idle_timeout_ms;
    bool capacity_set, capacity6_set, idle_set, no_priority;
};

static int
cmd_attach(char **ifaces, int n_ifaces, const struct attach_opts *o)
{
    struct panda_policy p;
    struct instance in;
    bool have_policy = o->policy_file || o->policy_text;
    int i;

    if (!n_ifaces) {
        cli_log_usage("attach: name at least one interface");
    }
    if (have_policy) {
        policy_read(o->policy_file, o->policy_text, &p);
    }
    pin_dir_prepare();
    pin_dir_lock();
    if (instance_open(&in)) {
        if ((o->capacity_set && o->capacity != in.cfg.capacity)
            || (o->idle_set && o->idle_timeout_ms
                != in.cfg.idle_timeout_ms)
            || (o->no_priority && in.cfg.set_priority)) {
            cli_log_fatal("attach: loaded already with capacity %" PRIu32
                          ", idle timeout %" PRIu64 " ms, priority %s "
                          "(settings of the first attach; detach --all to "
                          "load with others)", in.cfg.capacity,
                          in.cfg.idle_timeout_ms,
                          in.cfg.set_priority ? "set" : "not set");
        }
    } else {
        struct pcls_config cfg;

        memset(&cfg, 0, sizeof cfg);
        cfg.capacity = o->capacity;
        cfg.idle_timeout_ms = o->idle_timeout_ms;
        cfg.set_priority = !o->no_priority;
        instance_load(&cfg, o->capacity6_set ? o->capacity6 : o->capacity);
        if (!instance_open(&in)) {
            cli_log_fatal("loaded, but %s/%s is gone", pin_dir, PCLS_PROG);
        }
    }
    if (have_policy) {
        policy_install(&in, &p);
    }
    netns_enter(netns_name);
    for (i = 0; i < n_ifaces; i++) {
        tc_attach(&in, ifaces[i]);
        printf("%s: attached (program %" PRIu32 ")\n", ifaces[i],
               in.prog_id);
    }
    netns_enter(NULL);
    return 0;
}

/* Detaches every recorded attachment (detach --all), or those of
 * 'ifaces' in the current --netns. */
static int
cmd_detach(char **ifaces, int n_ifaces, bool all)
{
    struct pcls_link_key key, next, *prev = NULL;
    struct pcls_link link;
    struct instance in;
    int i;

    if (all == (n_ifaces > 0)) {
        cli_log_usage("detach: name interfaces or give --all");
    }
    if (!pin_dir_lock() || !instance_open__(&in, all)) {
        if (all) {
            instance_unpin();
            printf("not loaded\n");
            return 0;
        }
        cli_log_fatal("detach: not loaded (no %s/%s)", pin_dir, PCLS_PROG);
    }
    if (all) {
        while (in.links >= 0
               && !bpf_map_get_next_key(in.links, prev, &next)) {
            key = next;
            prev = &key;
            if (bpf_map_lookup_elem(in.links, &key, &link)) {
                continue;
            }
            netns_enter(link.netns[0] ? link.netns : NULL);
            if (netns_cookie() == key.netns_cookie
                && tc_attached_id(key.ifindex) == in.prog_id) {
                tc_detach(key.ifindex, link.ifname, link.created_clsact);
                printf("%s%s%s: detached\n", link.ifname,
                       link.netns[0] ? " in " : "", link.netns);
            }
            netns_enter(NULL);
        }
        instance_unpin();
        printf("unloaded\n");
        return 0;
    }
    netns_enter(netns_name);
    for (i = 0; i < n_ifaces; i++) {
        int ifindex = if_nametoindex(ifaces[i]);
        bool created = false;

        if (!ifindex || tc_attached_id(ifindex) != in.prog_id) {
            cli_log_fatal("%s: not attached", ifaces[i]);
        }
        memset(&key, 0, sizeof key);
        key.netns_cookie = netns_cookie();
        key.ifindex = ifindex;
        if (!bpf_map_lookup_elem(in.links, &key, &link)) {
            created = link.created_clsact;
        }
        tc_detach(ifindex, ifaces[i], created);
        bpf_map_delete_elem(in.links, &key);
        printf("%s: detached\n", ifaces[i]);
    }
    netns_enter(NULL);
    return 0;
}

static int
cmd_set_policy(const char *file, const char *text)
{
    struct panda_policy p;
    struct instance in;
    char buf[PANDA_POLICY_TEXT_MAX];
    uint64_t gen;

    if (!file == !text) {
        cli_log_usage("set-policy: give a policy FILE or --text TEXT");
    }
    policy_read(file, text, &p);
    if (!pin_dir_lock() || !instance_open(&in)) {
        cli_log_fatal("set-policy: not loaded (panda-bpf attach loads it)");
    }
    gen = policy_install(&in, &p);
    panda_policy_format(&p, buf, sizeof buf);
    printf("policy %" PRIu64 ": %s\n", gen, buf);
    return 0;
}

/* The counters of struct pcls_stats after 'packets', in order. */
/* Deletes every entry of connection table 'fd'; returns how many. */
static uint64_t
table_flush(int fd, size_t key_size)
{
    enum { BATCH = 4096 };
    void *keys = panda_xmalloc(BATCH * key_size);
    struct pcls_conn *values = panda_xmalloc(BATCH * sizeof *values);
    uint64_t batch = 0, n_deleted = 0;
    bool first = true;

    for (;;) {
        uint32_t n = BATCH;
        int err;

        err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &batch,
                                              &batch, keys, values, &n,
                                              NULL);
        first = false;
        if (err && errno != ENOENT) {
            cli_log_fatal("flushing the connection table: %s",
                          strerror(errno));
        }
        n_deleted += n;
        if (err) {
            break;
        }
    }
    free(keys);
    free(values);
    return n_deleted;
}

/* Forgets every connection (as ovs-appctl panda/flush does); the counters
 * stay.  The entries deleted are counted in the loader's map, so that the
 * evictions stay what the LRU did. */
static int
cmd_flush(void)
{
    struct pcls_loader ls;
    struct instance in;
    uint32_t zero = 0;
    uint64_t n;

    if (!pin_dir_lock() || !instance_open(&in)) {
        cli_log_fatal("flush: not loaded (no %s/%s)", pin_dir, PCLS_PROG);
    }
    n = table_flush(in.conns4, sizeof(struct pcls_key4))
        + table_flush(in.conns6, sizeof(struct pcls_key6));
    loader_read(&in, &ls);
    ls.flushed += n;
    if (bpf_map_update_elem(in.loader, &zero, &ls, BPF_ANY)) {
        cli_log_warn("flushed, but the count of flushed entries could not "
                     "be kept (%s): evictions will read too high",
                     strerror(errno));
    }
    printf("flushed %" PRIu64 " connections\n", n);
    return 0;
}

static const char *const stat_names[] = {
    "not_ip", "no_policy", "tunnel", "with_entry", "without_entry",
    "inserted", "insert_failed", "ended", "resumed", "expired",
    "idle_resets", "dscp_written",
};
_Static_assert(sizeof stat_names / sizeof *stat_names
               == (__builtin_offsetof(struct pcls_stats, segments)
                   - __builtin_offsetof(struct pcls_stats, not_ip))
                  / sizeof(uint64_t), "a name for every counter");

static int
cmd_show(bool json)
{
    struct pcls_loader ls;
    struct table_count t4, t6;
    struct pcls_policy slot;
    struct pcls_stats st;
    struct instance in;
    struct pcls_link_key key, next, *prev = NULL;
    struct pcls_link link;
    char text[PANDA_POLICY_TEXT_MAX] = "";
    bool have_policy;
    uint64_t evicted, total = 0;
    const uint64_t *extra;
    struct cli_json j;
    size_t i;

    if (!instance_open(&in)) {
        if (json) {
            printf("{\"loaded\": false}\n");
        } else {
            printf("not loaded (%s)\n", pin_dir);
        }
        return 0;
    }
    have_policy = policy_current(&in, &slot);
    if (have_policy) {
        panda_policy_format(&slot.policy, text, sizeof text);
    }
    stats_read(&in, &st);
    table_count(in.conns4, sizeof(struct pcls_key4),
                have_policy ? slot.policy.id : 0, &t4);
    table_count(in.conns6, sizeof(struct pcls_key6),
                have_policy ? slot.policy.id : 0, &t6);
    /* Entries leave only by expiry (counted), by flush (counted) or by
     * the LRU making room for an insert: the rest of the inserts that are
     * not in the table were evicted.  One count for both families. */
    loader_read(&in, &ls);
    evicted = st.inserted - st.expired - ls.flushed - t4.entries
              - t6.entries;
    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        total += st.packets[i];
    }
    extra = &st.not_ip;

    if (json) {
        cli_json_start(&j, stdout);
        cli_json_bool(&j, "loaded", true);
        cli_json_str(&j, "pin_dir", pin_dir);
        cli_json_u64(&j, "program_id", in.prog_id);
        cli_json_u64(&j, "capacity", in.cfg.capacity);
        cli_json_u64(&j, "idle_timeout_ms", in.cfg.idle_timeout_ms);
        cli_json_bool(&j, "set_priority", in.cfg.set_priority);
        if (have_policy) {
            cli_json_object(&j, "policy");
            cli_json_u64(&j, "id", slot.policy.id);
            cli_json_u64(&j, "generation", slot.generation);
            cli_json_str(&j, "text", text);
            cli_json_end_object(&j);
        } else {
            cli_json_null(&j, "policy");
        }
        cli_json_array(&j, "interfaces");
        while (!bpf_map_get_next_key(in.links, prev, &next)) {
            key = next;
            prev = &key;
            if (bpf_map_lookup_elem(in.links, &key, &link)) {
                continue;
            }
            netns_enter(link.netns[0] ? link.netns : NULL);
            cli_json_object(&j, NULL);
            cli_json_str(&j, "name", link.ifname);
            cli_json_str(&j, "netns", link.netns);
            cli_json_bool(&j, "attached",
                          netns_cookie() == key.netns_cookie
                          && tc_attached_id(key.ifindex) == in.prog_id);
            cli_json_end_object(&j);
            netns_enter(NULL);
        }
        cli_json_end_array(&j);
        cli_json_array_compact(&j, "packets");
        for (i = 0; i < PANDA_MAX_LEVELS; i++) {
            cli_json_u64(&j, NULL, st.packets[i]);
        }
        cli_json_end_array(&j);
        cli_json_array_compact(&j, "segments");
        for (i = 0; i < PANDA_MAX_LEVELS; i++) {
            cli_json_u64(&j, NULL, st.segments[i]);
        }
        cli_json_end_array(&j);
        cli_json_object(&j, "counters");
        for (i = 0; i < sizeof stat_names / sizeof *stat_names; i++) {
            cli_json_u64(&j, stat_names[i], extra[i]);
        }
        cli_json_end_object(&j);
        cli_json_object(&j, "table");
        cli_json_u64(&j, "entries4", t4.entries);
        cli_json_u64(&j, "entries6", t6.entries);
        cli_json_u64(&j, "ended", t4.ended + t6.ended);
        cli_json_u64(&j, "entries_of_policy", t4.current_id
                     + t6.current_id);
        cli_json_u64(&j, "evicted", evicted);
        cli_json_u64(&j, "flushed", ls.flushed);
        cli_json_u64(&j, "memlock4", bpf_loader_map_memlock(in.conns4));
        cli_json_u64(&j, "memlock6", bpf_loader_map_memlock(in.conns6));
        cli_json_end_object(&j);
        cli_json_finish(&j);
        return 0;
    }

    printf("panda_cls program %" PRIu32 ", pinned in %s\n", in.prog_id,
           pin_dir);
    printf("settings: capacity %" PRIu32 " connections per family, idle "
           "timeout %" PRIu64 " ms, skb priority %s\n", in.cfg.capacity,
           in.cfg.idle_timeout_ms,
           in.cfg.set_priority ? "set (class 1:queue+1)" : "not set");
    if (have_policy) {
        printf("policy (generation %" PRIu64 "): %s\n", slot.generation,
               text);
    } else {
        printf("policy: none (packets pass unmarked)\n");
    }
    printf("interfaces:");
    while (!bpf_map_get_next_key(in.links, prev, &next)) {
        bool attached;

        key = next;
        prev = &key;
        if (bpf_map_lookup_elem(in.links, &key, &link)) {
            continue;
        }
        netns_enter(link.netns[0] ? link.netns : NULL);
        attached = netns_cookie() == key.netns_cookie
                   && tc_attached_id(key.ifindex) == in.prog_id;
        netns_enter(NULL);
        printf(" %s%s%s%s", link.ifname, link.netns[0] ? "@" : "",
               link.netns, attached ? "" : " (gone)");
    }
    printf("\npackets per level:");
    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        if (st.packets[i] || (have_policy && i < slot.policy.n_levels)) {
            printf(" %zu:%" PRIu64, i, st.packets[i]);
        }
    }
    printf(" (total %" PRIu64 ")\nsegments per level:", total);
    for (i = 0; i < PANDA_MAX_LEVELS; i++) {
        if (st.segments[i] || (have_policy && i < slot.policy.n_levels)) {
            printf(" %zu:%" PRIu64, i, st.segments[i]);
        }
    }
    printf(" (GSO packets as the segments they leave as)\n");
    for (i = 0; i < sizeof stat_names / sizeof *stat_names; i++) {
        printf("%s%s %" PRIu64, i ? ", " : "counters: ", stat_names[i],
               extra[i]);
    }
    printf("\ntable: %" PRIu64 " IPv4 + %" PRIu64 " IPv6 entries (%" PRIu64
           " ended by FIN/RST, %" PRIu64 " of the running policy id), "
           "evicted %" PRIu64 "; kernel memory %" PRIu64 " + %" PRIu64
           " bytes\n", t4.entries, t6.entries, t4.ended + t6.ended,
           t4.current_id + t6.current_id, evicted,
           bpf_loader_map_memlock(in.conns4), bpf_loader_map_memlock(in.conns6));
    return 0;
}

static int
cmd_histogram(const char *id_arg)
{
    struct panda_sizehist h;
    struct pcls_policy slot;
    struct instance in;
    char *text;

    if (!instance_open(&in)) {
        cli_log_fatal("histogram: not loaded (no %s/%s)", pin_dir,
                      PCLS_PROG);
    }
    if (!policy_current(&in, &slot)) {
        cli_log_fatal("histogram: no policy yet");
    }
    if (id_arg && cli_parse_u64("policy id", id_arg, 0, UINT32_MAX)
                  != slot.policy.id) {
        cli_log_fatal("no such panda policy (the running one is id %"
                      PRIu32 ")", slot.policy.id);
    }
    hist_read(&in, &h);
    text = panda_sizehist_format(&h);
    printf("policy %" PRIu32 "\n%s", slot.policy.id, text);
    free(text);
    return 0;
}

/* ---- replay: a capture through the program, with BPF_PROG_TEST_RUN. ---- */

#ifdef HAVE_PCAP
static int
cmd_replay(const char *pcap_file, const struct attach_opts *o)
{
    char errbuf[PCAP_ERRBUF_SIZE];
    struct pcls_config cfg;
    struct panda_policy p;
    struct panda_cls *skel;
    struct instance in;
    struct pcap_pkthdr *hdr;
    const u_char *data;
    uint64_t index = 0;
    pcap_t *pc;
    int prog, rc;

    if (!o->policy_file && !o->policy_text) {
        cli_log_usage("replay: give --policy FILE or --policy-text TEXT");
    }
    policy_read(o->policy_file, o->policy_text, &p);
    pc = pcap_open_offline(pcap_file, errbuf);
    if (!pc) {
        cli_log_fatal("%s: %s", pcap_file, errbuf);
    }
    if (pcap_datalink(pc) != 1) {     /* DLT_EN10MB, in pcap/bpf.h. */
        cli_log_fatal("%s: not an Ethernet capture (link type %d)",
                      pcap_file, pcap_datalink(pc));
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.capacity = o->capacity;
    cfg.idle_timeout_ms = o->idle_timeout_ms;
    cfg.set_priority = 1;
    skel = skel_load(&cfg, o->capacity6_set ? o->capacity6 : o->capacity,
                     false);
    memset(&in, 0, sizeof in);
    in.policy = bpf_map__fd(skel->maps.policy);
    in.stats = bpf_map__fd(skel->maps.stats);
    in.hist = bpf_map__fd(skel->maps.hist);
    policy_install(&in, &p);
    prog = bpf_program__fd(skel->progs.panda_cls);

    while ((rc = pcap_next_ex(pc, &hdr, &data)) == 1) {
        uint8_t out[65536 + 256];
        struct __sk_buff ctx;
        struct pcls_stats before, after;
        struct panda_frame_buf buf;
        struct panda_frame f, scratch;
        int level = -1, i;

        /* BPF_PROG_TEST_RUN builds the skb in one page: a longer frame
         * (a GSO packet of a capture) goes in cut short, as a capture's
         * snap length would cut it; the parser takes lengths from the IP
         * header and needs only the payload's first bytes. */
        uint32_t len = hdr->caplen < TEST_RUN_MAX ? hdr->caplen
                                                  : TEST_RUN_MAX;

        LIBBPF_OPTS(bpf_test_run_opts, opts,
                    .data_in = data, .data_size_in = len,
                    .data_out = out, .data_size_out = sizeof out,
                    .ctx_in = &ctx, .ctx_size_in = sizeof ctx,
                    .ctx_out = &ctx, .ctx_size_out = sizeof ctx,
                    .repeat = 1);

        index++;
        if (hdr->caplen < 14) {
            printf("%" PRIu64 " -\n", index);
            continue;
        }
        memset(&ctx, 0, sizeof ctx);
        stats_read(&in, &before);
        if (bpf_prog_test_run_opts(prog, &opts)) {
            cli_log_fatal("%s: packet %" PRIu64 ": BPF_PROG_TEST_RUN: %s%s",
                          pcap_file, index, strerror(errno), hint(errno));
        }
        stats_read(&in, &after);
        for (i = 0; i < PANDA_MAX_LEVELS; i++) {
            if (after.packets[i] != before.packets[i]) {
                level = i;
            }
        }
        /* What left: the DSCP in the frame the program wrote, the queue
         * of the priority it set. */
        buf.data = out;
        buf.len = opts.data_size_out;
        if (level < 0
            || !panda_frame_parse(&buf, &f, &scratch, p.tunnels)) {
            printf("%" PRIu64 " -\n", index);
            continue;
        }
        printf("%" PRIu64 " %d %u %d\n", index, level, f.pkt.dscp,
               ctx.priority >> 16 == 1 ? (int) (ctx.priority & 0xffff) - 1
                                       : -1);
    }
    if (rc == PCAP_ERROR) {
        cli_log_fatal("%s: %s", pcap_file, pcap_geterr(pc));
    }
    pcap_close(pc);
    {
        struct table_count t4, t6;
        struct pcls_stats st;

        stats_read(&in, &st);
        table_count(bpf_map__fd(skel->maps.conns4), sizeof(struct pcls_key4),
                    p.id, &t4);
        table_count(bpf_map__fd(skel->maps.conns6), sizeof(struct pcls_key6),
                    p.id, &t6);
        fprintf(stderr, "replay: %" PRIu64 " frames; table: inserted %"
                PRIu64 ", expired %" PRIu64 ", entries %" PRIu64 " IPv4 + %"
                PRIu64 " IPv6, evicted %" PRIu64 "\n", index, st.inserted,
                st.expired, t4.entries, t6.entries,
                st.inserted - st.expired - t4.entries - t6.entries);
    }
    panda_cls__destroy(skel);
    return 0;
}
#endif

/* ---- probe. ---- */

/* Whether the kernel's configuration (/proc/config.gz, else
 * /boot/config-RELEASE) has 'option' as y or m: 1 or 0, -1 if it cannot be
 * read (then the probe does not decide on it). */
static int
kconfig_has(const char *option)
{
    char path[512], line[256];
    size_t n = strlen(option);
    struct utsname u;
    bool gz = !access("/proc/config.gz", R_OK);
    int found = 0;
    FILE *f;

    if (gz) {
        f = popen("zcat /proc/config.gz 2>/dev/null", "r");
    } else {
        uname(&u);
        snprintf(path, sizeof path, "/boot/config-%s", u.release);
        f = fopen(path, "r");
    }
    if (!f) {
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, option, n) && line[n] == '='
            && (line[n + 1] == 'y' || line[n + 1] == 'm')) {
            found = 1;
        }
    }
    if (gz) {
        pclose(f);
    } else {
        fclose(f);
    }
    return found;
}

static int
cmd_probe(void)
{
    static const struct {
        const char *option, *what;
    } needs[] = {
        { "CONFIG_NET_CLS_BPF", "cls_bpf" },
        { "CONFIG_NET_SCH_INGRESS", "the clsact qdisc" },
    };
    const char *missing = NULL;
    size_t i;

    if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SCHED_CLS, NULL) != 1) {
        missing = "BPF programs of type sched_cls";
    } else if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_LRU_HASH, NULL) != 1) {
        missing = "BPF LRU hash maps";
    } else if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_ARRAY_OF_MAPS, NULL)
               != 1) {
        missing = "BPF arrays of maps";
    } else if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_SCHED_CLS,
                                       BPF_FUNC_l3_csum_replace, NULL)
               != 1) {
        missing = "the helper bpf_l3_csum_replace";
    }
    for (i = 0; !missing && i < sizeof needs / sizeof *needs; i++) {
        if (kconfig_has(needs[i].option) == 0) {
            missing = needs[i].what;
        }
    }
    if (missing) {
        printf("unavailable: the kernel has no %s%s\n", missing,
               geteuid() ? " (or this user may not use BPF: run as root)"
                         : "");
        return 1;
    }
    printf("available\n");
    return 0;
}

/* ---- main. ---- */

int
main(int argc, char *argv[])
{
    enum {
        OPT_PIN_DIR = 0x100, OPT_NETNS, OPT_POLICY,
        OPT_POLICY_TEXT, OPT_CAPACITY, OPT_CAPACITY6, OPT_IDLE,
        OPT_NO_PRIORITY, OPT_ALL, OPT_JSON, OPT_TEXT,
    };
    static const struct option global[] = {
        { "pin-dir", required_argument, NULL, OPT_PIN_DIR },
        { "netns", required_argument, NULL, OPT_NETNS },
        { "verbose", no_argument, NULL, 'v' },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    static const struct option cmdopts[] = {
        { "policy", required_argument, NULL, OPT_POLICY },
        { "policy-text", required_argument, NULL, OPT_POLICY_TEXT },
        { "capacity", required_argument, NULL, OPT_CAPACITY },
        { "capacity6", required_argument, NULL, OPT_CAPACITY6 },
        { "idle-timeout", required_argument, NULL, OPT_IDLE },
        { "no-priority", no_argument, NULL, OPT_NO_PRIORITY },
        { "all", no_argument, NULL, OPT_ALL },
        { "json", no_argument, NULL, OPT_JSON },
        { "text", required_argument, NULL, OPT_TEXT },
        CLI_OPT_COMMON,
        { NULL, 0, NULL, 0 },
    };
    struct attach_opts ao = {
        .capacity = DEFAULT_CAPACITY,
        .idle_timeout_ms = DEFAULT_IDLE_MS,
    };
    const char *cmd, *text = NULL;
    bool all = false, json = false;
    int c;

    cli_log_set_program("panda-bpf");
    while ((c = cli_opt_next(argc, argv, "+vh", global, usage)) != -1) {
        switch (c) {
        case OPT_PIN_DIR:
            pin_dir = optarg;
            break;
        case OPT_NETNS:
            netns_name = optarg;
            break;
        case 'v':
            verbose = true;
            break;
        }
    }
    if (optind >= argc) {
        cli_log_usage("name a command (attach, detach, set-policy, show, "
                    "histogram, flush, replay, probe)");
    }
    cmd = argv[optind];
    bpf_loader_log_init(verbose);

    /* The command's own options; its operands stay in argv. */
    argc -= optind;
    argv += optind;
    optind = 0;                 /* Reinitialises GNU getopt (permuting). */
    while ((c = cli_opt_next(argc, argv, "h", cmdopts, usage)) != -1) {
        switch (c) {
        case OPT_POLICY:
            ao.policy_file = optarg;
            break;
        case OPT_POLICY_TEXT:
            ao.policy_text = optarg;
            break;
        case OPT_CAPACITY:
            ao.capacity = cli_parse_u64("--capacity", optarg, 64,
                                        MAX_CAPACITY);
            ao.capacity_set = true;
            break;
        case OPT_CAPACITY6:
            ao.capacity6 = cli_parse_u64("--capacity6", optarg, 64,
                                         MAX_CAPACITY);
            ao.capacity6_set = true;
            break;
        case OPT_IDLE:
            ao.idle_timeout_ms = cli_parse_u64("--idle-timeout", optarg, 0,
                                               PANDA_MAX_DURATION_MS);
            ao.idle_set = true;
            break;
        case OPT_NO_PRIORITY:
            ao.no_priority = true;
            break;
        case OPT_ALL:
            all = true;
            break;
        case OPT_JSON:
            json = true;
            break;
        case OPT_TEXT:
            text = optarg;
            break;
        }
    }
    argc -= optind;
    argv += optind;

#define NO_OPERANDS(MAX)                                                \
    do {                                                                \
        if (argc > (MAX)) {                                             \
            cli_log_usage("%s: unexpected argument %s", cmd, argv[MAX]);  \
        }                                                               \
    } while (0)

    if (ao.policy_file && ao.policy_text) {
        cli_log_usage("%s: --policy and --policy-text exclude each other",
                    cmd);
    }
    if (!strcmp(cmd, "attach")) {
        return cmd_attach(argv, argc, &ao);
    } else if (!strcmp(cmd, "detach")) {
        return cmd_detach(argv, argc, all);
    } else if (!strcmp(cmd, "set-policy")) {
        NO_OPERANDS(1);
        return cmd_set_policy(argc ? argv[0] : NULL, text);
    } else if (!strcmp(cmd, "show")) {
        NO_OPERANDS(0);
        return cmd_show(json);
    } else if (!strcmp(cmd, "histogram")) {
        NO_OPERANDS(1);
        return cmd_histogram(argc ? argv[0] : NULL);
    } else if (!strcmp(cmd, "replay")) {
        if (argc != 1) {
            cli_log_usage("replay: name one capture (PCAP)");
        }
#ifdef HAVE_PCAP
        return cmd_replay(argv[0], &ao);
#else
        cli_log_fatal("replay: this panda-bpf was built without libpcap");
#endif
    } else if (!strcmp(cmd, "flush")) {
        NO_OPERANDS(0);
        return cmd_flush();
    } else if (!strcmp(cmd, "probe")) {
        NO_OPERANDS(0);
        return cmd_probe();
    }
    cli_log_usage("unknown command %s", cmd);
}

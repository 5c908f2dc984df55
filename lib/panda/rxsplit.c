/* The kernel split of a port's receive: loading its BPF program
 * (panda/rxsplit.h). */
#include <panda/rxsplit.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <panda/base.h>
#include <panda/policy.h>

#ifdef PANDA_RXSPLIT_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "panda-rxsplit.skel.h"

int
panda_rxsplit_load(const struct panda_policy *policy, char **reasonp)
{
    struct panda_rxsplit_bpf *skel;
    uint32_t zero = 0;
    int fd = -1, err;

    *reasonp = NULL;
    if (panda_kind_has_counter(policy->kind)) {
        *reasonp = panda_asprintf("kind=%s keeps connection state, which "
                                  "the kernel split does not",
                                  panda_policy_kind_name(policy->kind));
        return -1;
    }
    skel = panda_rxsplit_bpf__open();
    if (!skel) {
        *reasonp = panda_asprintf("libbpf cannot open the program (%s)",
                                  strerror(errno));
        return -1;
    }
    if (bpf_map__value_size(skel->maps.policy) != sizeof *policy) {
        /* The BPF target lays the struct out as the hosts it runs on do;
         * a host where it does not must not feed it bytes it misreads. */
        *reasonp = panda_asprintf("the program reads a policy of %u bytes, "
                                  "this host's is %zu",
                                  bpf_map__value_size(skel->maps.policy),
                                  sizeof *policy);
        goto out;
    }
    err = panda_rxsplit_bpf__load(skel);
    if (err) {
        err = -err;
        *reasonp = panda_asprintf("the kernel refused the BPF program (%s%s)",
                                  strerror(err),
                                  err == EPERM ? ": needs CAP_BPF" : "");
        goto out;
    }
    if (bpf_map_update_elem(bpf_map__fd(skel->maps.policy), &zero, policy,
                            BPF_ANY)) {
        *reasonp = panda_asprintf("cannot write the policy into the "
                                  "program's map (%s)", strerror(errno));
        goto out;
    }
    /* The program holds its maps: the skeleton's descriptors can go. */
    fd = fcntl(bpf_program__fd(skel->progs.panda_rxsplit), F_DUPFD_CLOEXEC,
               0);
    if (fd < 0) {
        *reasonp = panda_asprintf("dup: %s", strerror(errno));
    }
out:
    panda_rxsplit_bpf__destroy(skel);
    return fd;
}

#else  /* !PANDA_RXSPLIT_BPF */

int
panda_rxsplit_load(const struct panda_policy *policy, char **reasonp)
{
    (void) policy;
    *reasonp = panda_asprintf("built without BPF programs (bpf/bpf-status "
                              "in the build tree says why)");
    return -1;
}

#endif

/*
 * The kernel split of a port's receive by priority: a BPF program that
 * sends each received frame to one of two packet sockets of a fanout group
 * (PACKET_FANOUT_EBPF), the high ones (level 0 of a rule policy, and link
 * control) to the group's first socket and the rest to its second.  A
 * reader that drains the first socket before the second keeps high
 * packets out of the queue that an overload fills: the kernel drops the
 * flood in the second socket's queue, not the high packets it would have
 * dropped in a single socket's (Open vSwitch: netdev-linux's receive,
 * Interface other_config:panda-ingress-priority).
 *
 * The program is bpf/panda-rxsplit.bpf.c, lib/panda's frame parser and
 * panda_cls_level() compiled for BPF: the one classification, with the
 * datapath's ingress priority.  It is embedded here as a libbpf skeleton,
 * so that a process that splits a port needs no object file at run time
 * and cannot load one of another build.
 *
 * Contract.  panda_rxsplit_load() loads one program for one policy and
 * returns its file descriptor, which the caller owns: it attaches it to
 * its fanout group (setsockopt(PACKET_FANOUT_DATA), which takes its own
 * reference) and closes it.  Thread-safe (no state here; libbpf's
 * messages go where the process sent them).  Memory: the program and two
 * small maps (the policy, about 1 KB, and a per-CPU frame buffer), kernel
 * memory held while a group uses the program.  Needs CAP_BPF (or
 * CAP_SYS_ADMIN), a kernel with BPF socket filters and packet fanout (Linux
 * 4.5) and a build with BPF (bpf/bpf-status); where any is missing it
 * fails with the reason and the caller reads the port through one socket,
 * as without the split.  Needs no BTF.
 */
#ifndef PANDA_RXSPLIT_H
#define PANDA_RXSPLIT_H 1

#ifdef __cplusplus
extern "C" {
#endif

struct panda_policy;

/* The sockets of the group, in the order they join it. */
#define PANDA_RXSPLIT_HIGH 0
#define PANDA_RXSPLIT_LOW 1

/* Loads the split program for 'policy' (a policy of a rule kind, as
 * panda_policy_parse() made it: a counter kind's level needs connection
 * state, which the program does not keep, and is refused).  Returns the
 * program's file descriptor (close-on-exec), or -1 with a malloc()ed
 * reason in '*reasonp' (no BPF in this build, not permitted, the kernel
 * refused the program, ...). */
int panda_rxsplit_load(const struct panda_policy *policy, char **reasonp);

#ifdef __cplusplus
}
#endif

#endif /* panda/rxsplit.h */

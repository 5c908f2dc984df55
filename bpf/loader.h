/* What the BPF loaders (panda-bpf, panda-cc) and the classifier's
 * benchmark share around libbpf.
 *
 * Single-threaded programs only: the log level is process state, set once
 * after the options are read. */
#ifndef BPF_LOADER_H
#define BPF_LOADER_H 1

#include <stdbool.h>
#include <stdint.h>

/* Routes libbpf's messages to stderr under the program's name: warnings
 * always, information only when 'verbose', debugging never. */
void bpf_loader_log_init(bool verbose);

/* Bytes of kernel memory the map 'fd' holds ("memlock" in its fdinfo), 0
 * if the kernel does not say. */
uint64_t bpf_loader_map_memlock(int fd);

#endif /* bpf/loader.h */

/* Shared helpers of the BPF loaders (bpf/loader.h). */
#include "loader.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include <bpf/libbpf.h>

#include <cli/log.h>

static bool log_verbose;

static int
libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    if (level == LIBBPF_DEBUG || (level == LIBBPF_INFO && !log_verbose)) {
        return 0;
    }
    fprintf(stderr, "%s: libbpf: ", cli_log_program());
    return vfprintf(stderr, fmt, ap);
}

void
bpf_loader_log_init(bool verbose)
{
    log_verbose = verbose;
    libbpf_set_print(libbpf_print);
}

uint64_t
bpf_loader_map_memlock(int fd)
{
    char path[64], line[256];
    uint64_t v = 0;
    FILE *f;

    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "memlock: %" SCNu64, &v) == 1) {
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return v;
}

/* Fuzz target: panda-model's sample readers (tools/model-input.c), pcap
 * captures (through libpcap) and "size count [flow]" histograms, chosen by
 * the file's first bytes as panda-model does.  The input becomes a file
 * (memfd) because the readers take a file name, like the tool. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "fuzz.h"

#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model-input.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct model_input_opts o = { .header_len = 40 };
    struct model_input_stats st;
    struct panda_samples s;
    char path[64];
    char *err;
    int fd;

    fd = memfd_create("fuzz-model-input", MFD_CLOEXEC);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(write(fd, data, size) == (ssize_t) size);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    for (int keep_acks = 0; keep_acks < 2; keep_acks++) {
        o.keep_acks = keep_acks;
        panda_samples_init(&s);
        err = model_read_samples(path, &o, &s, &st);
        if (err) {
            FUZZ_CHECK(*err != '\0');
            free(err);
        } else {
            double n = panda_samples_packets(&s);

            FUZZ_CHECK(!(n < 0));
        }
        panda_samples_destroy(&s);
    }
    close(fd);
    return 0;
}

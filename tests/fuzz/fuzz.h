/*
 * Fuzz targets of Panda-OVS, in the style of Open vSwitch's tests/oss-fuzz:
 * each tests/fuzz/fuzz-NAME.c defines LLVMFuzzerTestOneInput() and nothing
 * else.  Linked with libFuzzer (clang, -fsanitize=fuzzer: the sanitizer
 * build, SANITIZE=1 ./build.sh) it is a coverage-guided fuzzer; linked with
 * driver.c it is a plain program that replays a corpus and runs seeded
 * random mutations of it (any compiler).  Both accept the same options
 * (-runs=N, -seed=N, -max_len=N, -max_total_time=S, then corpus
 * directories or files), so tests/fuzz/run.sh drives either the same way.
 *
 * A target aborts (FUZZ_CHECK) when an invariant of the code under test
 * breaks: a decoded value that does not re-encode to the same bytes, a
 * parsed policy that does not print back to itself, a CDF whose mean is
 * not finite.  Sanitizer reports and crashes are failures by themselves.
 */
#ifndef FUZZ_H
#define FUZZ_H 1

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(COND)                                                   \
    do {                                                                   \
        if (!(COND)) {                                                     \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n",         \
                    __FILE__, __LINE__, #COND);                            \
            abort();                                                       \
        }                                                                  \
    } while (0)

#endif /* fuzz.h */

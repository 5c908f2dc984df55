/*
 * The plain driver of the fuzz targets (fuzz.h): main() for a target built
 * without libFuzzer.  Replays every input of the corpus, then runs random
 * mutations of corpus inputs (bit flips, byte changes, interesting values,
 * insertions, deletions, copies within and between inputs), seeded, so a
 * run is repeatable: the same -seed gives the same inputs.  No coverage
 * feedback: it finds what random inputs near the seeds find; the libFuzzer
 * build goes further.  A crash leaves the input in crash-<hash> (as
 * libFuzzer does) before the signal ends the program.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <panda/rng.h>

struct input {
    uint8_t *data;
    size_t size;
};

static struct input *corpus;
static size_t n_corpus, cap_corpus;
static const uint8_t *current;
static size_t current_size;
static const char *artifact_prefix = "";

static void *
xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "fuzz driver: out of memory\n");
        exit(1);
    }
    return p;
}

static void
add_input(const uint8_t *data, size_t size)
{
    if (n_corpus == cap_corpus) {
        cap_corpus = cap_corpus ? 2 * cap_corpus : 64;
        corpus = xrealloc(corpus, cap_corpus * sizeof *corpus);
    }
    corpus[n_corpus].data = xrealloc(NULL, size);
    memcpy(corpus[n_corpus].data, data, size);
    corpus[n_corpus].size = size;
    n_corpus++;
}

static void
load_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0, r;

    if (!f) {
        fprintf(stderr, "fuzz driver: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    do {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            buf = xrealloc(buf, cap);
        }
        r = fread(buf + n, 1, cap - n, f);
        n += r;
    } while (r > 0);
    fclose(f);
    add_input(buf, n);
    free(buf);
}

static void
load_path(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;

    if (stat(path, &st)) {
        fprintf(stderr, "fuzz driver: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    if (!S_ISDIR(st.st_mode)) {
        load_file(path);
        return;
    }
    d = opendir(path);
    while (d && (e = readdir(d))) {
        char *sub;

        if (e->d_name[0] == '.') {
            continue;
        }
        if (asprintf(&sub, "%s/%s", path, e->d_name) < 0) {
            exit(1);
        }
        load_path(sub);
        free(sub);
    }
    if (d) {
        closedir(d);
    }
}

/* FNV-1a of the input, for the crash file's name. */
static uint64_t
hash_input(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    while (n--) {
        h = (h ^ *p++) * 0x100000001b3ULL;
    }
    return h;
}

static void
on_crash(int sig)
{
    char name[512];
    int fd;

    snprintf(name, sizeof name, "%scrash-%016llx", artifact_prefix,
             (unsigned long long) hash_input(current, current_size));
    fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, current, current_size);

        (void) w;
        close(fd);
    }
    fprintf(stderr, "fuzz driver: signal %d on an input of %zu bytes, "
            "saved as %s\n", sig, current_size, name);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void
run_one(const uint8_t *data, size_t size)
{
    /* A copy of exactly 'size' bytes, so that ASAN sees reads past it. */
    uint8_t *copy = xrealloc(NULL, size);

    memcpy(copy, data, size);
    current = copy;
    current_size = size;
    LLVMFuzzerTestOneInput(copy, size);
    free(copy);
}

static const uint64_t interesting[] = {
    0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000,
    0xffffffff, 0x7fffffffffffffffULL, 0x8000000000000000ULL, ~0ULL,
};

/* One random mutation of 'buf' (of 'size' bytes, room for 'max'). */
static size_t
mutate(struct panda_rng *rng, uint8_t *buf, size_t size, size_t max)
{
    size_t pos = size ? panda_rng_next(rng) % size : 0;
    unsigned int op = panda_rng_next(rng) % 8;

    switch (op) {
    case 0:             /* Flip a bit. */
        if (size) {
            buf[pos] ^= 1u << (panda_rng_next(rng) % 8);
        }
        break;
    case 1:             /* Random byte. */
        if (size) {
            buf[pos] = panda_rng_next(rng);
        }
        break;
    case 2: {           /* Interesting value, 1/2/4/8 bytes, either order. */
        uint64_t v = interesting[panda_rng_next(rng)
                                 % (sizeof interesting / sizeof *interesting)];
        size_t w = (size_t) 1 << (panda_rng_next(rng) % 4), i;
        bool big = panda_rng_next(rng) & 1;

        for (i = 0; i < w && pos + i < size; i++) {
            buf[pos + i] = v >> (8 * (big ? w - 1 - i : i));
        }
        break;
    }
    case 3: {           /* Insert random bytes. */
        size_t n = 1 + panda_rng_next(rng) % 8;

        if (size + n <= max) {
            memmove(buf + pos + n, buf + pos, size - pos);
            for (size_t i = 0; i < n; i++) {
                buf[pos + i] = panda_rng_next(rng);
            }
            size += n;
        }
        break;
    }
    case 4: {           /* Delete bytes. */
        size_t n = size ? 1 + panda_rng_next(rng) % (size - pos) : 0;

        n = n > 16 ? 16 : n;
        memmove(buf + pos, buf + pos + n, size - pos - n);
        size -= n;
        break;
    }
    case 5: {           /* Copy a chunk within the input. */
        size_t from = size ? panda_rng_next(rng) % size : 0;
        size_t n = size ? 1 + panda_rng_next(rng) % (size - from) : 0;

        if (n > size - pos) {
            n = size - pos;
        }
        memmove(buf + pos, buf + from, n);
        break;
    }
    case 6: {           /* Splice: a chunk of another corpus input. */
        const struct input *o = &corpus[panda_rng_next(rng) % n_corpus];
        size_t from = o->size ? panda_rng_next(rng) % o->size : 0;
        size_t n = o->size - from;

        n = n > 64 ? 1 + panda_rng_next(rng) % 64 : n;
        if (size + n <= max) {
            memmove(buf + pos + n, buf + pos, size - pos);
            memcpy(buf + pos, o->data + from, n);
            size += n;
        }
        break;
    }
    default: {          /* ASCII digit or separator (text formats). */
        static const char chars[] = "0123456789,=/:.-#\n \t\r";

        if (size) {
            buf[pos] = chars[panda_rng_next(rng) % (sizeof chars - 1)];
        }
        break;
    }
    }
    return size;
}

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char *argv[])
{
    unsigned long long runs = 100000, seed = 1, done = 0;
    size_t max_len = 4096, i;
    double max_time = 0, start = now_s();
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1
                                             : argv[0];
    struct panda_rng rng;
    uint8_t *buf;
    int a;

    for (a = 1; a < argc; a++) {
        if (!strncmp(argv[a], "-runs=", 6)) {
            runs = strtoull(argv[a] + 6, NULL, 10);
        } else if (!strncmp(argv[a], "-seed=", 6)) {
            seed = strtoull(argv[a] + 6, NULL, 10);
        } else if (!strncmp(argv[a], "-max_len=", 9)) {
            max_len = strtoull(argv[a] + 9, NULL, 10);
        } else if (!strncmp(argv[a], "-max_total_time=", 16)) {
            max_time = strtod(argv[a] + 16, NULL);
        } else if (!strncmp(argv[a], "-artifact_prefix=", 17)) {
            artifact_prefix = argv[a] + 17;
        } else if (!strcmp(argv[a], "-help=1")) {
            printf("%s: plain fuzz driver (tests/fuzz/driver.c): options "
                   "-runs=N -seed=N -max_len=N -max_total_time=S "
                   "-artifact_prefix=P, then corpus files or directories\n",
                   prog);
            return 0;
        } else if (argv[a][0] == '-') {
            /* libFuzzer options this driver does not have: ignored, so
             * that run.sh passes the same ones to both. */
        } else {
            load_path(argv[a]);
        }
    }
    signal(SIGSEGV, on_crash);
    signal(SIGABRT, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
    signal(SIGILL, on_crash);
    if (!n_corpus) {
        add_input((const uint8_t *) "", 0);
    }
    for (i = 0; i < n_corpus; i++) {
        run_one(corpus[i].data, corpus[i].size);
        done++;
    }
    panda_rng_seed(&rng, seed);
    buf = xrealloc(NULL, max_len + 64);
    for (unsigned long long r = 0; r < runs || max_time > 0; r++) {
        const struct input *in = &corpus[panda_rng_next(&rng) % n_corpus];
        size_t size = in->size < max_len ? in->size : max_len;
        unsigned int k, n = 1 + panda_rng_next(&rng) % 6;

        if (max_time > 0 && !(r & 63) && now_s() - start >= max_time) {
            break;
        }
        if (max_time <= 0 && r >= runs) {
            break;
        }
        memcpy(buf, in->data, size);
        for (k = 0; k < n; k++) {
            size = mutate(&rng, buf, size, max_len);
        }
        run_one(buf, size);
        done++;
    }
    printf("%s: plain driver (no coverage feedback): %llu executions "
           "(%zu corpus inputs, seed %llu) in %.1f s, no crash\n", prog,
           done, n_corpus, seed, now_s() - start);
    free(buf);
    return 0;
}

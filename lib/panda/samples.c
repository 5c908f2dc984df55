/* Packet-size samples of a set of flows; see samples.h. */
#include <panda/samples.h>

#include <stdlib.h>
#include <string.h>

#include <panda/base.h>

void
panda_samples_init(struct panda_samples *s)
{
    memset(s, 0, sizeof *s);
}

void
panda_samples_destroy(struct panda_samples *s)
{
    size_t i;

    for (i = 0; i < s->n; i++) {
        panda_hist_destroy(&s->flows[i].hist);
    }
    free(s->flows);
    free(s->pending);
    panda_samples_init(s);
}

size_t
panda_samples_new_flow(struct panda_samples *s)
{
    struct panda_samples_flow *f;

    if (s->n == s->allocated) {
        s->allocated = s->allocated ? 2 * s->allocated : 16;
        s->flows = panda_xrealloc(s->flows,
                                  s->allocated * sizeof *s->flows);
    }
    f = &s->flows[s->n];
    memset(f, 0, sizeof *f);
    panda_hist_init(&f->hist);
    f->weight = 1.0;
    return s->n++;
}

void
panda_samples_add(struct panda_samples *s, size_t flow, uint32_t size,
                  double count, uint32_t header_len)
{
    struct panda_samples_flow *f = &s->flows[flow];

    panda_hist_add(&f->hist, size, count);
    f->packets += count;
    if (size > header_len) {
        f->bytes += count * (size - header_len);
    }
}

#define PENDING_BITS 17           /* Bits of the size in a pending key. */
#define PENDING_MAX (1u << 24)  /* Flush after this many packets. */

void
panda_samples_push(struct panda_samples *s, size_t flow, uint32_t size,
                   uint32_t header_len)
{
    if (size >= (1u << PENDING_BITS) || (uint64_t) flow >> 46) {
        /* Too large to encode: take the slow path (the solvers reject such
         * sizes with a clear message later). */
        panda_samples_add(s, flow, size, 1, header_len);
        return;
    }
    if (s->n_pending
        && (s->n_pending >= PENDING_MAX
            || header_len != s->pending_header_len)) {
        panda_samples_flush(s);
    }
    if (s->n_pending == s->pending_allocated) {
        s->pending_allocated = (s->pending_allocated
                                ? 2 * s->pending_allocated : 4096);
        s->pending = panda_xrealloc(s->pending,
                                    s->pending_allocated
                                    * sizeof *s->pending);
    }
    s->pending_header_len = header_len;
    s->pending[s->n_pending++] = (uint64_t) flow << PENDING_BITS | size;
}

/* LSD radix sort of 'n' keys below 2^bits, 16 bits per pass. */
static void
radix_sort(uint64_t *keys, size_t n, int bits)
{
    uint64_t *tmp = panda_xmalloc(n * sizeof *tmp), *src = keys, *dst = tmp;
    size_t *count = panda_xmalloc(65536 * sizeof *count);
    int shift;

    for (shift = 0; shift < bits; shift += 16) {
        size_t i, sum = 0;
        uint64_t *t;

        memset(count, 0, 65536 * sizeof *count);
        for (i = 0; i < n; i++) {
            count[(src[i] >> shift) & 0xffff]++;
        }
        for (i = 0; i < 65536; i++) {
            size_t c = count[i];

            count[i] = sum;
            sum += c;
        }
        for (i = 0; i < n; i++) {
            dst[count[(src[i] >> shift) & 0xffff]++] = src[i];
        }
        t = src;
        src = dst;
        dst = t;
    }
    if (src != keys) {
        memcpy(keys, src, n * sizeof *keys);
    }
    free(tmp);
    free(count);
}

void
panda_samples_flush(struct panda_samples *s)
{
    uint64_t max = 0, *k = s->pending;
    size_t i, n = s->n_pending;
    int bits = 0;

    if (!n) {
        return;
    }
    for (i = 0; i < n; i++) {
        max = k[i] > max ? k[i] : max;
    }
    while (bits < 64 && max >> bits) {
        bits++;
    }
    radix_sort(k, n, bits);
    for (i = 0; i < n; ) {
        size_t j = i + 1;

        while (j < n && k[j] == k[i]) {
            j++;
        }
        panda_samples_add(s, (size_t) (k[i] >> PENDING_BITS),
                          (uint32_t) (k[i] & ((1u << PENDING_BITS) - 1)),
                          (double) (j - i), s->pending_header_len);
        i = j;
    }
    s->n_pending = 0;
}

double
panda_samples_packets(const struct panda_samples *s)
{
    double total = 0;
    size_t i;

    for (i = 0; i < s->n; i++) {
        total += s->flows[i].packets;
    }
    return total;
}

void
panda_samples_aggregate(const struct panda_samples *s, struct panda_hist *out)
{
    size_t i, j;

    for (i = 0; i < s->n; i++) {
        const struct panda_hist *h = &s->flows[i].hist;

        for (j = 0; j < h->n; j++) {
            panda_hist_add(out, h->size[j], h->weight[j]);
        }
    }
}

size_t
panda_samples_prune(struct panda_samples *s)
{
    size_t i, n = 0, removed = 0;

    panda_samples_flush(s);
    for (i = 0; i < s->n; i++) {
        if (s->flows[i].packets > 0 && s->flows[i].hist.n) {
            s->flows[n++] = s->flows[i];
        } else {
            panda_hist_destroy(&s->flows[i].hist);
            removed++;
        }
    }
    s->n = n;
    return removed;
}

void
panda_samples_set_weights(struct panda_samples *s,
                          enum panda_samples_weighting how)
{
    size_t i;

    for (i = 0; i < s->n; i++) {
        struct panda_samples_flow *f = &s->flows[i];

        f->weight = (how == PANDA_SAMPLES_WEIGH_PACKETS ? f->packets
                     : how == PANDA_SAMPLES_WEIGH_BYTES ? f->bytes
                     : 1.0);
    }
}

const char *
panda_samples_weighting_name(enum panda_samples_weighting how)
{
    return (how == PANDA_SAMPLES_WEIGH_PACKETS ? "packets"
            : how == PANDA_SAMPLES_WEIGH_BYTES ? "bytes"
            : "equal");
}

/* Packet-size histograms; see hist.h. */
#include <panda/hist.h>

#include <stdlib.h>
#include <string.h>

#include <panda/base.h>

void
panda_hist_init(struct panda_hist *h)
{
    memset(h, 0, sizeof *h);
}

void
panda_hist_destroy(struct panda_hist *h)
{
    free(h->size);
    free(h->weight);
    panda_hist_init(h);
}

void
panda_hist_add(struct panda_hist *h, uint32_t size, double weight)
{
    size_t lo = 0, hi = h->n;

    /* Fast path: appending in order (or repeating the last size). */
    if (h->n && h->size[h->n - 1] == size) {
        h->weight[h->n - 1] += weight;
        return;
    }
    if (!h->n || h->size[h->n - 1] < size) {
        lo = h->n;
    } else {
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;

            if (h->size[mid] < size) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (h->size[lo] == size) {
            h->weight[lo] += weight;
            return;
        }
    }
    if (h->n == h->allocated) {
        h->allocated = h->allocated ? 2 * h->allocated : 64;
        h->size = panda_xrealloc(h->size, h->allocated * sizeof *h->size);
        h->weight = panda_xrealloc(h->weight,
                                   h->allocated * sizeof *h->weight);
    }
    memmove(&h->size[lo + 1], &h->size[lo], (h->n - lo) * sizeof *h->size);
    memmove(&h->weight[lo + 1], &h->weight[lo],
            (h->n - lo) * sizeof *h->weight);
    h->size[lo] = size;
    h->weight[lo] = weight;
    h->n++;
}

double
panda_hist_total(const struct panda_hist *h)
{
    double total = 0;
    size_t i;

    for (i = 0; i < h->n; i++) {
        total += h->weight[i];
    }
    return total;
}

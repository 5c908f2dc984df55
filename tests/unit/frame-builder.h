/* Frames built byte by byte for the C unit tests of the frame parser and
 * of what is compiled from it (test-frame.c, test-rxsplit.c).  Fields are
 * appended in network byte order; a test's frames fit in 'b'. */
#ifndef TESTS_UNIT_FRAME_BUILDER_H
#define TESTS_UNIT_FRAME_BUILDER_H 1

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

/* A frame under construction. */
struct fb {
    uint8_t b[512];
    uint32_t len;
};

static inline void
put(struct fb *f, const void *p, uint32_t n)
{
    memcpy(f->b + f->len, p, n);
    f->len += n;
}

static inline void
put8(struct fb *f, uint8_t v)
{
    put(f, &v, 1);
}

static inline void
put16(struct fb *f, uint16_t v)
{
    v = htons(v);
    put(f, &v, 2);
}

static inline void
put32(struct fb *f, uint32_t v)
{
    v = htonl(v);
    put(f, &v, 4);
}

static inline void
put_zeros(struct fb *f, uint32_t n)
{
    memset(f->b + f->len, 0, n);
    f->len += n;
}

#endif /* tests/unit/frame-builder.h */

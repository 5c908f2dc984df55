/*
 * The wire form of a policy: one fixed-size, big-endian body, the same in
 * the OpenFlow action (NXAST_PANDA: the 10-byte Nicira action header, then
 * this body) and in the datapath action (OVS_ACTION_ATTR_PANDA: this body),
 * packed and unpacked only here.  Plain C, no OVS headers.
 *
 * Layout (offsets in the body; add 10 for the NXAST_PANDA action, as in
 * ofproto-ext/README.md):
 *
 *     0   1  kind          0 = panda, 1 = pias
 *     1   1  n_levels      K, 1..8
 *     2   4  id
 *     6   4  threshold     T, bytes of TCP payload
 *    10   1  n_weights     0..8
 *    11   1  ctl_level     < K
 *    12   2  pad           zero
 *    14   4  idle_reset    ms, 0 = never
 *    18   4  pad2          zero
 *    22   8  floor         signed, <= 0
 *    30  56  thresholds[7] the first K-1 used, the rest zero
 *    86  32  weight_above[8]  the first n_weights used, the rest zero
 *   118  16  weights[8]    hundredths, the first n_weights used, rest zero
 *   134   8  dscp[8]       the first K used, the rest zero
 *   142   8  queue[8]      the first K used, the rest zero
 *   150
 *
 * A body is canonical: padding and unused entries are zero, so two bodies
 * are the same policy exactly when their bytes are equal (memcmp), which is
 * what lets the datapath find a policy it validated before by its bytes.
 */
#ifndef PANDA_WIRE_H
#define PANDA_WIRE_H 1

#include <stddef.h>
#include <stdint.h>

#include <panda/policy.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PANDA_WIRE_LEN 150

/* What is wrong with a body, one class per OpenFlow error that reports it
 * (ofp-actions maps them to OFPBAC_BAD_LEN, NXBRC_MUST_BE_ZERO and
 * OFPBAC_BAD_ARGUMENT). */
enum panda_wire_error {
    PANDA_WIRE_OK,
    PANDA_WIRE_BAD_LEN,         /* Not PANDA_WIRE_LEN bytes. */
    PANDA_WIRE_NONZERO_PAD,     /* A padding byte is not zero. */
    PANDA_WIRE_BAD_ARGUMENT,    /* A field is out of range, an unused entry
                                 * is not zero, or panda_policy_check()
                                 * refuses the policy. */
};

/* Largest message that panda_wire_decode() writes, NUL included. */
#define PANDA_WIRE_MSG_SIZE PANDA_POLICY_MSG_SIZE

/* Packs 'p', which must be valid, into 'body' (all PANDA_WIRE_LEN bytes are
 * written: the result is canonical). */
void panda_wire_encode(const struct panda_policy *p,
                       uint8_t body[PANDA_WIRE_LEN]);

/* Unpacks the 'len' bytes at 'body' into 'p' and validates the result.
 * Returns PANDA_WIRE_OK, or the class of the first problem found with a
 * message naming the field in 'msg' (PANDA_WIRE_MSG_SIZE bytes).  'p' is
 * unspecified on error.  Allocates nothing (the datapath calls it). */
enum panda_wire_error panda_wire_decode(const void *body, size_t len,
                                        struct panda_policy *p,
                                        char msg[PANDA_WIRE_MSG_SIZE]);

/* The policy id of a body (of at least PANDA_WIRE_LEN bytes), without
 * decoding the rest: the datapath finds a policy's connection table by it. */
uint32_t panda_wire_id(const void *body);

/* "OK", "BAD_LEN", ...: for logs and tests. */
const char *panda_wire_error_name(enum panda_wire_error);

#ifdef __cplusplus
}
#endif

#endif /* panda/wire.h */

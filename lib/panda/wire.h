/*
 * The wire form of a policy: one fixed-size, big-endian body, the same in
 * the OpenFlow action (NXAST_PANDA: the 10-byte Nicira action header, then
 * this body) and in the datapath action (OVS_ACTION_ATTR_PANDA: this body),
 * packed and unpacked only here.  Plain C, no OVS headers.
 *
 * Layout (offsets in the body; add 10 for the NXAST_PANDA action, as in
 * openflow/README.md):
 *
 *     0   1  kind          0 = panda, 1 = pias, 2 = app, 3 = match,
 *                          4 = length, 5 = compose
 *     1   1  n_levels      K, 1..8
 *     2   4  id
 *     6   4  threshold     T, bytes of TCP payload
 *    10   1  n_weights     0..8
 *    11   1  ctl_level     < K
 *    12   1  untracked     K-1 - untracked_level (its distance from the
 *                          lowest level: 0, the default, is the lowest)
 *    13   1  default       rule kinds: K-1 - default_level; else zero
 *    14   4  idle_reset    ms, 0 = never
 *    18   1  n_rules       0..16; zero for panda and pias
 *    19   1  tunnels       the tunnels declared: bit 0 Geneve, bit 1
 *                          VXLAN (enum panda_tunnel); others zero
 *    20   2  pad2          zero
 *    22   8  floor         signed, <= 0
 *    30  56  thresholds[7] the first K-1 used, the rest zero
 *    86  32  weight_above[8]  the first n_weights used, the rest zero
 *   118  16  weights[8]    hundredths, the first n_weights used, rest zero
 *   134   8  dscp[8]       the first K used, the rest zero
 *   142   8  queue[8]      the first K used, the rest zero
 *   150      rules         n_rules rules, then zeros up to a multiple of 8
 *
 * A rule is type (1 = app, 2 = match, 3 = length), level, length N of its
 * value, then the N-byte value: app, 1 byte (DSCP); match, 1 to 32 bytes
 * (the keyword); length, 2 bytes (the minimum payload).
 *
 * Variable rules.  The decision: the body stays one body, shared
 * by the NX action and the datapath action, and grows a tail only when the
 * policy has rules.  A panda or pias body is exactly the 150 bytes it was
 * (same bytes, same vectors, the same memcmp per batch in the datapath); a
 * rule policy's body is 150 + a multiple of 8 bytes, at most
 * PANDA_WIRE_MAX_LEN, so that the NX action (10 + body) stays a multiple of
 * 8 bytes as OpenFlow requires.  The alternatives were worse: a fixed body
 * large enough for 16 keywords would cost every Panda flow 560 more bytes
 * per action and per batch comparison; keywords kept in a table elsewhere
 * (the controller, a datapath map) would split one policy in two places
 * that can disagree.  Rules keep the head's fixed fields (K, dscp and
 * queue maps) so that a body is decoded in one place.
 *
 * A body is canonical: padding and unused entries are zero, so two bodies
 * are the same policy exactly when their bytes are equal (memcmp), which is
 * what lets the datapath find a policy it validated before by its bytes.
 *
 * Bytes 12, 13, 18 and 19 were padding when untracked_level,
 * default_level, the rules and the tunnels were added: a body from before
 * has 0 there, which is the default (the lowest level; no rules; no
 * tunnels, so a Geneve or VXLAN packet is UDP), so old bodies keep their
 * meaning and stay valid, and a decoder from before refuses a body that
 * declares tunnels (nonzero padding) rather than misread it.  The tunnels
 * are one byte of flags, not ports: the two bytes left cannot hold a port
 * per tunnel type, so a tunnel is recognised by its IANA port.  Counting from the lowest level rather than
 * storing the level keeps the encoding unique (no second spelling of the
 * default).
 */
#ifndef PANDA_WIRE_H
#define PANDA_WIRE_H 1

#include <stddef.h>
#include <stdint.h>

#include <panda/policy.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PANDA_WIRE_LEN 150         /* The fixed head; a whole body without
                                     * rules. */
#define PANDA_WIRE_RULE_HDR 3
#define PANDA_WIRE_MAX_LEN \
    (PANDA_WIRE_LEN + ((PANDA_MAX_RULES \
                        * (PANDA_WIRE_RULE_HDR + PANDA_MAX_KEYWORD) + 7) / 8 * 8))

/* What is wrong with a body, one class per OpenFlow error that reports it
 * (ofp-actions maps them to OFPBAC_BAD_LEN, NXBRC_MUST_BE_ZERO and
 * OFPBAC_BAD_ARGUMENT). */
enum panda_wire_error {
    PANDA_WIRE_OK,
    PANDA_WIRE_BAD_LEN,         /* Shorter than PANDA_WIRE_LEN, longer
                                 * than PANDA_WIRE_MAX_LEN, or not the
                                 * length that its rules take. */
    PANDA_WIRE_NONZERO_PAD,     /* A padding byte is not zero. */
    PANDA_WIRE_BAD_ARGUMENT,    /* A field is out of range, an unused entry
                                 * is not zero, or panda_policy_check()
                                 * refuses the policy. */
};

/* Largest message that panda_wire_decode() writes, NUL included. */
#define PANDA_WIRE_MSG_SIZE PANDA_POLICY_MSG_SIZE

/* The length of the body of 'p' (valid): PANDA_WIRE_LEN if it has no rules,
 * at most PANDA_WIRE_MAX_LEN. */
size_t panda_wire_len(const struct panda_policy *p);

/* Packs 'p', which must be valid, into 'body', which must have room for
 * panda_wire_len(p) bytes; all of them are written (the result is
 * canonical).  Returns panda_wire_len(p). */
size_t panda_wire_encode(const struct panda_policy *p, uint8_t *body);

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

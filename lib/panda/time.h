/*
 * Time in lib/panda: one type for instants and durations, and the one range
 * that every configured duration is checked against where it enters (the
 * policy's text and wire forms, the table's configuration).
 *
 * Instants are milliseconds of a monotonic clock that the caller chooses
 * (Open vSwitch passes time_msec()); durations are milliseconds.  Both are
 * 64 bits wide, so no comparison truncates: a duration of 3 billion ms is
 * 3 billion ms, and a connection idle for 25 days is 25 days idle (a signed
 * 32-bit difference would make it look fresh after 24.8 days).
 *
 * Durations are at most PANDA_MAX_DURATION_MS (2^32 - 1 ms, 49.7 days):
 * the policy's wire body carries idle_reset in 32 bits, and a longer idle
 * timeout or idle reset has no use (a connection silent for 50 days is
 * gone).  Plain C, no OVS headers.
 */
#ifndef PANDA_TIME_H
#define PANDA_TIME_H 1

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An instant of a monotonic millisecond clock, or a duration in ms. */
typedef uint64_t panda_msec_t;

/* Largest duration a policy or a table accepts (idle_reset, the idle
 * timeout). */
#define PANDA_MAX_DURATION_MS ((panda_msec_t) UINT32_MAX)

#ifdef __cplusplus
}
#endif

#endif /* panda/time.h */

/*
 * What a run measures: one record per flow and per request, kept in
 * preallocated vectors (a 100k-flow run holds 100k x 56 bytes) and written
 * out at the end (output.cc).  The per-flow and per-request statistics are
 * computed from these files by the Python side (sim/pandasim/metrics.py),
 * in one place.
 */
#ifndef PANDA_SIM_RECORDS_H
#define PANDA_SIM_RECORDS_H

#include <cstdint>
#include <vector>

namespace pandasim
{

enum class FlowKind : uint8_t
{
    Background = 0, /* Poisson or closed-loop flows from the size CDF. */
    Incast = 1,     /* One response of an incast query. */
};

struct FlowRecord
{
    uint32_t id;
    uint32_t src, dst;      /* Host indices. */
    uint64_t size;          /* Bytes of payload. */
    int64_t startNs;        /* connect() called. */
    int64_t finishNs = -1;  /* Last byte delivered to the receiver, -1 if not. */
    int64_t idealNs = 0;    /* FCT alone in the network (slowdown = fct/ideal). */
    uint64_t received = 0;
    uint32_t group = 0;     /* Incast query id (Incast only). */
    uint16_t sport = 0;     /* Sender's port, once connected. */
    FlowKind kind = FlowKind::Background;
};

struct RpcRecord
{
    uint32_t pair;          /* Client/server pair index. */
    uint32_t valueSize;     /* Response payload (value) bytes. */
    int64_t sentNs;         /* Request handed to the socket. */
    int64_t doneNs = -1;    /* Last response byte received, -1 if not. */
};

struct RunRecords
{
    std::vector<FlowRecord> flows;
    std::vector<RpcRecord> rpcs;
};

} // namespace pandasim

#endif

/*
 * tsl-sim's configuration: TCP SkyLine's experiments (seed 003, §2.1, §5).
 * Parsed from the command line and validated once (ParseTslConfig); the
 * rest reads typed values.  Errors throw ConfigError naming the option.
 *
 * Defaults are the paper's: N workers and one aggregator on one switch,
 * 10 Gbit/s links with 2 us each (base RTT 8 us), RTO_min 200 ms, 128 KB
 * per port, SRU 256 KB, one round; TSL with delayed ACKs (2 segments,
 * 40 ms), minTh 0.1 and maxTh_unlabel 0.7 of the buffer; the baselines
 * without delayed ACKs; DCTCP's K = 20 packets at 128 KB (40 at 256 KB),
 * g = 1/16.
 */
#ifndef PANDA_SIM_TSL_CONFIG_H
#define PANDA_SIM_TSL_CONFIG_H

#include "config.h"
#include "tsl-socket.h"

#include <cstdint>
#include <string>

namespace pandasim
{

enum class TslScheme
{
    Tsl,     /* TslSocket over NewReno with ECN; label-aware WRED queues. */
    NewReno, /* ns-3 NewReno, drop-tail queues. */
    Cubic,   /* ns-3 CUBIC, drop-tail queues. */
    Dctcp    /* ns-3 TcpDctcp, RED step marking at K (DCTCP's switch). */
};

enum class TslMode
{
    Incast,  /* N workers answer SRU bytes per round to one aggregator. */
    Fairness /* Long flows joining and leaving one bottleneck (§5.7). */
};

struct TslConfig
{
    TslScheme scheme = TslScheme::Tsl;
    std::string schemeName;
    TslMode mode = TslMode::Incast;
    TslOptions tsl;              /* Sender/receiver mechanisms (TSL only). */
    bool protect = true;         /* WRED keeps labelled packets to the full buffer. */

    uint32_t workers = 0;
    uint32_t sruBytes = 0;
    uint32_t rounds = 1;
    uint32_t requestBytes = 0;

    /* Fairness: 'workers' long flows start 'stagger' apart, all run
     * 'hold', then leave 'stagger' apart; throughput sampled every
     * 'sample'. */
    double staggerS = 0, holdS = 0, sampleS = 0;

    uint64_t edgeBps = 0;
    uint64_t linkDelayNs = 0;
    uint32_t bufferBytes = 0;
    uint32_t ecnBytes = 0;       /* DCTCP's K. */
    double minTh = 0, maxThUnlabel = 0, wredProb = 0; /* Fractions of the buffer. */

    uint64_t minRtoNs = 0, delAckNs = 0;
    uint32_t delAckCount = 0, initCwnd = 0, segmentSize = 1448;
    uint32_t socketBuffer = 0;

    uint64_t seed = 1;
    double maxTime = 0;
    std::string outDir;

    /* The RunConfig the shared builders take (star topology, queues). */
    RunConfig network;
};

/* Throws ConfigError. */
TslConfig ParseTslConfig(int argc, char** argv);

} // namespace pandasim

#endif

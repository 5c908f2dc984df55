/*
 * One simulation run's configuration: parsed from the command line and
 * validated once, in ParseConfig (config.cc), which also fills the
 * topology-dependent defaults (dumbbell: the thesis's 1 Gbit/s host with
 * Linux timers; leaf-spine: PIAS/FISH's data-center settings).  Everything
 * else reads the typed values.  Errors throw ConfigError naming the option.
 */
#ifndef PANDA_SIM_CONFIG_H
#define PANDA_SIM_CONFIG_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pandasim
{

struct ConfigError : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

enum class Topology
{
    Dumbbell,
    LeafSpine
};

/* What a scheme is made of (schemes.cc holds the table). */
enum class Marking
{
    None,   /* DSCP 0 on everything. */
    Policy, /* lib/panda policy (Panda or PIAS) per connection. */
    Oracle  /* Remaining message size, known in advance. */
};

enum class QueueKind
{
    Fifo,   /* ns-3 FifoQueueDisc, drop tail. */
    RedEcn, /* ns-3 RedQueueDisc as a DCTCP-style step marker at K. */
    Sched,  /* lib/panda scheduler core. */
    Oracle, /* OracleQueueDisc (pFabric-like). */
    FqCoDel /* ns-3's own FqCoDelQueueDisc: the cross-check of the core's
             * fq_codel levels. */
};

struct Scheme
{
    const char* name;
    Marking marking;
    QueueKind queue;
    bool perFlow;        /* Sched: per-flow DRR queues in every level. */
    bool guard;          /* Sched: starvation guard on. */
    bool fqCodel;        /* Sched: the per-flow queues run as fq_codel
                          * (new flows first, CoDel per queue), and no port
                          * ECN threshold (CoDel marks instead). */
    const char* policyKind; /* "panda", "pias" or nullptr (no policy). */
    const char* summary;
};

/* Throws ConfigError(msg) unless 'ok' (the validation's one form). */
void Require(bool ok, const std::string& msg);

/* Null if 'name' is not a scheme. */
const Scheme* FindScheme(const std::string& name);
/* "fifo, fifo-ecn, ..." for messages and --help. */
std::string SchemeNames();

/* One flow of a fixed workload (--flow-list). */
struct ListedFlow
{
    int64_t startNs;   /* After the workload's start (1 us into the run). */
    uint64_t size;     /* Payload bytes. */
    uint32_t src, dst; /* Host indices. */
    uint32_t line;     /* Where it was listed, for messages. */
};

struct RunConfig
{
    /* Topology. */
    Topology topology = Topology::Dumbbell;
    uint32_t leaves = 0, hostsPerLeaf = 0, spines = 0;
    uint64_t edgeBps = 0, coreBps = 0;
    uint64_t linkDelayNs = 0;

    /* Scheme. */
    const Scheme* scheme = nullptr;
    std::string cc;              /* "cubic" or "dctcp". */
    double dctcpAlphaInit = 1;   /* DCTCP's alpha before its first estimate:
                                  * 1 as Linux and ns-3, 0 as NS-2 DCTCP
                                  * scripts commonly set it. */
    std::string policy;          /* Marking policy text (lib/panda syntax). */
    uint32_t bufferBytes = 0;    /* Per port, every port. */
    uint32_t ecnBytes = 0;       /* Port ECN threshold K; 0 = off. */
    uint32_t guardPermille = 0;  /* Starvation guard when the scheme has one. */
    std::string schedExtra;      /* Extra scheduler keys ("k=v,..."). */
    uint32_t tableCapacity = 0;  /* Connections per host table. */

    /* TCP. */
    uint64_t minRtoNs = 0, delAckNs = 0;
    uint32_t delAckCount = 2, initCwnd = 10, segmentSize = 1448;
    uint32_t socketBuffer = 0;

    /* Background flows. */
    std::string cdf;             /* Flow-size CDF file. */
    double load = 0;             /* Poisson arrivals at this load, or */
    double intervalUs = 0;       /* at this mean interval (FISH's t)... */
    uint32_t flows = 0;          /* ...for this many flows, or */
    uint32_t concurrency = 0;    /* closed loop with this many in flight. */
    /* Or a fixed workload: these flows, in start order, instead of the
     * CDF's (--flow-list; flows is then their number). */
    std::string flowListFile;
    std::vector<ListedFlow> flowList;

    /* Memcached-like RPC pairs (persistent connections). */
    uint32_t rpcPairs = 0;
    std::string rpcCdf;          /* Value sizes. */
    double rpcRate = 0;          /* Requests/s per pair (Poisson); 0 = closed loop. */
    int rpcLevel = -1;           /* The RPC connections' level whatever the
                                  * policy says (both directions), -1 = the
                                  * policy's: an experiment that moves only
                                  * the memcached connection. */
    uint32_t rpcRequests = 0;    /* Stop after this many answered requests
                                  * (all pairs); 0 = run by the flows. */

    /* Incast queries. */
    double incastRate = 0;       /* Queries per second (Poisson); 0 = none. */
    uint32_t incastQueries = 0;  /* How many queries. */
    uint32_t incastFanin = 0, incastBytes = 0;

    /* Run. */
    uint64_t seed = 1;
    double warmup = 0;           /* s: RPC starts at 0, flows after warmup. */
    double maxTime = 0;          /* s of simulated time; unfinished flows stay -1. */
    std::string outDir;
    bool collect = false;        /* Write flt.hist/fht.hist for panda-model. */
    bool levelTrace = false;     /* Write levels.csv: each connection's levels. */
    uint64_t timeTraceNs = 0;    /* Write ports-time.csv and flows-time.csv
                                  * every this often; 0 = off. */
    bool printRoutes = false;
    /* Accepted connections start with a new socket's CE sequence number
     * (true), or inherit the listener's as ns-3 does (false: reproduces
     * runs made before the workaround; listen-socket.h). */
    bool freshListenerEcn = true;
};

/* Parses argv (ns-3 CommandLine syntax, --key=value), applies defaults and
 * validates.  Throws ConfigError. */
RunConfig ParseConfig(int argc, char** argv);

/* Bits per second from "10Gbps", "40Gbit/s", "1e9"... (ns-3 DataRate
 * syntax).  Throws ConfigError naming 'option'. */
uint64_t ParseRate(const std::string& option, const std::string& value);

} // namespace pandasim

#endif

/*
 * The simulator's only door into lib/panda (policy, connection table, CDF
 * files, PRNG).  Every lib/panda call of the simulator is in panda-lib.cc,
 * so that renames in lib/panda touch one file; the scheduler core has its
 * own wrapper (sched-queue-disc.cc).  No lib/panda type appears here: the
 * rest of the simulator sees plain C++ values.
 */
#ifndef PANDA_SIM_PANDA_LIB_H
#define PANDA_SIM_PANDA_LIB_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pandasim
{

/* A validated Panda or PIAS marking policy (thesis Algorithm 2 / PIAS),
 * from the one text syntax of lib/panda ("id=1,threshold=1143,..."). */
class MarkPolicy
{
  public:
    /* Parses and validates 'text'; on error returns null and sets '*err'
     * to lib/panda's message (which names the field). */
    static std::unique_ptr<MarkPolicy> Parse(const std::string& text, std::string* err);
    ~MarkPolicy();

    unsigned Levels() const;
    uint8_t Dscp(unsigned level) const;
    unsigned LevelOf(int64_t counter) const;
    bool IsPias() const;
    std::string Text() const; /* Canonical text (panda_policy_format). */

  private:
    friend class ConnTable;
    struct Impl;
    explicit MarkPolicy(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

/* What the classifier needs of one outgoing TCP segment. */
struct TcpSegmentFacts
{
    uint32_t src, dst;      /* IPv4 addresses, host byte order. */
    uint16_t sport, dport;
    uint8_t flags;          /* TCP flags (FIN 1, SYN 2, RST 4, ACK 16). */
    uint32_t payload;       /* TCP payload bytes. */
};

struct MarkVerdict
{
    uint8_t level;
    uint8_t dscp;
};

/* One host's connection table (one per hypervisor in the datapath). */
class ConnTable
{
  public:
    /* 'capacity' connections, 'idle_ms' idle timeout (0 = never).  Throws
     * std::runtime_error with lib/panda's message on bad configuration. */
    ConnTable(uint32_t capacity, uint32_t idle_ms);
    ~ConnTable();
    ConnTable(const ConnTable&) = delete;
    ConnTable& operator=(const ConnTable&) = delete;

    MarkVerdict Classify(const MarkPolicy& policy, const TcpSegmentFacts& seg, uint32_t now_ms);

    /* The counter of the connection 'seg' belongs to (its addresses and
     * ports), without changing it; false if the table has no entry. */
    bool Lookup(const TcpSegmentFacts& seg, int64_t* counter) const;

    struct Stats
    {
        uint64_t connections, inserted, removed, evicted, expired;
        std::vector<uint64_t> packets; /* Per level. */
        uint64_t bytes;                /* Memory held by the table. */
    };
    Stats GetStats() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/* IPv4 TOS byte with its DSCP replaced and its ECN bits kept. */
uint8_t TosWithDscp(uint8_t tos, uint8_t dscp);

/* Deterministic PRNG (the same sequence for a seed on every machine). */
class Rng
{
  public:
    explicit Rng(uint64_t seed);
    ~Rng();
    double Uniform();        /* [0, 1) */
    double Exp(double mean);
    uint64_t Next();
    uint32_t Below(uint32_t n); /* Uniform in [0, n). */

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/* A flow-size (or value-size) CDF file of load_generator/cdf/. */
class SizeCdf
{
  public:
    /* Throws std::runtime_error with a message naming file and line. */
    explicit SizeCdf(const std::string& file);
    ~SizeCdf();
    SizeCdf(const SizeCdf&) = delete;
    SizeCdf& operator=(const SizeCdf&) = delete;

    double Mean() const;
    double Sample(Rng& rng) const;
    double Max() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace pandasim

#endif

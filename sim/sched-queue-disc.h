/*
 * The lib/panda egress scheduler core (lib/panda/scheduler.h: strict
 * levels, per-flow DRR queues inside a level (FISH), starvation guard,
 * port-level ECN, label-aware WRED, shaping) as an ns-3 QueueDisc, so the
 * simulated switches and hosts queue with the same code as the datapath.
 *
 * A packet's level comes from its DSCP through a 64-entry map (the marking
 * policy's per-level DSCP values, inverted); its flow is the 5-tuple hash.
 * The core decides; this class only translates: CE verdicts become
 * QueueDisc::Mark (which sets CE on ECT packets), drop verdicts
 * DropBeforeEnqueue with the reason, and the packets themselves wait in a
 * HandleQueue so that ns-3's counters and traces stay exact.
 */
#ifndef PANDA_SIM_SCHED_QUEUE_DISC_H
#define PANDA_SIM_SCHED_QUEUE_DISC_H

#include "handle-queue.h"

#include "ns3/event-id.h"
#include "ns3/queue-disc.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct panda_sched;

namespace ns3
{
class PandaSchedQueueDisc;
}

namespace pandasim
{

/* A scheduler configuration, parsed and validated once (by
 * panda_sched_config_parse, the one parser of its key=value syntax). */
class SchedConfig
{
  public:
    /* Null and '*err' (naming the key) on error. */
    static std::shared_ptr<const SchedConfig> Parse(const std::string& text, std::string* err);
    ~SchedConfig();
    unsigned Levels() const;
    const std::string& Text() const
    {
        return m_text;
    }

  private:
    friend class ns3::PandaSchedQueueDisc;
    struct Impl;
    SchedConfig();
    std::unique_ptr<Impl> m_impl;
    std::string m_text;
};

/* Per-level counters of one port, summed over ports for the run's output. */
struct SchedLevelCounters
{
    uint64_t enqueuedPackets = 0, sentPackets = 0, sentBytes = 0, guardPackets = 0;
    uint64_t dropLimit = 0, dropWred = 0, dropPushOut = 0, markEcn = 0, markWred = 0;
    uint64_t sharedQueuePackets = 0;
    uint64_t dropCodel = 0, markCodel = 0, newFlows = 0; /* fq-codel levels. */
    uint64_t backlogBytes = 0, backlogPackets = 0;       /* Held now. */
};

} // namespace pandasim

namespace ns3
{

class PandaSchedQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    PandaSchedQueueDisc();
    ~PandaSchedQueueDisc() override;

    /* Must be called before the simulation starts.  'dscpToLevel' maps
     * each DSCP to a level (values >= the config's levels count as the
     * lowest).  Aborts with the core's message if the core cannot be
     * created (the configuration itself was validated by Parse). */
    void Configure(std::shared_ptr<const pandasim::SchedConfig> cfg,
                   const std::array<uint8_t, 64>& dscpToLevel);

    /* Adds this port's per-level counters to 'sum' (resized to the levels). */
    void AddCounters(std::vector<pandasim::SchedLevelCounters>& sum) const;
    uint64_t MaxBacklogBytes() const;

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    void DoDispose() override;

    /* Where a packet held by the core waits; handed to the core as the
     * packet's opaque handle.  Recycled through a free list. */
    struct Held
    {
        HandleQueue::Handle where;
        Held* next;
    };
    Held* AllocHeld();
    void FreeHeld(Held* h);
    /* The core dropped 'h', held: pushed out for another packet, or
     * CoDel's. */
    void Dropped(Held* h, bool codel);
    /* CoDel's mark on held 'h'; false if it is not ECN-capable. */
    bool CodelMark(Held* h);

    std::shared_ptr<const pandasim::SchedConfig> m_cfg;
    std::array<uint8_t, 64> m_level{};
    struct panda_sched* m_sched = nullptr;
    Ptr<HandleQueue> m_account;
    std::vector<std::unique_ptr<Held[]>> m_chunks;
    Held* m_free = nullptr;
    EventId m_wake; /* Shaper: when the next packet may leave. */
};

} // namespace ns3

#endif

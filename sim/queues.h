/*
 * The queue disc of every egress port for a scheme: ns-3's FifoQueueDisc
 * (drop tail) and RedQueueDisc (as a DCTCP-style step marker: instantaneous
 * queue, mark at K, drop non-ECT above K) for the FIFO baselines, the
 * lib/panda scheduler core for PIAS/FISH/Panda, OracleQueueDisc for the
 * bound.  The same buffer and ECN threshold on every port (hosts
 * included: PIAS and the thesis schedule at the host too).
 */
#ifndef PANDA_SIM_QUEUES_H
#define PANDA_SIM_QUEUES_H

#include "config.h"
#include "network.h"
#include "output.h"

#include "ns3/queue-disc.h"

#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pandasim
{

class SchedConfig;
class MarkPolicy;

class PortQueueFactory
{
  public:
    /* Validates the scheduler configuration once (throws ConfigError with
     * the core's message) and builds the DSCP -> level map from 'policy'
     * (may be null for schemes without marking). */
    PortQueueFactory(const RunConfig& cfg, const MarkPolicy* policy);
    ~PortQueueFactory();

    void Install(const Port& port);

    /* Whether this build has the scheduler core (lib/panda/scheduler.c). */
    static bool HaveScheduler();
    /* The scheduler configuration text used on the ports (empty if none). */
    std::string SchedText() const;

    /* Writes "queues" (ns-3's queue disc statistics summed per port
     * role) and "sched" (the scheduler core's per-level counters summed
     * over ports, or null) into 'w'. */
    void WriteJson(JsonWriter& w) const;

    /* One CSV row per host NIC port and level (--time-trace-ms,
     * ports-time.csv): "t_ns,host,level,backlog_bytes,enqueued_packets,
     * sent_bytes,drop_limit,drop_push_out,mark_ecn", the backlog now and
     * the counters so far.  Queue discs other than the scheduler core
     * have no levels: one row with level -1, their backlog and the
     * counters ns-3 keeps (drop_limit: all its drops).  The header first
     * if 'header'.  'host' is the port's node id, which is the host index
     * (network.cc creates the hosts first). */
    void WriteHostPortSample(FILE* out, int64_t nowNs, bool header) const;

  private:
    const RunConfig& m_cfg;
    std::array<uint8_t, 64> m_levelOfDscp{};
    std::shared_ptr<const SchedConfig> m_sched;
    std::vector<std::pair<PortRole, ns3::Ptr<ns3::QueueDisc>>> m_installed;
    std::vector<uint32_t> m_installedNode; /* Node id of each, same order. */
};

} // namespace pandasim

#endif

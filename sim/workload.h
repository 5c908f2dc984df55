/*
 * The workload of a run: background flows (Poisson arrivals at a load, or
 * a closed loop with N in flight, sizes from a CDF; or a fixed list of
 * flows with their start times, --flow-list), RPC pairs and incast
 * queries; it launches them, tracks completions and stops the simulation
 * when every flow is done.
 *
 * Load: with Poisson arrivals at rate lambda and mean flow size E[S], the
 * offered load of the host links is lambda E[S] / (hosts x edge rate) for
 * all-to-all traffic (every host equally likely source and destination),
 * lambda E[S] / edge rate on the dumbbell (all flows host 0 -> host 1).
 *
 * The load window - from the first flow to the last background arrival -
 * is when RPC requests are issued, so that their latencies are measured
 * under the load and not while the last large flows drain.
 */
#ifndef PANDA_SIM_WORKLOAD_H
#define PANDA_SIM_WORKLOAD_H

#include "apps.h"
#include "config.h"
#include "world.h"

#include "ns3/ptr.h"

#include <chrono>
#include <memory>
#include <vector>

namespace pandasim
{

class Workload
{
  public:
    Workload(const RunConfig& cfg, World& world, const std::vector<ns3::Ptr<HostApp>>& apps);
    ~Workload();

    /* Schedules everything; the simulation may then run. */
    void Start();

    int64_t LoadStartNs() const
    {
        return m_loadStart;
    }
    int64_t LoadEndNs() const
    {
        return m_loadEnd;
    }
    double ArrivalRate() const
    {
        return m_lambda;
    }
    double MeanFlowBytes() const;

  private:
    void Launch(uint32_t id);
    void LaunchPoissonNext();
    void LaunchListed(uint32_t i);
    void LaunchClosed();
    void LaunchIncast(uint32_t query);
    void OnFlowDone(uint32_t id);
    void EndLoad();
    void Progress();
    uint32_t NewFlow(uint32_t src, uint32_t dst, uint64_t size, FlowKind kind, uint32_t group);
    std::pair<uint32_t, uint32_t> PickPair();

    const RunConfig& m_cfg;
    World& m_world;
    const std::vector<ns3::Ptr<HostApp>>& m_apps;
    Rng m_rng;
    std::unique_ptr<SizeCdf> m_sizes, m_values;

    double m_lambda = 0;           /* Background arrivals per second. */
    double m_listMean = 0;         /* Mean size of a --flow-list's flows. */
    uint32_t m_launched = 0;       /* Background flows launched. */
    uint64_t m_expected = 0;       /* Flows that must complete. */
    uint64_t m_done = 0;
    uint32_t m_backgroundDone = 0;
    uint32_t m_incastLaunched = 0;
    bool m_loadOver = false;
    int64_t m_loadStart = 0, m_loadEnd = -1;
    std::chrono::steady_clock::time_point m_wall0, m_lastReport;
};

} // namespace pandasim

#endif

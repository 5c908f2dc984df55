#include "workload.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <numeric>

namespace pandasim
{

using namespace ns3;

namespace
{
/* Everything starts 1 us in, after the applications' listeners. */
constexpr int64_t kT0 = 1000;
} // namespace

Workload::Workload(const RunConfig& cfg, World& world, const std::vector<Ptr<HostApp>>& apps)
    : m_cfg(cfg),
      m_world(world),
      m_apps(apps),
      m_rng(cfg.seed)
{
    auto load = [](const char* option, const std::string& file) {
        try
        {
            return std::make_unique<SizeCdf>(file);
        }
        catch (const std::runtime_error& e)
        {
            throw ConfigError(std::string("--") + option + ": " + e.what());
        }
    };
    if (!cfg.flowList.empty())
    {
        /* A fixed workload: its mean size and arrival rate are the list's
         * (run.json reports them as for drawn flows). */
        double bytes = 0;
        for (const ListedFlow& f : cfg.flowList)
        {
            bytes += (double)f.size;
        }
        m_listMean = bytes / (double)cfg.flowList.size();
        int64_t span = cfg.flowList.back().startNs - cfg.flowList.front().startNs;
        m_lambda = span > 0 ? (double)(cfg.flowList.size() - 1) * 1e9 / (double)span : 0;
    }
    else if (cfg.flows > 0)
    {
        m_sizes = load("cdf", cfg.cdf);
        uint32_t hosts = (uint32_t)apps.size();
        double perHost = cfg.load * (double)cfg.edgeBps / 8.0 / m_sizes->Mean();
        m_lambda = cfg.intervalUs > 0 ? 1e6 / cfg.intervalUs
                   : cfg.topology == Topology::Dumbbell ? perHost
                                                        : perHost * hosts;
    }
    if (cfg.rpcPairs > 0)
    {
        m_values = load("rpc-cdf", cfg.rpcCdf);
    }
    m_expected = (uint64_t)cfg.flows + (uint64_t)cfg.incastQueries * cfg.incastFanin;
    world.rec.flows.reserve(std::min<uint64_t>(m_expected, 1u << 16));
    world.onFlowDone = [this](uint32_t id) { OnFlowDone(id); };
    world.rpcLimit = cfg.rpcRequests;
    world.onRpcLimit = [this]() {
        /* The requests drive this run: it ends with the last answer. */
        m_loadEnd = Simulator::Now().GetNanoSeconds();
        m_loadOver = true;
        m_world.rpcActive = false;
        m_world.stopReason = "rpc requests answered";
        Simulator::Stop();
    };
}

Workload::~Workload() = default;

double
Workload::MeanFlowBytes() const
{
    return m_sizes ? m_sizes->Mean() : m_listMean;
}

std::pair<uint32_t, uint32_t>
Workload::PickPair()
{
    if (m_cfg.topology == Topology::Dumbbell)
    {
        return {0, 1}; /* PM2 -> PM1, as on the testbed. */
    }
    uint32_t n = (uint32_t)m_apps.size();
    uint32_t src = m_rng.Below(n);
    uint32_t dst = m_rng.Below(n - 1);
    return {src, dst >= src ? dst + 1 : dst};
}

uint32_t
Workload::NewFlow(uint32_t src, uint32_t dst, uint64_t size, FlowKind kind, uint32_t group)
{
    auto& flows = m_world.rec.flows;
    FlowRecord f;
    f.id = (uint32_t)flows.size();
    f.src = src;
    f.dst = dst;
    f.size = size;
    f.kind = kind;
    f.group = group;
    f.idealNs = m_world.net.IdealFctNs(src, dst, size, m_cfg.segmentSize);
    flows.push_back(f);
    return f.id;
}

void
Workload::Launch(uint32_t id)
{
    m_apps[m_world.rec.flows[id].src]->SendFlow(id);
}

void
Workload::Progress()
{
    /* A line on stderr every 30 s of wall time, so that a long point can
     * be followed (sim/run.py writes it to the point's log.txt). */
    auto now = std::chrono::steady_clock::now();
    if (now - m_lastReport >= std::chrono::seconds(30))
    {
        m_lastReport = now;
        double wall = std::chrono::duration<double>(now - m_wall0).count();
        fprintf(stderr,
                "panda-sim: %.0f s wall: simulated %.4f s, flows %llu/%llu done, %llu "
                "launched, %zu requests, %llu events\n",
                wall, Simulator::Now().GetSeconds(), (unsigned long long)m_done,
                (unsigned long long)m_expected, (unsigned long long)m_world.rec.flows.size(),
                m_world.rec.rpcs.size(), (unsigned long long)Simulator::GetEventCount());
    }
    Simulator::Schedule(MilliSeconds(1), &Workload::Progress, this);
}

void
Workload::Start()
{
    m_loadStart = kT0;
    Time t0 = NanoSeconds(kT0);
    m_wall0 = m_lastReport = std::chrono::steady_clock::now();
    Simulator::Schedule(MilliSeconds(1), &Workload::Progress, this);

    for (uint32_t i = 0; i < m_cfg.rpcPairs; i++)
    {
        auto [server, client] = PickPair();
        RpcSettings st;
        st.values = m_values.get();
        st.rate = m_cfg.rpcRate;
        uint64_t seed = m_cfg.seed * 1000003ULL + i + 1;
        Simulator::Schedule(t0, &HostApp::StartRpcClient, m_apps[client], i, server, st, seed);
    }
    if (m_cfg.rpcPairs > 0)
    {
        Simulator::Schedule(Seconds(m_cfg.warmup) + t0, [this]() {
            if (m_loadOver && m_expected > 0)
            {
                return; /* The load ended before the warm-up did. */
            }
            m_world.rpcActive = true;
            for (const auto& app : m_apps)
            {
                app->RpcGo();
            }
        });
    }

    if (!m_cfg.flowList.empty())
    {
        /* Each at its listed time; ns-3 runs events of the same time in
         * the order they were scheduled, so equal starts connect in the
         * list's order. */
        for (uint32_t i = 0; i < (uint32_t)m_cfg.flowList.size(); i++)
        {
            Simulator::Schedule(t0 + NanoSeconds(m_cfg.flowList[i].startNs),
                                &Workload::LaunchListed, this, i);
        }
    }
    else if (m_cfg.flows > 0 && m_cfg.concurrency > 0)
    {
        Simulator::Schedule(t0, &Workload::LaunchClosed, this);
    }
    else if (m_cfg.flows > 0)
    {
        Simulator::Schedule(t0 + Seconds(m_rng.Exp(1.0 / m_lambda)), &Workload::LaunchPoissonNext,
                            this);
    }
    if (m_cfg.incastQueries > 0)
    {
        Simulator::Schedule(t0 + Seconds(m_rng.Exp(1.0 / m_cfg.incastRate)),
                            &Workload::LaunchIncast, this, 0u);
    }
    if (m_expected == 0)
    {
        /* RPC only: the load is the RPC itself, until --max-time. */
        m_loadOver = true;
    }
}

void
Workload::LaunchPoissonNext()
{
    auto [src, dst] = PickPair();
    uint64_t size = (uint64_t)std::max(1.0, std::round(m_sizes->Sample(m_rng)));
    Launch(NewFlow(src, dst, size, FlowKind::Background, 0));
    if (++m_launched < m_cfg.flows)
    {
        Simulator::Schedule(Seconds(m_rng.Exp(1.0 / m_lambda)), &Workload::LaunchPoissonNext, this);
    }
    else
    {
        EndLoad();
    }
}

void
Workload::LaunchListed(uint32_t i)
{
    const ListedFlow& f = m_cfg.flowList[i];
    Launch(NewFlow(f.src, f.dst, f.size, FlowKind::Background, 0));
    if (++m_launched == m_cfg.flows)
    {
        EndLoad();
    }
}

void
Workload::LaunchClosed()
{
    while (m_launched < m_cfg.flows && m_launched - m_backgroundDone < m_cfg.concurrency)
    {
        auto [src, dst] = PickPair();
        uint64_t size = (uint64_t)std::max(1.0, std::round(m_sizes->Sample(m_rng)));
        m_launched++;
        Launch(NewFlow(src, dst, size, FlowKind::Background, 0));
    }
    if (m_launched == m_cfg.flows)
    {
        EndLoad();
    }
}

void
Workload::LaunchIncast(uint32_t query)
{
    uint32_t n = (uint32_t)m_apps.size();
    uint32_t agg = m_rng.Below(n);
    /* 'fanin' distinct responders other than the aggregator: a partial
     * Fisher-Yates shuffle of the other hosts. */
    std::vector<uint32_t> others(n - 1);
    std::iota(others.begin(), others.end(), 0);
    for (auto& h : others)
    {
        h += h >= agg ? 1 : 0;
    }
    for (uint32_t i = 0; i < m_cfg.incastFanin; i++)
    {
        uint32_t j = i + m_rng.Below(n - 1 - i);
        std::swap(others[i], others[j]);
        Launch(NewFlow(others[i], agg, m_cfg.incastBytes, FlowKind::Incast, query));
    }
    if (++m_incastLaunched < m_cfg.incastQueries)
    {
        Simulator::Schedule(Seconds(m_rng.Exp(1.0 / m_cfg.incastRate)), &Workload::LaunchIncast, this,
                            m_incastLaunched);
    }
    else
    {
        EndLoad();
    }
}

void
Workload::EndLoad()
{
    bool backgroundDone = m_launched >= m_cfg.flows;
    bool incastDone = m_incastLaunched >= m_cfg.incastQueries;
    if (!backgroundDone || !incastDone || m_loadOver)
    {
        return;
    }
    m_loadOver = true;
    m_loadEnd = Simulator::Now().GetNanoSeconds();
    m_world.rpcActive = false;
    if (m_done == m_expected)
    {
        m_world.stopReason = "all flows done";
        Simulator::Stop();
    }
}

void
Workload::OnFlowDone(uint32_t id)
{
    m_done++;
    if (m_world.rec.flows[id].kind == FlowKind::Background)
    {
        m_backgroundDone++;
        if (m_cfg.concurrency > 0)
        {
            LaunchClosed();
        }
    }
    if (m_loadOver && m_done == m_expected)
    {
        m_world.stopReason = "all flows done";
        Simulator::Stop();
    }
}

} // namespace pandasim

/*
 * panda-sim: one simulation point.  Parses and validates the configuration
 * (config.cc), builds the topology with the scheme's queues (network.cc,
 * queues.cc), puts the marker between TCP and IP on every host
 * (host-marker.cc), runs the workload (workload.cc, apps.cc) and writes
 * flows.csv, rpc.csv and run.json (output.cc).
 *
 * Exit status: 0 when the run completed (even if some flows did not finish
 * by --max-time: run.json says how many), 2 on bad configuration, 1 on
 * other errors.
 */
#include "apps.h"
#include "collector.h"
#include "config.h"
#include "host-marker.h"
#include "network.h"
#include "output.h"
#include "panda-lib.h"
#include "queues.h"
#include "workload.h"
#include "world.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-dctcp.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#ifndef PANDA_NS3_VERSION
#define PANDA_NS3_VERSION "unknown"
#endif

using namespace ns3;
using namespace pandasim;

namespace
{

void
ConfigureTcp(const RunConfig& c)
{
    TypeId cc = c.cc == "dctcp" ? TcpDctcp::GetTypeId() : TcpCubic::GetTypeId();
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(cc));
    Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(c.dctcpAlphaInit));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(c.segmentSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(c.initCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(NanoSeconds(c.delAckNs)));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(c.delAckCount));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(c.socketBuffer));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(c.socketBuffer));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(c.minRtoNs)));
    /* SYN timeout: Linux's 1 s on the dumbbell (Linux hosts); on the
     * leaf-spine the data RTO_min, as a data-center stack tuned for small
     * RTOs would have. */
    Config::SetDefault("ns3::TcpSocket::ConnTimeout",
                       TimeValue(c.topology == Topology::Dumbbell ? Seconds(1)
                                                                  : NanoSeconds(c.minRtoNs)));
    /* TIME_WAIT (2 MSL) of a few RTOs, not RFC 793's 4 minutes: closed
     * flows give back their sockets and ports while the run goes on. */
    Config::SetDefault("ns3::TcpSocketBase::MaxSegLifetime",
                       DoubleValue(2.0 * (double)c.minRtoNs * 1e-9));
    /* ECN on for every scheme: it changes nothing where no queue marks. */
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", EnumValue(TcpSocketState::On));
}

/* --time-trace-ms: every period, the host ports' per-level backlog and
 * counters (ports-time.csv) and each flow's progress and TCP state
 * (flows-time.csv: the flows running now, and those that finished since
 * the last sample, once, with their final state).  What a run's totals
 * cannot show: which level held the backlog while a flow stalled, and
 * whether the flow was waiting, timing out or backing off from marks. */
class TimeTrace
{
  public:
    TimeTrace(const RunConfig& c,
              const PortQueueFactory& q,
              const World& w,
              const Network& n,
              const std::vector<Ptr<HostMarker>>& m,
              const MarkPolicy* p)
        : m_cfg(c),
          m_queues(q),
          m_world(w),
          m_net(n),
          m_markers(m),
          m_policy(p)
    {
        m_ports = Open("ports-time.csv");
        m_flows = Open("flows-time.csv");
        fputs("t_ns,id,size,received,level,cwnd,ssthresh,rto_ms,losses,recoveries,cwrs,ecn_state\n",
              m_flows);
        Simulator::Schedule(NanoSeconds(c.timeTraceNs), &TimeTrace::Sample, this, true);
    }
    /* Takes a last sample when the run ended between two (the last
     * flow's finish stops it), closes the files; throws
     * std::runtime_error on a write error. */
    void Finish()
    {
        if (Simulator::Now().GetNanoSeconds() > m_last)
        {
            Sample(false);
        }
        bool ok = fclose(m_ports) == 0;
        ok = fclose(m_flows) == 0 && ok;
        m_ports = m_flows = nullptr;
        if (!ok)
        {
            throw std::runtime_error(m_cfg.outDir + ": ports-time.csv/flows-time.csv: write error");
        }
    }
    ~TimeTrace()
    {
        if (m_ports)
        {
            fclose(m_ports);
            fclose(m_flows);
        }
    }

  private:
    FILE* Open(const char* name)
    {
        std::string path = m_cfg.outDir + "/" + name;
        FILE* f = fopen(path.c_str(), "w");
        if (!f)
        {
            throw std::runtime_error(path + ": cannot create");
        }
        return f;
    }

    void Sample(bool again)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        m_queues.WriteHostPortSample(m_ports, now, m_first);
        m_first = false;
        for (const FlowRecord& f : m_world.rec.flows)
        {
            if (f.finishNs >= 0 && f.finishNs <= m_last)
            {
                continue;
            }
            int level = -1;
            int64_t counter;
            TcpSegmentFacts seg{m_net.hostAddr[f.src].Get(), m_net.hostAddr[f.dst].Get(), f.sport,
                                kFlowPort, 0, 0};
            if (m_policy && f.sport && m_markers[f.src]->Table()->Lookup(seg, &counter))
            {
                level = (int)m_policy->LevelOf(counter);
            }
            auto it = m_world.flowTcp.find(f.id);
            World::FlowTcp t = it == m_world.flowTcp.end() ? World::FlowTcp{} : it->second;
            fprintf(m_flows, "%lld,%u,%llu,%llu,%d,%u,%u,%.3f,%u,%u,%u,%d\n", (long long)now, f.id,
                    (unsigned long long)f.size, (unsigned long long)f.received, level, t.cwnd,
                    t.ssthresh, t.rtoNs / 1e6, t.losses, t.recoveries, t.cwrs, t.ecn);
        }
        m_last = now;
        if (again)
        {
            Simulator::Schedule(NanoSeconds(m_cfg.timeTraceNs), &TimeTrace::Sample, this, true);
        }
    }

    const RunConfig& m_cfg;
    const PortQueueFactory& m_queues;
    const World& m_world;
    const Network& m_net;
    const std::vector<Ptr<HostMarker>>& m_markers;
    const MarkPolicy* m_policy;
    FILE* m_ports = nullptr;
    FILE* m_flows = nullptr;
    bool m_first = true;
    int64_t m_last = -1;
};

std::string
TopologyName(Topology t)
{
    return t == Topology::Dumbbell ? "dumbbell" : "leafspine";
}

void
WriteRunJson(const RunConfig& c,
             const MarkPolicy* policy,
             const PortQueueFactory& queues,
             const Network& net,
             const World& world,
             const Workload& wl,
             const std::vector<Ptr<HostMarker>>& markers,
             double wallS,
             uint64_t events,
             int64_t simEndNs)
{
    uint64_t done = 0;
    for (const FlowRecord& f : world.rec.flows)
    {
        done += f.finishNs >= 0;
    }
    JsonWriter w;
    w.Begin();
    w.Str("tool", "panda-sim").Str("ns3_version", PANDA_NS3_VERSION);

    w.Begin("config")
        .Str("topology", TopologyName(c.topology))
        .Str("scheme", c.scheme->name)
        .Str("cc", c.cc)
        .Num("dctcp_alpha_init", c.dctcpAlphaInit)
        .UInt("seed", c.seed)
        .Num("load", c.load)
        .Num("interval_us", c.intervalUs)
        .UInt("rpc_requests", c.rpcRequests)
        .UInt("flows", c.flows)
        .UInt("concurrency", c.concurrency)
        .Str("cdf", c.cdf)
        .Str("flow_list", c.flowListFile)
        .Bool("level_trace", c.levelTrace)
        .Num("time_trace_ms", c.timeTraceNs / 1e6)
        .UInt("rpc_pairs", c.rpcPairs)
        .Str("rpc_cdf", c.rpcCdf)
        .Num("rpc_rate", c.rpcRate)
        .Int("rpc_level", c.rpcLevel)
        .Str("listener_ecn", c.freshListenerEcn ? "fresh" : "inherit")
        .Num("incast_rate", c.incastRate)
        .UInt("incast_queries", c.incastQueries)
        .UInt("incast_fanin", c.incastFanin)
        .UInt("incast_bytes", c.incastBytes)
        .UInt("buffer_bytes", c.bufferBytes)
        .UInt("ecn_threshold_bytes", c.ecnBytes)
        .UInt("guard_permille", c.guardPermille)
        .Str("sched_extra", c.schedExtra)
        .UInt("table_capacity", c.tableCapacity)
        .Num("min_rto_ms", c.minRtoNs / 1e6)
        .Num("delack_ms", c.delAckNs / 1e6)
        .UInt("delack_count", c.delAckCount)
        .UInt("init_cwnd", c.initCwnd)
        .UInt("segment_size", c.segmentSize)
        .UInt("socket_buffer", c.socketBuffer)
        .Num("warmup_s", c.warmup)
        .Num("max_time_s", c.maxTime)
        .End();

    w.Begin("scheme")
        .Str("name", c.scheme->name)
        .Str("summary", c.scheme->summary)
        .Bool("per_flow", c.scheme->perFlow)
        .Bool("guard", c.scheme->guard);
    if (policy)
    {
        w.Str("policy", policy->Text()).UInt("levels", policy->Levels());
    }
    else
    {
        w.Null("policy");
    }
    std::string sched = queues.SchedText();
    sched.empty() ? w.Null("sched_config") : w.Str("sched_config", sched);
    w.End();

    w.Begin("topology")
        .Str("kind", TopologyName(c.topology))
        .UInt("hosts", net.hosts.GetN())
        .UInt("leaves", net.leaves.GetN())
        .UInt("spines", net.spines.GetN())
        .UInt("edge_bps", net.edgeBps)
        .UInt("core_bps", net.coreBps)
        .UInt("link_delay_ns", net.linkDelayNs)
        .Int("base_rtt_ns", net.BaseRttNs())
        .UInt("ports", net.ports.size())
        .End();

    w.Begin("workload")
        .Num("mean_flow_bytes", wl.MeanFlowBytes())
        .Num("arrival_rate_per_s", wl.ArrivalRate())
        .Int("load_start_ns", wl.LoadStartNs())
        .Int("load_end_ns", wl.LoadEndNs())
        .Int("rpc_from_ns", wl.LoadStartNs() + (int64_t)(c.warmup * 1e9))
        .End();

    w.Begin("run")
        .UInt("flows_total", world.rec.flows.size())
        .UInt("flows_done", done)
        .UInt("rpc_requests", world.rec.rpcs.size())
        .Int("sim_end_ns", simEndNs)
        .Str("stopped_by", world.stopReason)
        .Num("wall_s", wallS)
        .UInt("events", events)
        .Int("peak_rss_kb", PeakRssKb())
        .End();

    w.Begin("tcp")
        .UInt("sockets_watched", world.sockets)
        .UInt("rto", world.rtoCount)
        .UInt("fast_recovery", world.recoveryCount)
        .UInt("flow_listener_ecn_changes", world.listenerEcnChanges)
        .Int("flow_listener_ecn_first_change_ns", world.listenerEcnFirstNs)
        .Int("flow_listener_ecn_state", world.listenerEcnState)
        .Int("flow_listener_ce_seq", world.listenerCeSeq)
        .UInt("flow_listener_forks", world.listenerForks)
        .UInt("flow_listener_forks_stale_ce", world.listenerForksStaleCe)
        .Int("flow_listener_fork_max_ce_seq", world.listenerForkMaxCeSeq)
        .End();

    queues.WriteJson(w);

    if (!markers.empty() && markers[0]->Table())
    {
        ConnTable::Stats sum{};
        sum.packets.assign(8, 0);
        for (const auto& m : markers)
        {
            ConnTable::Stats s = m->Table()->GetStats();
            sum.connections += s.connections;
            sum.inserted += s.inserted;
            sum.removed += s.removed;
            sum.evicted += s.evicted;
            sum.expired += s.expired;
            sum.bytes += s.bytes;
            for (size_t i = 0; i < s.packets.size() && i < 8; i++)
            {
                sum.packets[i] += s.packets[i];
            }
        }
        w.Begin("marking")
            .UInt("live_connections", sum.connections)
            .UInt("inserted", sum.inserted)
            .UInt("removed", sum.removed)
            .UInt("evicted", sum.evicted)
            .UInt("expired", sum.expired)
            .UInt("table_bytes", sum.bytes)
            .BeginArray("packets_per_level");
        for (size_t i = 0; i < (policy ? policy->Levels() : 0); i++)
        {
            w.UInt(nullptr, sum.packets[i]);
        }
        w.EndArray();
        /* Where each RPC connection's responses ended up (the testbed
         * reads the same from ovs-appctl panda/show). */
        w.BeginArray("rpc_connections");
        for (const World::RpcConn& rc : world.rpcConns)
        {
            TcpSegmentFacts seg{net.hostAddr[rc.server].Get(), net.hostAddr[rc.client].Get(),
                                kRpcPort, rc.clientPort, 0, 0};
            int64_t counter;
            w.Begin().UInt("pair", rc.pair);
            if (markers[rc.server]->Table()->Lookup(seg, &counter))
            {
                /* "level": where its packets went (--rpc-level pins it);
                 * "policy_level": where its counter puts it. */
                w.Int("counter", counter)
                    .UInt("level", c.rpcLevel >= 0 ? (unsigned)c.rpcLevel : policy->LevelOf(counter))
                    .UInt("policy_level", policy->LevelOf(counter));
            }
            else
            {
                w.Null("counter").Null("level");
            }
            w.End();
        }
        w.EndArray().End();
    }
    else
    {
        w.Null("marking");
    }
    w.End();
    WriteFile(c.outDir, "run.json", w.Text());
}

int
Run(int argc, char** argv)
{
    RunConfig cfg = ParseConfig(argc, argv);

    std::unique_ptr<MarkPolicy> policy;
    if (cfg.scheme->policyKind)
    {
        std::string err;
        policy = MarkPolicy::Parse(cfg.policy, &err);
        if (!policy)
        {
            throw ConfigError("--policy: " + err);
        }
        bool wantPias = std::string(cfg.scheme->policyKind) == "pias";
        if (policy->IsPias() != wantPias)
        {
            throw ConfigError(std::string("--scheme=") + cfg.scheme->name + " needs a " +
                              cfg.scheme->policyKind + " policy, --policy is a " +
                              (policy->IsPias() ? "pias" : "panda") + " one");
        }
        if (cfg.rpcLevel >= (int)policy->Levels())
        {
            throw ConfigError("--rpc-level: " + std::to_string(cfg.rpcLevel) +
                              " is not a level of the policy (0.." +
                              std::to_string(policy->Levels() - 1) + ")");
        }
    }
    PortQueueFactory queues(cfg, policy.get());
    std::filesystem::create_directories(cfg.outDir);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(cfg.seed);
    ConfigureTcp(cfg);

    Network net = BuildNetwork(cfg, [&queues](const Port& p) { queues.Install(p); });
    if (cfg.printRoutes)
    {
        Ipv4RoutingHelper::PrintRoutingTableAllAt(Seconds(0), Create<OutputStreamWrapper>(&std::cout));
    }

    MessageBook book;
    SizeCollector collector(kRpcPort, kFlowPort);
    World world(net);
    world.traceFlows = cfg.timeTraceNs > 0;
    world.freshListenerEcn = cfg.freshListenerEcn;
    std::vector<Ptr<HostMarker>> markers;
    if (cfg.scheme->marking != Marking::None || cfg.collect)
    {
        for (uint32_t h = 0; h < net.hosts.GetN(); h++)
        {
            Ptr<HostMarker> m = CreateObject<HostMarker>();
            if (cfg.scheme->marking == Marking::Policy)
            {
                m->SetPolicy(policy.get(), cfg.tableCapacity);
                if (cfg.rpcLevel >= 0)
                {
                    m->PinPort(kRpcPort, (unsigned)cfg.rpcLevel);
                }
                if (cfg.levelTrace)
                {
                    m->TraceLevels();
                }
            }
            else if (cfg.scheme->marking == Marking::Oracle)
            {
                m->SetOracle(&book);
            }
            if (cfg.collect)
            {
                m->SetCollector(&collector);
            }
            m->Install(net.hosts.Get(h));
            markers.push_back(m);
        }
    }
    if (cfg.scheme->marking == Marking::Oracle)
    {
        world.book = &book;
    }

    std::vector<Ptr<HostApp>> apps;
    for (uint32_t h = 0; h < net.hosts.GetN(); h++)
    {
        Ptr<HostApp> app = CreateObject<HostApp>();
        app->Setup(&world, h);
        net.hosts.Get(h)->AddApplication(app);
        app->SetStartTime(Seconds(0));
        apps.push_back(app);
    }
    Workload wl(cfg, world, apps);
    wl.Start();
    std::unique_ptr<TimeTrace> trace;
    if (cfg.timeTraceNs > 0)
    {
        trace = std::make_unique<TimeTrace>(cfg, queues, world, net, markers, policy.get());
    }

    Simulator::Stop(Seconds(cfg.maxTime));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    int64_t simEnd = Simulator::Now().GetNanoSeconds();
    uint64_t events = Simulator::GetEventCount();

    WriteRecords(cfg.outDir, world.rec);
    if (trace)
    {
        trace->Finish();
    }
    if (cfg.collect)
    {
        collector.Write(cfg.outDir);
    }
    if (cfg.levelTrace)
    {
        std::ofstream out(cfg.outDir + "/levels.csv");
        for (uint32_t h = 0; h < markers.size(); h++)
        {
            markers[h]->WriteLevels(out, h, h == 0);
        }
        if (!out)
        {
            std::cerr << "panda-sim: " << cfg.outDir << "/levels.csv: write error\n";
            return 1;
        }
    }
    WriteRunJson(cfg, policy.get(), queues, net, world, wl, markers, wall, events, simEnd);

    uint64_t done = 0;
    for (const FlowRecord& f : world.rec.flows)
    {
        done += f.finishNs >= 0;
    }
    std::cout << "panda-sim: " << cfg.scheme->name << " " << cfg.cc << ": " << done << "/"
              << world.rec.flows.size() << " flows, " << world.rec.rpcs.size()
              << " requests, simulated " << simEnd / 1e9 << " s in " << wall << " s wall, "
              << events << " events, peak RSS " << PeakRssKb() / 1024 << " MB\n";
    Simulator::Destroy();
    return 0;
}

} // namespace

int
main(int argc, char** argv)
{
    for (int i = 1; i < argc; i++)
    {
        if (std::string(argv[i]) == "--features")
        {
            /* What this build can run (the tests and sim/run.py ask). */
            std::cout << "ns3=" << PANDA_NS3_VERSION << "\nscheduler="
                      << (PortQueueFactory::HaveScheduler() ? "yes" : "no") << "\n";
            return 0;
        }
    }
    try
    {
        return Run(argc, argv);
    }
    catch (const ConfigError& e)
    {
        std::cerr << "panda-sim: " << e.what() << "\n";
        return 2;
    }
    catch (const std::exception& e)
    {
        std::cerr << "panda-sim: " << e.what() << "\n";
        return 1;
    }
}

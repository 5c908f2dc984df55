/*
 * tsl-sim: one point of TCP SkyLine's experiments (seed 003).  Parses and
 * validates the configuration (tsl-config.cc), builds the star (the shared
 * network builder) with the scheme's switch queues (the shared queue
 * factory: drop tail, DCTCP's RED step, or the lib/panda scheduler core's
 * label-aware WRED), puts TslSocketFactory (and for TSL the label wire) on
 * every host, runs the incast or fairness workload (tsl-incast.cc) and
 * writes run.json.
 *
 * Exit status: 0 when the run completed (even if the rounds did not finish
 * by --max-time: run.json says so), 2 on bad configuration, 1 on other
 * errors.
 */
#include "network.h"
#include "output.h"
#include "queues.h"
#include "tsl-config.h"
#include "tsl-incast.h"
#include "tsl-socket.h"
#include "tsl-wire.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-dctcp.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#ifndef PANDA_NS3_VERSION
#define PANDA_NS3_VERSION "unknown"
#endif

using namespace ns3;
using namespace pandasim;

namespace
{

TypeId
CongestionOps(TslScheme s)
{
    switch (s)
    {
    case TslScheme::Cubic:
        return TcpCubic::GetTypeId();
    case TslScheme::Dctcp:
        return LinuxDctcp::GetTypeId(); /* tsl-socket.h says why not TcpDctcp. */
    default:
        /* TSL is NewReno with classic ECN (§3.2: ECN tells the sender to
         * back off before the buffer fills). */
        return TcpNewReno::GetTypeId();
    }
}

void
ConfigureTcp(const TslConfig& c)
{
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(c.segmentSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(c.initCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(NanoSeconds(c.delAckNs)));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(c.delAckCount));
    uint32_t buf = c.mode == TslMode::Incast ? c.socketBuffer : 256 * 1024;
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(c.socketBuffer));
    /* Linux's tcp_retries2: a flow of a deep incast may time out more than
     * ns-3's default 6 times in a row. */
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(15));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(NanoSeconds(c.minRtoNs)));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(c.minRtoNs)));
    /* ECN where a queue marks: TSL (WRED) and DCTCP (TcpDctcp turns it on
     * itself); the loss-based baselines run over drop tail. */
    Config::SetDefault("ns3::TcpSocketBase::UseEcn",
                       EnumValue(c.scheme == TslScheme::Tsl ? TcpSocketState::On
                                                            : TcpSocketState::Off));
}

const char*
ModeName(TslMode m)
{
    return m == TslMode::Incast ? "incast" : "fairness";
}

void
WriteRunJson(const TslConfig& c,
             const Network& net,
             const PortQueueFactory& queues,
             const IncastRecord& rec,
             const std::vector<TslStats>& perWorker,
             const TslStats& receiver,
             const std::vector<Ptr<TslWire>>& wires,
             double wallS,
             uint64_t events)
{
    JsonWriter w;
    w.Begin();
    w.Str("tool", "tsl-sim").Str("ns3_version", PANDA_NS3_VERSION);
    w.Begin("config")
        .Str("scheme", c.schemeName)
        .Str("mode", ModeName(c.mode))
        .UInt("workers", c.workers)
        .UInt("sru_bytes", c.sruBytes)
        .UInt("rounds", c.rounds)
        .UInt("request_bytes", c.requestBytes)
        .UInt("buffer_bytes", c.bufferBytes)
        .UInt("edge_bps", c.edgeBps)
        .UInt("link_delay_ns", c.linkDelayNs)
        .Num("min_rto_ms", c.minRtoNs / 1e6)
        .Num("delack_ms", c.delAckNs / 1e6)
        .UInt("delack_count", c.delAckCount)
        .UInt("init_cwnd", c.initCwnd)
        .UInt("segment_size", c.segmentSize)
        .UInt("ecn_threshold_bytes", c.scheme == TslScheme::Dctcp ? c.ecnBytes : 0)
        .Num("min_th", c.minTh)
        .Num("max_th_unlabel", c.maxThUnlabel)
        .Num("wred_prob", c.wredProb)
        .Bool("signal", c.tsl.signal)
        .Bool("label_rtx", c.tsl.labelRtx)
        .Bool("protect", c.protect)
        .Bool("cawa", c.tsl.cawa)
        .Bool("align", c.tsl.align)
        .UInt("small_window_segs", c.tsl.smallWindowSegs)
        .Num("timer_accuracy_us", c.tsl.timerAccuracyNs / 1e3)
        .Num("stagger_s", c.staggerS)
        .Num("hold_s", c.holdS)
        .Num("sample_s", c.sampleS)
        .UInt("seed", c.seed)
        .Num("max_time_s", c.maxTime)
        .Str("sched_config", queues.SchedText())
        .End();
    w.Begin("topology")
        .UInt("hosts", net.hosts.GetN())
        .Int("base_rtt_ns", net.BaseRttNs())
        .End();

    bool complete = c.mode == TslMode::Incast ? rec.roundEndNs.size() == c.rounds
                                               : rec.endNs >= 0;
    w.Begin("result").Bool("complete", complete).UInt("bytes", rec.bytes);
    w.Int("established_ns", rec.establishedNs).Int("end_ns", rec.endNs);
    w.UInt("connect_failures", rec.connectFailures);
    if (complete && c.mode == TslMode::Incast && rec.endNs > rec.establishedNs)
    {
        double g = rec.bytes * 8.0 / ((rec.endNs - rec.establishedNs) * 1e-9);
        w.Num("goodput_bps", g).Num("link_fraction", g / c.edgeBps);
    }
    else
    {
        w.Null("goodput_bps").Null("link_fraction");
    }
    w.BeginArray("rounds");
    for (size_t r = 0; r < rec.roundStartNs.size(); r++)
    {
        w.Begin().Int("start_ns", rec.roundStartNs[r]);
        if (r < rec.roundEndNs.size())
        {
            w.Int("end_ns", rec.roundEndNs[r]);
        }
        else
        {
            w.Null("end_ns");
        }
        int64_t last = -1;
        uint32_t unfinished = 0;
        for (int64_t t : rec.workerDoneNs[r])
        {
            last = std::max(last, t);
            unfinished += t < 0;
        }
        w.UInt("unfinished_workers", unfinished).End();
    }
    w.EndArray();
    if (c.mode == TslMode::Fairness)
    {
        w.BeginArray("samples_bytes");
        for (const auto& row : rec.samples)
        {
            w.BeginArray();
            for (uint64_t b : row)
            {
                w.UInt(nullptr, b);
            }
            w.EndArray();
        }
        w.EndArray();
    }
    w.End();

    /* TCP counters of the workers' (data senders') sockets: totals, the
     * largest per worker (the paper's "maximum RTO count", Fig. 12b), and
     * the RTOs per worker. */
    TslStats sum;
    uint64_t maxRto = 0;
    for (const TslStats& s : perWorker)
    {
        sum.Add(s);
        maxRto = std::max(maxRto, s.rto);
    }
    w.Begin("tcp")
        .UInt("rto", sum.rto)
        .UInt("rto_max_per_worker", maxRto)
        .UInt("fast_recovery", sum.fastRecovery)
        .UInt("sa_recovery", sum.saRecovery)
        .UInt("sp_sent", sum.spSent)
        .UInt("tsp_sent", sum.tspSent)
        .UInt("rtx_sent", sum.rtxSent)
        .UInt("dsp_sent", sum.dspSent)
        .UInt("sa_received", sum.saReceived)
        .UInt("alignments", sum.alignments);
    w.BeginArray("rto_per_worker");
    for (const TslStats& s : perWorker)
    {
        w.UInt(nullptr, s.rto);
    }
    w.EndArray().End();

    /* The aggregator's (receiver's) side: its ACKs. */
    w.Begin("receiver")
        .UInt("sa_sent", receiver.saSent)
        .UInt("tsa_sent", receiver.tsaSent)
        .UInt("delack_timeouts", receiver.delAckTimeouts)
        .UInt("cawa_now", receiver.cawaNow)
        .UInt("cawa_delayed", receiver.cawaDelayed)
        .UInt("cawa_short", receiver.cawaShort)
        .End();
    uint64_t labelledSent = 0;
    for (const auto& wire : wires)
    {
        labelledSent += wire->LabelledSent();
    }
    w.UInt("labelled_packets_sent", labelledSent);
    queues.WriteJson(w);
    w.Begin("run")
        .Num("wall_s", wallS)
        .UInt("events", events)
        .Num("sim_end_s", Simulator::Now().GetSeconds())
        .Int("peak_rss_kb", PeakRssKb())
        .End();
    w.End();
    WriteFile(c.outDir, "run.json", w.Text());
}

} // namespace

namespace
{

int
Run(int argc, char** argv)
{
    TslConfig cfg = ParseTslConfig(argc, argv);
    PortQueueFactory queues(cfg.network, nullptr);
    std::filesystem::create_directories(cfg.outDir);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(cfg.seed);
    ConfigureTcp(cfg);

    Network net = BuildNetwork(cfg.network, [&queues](const Port& p) { queues.Install(p); });

    std::vector<Ptr<TslWire>> wires;
    for (uint32_t h = 0; h < net.hosts.GetN(); h++)
    {
        Ptr<Node> node = net.hosts.Get(h);
        Ptr<TslSocketFactory> f = CreateObject<TslSocketFactory>();
        f->Setup(CongestionOps(cfg.scheme), cfg.tsl);
        node->AggregateObject(f);
        if (cfg.tsl.Any())
        {
            Ptr<TslWire> wire = CreateObject<TslWire>();
            wire->Install(node);
            wires.push_back(wire);
        }
    }

    IncastRecord rec;
    std::vector<Ipv4Address> workerAddr(net.hostAddr.begin() + 1, net.hostAddr.end());
    Ptr<IncastAggregator> agg = CreateObject<IncastAggregator>();
    agg->Setup(&cfg, workerAddr, &rec);
    net.hosts.Get(0)->AddApplication(agg);
    /* Workers listen before the aggregator connects. */
    agg->SetStartTime(MicroSeconds(1));
    std::vector<Ptr<IncastWorker>> workers;
    for (uint32_t i = 0; i < cfg.workers; i++)
    {
        Ptr<IncastWorker> wk = CreateObject<IncastWorker>();
        wk->Setup(&cfg, i);
        net.hosts.Get(i + 1)->AddApplication(wk);
        wk->SetStartTime(Seconds(0));
        workers.push_back(wk);
    }

    Simulator::Stop(Seconds(cfg.maxTime));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t events = Simulator::GetEventCount();

    std::vector<TslStats> perWorker;
    for (const auto& wk : workers)
    {
        TslStats s;
        for (const Ptr<Socket>& sock : wk->Sockets())
        {
            s.Add(DynamicCast<TslSocket>(sock)->Stats());
        }
        perWorker.push_back(s);
    }
    TslStats receiver;
    for (const Ptr<Socket>& sock : agg->Sockets())
    {
        receiver.Add(DynamicCast<TslSocket>(sock)->Stats());
    }
    WriteRunJson(cfg, net, queues, rec, perWorker, receiver, wires, wall, events);
    std::cout << "tsl-sim: " << cfg.schemeName << " N=" << cfg.workers << " "
              << (rec.endNs >= 0 ? "done" : "unfinished") << ", simulated "
              << Simulator::Now().GetSeconds() << " s in " << wall << " s wall, " << events
              << " events, peak RSS " << PeakRssKb() / 1024 << " MB\n";
    Simulator::Destroy();
    return 0;
}

} // namespace

int
main(int argc, char** argv)
{
    try
    {
        return Run(argc, argv);
    }
    catch (const ConfigError& e)
    {
        std::cerr << "tsl-sim: " << e.what() << "\n";
        return 2;
    }
    catch (const std::exception& e)
    {
        std::cerr << "tsl-sim: " << e.what() << "\n";
        return 1;
    }
}

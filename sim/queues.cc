#include "queues.h"

#include "oracle.h"
#include "panda-lib.h"
#ifdef HAVE_PANDA_SCHED
#include "sched-queue-disc.h"
#endif

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/fifo-queue-disc.h"
#include "ns3/fq-codel-queue-disc.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/red-queue-disc.h"
#include "ns3/string.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>

namespace pandasim
{

using namespace ns3;

bool
PortQueueFactory::HaveScheduler()
{
#ifdef HAVE_PANDA_SCHED
    return true;
#else
    return false;
#endif
}

PortQueueFactory::PortQueueFactory(const RunConfig& cfg, const MarkPolicy* policy)
    : m_cfg(cfg)
{
    if (cfg.scheme->queue != QueueKind::Sched)
    {
        return;
    }
    if (!HaveScheduler())
    {
        throw ConfigError(std::string("--scheme=") + cfg.scheme->name +
                          " needs the lib/panda scheduler core, which this build does not have "
                          "(lib/panda/scheduler.c was absent when configure ran)");
    }
    /* Without a marking policy (TCP SkyLine's label-aware WRED, tsl-sim):
     * one level, every DSCP in it. */
    unsigned K = policy ? policy->Levels() : 1;
    m_levelOfDscp.fill((uint8_t)(K - 1)); /* Unknown DSCP: the lowest level. */
    for (unsigned i = policy ? K : 0; i-- > 0;)
    {
        m_levelOfDscp[policy->Dscp(i)] = (uint8_t)i;
    }
#ifdef HAVE_PANDA_SCHED
    /* The packet-descriptor limit is one per 100 bytes of buffer: a port
     * full of MTU packets never reaches it, one full of pure ACKs (54
     * bytes) does, as a switch's descriptor table would. */
    std::ostringstream t;
    t << "levels=" << K << ",limit-bytes=" << cfg.bufferBytes
      << ",limit-packets=" << cfg.bufferBytes / 100
      << ",ecn-threshold=" << (cfg.scheme->fqCodel ? 0 : cfg.ecnBytes)
      << ",guard=" << cfg.guardPermille << ",seed=" << cfg.seed;
    for (unsigned i = 0; i < K; i++)
    {
        t << "," << i << ".per-flow=" << (cfg.scheme->perFlow ? "true" : "false");
    }
    if (cfg.scheme->fqCodel)
    {
        /* CoDel's defaults (5 ms, 100 ms, ECN), as fq-codel-ns3 has. */
        t << ",fq-codel=true";
    }
    if (!cfg.schedExtra.empty())
    {
        t << "," << cfg.schedExtra;
    }
    std::string err;
    m_sched = SchedConfig::Parse(t.str(), &err);
    if (!m_sched)
    {
        throw ConfigError("scheduler configuration '" + t.str() + "': " + err);
    }
#endif
}

PortQueueFactory::~PortQueueFactory() = default;

std::string
PortQueueFactory::SchedText() const
{
#ifdef HAVE_PANDA_SCHED
    return m_sched ? m_sched->Text() : "";
#else
    return "";
#endif
}

void
PortQueueFactory::Install(const Port& port)
{
    Ptr<QueueDisc> qd;
    QueueSize buffer(QueueSizeUnit::BYTES, m_cfg.bufferBytes);
    switch (m_cfg.scheme->queue)
    {
    case QueueKind::Fifo:
        qd = CreateObjectWithAttributes<FifoQueueDisc>("MaxSize", QueueSizeValue(buffer));
        break;
    case QueueKind::RedEcn:
        /* Instantaneous queue (QW = 1), one threshold (MinTh = MaxTh = K,
         * not gentle): every ECT packet arriving above K is marked, a
         * non-ECT one dropped, as DCTCP's switches do. */
        qd = CreateObjectWithAttributes<RedQueueDisc>("MaxSize",
                                                      QueueSizeValue(buffer),
                                                      "MinTh",
                                                      DoubleValue(m_cfg.ecnBytes),
                                                      "MaxTh",
                                                      DoubleValue(m_cfg.ecnBytes),
                                                      "QW",
                                                      DoubleValue(1.0),
                                                      "Gentle",
                                                      BooleanValue(false),
                                                      "UseEcn",
                                                      BooleanValue(true),
                                                      "UseHardDrop",
                                                      BooleanValue(false),
                                                      "MeanPktSize",
                                                      UintegerValue(1500));
        break;
    case QueueKind::Sched: {
#ifdef HAVE_PANDA_SCHED
        Ptr<PandaSchedQueueDisc> s = CreateObject<PandaSchedQueueDisc>();
        s->Configure(m_sched, m_levelOfDscp);
        qd = s;
#endif
        break;
    }
    case QueueKind::Oracle:
        qd = CreateObjectWithAttributes<OracleQueueDisc>("LimitBytes",
                                                         UintegerValue(m_cfg.bufferBytes));
        break;
    case QueueKind::FqCoDel: {
        /* As the core's fq-codel scheme: CoDel's defaults with ECN, the
         * core's quantum (1514 bytes of queue-disc item, IP packet
         * included), the same buffer in 1500-byte packets (ns-3's FqCoDel
         * counts packets only; the core limits bytes, and descriptors at
         * one per 100 bytes).  ns-3 hashes flows into 1024 queues (the
         * core gives each flow its own); with a handful of flows per port,
         * collisions are rare. */
        Ptr<FqCoDelQueueDisc> f = CreateObjectWithAttributes<FqCoDelQueueDisc>(
            "MaxSize",
            QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, m_cfg.bufferBytes / 1500)),
            "UseEcn",
            BooleanValue(true),
            "Target",
            StringValue("5ms"),
            "Interval",
            StringValue("100ms"));
        f->SetQuantum(1514);
        qd = f;
        break;
    }
    }
    NS_ABORT_MSG_UNLESS(qd, "no queue disc for the scheme");
    port.dev->GetNode()->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(port.dev, qd);
    m_installed.emplace_back(port.role, qd);
    m_installedNode.push_back(port.dev->GetNode()->GetId());
}

void
PortQueueFactory::WriteHostPortSample(FILE* out, int64_t nowNs, bool header) const
{
    if (header)
    {
        fputs("t_ns,host,level,backlog_bytes,enqueued_packets,sent_bytes,drop_limit,"
              "drop_push_out,mark_ecn\n",
              out);
    }
    for (size_t i = 0; i < m_installed.size(); i++)
    {
        const auto& [role, qd] = m_installed[i];
        if (role != PortRole::HostUp)
        {
            continue;
        }
        uint32_t node = m_installedNode[i];
#ifdef HAVE_PANDA_SCHED
        if (m_cfg.scheme->queue == QueueKind::Sched)
        {
            std::vector<SchedLevelCounters> lv;
            DynamicCast<PandaSchedQueueDisc>(qd)->AddCounters(lv);
            for (size_t l = 0; l < lv.size(); l++)
            {
                const SchedLevelCounters& c = lv[l];
                fprintf(out, "%lld,%u,%zu,%llu,%llu,%llu,%llu,%llu,%llu\n", (long long)nowNs, node,
                        l, (unsigned long long)c.backlogBytes,
                        (unsigned long long)c.enqueuedPackets, (unsigned long long)c.sentBytes,
                        (unsigned long long)c.dropLimit, (unsigned long long)c.dropPushOut,
                        (unsigned long long)c.markEcn);
            }
            continue;
        }
#endif
        const QueueDisc::Stats& st = qd->GetStats();
        fprintf(out, "%lld,%u,-1,%u,%llu,%llu,%llu,0,%llu\n", (long long)nowNs, node,
                qd->GetNBytes(), (unsigned long long)st.nTotalEnqueuedPackets,
                (unsigned long long)st.nTotalSentBytes, (unsigned long long)st.nTotalDroppedPackets,
                (unsigned long long)st.nTotalMarkedPackets);
    }
}

void
PortQueueFactory::WriteJson(JsonWriter& w) const
{
    struct RoleStats
    {
        uint64_t ports = 0, enqueued = 0, dropped = 0, dropBytes = 0, marked = 0;
        std::map<std::string, uint64_t> dropReasons, markReasons;
        std::vector<uint64_t> perPort; /* Enqueued packets (ECMP spread). */
    };
    std::map<std::string, RoleStats> roles;
    for (const auto& [role, qd] : m_installed)
    {
        RoleStats& r = roles[PortRoleName(role)];
        const QueueDisc::Stats& s = qd->GetStats();
        r.ports++;
        r.enqueued += s.nTotalEnqueuedPackets;
        r.perPort.push_back(s.nTotalEnqueuedPackets);
        r.dropped += s.nTotalDroppedPackets;
        r.dropBytes += s.nTotalDroppedBytes;
        r.marked += s.nTotalMarkedPackets;
        for (const auto& [why, n] : s.nDroppedPacketsBeforeEnqueue)
        {
            r.dropReasons[why] += n;
        }
        for (const auto& [why, n] : s.nDroppedPacketsAfterDequeue)
        {
            r.dropReasons[why] += n;
        }
        for (const auto& [why, n] : s.nMarkedPackets)
        {
            r.markReasons[why] += n;
        }
    }
    w.Begin("queues");
    for (const auto& [name, r] : roles)
    {
        w.Begin(name.c_str())
            .UInt("ports", r.ports)
            .UInt("enqueued_packets", r.enqueued)
            .UInt("dropped_packets", r.dropped)
            .UInt("dropped_bytes", r.dropBytes)
            .UInt("marked_packets", r.marked);
        w.Begin("drop_reasons");
        for (const auto& [why, n] : r.dropReasons)
        {
            w.UInt(why.c_str(), n);
        }
        w.End().Begin("mark_reasons");
        for (const auto& [why, n] : r.markReasons)
        {
            w.UInt(why.c_str(), n);
        }
        w.End().BeginArray("enqueued_per_port");
        for (uint64_t n : r.perPort)
        {
            w.UInt(nullptr, n);
        }
        w.EndArray().End();
    }
    w.End();

#ifdef HAVE_PANDA_SCHED
    if (m_cfg.scheme->queue == QueueKind::Sched)
    {
        std::vector<SchedLevelCounters> sum;
        uint64_t maxBacklog = 0;
        for (const auto& [role, qd] : m_installed)
        {
            Ptr<PandaSchedQueueDisc> s = DynamicCast<PandaSchedQueueDisc>(qd);
            s->AddCounters(sum);
            maxBacklog = std::max(maxBacklog, s->MaxBacklogBytes());
        }
        w.Begin("sched").UInt("max_backlog_bytes", maxBacklog).BeginArray("levels");
        for (const SchedLevelCounters& c : sum)
        {
            w.Begin()
                .UInt("enqueued_packets", c.enqueuedPackets)
                .UInt("sent_packets", c.sentPackets)
                .UInt("sent_bytes", c.sentBytes)
                .UInt("guard_packets", c.guardPackets)
                .UInt("drop_limit", c.dropLimit)
                .UInt("drop_wred", c.dropWred)
                .UInt("drop_push_out", c.dropPushOut)
                .UInt("mark_ecn", c.markEcn)
                .UInt("mark_wred", c.markWred)
                .UInt("shared_queue_packets", c.sharedQueuePackets)
                .UInt("drop_codel", c.dropCodel)
                .UInt("mark_codel", c.markCodel)
                .UInt("new_flows", c.newFlows)
                .End();
        }
        w.EndArray().End();
        return;
    }
#endif
    w.Null("sched");
}

} // namespace pandasim

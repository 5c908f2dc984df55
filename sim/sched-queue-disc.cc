/*
 * Wrapper of the lib/panda scheduler core (scheduler.h); the only file of
 * the simulator that calls it.
 */
#include "sched-queue-disc.h"

#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <cstdlib>

extern "C" {
#include <panda/scheduler.h>
}

namespace pandasim
{

struct SchedConfig::Impl
{
    panda_sched_config c;
};

SchedConfig::SchedConfig()
    : m_impl(std::make_unique<Impl>())
{
}

SchedConfig::~SchedConfig() = default;

std::shared_ptr<const SchedConfig>
SchedConfig::Parse(const std::string& text, std::string* err)
{
    std::shared_ptr<SchedConfig> cfg(new SchedConfig());
    panda_sched_config_init(&cfg->m_impl->c);
    char* msg = panda_sched_config_parse(&cfg->m_impl->c, text.c_str());
    if (msg)
    {
        *err = msg;
        free(msg);
        return nullptr;
    }
    cfg->m_text = text;
    return cfg;
}

unsigned
SchedConfig::Levels() const
{
    return m_impl->c.n_levels;
}

} // namespace pandasim

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PandaSchedQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(PandaSchedQueueDisc);

namespace
{
const char*
DropReason(panda_sched_verdict v)
{
    switch (v)
    {
    case PANDA_SCHED_DROP_LIMIT:
        return "Port buffer full";
    case PANDA_SCHED_DROP_BUDGET:
        return "Datapath budget exhausted";
    case PANDA_SCHED_DROP_WRED:
        return "WRED";
    default:
        return "Unknown verdict";
    }
}

constexpr const char* ECN_MARK = "Port ECN threshold";
constexpr const char* PUSH_OUT_DROP = "Pushed out for a higher level";
constexpr const char* CODEL_DROP = "CoDel drop";
constexpr const char* CODEL_MARK = "CoDel mark";
constexpr unsigned HELD_CHUNK = 1024;
} // namespace

TypeId
PandaSchedQueueDisc::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PandaSchedQueueDisc")
                            .SetParent<QueueDisc>()
                            .SetGroupName("PandaSim")
                            .AddConstructor<PandaSchedQueueDisc>();
    return tid;
}

PandaSchedQueueDisc::PandaSchedQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::NO_LIMITS)
{
}

PandaSchedQueueDisc::~PandaSchedQueueDisc()
{
    if (m_sched)
    {
        panda_sched_drain(m_sched, [](void*, void*) {}, nullptr);
        panda_sched_destroy(m_sched);
    }
}

void
PandaSchedQueueDisc::DoDispose()
{
    m_wake.Cancel();
    QueueDisc::DoDispose();
}

void
PandaSchedQueueDisc::Configure(std::shared_ptr<const pandasim::SchedConfig> cfg,
                               const std::array<uint8_t, 64>& dscpToLevel)
{
    NS_ABORT_MSG_IF(m_sched, "PandaSchedQueueDisc configured twice");
    m_cfg = std::move(cfg);
    m_level = dscpToLevel;
    char* err = nullptr;
    m_sched = panda_sched_create(&m_cfg->m_impl->c, nullptr, &err);
    if (!m_sched)
    {
        std::string msg = err ? err : "unknown error";
        free(err);
        NS_FATAL_ERROR("panda scheduler (" << m_cfg->Text() << "): " << msg);
    }
    /* Held packets the core drops (push-out, as the datapath does; CoDel
     * at fq-codel levels): ns-3 counts them as dropped after dequeue, as
     * its own CoDel's are.  CoDel's marks go through QueueDisc::Mark,
     * which sets CE on ECT packets only. */
    panda_sched_set_drop(
        m_sched,
        [](void* held, panda_sched_drop why, void* self) {
            static_cast<PandaSchedQueueDisc*>(self)->Dropped(static_cast<Held*>(held),
                                                             why == PANDA_SCHED_DROPPED_CODEL);
        },
        this);
    panda_sched_set_mark(
        m_sched,
        [](void* held, void* self) {
            return static_cast<PandaSchedQueueDisc*>(self)->CodelMark(static_cast<Held*>(held));
        },
        this);
}

void
PandaSchedQueueDisc::Dropped(Held* h, bool codel)
{
    Ptr<QueueDiscItem> item = m_account->Release(h->where);
    FreeHeld(h);
    DropAfterDequeue(item, codel ? CODEL_DROP : PUSH_OUT_DROP);
}

bool
PandaSchedQueueDisc::CodelMark(Held* h)
{
    return Mark(*h->where, CODEL_MARK);
}

PandaSchedQueueDisc::Held*
PandaSchedQueueDisc::AllocHeld()
{
    if (!m_free)
    {
        m_chunks.emplace_back(new Held[HELD_CHUNK]);
        Held* c = m_chunks.back().get();
        for (unsigned i = 0; i < HELD_CHUNK; i++)
        {
            c[i].next = m_free;
            m_free = &c[i];
        }
    }
    Held* h = m_free;
    m_free = h->next;
    return h;
}

void
PandaSchedQueueDisc::FreeHeld(Held* h)
{
    h->next = m_free;
    m_free = h;
}

bool
PandaSchedQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    /* Every packet here is IPv4: the topology builds IPv4 only. */
    const Ipv4Header& ip = StaticCast<Ipv4QueueDiscItem>(item)->GetHeader();
    uint8_t tos = ip.GetTos();

    panda_sched_pkt pkt;
    pkt.len = item->GetSize();
    pkt.flow_hash = item->Hash(0);
    pkt.dscp = tos >> 2;
    pkt.level = m_level[pkt.dscp];
    pkt.ecn = tos & 3;

    uint64_t now = Simulator::Now().GetNanoSeconds();
    Held* h = AllocHeld();
    panda_sched_verdict v = panda_sched_enqueue(m_sched, &pkt, h, now);
    if (panda_sched_verdict_is_drop(v))
    {
        FreeHeld(h);
        DropBeforeEnqueue(item, DropReason(v));
        return false;
    }
    h->where = m_account->Hold(item);
    if (v == PANDA_SCHED_QUEUED_CE)
    {
        Mark(item, ECN_MARK);
    }
    return true;
}

Ptr<QueueDiscItem>
PandaSchedQueueDisc::DoDequeue()
{
    uint64_t now = Simulator::Now().GetNanoSeconds();
    auto* h = static_cast<Held*>(panda_sched_dequeue(m_sched, now, nullptr));
    if (!h)
    {
        /* Held back by the shaper: run again when it allows. */
        uint64_t next = panda_sched_next_ns(m_sched, now);
        if (next != UINT64_MAX && next > now && !m_wake.IsRunning())
        {
            m_wake = Simulator::Schedule(NanoSeconds(next - now), &QueueDisc::Run, this);
        }
        return nullptr;
    }
    Ptr<QueueDiscItem> item = m_account->Release(h->where);
    FreeHeld(h);
    return item;
}

bool
PandaSchedQueueDisc::CheckConfig()
{
    if (!m_sched)
    {
        NS_LOG_ERROR("PandaSchedQueueDisc: Configure() was not called");
        return false;
    }
    m_account = HandleQueue::AttachTo(*this);
    return m_account != nullptr;
}

void
PandaSchedQueueDisc::InitializeParams()
{
}

void
PandaSchedQueueDisc::AddCounters(std::vector<pandasim::SchedLevelCounters>& sum) const
{
    struct panda_sched_stats st;
    panda_sched_stats(m_sched, &st);
    if (sum.size() < st.n_levels)
    {
        sum.resize(st.n_levels);
    }
    for (unsigned i = 0; i < st.n_levels; i++)
    {
        const panda_sched_level_stats& l = st.level[i];
        pandasim::SchedLevelCounters& c = sum[i];
        c.enqueuedPackets += l.enqueued_packets;
        c.sentPackets += l.sent_packets;
        c.sentBytes += l.sent_bytes;
        c.guardPackets += l.guard_packets;
        c.dropLimit += l.drop_limit + l.drop_budget;
        c.dropWred += l.drop_wred;
        c.dropPushOut += l.drop_push_out;
        c.markEcn += l.mark_ecn;
        c.markWred += l.mark_wred;
        c.sharedQueuePackets += l.shared_queue_packets;
        c.dropCodel += l.drop_codel;
        c.markCodel += l.mark_codel;
        c.newFlows += l.new_flows;
        c.backlogBytes += l.backlog_bytes;
        c.backlogPackets += l.backlog_packets;
    }
}

uint64_t
PandaSchedQueueDisc::MaxBacklogBytes() const
{
    struct panda_sched_stats st;
    panda_sched_stats(m_sched, &st);
    return st.max_backlog_bytes;
}

} // namespace ns3

#include "oracle.h"

#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace pandasim
{

void
MessageBook::Append(const ConnKey& k, uint64_t bytes)
{
    Stream& s = m_streams[k];
    uint64_t end = (s.ends.empty() ? 0 : s.ends.back()) + bytes;
    s.ends.push_back(end);
}

void
MessageBook::Forget(const ConnKey& k)
{
    m_streams.erase(k);
}

uint64_t
MessageBook::Rank(const ConnKey& k, uint32_t seq, uint32_t payload)
{
    if (payload == 0)
    {
        return 0;
    }
    auto it = m_streams.find(k);
    if (it == m_streams.end())
    {
        return 0;
    }
    Stream& s = it->second;
    /* ns-3's TCP starts every connection at sequence number 0 (the SYN),
     * so stream offset = seq - 1.  Offsets are unwrapped against the
     * highest one seen (a long-lived RPC connection passes 4 GB). */
    uint32_t off32 = seq - 1;
    int32_t delta = (int32_t)(off32 - (uint32_t)s.high);
    uint64_t off = (uint64_t)((int64_t)s.high + delta);
    if (off > s.high)
    {
        s.high = off;
    }
    /* New data moves forward: advance the cursor; a retransmission of an
     * older message searches back. */
    while (s.cursor < s.ends.size() && s.ends[s.cursor] <= off)
    {
        s.cursor++;
    }
    size_t i = s.cursor;
    if (i > 0 && s.ends[i - 1] > off)
    {
        i = std::upper_bound(s.ends.begin(), s.ends.end(), off) - s.ends.begin();
    }
    if (i >= s.ends.size())
    {
        return 0; /* Beyond what the application wrote: cannot happen. */
    }
    return s.ends[i] - off;
}

ns3::TypeId
OracleRankTag::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("pandasim::OracleRankTag")
                                 .SetParent<ns3::Tag>()
                                 .SetGroupName("PandaSim")
                                 .AddConstructor<OracleRankTag>();
    return tid;
}

ns3::TypeId
OracleRankTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
OracleRankTag::GetSerializedSize() const
{
    return 8;
}

void
OracleRankTag::Serialize(ns3::TagBuffer i) const
{
    i.WriteU64(rank);
}

void
OracleRankTag::Deserialize(ns3::TagBuffer i)
{
    rank = i.ReadU64();
}

void
OracleRankTag::Print(std::ostream& os) const
{
    os << "rank=" << rank;
}

} // namespace pandasim

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("OracleQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(OracleQueueDisc);

TypeId
OracleQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::OracleQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("PandaSim")
            .AddConstructor<OracleQueueDisc>()
            .AddAttribute("LimitBytes",
                          "Buffer of the port in bytes",
                          UintegerValue(360000),
                          MakeUintegerAccessor(&OracleQueueDisc::m_limitBytes),
                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

OracleQueueDisc::OracleQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::NO_LIMITS)
{
}

OracleQueueDisc::~OracleQueueDisc() = default;

namespace
{
uint64_t
RankOf(Ptr<const QueueDiscItem> item)
{
    pandasim::OracleRankTag tag;
    return item->GetPacket()->PeekPacketTag(tag) ? tag.rank : 0;
}
} // namespace

bool
OracleQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    Pkt p{RankOf(item), m_seq++, item->Hash(0), {}};
    uint32_t size = item->GetSize();

    /* Make room by dropping the largest ranks, unless the arriving packet
     * is itself the largest. */
    while (GetNBytes() + size > m_limitBytes)
    {
        if (m_byRank.empty() || !ByRank()(p, *m_byRank.rbegin()))
        {
            DropBeforeEnqueue(item, LIMIT_DROP);
            return false;
        }
        Pkt victim = *m_byRank.rbegin();
        m_byRank.erase(std::prev(m_byRank.end()));
        auto f = m_flows.find(victim.flow);
        f->second.erase(victim.seq);
        if (f->second.empty())
        {
            m_flows.erase(f);
        }
        DropAfterDequeue(m_account->Release(victim.held), LIMIT_DROP);
    }
    p.held = m_account->Hold(item);
    m_byRank.insert(p);
    m_flows[p.flow].emplace(p.seq, p);
    return true;
}

Ptr<QueueDiscItem>
OracleQueueDisc::DoDequeue()
{
    if (m_byRank.empty())
    {
        return nullptr;
    }
    /* The flow of the best-ranked packet; send its earliest packet. */
    uint32_t flow = m_byRank.begin()->flow;
    auto f = m_flows.find(flow);
    auto first = f->second.begin();
    Pkt p = first->second;
    f->second.erase(first);
    if (f->second.empty())
    {
        m_flows.erase(f);
    }
    m_byRank.erase(p);
    return m_account->Release(p.held);
}

bool
OracleQueueDisc::CheckConfig()
{
    m_account = HandleQueue::AttachTo(*this);
    return m_account != nullptr;
}

void
OracleQueueDisc::InitializeParams()
{
}

} // namespace ns3

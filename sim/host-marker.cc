#include "host-marker.h"

#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-l4-protocol.h"

#include <cstdio>

namespace pandasim
{

ns3::TypeId
HostMarker::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("pandasim::HostMarker").SetParent<ns3::Object>().SetGroupName("PandaSim");
    return tid;
}

void
HostMarker::SetPolicy(const MarkPolicy* policy, uint32_t capacity)
{
    m_policy = policy;
    /* No idle expiry: the simulated connections end with FIN/RST. */
    m_table = std::make_unique<ConnTable>(capacity, 0);
}

void
HostMarker::PinPort(uint16_t port, unsigned level)
{
    m_pin = true;
    m_pinPort = port;
    m_pinVerdict.level = (uint8_t)level;
    m_pinVerdict.dscp = m_policy->Dscp(level);
}

void
HostMarker::SetOracle(MessageBook* book)
{
    m_book = book;
}

void
HostMarker::SetCollector(SizeCollector* c)
{
    m_collector = c;
}

void
HostMarker::TraceLevels()
{
    m_traceLevels = true;
}

void
HostMarker::WriteLevels(std::ostream& out, uint32_t host, bool header) const
{
    if (header)
    {
        out << "host,src,sport,dst,dport,first_ns,last_ns";
        for (int i = 0; i < 8; i++)
        {
            out << ",packets_l" << i;
        }
        for (int i = 0; i < 8; i++)
        {
            out << ",bytes_l" << i;
        }
        out << "\n";
    }
    for (const auto& [k, c] : m_levels)
    {
        char addr[2][16];
        for (int i = 0; i < 2; i++)
        {
            uint32_t a = i ? k.peer : k.local;
            std::snprintf(addr[i], sizeof addr[i], "%u.%u.%u.%u", a >> 24, (a >> 16) & 255,
                          (a >> 8) & 255, a & 255);
        }
        out << host << "," << addr[0] << "," << k.lport << "," << addr[1] << "," << k.pport << ","
            << c.firstNs << "," << c.lastNs;
        for (uint64_t n : c.packets)
        {
            out << "," << n;
        }
        for (uint64_t n : c.bytes)
        {
            out << "," << n;
        }
        out << "\n";
    }
}

void
HostMarker::Install(ns3::Ptr<ns3::Node> node)
{
    ns3::Ptr<ns3::TcpL4Protocol> tcp = node->GetObject<ns3::TcpL4Protocol>();
    NS_ABORT_MSG_UNLESS(tcp, "HostMarker: node has no TCP");
    m_down = tcp->GetDownTarget();
    tcp->SetDownTarget(ns3::MakeCallback(&HostMarker::Send, this));
    node->AggregateObject(this);
}

void
HostMarker::Send(ns3::Ptr<ns3::Packet> p,
                 ns3::Ipv4Address src,
                 ns3::Ipv4Address dst,
                 uint8_t proto,
                 ns3::Ptr<ns3::Ipv4Route> route)
{
    ns3::TcpHeader th;
    p->PeekHeader(th);
    uint32_t payload = p->GetSize() - th.GetSerializedSize();
    if (m_collector && payload > 0)
    {
        m_collector->Add(src.Get(), th.GetSourcePort(), dst.Get(), th.GetDestinationPort(),
                         payload + th.GetSerializedSize() + 20, th.GetSerializedSize(),
                         th.GetAckNumber().GetValue(), ns3::Simulator::Now().GetNanoSeconds());
    }

    if (m_table)
    {
        TcpSegmentFacts seg;
        seg.src = src.Get();
        seg.dst = dst.Get();
        seg.sport = th.GetSourcePort();
        seg.dport = th.GetDestinationPort();
        seg.flags = th.GetFlags();
        seg.payload = payload;
        uint32_t nowMs = (uint32_t)ns3::Simulator::Now().GetMilliSeconds();
        MarkVerdict v = m_table->Classify(*m_policy, seg, nowMs);
        if (m_pin && (seg.sport == m_pinPort || seg.dport == m_pinPort))
        {
            v = m_pinVerdict;
        }
        if (m_traceLevels)
        {
            ConnKey k{seg.src, seg.dst, seg.sport, seg.dport};
            LevelCounts& c = m_levels[k];
            int64_t now = ns3::Simulator::Now().GetNanoSeconds();
            uint8_t lv = v.level < 8 ? v.level : 7;
            c.packets[lv]++;
            c.bytes[lv] += payload;
            c.firstNs = c.firstNs < 0 ? now : c.firstNs;
            c.lastNs = now;
        }

        ns3::SocketIpTosTag tos;
        uint8_t old = p->RemovePacketTag(tos) ? tos.GetTos() : 0;
        tos.SetTos(TosWithDscp(old, v.dscp));
        p->AddPacketTag(tos);
    }
    else if (m_book)
    {
        ConnKey k{src.Get(), dst.Get(), th.GetSourcePort(), th.GetDestinationPort()};
        OracleRankTag tag;
        tag.rank = m_book->Rank(k, th.GetSequenceNumber().GetValue(), payload);
        p->AddPacketTag(tag);
    }
    m_down(p, src, dst, proto, route);
}

} // namespace pandasim

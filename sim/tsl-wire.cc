#include "tsl-wire.h"

#include "panda-lib.h"

#include "ns3/ipv4-l3-protocol.h"
#include "ns3/socket.h"
#include "ns3/tcp-l4-protocol.h"

namespace pandasim
{

using namespace ns3;

TypeId
TslLabelTag::GetTypeId()
{
    static TypeId tid = TypeId("pandasim::TslLabelTag")
                            .SetParent<Tag>()
                            .SetGroupName("PandaSim")
                            .AddConstructor<TslLabelTag>();
    return tid;
}

TypeId
TslLabelTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
TslLabelTag::GetSerializedSize() const
{
    return 1;
}

void
TslLabelTag::Serialize(TagBuffer i) const
{
    i.WriteU8(m_flags);
}

void
TslLabelTag::Deserialize(TagBuffer i)
{
    m_flags = i.ReadU8();
}

void
TslLabelTag::Print(std::ostream& os) const
{
    os << "tsl-flags=" << (unsigned)m_flags;
}

TypeId
TslWire::GetTypeId()
{
    static TypeId tid =
        TypeId("pandasim::TslWire").SetParent<Object>().SetGroupName("PandaSim");
    return tid;
}

void
TslWire::Install(Ptr<Node> node)
{
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    Ptr<Ipv4L3Protocol> ip = node->GetObject<Ipv4L3Protocol>();
    NS_ABORT_MSG_UNLESS(tcp && ip, "TslWire: node has no TCP/IPv4");
    m_down = tcp->GetDownTarget();
    tcp->SetDownTarget(MakeCallback(&TslWire::Send, this));
    ip->TraceConnectWithoutContext("LocalDeliver", MakeCallback(&TslWire::Deliver, this));
    node->AggregateObject(this);
}

void
TslWire::Send(Ptr<Packet> p, Ipv4Address src, Ipv4Address dst, uint8_t proto, Ptr<Ipv4Route> route)
{
    TslLabelTag label;
    if (p->RemovePacketTag(label) && label.Flags())
    {
        SocketIpTosTag tos;
        uint8_t old = p->RemovePacketTag(tos) ? tos.GetTos() : 0;
        if ((old & 3) == 0)
        {
            old |= 2; /* ECT(0): WRED marks rather than drops it (tsl-wire.h). */
        }
        tos.SetTos(TosWithDscp(old, TslDscp(label.Flags())));
        p->AddPacketTag(tos);
        m_sent++;
    }
    m_down(p, src, dst, proto, route);
}

void
TslWire::Deliver(const Ipv4Header& ip, Ptr<const Packet> p, uint32_t)
{
    /* The packet handed here is the one IPv4 passes up next, so a tag added
     * now (AddPacketTag is const) reaches the receiving socket. */
    uint8_t flags = TslFlagsOfDscp(ip.GetDscp());
    if (flags && ip.GetProtocol() == TcpL4Protocol::PROT_NUMBER)
    {
        p->AddPacketTag(TslLabelTag(flags));
        m_received++;
    }
}

} // namespace pandasim

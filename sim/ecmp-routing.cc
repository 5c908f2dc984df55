#include "ecmp-routing.h"

#include "ns3/ipv4-route.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/output-stream-wrapper.h"
#include "ns3/packet.h"

#include <algorithm>
#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EcmpRouting");
NS_OBJECT_ENSURE_REGISTERED(EcmpRouting);

TypeId
EcmpRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::EcmpRouting")
                            .SetParent<Ipv4RoutingProtocol>()
                            .SetGroupName("PandaSim")
                            .AddConstructor<EcmpRouting>();
    return tid;
}

EcmpRouting::EcmpRouting() = default;
EcmpRouting::~EcmpRouting() = default;

void
EcmpRouting::SetSeed(uint32_t seed)
{
    m_seed = seed;
}

void
EcmpRouting::AddRoute(Ipv4Address network,
                      Ipv4Mask mask,
                      const std::vector<std::pair<uint32_t, Ipv4Address>>& nextHops)
{
    NS_ABORT_MSG_IF(nextHops.empty(), "EcmpRouting: route without next hop");
    Route r;
    r.network = network.Get() & mask.Get();
    r.mask = mask.Get();
    r.prefixLen = mask.GetPrefixLength();
    for (const auto& [iface, gw] : nextHops)
    {
        Ptr<Ipv4Route> rt = Create<Ipv4Route>();
        rt->SetDestination(Ipv4Address(r.network));
        rt->SetGateway(gw);
        rt->SetOutputDevice(m_ipv4->GetNetDevice(iface));
        rt->SetSource(m_ipv4->GetAddress(iface, 0).GetLocal());
        r.hops.push_back(rt);
    }
    m_routes.push_back(std::move(r));
    std::stable_sort(m_routes.begin(), m_routes.end(), [](const Route& a, const Route& b) {
        return a.prefixLen > b.prefixLen;
    });
}

uint32_t
EcmpRouting::FlowHash(uint32_t src, uint32_t dst, uint8_t proto, uint32_t ports, uint32_t seed)
{
    /* Two rounds of a 64-bit mixer (splitmix64's finalizer) over the
     * tuple: cheap, and every input bit affects every output bit. */
    uint64_t x = ((uint64_t)src << 32 | dst) ^ seed;
    x ^= (uint64_t)ports << 8 ^ proto;
    for (int i = 0; i < 2; i++)
    {
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        x ^= x >> 31;
        x += ((uint64_t)ports << 32 | proto);
    }
    return (uint32_t)(x ^ (x >> 32));
}

const EcmpRouting::Route*
EcmpRouting::Lookup(uint32_t dst) const
{
    for (const Route& r : m_routes)
    {
        if ((dst & r.mask) == r.network)
        {
            return &r;
        }
    }
    return nullptr;
}

Ptr<Ipv4Route>
EcmpRouting::Pick(const Route& r, const Ipv4Header& h, Ptr<const Packet> p) const
{
    if (r.hops.size() == 1)
    {
        return r.hops[0];
    }
    uint32_t ports = 0;
    uint8_t buf[4];
    if (p && (h.GetProtocol() == 6 || h.GetProtocol() == 17) && p->CopyData(buf, 4) == 4)
    {
        ports = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
    }
    uint32_t hash = FlowHash(h.GetSource().Get(), h.GetDestination().Get(), h.GetProtocol(), ports, m_seed);
    return r.hops[hash % r.hops.size()];
}

Ptr<Ipv4Route>
EcmpRouting::RouteOutput(Ptr<Packet> p,
                         const Ipv4Header& header,
                         Ptr<NetDevice> oif,
                         Socket::SocketErrno& sockerr)
{
    const Route* r = Lookup(header.GetDestination().Get());
    if (!r)
    {
        sockerr = Socket::ERROR_NOROUTETOHOST;
        return nullptr;
    }
    sockerr = Socket::ERROR_NOTERROR;
    return Pick(*r, header, p);
}

bool
EcmpRouting::RouteInput(Ptr<const Packet> p,
                        const Ipv4Header& header,
                        Ptr<const NetDevice> idev,
                        UnicastForwardCallback ucb,
                        MulticastForwardCallback mcb,
                        LocalDeliverCallback lcb,
                        ErrorCallback ecb)
{
    if (m_local.count(header.GetDestination().Get()))
    {
        lcb(p, header, m_ipv4->GetInterfaceForDevice(idev));
        return true;
    }
    const Route* r = Lookup(header.GetDestination().Get());
    if (!r)
    {
        return false;
    }
    ucb(Pick(*r, header, p), p, header);
    return true;
}

void
EcmpRouting::NotifyInterfaceUp(uint32_t)
{
}

void
EcmpRouting::NotifyInterfaceDown(uint32_t)
{
}

void
EcmpRouting::NotifyAddAddress(uint32_t, Ipv4InterfaceAddress address)
{
    m_local.insert(address.GetLocal().Get());
}

void
EcmpRouting::NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress address)
{
    m_local.erase(address.GetLocal().Get());
}

void
EcmpRouting::SetIpv4(Ptr<Ipv4> ipv4)
{
    m_ipv4 = ipv4;
    /* Addresses configured before the protocol was attached (the loopback). */
    for (uint32_t i = 0; i < ipv4->GetNInterfaces(); i++)
    {
        for (uint32_t j = 0; j < ipv4->GetNAddresses(i); j++)
        {
            m_local.insert(ipv4->GetAddress(i, j).GetLocal().Get());
        }
    }
}

void
EcmpRouting::PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const
{
    std::ostream& os = *stream->GetStream();
    os << "Node " << m_ipv4->GetObject<Node>()->GetId() << " EcmpRouting seed " << m_seed << "\n";
    for (const Route& r : m_routes)
    {
        os << "  " << Ipv4Address(r.network) << "/" << r.prefixLen << " ->";
        for (const auto& h : r.hops)
        {
            os << " " << h->GetGateway() << "(if " << m_ipv4->GetInterfaceForDevice(h->GetOutputDevice())
               << ")";
        }
        os << "\n";
    }
}

EcmpRoutingHelper*
EcmpRoutingHelper::Copy() const
{
    return new EcmpRoutingHelper(*this);
}

Ptr<Ipv4RoutingProtocol>
EcmpRoutingHelper::Create(Ptr<Node>) const
{
    return CreateObject<EcmpRouting>();
}

} // namespace ns3

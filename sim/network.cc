#include "network.h"

#include "ecmp-routing.h"

#include "ns3/data-rate.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/queue-size.h"
#include "ns3/string.h"

#include <tuple>

namespace pandasim
{

using namespace ns3;

const char*
PortRoleName(PortRole r)
{
    switch (r)
    {
    case PortRole::HostUp:
        return "host-up";
    case PortRole::LeafDown:
        return "leaf-down";
    case PortRole::LeafUp:
        return "leaf-up";
    case PortRole::SpineDown:
        return "spine-down";
    }
    return "?";
}

namespace
{
/* Wire bytes of a full segment: payload + TCP (20 + 12 timestamp option)
 * + IPv4 (20) + PPP (2). */
constexpr uint32_t kHeaderBytes = 54;

uint32_t
AddInterface(Ptr<NetDevice> dev, Ipv4Address addr)
{
    Ptr<Ipv4> ipv4 = dev->GetNode()->GetObject<Ipv4>();
    uint32_t i = ipv4->AddInterface(dev);
    ipv4->AddAddress(i, Ipv4InterfaceAddress(addr, Ipv4Mask("255.255.255.0")));
    ipv4->SetUp(i);
    return i;
}

Ptr<EcmpRouting>
Routing(Ptr<Node> n)
{
    return DynamicCast<EcmpRouting>(n->GetObject<Ipv4>()->GetRoutingProtocol());
}

Ipv4Address
Addr(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    return Ipv4Address(a << 24 | b << 16 | c << 8 | d);
}
} // namespace

Network
BuildNetwork(const RunConfig& cfg, const PortQueues& install)
{
    Network net;
    net.edgeBps = cfg.edgeBps;
    net.coreBps = cfg.coreBps;
    net.linkDelayNs = cfg.linkDelayNs;
    uint32_t L = cfg.leaves, H = cfg.hostsPerLeaf, S = cfg.spines;

    net.hosts.Create(L * H);
    net.leaves.Create(L);
    net.spines.Create(S);

    InternetStackHelper stack;
    stack.SetRoutingHelper(EcmpRoutingHelper());
    stack.SetIpv6StackInstall(false);
    stack.Install(net.hosts);
    stack.Install(net.leaves);
    stack.Install(net.spines);

    PointToPointHelper edge, coreLink;
    for (PointToPointHelper* p : {&edge, &coreLink})
    {
        p->SetChannelAttribute("Delay", TimeValue(NanoSeconds(cfg.linkDelayNs)));
        /* One packet in the device: the queue disc holds the backlog and
         * decides the order (flow control stops it when the device is busy). */
        p->SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
    }
    edge.SetDeviceAttribute("DataRate", DataRateValue(DataRate(cfg.edgeBps)));
    coreLink.SetDeviceAttribute("DataRate", DataRateValue(DataRate(cfg.coreBps)));

    /* Links, queue discs (before any traffic), addresses. */
    std::vector<std::vector<uint32_t>> leafHostIf(L, std::vector<uint32_t>(H));
    std::vector<std::vector<uint32_t>> leafSpineIf(L, std::vector<uint32_t>(S));
    std::vector<std::vector<uint32_t>> spineLeafIf(S, std::vector<uint32_t>(L));
    /* A link: both ends get their queue disc and an address. */
    auto link = [&](PointToPointHelper& helper, Ptr<Node> a, Ptr<Node> b, PortRole ra,
                    PortRole rb, uint64_t bps, Ipv4Address addrA, Ipv4Address addrB) {
        NetDeviceContainer d = helper.Install(a, b);
        for (Port p : {Port{d.Get(0), ra, bps}, Port{d.Get(1), rb, bps}})
        {
            install(p);
            net.ports.push_back(p);
        }
        return std::make_pair(AddInterface(d.Get(0), addrA), AddInterface(d.Get(1), addrB));
    };
    for (uint32_t l = 0; l < L; l++)
    {
        for (uint32_t h = 0; h < H; h++)
        {
            Ipv4Address ha = Addr(10, l, h, 1);
            leafHostIf[l][h] = link(edge, net.hosts.Get(l * H + h), net.leaves.Get(l),
                                    PortRole::HostUp, PortRole::LeafDown, cfg.edgeBps, ha,
                                    Addr(10, l, h, 2))
                                   .second;
            net.hostAddr.push_back(ha);
            net.hostLeaf.push_back(l);
        }
        for (uint32_t s = 0; s < S; s++)
        {
            std::tie(leafSpineIf[l][s], spineLeafIf[s][l]) =
                link(coreLink, net.leaves.Get(l), net.spines.Get(s), PortRole::LeafUp,
                     PortRole::SpineDown, cfg.coreBps, Addr(11, l, s, 1), Addr(11, l, s, 2));
        }
    }

    /* Routes.  Seeds differ per switch so that the spine choice of a flow
     * at its source leaf is independent of other hash uses. */
    for (uint32_t l = 0; l < L; l++)
    {
        for (uint32_t h = 0; h < H; h++)
        {
            Routing(net.hosts.Get(l * H + h))
                ->AddRoute(Ipv4Address("0.0.0.0"), Ipv4Mask("0.0.0.0"), {{1, Addr(10, l, h, 2)}});
        }
        Ptr<EcmpRouting> leaf = Routing(net.leaves.Get(l));
        leaf->SetSeed(0x9e3779b9u * (l + 1));
        for (uint32_t h = 0; h < H; h++)
        {
            leaf->AddRoute(Addr(10, l, h, 0), Ipv4Mask("255.255.255.0"),
                           {{leafHostIf[l][h], Addr(10, l, h, 1)}});
        }
        if (S > 0)
        {
            std::vector<std::pair<uint32_t, Ipv4Address>> ups;
            for (uint32_t s = 0; s < S; s++)
            {
                ups.emplace_back(leafSpineIf[l][s], Addr(11, l, s, 2));
            }
            leaf->AddRoute(Ipv4Address("0.0.0.0"), Ipv4Mask("0.0.0.0"), ups);
        }
    }
    for (uint32_t s = 0; s < S; s++)
    {
        Ptr<EcmpRouting> spine = Routing(net.spines.Get(s));
        spine->SetSeed(0x85ebca6bu * (s + 1));
        for (uint32_t l = 0; l < L; l++)
        {
            spine->AddRoute(Addr(10, l, 0, 0), Ipv4Mask("255.255.0.0"),
                            {{spineLeafIf[s][l], Addr(11, l, s, 1)}});
        }
    }
    return net;
}

unsigned
Network::Hops(uint32_t a, uint32_t b) const
{
    return hostLeaf[a] == hostLeaf[b] ? 2 : 4;
}

int64_t
Network::IdealFctNs(uint32_t a, uint32_t b, uint64_t bytes, uint32_t mss) const
{
    unsigned hops = Hops(a, b);
    double edgeNsPerByte = 8e9 / edgeBps, coreNsPerByte = 8e9 / coreBps;
    uint64_t segs = bytes == 0 ? 1 : (bytes + mss - 1) / mss;
    double wire = bytes + segs * kHeaderBytes;
    double full = std::min<double>(wire, mss + kHeaderBytes);
    /* Per-link serialisation of the first segment: 2 edge links, plus 2
     * core links across racks. */
    double perLinkNsPerByte = 2 * edgeNsPerByte + (hops == 4 ? 2 * coreNsPerByte : 0);
    double handshake = 2.0 * hops * linkDelayNs;
    double first = hops * (double)linkDelayNs + full * perLinkNsPerByte;
    double rest = (wire - full) * edgeNsPerByte;
    return (int64_t)(handshake + first + rest);
}

int64_t
Network::BaseRttNs() const
{
    uint32_t b = hosts.GetN() - 1;
    int64_t oneFull = IdealFctNs(0, b, 1448, 1448) - (int64_t)(2.0 * Hops(0, b) * linkDelayNs);
    return oneFull + (int64_t)(Hops(0, b) * linkDelayNs);
}

} // namespace pandasim

/*
 * Static IPv4 routing with equal-cost multipath by flow hash.
 *
 * ns-3's global router spreads equal-cost routes per packet
 * (RandomEcmpRouting), which reorders every TCP flow across spines; data
 * centers hash the 5-tuple so that a flow keeps one path.  This protocol
 * holds a few prefixes, each with one or more next hops, and picks a next
 * hop by a hash of (source, destination, protocol, ports) mixed with a
 * per-switch seed (so that consecutive tiers do not make the same choice).
 * The topology builder fills the tables; the leaf-spine needs at most
 * hosts-per-leaf + 1 routes on a leaf and one per leaf on a spine.
 */
#ifndef PANDA_SIM_ECMP_ROUTING_H
#define PANDA_SIM_ECMP_ROUTING_H

#include "ns3/ipv4-routing-helper.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"

#include <unordered_set>
#include <vector>

namespace ns3
{

class EcmpRouting : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId();
    EcmpRouting();
    ~EcmpRouting() override;

    /* Adds a route to 'network'/'mask' over (interface, gateway) pairs.
     * Longer masks win; routes are kept sorted by mask length. */
    void AddRoute(Ipv4Address network,
                  Ipv4Mask mask,
                  const std::vector<std::pair<uint32_t, Ipv4Address>>& nextHops);
    void SetSeed(uint32_t seed);

    /* The 5-tuple hash used for path choice (exposed for tests). */
    static uint32_t FlowHash(uint32_t src, uint32_t dst, uint8_t proto, uint32_t ports, uint32_t seed);

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p,
                               const Ipv4Header& header,
                               Ptr<NetDevice> oif,
                               Socket::SocketErrno& sockerr) override;
    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    UnicastForwardCallback ucb,
                    MulticastForwardCallback mcb,
                    LocalDeliverCallback lcb,
                    ErrorCallback ecb) override;
    void NotifyInterfaceUp(uint32_t interface) override;
    void NotifyInterfaceDown(uint32_t interface) override;
    void NotifyAddAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void NotifyRemoveAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void SetIpv4(Ptr<Ipv4> ipv4) override;
    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit unit) const override;

  private:
    struct Route
    {
        uint32_t network, mask;
        unsigned prefixLen;
        std::vector<Ptr<Ipv4Route>> hops; /* Built once, handed out shared. */
    };
    const Route* Lookup(uint32_t dst) const;
    Ptr<Ipv4Route> Pick(const Route& r, const Ipv4Header& h, Ptr<const Packet> p) const;

    Ptr<Ipv4> m_ipv4;
    std::vector<Route> m_routes;
    uint32_t m_seed = 0;
    /* This node's unicast addresses: Ipv4::IsDestinationAddress walks
     * every interface and address per packet (a leaf has 20 interfaces),
     * a set answers for a packet in transit in one probe. */
    std::unordered_set<uint32_t> m_local;
};

class EcmpRoutingHelper : public Ipv4RoutingHelper
{
  public:
    EcmpRoutingHelper* Copy() const override;
    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node> node) const override;
};

} // namespace ns3

#endif

/*
 * Topologies: the thesis's dumbbell (two hosts through one switch: host 0
 * is the thesis's PM2, which sends the web-search data and the memcached
 * responses; host 1 is PM1) and a leaf-spine (L leaves x H hosts, S
 * spines, every leaf connected to every spine).  The dumbbell is the
 * leaf-spine with one leaf, two hosts and no spine, so one builder serves
 * both.
 *
 * Nodes are IPv4 routers with EcmpRouting (flow-hash ECMP); every egress
 * port (both ends of every link) gets the scheme's queue disc through the
 * PortQueues callback before traffic starts, and a one-packet device queue
 * under it, so the queue disc - not the device - holds the backlog.
 *
 * Addresses: host h of leaf l is 10.l.h.1 (its leaf port 10.l.h.2); the
 * link between leaf l and spine s is 11.l.s.0/24 (leaf .1, spine .2).
 */
#ifndef PANDA_SIM_NETWORK_H
#define PANDA_SIM_NETWORK_H

#include "config.h"

#include "ns3/ipv4-address.h"
#include "ns3/net-device.h"
#include "ns3/node-container.h"

#include <functional>
#include <string>
#include <vector>

namespace pandasim
{

enum class PortRole : uint8_t
{
    HostUp,   /* Host NIC towards its leaf. */
    LeafDown, /* Leaf towards a host. */
    LeafUp,   /* Leaf towards a spine. */
    SpineDown /* Spine towards a leaf. */
};
const char* PortRoleName(PortRole r);

struct Port
{
    ns3::Ptr<ns3::NetDevice> dev;
    PortRole role;
    uint64_t rateBps;
};

struct Network
{
    ns3::NodeContainer hosts, leaves, spines;
    std::vector<ns3::Ipv4Address> hostAddr;
    std::vector<uint32_t> hostLeaf;
    std::vector<Port> ports;
    uint64_t edgeBps, coreBps, linkDelayNs;

    /* Links between two hosts' NICs: 2 in one rack, 4 across racks. */
    unsigned Hops(uint32_t a, uint32_t b) const;
    /* FCT of 'bytes' from host a to b alone in the network: the handshake,
     * then store-and-forward of the first full segment over every link,
     * then the rest at the edge rate (no slow start): the denominator of
     * the slowdown. */
    int64_t IdealFctNs(uint32_t a, uint32_t b, uint64_t bytes, uint32_t mss) const;
    /* Base round-trip time between hosts in different racks (or the two
     * dumbbell hosts), for a full segment one way and an ACK back. */
    int64_t BaseRttNs() const;
};

/* Installs a root queue disc on 'port' (called once per egress port). */
using PortQueues = std::function<void(const Port& port)>;

Network BuildNetwork(const RunConfig& cfg, const PortQueues& install);

} // namespace pandasim

#endif

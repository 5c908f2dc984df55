/*
 * Host-side marking of every outgoing TCP segment, between TCP and IP (where
 * the Panda datapath action sits on a hypervisor: after the stack, before
 * the NIC queue).
 *
 * Installed by taking over the TcpL4Protocol's "down target" (the callback
 * TCP uses to hand a segment, TCP header included, to IPv4): the marker
 * sees the 5-tuple, the flags and the payload size, classifies the segment
 * through lib/panda (one connection table per host, as one per
 * hypervisor), and writes the level's DSCP into the TOS that IPv4 will put
 * in the header.  ns-3 carries a socket's TOS to IPv4 in a SocketIpTosTag
 * whose ECN bits TCP has already set (ECT on data, or on everything for
 * DCTCP); the marker replaces only the DSCP bits, as the datapath's
 * panda_pkt_tos_set_dscp() does.  (Socket::SetIpTos is no option: on a TCP
 * socket in ns-3.37 it makes TCP stop setting ECT.)
 *
 * In oracle mode it stamps the segment's remaining message size instead
 * (oracle.h) and leaves the DSCP alone.  With a collector it also records
 * the segment sizes for the model (collector.h).
 */
#ifndef PANDA_SIM_HOST_MARKER_H
#define PANDA_SIM_HOST_MARKER_H

#include "collector.h"
#include "oracle.h"
#include "panda-lib.h"

#include "ns3/ip-l4-protocol.h"
#include "ns3/ipv4-address.h"
#include "ns3/ipv4-route.h"
#include "ns3/node.h"
#include "ns3/object.h"
#include "ns3/packet.h"

#include <array>
#include <memory>
#include <ostream>
#include <unordered_map>

namespace pandasim
{

class HostMarker : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();

    /* Panda/PIAS marking under 'policy' with a table of 'capacity'
     * connections.  Throws std::runtime_error on a bad table size. */
    void SetPolicy(const MarkPolicy* policy, uint32_t capacity);
    /* Puts every segment to or from TCP port 'port' (both directions of
     * the RPC connections) at 'level' of the policy, whatever their
     * counter says (--rpc-level: moves the memcached connection and
     * nothing else).  The table still classifies them, so their counters
     * (run.json) stay the policy's; the table's per-level packet totals
     * count the policy's level, levels.csv the one they were sent at.
     * 'level' must be below the policy's levels. */
    void PinPort(uint16_t port, unsigned level);
    /* Oracle ranks from 'book'. */
    void SetOracle(MessageBook* book);
    /* Records the sizes of outgoing segments into 'c' (either mode). */
    void SetCollector(SizeCollector* c);

    /* Keeps, per connection (directional 4-tuple), the packets and payload
     * bytes it marked at each level, for WriteLevels() (--level-trace):
     * which connections a level carried, where the per-level totals of
     * run.json cannot tell. */
    void TraceLevels();
    /* One CSV row per connection traced, after a header if 'header'. */
    void WriteLevels(std::ostream& out, uint32_t host, bool header) const;

    /* Interposes the marker between 'node's TCP and IPv4. */
    void Install(ns3::Ptr<ns3::Node> node);

    const ConnTable* Table() const
    {
        return m_table.get();
    }

  private:
    void Send(ns3::Ptr<ns3::Packet> p,
              ns3::Ipv4Address src,
              ns3::Ipv4Address dst,
              uint8_t proto,
              ns3::Ptr<ns3::Ipv4Route> route);

    const MarkPolicy* m_policy = nullptr;
    bool m_pin = false;
    uint16_t m_pinPort = 0;
    MarkVerdict m_pinVerdict{};
    std::unique_ptr<ConnTable> m_table;
    MessageBook* m_book = nullptr;
    SizeCollector* m_collector = nullptr;

    struct LevelCounts
    {
        std::array<uint64_t, 8> packets{};
        std::array<uint64_t, 8> bytes{};
        int64_t firstNs = -1;
        int64_t lastNs = -1;
    };
    bool m_traceLevels = false;
    std::unordered_map<ConnKey, LevelCounts, ConnKeyHash> m_levels;
    ns3::IpL4Protocol::DownTargetCallback m_down;
};

} // namespace pandasim

#endif

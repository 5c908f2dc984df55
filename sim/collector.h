/*
 * The thesis's collection stage (Fig. 3.1) in the simulator: the sizes of
 * the segments the hosts send, split into the latency-sensitive traffic
 * (FLT: RPC responses, source port 11211) and the throughput traffic (FHT:
 * flows, destination port 5001), per connection, written as panda-model
 * histograms ("size count flow", size = IP packet bytes = payload + TCP
 * and IP headers), as the testbed captures them with tcpdump on the sender.
 * panda-model turns them into the policy that the other schemes run with.
 *
 * The FLT's segments are also written in the order they were sent, as a
 * capture of their IPv4 and TCP headers (flt.pcap, raw IP, the payload
 * not captured; the IP total length is the segment's): a histogram has no
 * order, and panda-model replays Algorithm 2 over the FLT's packets in
 * order to size the room its counter's excursions need (--flt-level0),
 * as it does over the testbed's tcpdump capture.
 */
#ifndef PANDA_SIM_COLLECTOR_H
#define PANDA_SIM_COLLECTOR_H

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace pandasim
{

class SizeCollector
{
  public:
    SizeCollector(uint16_t fltSourcePort, uint16_t fhtDestPort);

    /* One outgoing segment of 'ipBytes' (payload > 0), of which
     * 'tcpHeaderBytes' TCP header, acknowledging 'ack', sent at 'nowNs'. */
    void Add(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport, uint32_t ipBytes,
             uint32_t tcpHeaderBytes, uint32_t ack, int64_t nowNs);

    /* Writes flt.hist, fht.hist and flt.pcap into 'dir'; throws
     * std::runtime_error. */
    void Write(const std::string& dir) const;

    uint64_t Packets(bool flt) const
    {
        return flt ? m_fltPackets : m_fhtPackets;
    }

  private:
    using Histogram = std::map<uint32_t, uint64_t>; /* Size -> count. */
    struct Key
    {
        uint64_t a, b;
        bool operator==(const Key& o) const
        {
            return a == o.a && b == o.b;
        }
    };
    struct KeyHash
    {
        size_t operator()(const Key& k) const
        {
            return (size_t)(k.a * 0x9e3779b97f4a7c15ULL ^ k.b);
        }
    };
    /* An FLT segment, in sending order (flt.pcap). */
    struct Segment
    {
        uint32_t src, dst;
        uint16_t sport, dport;
        uint32_t ipBytes, tcpHeaderBytes, ack;
        int64_t nowNs;
    };
    static void WriteOne(const std::string& path,
                         const std::unordered_map<Key, Histogram, KeyHash>& flows);
    void WritePcap(const std::string& path) const;

    uint16_t m_fltPort, m_fhtPort;
    std::unordered_map<Key, Histogram, KeyHash> m_flt, m_fht;
    std::vector<Segment> m_fltOrder;
    uint64_t m_fltPackets = 0, m_fhtPackets = 0;
};

} // namespace pandasim

#endif

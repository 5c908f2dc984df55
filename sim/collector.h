/*
 * The thesis's collection stage (Fig. 3.1) in the simulator: the sizes of
 * the segments the hosts send, split into the latency-sensitive traffic
 * (FLT: RPC responses, source port 11211) and the throughput traffic (FHT:
 * flows, destination port 5001), per connection, written as panda-model
 * histograms ("size count flow", size = IP packet bytes = payload + TCP
 * and IP headers), as the testbed captures them with tcpdump on the sender.
 * panda-model turns them into the policy that the other schemes run with.
 */
#ifndef PANDA_SIM_COLLECTOR_H
#define PANDA_SIM_COLLECTOR_H

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

namespace pandasim
{

class SizeCollector
{
  public:
    SizeCollector(uint16_t fltSourcePort, uint16_t fhtDestPort);

    /* One outgoing segment of 'ipBytes' (payload > 0). */
    void Add(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport, uint32_t ipBytes);

    /* Writes flt.hist and fht.hist into 'dir'; throws std::runtime_error. */
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
    static void WriteOne(const std::string& path,
                         const std::unordered_map<Key, Histogram, KeyHash>& flows);

    uint16_t m_fltPort, m_fhtPort;
    std::unordered_map<Key, Histogram, KeyHash> m_flt, m_fht;
    uint64_t m_fltPackets = 0, m_fhtPackets = 0;
};

} // namespace pandasim

#endif

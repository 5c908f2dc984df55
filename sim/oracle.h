/*
 * The clairvoyant oracle (pFabric-like lower bound): every data segment
 * carries the bytes that remain of its message *including itself* when it
 * is sent, known in advance because the simulator knows every message's
 * size; switches and hosts serve the packet of the flow with the smallest
 * remaining size first and drop the largest first.  It is not part of
 * lib/panda: no real host knows flow sizes, this is only the bound.
 *
 * MessageBook: the sender side's message boundaries per connection (web
 *   flows are one message; RPC connections append one per request or
 *   response), so that a segment's sequence number gives its rank.
 * OracleRankTag: the rank, carried as a packet tag (the oracle's "header
 *   field"; pFabric carries it in the packet).
 * OracleQueueDisc: the pFabric queue.
 */
#ifndef PANDA_SIM_ORACLE_H
#define PANDA_SIM_ORACLE_H

#include "handle-queue.h"

#include "ns3/queue-disc.h"
#include "ns3/tag.h"

#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace pandasim
{

/* A connection seen from its sender: local address/port, peer address/port
 * (IPv4, host byte order). */
struct ConnKey
{
    uint32_t local, peer;
    uint16_t lport, pport;

    bool operator==(const ConnKey& o) const
    {
        return local == o.local && peer == o.peer && lport == o.lport && pport == o.pport;
    }
};

struct ConnKeyHash
{
    size_t operator()(const ConnKey& k) const
    {
        uint64_t x = ((uint64_t)k.local << 32 | k.peer) ^ ((uint64_t)k.lport << 16 | k.pport) * 0x9e3779b97f4a7c15ULL;
        x ^= x >> 29;
        x *= 0xbf58476d1ce4e5b9ULL;
        return (size_t)(x ^ (x >> 32));
    }
};

class MessageBook
{
  public:
    /* The application wrote a message of 'bytes' on connection 'k'. */
    void Append(const ConnKey& k, uint64_t bytes);
    /* Forget 'k' (its sender is done). */
    void Forget(const ConnKey& k);
    /* Remaining bytes of the message that the segment with TCP sequence
     * number 'seq' and 'payload' bytes belongs to, counted from the
     * segment's first byte; 0 for segments without payload and for
     * unknown connections. */
    uint64_t Rank(const ConnKey& k, uint32_t seq, uint32_t payload);

  private:
    struct Stream
    {
        std::vector<uint64_t> ends; /* Cumulative message ends (offsets). */
        size_t cursor = 0;          /* First message not yet fully sent. */
        uint64_t high = 0;          /* Highest offset seen (unwrapping). */
    };
    std::unordered_map<ConnKey, Stream, ConnKeyHash> m_streams;
};

class OracleRankTag : public ns3::Tag
{
  public:
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(ns3::TagBuffer i) const override;
    void Deserialize(ns3::TagBuffer i) override;
    void Print(std::ostream& os) const override;

    uint64_t rank = 0;
};

} // namespace pandasim

namespace ns3
{

/*
 * pFabric's switch queue over TCP: dequeue the earliest packet of the flow
 * that holds the packet with the smallest rank (serving a flow in order
 * avoids reordering); when the buffer is full, drop the packet with the
 * largest rank (possibly the arriving one).  Flows are told apart by the
 * 5-tuple hash.  O(log n) per packet.
 */
class OracleQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    OracleQueueDisc();
    ~OracleQueueDisc() override;

    static constexpr const char* LIMIT_DROP = "Buffer full: largest rank dropped";

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override;
    void InitializeParams() override;

    struct Pkt
    {
        uint64_t rank;
        uint64_t seq;   /* Arrival order. */
        uint32_t flow;  /* 5-tuple hash. */
        HandleQueue::Handle held;
    };
    struct ByRank
    {
        bool operator()(const Pkt& a, const Pkt& b) const
        {
            return a.rank != b.rank ? a.rank < b.rank : a.seq < b.seq;
        }
    };
    /* All held packets by (rank, arrival), and per flow by arrival. */
    std::set<Pkt, ByRank> m_byRank;
    std::unordered_map<uint32_t, std::map<uint64_t, Pkt>> m_flows;
    uint64_t m_seq = 0;
    uint32_t m_limitBytes = 0;
    Ptr<HandleQueue> m_account;
};

} // namespace ns3

#endif

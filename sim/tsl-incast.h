/*
 * The partition/aggregate traffic of TCP SkyLine's experiments (seed 003,
 * §2.1): an aggregator (host 0) holds one persistent connection to each of
 * N workers.  Once all are established it requests SRU bytes from every
 * worker at once (a request of a few bytes each); a round ends when the
 * last SRU is in, and the next round's requests go out then (multi-round
 * transfers, §2.1.2).  Goodput = bytes received by the aggregator's
 * application / time from the connections' establishment to the last byte
 * (§2.1.1's G = d_total / t_all).
 *
 * Each worker writes its SRU with one Send and ends the message as a
 * round's end (TslSocket::EndMessage), so its last segment is a TSP.
 *
 * Fairness (§5.7): the aggregator is the sink of N long flows; worker i
 * starts streaming at i x stagger, all run 'hold', and they leave in the
 * same order, stagger apart; bytes per flow are sampled every 'sample'.
 */
#ifndef PANDA_SIM_TSL_INCAST_H
#define PANDA_SIM_TSL_INCAST_H

#include "tsl-config.h"
#include "tsl-socket.h"

#include "ns3/application.h"
#include "ns3/ipv4-address.h"
#include "ns3/socket.h"

#include <functional>
#include <vector>

namespace pandasim
{

constexpr uint16_t kTslPort = 5001;

/* What the aggregator measured. */
struct IncastRecord
{
    int64_t establishedNs = -1;          /* All connections up: t_all starts. */
    int64_t endNs = -1;                  /* Last byte of the last round. */
    std::vector<int64_t> roundStartNs, roundEndNs;
    std::vector<std::vector<int64_t>> workerDoneNs; /* [round][worker]. */
    uint64_t bytes = 0;                  /* Delivered to the application. */
    uint32_t connectFailures = 0;
    /* Fairness: bytes per flow per sample interval. */
    std::vector<std::vector<uint64_t>> samples;
};

class IncastAggregator : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();
    void Setup(const TslConfig* cfg, std::vector<ns3::Ipv4Address> workers, IncastRecord* rec);
    /* Every socket of this host (the aggregator's ends). */
    const std::vector<ns3::Ptr<ns3::Socket>>& Sockets() const
    {
        return m_sockets;
    }

  private:
    void StartApplication() override;
    void StopApplication() override;
    void OnConnected(ns3::Ptr<ns3::Socket> s);
    void OnConnectFailed(ns3::Ptr<ns3::Socket> s);
    void OnRecv(ns3::Ptr<ns3::Socket> s);
    void StartRound();
    void Request(uint32_t worker);
    void Sample();

    const TslConfig* m_cfg = nullptr;
    IncastRecord* m_rec = nullptr;
    std::vector<ns3::Ipv4Address> m_workers;
    std::vector<ns3::Ptr<ns3::Socket>> m_sockets;
    std::vector<uint64_t> m_received;     /* Per worker, all rounds. */
    std::vector<uint64_t> m_sampled;      /* Fairness: at the last sample. */
    uint32_t m_connected = 0, m_round = 0, m_doneThisRound = 0;
};

class IncastWorker : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();
    /* 'index' orders the fairness flows. */
    void Setup(const TslConfig* cfg, uint32_t index);
    const std::vector<ns3::Ptr<ns3::Socket>>& Sockets() const
    {
        return m_sockets;
    }

  private:
    void StartApplication() override;
    void StopApplication() override;
    void OnAccept(ns3::Ptr<ns3::Socket> s, const ns3::Address& from);
    void OnRecv(ns3::Ptr<ns3::Socket> s);
    void Fill(ns3::Ptr<ns3::Socket> s, uint32_t);

    const TslConfig* m_cfg = nullptr;
    uint32_t m_index = 0;
    ns3::Ptr<ns3::Socket> m_listen;
    std::vector<ns3::Ptr<ns3::Socket>> m_sockets;
    uint64_t m_pending = 0;              /* Request bytes not yet answered. */
    bool m_streaming = false;
};

} // namespace pandasim

#endif

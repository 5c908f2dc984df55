/*
 * TCP SkyLine (seed 003) as an ns-3 TCP socket: TcpSocketBase with the
 * paper's mechanisms, each switchable (TslOptions), over any congestion
 * control (the paper's TSL is NewReno with ECN; the baselines run this
 * class with every mechanism off, which is TcpSocketBase unchanged plus
 * counters, so that RTOs and delayed-ACK timeouts are counted the same way
 * for every scheme).
 *
 * sim/TSL.md gives each decision below with the measurement behind it.
 *
 * Sender side:
 *  - Signal packets (§3.1).  A data segment (retransmissions included) is
 *    an SP when it is the last one the window lets the sender send now and
 *    the previous SP has been acknowledged or answered by an SA (in loss
 *    recovery the cumulative ACK stays below it, and a window of new
 *    segments after it would go unprotected): one SP per window round (the
 *    paper estimates the sender's window from the distance between
 *    adjacent SPs, §3.3.2; labelling every window-filling segment,
 *    spEveryBurst, labels so much under incast that labels overrun their
 *    share of the buffer).  Always an SP: the last segment of a message
 *    (EndMessage); of a round's, a TSP (§3.4).
 *  - On a signal ACK (SA: the receiver saw an SP with data missing before
 *    it): with the sliding window W <= S (3 MSS) the sender retransmits at
 *    once (fast recovery); with W > S the SA counts as a duplicate ACK, and
 *    while fewer than N (3) have come and no new data can be sent, the
 *    sender sends a dummy signal packet (DSP) for the next SA (§3.1, Fig. 5)
 *    - so that a reordered packet still in flight is not taken for a loss.
 *    In recovery an SA retransmits the head once if it was not already
 *    (ns-3's SACK scoreboard needs three SACKed segments above a hole).
 *  - Retransmissions carry the RTX label (§3.2): the switches' WRED keeps
 *    labelled packets up to the full buffer.
 *  - Window alignment (§3.4): the least cwnd of a round (after its initial
 *    value) and the least ssthresh become the next round's, on the TSA.
 *  - ECE is ignored in fast recovery and after an RTO (Linux; ns-3.37
 *    would enter CWR and abandon the recovery).
 *
 * Receiver side:
 *  - An SP (or TSP, or DSP) with data missing before it is answered at once
 *    with an SA.
 *  - CAWA (§3.3.2), with delayed ACKs on, for an SP with nothing missing:
 *    no CE-marked data since the previous SP -> ACK at once; CE seen: the
 *    estimated window (end of this SP - end of the previous SP) above one
 *    MSS -> the usual delayed-ACK count, at most one MSS -> no count; in
 *    both the ACK goes at the latest after t_del = min(max(t_sp, t_minAcc),
 *    t_DRO), t_sp the time since the previous SP (or since the round's
 *    first data: the idle time between rounds is not transmission time),
 *    t_DRO the delayed-ACK timeout.  (The paper bounds only the second
 *    case; in the first a lost segment after the SP left the ACK for 40 ms
 *    with the sender blocked.)
 *  - A TSA, at once, when a round's data (up to its TSP) has all arrived.
 */
#ifndef PANDA_SIM_TSL_SOCKET_H
#define PANDA_SIM_TSL_SOCKET_H

#include "ns3/socket-factory.h"
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-socket-base.h"

#include <cstdint>
#include <deque>
#include <string>

namespace pandasim
{

struct TslOptions
{
    bool signal = false;     /* SP / SA / DSP / TSP / TSA. */
    bool labelRtx = false;   /* RTX label on retransmissions. */
    bool cawa = false;       /* Congestion-adaptive delayed ACK. */
    bool align = false;      /* Window alignment across rounds. */
    bool spEveryBurst = false;     /* SP on every window-filling segment,
                                    * not once a window round. */
    uint32_t smallWindowSegs = 3;  /* S, in MSS (§3.1: 3 MSS). */
    int64_t timerAccuracyNs = 5000; /* t_minAcc (tsl-config.cc says why). */

    bool Any() const
    {
        return signal || labelRtx || cawa || align;
    }
};

/* Per-socket counters (summed per run by the application). */
struct TslStats
{
    uint64_t rto = 0;             /* Retransmission timer expiries with data outstanding. */
    uint64_t fastRecovery = 0;    /* Entries into fast recovery. */
    uint64_t saRecovery = 0;      /* ...of which on an SA with W <= S. */
    uint64_t delAckTimeouts = 0;  /* Delayed-ACK timer expiries (Fig. 6c). */
    uint64_t spSent = 0, tspSent = 0, rtxSent = 0, dspSent = 0;
    uint64_t saSent = 0, tsaSent = 0, saReceived = 0;
    uint64_t cawaNow = 0, cawaDelayed = 0, cawaShort = 0; /* CAWA cases 1, 2a, 2b. */
    uint64_t alignments = 0;

    void Add(const TslStats& o);
};

class TslSocket : public ns3::TcpSocketBase
{
  public:
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override;
    TslSocket();
    TslSocket(const TslSocket& other);
    ~TslSocket() override;

    void SetOptions(const TslOptions& o)
    {
        m_opt = o;
    }
    /* Ends a message at the data written so far; 'endOfRound' makes its
     * last segment a TSP (the application knows its rounds). */
    void EndMessage(bool endOfRound);
    const TslStats& Stats() const
    {
        return m_stats;
    }
    uint32_t CongestionWindow() const
    {
        return m_tcb->m_cWnd;
    }

  protected:
    ns3::Ptr<ns3::TcpSocketBase> Fork() override;
    uint32_t SendDataPacket(ns3::SequenceNumber32 seq, uint32_t maxSize, bool withAck) override;
    void SendEmptyPacket(uint8_t flags) override;
    void DoForwardUp(ns3::Ptr<ns3::Packet> packet,
                     const ns3::Address& fromAddress,
                     const ns3::Address& toAddress) override;
    void ReceivedAck(ns3::Ptr<ns3::Packet> packet, const ns3::TcpHeader& tcpHeader) override;
    void ReceivedData(ns3::Ptr<ns3::Packet> packet, const ns3::TcpHeader& tcpHeader) override;
    void ReTxTimeout() override;
    void DelAckTimeout() override;

  private:
    void OnTx(ns3::Ptr<const ns3::Packet> p,
              const ns3::TcpHeader& h,
              ns3::Ptr<const ns3::TcpSocketBase> s);
    /* A pure ACK now (with ECE when TCP owes one), labelled 'flags'. */
    void SendLabelledAck(uint8_t flags);
    void OnSignalAck(uint32_t dupBefore, ns3::SequenceNumber32 highTxBefore);
    void TrackWindow();
    void AlignWindow();
    bool RoundComplete() const;

    TslOptions m_opt;
    TslStats m_stats;
    uint8_t m_txLabel = 0;      /* Label of the segment being sent now. */
    uint8_t m_rxFlags = 0;      /* Label of the segment being received now. */
    uint8_t m_ackLabel = 0;     /* Label asked for the next pure ACK. */

    /* Sender. */
    struct MessageEnd
    {
        ns3::SequenceNumber32 end;
        bool tail;
    };
    std::deque<MessageEnd> m_msgEnds;     /* Not yet sent in full. */
    ns3::SequenceNumber32 m_spEnd{0};     /* End of the last SP sent. */
    bool m_spSent = false;
    bool m_spAnswered = false;            /* An SA came after the last SP. */
    uint32_t m_cwndMin = UINT32_MAX, m_ssthMin = UINT32_MAX;
    uint32_t m_roundStartCwnd = 0;
    bool m_cwndMoved = false;

    /* Receiver. */
    bool m_rxRoundOpen = false;           /* A TSP arrived; TSA not sent yet. */
    ns3::SequenceNumber32 m_rxRoundEnd{0};
    bool m_rxSpSeen = false;
    ns3::SequenceNumber32 m_rxPrevSpEnd{0};
    ns3::Time m_rxPrevSpTime;
    bool m_rxNewRound = true;             /* No data since the last TSA. */
    ns3::SequenceNumber32 m_rxCeSeq{0};   /* m_ecnCESeq when last looked at. */
    bool m_rxCeSinceSp = false;
};

/* ns-3's TcpDctcp with Linux's (and RFC 8257's reference) floor: ssthresh
 * never below two segments.  ns-3.37's TcpDctcp::GetSsThresh returns
 * (1 - alpha/2) x cwnd unbounded, so after a few marked windows cwnd falls
 * below one segment; TcpSocketBase's silly-window avoidance then sends
 * nothing until the retransmission timer fires (an RTO with nothing lost:
 * 16 workers, no drop, 200 ms per round).  Linux's dctcp_ssthresh() keeps
 * max(cwnd - cwnd x alpha / 2, 2). */
class LinuxDctcp : public ns3::TcpDctcp
{
  public:
    static ns3::TypeId GetTypeId();
    std::string GetName() const override;
    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override;
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override;
};

/* Creates TslSocket's on a node with the given congestion control and
 * options (aggregated to each host; Socket::CreateSocket(node,
 * TslSocketFactory::GetTypeId())). */
class TslSocketFactory : public ns3::SocketFactory
{
  public:
    static ns3::TypeId GetTypeId();
    void Setup(ns3::TypeId congestionOps, const TslOptions& opt);
    ns3::Ptr<ns3::Socket> CreateSocket() override;

  private:
    ns3::TypeId m_cc;
    TslOptions m_opt;
};

} // namespace pandasim

#endif

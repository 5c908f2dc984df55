#include "tsl-socket.h"

#include "tsl-wire.h"

#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/rtt-estimator.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/simulator.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/tcp-rx-buffer.h"
#include "ns3/tcp-tx-buffer.h"

#include <algorithm>

namespace pandasim
{

using namespace ns3;

NS_LOG_COMPONENT_DEFINE("TslSocket");
NS_OBJECT_ENSURE_REGISTERED(TslSocket);
NS_OBJECT_ENSURE_REGISTERED(TslSocketFactory);

void
TslStats::Add(const TslStats& o)
{
    rto += o.rto;
    fastRecovery += o.fastRecovery;
    saRecovery += o.saRecovery;
    delAckTimeouts += o.delAckTimeouts;
    spSent += o.spSent;
    tspSent += o.tspSent;
    rtxSent += o.rtxSent;
    dspSent += o.dspSent;
    saSent += o.saSent;
    tsaSent += o.tsaSent;
    saReceived += o.saReceived;
    cawaNow += o.cawaNow;
    cawaDelayed += o.cawaDelayed;
    cawaShort += o.cawaShort;
    alignments += o.alignments;
}

TypeId
TslSocket::GetTypeId()
{
    static TypeId tid = TypeId("pandasim::TslSocket")
                            .SetParent<TcpSocketBase>()
                            .SetGroupName("PandaSim")
                            .AddConstructor<TslSocket>();
    return tid;
}

TypeId
TslSocket::GetInstanceTypeId() const
{
    return GetTypeId();
}

TslSocket::TslSocket()
{
    m_txTrace.ConnectWithoutContext(MakeCallback(&TslSocket::OnTx, this));
}

TslSocket::TslSocket(const TslSocket& o)
    : TcpSocketBase(o),
      m_opt(o.m_opt)
{
    /* TcpSocketBase's copy copies the Tx trace's sinks, i.e. the
     * listener's OnTx bound to the listener: rebind it to this socket. */
    m_txTrace.DisconnectWithoutContext(MakeCallback(&TslSocket::OnTx, const_cast<TslSocket*>(&o)));
    m_txTrace.ConnectWithoutContext(MakeCallback(&TslSocket::OnTx, this));
}

TslSocket::~TslSocket() = default;

Ptr<TcpSocketBase>
TslSocket::Fork()
{
    return CopyObject<TslSocket>(this);
}

void
TslSocket::EndMessage(bool endOfRound)
{
    SequenceNumber32 end = m_txBuffer->TailSequence();
    if (!m_msgEnds.empty() && m_msgEnds.back().end == end)
    {
        m_msgEnds.back().tail |= endOfRound;
        return;
    }
    m_msgEnds.push_back({end, endOfRound});
}

void
TslSocket::OnTx(Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    /* Called by TcpSocketBase just before the segment goes down to TCP's
     * L4 (Packet::AddPacketTag is const); TslWire turns the tag into the
     * DSCP. */
    if (m_txLabel)
    {
        p->AddPacketTag(TslLabelTag(m_txLabel));
    }
}

uint32_t
TslSocket::SendDataPacket(SequenceNumber32 seq, uint32_t maxSize, bool withAck)
{
    if (!m_opt.Any())
    {
        return TcpSocketBase::SendDataPacket(seq, maxSize, withAck);
    }
    uint32_t mss = m_tcb->m_segmentSize;
    bool retx = seq < m_tcb->m_highTxMark;
    uint32_t sz = std::min(maxSize, m_txBuffer->SizeFromSequence(seq));
    SequenceNumber32 end = seq + sz;
    uint8_t flags = retx && m_opt.labelRtx ? kTslRtx : 0;

    for (const MessageEnd& m : m_msgEnds)
    {
        if (m.end > seq && m.end <= end)
        {
            flags |= m_opt.signal ? kTslSignal : 0;
            flags |= m.tail && m_opt.align ? kTslTail : 0;
        }
    }
    if (m_opt.signal && !(flags & kTslSignal) &&
        (m_opt.spEveryBurst || !m_spSent || m_spAnswered || m_txBuffer->HeadSequence() >= m_spEnd))
    {
        /* The last segment the window lets out now (SendPendingData's own
         * test for another segment: window left, data left, no silly
         * window), once a window round: the previous SP acknowledged, or
         * answered by an SA (tsl-socket.h). */
        uint32_t avail = AvailableWindow();
        uint32_t left = avail > sz ? avail - sz : 0;
        uint32_t more = m_txBuffer->SizeFromSequence(end);
        bool another = left > 0 && more > 0 && (left >= mss || more <= left);
        flags |= another ? 0 : kTslSignal;
    }
    if (flags & kTslSignal)
    {
        m_spEnd = end; /* The latest SP's, retransmitted ones too. */
        m_spSent = true;
        m_spAnswered = false;
        m_stats.spSent++;
    }
    m_stats.tspSent += (flags & kTslTail) != 0;
    m_stats.rtxSent += (flags & kTslRtx) != 0;
    if (m_opt.align && m_roundStartCwnd == 0)
    {
        m_roundStartCwnd = m_tcb->m_cWnd; /* The first round's ICWS. */
    }

    NS_LOG_DEBUG("data " << seq << "+" << sz << " flags " << (unsigned)flags << " cwnd "
                         << m_tcb->m_cWnd << " state "
                         << TcpSocketState::TcpCongStateName[m_tcb->m_congState]);
    m_txLabel = flags;
    uint32_t n = TcpSocketBase::SendDataPacket(seq, maxSize, withAck);
    m_txLabel = 0;
    return n;
}

bool
TslSocket::RoundComplete() const
{
    return m_rxRoundOpen && m_tcb->m_rxBuffer->NextRxSequence() >= m_rxRoundEnd;
}

void
TslSocket::SendEmptyPacket(uint8_t flags)
{
    uint8_t label = 0;
    bool pureAck = (flags & TcpHeader::ACK) &&
                   !(flags & (TcpHeader::SYN | TcpHeader::FIN | TcpHeader::RST));
    if (pureAck)
    {
        label = m_ackLabel;
        if (RoundComplete())
        {
            /* Any ACK that acknowledges a whole round is its TSA (§3.4). */
            label |= kTslTail;
            m_rxRoundOpen = false;
            m_rxNewRound = true;
        }
    }
    m_ackLabel = 0;
    NS_LOG_DEBUG("ack " << m_tcb->m_rxBuffer->NextRxSequence() << " flags " << (unsigned)label);
    if (label & kTslDummy)
    {
        m_stats.dspSent++;
    }
    else if (label & kTslSignal)
    {
        m_stats.saSent++;
    }
    m_stats.tsaSent += (label & kTslTail) != 0;
    m_txLabel = label;
    TcpSocketBase::SendEmptyPacket(flags);
    m_txLabel = 0;
}

void
TslSocket::SendLabelledAck(uint8_t flags)
{
    m_ackLabel = flags;
    /* TcpSocketBase's rule for a pure ACK: ECE while CE is owed. */
    if (m_tcb->m_ecnState == TcpSocketState::ECN_CE_RCVD ||
        m_tcb->m_ecnState == TcpSocketState::ECN_SENDING_ECE)
    {
        SendEmptyPacket(TcpHeader::ACK | TcpHeader::ECE);
        m_tcb->m_ecnState = TcpSocketState::ECN_SENDING_ECE;
    }
    else
    {
        SendEmptyPacket(TcpHeader::ACK);
    }
}

void
TslSocket::DoForwardUp(Ptr<Packet> packet, const Address& fromAddress, const Address& toAddress)
{
    TslLabelTag tag;
    m_rxFlags = packet->RemovePacketTag(tag) ? tag.Flags() : 0;
    TcpHeader h;
    packet->PeekHeader(h);
    bool pure = packet->GetSize() == h.GetSerializedSize();
    TcpSocketState::TcpCongState_t before = m_tcb->m_congState;

    TcpSocketBase::DoForwardUp(packet, fromAddress, toAddress);

    if (before != TcpSocketState::CA_RECOVERY &&
        m_tcb->m_congState == TcpSocketState::CA_RECOVERY)
    {
        m_stats.fastRecovery++;
    }
    /* A DSP finding data still missing gets another SA (§3.1). */
    if (pure && (m_rxFlags & kTslDummy) && m_state == ESTABLISHED &&
        m_tcb->m_rxBuffer->Size() > m_tcb->m_rxBuffer->Available())
    {
        SendLabelledAck(kTslSignal);
    }
    m_rxFlags = 0;
}

void
TslSocket::ReceivedAck(Ptr<Packet> packet, const TcpHeader& tcpHeader)
{
    uint32_t dupBefore = m_dupAckCount;
    SequenceNumber32 highBefore = m_tcb->m_highTxMark;
    bool pure = packet->GetSize() == 0;

    TcpSocketState::TcpCongState_t st = m_tcb->m_congState;
    if ((tcpHeader.GetFlags() & TcpHeader::ECE) &&
        (st == TcpSocketState::CA_RECOVERY || st == TcpSocketState::CA_LOSS))
    {
        /* TcpSocketBase (3.37) enters CA_CWR on an ECE in any state but
         * CWR, which ends a loss recovery half way (its retransmissions
         * stop; the flow waits for an RTO).  Linux reduces for ECE only
         * from Open/Disorder: the window was already reduced for the
         * loss.  Every scheme runs this socket, so every ECN scheme gets
         * Linux's behaviour. */
        TcpHeader h = tcpHeader;
        h.SetFlags(h.GetFlags() & ~TcpHeader::ECE);
        TcpSocketBase::ReceivedAck(packet, h);
    }
    else
    {
        TcpSocketBase::ReceivedAck(packet, tcpHeader);
    }

    while (!m_msgEnds.empty() && m_msgEnds.front().end <= m_txBuffer->HeadSequence())
    {
        m_msgEnds.pop_front();
    }
    if (m_opt.align)
    {
        TrackWindow();
    }
    if (!pure)
    {
        return; /* Data (with its ACK): the receiver's side, ReceivedData. */
    }
    if (m_rxFlags & kTslTail)
    {
        AlignWindow();
    }
    else if ((m_rxFlags & kTslSignal) && !(m_rxFlags & kTslDummy) && m_opt.signal)
    {
        OnSignalAck(dupBefore, highBefore);
    }
}

void
TslSocket::OnSignalAck(uint32_t dupBefore, SequenceNumber32 highBefore)
{
    m_stats.saReceived++;
    m_spAnswered = true;
    TcpSocketState::TcpCongState_t st = m_tcb->m_congState;
    NS_LOG_DEBUG("SA: una " << m_txBuffer->HeadSequence() << " high " << m_tcb->m_highTxMark
                            << " window " << Window() << " dupacks " << m_dupAckCount << " state "
                            << TcpSocketState::TcpCongStateName[st]);
    if (st == TcpSocketState::CA_LOSS || m_txBuffer->HeadSequence() >= m_tcb->m_highTxMark)
    {
        return;
    }
    if (st == TcpSocketState::CA_RECOVERY)
    {
        /* An SA in recovery: a later SP arrived and the head is still
         * missing.  With SACK, TcpSocketBase retransmits only what its
         * scoreboard calls lost (three SACKed segments above it), which a
         * window of two or three segments never gives: the head waited for
         * an RTO.  In a single-path network the head is lost unless its
         * retransmission is on the way: retransmit it once. */
        if (!m_txBuffer->IsHeadRetransmitted())
        {
            m_txBuffer->MarkHeadAsLost();
            DoRetransmit();
        }
        return;
    }
    /* RFC 6675 §5.1, as TcpSocketBase::DupAck: no new recovery before the
     * previous one's recovery point is acknowledged. */
    bool mayRecover = m_highRxAckMark >= m_recover || !m_recoverActive;
    if (Window() <= m_opt.smallWindowSegs * m_tcb->m_segmentSize)
    {
        /* W <= S: the network is congested; waiting for N duplicate ACKs
         * would take DSPs it cannot afford.  The SA is the loss signal. */
        if (mayRecover)
        {
            m_stats.saRecovery++;
            EnterRecovery(0);
            SendPendingData(m_connected);
        }
        return;
    }
    if (m_dupAckCount <= dupBefore)
    {
        /* TcpSocketBase counts a duplicate ACK only if its SACK blocks are
         * new; an SA answering a DSP repeats them.  It counts here. */
        if (st == TcpSocketState::CA_OPEN)
        {
            m_dupAckCount = 0;
        }
        DupAck(0);
    }
    if (m_tcb->m_congState == TcpSocketState::CA_RECOVERY)
    {
        SendPendingData(m_connected);
        return;
    }
    if (m_dupAckCount >= m_retxThresh && mayRecover)
    {
        /* N duplicate ACKs in CA_CWR: TcpSocketBase (3.37) counts them but
         * recovers only from CA_DISORDER; Linux recovers from CWR too. */
        EnterRecovery(0);
        SendPendingData(m_connected);
        return;
    }
    if (m_tcb->m_highTxMark == highBefore)
    {
        /* Fewer than N duplicate ACKs and nothing new could be sent: ask
         * again with a DSP (§3.1, Fig. 5). */
        SendLabelledAck(kTslSignal | kTslDummy);
    }
}

void
TslSocket::TrackWindow()
{
    uint32_t c = m_tcb->m_cWnd;
    if (!m_cwndMoved && m_roundStartCwnd != 0 && c != m_roundStartCwnd)
    {
        m_cwndMoved = true;
    }
    if (m_cwndMoved)
    {
        m_cwndMin = std::min(m_cwndMin, c);
    }
    m_ssthMin = std::min<uint32_t>(m_ssthMin, m_tcb->m_ssThresh);
}

void
TslSocket::AlignWindow()
{
    if (!m_opt.align)
    {
        return;
    }
    if (m_tcb->m_congState == TcpSocketState::CA_CWR)
    {
        /* All data acknowledged: the ECN reduction is over (TcpSocketBase
         * would leave CWR only on an ACK beyond its recovery point, i.e.
         * next round, and then set cwnd to ssthresh over the alignment). */
        m_tcb->m_congState = TcpSocketState::CA_OPEN;
        m_recoveryOps->ExitRecovery(m_tcb);
    }
    uint32_t c = m_cwndMoved ? m_cwndMin : m_tcb->m_cWnd.Get();
    c = std::max(c, m_tcb->m_segmentSize);
    m_tcb->m_cWnd = c;
    m_tcb->m_cWndInfl = c;
    if (m_ssthMin < m_tcb->m_ssThresh)
    {
        m_tcb->m_ssThresh = m_ssthMin;
    }
    m_stats.alignments++;
    m_cwndMin = m_ssthMin = UINT32_MAX;
    m_cwndMoved = false;
    m_roundStartCwnd = c;
}

void
TslSocket::ReceivedData(Ptr<Packet> p, const TcpHeader& h)
{
    uint8_t f = m_rxFlags;
    SequenceNumber32 seq = h.GetSequenceNumber();
    SequenceNumber32 end = seq + p->GetSize();
    SequenceNumber32 next = m_tcb->m_rxBuffer->NextRxSequence();
    Time now = Simulator::Now();

    if (m_ecnCESeq.Get() != m_rxCeSeq)
    {
        m_rxCeSeq = m_ecnCESeq; /* TcpSocketBase::ForwardUp saw CE on it. */
        m_rxCeSinceSp = true;
    }
    if (m_rxNewRound && p->GetSize() > 0)
    {
        /* First data of a round: the window estimate and t_sp start here,
         * not at the previous round's last SP (the idle time between). */
        m_rxNewRound = false;
        m_rxPrevSpEnd = next;
        m_rxPrevSpTime = now;
    }
    if (f & kTslTail)
    {
        m_rxRoundOpen = true;
        m_rxRoundEnd = end;
    }

    if ((f & kTslSignal) && seq > next)
    {
        /* Data missing before an SP: answer with an SA at once (TCP ACKs
         * out-of-order data at once; this labels that ACK). */
        m_ackLabel = kTslSignal;
        TcpSocketBase::ReceivedData(p, h);
    }
    else if ((f & kTslSignal) && end > m_rxPrevSpEnd && m_opt.cawa && m_delAckMaxCount > 1)
    {
        uint32_t west = end - m_rxPrevSpEnd;
        Time tsp = now - m_rxPrevSpTime;
        NS_LOG_DEBUG("CAWA: SP " << seq << " west " << west << " tsp " << tsp << " ce "
                                 << m_rxCeSinceSp);
        m_rxPrevSpEnd = end;
        m_rxPrevSpTime = now;
        if (!m_rxCeSinceSp)
        {
            /* (1) No congestion: ACK now so the window grows. */
            m_stats.cawaNow++;
            m_delAckCount = m_delAckMaxCount - 1;
            TcpSocketBase::ReceivedData(p, h);
        }
        else
        {
            /* Congested.  (2a) The sender can send more and complete the
             * delayed-ACK count: the usual delayed ACK.  (2b) It is
             * window-limited to one segment: hold the ACK.  Either way the
             * hold is t_del, about one SP time (a packet leaving the
             * network), at least the timer's accuracy, at most t_DRO: in
             * (2a) a lost segment after the SP would otherwise leave the
             * ACK for t_DRO (40 ms) with the sender blocked (tsl-socket.h). */
            bool oneSegment = west <= m_tcb->m_segmentSize;
            (oneSegment ? m_stats.cawaShort : m_stats.cawaDelayed)++;
            Time tdel = std::min(std::max(tsp, NanoSeconds(m_opt.timerAccuracyNs)),
                                 m_delAckTimeout);
            if (oneSegment)
            {
                m_delAckCount = 0;
            }
            TcpSocketBase::ReceivedData(p, h);
            if (m_delAckEvent.IsRunning())
            {
                m_delAckEvent.Cancel();
                m_delAckEvent = Simulator::Schedule(tdel, &TslSocket::DelAckTimeout, this);
            }
        }
        m_rxCeSinceSp = false;
    }
    else
    {
        if ((f & kTslSignal) && end > m_rxPrevSpEnd)
        {
            m_rxPrevSpEnd = end;
            m_rxPrevSpTime = now;
            m_rxCeSinceSp = false;
        }
        TcpSocketBase::ReceivedData(p, h);
    }
    m_ackLabel = 0;
    if (RoundComplete() && m_state == ESTABLISHED)
    {
        /* The round is complete and TCP delayed its ACK: the TSA goes now. */
        SendLabelledAck(0);
    }
}

void
TslSocket::ReTxTimeout()
{
    /* Data waiting (sent or not) when the timer fires: the flow stalled
     * for an RTO, whether or not anything is in flight (a window below one
     * segment stalls with nothing in flight). */
    if ((m_state == ESTABLISHED || m_state == CLOSE_WAIT || m_state == FIN_WAIT_1) &&
        m_txBuffer->Size() > 0)
    {
        NS_LOG_DEBUG("RTO: una " << m_txBuffer->HeadSequence() << " high " << m_tcb->m_highTxMark
                                 << " cwnd " << m_tcb->m_cWnd << " state "
                                 << TcpSocketState::TcpCongStateName[m_tcb->m_congState]);
        m_stats.rto++;
    }
    TcpSocketBase::ReTxTimeout();
    if (m_opt.align)
    {
        TrackWindow();
    }
}

void
TslSocket::DelAckTimeout()
{
    NS_LOG_DEBUG("delayed-ACK timeout, next " << m_tcb->m_rxBuffer->NextRxSequence() << " count "
                                              << m_delAckCount);
    m_stats.delAckTimeouts++;
    TcpSocketBase::DelAckTimeout();
}

NS_OBJECT_ENSURE_REGISTERED(LinuxDctcp);

TypeId
LinuxDctcp::GetTypeId()
{
    static TypeId tid = TypeId("pandasim::LinuxDctcp")
                            .SetParent<TcpDctcp>()
                            .SetGroupName("PandaSim")
                            .AddConstructor<LinuxDctcp>();
    return tid;
}

std::string
LinuxDctcp::GetName() const
{
    return "LinuxDctcp";
}

uint32_t
LinuxDctcp::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    return std::max(TcpDctcp::GetSsThresh(tcb, bytesInFlight), 2 * tcb->m_segmentSize);
}

Ptr<TcpCongestionOps>
LinuxDctcp::Fork()
{
    return CopyObject<LinuxDctcp>(this);
}

TypeId
TslSocketFactory::GetTypeId()
{
    static TypeId tid =
        TypeId("pandasim::TslSocketFactory").SetParent<SocketFactory>().SetGroupName("PandaSim");
    return tid;
}

void
TslSocketFactory::Setup(TypeId congestionOps, const TslOptions& opt)
{
    m_cc = congestionOps;
    m_opt = opt;
}

Ptr<Socket>
TslSocketFactory::CreateSocket()
{
    /* What TcpL4Protocol::CreateSocket does, with TslSocket (ns-3.37's
     * factory always makes a TcpSocketBase). */
    Ptr<Node> node = GetObject<Node>();
    NS_ABORT_MSG_UNLESS(node, "TslSocketFactory is not aggregated to a node");
    Ptr<TslSocket> s = CreateObject<TslSocket>();
    ObjectFactory cc;
    cc.SetTypeId(m_cc);
    s->SetNode(node);
    s->SetTcp(node->GetObject<TcpL4Protocol>());
    s->SetRtt(CreateObject<RttMeanDeviation>());
    s->SetCongestionControlAlgorithm(cc.Create<TcpCongestionOps>());
    s->SetRecoveryAlgorithm(CreateObject<TcpClassicRecovery>());
    s->SetOptions(m_opt);
    return s;
}

} // namespace pandasim

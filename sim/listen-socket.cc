#include "listen-socket.h"

#include "ns3/abort.h"
#include "ns3/object-factory.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/rtt-estimator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/type-id.h"
#include "ns3/uinteger.h"

namespace pandasim
{

using namespace ns3;

TypeId
ListenSocket::GetTypeId()
{
    static TypeId tid =
        TypeId("pandasim::ListenSocket")
            .SetParent<TcpSocketBase>()
            .SetGroupName("PandaSim")
            .AddConstructor<ListenSocket>()
            .AddTraceSource("ForkCeSeq",
                            "An accepted connection was forked: the sequence number "
                            "above which it counts a CE mark as new",
                            MakeTraceSourceAccessor(&ListenSocket::m_forkCeSeq),
                            "ns3::TracedValueCallback::Uint32");
    return tid;
}

TypeId
ListenSocket::GetInstanceTypeId() const
{
    return GetTypeId();
}

/* The copy is an accepted connection: it reports nothing of its own
 * (TracedCallback's copy would carry the listener's sinks along). */
ListenSocket::ListenSocket(const ListenSocket& o)
    : TcpSocketBase(o),
      m_fresh(o.m_fresh)
{
}

Ptr<TcpSocketBase>
ListenSocket::Fork()
{
    Ptr<ListenSocket> c = CopyObject<ListenSocket>(this);
    if (m_fresh)
    {
        c->m_ecnCESeq = SequenceNumber32(0);
    }
    m_forkCeSeq(c->m_ecnCESeq.Get().GetValue());
    return c;
}

Ptr<ListenSocket>
CreateListenSocket(Ptr<Node> node, bool freshEcn)
{
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    NS_ABORT_MSG_UNLESS(tcp, "node " << node->GetId() << " has no TCP");
    TypeIdValue cc, recovery, rtt;
    tcp->GetAttribute("SocketType", cc);
    tcp->GetAttribute("RecoveryType", recovery);
    tcp->GetAttribute("RttEstimatorType", rtt);
    ObjectFactory f;
    Ptr<ListenSocket> s = CreateObject<ListenSocket>();
    s->SetNode(node);
    s->SetTcp(tcp);
    f.SetTypeId(rtt.Get());
    s->SetRtt(f.Create<RttEstimator>());
    f.SetTypeId(cc.Get());
    s->SetCongestionControlAlgorithm(f.Create<TcpCongestionOps>());
    f.SetTypeId(recovery.Get());
    s->SetRecoveryAlgorithm(f.Create<TcpRecoveryOps>());
    s->SetFreshEcn(freshEcn);
    return s;
}

} // namespace pandasim

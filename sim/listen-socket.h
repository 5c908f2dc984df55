/*
 * A listening TCP socket whose accepted connections start with the
 * receive-side ECN state of a new socket.
 *
 * ns-3's TcpSocketBase (3.37, and ns-3-dev as of this writing) records the
 * sequence number of the last CE-marked segment it took (m_ecnCESeq) on
 * any socket, a listener included, and treats later CE marks as new only
 * above it.  A late segment of a connection whose receiver has gone is
 * delivered to the listener (no connection matches it any more), so a
 * CE-marked one leaves its sequence number there; the listener forks
 * every accepted connection by copying itself, and every connection's
 * sequence numbers start at zero, so every later connection ignores CE
 * until its sender has sent that many bytes.  Linux keeps no such state
 * on a listener (a child socket starts with none) and picks random
 * initial sequence numbers.  ns-3 cannot do the latter, and random
 * initial numbers alone would not help here anyway: a stale number from
 * another sequence space would still hide half of them.  So the fork
 * clears it: the accepted connection starts with m_ecnCESeq = 0, as a
 * socket that never saw a segment does.
 *
 * Contract: create with CreateListenSocket() on a node that has ns-3's
 * TCP (the socket gets the congestion control, recovery and RTT estimator
 * TcpL4Protocol would give it); use it as any ns-3 TCP socket.  With
 * 'fresh' false the fork keeps ns-3's behaviour (to reproduce runs made
 * before this class).  Each fork reports, through the "ForkCeSeq" trace,
 * the CE sequence number the new connection starts with (after the
 * clearing).  Single-threaded, as ns-3; no memory beyond the socket.
 */
#ifndef PANDA_SIM_LISTEN_SOCKET_H
#define PANDA_SIM_LISTEN_SOCKET_H

#include "ns3/node.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/traced-callback.h"

namespace pandasim
{

class ListenSocket : public ns3::TcpSocketBase
{
  public:
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override;

    ListenSocket() = default;
    ListenSocket(const ListenSocket& o);

    void SetFreshEcn(bool fresh) { m_fresh = fresh; }

  protected:
    ns3::Ptr<ns3::TcpSocketBase> Fork() override;

  private:
    bool m_fresh = true;
    /* Sequence number the forked connection's CE state starts at. */
    ns3::TracedCallback<uint32_t> m_forkCeSeq;
};

/* A TCP socket on 'node' as TcpL4Protocol::CreateSocket() makes one
 * (congestion control from its SocketType, recovery from RecoveryType,
 * RTT estimator from RttEstimatorType), as a ListenSocket. */
ns3::Ptr<ListenSocket> CreateListenSocket(ns3::Ptr<ns3::Node> node, bool freshEcn);

} // namespace pandasim

#endif

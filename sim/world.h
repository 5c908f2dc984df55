/*
 * State shared by the applications of one run: the records, the oracle's
 * message book, the table that tells a flow sink which flow an accepted
 * connection carries, and TCP event counters.  One per run, owned by main.
 */
#ifndef PANDA_SIM_WORLD_H
#define PANDA_SIM_WORLD_H

#include "network.h"
#include "oracle.h"
#include "records.h"

#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/tcp-socket-state.h"

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace pandasim
{

constexpr uint16_t kFlowPort = 5001;
constexpr uint16_t kRpcPort = 11211;

struct World
{
    explicit World(const Network& n)
        : net(n)
    {
    }

    const Network& net;
    RunRecords rec;
    MessageBook* book = nullptr; /* Oracle only. */

    /* Flow sinks learn the flow of a connection from its source address
     * and port, registered by the sender before it connects. */
    void Expect(uint32_t srcAddr, uint16_t srcPort, uint32_t flowId)
    {
        m_expected[(uint64_t)srcAddr << 16 | srcPort] = flowId;
    }
    /* Returns the flow id, or UINT32_MAX if unknown. */
    uint32_t Claim(uint32_t srcAddr, uint16_t srcPort)
    {
        auto it = m_expected.find((uint64_t)srcAddr << 16 | srcPort);
        if (it == m_expected.end())
        {
            return UINT32_MAX;
        }
        uint32_t id = it->second;
        m_expected.erase(it);
        return id;
    }

    /* Called by the sink when a flow's last byte arrived. */
    std::function<void(uint32_t flowId)> onFlowDone;

    /* RPC clients issue requests while this is true, and at most
     * rpcLimit requests in all when it is nonzero; onRpcLimit is called
     * when the last of them has been answered. */
    bool rpcActive = false;
    uint64_t rpcLimit = 0, rpcIssued = 0, rpcAnswered = 0;
    std::function<void()> onRpcLimit;

    /* The RPC connections, for their final level in the output. */
    struct RpcConn
    {
        uint32_t pair, server, client;
        uint16_t clientPort;
    };
    std::vector<RpcConn> rpcConns;

    /* Why the run ended (set by whoever stops it; else the time limit). */
    std::string stopReason = "max-time";

    /* TCP events of data senders: RTOs (entries into CA_LOSS) and fast
     * recoveries. */
    uint64_t rtoCount = 0, recoveryCount = 0, sockets = 0;
    void Watch(ns3::Ptr<ns3::Socket> s)
    {
        sockets++;
        s->TraceConnectWithoutContext("CongState", ns3::MakeCallback(&World::OnCongState, this));
    }

    /* One flow sender's TCP state, kept only with --time-trace-ms
     * (flows-time.csv): the window, RTO and ECN state now, and how often
     * it entered loss (an RTO), recovery (three duplicate ACKs) and CWR
     * (an ECN echo: DCTCP's reduction). */
    struct FlowTcp
    {
        uint32_t cwnd = 0, ssthresh = 0;
        int64_t rtoNs = 0;
        uint32_t losses = 0, recoveries = 0, cwrs = 0;
        int ecn = -1; /* ns-3's EcnState (0: ECN off on this connection). */
    };
    bool traceFlows = false;
    /* The listeners' forks start without the listener's CE sequence
     * number (--listener-ecn=fresh; listen-socket.h). */
    bool freshListenerEcn = true;

    /* ECN state changes of the flow sinks' listening sockets (run.json):
     * a listener takes no data, but ns-3 forks every accepted connection
     * from it, state included, so a change there reaches every later
     * flow's receiver. */
    uint64_t listenerEcnChanges = 0;
    int64_t listenerEcnFirstNs = -1;
    int listenerEcnState = -1;
    /* The sequence number of the last CE-marked segment the listener took
     * (ns-3's m_ecnCESeq, which forks inherit: a receiver treats CE as
     * new only above it), -1 if none. */
    int64_t listenerCeSeq = -1;
    /* Connections the flow sinks' listener forked, and how many of them
     * started with a CE sequence number above zero: a stale one from the
     * listener, which --listener-ecn=fresh (ListenSocket) clears. */
    uint64_t listenerForks = 0;
    uint64_t listenerForksStaleCe = 0;
    int64_t listenerForkMaxCeSeq = 0;
    void WatchListener(ns3::Ptr<ns3::Socket> s)
    {
        s->TraceConnectWithoutContext("EcnState",
                                      ns3::MakeCallback(&World::OnListenerEcn, this));
        s->TraceConnectWithoutContext("EcnCeSeq",
                                      ns3::MakeCallback(&World::OnListenerCeSeq, this));
        s->TraceConnectWithoutContext("ForkCeSeq",
                                      ns3::MakeCallback(&World::OnListenerFork, this));
    }
    std::unordered_map<uint32_t, FlowTcp> flowTcp; /* Flow id -> state. */
    /* Watch() for a flow's sender, and its FlowTcp when traceFlows. */
    void WatchFlow(ns3::Ptr<ns3::Socket> s, uint32_t id)
    {
        Watch(s);
        if (!traceFlows)
        {
            return;
        }
        FlowTcp* t = &flowTcp[id]; /* Map nodes do not move. */
        s->TraceConnectWithoutContext("CongState", ns3::MakeBoundCallback(&FlowCongState, t));
        s->TraceConnectWithoutContext("CongestionWindow", ns3::MakeBoundCallback(&FlowCwnd, t));
        s->TraceConnectWithoutContext("SlowStartThreshold",
                                      ns3::MakeBoundCallback(&FlowSsthresh, t));
        s->TraceConnectWithoutContext("RTO", ns3::MakeBoundCallback(&FlowRto, t));
        s->TraceConnectWithoutContext("EcnState", ns3::MakeBoundCallback(&FlowEcn, t));
    }

  private:
    void OnListenerCeSeq(ns3::SequenceNumber32, ns3::SequenceNumber32 now)
    {
        listenerCeSeq = now.GetValue();
    }
    void OnListenerFork(uint32_t ceSeq)
    {
        listenerForks++;
        if (ceSeq != 0)
        {
            listenerForksStaleCe++;
            listenerForkMaxCeSeq = std::max<int64_t>(listenerForkMaxCeSeq, ceSeq);
        }
    }
    void OnListenerEcn(ns3::TcpSocketState::EcnState_t, ns3::TcpSocketState::EcnState_t now)
    {
        listenerEcnChanges++;
        if (listenerEcnFirstNs < 0)
        {
            listenerEcnFirstNs = ns3::Simulator::Now().GetNanoSeconds();
        }
        listenerEcnState = (int)now;
    }
    static void FlowCongState(FlowTcp* t,
                              ns3::TcpSocketState::TcpCongState_t,
                              ns3::TcpSocketState::TcpCongState_t now)
    {
        t->losses += now == ns3::TcpSocketState::CA_LOSS;
        t->recoveries += now == ns3::TcpSocketState::CA_RECOVERY;
        t->cwrs += now == ns3::TcpSocketState::CA_CWR;
    }
    static void FlowCwnd(FlowTcp* t, uint32_t, uint32_t now)
    {
        t->cwnd = now;
    }
    static void FlowSsthresh(FlowTcp* t, uint32_t, uint32_t now)
    {
        t->ssthresh = now;
    }
    static void FlowRto(FlowTcp* t, ns3::Time, ns3::Time now)
    {
        t->rtoNs = now.GetNanoSeconds();
    }
    static void FlowEcn(FlowTcp* t,
                        ns3::TcpSocketState::EcnState_t,
                        ns3::TcpSocketState::EcnState_t now)
    {
        t->ecn = (int)now;
    }

    void OnCongState(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t now)
    {
        if (now == ns3::TcpSocketState::CA_LOSS)
        {
            rtoCount++;
        }
        else if (now == ns3::TcpSocketState::CA_RECOVERY)
        {
            recoveryCount++;
        }
    }

    std::unordered_map<uint64_t, uint32_t> m_expected;
};

} // namespace pandasim

#endif

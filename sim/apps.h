/*
 * The traffic: one HostApp per host carries all of that host's roles.
 *
 * Flows (web search, data mining, incast responses): a new TCP connection
 * per flow, as the testbed's generator does; the sender writes the flow's
 * bytes as the socket takes them and closes (FIN after the data); the
 * sink on port 5001 counts bytes, and the flow completes when its last
 * byte is delivered (FCT = that moment - connect()).
 *
 * RPC (memcached-like): one persistent connection per client/server pair.
 * A request is 24 bytes carrying the value size the client drew from the
 * value CDF (as a GET names a key whose size the server knows); the server
 * answers with value + 32 bytes (a memcached "VALUE ... END" frame),
 * written at once with Nagle off, so responses leave as small segments
 * like a real memcached's.  Latency = request written -> last response byte
 * received.  Closed loop (next request when the answer is in, like
 * panda-mc-client) or Poisson.
 */
#ifndef PANDA_SIM_APPS_H
#define PANDA_SIM_APPS_H

#include "panda-lib.h"
#include "world.h"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/socket.h"

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace pandasim
{

/* The RPC protocol's fixed sizes: a request, and the framing around a
 * response's value. */
constexpr uint32_t kRpcRequestBytes = 24;
constexpr uint32_t kRpcResponseOverhead = 32;

struct RpcSettings
{
    const SizeCdf* values = nullptr;
    double rate = 0; /* Per pair, requests/s; 0 = closed loop. */
};

class HostApp : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();
    HostApp();
    ~HostApp() override;

    void Setup(World* world, uint32_t host);
    /* Sends flow 'id' of world->rec.flows now. */
    void SendFlow(uint32_t id);
    /* Opens a persistent RPC connection to 'server' as pair 'pair'; issues
     * requests while world->rpcActive, drawing from 'rng'. */
    void StartRpcClient(uint32_t pair, uint32_t server, const RpcSettings& s, uint64_t seed);
    /* Called when world->rpcActive turns true. */
    void RpcGo();

  private:
    void StartApplication() override;
    void StopApplication() override;

    /* Flow sink. */
    void OnFlowAccept(ns3::Ptr<ns3::Socket> s, const ns3::Address& from);
    void OnFlowRecv(ns3::Ptr<ns3::Socket> s);
    void OnPeerClose(ns3::Ptr<ns3::Socket> s);

    /* Flow sender. */
    void OnConnected(ns3::Ptr<ns3::Socket> s);
    void OnConnectFailed(ns3::Ptr<ns3::Socket> s);
    void OnTxSpace(ns3::Ptr<ns3::Socket> s, uint32_t avail);

    /* RPC server. */
    void OnRpcAccept(ns3::Ptr<ns3::Socket> s, const ns3::Address& from);
    void OnRpcServerRecv(ns3::Ptr<ns3::Socket> s);
    void OnRpcServerTx(ns3::Ptr<ns3::Socket> s, uint32_t avail);

    /* RPC client. */
    struct RpcClient;
    void OnRpcConnected(ns3::Ptr<ns3::Socket> s);
    void OnRpcClientRecv(ns3::Ptr<ns3::Socket> s);
    void IssueRequest(RpcClient* c);
    void PoissonTick(RpcClient* c);

    World* m_world = nullptr;
    uint32_t m_host = 0;
    uint32_t m_addr = 0;
    ns3::Ptr<ns3::Socket> m_flowListen, m_rpcListen;

    struct TxFlow
    {
        uint32_t id;
        uint64_t left;
    };
    std::unordered_map<ns3::Socket*, TxFlow> m_tx;
    std::unordered_map<ns3::Socket*, uint32_t> m_rx; /* Socket -> flow id. */

    struct RpcServerConn
    {
        ns3::Ptr<ns3::Socket> sock;
        std::string partial; /* Bytes of an incomplete request. */
        uint64_t pending = 0; /* Response bytes not yet written. */
        ConnKey key;
    };
    std::unordered_map<ns3::Socket*, RpcServerConn> m_rpcConns;

    /* The client side: one per pair this host is the client of. */
    struct RpcClient
    {
        uint32_t pair;
        uint32_t server;
        RpcSettings settings;
        std::unique_ptr<Rng> rng;
        ns3::Ptr<ns3::Socket> sock;
        ConnKey key;
        bool connected = false;
        std::deque<std::pair<uint32_t, uint64_t>> expect; /* Record, bytes. */
        uint64_t rxPending = 0;
        uint32_t seq = 0;
        ns3::EventId tick;
    };
    std::vector<std::unique_ptr<RpcClient>> m_clients;
    std::unordered_map<ns3::Socket*, RpcClient*> m_clientBySock;
};

} // namespace pandasim

#endif

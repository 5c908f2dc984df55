#include "apps.h"

#include "listen-socket.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pandasim
{

using namespace ns3;

NS_LOG_COMPONENT_DEFINE("PandaSimApps");

TypeId
HostApp::GetTypeId()
{
    static TypeId tid = TypeId("pandasim::HostApp")
                            .SetParent<Application>()
                            .SetGroupName("PandaSim")
                            .AddConstructor<HostApp>();
    return tid;
}

HostApp::HostApp() = default;
HostApp::~HostApp() = default;

void
HostApp::Setup(World* world, uint32_t host)
{
    m_world = world;
    m_host = host;
    m_addr = world->net.hostAddr[host].Get();
}

void
HostApp::StartApplication()
{
    /* Listeners whose accepted connections do not inherit a CE sequence
     * number from them (listen-socket.h). */
    m_flowListen = CreateListenSocket(GetNode(), m_world->freshListenerEcn);
    m_flowListen->Bind(InetSocketAddress(Ipv4Address::GetAny(), kFlowPort));
    m_flowListen->Listen();
    m_world->WatchListener(m_flowListen);
    m_flowListen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&HostApp::OnFlowAccept, this));
    /* Every host is a possible RPC server (a listening socket is cheap). */
    m_rpcListen = CreateListenSocket(GetNode(), m_world->freshListenerEcn);
    m_rpcListen->Bind(InetSocketAddress(Ipv4Address::GetAny(), kRpcPort));
    m_rpcListen->Listen();
    m_rpcListen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                   MakeCallback(&HostApp::OnRpcAccept, this));
}

void
HostApp::StopApplication()
{
    for (auto& c : m_clients)
    {
        c->tick.Cancel();
    }
}

/* ---- Flows: sender ---- */

void
HostApp::SendFlow(uint32_t id)
{
    FlowRecord& f = m_world->rec.flows[id];
    Ptr<Socket> s = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    NS_ABORT_MSG_IF(s->Bind() != 0, "host " << m_host << ": cannot bind a flow socket");
    Address local;
    s->GetSockName(local);
    f.sport = InetSocketAddress::ConvertFrom(local).GetPort();
    uint32_t dst = m_world->net.hostAddr[f.dst].Get();
    m_world->Expect(m_addr, f.sport, id);
    if (m_world->book)
    {
        m_world->book->Append(ConnKey{m_addr, dst, f.sport, kFlowPort}, f.size);
    }
    m_tx[PeekPointer(s)] = TxFlow{id, f.size};
    m_world->WatchFlow(s, id);
    s->SetConnectCallback(MakeCallback(&HostApp::OnConnected, this),
                          MakeCallback(&HostApp::OnConnectFailed, this));
    s->SetSendCallback(MakeCallback(&HostApp::OnTxSpace, this));
    f.startNs = Simulator::Now().GetNanoSeconds();
    s->Connect(InetSocketAddress(Ipv4Address(dst), kFlowPort));
}

void
HostApp::OnConnected(Ptr<Socket> s)
{
    OnTxSpace(s, s->GetTxAvailable());
}

void
HostApp::OnConnectFailed(Ptr<Socket> s)
{
    /* SYN retries exhausted: the flow stays unfinished in the records. */
    auto it = m_tx.find(PeekPointer(s));
    if (it != m_tx.end())
    {
        NS_LOG_WARN("flow " << it->second.id << ": connection failed");
        m_tx.erase(it);
    }
}

namespace
{
/* Writes up to 'left' bytes (zero-filled: only sizes matter) as far as the
 * socket's send buffer takes them; returns what remains. */
uint64_t
WriteAvailable(Ptr<Socket> s, uint64_t left)
{
    while (left > 0)
    {
        uint32_t avail = s->GetTxAvailable();
        if (avail == 0)
        {
            break;
        }
        int sent = s->Send(Create<Packet>((uint32_t)std::min<uint64_t>(left, avail)));
        if (sent <= 0)
        {
            break;
        }
        left -= (uint32_t)sent;
    }
    return left;
}
} // namespace

void
HostApp::OnTxSpace(Ptr<Socket> s, uint32_t)
{
    auto it = m_tx.find(PeekPointer(s));
    if (it == m_tx.end())
    {
        return;
    }
    it->second.left = WriteAvailable(s, it->second.left);
    if (it->second.left > 0)
    {
        return;
    }
    /* All written: FIN follows the data. */
    m_tx.erase(it);
    s->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
    s->Close();
}

/* ---- Flows: sink ---- */

void
HostApp::OnFlowAccept(Ptr<Socket> s, const Address& from)
{
    InetSocketAddress a = InetSocketAddress::ConvertFrom(from);
    uint32_t id = m_world->Claim(a.GetIpv4().Get(), a.GetPort());
    NS_ABORT_MSG_IF(id == UINT32_MAX,
                    "host " << m_host << ": connection from " << a.GetIpv4() << ":" << a.GetPort()
                            << " is no known flow");
    m_rx[PeekPointer(s)] = id;
    s->SetRecvCallback(MakeCallback(&HostApp::OnFlowRecv, this));
    s->SetCloseCallbacks(MakeCallback(&HostApp::OnPeerClose, this),
                         MakeCallback(&HostApp::OnPeerClose, this));
}

void
HostApp::OnFlowRecv(Ptr<Socket> s)
{
    auto it = m_rx.find(PeekPointer(s));
    if (it == m_rx.end())
    {
        return;
    }
    FlowRecord& f = m_world->rec.flows[it->second];
    Ptr<Packet> p;
    while ((p = s->Recv()) && p->GetSize() > 0)
    {
        f.received += p->GetSize();
    }
    if (f.received >= f.size && f.finishNs < 0)
    {
        f.finishNs = Simulator::Now().GetNanoSeconds();
        if (m_world->book)
        {
            m_world->book->Forget(ConnKey{m_world->net.hostAddr[f.src].Get(), m_addr, f.sport, kFlowPort});
        }
        m_world->onFlowDone(f.id);
    }
}

void
HostApp::OnPeerClose(Ptr<Socket> s)
{
    m_rx.erase(PeekPointer(s));
    m_rpcConns.erase(PeekPointer(s));
    s->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
    s->Close();
}

/* ---- RPC server ---- */

void
HostApp::OnRpcAccept(Ptr<Socket> s, const Address& from)
{
    InetSocketAddress a = InetSocketAddress::ConvertFrom(from);
    RpcServerConn& c = m_rpcConns[PeekPointer(s)];
    c.sock = s;
    c.key = ConnKey{m_addr, a.GetIpv4().Get(), kRpcPort, a.GetPort()};
    m_world->Watch(s);
    s->SetRecvCallback(MakeCallback(&HostApp::OnRpcServerRecv, this));
    s->SetSendCallback(MakeCallback(&HostApp::OnRpcServerTx, this));
    s->SetCloseCallbacks(MakeCallback(&HostApp::OnPeerClose, this),
                         MakeCallback(&HostApp::OnPeerClose, this));
}

namespace
{
uint32_t
ValueSizeOf(const char* req)
{
    uint32_t v;
    memcpy(&v, req, sizeof v);
    return v;
}
} // namespace

void
HostApp::OnRpcServerRecv(Ptr<Socket> s)
{
    auto it = m_rpcConns.find(PeekPointer(s));
    if (it == m_rpcConns.end())
    {
        return;
    }
    RpcServerConn& c = it->second;
    Ptr<Packet> p;
    while ((p = s->Recv()) && p->GetSize() > 0)
    {
        size_t old = c.partial.size();
        c.partial.resize(old + p->GetSize());
        p->CopyData(reinterpret_cast<uint8_t*>(&c.partial[old]), p->GetSize());
    }
    size_t used = 0;
    while (c.partial.size() - used >= kRpcRequestBytes)
    {
        uint64_t n = (uint64_t)ValueSizeOf(&c.partial[used]) + kRpcResponseOverhead;
        if (m_world->book)
        {
            m_world->book->Append(c.key, n);
        }
        c.pending += n;
        used += kRpcRequestBytes;
    }
    c.partial.erase(0, used);
    OnRpcServerTx(s, s->GetTxAvailable());
}

void
HostApp::OnRpcServerTx(Ptr<Socket> s, uint32_t)
{
    auto it = m_rpcConns.find(PeekPointer(s));
    if (it != m_rpcConns.end())
    {
        it->second.pending = WriteAvailable(s, it->second.pending);
    }
}

/* ---- RPC client ---- */

void
HostApp::StartRpcClient(uint32_t pair, uint32_t server, const RpcSettings& st, uint64_t seed)
{
    auto c = std::make_unique<RpcClient>();
    c->pair = pair;
    c->server = server;
    c->settings = st;
    c->rng = std::make_unique<Rng>(seed);
    c->sock = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    NS_ABORT_MSG_IF(c->sock->Bind() != 0, "host " << m_host << ": cannot bind an RPC socket");
    Address local;
    c->sock->GetSockName(local);
    uint32_t srv = m_world->net.hostAddr[server].Get();
    c->key = ConnKey{m_addr, srv, InetSocketAddress::ConvertFrom(local).GetPort(), kRpcPort};
    m_world->rpcConns.push_back(World::RpcConn{pair, server, m_host, c->key.lport});
    m_world->Watch(c->sock);
    c->sock->SetConnectCallback(MakeCallback(&HostApp::OnRpcConnected, this),
                                MakeNullCallback<void, Ptr<Socket>>());
    c->sock->SetRecvCallback(MakeCallback(&HostApp::OnRpcClientRecv, this));
    c->sock->Connect(InetSocketAddress(Ipv4Address(srv), kRpcPort));
    m_clientBySock[PeekPointer(c->sock)] = c.get();
    m_clients.push_back(std::move(c));
}

void
HostApp::OnRpcConnected(Ptr<Socket> s)
{
    RpcClient* c = m_clientBySock.at(PeekPointer(s));
    c->connected = true;
    RpcGo();
}

void
HostApp::RpcGo()
{
    for (auto& c : m_clients)
    {
        if (!c->connected || !m_world->rpcActive)
        {
            continue;
        }
        if (c->settings.rate > 0)
        {
            if (!c->tick.IsRunning())
            {
                PoissonTick(c.get());
            }
        }
        else if (c->expect.empty())
        {
            IssueRequest(c.get());
        }
    }
}

void
HostApp::PoissonTick(RpcClient* c)
{
    if (!m_world->rpcActive)
    {
        return;
    }
    IssueRequest(c);
    c->tick = Simulator::Schedule(Seconds(c->rng->Exp(1.0 / c->settings.rate)),
                                  &HostApp::PoissonTick, this, c);
}

void
HostApp::IssueRequest(RpcClient* c)
{
    if (!m_world->rpcActive || (m_world->rpcLimit && m_world->rpcIssued >= m_world->rpcLimit))
    {
        return;
    }
    m_world->rpcIssued++;
    double v = std::ceil(c->settings.values->Sample(*c->rng));
    uint32_t value = (uint32_t)std::max(1.0, v);
    uint8_t req[kRpcRequestBytes] = {};
    memcpy(req, &value, sizeof value);
    memcpy(req + 4, &c->seq, sizeof c->seq);
    c->seq++;

    auto& rpcs = m_world->rec.rpcs;
    rpcs.push_back(RpcRecord{c->pair, value, Simulator::Now().GetNanoSeconds(), -1});
    c->expect.emplace_back((uint32_t)(rpcs.size() - 1),
                           (uint64_t)value + kRpcResponseOverhead);
    if (m_world->book)
    {
        m_world->book->Append(c->key, kRpcRequestBytes);
    }
    /* 24 bytes always fit: the send buffer holds 1 MB and requests are
     * answered in order. */
    int sent = c->sock->Send(Create<Packet>(req, kRpcRequestBytes));
    NS_ABORT_MSG_IF(sent != (int)kRpcRequestBytes, "RPC client: send buffer full");
}

void
HostApp::OnRpcClientRecv(Ptr<Socket> s)
{
    RpcClient* c = m_clientBySock.at(PeekPointer(s));
    Ptr<Packet> p;
    while ((p = s->Recv()) && p->GetSize() > 0)
    {
        c->rxPending += p->GetSize();
    }
    bool answered = false;
    while (!c->expect.empty() && c->rxPending >= c->expect.front().second)
    {
        c->rxPending -= c->expect.front().second;
        m_world->rec.rpcs[c->expect.front().first].doneNs = Simulator::Now().GetNanoSeconds();
        c->expect.pop_front();
        answered = true;
        if (++m_world->rpcAnswered == m_world->rpcLimit)
        {
            m_world->onRpcLimit();
        }
    }
    if (answered && c->settings.rate == 0 && c->expect.empty())
    {
        IssueRequest(c);
    }
}

} // namespace pandasim

#include "tsl-incast.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace pandasim
{

using namespace ns3;

NS_LOG_COMPONENT_DEFINE("TslIncast");
NS_OBJECT_ENSURE_REGISTERED(IncastAggregator);
NS_OBJECT_ENSURE_REGISTERED(IncastWorker);

namespace
{
int64_t
NowNs()
{
    return Simulator::Now().GetNanoSeconds();
}

/* Sends 'bytes' (zero-filled: only sizes matter) and ends the message. */
void
SendMessage(Ptr<Socket> s, uint32_t bytes, bool endOfRound)
{
    int sent = s->Send(Create<Packet>(bytes));
    NS_ABORT_MSG_UNLESS(sent == (int)bytes, "tsl-sim: socket buffer too small for a message");
    DynamicCast<TslSocket>(s)->EndMessage(endOfRound);
}

/* Fairness: when flow i starts and stops sending. */
double
FlowStart(const TslConfig& c, uint32_t i)
{
    return i * c.staggerS;
}

double
FlowStop(const TslConfig& c, uint32_t i)
{
    return (c.workers - 1) * c.staggerS + c.holdS + (i + 1) * c.staggerS;
}
} // namespace

TypeId
IncastAggregator::GetTypeId()
{
    static TypeId tid =
        TypeId("pandasim::IncastAggregator").SetParent<Application>().SetGroupName("PandaSim");
    return tid;
}

void
IncastAggregator::Setup(const TslConfig* cfg, std::vector<Ipv4Address> workers, IncastRecord* rec)
{
    m_cfg = cfg;
    m_workers = std::move(workers);
    m_rec = rec;
    m_received.assign(m_workers.size(), 0);
    m_sampled.assign(m_workers.size(), 0);
}

void
IncastAggregator::StartApplication()
{
    for (const Ipv4Address& w : m_workers)
    {
        Ptr<Socket> s = Socket::CreateSocket(GetNode(), TslSocketFactory::GetTypeId());
        NS_ABORT_MSG_IF(s->Bind() != 0, "aggregator: cannot bind");
        s->SetConnectCallback(MakeCallback(&IncastAggregator::OnConnected, this),
                              MakeCallback(&IncastAggregator::OnConnectFailed, this));
        s->SetRecvCallback(MakeCallback(&IncastAggregator::OnRecv, this));
        s->Connect(InetSocketAddress(w, kTslPort));
        m_sockets.push_back(s);
    }
}

void
IncastAggregator::StopApplication()
{
}

void
IncastAggregator::OnConnected(Ptr<Socket>)
{
    if (++m_connected < m_sockets.size())
    {
        return;
    }
    m_rec->establishedNs = NowNs();
    if (m_cfg->mode == TslMode::Incast)
    {
        StartRound();
        return;
    }
    for (uint32_t i = 0; i < m_sockets.size(); i++)
    {
        Simulator::Schedule(Seconds(FlowStart(*m_cfg, i)), &IncastAggregator::Request, this, i);
    }
    Simulator::Schedule(Seconds(m_cfg->sampleS), &IncastAggregator::Sample, this);
}

void
IncastAggregator::OnConnectFailed(Ptr<Socket>)
{
    m_rec->connectFailures++;
}

void
IncastAggregator::Request(uint32_t worker)
{
    SendMessage(m_sockets[worker], m_cfg->requestBytes, false);
}

void
IncastAggregator::StartRound()
{
    m_doneThisRound = 0;
    m_rec->roundStartNs.push_back(NowNs());
    m_rec->workerDoneNs.emplace_back(m_sockets.size(), -1);
    for (uint32_t i = 0; i < m_sockets.size(); i++)
    {
        Request(i);
    }
}

void
IncastAggregator::OnRecv(Ptr<Socket> s)
{
    uint32_t i = std::find(m_sockets.begin(), m_sockets.end(), s) - m_sockets.begin();
    NS_ABORT_MSG_UNLESS(i < m_sockets.size(), "aggregator: data on an unknown socket");
    while (Ptr<Packet> p = s->Recv())
    {
        if (p->GetSize() == 0)
        {
            break;
        }
        m_received[i] += p->GetSize();
        m_rec->bytes += p->GetSize();
    }
    if (m_cfg->mode != TslMode::Incast)
    {
        return;
    }
    uint64_t want = (uint64_t)(m_round + 1) * m_cfg->sruBytes;
    std::vector<int64_t>& done = m_rec->workerDoneNs[m_round];
    if (m_received[i] < want || done[i] >= 0)
    {
        return;
    }
    done[i] = NowNs();
    if (++m_doneThisRound < m_sockets.size())
    {
        return;
    }
    m_rec->roundEndNs.push_back(NowNs());
    if (++m_round < m_cfg->rounds)
    {
        /* Next event, not now: TCP acknowledges (the TSA of TSL's window
         * alignment) when the segment arrives, before the application
         * reads it and requests again; ns-3 hands the data to the
         * application inside the receive path, before that ACK. */
        Simulator::ScheduleNow(&IncastAggregator::StartRound, this);
        return;
    }
    m_rec->endNs = NowNs();
    Simulator::Stop();
}

void
IncastAggregator::Sample()
{
    std::vector<uint64_t> row(m_received.size());
    for (size_t i = 0; i < row.size(); i++)
    {
        row[i] = m_received[i] - m_sampled[i];
        m_sampled[i] = m_received[i];
    }
    m_rec->samples.push_back(std::move(row));
    if (Simulator::Now().GetSeconds() < FlowStop(*m_cfg, m_cfg->workers - 1) + m_cfg->staggerS)
    {
        Simulator::Schedule(Seconds(m_cfg->sampleS), &IncastAggregator::Sample, this);
    }
    else
    {
        m_rec->endNs = NowNs();
        Simulator::Stop();
    }
}

TypeId
IncastWorker::GetTypeId()
{
    static TypeId tid =
        TypeId("pandasim::IncastWorker").SetParent<Application>().SetGroupName("PandaSim");
    return tid;
}

void
IncastWorker::Setup(const TslConfig* cfg, uint32_t index)
{
    m_cfg = cfg;
    m_index = index;
}

void
IncastWorker::StartApplication()
{
    m_listen = Socket::CreateSocket(GetNode(), TslSocketFactory::GetTypeId());
    NS_ABORT_MSG_IF(m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), kTslPort)) != 0,
                    "worker: cannot bind");
    m_listen->Listen();
    m_listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                MakeCallback(&IncastWorker::OnAccept, this));
}

void
IncastWorker::StopApplication()
{
}

void
IncastWorker::OnAccept(Ptr<Socket> s, const Address&)
{
    s->SetRecvCallback(MakeCallback(&IncastWorker::OnRecv, this));
    m_sockets.push_back(s);
}

void
IncastWorker::OnRecv(Ptr<Socket> s)
{
    while (Ptr<Packet> p = s->Recv())
    {
        if (p->GetSize() == 0)
        {
            break;
        }
        m_pending += p->GetSize();
    }
    for (; m_pending >= m_cfg->requestBytes; m_pending -= m_cfg->requestBytes)
    {
        if (m_cfg->mode == TslMode::Incast)
        {
            SendMessage(s, m_cfg->sruBytes, true);
        }
        else if (!m_streaming)
        {
            m_streaming = true;
            s->SetSendCallback(MakeCallback(&IncastWorker::Fill, this));
            Fill(s, 0);
        }
    }
}

void
IncastWorker::Fill(Ptr<Socket> s, uint32_t)
{
    /* A long flow keeps its send buffer full until its stop time. */
    if (Simulator::Now().GetSeconds() >= FlowStop(*m_cfg, m_index))
    {
        s->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
        return;
    }
    uint32_t avail = s->GetTxAvailable();
    if (avail > 0)
    {
        s->Send(Create<Packet>(avail));
    }
}

} // namespace pandasim

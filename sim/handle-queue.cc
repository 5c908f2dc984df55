#include "handle-queue.h"

#include "ns3/log.h"
#include "ns3/queue-size.h"

#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("HandleQueue");
NS_OBJECT_ENSURE_REGISTERED(HandleQueue);

TypeId
HandleQueue::GetTypeId()
{
    static TypeId tid = TypeId("ns3::HandleQueue")
                            .SetParent<Queue<QueueDiscItem>>()
                            .SetGroupName("PandaSim")
                            .AddConstructor<HandleQueue>();
    return tid;
}

HandleQueue::HandleQueue()
{
    /* The owning queue disc applies the buffer limits; this queue must
     * accept whatever the owner decided to keep. */
    SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, std::numeric_limits<uint32_t>::max()));
}

HandleQueue::~HandleQueue() = default;

Ptr<HandleQueue>
HandleQueue::AttachTo(QueueDisc& qd)
{
    if (qd.GetNQueueDiscClasses() > 0 || qd.GetNPacketFilters() > 0 ||
        qd.GetNInternalQueues() > 0)
    {
        NS_LOG_ERROR(qd.GetInstanceTypeId().GetName()
                     << " has no classes, filters or configurable queues");
        return nullptr;
    }
    Ptr<HandleQueue> q = CreateObject<HandleQueue>();
    qd.AddInternalQueue(q);
    return q;
}

HandleQueue::Handle
HandleQueue::Hold(Ptr<QueueDiscItem> item)
{
    Iterator it;
    bool ok = DoEnqueue(GetContainer().end(), item, it);
    NS_ABORT_MSG_UNLESS(ok, "HandleQueue refused a packet");
    return it;
}

Ptr<QueueDiscItem>
HandleQueue::Release(Handle h)
{
    return DoDequeue(h);
}

bool
HandleQueue::Enqueue(Ptr<QueueDiscItem> item)
{
    return DoEnqueue(GetContainer().end(), item);
}

Ptr<QueueDiscItem>
HandleQueue::Dequeue()
{
    return DoDequeue(GetContainer().begin());
}

Ptr<QueueDiscItem>
HandleQueue::Remove()
{
    return DoRemove(GetContainer().begin());
}

Ptr<const QueueDiscItem>
HandleQueue::Peek() const
{
    return DoPeek(GetContainer().begin());
}

} // namespace ns3

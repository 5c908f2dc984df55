/*
 * HandleQueue: the internal queue of a QueueDisc whose packets are ordered
 * by something else (the lib/panda scheduler core, the oracle's rank
 * sets).  ns-3 keeps a queue disc's packet/byte counters, its sojourn-time
 * trace and its statistics only through internal queues' Enqueue/Dequeue
 * traces; this queue lets such a queue disc hold each packet here (Hold
 * returns where) and release an arbitrary one (Release), so that ns-3's
 * accounting stays exact while the order is the scheduler's.
 *
 * Cost: one list node per held packet; Hold and Release are O(1).
 */
#ifndef PANDA_SIM_HANDLE_QUEUE_H
#define PANDA_SIM_HANDLE_QUEUE_H

#include "ns3/queue-disc.h"
#include "ns3/queue-item.h"
#include "ns3/queue.h"

namespace ns3
{

class HandleQueue : public Queue<QueueDiscItem>
{
  public:
    static TypeId GetTypeId();
    HandleQueue();
    ~HandleQueue() override;

    using Handle = Queue<QueueDiscItem>::ConstIterator;

    /* For a queue disc's CheckConfig: if 'qd' has no classes, filters or
     * internal queues, gives it a HandleQueue and returns it; else logs
     * why and returns null (the configuration is refused). */
    static Ptr<HandleQueue> AttachTo(QueueDisc& qd);

    /* Holds 'item' (never refuses: the owner enforces the limits) and
     * returns where it is. */
    Handle Hold(Ptr<QueueDiscItem> item);
    /* Takes back a held item. */
    Ptr<QueueDiscItem> Release(Handle h);

    /* Queue<> interface (FIFO order; used by Flush and disposal only). */
    bool Enqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> Dequeue() override;
    Ptr<QueueDiscItem> Remove() override;
    Ptr<const QueueDiscItem> Peek() const override;
};

} // namespace ns3

#endif

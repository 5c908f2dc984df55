/*
 * TCP SkyLine's labels on the wire (seed 003, §4): the kind of a labelled
 * segment travels in the IPv4 DSCP, where the switches' label-aware WRED
 * (lib/panda scheduler core) sees it and the peer's TCP reads it.
 *
 * Encoding (one place: TslDscp / TslFlagsOfDscp).  Unlabelled segments keep
 * DSCP 0; a labelled one carries DSCP 32 | flags, flags from TslFlag:
 *
 *   SIGNAL  data: signal packet (SP, the last packet of a window or of a
 *           message); pure ACK: signal ACK (SA)
 *   TAIL    data: tail signal packet (TSP, last packet of a round); pure
 *           ACK: tail signal ACK (TSA, the round's data all received)
 *   RTX     a retransmission
 *   DUMMY   dummy signal packet (DSP: an empty segment asking for an SA)
 *
 * The paper gives each kind "a different DSCP value" without the numbers;
 * 32..47 (class selector 4 and its AF4x neighbours) keeps all labels in one
 * range so that one WRED rule (DSCP 32-47) protects them and 0-31 is the
 * unlabelled rule.  Whether a segment is data or an ACK tells SP from SA,
 * so the two share a bit.
 *
 * TslLabelTag carries the flags inside one host: TslSocket attaches it to a
 * segment it sends; TslWire, between TCP and IPv4 (where HostMarker sits
 * for Panda), moves it into the DSCP of the SocketIpTosTag that IPv4 turns
 * into the header (keeping TCP's ECN bits).  On receipt TslWire reads the
 * arriving IPv4 header's DSCP (Ipv4L3Protocol's LocalDeliver trace, just
 * before the packet goes up to TCP) and attaches the decoded flags for the
 * receiving TslSocket.  Between hosts only the DSCP carries them.
 *
 * Labelled segments that TCP sends Not-ECT (pure ACKs: DSP, SA, TSA) are
 * sent ECT(0): WRED marks ECT packets between its thresholds and drops
 * Not-ECT ones, and the labels exist so that these packets are not the
 * ones dropped (§3.1: "the switch does not drop labelled packets").
 */
#ifndef PANDA_SIM_TSL_WIRE_H
#define PANDA_SIM_TSL_WIRE_H

#include "ns3/ip-l4-protocol.h"
#include "ns3/ipv4-header.h"
#include "ns3/node.h"
#include "ns3/object.h"
#include "ns3/tag.h"

#include <cstdint>

namespace pandasim
{

enum TslFlag : uint8_t
{
    kTslSignal = 1,
    kTslTail = 2,
    kTslRtx = 4,
    kTslDummy = 8,
};

/* The DSCP range of labelled segments (the WRED rule's label). */
constexpr uint8_t kTslDscpMin = 32, kTslDscpMax = 47;

/* DSCP of a segment with 'flags' (0: unlabelled, DSCP 0). */
inline uint8_t
TslDscp(uint8_t flags)
{
    return flags ? (uint8_t)(kTslDscpMin | (flags & 15)) : 0;
}

/* Flags of a received DSCP (0 for anything outside the labelled range). */
inline uint8_t
TslFlagsOfDscp(uint8_t dscp)
{
    return dscp >= kTslDscpMin && dscp <= kTslDscpMax ? (uint8_t)(dscp & 15) : 0;
}

class TslLabelTag : public ns3::Tag
{
  public:
    TslLabelTag(uint8_t flags = 0)
        : m_flags(flags)
    {
    }
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(ns3::TagBuffer i) const override;
    void Deserialize(ns3::TagBuffer i) override;
    void Print(std::ostream& os) const override;
    uint8_t Flags() const
    {
        return m_flags;
    }

  private:
    uint8_t m_flags;
};

/* One per host running TSL (installed on every host of a TSL run). */
class TslWire : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();

    /* Interposes between 'node's TCP and IPv4 (after any marker already
     * there) and hooks its IPv4's local delivery. */
    void Install(ns3::Ptr<ns3::Node> node);

    /* Labelled segments sent and received through this host. */
    uint64_t LabelledSent() const
    {
        return m_sent;
    }
    uint64_t LabelledReceived() const
    {
        return m_received;
    }

  private:
    void Send(ns3::Ptr<ns3::Packet> p,
              ns3::Ipv4Address src,
              ns3::Ipv4Address dst,
              uint8_t proto,
              ns3::Ptr<ns3::Ipv4Route> route);
    void Deliver(const ns3::Ipv4Header& ip, ns3::Ptr<const ns3::Packet> p, uint32_t iif);

    ns3::IpL4Protocol::DownTargetCallback m_down;
    uint64_t m_sent = 0, m_received = 0;
};

} // namespace pandasim

#endif

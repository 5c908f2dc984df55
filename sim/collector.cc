#include "collector.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace pandasim
{

SizeCollector::SizeCollector(uint16_t fltSourcePort, uint16_t fhtDestPort)
    : m_fltPort(fltSourcePort),
      m_fhtPort(fhtDestPort)
{
}

void
SizeCollector::Add(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport, uint32_t ipBytes,
                   uint32_t tcpHeaderBytes, uint32_t ack, int64_t nowNs)
{
    Key k{(uint64_t)src << 32 | dst, (uint64_t)sport << 16 | dport};
    if (sport == m_fltPort)
    {
        m_flt[k][ipBytes]++;
        m_fltPackets++;
        m_fltOrder.push_back(Segment{src, dst, sport, dport, ipBytes, tcpHeaderBytes, ack, nowNs});
    }
    else if (dport == m_fhtPort)
    {
        m_fht[k][ipBytes]++;
        m_fhtPackets++;
    }
}

void
SizeCollector::WriteOne(const std::string& path,
                        const std::unordered_map<Key, Histogram, KeyHash>& flows)
{
    FILE* f = fopen(path.c_str(), "w");
    if (!f)
    {
        throw std::runtime_error("cannot write " + path + ": " + strerror(errno));
    }
    fputs("# panda-sim collection: IP packet size, count, connection\n", f);
    for (const auto& [k, hist] : flows)
    {
        for (const auto& [size, count] : hist)
        {
            fprintf(f, "%u %llu c%016llx%08llx\n", size, (unsigned long long)count,
                    (unsigned long long)k.a, (unsigned long long)k.b);
        }
    }
    if (ferror(f) || fclose(f) != 0)
    {
        throw std::runtime_error("error writing " + path);
    }
}

namespace
{

void
Put16(uint8_t* p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

void
Put32(uint8_t* p, uint32_t v)
{
    Put16(p, v >> 16);
    Put16(p + 2, v);
}

} // namespace

/* pcap (not pcapng), microsecond timestamps, link type 101 (LINKTYPE_RAW:
 * the record starts with the IP header).  Each record holds the 20-byte
 * IPv4 header and the first 20 bytes of the TCP header, whose data offset
 * counts the options that were sent; the record's original length and the
 * IP total length are the segment's, so a reader finds the payload size
 * as in any capture truncated by a snap length. */
void
SizeCollector::WritePcap(const std::string& path) const
{
    FILE* f = fopen(path.c_str(), "wb");
    if (!f)
    {
        throw std::runtime_error("cannot write " + path + ": " + strerror(errno));
    }
    struct
    {
        uint32_t magic;
        uint16_t major, minor;
        int32_t zone;
        uint32_t sigfigs, snaplen, linktype;
    } head = {0xa1b2c3d4, 2, 4, 0, 0, 65535, 101};
    fwrite(&head, sizeof head, 1, f);
    for (const Segment& s : m_fltOrder)
    {
        uint32_t rec[4] = {(uint32_t)(s.nowNs / 1000000000), (uint32_t)(s.nowNs / 1000 % 1000000),
                           40, s.ipBytes};
        uint8_t pkt[40] = {0};
        pkt[0] = 0x45;
        Put16(pkt + 2, s.ipBytes);
        pkt[8] = 64;
        pkt[9] = 6;
        Put32(pkt + 12, s.src);
        Put32(pkt + 16, s.dst);
        Put16(pkt + 20, s.sport);
        Put16(pkt + 22, s.dport);
        Put32(pkt + 28, s.ack);
        pkt[32] = (uint8_t)(s.tcpHeaderBytes / 4 << 4);
        pkt[33] = 0x10; /* ACK */
        fwrite(rec, sizeof rec, 1, f);
        fwrite(pkt, sizeof pkt, 1, f);
    }
    if (ferror(f) || fclose(f) != 0)
    {
        throw std::runtime_error("error writing " + path);
    }
}

void
SizeCollector::Write(const std::string& dir) const
{
    WriteOne(dir + "/flt.hist", m_flt);
    WriteOne(dir + "/fht.hist", m_fht);
    WritePcap(dir + "/flt.pcap");
}

} // namespace pandasim

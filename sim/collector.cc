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
SizeCollector::Add(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport, uint32_t ipBytes)
{
    Key k{(uint64_t)src << 32 | dst, (uint64_t)sport << 16 | dport};
    if (sport == m_fltPort)
    {
        m_flt[k][ipBytes]++;
        m_fltPackets++;
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

void
SizeCollector::Write(const std::string& dir) const
{
    WriteOne(dir + "/flt.hist", m_flt);
    WriteOne(dir + "/fht.hist", m_fht);
}

} // namespace pandasim

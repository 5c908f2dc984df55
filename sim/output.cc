#include "output.h"

#include <sys/resource.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace pandasim
{

void
JsonWriter::Key(const char* key)
{
    if (!m_first)
    {
        m_os << ",";
    }
    if (m_depth > 0)
    {
        m_os << "\n" << std::string(2 * m_depth, ' ');
    }
    m_first = false;
    if (key)
    {
        m_os << Quote(key) << ": ";
    }
}

std::string
JsonWriter::Quote(const std::string& s)
{
    std::string o = "\"";
    for (char ch : s)
    {
        unsigned char c = (unsigned char)ch;
        if (c == '"' || c == '\\')
        {
            o += '\\';
            o += ch;
        }
        else if (c < 0x20)
        {
            char buf[8];
            snprintf(buf, sizeof buf, "\\u%04x", c);
            o += buf;
        }
        else
        {
            o += ch;
        }
    }
    return o + "\"";
}

JsonWriter&
JsonWriter::Begin(const char* key)
{
    Key(key);
    m_os << "{";
    m_first = true;
    m_depth++;
    return *this;
}

JsonWriter&
JsonWriter::End()
{
    m_depth--;
    m_os << "\n" << std::string(2 * m_depth, ' ') << "}";
    m_first = false;
    return *this;
}

JsonWriter&
JsonWriter::BeginArray(const char* key)
{
    Key(key);
    m_os << "[";
    m_first = true;
    m_depth++;
    return *this;
}

JsonWriter&
JsonWriter::EndArray()
{
    m_depth--;
    m_os << "]";
    m_first = false;
    return *this;
}

JsonWriter&
JsonWriter::Str(const char* key, const std::string& v)
{
    Key(key);
    m_os << Quote(v);
    return *this;
}

JsonWriter&
JsonWriter::Num(const char* key, double v)
{
    Key(key);
    if (std::isfinite(v))
    {
        char buf[32];
        snprintf(buf, sizeof buf, "%.10g", v);
        m_os << buf;
    }
    else
    {
        m_os << "null";
    }
    return *this;
}

JsonWriter&
JsonWriter::Int(const char* key, int64_t v)
{
    Key(key);
    m_os << v;
    return *this;
}

JsonWriter&
JsonWriter::UInt(const char* key, uint64_t v)
{
    Key(key);
    m_os << v;
    return *this;
}

JsonWriter&
JsonWriter::Bool(const char* key, bool v)
{
    Key(key);
    m_os << (v ? "true" : "false");
    return *this;
}

JsonWriter&
JsonWriter::Null(const char* key)
{
    Key(key);
    m_os << "null";
    return *this;
}

JsonWriter&
JsonWriter::Raw(const char* key, const std::string& json)
{
    Key(key);
    m_os << json;
    return *this;
}

namespace
{
FILE*
Open(const std::string& dir, const std::string& name)
{
    std::string path = dir + "/" + name;
    FILE* f = fopen(path.c_str(), "w");
    if (!f)
    {
        throw std::runtime_error("cannot write " + path + ": " + strerror(errno));
    }
    return f;
}

void
Close(FILE* f, const std::string& dir, const std::string& name)
{
    if (ferror(f) || fclose(f) != 0)
    {
        throw std::runtime_error("error writing " + dir + "/" + name);
    }
}
} // namespace

void
WriteRecords(const std::string& dir, const RunRecords& rec)
{
    FILE* f = Open(dir, "flows.csv");
    fputs("id,kind,group,src,dst,size,start_ns,finish_ns,ideal_ns\n", f);
    for (const FlowRecord& r : rec.flows)
    {
        fprintf(f, "%u,%s,%u,%u,%u,%llu,%lld,%lld,%lld\n", r.id,
                r.kind == FlowKind::Incast ? "incast" : "background", r.group, r.src, r.dst,
                (unsigned long long)r.size, (long long)r.startNs, (long long)r.finishNs,
                (long long)r.idealNs);
    }
    Close(f, dir, "flows.csv");

    f = Open(dir, "rpc.csv");
    fputs("pair,value,sent_ns,done_ns\n", f);
    for (const RpcRecord& r : rec.rpcs)
    {
        fprintf(f, "%u,%u,%lld,%lld\n", r.pair, r.valueSize, (long long)r.sentNs,
                (long long)r.doneNs);
    }
    Close(f, dir, "rpc.csv");
}

void
WriteFile(const std::string& dir, const std::string& name, const std::string& text)
{
    FILE* f = Open(dir, name);
    fputs(text.c_str(), f);
    Close(f, dir, name);
}

long
PeakRssKb()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

} // namespace pandasim

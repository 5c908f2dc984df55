/*
 * Adapter between the simulator and lib/panda: every lib/panda call of the
 * simulator (except the scheduler core's, in sched-queue-disc.cc) is here.
 */
#include "panda-lib.h"

#include <arpa/inet.h>

#include <cstdlib>
#include <stdexcept>

extern "C" {
#include <panda/cdf.h>
#include <panda/conn-table.h>
#include <panda/packet.h>
#include <panda/policy.h>
#include <panda/rng.h>
}

namespace pandasim
{

namespace
{
/* Takes ownership of a malloc()ed lib/panda message. */
std::string
TakeMessage(char* msg)
{
    std::string s = msg ? msg : "unknown error";
    free(msg);
    return s;
}
} // namespace

/* ---- MarkPolicy ---- */

struct MarkPolicy::Impl
{
    panda_policy p;
};

MarkPolicy::MarkPolicy(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{
}

MarkPolicy::~MarkPolicy() = default;

std::unique_ptr<MarkPolicy>
MarkPolicy::Parse(const std::string& text, std::string* err)
{
    auto impl = std::make_unique<Impl>();
    char* msg = panda_policy_parse(text.c_str(), &impl->p);
    if (msg)
    {
        *err = TakeMessage(msg);
        return nullptr;
    }
    return std::unique_ptr<MarkPolicy>(new MarkPolicy(std::move(impl)));
}

unsigned
MarkPolicy::Levels() const
{
    return m_impl->p.n_levels;
}

uint8_t
MarkPolicy::Dscp(unsigned level) const
{
    return m_impl->p.dscp[level < m_impl->p.n_levels ? level : m_impl->p.n_levels - 1];
}

unsigned
MarkPolicy::LevelOf(int64_t counter) const
{
    return panda_policy_level(&m_impl->p, counter);
}

bool
MarkPolicy::IsPias() const
{
    return m_impl->p.kind == PANDA_KIND_PIAS;
}

std::string
MarkPolicy::Text() const
{
    int n = panda_policy_format(&m_impl->p, nullptr, 0);
    std::string s(n + 1, '\0');
    panda_policy_format(&m_impl->p, &s[0], s.size());
    s.resize(n);
    return s;
}

/* ---- ConnTable ---- */

struct ConnTable::Impl
{
    panda_table* t;
};

ConnTable::ConnTable(uint32_t capacity, uint32_t idle_ms)
    : m_impl(std::make_unique<Impl>())
{
    panda_table_config cfg = {};
    cfg.capacity = capacity;
    cfg.idle_timeout_ms = idle_ms;
    cfg.n_shards = 1; /* ns-3 is single-threaded: one shard, one lock. */
    /* A fixed hash seed: a simulation places the same connections in the
     * same slots on every run (the datapath's default, a seed per table,
     * would make evictions differ between runs of one RngRun). */
    cfg.seed = 0x70616e6461;
    char* err = nullptr;
    m_impl->t = panda_table_create(&cfg, &err);
    if (!m_impl->t)
    {
        throw std::runtime_error("connection table: " + TakeMessage(err));
    }
}

ConnTable::~ConnTable()
{
    panda_table_destroy(m_impl->t);
}

namespace
{
panda_pkt
ToPkt(const TcpSegmentFacts& seg)
{
    panda_pkt pkt = {};
    pkt.family = 4;
    pkt.proto = 6;
    pkt.tcp_flags = seg.flags;
    pkt.sport = htons(seg.sport);
    pkt.dport = htons(seg.dport);
    pkt.src.v4 = htonl(seg.src);
    pkt.dst.v4 = htonl(seg.dst);
    pkt.payload = seg.payload;
    return pkt;
}
} // namespace

MarkVerdict
ConnTable::Classify(const MarkPolicy& policy, const TcpSegmentFacts& seg, uint32_t now_ms)
{
    panda_pkt pkt = ToPkt(seg);
    panda_table_verdict v;
    panda_table_classify(m_impl->t, &policy.m_impl->p, &pkt, now_ms, &v);
    return MarkVerdict{v.level, v.dscp};
}

bool
ConnTable::Lookup(const TcpSegmentFacts& seg, int64_t* counter) const
{
    panda_pkt pkt = ToPkt(seg);
    return panda_table_lookup(m_impl->t, &pkt, counter);
}

ConnTable::Stats
ConnTable::GetStats() const
{
    struct panda_table_stats s;
    panda_table_stats(m_impl->t, &s);
    Stats out;
    out.connections = s.connections;
    out.inserted = s.inserted;
    out.removed = s.removed;
    out.evicted = s.evicted;
    out.expired = s.expired;
    out.packets.assign(s.packets, s.packets + PANDA_MAX_LEVELS);
    out.bytes = s.bytes_allocated;
    return out;
}

uint8_t
TosWithDscp(uint8_t tos, uint8_t dscp)
{
    return panda_pkt_tos_set_dscp(tos, dscp);
}

/* ---- Rng ---- */

struct Rng::Impl
{
    panda_rng r;
};

Rng::Rng(uint64_t seed)
    : m_impl(std::make_unique<Impl>())
{
    panda_rng_seed(&m_impl->r, seed);
}

Rng::~Rng() = default;

double
Rng::Uniform()
{
    return panda_rng_uniform(&m_impl->r);
}

double
Rng::Exp(double mean)
{
    return panda_rng_exp(&m_impl->r, mean);
}

uint64_t
Rng::Next()
{
    return panda_rng_next(&m_impl->r);
}

uint32_t
Rng::Below(uint32_t n)
{
    /* Multiply-shift: unbiased enough for n << 2^32 and cheap. */
    return (uint32_t)(((Next() >> 32) * (uint64_t)n) >> 32);
}

/* ---- SizeCdf ---- */

struct SizeCdf::Impl
{
    panda_cdf c = {};
};

SizeCdf::SizeCdf(const std::string& file)
    : m_impl(std::make_unique<Impl>())
{
    char* err = panda_cdf_load(&m_impl->c, file.c_str());
    if (err)
    {
        throw std::runtime_error(TakeMessage(err));
    }
}

SizeCdf::~SizeCdf()
{
    panda_cdf_destroy(&m_impl->c);
}

double
SizeCdf::Mean() const
{
    return panda_cdf_mean(&m_impl->c);
}

double
SizeCdf::Sample(Rng& rng) const
{
    return panda_cdf_quantile(&m_impl->c, rng.Uniform());
}

double
SizeCdf::Max() const
{
    return m_impl->c.value[m_impl->c.n - 1];
}

} // namespace pandasim

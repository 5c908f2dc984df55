#include "config.h"

#include "ns3/command-line.h"
#include "ns3/data-rate.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

namespace pandasim
{

/*
 * The schemes.  PIAS and FISH use the PIAS marking policy (bytes sent);
 * Panda the Panda policy (Algorithm 2).  The scheduler-core schemes of the
 * seeds have port-level ECN (thesis §4.2 scheme 3, PIAS's sch_pias); FISH
 * adds per-flow queues and its starvation guard (FISH §3.2: lower levels
 * get a share while upper ones are busy).  fq-codel is the operator's
 * alternative without priorities (one level of the core's fq_codel, CoDel
 * marking instead of the port threshold), and fq-codel-ns3 the same
 * discipline as ns-3 implements it, to cross-check the core's.
 */
static const Scheme kSchemes[] = {
    {"fifo", Marking::None, QueueKind::Fifo, false, false, false, nullptr,
     "one FIFO per port, drop tail"},
    {"fifo-ecn", Marking::None, QueueKind::RedEcn, false, false, false, nullptr,
     "one FIFO per port, ECN mark (drop if not ECT) above K"},
    {"pias", Marking::Policy, QueueKind::Sched, false, false, false, "pias",
     "PIAS marking, strict priority, port ECN"},
    {"fish", Marking::Policy, QueueKind::Sched, true, true, false, "pias",
     "PIAS marking, strict priority with per-flow queues and guard, port ECN"},
    {"panda", Marking::Policy, QueueKind::Sched, false, false, false, "panda",
     "Panda marking, strict priority, port ECN"},
    {"panda-pf", Marking::Policy, QueueKind::Sched, true, false, false, "panda",
     "Panda marking, strict priority with per-flow queues, port ECN"},
    {"oracle", Marking::Oracle, QueueKind::Oracle, false, false, false, nullptr,
     "pFabric-like: smallest remaining message first (clairvoyant bound)"},
    {"fq-codel", Marking::None, QueueKind::Sched, true, false, true, nullptr,
     "no marking, one level of lib/panda's fq_codel (new flows first, CoDel per flow)"},
    {"fq-codel-ns3", Marking::None, QueueKind::FqCoDel, false, false, false, nullptr,
     "no marking, ns-3's own FqCoDelQueueDisc (the cross-check of fq-codel)"},
};

const Scheme*
FindScheme(const std::string& name)
{
    for (const Scheme& s : kSchemes)
    {
        if (name == s.name)
        {
            return &s;
        }
    }
    return nullptr;
}

std::string
SchemeNames()
{
    std::string s;
    for (const Scheme& sc : kSchemes)
    {
        s += (s.empty() ? "" : ", ") + std::string(sc.name);
    }
    return s;
}

uint64_t
ParseRate(const std::string& option, const std::string& value)
{
    ns3::DataRate r;
    /* DataRate's parser aborts on bad input; check the form first. */
    std::istringstream is(value);
    double num;
    std::string unit;
    if (!(is >> num) || num <= 0)
    {
        throw ConfigError("--" + option + ": '" + value + "' is not a rate (e.g. 10Gbps)");
    }
    is >> unit;
    static const char* units[] = {"", "bps", "b/s", "Bps", "B/s", "kbps", "kb/s", "Kbps", "Kb/s",
                                  "kBps", "kB/s", "KBps", "KB/s", "Mbps", "Mb/s", "MBps",
                                  "MB/s", "Gbps", "Gb/s", "GBps", "GB/s", "Gbit/s", "Mbit/s"};
    bool known = false;
    for (const char* u : units)
    {
        known |= unit == u;
    }
    if (!known)
    {
        throw ConfigError("--" + option + ": unknown unit '" + unit + "' in '" + value + "'");
    }
    if (unit == "Gbit/s" || unit == "Mbit/s")
    {
        return (uint64_t)std::llround(num * (unit[0] == 'G' ? 1e9 : 1e6));
    }
    return ns3::DataRate(unit.empty() ? value + "bps" : value).GetBitRate();
}

void
Require(bool ok, const std::string& msg)
{
    if (!ok)
    {
        throw ConfigError(msg);
    }
}

namespace
{

void
RequireReadable(const std::string& option, const std::string& file)
{
    Require(!file.empty(), "--" + option + " is required");
    std::ifstream f(file);
    Require(f.good(), "--" + option + ": cannot read '" + file + "'");
}

bool
AllDigits(const std::string& s)
{
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

/* The flows of a fixed workload, from 'file' (sim/README.md, "Workloads"):
 * one flow per line, "START_US SIZE [SRC DST]", '#' starts a comment.
 * START_US: microseconds after the workload's start, a decimal number
 * (ns resolution); SIZE: payload bytes, an integer; SRC DST: host
 * indices, on the dumbbell 0 1 when left out.  Lines in start order, so
 * that flow ids are the list's order (equal starts connect in it).  Every
 * problem names the file, the line and what is wrong with it. */
std::vector<ListedFlow>
ParseFlowList(const std::string& file, uint32_t hosts, bool dumbbell, double maxTimeS)
{
    constexpr uint64_t kMaxSize = 1000000000000ULL; /* 1 TB: a typo, not a flow. */
    RequireReadable("flow-list", file);
    std::ifstream in(file);
    std::vector<ListedFlow> out;
    std::string text;
    uint32_t lineNo = 0;
    while (std::getline(in, text))
    {
        lineNo++;
        std::string where = "--flow-list: " + file + ":" + std::to_string(lineNo) + ": ";
        auto fail = [&where](const std::string& why) { throw ConfigError(where + why); };
        text = text.substr(0, text.find('#'));
        std::istringstream fields(text);
        std::vector<std::string> f;
        for (std::string tok; fields >> tok;)
        {
            f.push_back(tok);
        }
        if (f.empty())
        {
            continue;
        }
        if (f.size() != 2 && f.size() != 4)
        {
            fail(std::to_string(f.size()) + " fields; expected START_US SIZE [SRC DST]");
        }

        /* Start: digits with at most one decimal point (no sign, exponent,
         * hex, inf or nan). */
        const std::string& st = f[0];
        size_t dot = st.find('.');
        std::string intPart = st.substr(0, dot);
        std::string frac = dot == std::string::npos ? "" : st.substr(dot + 1);
        if ((intPart.empty() && frac.empty()) || (!intPart.empty() && !AllDigits(intPart)) ||
            (!frac.empty() && !AllDigits(frac)))
        {
            fail("start '" + st + "' is not a time in us (a decimal number >= 0)");
        }
        double us = std::strtod(st.c_str(), nullptr);
        if (!(us * 1e-6 < maxTimeS))
        {
            std::ostringstream max;
            max << maxTimeS;
            fail("start " + st + " us is not before --max-time (" + max.str() + " s)");
        }
        ListedFlow lf{};
        lf.startNs = (int64_t)std::llround(us * 1000);
        lf.line = lineNo;

        const std::string& sz = f[1];
        if (!AllDigits(sz) || sz.size() > 13)
        {
            fail("size '" + sz + "' is not a number of bytes (an integer, 1 .. 10^12)");
        }
        lf.size = std::stoull(sz);
        if (lf.size < 1 || lf.size > kMaxSize)
        {
            fail("size " + sz + " is out of range (1 .. 10^12 bytes)");
        }

        if (f.size() == 4)
        {
            uint32_t ends[2] = {0, 0};
            for (int i = 0; i < 2; i++)
            {
                const std::string& h = f[2 + i];
                if (!AllDigits(h) || h.size() > 9 || std::stoul(h) >= hosts)
                {
                    fail(std::string(i ? "destination" : "source") + " '" + h +
                         "' is not a host (0 .. " + std::to_string(hosts - 1) + ")");
                }
                ends[i] = (uint32_t)std::stoul(h);
            }
            if (ends[0] == ends[1])
            {
                fail("source and destination are the same host (" + f[2] + ")");
            }
            lf.src = ends[0];
            lf.dst = ends[1];
        }
        else if (dumbbell)
        {
            lf.src = 0; /* PM2 -> PM1, as the drawn flows. */
            lf.dst = 1;
        }
        else
        {
            fail("no SRC DST: the leaf-spine needs them (host indices 0 .. " +
                 std::to_string(hosts - 1) + ")");
        }

        if (!out.empty() && lf.startNs < out.back().startNs)
        {
            fail("start " + st + " us is before line " + std::to_string(out.back().line) +
                 "'s; list the flows in start order");
        }
        out.push_back(lf);
    }
    Require(!in.bad(), "--flow-list: " + file + ": read error");
    Require(!out.empty(), "--flow-list: " + file + ": no flows (only blank or comment lines)");
    return out;
}
} // namespace

RunConfig
ParseConfig(int argc, char** argv)
{
    RunConfig c;
    std::string topology = "dumbbell", scheme = "fifo", edge, core, policyFile;
    double linkDelayUs = -1, minRtoMs = -1, delAckMs = -1;
    double bufferPkts = -1, ecnPkts = -1;
    int64_t rpcPairs = -1, guard = -1, capacity = 4096;
    uint32_t leaves = 9, hostsPerLeaf = 16, spines = 4;
    std::string cc;
    double alphaInit = -1;
    double timeTraceMs = 0;

    ns3::CommandLine cmd(__FILE__);
    cmd.Usage("panda-sim: one ns-3 simulation point (a topology, a scheme, a workload).\n"
              "Writes flows.csv, rpc.csv and run.json into --out.  Schemes: " +
              SchemeNames() + ".\nSee sim/README.md.");
    cmd.AddValue("topology", "dumbbell or leafspine", topology);
    cmd.AddValue("leaves", "leaf-spine: leaf switches", leaves);
    cmd.AddValue("hosts-per-leaf", "leaf-spine: hosts per leaf", hostsPerLeaf);
    cmd.AddValue("spines", "leaf-spine: spine switches", spines);
    cmd.AddValue("edge-rate", "host links (default 1Gbps dumbbell, 10Gbps leaf-spine)", edge);
    cmd.AddValue("core-rate", "leaf-spine links (default 40Gbps)", core);
    cmd.AddValue("link-delay-us", "propagation delay per link, us (25 / 10)", linkDelayUs);
    cmd.AddValue("scheme", SchemeNames(), scheme);
    cmd.AddValue("cc", "cubic or dctcp (default cubic dumbbell, dctcp leaf-spine)", cc);
    cmd.AddValue("dctcp-alpha-init",
                 "DCTCP's alpha until its first estimate, 0..1 (1, as Linux; NS-2 "
                 "DCTCP scripts commonly set 0)",
                 alphaInit);
    cmd.AddValue("policy", "marking policy text, lib/panda syntax (pias/fish/panda*)", c.policy);
    cmd.AddValue("buffer-pkts", "port buffer in 1500-byte packets (1000 / 240)", bufferPkts);
    cmd.AddValue("ecn-pkts", "port ECN threshold K in 1500-byte packets, 0 = off (20 / 65)", ecnPkts);
    cmd.AddValue("guard", "starvation guard share in 1/1000 for schemes with one (50; the core takes 0..500)", guard);
    cmd.AddValue("sched-extra", "extra scheduler core keys, k=v,...", c.schedExtra);
    cmd.AddValue("table-capacity", "connections per host table", capacity);
    cmd.AddValue("min-rto-ms", "TCP minimum RTO (200 dumbbell, 5 leaf-spine)", minRtoMs);
    cmd.AddValue("delack-ms", "TCP delayed-ACK timeout (40 dumbbell, 1 leaf-spine)", delAckMs);
    cmd.AddValue("delack-count", "segments per delayed ACK", c.delAckCount);
    cmd.AddValue("init-cwnd", "initial window, segments", c.initCwnd);
    cmd.AddValue("cdf", "flow-size CDF file (load_generator/cdf/)", c.cdf);
    cmd.AddValue("load", "Poisson arrivals at this load of the host links", c.load);
    cmd.AddValue("interval-us", "Poisson arrivals at this mean interval instead of --load", c.intervalUs);
    cmd.AddValue("flows", "background flows (Poisson: total; closed loop: launched)", c.flows);
    cmd.AddValue("concurrency", "closed loop: flows in flight (0 = Poisson)", c.concurrency);
    cmd.AddValue("flow-list",
                 "fixed workload instead of --cdf/--flows/--load: a file of "
                 "'START_US SIZE [SRC DST]' lines",
                 c.flowListFile);
    cmd.AddValue("rpc-pairs", "memcached-like client/server pairs (1 dumbbell, 0 leaf-spine)", rpcPairs);
    cmd.AddValue("rpc-cdf", "value-size CDF of the RPC responses", c.rpcCdf);
    cmd.AddValue("rpc-rate", "requests/s per pair, Poisson; 0 = closed loop", c.rpcRate);
    cmd.AddValue("rpc-level",
                 "put the RPC connections (both directions) at this level whatever the policy "
                 "says; -1 (default) = the policy's level (schemes that mark by a policy)",
                 c.rpcLevel);
    cmd.AddValue("rpc-requests", "end the run after this many answered requests (0: when the flows end)", c.rpcRequests);
    cmd.AddValue("incast-rate", "incast queries per second (Poisson), 0 = none", c.incastRate);
    cmd.AddValue("incast-queries", "incast queries (default 100 with --incast-rate)", c.incastQueries);
    cmd.AddValue("incast-fanin", "responders per incast query", c.incastFanin);
    cmd.AddValue("incast-bytes", "bytes per incast response", c.incastBytes);
    cmd.AddValue("seed", "seed of the workload and of ns-3", c.seed);
    cmd.AddValue("warmup", "s before RPC requests are timed", c.warmup);
    cmd.AddValue("max-time", "s of simulated time at most (default 30)", c.maxTime);
    cmd.AddValue("out", "output directory (created)", c.outDir);
    cmd.AddValue("collect", "write the segment sizes (flt.hist, fht.hist) for panda-model", c.collect);
    cmd.AddValue("level-trace",
                 "write levels.csv: per host and connection, the packets and payload bytes marked "
                 "at each level (schemes that mark by policy)",
                 c.levelTrace);
    cmd.AddValue("time-trace-ms",
                 "every this many ms, write each host port's backlog and traffic per level "
                 "(ports-time.csv) and each running flow's progress and TCP state "
                 "(flows-time.csv); 0 = off",
                 timeTraceMs);
    cmd.AddValue("print-routes", "print every node's routes", c.printRoutes);
    std::string listenerEcn = "fresh";
    cmd.AddValue("listener-ecn",
                 "fresh (default): an accepted connection starts with a new socket's CE "
                 "sequence number; inherit: with its listener's, as ns-3's TCP does "
                 "(reproduces runs made before the workaround, sim/README.md)",
                 listenerEcn);
    cmd.Parse(argc, argv);

    if (listenerEcn != "fresh" && listenerEcn != "inherit")
    {
        throw ConfigError("--listener-ecn: '" + listenerEcn + "' (fresh or inherit)");
    }
    c.freshListenerEcn = listenerEcn == "fresh";
    if (topology == "dumbbell")
    {
        c.topology = Topology::Dumbbell;
        c.leaves = 1;
        c.hostsPerLeaf = 2;
        c.spines = 0;
    }
    else if (topology == "leafspine")
    {
        c.topology = Topology::LeafSpine;
        Require(leaves >= 1 && leaves <= 250, "--leaves: 1..250");
        Require(hostsPerLeaf >= 1 && hostsPerLeaf <= 250, "--hosts-per-leaf: 1..250");
        /* One leaf without spines is a star: N hosts on one switch (the
         * incast topology of TCP SkyLine). */
        Require(spines <= 250 && (spines >= 1 || leaves == 1),
                "--spines: 1..250 (0 only with --leaves=1)");
        Require(leaves * hostsPerLeaf >= 2, "leaf-spine needs at least 2 hosts");
        c.leaves = leaves;
        c.hostsPerLeaf = hostsPerLeaf;
        c.spines = spines;
    }
    else
    {
        throw ConfigError("--topology: '" + topology + "' (dumbbell or leafspine)");
    }
    bool db = c.topology == Topology::Dumbbell;

    c.edgeBps = ParseRate("edge-rate", edge.empty() ? (db ? "1Gbps" : "10Gbps") : edge);
    c.coreBps = ParseRate("core-rate", core.empty() ? "40Gbps" : core);
    if (linkDelayUs < 0)
    {
        linkDelayUs = db ? 25 : 10;
    }
    Require(linkDelayUs <= 1e6, "--link-delay-us: at most 1 s");
    c.linkDelayNs = (uint64_t)std::llround(linkDelayUs * 1000);

    c.scheme = FindScheme(scheme);
    Require(c.scheme, "--scheme: unknown '" + scheme + "' (one of " + SchemeNames() + ")");
    c.cc = cc.empty() ? (db ? "cubic" : "dctcp") : cc;
    Require(c.cc == "cubic" || c.cc == "dctcp", "--cc: '" + c.cc + "' (cubic or dctcp)");
    if (alphaInit != -1)
    {
        Require(c.cc == "dctcp", "--dctcp-alpha-init needs --cc=dctcp");
        Require(alphaInit >= 0 && alphaInit <= 1, "--dctcp-alpha-init: 0 .. 1");
        c.dctcpAlphaInit = alphaInit;
    }
    if (c.scheme->policyKind)
    {
        Require(!c.policy.empty(),
                "--scheme=" + scheme + " needs --policy (a " + c.scheme->policyKind +
                    " policy, e.g. the \"action\" of panda-model's JSON)");
    }

    /* Buffers: the thesis's 1000-packet queue at 1 Gbit/s (12 ms) on the
     * dumbbell; FISH's 240-packet queues on the leaf-spine.  ECN K: the
     * thesis's 30 KB at 1 Gbit/s (20 packets), PIAS's 65 packets at
     * 10 Gbit/s (kept on the 40 Gbit/s ports too, as PIAS does). */
    if (bufferPkts < 0)
    {
        bufferPkts = db ? 1000 : 240;
    }
    if (ecnPkts < 0)
    {
        ecnPkts = db ? 20 : 65;
    }
    Require(bufferPkts >= 2 && bufferPkts <= 1e6, "--buffer-pkts: 2..1000000");
    Require(ecnPkts >= 0 && ecnPkts < bufferPkts, "--ecn-pkts: 0 (off) or below --buffer-pkts");
    c.bufferBytes = (uint32_t)std::llround(bufferPkts * 1500);
    c.ecnBytes = (uint32_t)std::llround(ecnPkts * 1500);
    Require(!(c.scheme->queue == QueueKind::RedEcn && c.ecnBytes == 0),
            "--scheme=fifo-ecn needs --ecn-pkts > 0");
    if (guard < 0)
    {
        guard = 50;
    }
    c.guardPermille = c.scheme->guard ? (uint32_t)guard : 0;
    Require(capacity >= 1 && capacity <= (1 << 24), "--table-capacity: 1..16777216");
    c.tableCapacity = (uint32_t)capacity;

    /* Timers: delayed-ACK timeout well below RTO_min, or a window's odd
     * last segment waits for the delayed ACK longer than a retransmission
     * would (ns-3's defaults are 200 ms and 1 s).  Dumbbell: Linux's
     * 40 ms / 200 ms, as on the testbed.  Leaf-spine: 1 ms / 5 ms, the
     * data-center values of the ns-3 PIAS reproductions. */
    if (minRtoMs < 0)
    {
        minRtoMs = db ? 200 : 5;
    }
    if (delAckMs < 0)
    {
        delAckMs = db ? 40 : 1;
    }
    Require(minRtoMs >= 1, "--min-rto-ms: at least 1 (ns-3's clock granularity)");
    Require(delAckMs > 0 && delAckMs < minRtoMs, "--delack-ms: positive and below --min-rto-ms");
    c.minRtoNs = (uint64_t)std::llround(minRtoMs * 1e6);
    c.delAckNs = (uint64_t)std::llround(delAckMs * 1e6);
    Require(c.delAckCount >= 1, "--delack-count: at least 1");
    Require(c.initCwnd >= 1, "--init-cwnd: at least 1");
    c.socketBuffer = 1 << 20;

    /* Workload, within the run's time. */
    if (c.maxTime == 0)
    {
        c.maxTime = 30;
    }
    Require(c.warmup >= 0, "--warmup: not negative");
    Require(c.maxTime > c.warmup, "--max-time: after --warmup");
    c.rpcPairs = rpcPairs < 0 ? (db ? 1 : 0) : (uint32_t)rpcPairs;
    uint32_t hosts = c.leaves * c.hostsPerLeaf;
    if (!c.flowListFile.empty())
    {
        /* The list is the whole background workload: the options that
         * draw one have no meaning beside it. */
        const std::pair<const char*, bool> drawn[] = {{"flows", c.flows > 0},
                                                      {"cdf", !c.cdf.empty()},
                                                      {"load", c.load != 0},
                                                      {"interval-us", c.intervalUs != 0},
                                                      {"concurrency", c.concurrency > 0}};
        for (const auto& [option, given] : drawn)
        {
            Require(!given, std::string("--flow-list and --") + option +
                                " exclude each other (the list gives every flow)");
        }
        c.flowList = ParseFlowList(c.flowListFile, hosts, db, c.maxTime);
        c.flows = (uint32_t)c.flowList.size();
    }
    Require(c.flows > 0 || c.rpcPairs > 0 || c.incastRate > 0,
            "nothing to simulate: give --flows, --flow-list, --rpc-pairs or --incast-rate");
    if (c.flows > 0 && c.flowList.empty())
    {
        RequireReadable("cdf", c.cdf);
        if (c.concurrency == 0 && c.intervalUs == 0)
        {
            Require(c.load > 0 && c.load < 1, "--load: in (0, 1) for Poisson arrivals");
        }
        Require(c.intervalUs >= 0, "--interval-us: positive (or 0 to use --load)");
        Require(!(c.concurrency > 0 && c.intervalUs > 0),
                "--interval-us and --concurrency exclude each other");
    }
    if (c.rpcPairs > 0)
    {
        RequireReadable("rpc-cdf", c.rpcCdf);
        Require(c.rpcRate >= 0, "--rpc-rate: 0 (closed loop) or positive");
    }
    Require(c.rpcRequests == 0 || c.rpcPairs > 0, "--rpc-requests needs --rpc-pairs");
    if (c.rpcLevel != -1)
    {
        /* The upper bound is the policy's levels, checked where the policy
         * is parsed (main.cc); 7 is the most any policy has. */
        Require(c.rpcLevel >= 0 && c.rpcLevel <= 7,
                "--rpc-level: 0..7 (a level of the policy), or -1 for the policy's");
        Require(c.scheme->marking == Marking::Policy,
                std::string("--rpc-level: scheme ") + c.scheme->name +
                    " does not mark by a policy (no level to pin)");
        Require(c.rpcPairs > 0, "--rpc-level needs --rpc-pairs");
    }
    Require(c.rpcPairs <= hosts * (hosts - 1), "--rpc-pairs: more than the host pairs");
    if (c.incastRate > 0)
    {
        Require(c.incastFanin >= 1 && c.incastFanin <= hosts - 1,
                "--incast-fanin: 1 .. hosts - 1 (" + std::to_string(hosts - 1) + ")");
        Require(c.incastBytes >= 1, "--incast-bytes: at least 1");
        if (c.incastQueries == 0)
        {
            c.incastQueries = 100;
        }
    }
    Require(!c.outDir.empty(), "--out is required");
    Require(timeTraceMs >= 0 && timeTraceMs <= c.maxTime * 1e3,
            "--time-trace-ms: 0 (off) up to --max-time");
    Require(timeTraceMs == 0 || timeTraceMs >= 0.1,
            "--time-trace-ms: at least 0.1 (a sample per 0.1 ms of simulated time)");
    c.timeTraceNs = (uint64_t)std::llround(timeTraceMs * 1e6);
    Require(!c.levelTrace || c.scheme->marking == Marking::Policy,
            std::string("--level-trace: scheme ") + c.scheme->name +
                " does not mark by a policy (no levels to trace)");
    return c;
}

} // namespace pandasim

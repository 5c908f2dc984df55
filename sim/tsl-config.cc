#include "tsl-config.h"

#include "tsl-wire.h"

#include "ns3/command-line.h"

#include <cmath>

namespace pandasim
{

namespace
{
/* The scheduler core as TCP SkyLine's switch queue: one level, one FIFO,
 * no port ECN threshold; label-aware WRED from --sched-extra. */
const Scheme kWredScheme = {"tsl-wred", Marking::None, QueueKind::Sched, false, false, false, nullptr,
                            "one FIFO, label-aware WRED (TCP SkyLine)"};

/* A tri-state flag: -1 = not given (the scheme's default). */
bool
Pick(int given, bool dflt)
{
    return given < 0 ? dflt : given != 0;
}
} // namespace

TslConfig
ParseTslConfig(int argc, char** argv)
{
    TslConfig c;
    std::string scheme = "tsl", mode = "incast", edge = "10Gbps";
    double linkDelayUs = 2, minRtoMs = 200, delAckMs = 40, timerUs = 5;
    double ecnPkts = -1;
    int delAck = -1, signal = -1, labelRtx = -1, protect = -1, cawa = -1, align = -1;
    uint32_t workers = 16, sru = 256 * 1024, rounds = 1, buffer = 128 * 1024;
    uint32_t request = 64, initCwnd = 1, smallWindow = 3;
    double minTh = 0.1, maxTh = 0.7, prob = 1.0;
    double stagger = 0.05, hold = 0.05, sample = 0.001;

    ns3::CommandLine cmd(__FILE__);
    cmd.Usage("tsl-sim: TCP SkyLine's incast experiments (seed 003) in ns-3: N workers\n"
              "answer SRU bytes per round to one aggregator through one switch.  Schemes:\n"
              "tsl, newreno, cubic, dctcp.  Writes run.json into --out.  See sim/TSL.md.");
    cmd.AddValue("scheme", "tsl, newreno, cubic or dctcp", scheme);
    cmd.AddValue("mode", "incast (rounds of SRUs) or fairness (long flows, §5.7)", mode);
    cmd.AddValue("workers", "senders N (fairness: long flows)", workers);
    cmd.AddValue("sru", "bytes each worker sends per round (256 KB = 262144)", sru);
    cmd.AddValue("rounds", "request rounds (the next starts when all SRUs are in)", rounds);
    cmd.AddValue("request", "bytes of a request", request);
    cmd.AddValue("buffer", "switch buffer per port, bytes (128 KB = 131072)", buffer);
    cmd.AddValue("edge-rate", "link rate", edge);
    cmd.AddValue("link-delay-us", "propagation delay per link (2: base RTT 8 us)", linkDelayUs);
    cmd.AddValue("min-rto-ms", "TCP minimum RTO", minRtoMs);
    cmd.AddValue("delack-ms", "delayed-ACK timeout t_DRO", delAckMs);
    cmd.AddValue("delack", "delayed ACKs on (2 segments) or off; default on for tsl only", delAck);
    cmd.AddValue("init-cwnd", "initial window, segments (ICWS)", initCwnd);
    cmd.AddValue("ecn-pkts", "dctcp: marking threshold K, 1500-byte packets (20 per 128 KB)", ecnPkts);
    cmd.AddValue("min-th", "tsl: WRED minTh, fraction of the buffer", minTh);
    cmd.AddValue("max-th-unlabel", "tsl: WRED maxTh of unlabelled packets, fraction", maxTh);
    cmd.AddValue("wred-prob", "tsl: WRED marking probability reached at maxTh", prob);
    cmd.AddValue("signal", "tsl: signal packets/ACKs (SP, SA, DSP, TSP)", signal);
    cmd.AddValue("label-rtx", "tsl: label retransmissions", labelRtx);
    cmd.AddValue("protect", "tsl: WRED keeps labelled packets to the full buffer", protect);
    cmd.AddValue("cawa", "tsl: congestion-adaptive delayed ACK", cawa);
    cmd.AddValue("align", "tsl: window alignment across rounds", align);
    cmd.AddValue("sp-every-burst", "tsl: SP on every window-filling segment, not once a round", c.tsl.spEveryBurst);
    cmd.AddValue("small-window", "tsl: S, in MSS: at W <= S an SA triggers retransmission", smallWindow);
    cmd.AddValue("timer-us", "tsl: the host timer's accuracy t_minAcc, us", timerUs);
    cmd.AddValue("stagger", "fairness: s between flow starts (and ends)", stagger);
    cmd.AddValue("hold", "fairness: s with all flows running", hold);
    cmd.AddValue("sample", "fairness: throughput sampling interval, s", sample);
    cmd.AddValue("seed", "seed (WRED's and RED's random draws)", c.seed);
    cmd.AddValue("max-time", "s of simulated time at most (default 60)", c.maxTime);
    cmd.AddValue("out", "output directory (created)", c.outDir);
    cmd.Parse(argc, argv);

    c.schemeName = scheme;
    if (scheme == "tsl")
    {
        c.scheme = TslScheme::Tsl;
    }
    else if (scheme == "newreno")
    {
        c.scheme = TslScheme::NewReno;
    }
    else if (scheme == "cubic")
    {
        c.scheme = TslScheme::Cubic;
    }
    else if (scheme == "dctcp")
    {
        c.scheme = TslScheme::Dctcp;
    }
    else
    {
        throw ConfigError("--scheme: '" + scheme + "' (tsl, newreno, cubic or dctcp)");
    }
    bool tsl = c.scheme == TslScheme::Tsl;
    Require(tsl || (!c.tsl.spEveryBurst && signal < 0 && labelRtx < 0 && protect < 0 && cawa < 0 && align < 0),
            "--signal/--label-rtx/--protect/--cawa/--align are TSL's (--scheme=tsl)");
    Require(mode == "incast" || mode == "fairness", "--mode: '" + mode + "' (incast or fairness)");
    c.mode = mode == "incast" ? TslMode::Incast : TslMode::Fairness;

    c.tsl.signal = tsl && Pick(signal, true);
    c.tsl.labelRtx = tsl && Pick(labelRtx, true);
    c.tsl.cawa = tsl && Pick(cawa, true);
    c.tsl.align = tsl && Pick(align, true);
    c.protect = tsl && Pick(protect, true);
    Require(smallWindow >= 1 && smallWindow <= 1000, "--small-window: 1..1000 MSS");
    c.tsl.smallWindowSegs = smallWindow;
    /* t_minAcc.  The paper (§5.2) finds TSL good "as long as the server
     * supports a clock accuracy of 5 ms or better"; at its 8 us RTT a 5 ms
     * floor on the held ACK would cap a one-segment sender at 2.4 Mbit/s,
     * so we read the unit as us (high-resolution timers); --timer-us
     * sweeps it. */
    Require(timerUs >= 0 && timerUs <= 1e6, "--timer-us: 0..1000000");
    c.tsl.timerAccuracyNs = (int64_t)std::llround(timerUs * 1000);

    Require(workers >= 1 && workers <= 4000, "--workers: 1..4000");
    c.workers = workers;
    Require(sru >= 1 && sru <= (64u << 20), "--sru: 1 .. 64 MB");
    c.sruBytes = sru;
    Require(rounds >= 1 && rounds <= 10000, "--rounds: 1..10000");
    c.rounds = rounds;
    Require(request >= 1 && request <= 65536, "--request: 1..65536 bytes");
    c.requestBytes = request;
    Require(stagger > 0 && hold > 0 && sample > 0 && sample <= hold,
            "--stagger, --hold, --sample: positive, --sample at most --hold");
    c.staggerS = stagger;
    c.holdS = hold;
    c.sampleS = sample;

    c.edgeBps = ParseRate("edge-rate", edge);
    Require(linkDelayUs >= 0 && linkDelayUs <= 1e6, "--link-delay-us: 0 .. 1 s");
    c.linkDelayNs = (uint64_t)std::llround(linkDelayUs * 1000);
    Require(buffer >= 3000 && buffer <= (1u << 30), "--buffer: 3000 .. 1 GB");
    c.bufferBytes = buffer;
    /* DCTCP's K as the paper sets it: 20 packets at 128 KB, 40 at 256 KB. */
    if (ecnPkts < 0)
    {
        ecnPkts = std::round(20.0 * buffer / (128 * 1024));
    }
    c.ecnBytes = (uint32_t)std::llround(ecnPkts * 1500);
    Require(c.scheme != TslScheme::Dctcp || (c.ecnBytes > 0 && c.ecnBytes < buffer),
            "--ecn-pkts: above 0 and below the buffer");
    Require(minTh > 0 && minTh < maxTh && maxTh < 1,
            "--min-th, --max-th-unlabel: 0 < min-th < max-th-unlabel < 1 (maxTh_label is "
            "the buffer)");
    Require(prob > 0 && prob <= 1, "--wred-prob: (0, 1]");
    c.minTh = minTh;
    c.maxThUnlabel = maxTh;
    c.wredProb = prob;

    Require(minRtoMs >= 1, "--min-rto-ms: at least 1 (ns-3's clock granularity)");
    Require(delAckMs > 0, "--delack-ms: positive");
    c.minRtoNs = (uint64_t)std::llround(minRtoMs * 1e6);
    c.delAckNs = (uint64_t)std::llround(delAckMs * 1e6);
    /* §5: "TSL: delayed-ACK count 2, timeout 40 ms; the other algorithms
     * disable delayed ACKs". */
    c.delAckCount = Pick(delAck, tsl) ? 2 : 1;
    Require(initCwnd >= 1 && initCwnd <= 1000, "--init-cwnd: 1..1000");
    c.initCwnd = initCwnd;
    c.socketBuffer = 4 << 20;
    Require(c.mode == TslMode::Fairness || sru + request <= c.socketBuffer,
            "--sru: at most the 4 MB socket buffer");

    if (c.maxTime == 0)
    {
        c.maxTime = 60;
    }
    Require(c.maxTime > 0, "--max-time: positive");
    Require(!c.outDir.empty(), "--out is required");

    /* The star of the shared builder: one leaf, no spine, N + 1 hosts
     * (host 0 the aggregator). */
    RunConfig& n = c.network;
    n.topology = Topology::LeafSpine;
    n.leaves = 1;
    n.hostsPerLeaf = workers + 1;
    n.spines = 0;
    n.edgeBps = c.edgeBps;
    n.coreBps = c.edgeBps;
    n.linkDelayNs = c.linkDelayNs;
    n.bufferBytes = buffer;
    n.seed = c.seed;
    n.tableCapacity = 1;
    switch (c.scheme)
    {
    case TslScheme::Tsl: {
        n.scheme = &kWredScheme;
        n.ecnBytes = 0;
        auto bytes = [&](double f) { return std::to_string((uint64_t)std::llround(f * buffer)); };
        std::string p = std::to_string(prob);
        std::string unlabelled = bytes(minTh) + ":" + bytes(maxTh) + ":" + p;
        /* Labelled: the same minTh (fair marking), dropped only when the
         * buffer is full (maxTh_label = l_max, §4).  --protect=0 gives
         * them the unlabelled rule. */
        std::string labelled = c.protect ? bytes(minTh) + ":" + bytes(1.0) + ":" + p : unlabelled;
        n.schedExtra = "wred=0-" + std::to_string(kTslDscpMin - 1) + ":" + unlabelled + "/" +
                       std::to_string(kTslDscpMin) + "-" + std::to_string(kTslDscpMax) + ":" +
                       labelled + "/" + std::to_string(kTslDscpMax + 1) + "-63:" + unlabelled;
        break;
    }
    case TslScheme::Dctcp:
        n.scheme = FindScheme("fifo-ecn");
        n.ecnBytes = c.ecnBytes;
        break;
    default:
        n.scheme = FindScheme("fifo");
        n.ecnBytes = 0;
        break;
    }
    return c;
}

} // namespace pandasim

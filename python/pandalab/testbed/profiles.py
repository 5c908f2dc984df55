"""Link profiles.  "1g" keeps the shape of the thesis's 1 Gbit/s setup
(§4.4): TSO/GSO/GRO off so every packet is at most one MTU, 1500-byte MTU,
K = 8 strict-priority queues.  "10g" is its 10 Gbit/s setup (Figs
5.7-5.9, 5.11): TSO/GSO/GRO on, so the panda action sees packets of up to
64 KB before segmentation (OVS's userspace TSO, pandalab.lab.PortConfig),
and Panda's size-interval weights on (panda-model --weight-values auto;
tools/README-panda-model.md says why that rule).  Both rates are scaled
down so that this 2-core machine's CPU stays out of the measurement (see
testbed/README.md, "Calibration"); the per-queue buffer is scaled with the
rate so that a full queue holds the same time of traffic as a 1000-packet
queue at 1 Gbit/s (12 ms).  Under TSO a queued packet may be 64 KB, so the
buffer is kept in bytes (that many full frames) rather than packets."""

from .schemes import DEFAULT_ECN_THRESHOLD

REFERENCE_RATE = 1e9        # the thesis's link
REFERENCE_QUEUE_PKTS = 1000  # Linux's default txqueuelen at that rate
MIN_QUEUE_PKTS = 20

PROFILES = {
    "1g": {
        "description": "thesis 1 Gbit/s setup, rate scaled down: TSO/GSO/GRO "
                       "off, MTU 1500, 8 strict-priority queues",
        "levels": 8,
        "mtu": 1500,
        "default_rate_mbit": 50,
        "offloads": "off",
        "tso": False,
        "weights": None,
        "threshold_units": None,    # no weights: the counter is bytes
        "ecn_threshold": DEFAULT_ECN_THRESHOLD,
        # The thesis's two conditions at 1 Gbit/s (conditions.py); a
        # quick run runs one (quick_cc).
        "cc": "cubic,dctcp",
        "flt_level0": 0.99,
        # Stage 1 on the plan's fifo trial: without TSO a packet is at most
        # one MTU whatever the queueing, so any scheme shows the sizes.
        "collect_scheme": "fifo",
    },
    "10g": {
        "description": "thesis 10 Gbit/s setup, rate scaled down: OVS "
                       "userspace TSO, hosts' TSO/GSO/GRO and tx checksum "
                       "on (packets up to 64 KB through the datapath), MTU "
                       "1500, 8 strict-priority queues, buffers in bytes, "
                       "size-interval weights from panda-model "
                       "(--weight-values auto)",
        "levels": 8,
        "mtu": 1500,
        # testbed/README.md, "Calibration": the highest rate at which the
        # loaded p99 of a top-priority memcached still falls with the rate.
        "default_rate_mbit": 200,
        "offloads": "tso",
        "tso": True,
        "weights": "auto",
        # The thresholds in the weighted counter's units (panda-model
        # --counter-thresholds): byte thresholds sank medium flows with the
        # large ones, 1.7-3x pias's medium FCT (docs/results/2026-11-23-
        # full-reduced-10g); "bytes" (--threshold-units) is that policy.
        # C(alpha) measured on the flows under panda-w1 (counter-w1), not
        # the window model ("counter"): a flow's super-packets depend on
        # the level it shares, and under the all-ones policy the flows
        # descend the levels as the mapped thresholds will move them,
        # while the window model assumes every flow sends alone and maps
        # the deep thresholds to 7-20x their bytes
        # (tools/README-panda-model.md, "Thresholds in counter units").
        "threshold_units": "counter-w1",
        # The thesis (§3.3, §4.4) marks no ECN at 10 Gbit/s: with 64 KB
        # packets in the queue a byte threshold marks nearly every packet
        # or lets the queue grow, so it ran CUBIC without marking.
        "ecn_threshold": 0,
        "cc": "cubic",
        # Every collected memcached packet at level 0 (the target:
        # the connection stays there).  Under TSO a response's segments
        # come as one packet, so its counter moves in larger steps and the
        # last 1% of its excursions is what sends it to level 1
        # (docs/results/2026-11-23-10g-quick).
        "flt_level0": 1.0,
        # Stage 1 under the oracle ("prio": memcached alone in the top
        # queue, the flows in the lowest), not fifo.  Under TSO the size of
        # a packet is the sender's burst, which depends on the queueing the
        # connection sees: Linux sizes a super-packet to about 1 ms of the
        # pacing rate, cwnd/RTT, so behind fifo's full queue (large RTT)
        # memcached's responses leave in smaller pieces than at level 0,
        # where the policy is meant to keep it.  Collected under fifo, its
        # largest packets were never seen, took weights above 1 and sent it
        # to level 1 for 4-18% of its packets
        # (docs/results/2026-11-23-10g-quick).  The FHT's sizes hardly
        # change: the flows share the lowest queue as they share fifo's.
        "collect_scheme": "prio",
    },
}


def queue_pkts_for(rate_bps):
    return max(MIN_QUEUE_PKTS,
               int(round(REFERENCE_QUEUE_PKTS * rate_bps / REFERENCE_RATE)))

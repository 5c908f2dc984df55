"""Link profiles.  "1g" keeps the shape of the thesis's 1 Gbit/s setup
(§4.4): TSO/GSO/GRO off so every packet is at most one MTU, 1500-byte MTU,
K = 8 strict-priority queues.  The rate is scaled down so that this 2-core
machine's CPU stays out of the measurement (see testbed/README.md,
"Calibration"); the per-queue buffer is scaled with it so that a full queue
holds the same time of traffic as a 1000-packet queue at 1 Gbit/s
(12 ms)."""

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
    },
}


def queue_pkts_for(rate_bps):
    return max(MIN_QUEUE_PKTS,
               int(round(REFERENCE_QUEUE_PKTS * rate_bps / REFERENCE_RATE)))

# Data-mining flow sizes (VL2 paper: Greenberg et al., "VL2: A Scalable and
# Flexible Data Center Network", SIGCOMM 2009, Fig. 2), as tabulated by
# pFabric (SIGCOMM 2013) and PIAS (NSDI 2015, HKUST-SING/TrafficGenerator
# conf/CDF_vl2.txt) in packets, converted here to bytes at 1460 bytes (one
# MSS) per packet.  Heavy-tailed: half of the flows are one packet, the
# largest about 1 GB.
# Format: <flow size in bytes> <cumulative probability>; panda_cdf_sample()
# interpolates linearly between points.  Mean about 7.4 MB.
1460 0
1460 0.5
2920 0.6
4380 0.7
10220 0.8
389820 0.9
3076220 0.95
97333820 0.99
973333820 1

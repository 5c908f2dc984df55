# Web-search flow sizes (DCTCP paper: Alizadeh et al., "Data Center TCP
# (DCTCP)", SIGCOMM 2010, Fig. 4), as tabulated by pFabric (SIGCOMM 2013)
# and PIAS (NSDI 2015, HKUST-SING/TrafficGenerator conf/CDF_dctcp.txt) in
# packets, converted here to bytes at 1460 bytes (one MSS) per packet.
# This is the workload the Panda thesis uses for its FHT flows (Fig 4.5).
# Format: <flow size in bytes> <cumulative probability>; panda_cdf_sample()
# interpolates linearly between points.  Mean about 1.67 MB.
8760 0
8760 0.15
18980 0.2
27740 0.3
48180 0.4
77380 0.53
194180 0.6
973820 0.7
1946180 0.8
4866180 0.9
9733820 0.97
29200000 1

# Facebook web-server flow sizes, intra-cluster (Roy et al., "Inside the
# Social Network's (Datacenter) Network", SIGCOMM 2015: the flow-size CDF
# of the Web servers' traffic within their cluster), as digitised in the
# public repository of Homa (Montazeri et al., SIGCOMM 2018):
# PlatformLab/HomaSimulation, commit 23b5164f,
# RpcTransportDesign/OMNeT++Simulation/homatransport/sizeDistributions/
# Facebook_WebServerDist_IntraCluster.txt (bytes; its first line, the mean
# 68936.79, is left out).  29% of the flows are at most 1000 bytes, 65% at
# most 10 KB, none above 1 MB: no large (> 10 MB) flow at all.
# Format: <flow size in bytes> <cumulative probability>; panda_cdf_sample()
# interpolates linearly between points, the first point's probability is
# mass at its value.  Mean about 62 KB so read (Homa's 69 KB reads each
# step at its upper end).
84 0.061
153 0.126
301 0.215
500 0.226
639 0.2407
800 0.2537
900 0.2667
1000 0.2926
1085 0.3130
1357 0.3352
1534 0.3500
1664 0.3722
1843 0.3963
2000 0.4093
3000 0.4796
4000 0.5259
5000 0.5630
6000 0.5889
7000 0.6111
8000 0.6260
9000 0.6407
10000 0.6519
14140 0.6852
20000 0.7148
24512 0.7315
30000 0.7463
34660 0.7574
40000 0.7667
45171 0.7759
50000 0.7815
60000 0.7926
70000 0.8
80000 0.8074
100000 0.8148
144310 0.8241
200000 0.8574
260573 0.8944
300000 0.9222
353730 0.9556
400000 0.9741
442606 0.9833
565213 0.9907
778003 0.9963
1000000 1

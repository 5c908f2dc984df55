# Facebook Hadoop flow sizes (Roy et al., "Inside the Social Network's
# (Datacenter) Network", SIGCOMM 2015: the flow-size CDF of the Hadoop
# cluster), as digitised by Homa (Montazeri et al., "Homa: A
# Receiver-Driven Low-Latency Transport Protocol Using Network
# Priorities", SIGCOMM 2018, workload W4) in the public HomaSimulation
# repository: PlatformLab/HomaSimulation, commit 23b5164f,
# RpcTransportDesign/OMNeT++Simulation/homatransport/sizeDistributions/
# Facebook_HadoopDist_All.txt (bytes; its first line, the mean 194330.9,
# is left out).  HPCC (SIGCOMM 2019) digitised the same figure
# differently (FbHdp_distribution.txt: median 700 bytes against 650 here).
# Many small flows: 46% of the flows are at most 600 bytes (one packet,
# under Panda's T on every shipped workload so far), 70% at most 7.8 KB.
# Format: <flow size in bytes> <cumulative probability>; panda_cdf_sample()
# interpolates linearly between points, the first point's probability is
# mass at its value.  Mean about 135 KB so read (Homa's 194 KB reads each
# step at its upper end), largest 10 MB.
92 0.0074
217 0.0149
271 0.0409
300 0.0520
326 0.1375
376 0.2026
425 0.2230
480 0.2639
600 0.4591
679 0.5167
737 0.5520
800 0.5762
885 0.5912
1042 0.6097
1277 0.6282
1413 0.6394
1534 0.6468
1664 0.6673
2214 0.6747
3396 0.6840
5210 0.6933
7830 0.7082
31946 0.7212
36844 0.7305
39973 0.7398
44260 0.7584
47050 0.7788
51046 0.8160
62583 0.8234
70722 0.8327
75180 0.8420
81565 0.8717
102058 0.8885
115331 0.8978
133013 0.9070
156563 0.9164
184284 0.9257
212546 0.9349
240177 0.9442
288520 0.9535
470507 0.9628
736642 0.9684
940700 0.9721
1769244 0.9814
2169118 0.9870
10000000 1

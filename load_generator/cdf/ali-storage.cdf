# Alibaba storage flow sizes (2019), as published with HPCC (Li et al.,
# "HPCC: High Precision Congestion Control", SIGCOMM 2019) in its public
# repository: alibaba-edu/High-Precision-Congestion-Control, commit
# fe18e47f, traffic_gen/AliStorage2019.txt (bytes, cumulative
# percentages, converted here to probabilities).  Block-sized flows: 23%
# at most 4 KB, 69% at most 8 KB, 90% at most 32 KB, none above 2 MB.
# Format: <flow size in bytes> <cumulative probability>; panda_cdf_sample()
# interpolates linearly between points (the first segment from 0 bytes;
# the load generator sends at least 1 byte).  Mean about 41 KB so read
# (67 KB if each step is read at its upper end).
0 0
4000 0.2293
8000 0.6921
16000 0.8061
32000 0.9047
64000 0.9353
128000 0.9677
256000 0.9753
2000000 1

# Memcached value sizes for panda-mc-client: an APPROXIMATION of the Panda
# thesis's Fig 4.6 (value-size CDF), which the thesis says matches its
# Fig 1.7 (packet sizes of Facebook's non-Hadoop services, from Roy et al.,
# "Inside the Social Network's (Datacenter) Network", SIGCOMM 2015): about
# 85% of the values under 400 bytes, about 95% under one MTU (1500 bytes),
# and a few up to 15 KB.  The figure itself is missing from our copy of the
# thesis, so the points below are our own reading of those numbers, not
# digitised data.  Any other CDF file can be given with --cdf.
# Format: <value size in bytes> <cumulative probability>; linear
# interpolation between points.  Mean about 390 bytes.
2 0
50 0.20
100 0.40
200 0.65
300 0.78
400 0.85
700 0.90
1000 0.93
1400 0.95
1500 0.97
3000 0.98
6000 0.99
10000 0.995
15000 1

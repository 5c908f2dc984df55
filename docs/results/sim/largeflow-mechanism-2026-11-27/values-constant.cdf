# Every value 391 bytes: the mean of memcached-values.cdf (390.7, and the
# client rounds a draw up), so the same bytes as the default values, each
# response one small segment.  Format as memcached-values.cdf.
390 0
391 1

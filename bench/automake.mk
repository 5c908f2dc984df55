# Benchmarks: built by make, run by hand (they print figures and ratios
# against a baseline measured in the same run; no pass/fail).
noinst_PROGRAMS += bench/bench-scheduler
bench_bench_scheduler_SOURCES = bench/bench-scheduler.c
bench_bench_scheduler_LDADD = $(PANDA_LIBADD)

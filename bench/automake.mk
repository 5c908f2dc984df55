# Benchmarks: they print figures and ratios against a baseline measured in
# the same run, and are run by hand (none is part of 'make check').  The C
# and shell ones are here; bench-forwarding.py compiles bench-blast.c and
# bench-panda-action.c itself (the latter against the OVS build tree), and
# bench-sched-forwarding.py compiles bench-sched-glue.c the same way.
noinst_PROGRAMS += bench/panda-model-bench
bench_panda_model_bench_SOURCES = bench/panda-model-bench.c \
	$(MODEL_COMMON_SOURCES)
bench_panda_model_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
bench_panda_model_bench_CFLAGS = $(AM_CFLAGS) $(MODEL_PCAP_CFLAGS)
bench_panda_model_bench_LDADD = $(CLI_LIBADD) $(PCAP_LIBS)

EXTRA_DIST += \
	bench/bench-blast.c \
	bench/bench-level.c \
	bench/bench-level.sh \
	bench/bench-forwarding.results.txt \
	bench/bench-htb-top.py \
	bench/bench-panda-action.c \
	bench/bench-sched-forwarding.py \
	bench/bench-sched-glue.c \
	bench/lg-bench.sh

# What a full connection table gives the connections it refuses.
noinst_PROGRAMS += bench/bench-admission
bench_bench_admission_SOURCES = bench/bench-admission.c
bench_bench_admission_LDADD = $(PANDA_LIBADD)

# A demoted flow under an overload of the top level: the guard's reserve.
noinst_PROGRAMS += bench/bench-guard
bench_bench_guard_SOURCES = bench/bench-guard.c
bench_bench_guard_LDADD = $(PANDA_LIBADD)

noinst_PROGRAMS += bench/bench-scheduler
bench_bench_scheduler_SOURCES = bench/bench-scheduler.c
bench_bench_scheduler_LDADD = $(PANDA_LIBADD)

# The BPF classifier's per-packet cost (BPF_PROG_TEST_RUN) beside
# lib/panda's; bench-bpf-forwarding.py measures a veth with and without it.
EXTRA_DIST += bench/bench-bpf-forwarding.py
if HAVE_BPF
noinst_PROGRAMS += bench/bench-bpf-cls
bench_bench_bpf_cls_SOURCES = bench/bench-bpf-cls.c bpf/loader.c bpf/loader.h
nodist_bench_bench_bpf_cls_SOURCES = bpf/panda-cls.skel.h
bench_bench_bpf_cls_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/bpf \
	-I$(srcdir)/bpf $(LIBBPF_CFLAGS)
bench_bench_bpf_cls_LDADD = $(CLI_LIBADD) $(LIBBPF_LIBS)
bench/bench_bpf_cls-bench-bpf-cls.$(OBJEXT): bpf/panda-cls.skel.h
endif

# panda-model: the offline model tool (included from tools/automake.mk).
bin_PROGRAMS += tools/panda-model
noinst_PROGRAMS += tools/panda-model-bench
EXTRA_DIST += tools/README-panda-model.md

MODEL_COMMON_SOURCES = \
	tools/model-input.c \
	tools/model-input.h \
	tools/model-json.c \
	tools/model-json.h
if HAVE_PCAP
MODEL_PCAP_CFLAGS = -DHAVE_PCAP $(PCAP_CFLAGS)
endif

tools_panda_model_SOURCES = tools/panda-model.c $(MODEL_COMMON_SOURCES)
tools_panda_model_CFLAGS = $(AM_CFLAGS) $(MODEL_PCAP_CFLAGS)
tools_panda_model_LDADD = $(PANDA_LIBADD) $(PCAP_LIBS)

tools_panda_model_bench_SOURCES = tools/panda-model-bench.c \
	$(MODEL_COMMON_SOURCES)
tools_panda_model_bench_CFLAGS = $(AM_CFLAGS) $(MODEL_PCAP_CFLAGS)
tools_panda_model_bench_LDADD = $(PANDA_LIBADD) $(PCAP_LIBS)

if HAVE_CMOCKA
check_PROGRAMS += tests/test-solver
TESTS += tests/test-solver
tests_test_solver_SOURCES = tests/test-solver.c
tests_test_solver_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_test_solver_LDADD = $(PANDA_LIBADD) $(CMOCKA_LIBS)
endif

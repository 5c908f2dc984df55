# Unit tests: cmocka programs with TAP output, one result per test case.
# Every C unit test of the project is registered here (lib/panda modules,
# the shared tool layer lib/cli, the load generator's helpers).
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
AM_TESTS_ENVIRONMENT = CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT; \
	top_srcdir='$(top_srcdir)'; export top_srcdir;

if HAVE_CMOCKA
UNIT_TESTS = \
	tests/unit/test-cdf \
	tests/unit/test-classifier \
	tests/unit/test-cli \
	tests/unit/test-conn-table \
	tests/unit/test-frame \
	tests/unit/test-lg-common \
	tests/unit/test-lg-evloop \
	tests/unit/test-model \
	tests/unit/test-policy \
	tests/unit/test-policy-json \
	tests/unit/test-scheduler \
	tests/unit/test-sizehist \
	tests/unit/test-solver \
	tests/unit/test-wire
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
UNIT_LDADD = $(PANDA_LIBADD) $(CMOCKA_LIBS)

tests_unit_test_cdf_SOURCES = tests/unit/test-cdf.c
tests_unit_test_cdf_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_cdf_LDADD = $(UNIT_LDADD)
tests_unit_test_classifier_SOURCES = tests/unit/test-classifier.c \
	tests/unit/policy-util.h
tests_unit_test_classifier_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_classifier_LDADD = $(UNIT_LDADD)
tests_unit_test_cli_SOURCES = tests/unit/test-cli.c
tests_unit_test_cli_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_cli_LDADD = $(CLI_LIBADD) $(CMOCKA_LIBS)
tests_unit_test_policy_json_SOURCES = tests/unit/test-policy-json.c
tests_unit_test_policy_json_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_json_LDADD = lib/panda/libpanda-json.a $(UNIT_LDADD) \
	$(JANSSON_LIBS)
tests_unit_test_frame_SOURCES = tests/unit/test-frame.c \
	tests/unit/frame-builder.h
tests_unit_test_frame_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_frame_LDADD = $(UNIT_LDADD)
tests_unit_test_sizehist_SOURCES = tests/unit/test-sizehist.c
tests_unit_test_sizehist_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sizehist_LDADD = $(UNIT_LDADD)
tests_unit_test_conn_table_SOURCES = tests/unit/test-conn-table.c \
	tests/unit/policy-util.h
tests_unit_test_conn_table_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_conn_table_LDADD = $(UNIT_LDADD)
tests_unit_test_lg_common_SOURCES = tests/unit/test-lg-common.c
tests_unit_test_lg_common_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/load_generator
tests_unit_test_lg_common_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_lg_common_LDADD = $(LG_LIBADD) $(CMOCKA_LIBS)
tests_unit_test_lg_evloop_SOURCES = tests/unit/test-lg-evloop.c
tests_unit_test_lg_evloop_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/load_generator
tests_unit_test_lg_evloop_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_lg_evloop_LDADD = $(LG_LIBADD) $(CMOCKA_LIBS)
tests_unit_test_model_SOURCES = tests/unit/test-model.c
tests_unit_test_model_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_model_LDADD = $(UNIT_LDADD)
tests_unit_test_scheduler_SOURCES = tests/unit/test-scheduler.c
tests_unit_test_scheduler_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_scheduler_LDADD = $(UNIT_LDADD)
tests_unit_test_policy_SOURCES = tests/unit/test-policy.c \
	tests/unit/policy-util.h
tests_unit_test_policy_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_LDADD = $(UNIT_LDADD)
tests_unit_test_solver_SOURCES = tests/unit/test-solver.c
tests_unit_test_solver_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_solver_LDADD = $(UNIT_LDADD)
tests_unit_test_wire_SOURCES = tests/unit/test-wire.c \
	tests/unit/policy-util.h
tests_unit_test_wire_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_wire_LDADD = $(UNIT_LDADD)

# The receive split's program, run with BPF_PROG_TEST_RUN: where the build
# has BPF programs (libpanda then embeds it, and needs libbpf).
if HAVE_BPF
check_PROGRAMS += tests/unit/test-rxsplit
TESTS += tests/unit/test-rxsplit
tests_unit_test_rxsplit_SOURCES = tests/unit/test-rxsplit.c \
	tests/unit/frame-builder.h
tests_unit_test_rxsplit_CFLAGS = $(UNIT_CFLAGS) $(LIBBPF_CFLAGS)
tests_unit_test_rxsplit_LDADD = $(UNIT_LDADD) $(LIBBPF_LIBS)
endif
else
check-local:
	@echo "cmocka not found: run ./install-deps.sh" >&2; exit 1
endif

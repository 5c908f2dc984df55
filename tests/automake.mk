# Unit tests: cmocka programs with TAP output, one result per test case.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
AM_TESTS_ENVIRONMENT = CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT; \
	top_srcdir='$(top_srcdir)'; export top_srcdir;

if HAVE_CMOCKA
UNIT_TESTS = \
	tests/test-policy \
	tests/test-table \
	tests/test-model \
	tests/test-cdf \
	tests/unit/test-scheduler
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
TEST_LDADD = $(PANDA_LIBADD) $(CMOCKA_LIBS)
tests_test_policy_SOURCES = tests/test-policy.c
tests_test_policy_CFLAGS = $(TEST_CFLAGS)
tests_test_policy_LDADD = $(TEST_LDADD)
tests_test_table_SOURCES = tests/test-table.c
tests_test_table_CFLAGS = $(TEST_CFLAGS)
tests_test_table_LDADD = $(TEST_LDADD)
tests_test_model_SOURCES = tests/test-model.c
tests_test_model_CFLAGS = $(TEST_CFLAGS)
tests_test_model_LDADD = $(TEST_LDADD)
tests_test_cdf_SOURCES = tests/test-cdf.c
tests_test_cdf_CFLAGS = $(TEST_CFLAGS)
tests_test_cdf_LDADD = $(TEST_LDADD)
tests_unit_test_scheduler_SOURCES = tests/unit/test-scheduler.c
tests_unit_test_scheduler_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_scheduler_LDADD = $(TEST_LDADD)
else
check-local:
	@echo "cmocka not found: run ./install-deps.sh" >&2; exit 1
endif

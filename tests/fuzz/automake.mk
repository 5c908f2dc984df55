# Fuzz targets (tests/fuzz/fuzz.h): built by 'make fuzz-build' (which
# tests/run.sh and tests/fuzz/run.sh call), not by 'make', so that a plain
# build stays as fast as before.  With --enable-sanitizers and clang they
# link libFuzzer; otherwise tests/fuzz/driver.c.  The two OVS targets link
# the patched build's libopenvswitch.a (with its config.h forced first, as
# OVS's own sources include it).
FUZZ_PANDA_TARGETS = \
	tests/fuzz/fuzz-wire \
	tests/fuzz/fuzz-policy-text \
	tests/fuzz/fuzz-cdf \
	tests/fuzz/fuzz-model-input \
	tests/fuzz/fuzz-mc-reply \
	tests/fuzz/fuzz-fg-request
FUZZ_OVS_TARGETS = \
	tests/fuzz/fuzz-nx-panda \
	tests/fuzz/fuzz-odp-panda
EXTRA_DIST += tests/fuzz/fuzz.h tests/fuzz/driver.c tests/fuzz/run.sh \
	tests/fuzz/README.md tests/fuzz/results.txt \
	tests/fuzz/fuzz_controller_config.py \
	$(FUZZ_PANDA_TARGETS:%=%.c) $(FUZZ_OVS_TARGETS:%=%.c)
CLEANFILES += $(FUZZ_PANDA_TARGETS) $(FUZZ_OVS_TARGETS)

if HAVE_LIBFUZZER
FUZZ_MAIN =
FUZZ_LINK = -fsanitize=fuzzer
else
FUZZ_MAIN = $(top_srcdir)/tests/fuzz/driver.c
FUZZ_LINK =
endif
FUZZ_CC = $(CC) $(AM_CPPFLAGS) -I$(top_builddir) -I$(top_srcdir)/tests/fuzz \
	$(CPPFLAGS) $(AM_CFLAGS) $(CFLAGS)
FUZZ_LIBS = $(FUZZ_LINK) $(LDFLAGS) $(PTHREAD_CFLAGS)

$(FUZZ_PANDA_TARGETS) $(FUZZ_OVS_TARGETS): $(FUZZ_MAIN) \
	$(top_srcdir)/tests/fuzz/fuzz.h lib/panda/libpanda.a
tests/fuzz/fuzz-wire tests/fuzz/fuzz-policy-text tests/fuzz/fuzz-cdf: \
		tests/fuzz/%: $(top_srcdir)/tests/fuzz/%.c
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_CC) -o $@ $< $(FUZZ_MAIN) lib/panda/libpanda.a \
		$(FUZZ_LIBS) $(LIBS)
tests/fuzz/fuzz-mc-reply tests/fuzz/fuzz-fg-request: \
		tests/fuzz/%: $(top_srcdir)/tests/fuzz/%.c load_generator/liblg.a \
		lib/cli/libcli.a
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_CC) -I$(top_srcdir)/load_generator -o $@ $< \
		$(FUZZ_MAIN) load_generator/liblg.a lib/cli/libcli.a \
		lib/panda/libpanda.a $(FUZZ_LIBS) $(LIBS)
tests/fuzz/fuzz-model-input: $(top_srcdir)/tests/fuzz/fuzz-model-input.c \
		$(top_srcdir)/tools/model-input.c lib/cli/libcli.a
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_CC) -I$(top_srcdir)/tools $(MODEL_PCAP_CFLAGS) \
		-o $@ $< $(top_srcdir)/tools/model-input.c $(FUZZ_MAIN) \
		lib/cli/libcli.a lib/panda/libpanda.a $(PCAP_LIBS) \
		$(FUZZ_LIBS) $(LIBS)

FUZZ_TARGETS = $(FUZZ_PANDA_TARGETS)
fuzz-build: $(FUZZ_TARGETS)

if BUILD_OVS
FUZZ_TARGETS += $(FUZZ_OVS_TARGETS)
OVS_SRCDIR = $(abs_top_builddir)/ovs/src
OVS_LIBA = ovs/build/lib/.libs/libopenvswitch.a
# OVS's own link libraries, from its Makefile (known once it is configured).
OVS_FUZZ_LIBS = $(shell sed -n 's/^\(LIBS\|SSL_LIBS\|CAPNG_LDADD\) = //p' \
	ovs/build/Makefile 2>/dev/null)
$(FUZZ_OVS_TARGETS): tests/fuzz/%: $(top_srcdir)/tests/fuzz/%.c $(OVS_LIBA)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(CC) -include ovs/build/config.h -I$(OVS_SRCDIR)/include \
		-I$(OVS_SRCDIR)/lib -I$(OVS_BUILDDIR)/include \
		-I$(OVS_BUILDDIR)/lib -I$(top_srcdir)/tests/fuzz \
		-I$(top_srcdir)/lib $(CFLAGS) \
		-o $@ $< $(FUZZ_MAIN) $(OVS_LIBA) $(OVS_FUZZ_LIBS) \
		$(FUZZ_LIBS) $(LIBS)
# libopenvswitch.a comes from the OVS build (all-local, ovs-build).
$(OVS_LIBA): ovs/configured.stamp
	$(AM_V_at)$(MAKE) -C ovs/build lib/libopenvswitch.la
endif

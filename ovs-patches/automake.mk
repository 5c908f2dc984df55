# Build of the patched Open vSwitch, in $(builddir)/ovs:
#   ovs/pristine  ovs/staging  ovs/src   (see build-aux/ovs-prepare.sh):
#                 upstream + ovs-patches/ (changes to OVS's files) +
#                 ovs-ext/ (the files the series adds, as sources)
#   ovs/build     out-of-tree OVS build, configured once; afterwards OVS's
#                 own makefile reconfigures itself when its inputs change.
# The files of ovs-ext/ (distributed), and its directories too as
# prerequisites: adding, changing or removing a file prepares the tree
# again.
OVS_EXT_FILES = $(shell find $(srcdir)/ovs-ext -type f 2>/dev/null)
OVS_EXT_DEPS = $(shell find $(srcdir)/ovs-ext 2>/dev/null)
EXTRA_DIST += ovs-patches/series $(wildcard $(srcdir)/ovs-patches/*.patch $(srcdir)/ovs-patches/*.series) \
	$(OVS_EXT_FILES) build-aux/ovs-series.sh
dist_noinst_SCRIPTS += build-aux/ovs-prepare.sh \
	build-aux/ovs-patch-tree.sh \
	build-aux/check-patch-series.sh

if BUILD_OVS
OVS_PATCH_FILES = $(wildcard $(srcdir)/ovs-patches/*.patch $(srcdir)/ovs-patches/*.series)
OVS_BUILDDIR = $(abs_top_builddir)/ovs/build

ovs/prepared.stamp: $(OVS_TARBALL) $(srcdir)/ovs-patches/series \
		$(OVS_PATCH_FILES) $(OVS_EXT_DEPS) \
		$(srcdir)/build-aux/ovs-prepare.sh $(srcdir)/build-aux/ovs-series.sh
	$(AM_V_GEN)$(SHELL) $(srcdir)/build-aux/ovs-prepare.sh \
		$(OVS_TARBALL) $(srcdir)/ovs-patches ovs $(srcdir)/ovs-ext \
		&& touch $@

ovs/configured.stamp: ovs/prepared.stamp lib/panda/libpanda.a
	$(AM_V_GEN)if test ! -f ovs/build/config.status; then \
		$(MKDIR_P) ovs/build && (cd ovs/build && \
		../src/configure --enable-silent-rules \
			PANDA_CFLAGS="-I$(abs_top_srcdir)/lib" \
			PANDA_LIBS="$(abs_top_builddir)/lib/panda/libpanda.a" \
			$(OVS_SAN_FLAGS) $(OVS_DPDK_FLAGS) \
			$(OVS_CONFIGURE_FLAGS) > configure.log 2>&1) \
		|| { tail -30 ovs/build/configure.log; exit 1; }; \
	fi && touch $@

# Always descend: OVS's makefile knows what is out of date.
ovs-build: ovs/configured.stamp lib/panda/libpanda.a
	$(AM_V_at)$(MAKE) -C ovs/build
.PHONY: ovs-build ovs-clean
all-local: ovs-build

ovs-clean:
	rm -rf ovs
endif

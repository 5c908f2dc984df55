# lib/panda: the Panda algorithm and model, plain C, no OVS headers.  Every
# header is included as <panda/NAME.h> (with -I$(top_srcdir)/lib), never
# with lib/panda itself on the include path, so that no header here can
# shadow a system or Open vSwitch header of the same name.
noinst_LIBRARIES += lib/panda/libpanda.a
lib_panda_libpanda_a_CFLAGS = $(AM_CFLAGS) -fPIC
lib_panda_libpanda_a_SOURCES = \
	lib/panda/base.c \
	lib/panda/base.h \
	lib/panda/cdf.c \
	lib/panda/classifier.c \
	lib/panda/classifier.h \
	lib/panda/cdf.h \
	lib/panda/conn-table.c \
	lib/panda/conn-table.h \
	lib/panda/frame.h \
	lib/panda/hist.c \
	lib/panda/hist.h \
	lib/panda/model.c \
	lib/panda/model.h \
	lib/panda/packet.h \
	lib/panda/policy.c \
	lib/panda/policy.h \
	lib/panda/rng.c \
	lib/panda/rng.h \
	lib/panda/rxsplit.c \
	lib/panda/rxsplit.h \
	lib/panda/samples.c \
	lib/panda/samples.h \
	lib/panda/scheduler.c \
	lib/panda/scheduler.h \
	lib/panda/sizehist.c \
	lib/panda/sizehist.h \
	lib/panda/solver.c \
	lib/panda/solver.h \
	lib/panda/time.h \
	lib/panda/wire.c \
	lib/panda/wire.h

PANDA_LIBADD = lib/panda/libpanda.a $(LIBS)

# panda/rxsplit.h embeds bpf/panda-rxsplit.bpf.o as a libbpf skeleton where
# the build has BPF programs, and says why not elsewhere.  Only a program
# that calls it (Open vSwitch, which links libbpf) pulls it from the
# archive, so the others need no libbpf.
lib_panda_libpanda_a_CPPFLAGS = $(AM_CPPFLAGS)
if HAVE_BPF
lib_panda_libpanda_a_CPPFLAGS += -DPANDA_RXSPLIT_BPF=1 -I$(builddir)/bpf \
	$(LIBBPF_CFLAGS)
lib/panda/libpanda_a-rxsplit.$(OBJEXT): bpf/panda-rxsplit.skel.h
endif

# The JSON forms of a policy (panda/policy-json.h): jansson, for the tools
# and the shared library only; the datapath links libpanda.a without it.
noinst_LIBRARIES += lib/panda/libpanda-json.a
lib_panda_libpanda_json_a_CFLAGS = $(AM_CFLAGS) -fPIC $(JANSSON_CFLAGS)
lib_panda_libpanda_json_a_SOURCES = \
	lib/panda/policy-json.c \
	lib/panda/policy-json.h

# libpanda-policy.so.1: the stable C API of policies for other languages
# (panda/policy-api.h; Python binds it with ctypes).  Linked without
# libtool, as the one shared object of the tree: the soname carries
# PANDA_API_VERSION, the version script exports panda_api_* alone (under
# the node PANDA_POLICY_1) and hides the rest of lib/panda.  Installed
# beside the Python package in $(pkglibdir), not in the system's library
# path: only pandaovs loads it, by its full path.
pandalibdir = $(pkglibdir)
pandalib_PROGRAMS = lib/panda/libpanda-policy.so.1
lib_panda_libpanda_policy_so_1_SOURCES = \
	lib/panda/policy-api.c \
	lib/panda/policy-api.h
lib_panda_libpanda_policy_so_1_CFLAGS = $(AM_CFLAGS) -fPIC
lib_panda_libpanda_policy_so_1_LDFLAGS = $(AM_LDFLAGS) -shared \
	-Wl,-soname,libpanda-policy.so.1 \
	-Wl,--version-script=$(srcdir)/lib/panda/policy-api.map
# -z defs proves that the object needs nothing its dependencies do not
# bring.  Not in a sanitizer build: clang links the ASan runtime into
# executables only, so a shared object leaves those symbols to the
# program that loads it.
if !SANITIZERS
lib_panda_libpanda_policy_so_1_LDFLAGS += -Wl,-z,defs
endif
lib_panda_libpanda_policy_so_1_LDADD = lib/panda/libpanda-json.a \
	lib/panda/libpanda.a $(JANSSON_LIBS) $(LIBS)
EXTRA_lib_panda_libpanda_policy_so_1_DEPENDENCIES = lib/panda/policy-api.map
EXTRA_DIST += lib/panda/policy-api.map

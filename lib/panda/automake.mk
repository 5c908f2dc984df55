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
	lib/panda/hist.c \
	lib/panda/hist.h \
	lib/panda/model.c \
	lib/panda/model.h \
	lib/panda/packet.h \
	lib/panda/policy.c \
	lib/panda/policy.h \
	lib/panda/rng.c \
	lib/panda/rng.h \
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

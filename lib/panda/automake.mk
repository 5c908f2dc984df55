# lib/panda: the Panda algorithm and model, plain C, no OVS headers.
noinst_LIBRARIES += lib/panda/libpanda.a
lib_panda_libpanda_a_CFLAGS = $(AM_CFLAGS) -fPIC
lib_panda_libpanda_a_SOURCES = \
	lib/panda/cdf.c \
	lib/panda/cdf.h \
	lib/panda/model.c \
	lib/panda/model.h \
	lib/panda/panda.h \
	lib/panda/policy.c \
	lib/panda/scheduler.c \
	lib/panda/scheduler.h \
	lib/panda/table.c \
	lib/panda/util.c \
	lib/panda/util.h
include lib/panda/solver.mk

PANDA_LIBADD = lib/panda/libpanda.a $(LIBS)

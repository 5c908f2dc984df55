# Threshold solvers of the offline model (included from automake.mk).
lib_panda_libpanda_a_SOURCES += lib/panda/solver.c lib/panda/solver.h

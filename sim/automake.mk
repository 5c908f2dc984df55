# sim/: ns-3 simulations of Panda, PIAS, FISH and an oracle with the same
# lib/panda code as the datapath (sim/README.md).  Built only when
# configure found ns-3 (Debian's libns3-dev); otherwise configure says why
# and sim/ns3-status records it for the tests.
EXTRA_DIST += \
	sim/README.md \
	sim/run.py \
	sim/ns3-status.in

SIM_SOURCES = \
	sim/apps.cc \
	sim/apps.h \
	sim/collector.cc \
	sim/collector.h \
	sim/config.cc \
	sim/config.h \
	sim/ecmp-routing.cc \
	sim/ecmp-routing.h \
	sim/handle-queue.cc \
	sim/handle-queue.h \
	sim/host-marker.cc \
	sim/host-marker.h \
	sim/listen-socket.cc \
	sim/listen-socket.h \
	sim/main.cc \
	sim/network.cc \
	sim/network.h \
	sim/oracle.cc \
	sim/oracle.h \
	sim/output.cc \
	sim/output.h \
	sim/panda-lib.cc \
	sim/panda-lib.h \
	sim/queues.cc \
	sim/queues.h \
	sim/records.h \
	sim/workload.cc \
	sim/workload.h \
	sim/world.h
EXTRA_DIST += sim/sched-queue-disc.cc sim/sched-queue-disc.h

# tsl-sim: TCP SkyLine's experiments (sim/TSL.md) on the same network
# builder and queues.
TSL_SIM_SOURCES = \
	sim/tsl-config.cc \
	sim/tsl-config.h \
	sim/tsl-incast.cc \
	sim/tsl-incast.h \
	sim/tsl-main.cc \
	sim/tsl-socket.cc \
	sim/tsl-socket.h \
	sim/tsl-wire.cc \
	sim/tsl-wire.h \
	sim/config.cc \
	sim/ecmp-routing.cc \
	sim/handle-queue.cc \
	sim/network.cc \
	sim/oracle.cc \
	sim/output.cc \
	sim/panda-lib.cc \
	sim/queues.cc
EXTRA_DIST += sim/TSL.md

if HAVE_NS3
noinst_PROGRAMS += sim/panda-sim sim/tsl-sim
sim_tsl_sim_SOURCES = $(TSL_SIM_SOURCES)
sim_tsl_sim_CPPFLAGS = $(AM_CPPFLAGS) $(NS3_CFLAGS) \
	-DPANDA_NS3_VERSION='"$(NS3_VERSION)"'
sim_tsl_sim_CXXFLAGS = $(AM_CXXFLAGS) $(SIM_WARNING_CXXFLAGS)
sim_tsl_sim_LDADD = $(PANDA_LIBADD) $(NS3_LIBS)
sim_panda_sim_SOURCES = $(SIM_SOURCES)
sim_panda_sim_CPPFLAGS = $(AM_CPPFLAGS) $(NS3_CFLAGS) \
	-DPANDA_NS3_VERSION='"$(NS3_VERSION)"'
sim_panda_sim_CXXFLAGS = $(AM_CXXFLAGS) $(SIM_WARNING_CXXFLAGS)
sim_panda_sim_LDADD = $(PANDA_LIBADD) $(NS3_LIBS)
# The scheduler core wrapper, once lib/panda/scheduler.c exists.
if HAVE_PANDA_SCHED
sim_panda_sim_SOURCES += sim/sched-queue-disc.cc sim/sched-queue-disc.h
sim_panda_sim_CPPFLAGS += -DHAVE_PANDA_SCHED
sim_tsl_sim_SOURCES += sim/sched-queue-disc.cc sim/sched-queue-disc.h
sim_tsl_sim_CPPFLAGS += -DHAVE_PANDA_SCHED
endif
endif

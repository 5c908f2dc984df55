# bpf/: BPF programs (clang -target bpf) and their loaders: panda-cc for
# the congestion control, panda-bpf for the tc classifier (bpf/README.md).  Built only when configure found clang, bpftool, libbpf
# and the kernel's BTF (m4/panda-bpf.m4); bpf/bpf-status records what it
# found or why not.
EXTRA_DIST += \
	bpf/README.md \
	bpf/bpf-status.in \
	$(BPF_PROG_SRCS) \
	$(BPF_PROG_INCS) \
	bpf/panda-cls.bpf.c \
	bpf/panda-cls.h \
	bpf/panda-rxsplit.bpf.c

# One source per program, bpf/NAME.bpf.c -> bpf/NAME.bpf.o; a new program
# adds itself here (and its shared headers to BPF_PROG_INCS).
BPF_PROG_SRCS = bpf/panda-dctcp.bpf.c
BPF_PROG_INCS = bpf/panda-dctcp.h

if HAVE_BPF
bpfdir = $(pkglibdir)/bpf
bpf_DATA = $(BPF_PROG_SRCS:.bpf.c=.bpf.o)
CLEANFILES += $(bpf_DATA) bpf/vmlinux.h

# The running kernel's types.  The objects use them with CO-RE (vmlinux.h
# marks every struct preserve_access_index), so libbpf relocates field
# offsets to the kernel they load on, which needs BTF too.
bpf/vmlinux.h:
	$(AM_V_GEN)$(MKDIR_P) bpf && \
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && \
	mv -f $@.tmp $@

# Every BPF object's flags; the programs compiled from lib/panda's headers
# add BPF_LIB_CFLAGS (no libc: freestanding, the system's asm headers).
BPF_CFLAGS_COMMON = -target bpf -O2 -g -Wall -Wextra -Wno-unused-parameter \
	$(LIBBPF_CFLAGS)
BPF_LIB_CFLAGS = $(BPF_CFLAGS_COMMON) -ffreestanding -I$(srcdir)/lib \
	$(BPF_SYS_INCLUDES)
BPF_CFLAGS = $(BPF_CFLAGS_COMMON) -I$(builddir)/bpf -I$(srcdir)/bpf
bpf/%.bpf.o: bpf/%.bpf.c bpf/vmlinux.h $(BPF_PROG_INCS)
	$(AM_V_CC)$(MKDIR_P) bpf && $(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

bin_PROGRAMS += bpf/panda-cc
bpf_panda_cc_SOURCES = bpf/panda-cc.c bpf/loader.c bpf/loader.h $(BPF_PROG_INCS)
bpf_panda_cc_CPPFLAGS = $(AM_CPPFLAGS) -DPANDA_BPF_DIR='"$(bpfdir)"' \
	$(LIBBPF_CFLAGS)
bpf_panda_cc_LDADD = $(CLI_LIBADD) $(LIBBPF_LIBS)
endif

# panda_cls, the tc classifier: lib/panda's per-packet headers compiled for
# BPF (no vmlinux.h: a tc program reads only struct __sk_buff, a stable
# uapi, and the packet, so it needs no CO-RE and no kernel BTF), embedded
# in panda-bpf as a libbpf skeleton, so that the loader needs no object
# file at run time.
BPF_CLS_HDRS = \
	bpf/panda-cls.h \
	lib/panda/classifier.h \
	lib/panda/frame.h \
	lib/panda/hist.h \
	lib/panda/packet.h \
	lib/panda/policy.h \
	lib/panda/sizehist.h \
	lib/panda/time.h

if HAVE_BPF
CLEANFILES += bpf/panda-cls.bpf.o bpf/panda-cls.skel.h

bpf/panda-cls.bpf.o: bpf/panda-cls.bpf.c $(BPF_CLS_HDRS)
	$(AM_V_CC)$(MKDIR_P) bpf && $(BPF_CLANG) $(BPF_LIB_CFLAGS) \
	    -I$(srcdir)/bpf -c $(srcdir)/bpf/panda-cls.bpf.c -o $@

bpf/panda-cls.skel.h: bpf/panda-cls.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton bpf/panda-cls.bpf.o name panda_cls \
	    > $@.tmp && mv -f $@.tmp $@

bin_PROGRAMS += bpf/panda-bpf
bpf_panda_bpf_SOURCES = bpf/panda-bpf.c bpf/loader.c bpf/loader.h \
	$(BPF_CLS_HDRS)
nodist_bpf_panda_bpf_SOURCES = bpf/panda-cls.skel.h
bpf_panda_bpf_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/bpf -I$(srcdir)/bpf \
	$(LIBBPF_CFLAGS) $(MODEL_PCAP_CFLAGS) $(JANSSON_CFLAGS)
bpf_panda_bpf_LDADD = lib/panda/libpanda-json.a $(CLI_LIBADD) \
	$(LIBBPF_LIBS) $(PCAP_LIBS) $(JANSSON_LIBS)
bpf/panda_bpf-panda-bpf.$(OBJEXT): bpf/panda-cls.skel.h
endif

# panda_rxsplit, the kernel split of a port's receive (a packet socket
# fanout program): lib/panda's frame parser and classification compiled for
# BPF like panda_cls (no vmlinux.h: a socket program reads only struct
# __sk_buff and the packet), embedded as a libbpf skeleton in libpanda.a's
# panda/rxsplit.h, which Open vSwitch's netdev-linux calls.
BPF_RXSPLIT_HDRS = \
	lib/panda/classifier.h \
	lib/panda/frame.h \
	lib/panda/packet.h \
	lib/panda/policy.h \
	lib/panda/rxsplit.h

if HAVE_BPF
CLEANFILES += bpf/panda-rxsplit.bpf.o bpf/panda-rxsplit.skel.h

bpf/panda-rxsplit.bpf.o: bpf/panda-rxsplit.bpf.c $(BPF_RXSPLIT_HDRS)
	$(AM_V_CC)$(MKDIR_P) bpf && $(BPF_CLANG) $(BPF_LIB_CFLAGS) \
	    -c $(srcdir)/bpf/panda-rxsplit.bpf.c -o $@

bpf/panda-rxsplit.skel.h: bpf/panda-rxsplit.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton bpf/panda-rxsplit.bpf.o \
	    name panda_rxsplit_bpf > $@.tmp && mv -f $@.tmp $@
endif

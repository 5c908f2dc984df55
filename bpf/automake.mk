# bpf/: BPF programs (clang -target bpf, CO-RE against the kernel's BTF)
# and panda-cc, the loader of the congestion control among them
# (bpf/README.md).  Built only when configure found clang, bpftool, libbpf
# and the kernel's BTF (m4/panda-bpf.m4); bpf/bpf-status records what it
# found or why not.
EXTRA_DIST += \
	bpf/README.md \
	bpf/bpf-status.in \
	$(BPF_PROG_SRCS) \
	$(BPF_PROG_INCS)

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

BPF_CFLAGS = -target bpf -O2 -g -Wall -Wextra -Wno-unused-parameter \
	-I$(builddir)/bpf -I$(srcdir)/bpf $(LIBBPF_CFLAGS)
bpf/%.bpf.o: bpf/%.bpf.c bpf/vmlinux.h $(BPF_PROG_INCS)
	$(AM_V_CC)$(MKDIR_P) bpf && $(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

bin_PROGRAMS += bpf/panda-cc
bpf_panda_cc_SOURCES = bpf/panda-cc.c $(BPF_PROG_INCS)
bpf_panda_cc_CPPFLAGS = $(AM_CPPFLAGS) -DPANDA_BPF_DIR='"$(bpfdir)"' \
	$(LIBBPF_CFLAGS)
bpf_panda_cc_LDADD = $(CLI_LIBADD) $(LIBBPF_LIBS)
endif

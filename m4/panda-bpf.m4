dnl PANDA_CHECK_BPF: the BPF programs in bpf/ and their loader, panda-cc.
dnl
dnl --with-bpf=check (default) builds them when clang can target BPF,
dnl bpftool and libbpf are found and the kernel's BTF is readable (vmlinux.h
dnl is made from it at build time); otherwise they are left out with a
dnl warning.  --with-bpf makes a missing piece an error, --without-bpf skips
dnl them.  bpf/bpf-status records what was found or why not, for the tests
dnl and the testbed (pandaovs.paths.BuildTree.bpf_missing).
dnl
dnl Substitutes BPF_CLANG, BPFTOOL, VMLINUX_BTF, LIBBPF_CFLAGS, LIBBPF_LIBS,
dnl BPF_STATUS, BPF_SYS_INCLUDES; defines the automake conditional HAVE_BPF.
AC_DEFUN([PANDA_CHECK_BPF], [
AC_ARG_WITH([bpf],
  [AS_HELP_STRING([--with-bpf],
    [build the BPF programs in bpf/ (the panda_dctcp congestion control)
     and panda-cc (default: if clang, bpftool, libbpf and kernel BTF are
     found)])],
  [with_bpf=$withval], [with_bpf=check])
AC_ARG_VAR([BPF_CLANG], [clang that compiles the BPF programs (-target bpf)])
AC_ARG_VAR([BPFTOOL], [bpftool, which makes vmlinux.h from the kernel's BTF])
AC_ARG_VAR([VMLINUX_BTF],
  [kernel BTF that bpf/vmlinux.h is made from (default /sys/kernel/btf/vmlinux)])
have_bpf=no
BPF_STATUS="not built: configured --without-bpf"
if test "$with_bpf" != no; then
  BPF_STATUS=
  AC_PATH_PROGS([BPF_CLANG], [clang clang-16 clang-15 clang-14])
  if test -z "$BPF_CLANG"; then
    BPF_STATUS="not built: no clang (install clang-14; ./install-deps.sh does)"
  else
    AC_MSG_CHECKING([whether $BPF_CLANG compiles for -target bpf])
    echo 'int panda_bpf_probe;' > conftest-bpf.c
    if $BPF_CLANG -target bpf -O2 -c conftest-bpf.c -o conftest-bpf.o \
         >&AS_MESSAGE_LOG_FD 2>&1; then
      AC_MSG_RESULT([yes])
    else
      AC_MSG_RESULT([no])
      BPF_STATUS="not built: $BPF_CLANG cannot compile for -target bpf (see config.log)"
    fi
    rm -f conftest-bpf.c conftest-bpf.o
    # The host's system include directories, searched after clang's own
    # (freestanding) headers, for the uapi headers (linux/bpf.h needs
    # asm/types.h from the multiarch directory) of programs that do not
    # use vmlinux.h.
    BPF_SYS_INCLUDES=`$BPF_CLANG -v -E - </dev/null 2>&1 \
      | sed -n '/search starts here:/,/End of search list/s| \(/.*\)|-idirafter \1|p' \
      | tr '\n' ' '`
  fi
  if test -z "$BPF_STATUS"; then
    AC_PATH_PROG([BPFTOOL], [bpftool], [], [$PATH:/usr/sbin:/sbin])
    test -n "$BPFTOOL" || BPF_STATUS="not built: no bpftool (install bpftool; ./install-deps.sh does)"
  fi
  if test -z "$BPF_STATUS"; then
    PKG_CHECK_MODULES([LIBBPF], [libbpf >= 1.0], [],
      [BPF_STATUS="not built: libbpf >= 1.0 not found by pkg-config (install libbpf-dev; ./install-deps.sh does)"])
  fi
  if test -z "$BPF_STATUS"; then
    test -n "$VMLINUX_BTF" || VMLINUX_BTF=/sys/kernel/btf/vmlinux
    AC_MSG_CHECKING([for the kernel's BTF])
    if test -r "$VMLINUX_BTF"; then
      AC_MSG_RESULT([$VMLINUX_BTF])
    else
      AC_MSG_RESULT([no])
      BPF_STATUS="not built: cannot read kernel BTF $VMLINUX_BTF (a kernel with CONFIG_DEBUG_INFO_BTF, or VMLINUX_BTF=FILE)"
    fi
  fi
  if test -z "$BPF_STATUS"; then
    have_bpf=yes
    BPF_STATUS="built: `$BPF_CLANG --version | sed -n 1p`, `$BPFTOOL version 2>/dev/null | sed -n 1p`, libbpf `$PKG_CONFIG --modversion libbpf`, BTF of $VMLINUX_BTF"
  elif test "$with_bpf" = yes; then
    AC_MSG_ERROR([--with-bpf: $BPF_STATUS])
  else
    AC_MSG_WARN([the BPF programs in bpf/ are $BPF_STATUS])
  fi
fi
AM_CONDITIONAL([HAVE_BPF], [test "$have_bpf" = yes])
AC_SUBST([BPF_STATUS])
AC_SUBST([BPF_SYS_INCLUDES])
AC_CONFIG_FILES([bpf/bpf-status])
])

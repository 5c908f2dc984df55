#!/bin/sh
# Builds Panda-OVS (lib/panda, tools, load generator, patched Open vSwitch)
# in ./_build, installing dependencies first.  Idempotent and incremental.
#   BUILD_DIR=dir  build somewhere else      JOBS=n  parallel jobs
#   SANITIZE=1     ASAN+UBSAN build of everything, OVS included, with
#                  clang and libFuzzer (./configure --enable-sanitizers),
#                  in ./_build-san unless BUILD_DIR says otherwise
#   DPDK=1         Open vSwitch with DPDK ports (./configure --with-dpdk,
#                  Debian's dpdk-dev) in ./_build-dpdk (./_build-san-dpdk
#                  with SANITIZE=1) unless BUILD_DIR says otherwise; the
#                  ns-3 simulator, which no port type changes, is left to
#                  the default build (--without-ns3)
set -e
top=$(cd "$(dirname "$0")" && pwd)
if [ "${SANITIZE:-0}" = 1 ]; then
    suffix=-san
    cfg_args="--enable-sanitizers CC=${SAN_CC:-clang-14}"
else
    suffix=
    cfg_args=
fi
if [ "${DPDK:-0}" = 1 ]; then
    suffix=$suffix-dpdk
    cfg_args="$cfg_args --with-dpdk --without-ns3"
fi
build=${BUILD_DIR:-$top/_build$suffix}
jobs=${JOBS:-$(nproc)}

if [ "${SKIP_DEPS:-0}" != 1 ]; then
    "$top/install-deps.sh"
fi
cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ] \
   || [ -n "$(find . -name '*.mk' -newer configure -not -path './_build*' 2>/dev/null | head -1)" ] \
   || [ Makefile.am -nt configure ]; then
    ./bootstrap.sh
fi
mkdir -p "$build"
cd "$build"
if [ ! -f config.status ]; then
    "$top/configure" --enable-silent-rules $cfg_args
fi
make -j"$jobs"
echo "build.sh: built in $build"

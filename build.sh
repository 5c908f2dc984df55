#!/bin/sh
# Builds Panda-OVS (lib/panda, tools, load generator, patched Open vSwitch)
# in ./_build, installing dependencies first.  Idempotent and incremental.
#   BUILD_DIR=dir  build somewhere else      JOBS=n  parallel jobs
#   SANITIZE=1     ASAN+UBSAN build of everything, OVS included, with
#                  clang and libFuzzer (./configure --enable-sanitizers),
#                  in ./_build-san unless BUILD_DIR says otherwise
set -e
top=$(cd "$(dirname "$0")" && pwd)
if [ "${SANITIZE:-0}" = 1 ]; then
    build=${BUILD_DIR:-$top/_build-san}
    san_args="--enable-sanitizers CC=${SAN_CC:-clang-14}"
else
    build=${BUILD_DIR:-$top/_build}
    san_args=
fi
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
    "$top/configure" --enable-silent-rules $san_args
fi
make -j"$jobs"
echo "build.sh: built in $build"

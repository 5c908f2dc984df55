#!/bin/sh
# Builds Panda-OVS (lib/panda, tools, load generator, patched Open vSwitch)
# in ./_build, installing dependencies first.  Idempotent and incremental.
#   BUILD_DIR=dir  build somewhere else      JOBS=n  parallel jobs
set -e
top=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$top/_build}
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
    "$top/configure" --enable-silent-rules
fi
make -j"$jobs"
echo "build.sh: built in $build"

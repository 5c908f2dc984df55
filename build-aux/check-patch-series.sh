#!/bin/sh
# Proves that every patch of ovs-patches/series compiles on its own: applies
# the series to pristine Open vSwitch one patch at a time with 'git am',
# adds the files of ovs-ext/ that the patch's build glue names for the first
# time (as build-aux/ovs-patch-tree.sh init does: the patch as upstream
# would read it), and builds Open vSwitch after each (out of tree,
# incrementally: after the first build only what a patch touches is
# rebuilt).  Also runs OVS's checkpatch on each patch so joined, new files
# included, and fails if a file of ovs-ext/ is added by no patch.  Takes a
# while (a full OVS build, then one incremental build per patch): it is an
# explicit developer command, not part of tests/run.sh.
#
#   build-aux/check-patch-series.sh [WORK_DIR]
#
# WORK_DIR (default: a temporary directory, removed afterwards) holds the
# git tree, the source copy and the build.  lib/panda is taken from
# $BUILD_DIR (default ./_build; ./build.sh builds it).  Prints one line per
# patch and exits non-zero if a patch does not apply, fails checkpatch or
# does not build.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
patches=$top/ovs-patches
ext=$top/ovs-ext
. "$top/build-aux/ovs-series.sh"
build=${BUILD_DIR:-$top/_build}
tarball=${OVS_TARBALL:-/usr/src/openvswitch/openvswitch.tar.gz}
jobs=${JOBS:-$(nproc)}
die() { echo "check-patch-series: $*" >&2; exit 1; }

[ -r "$tarball" ] || die "cannot read $tarball (./install-deps.sh installs it)"
[ -f "$build/lib/panda/libpanda.a" ] \
    || die "no $build/lib/panda/libpanda.a: run ./build.sh first"
if [ $# -ge 1 ]; then
    work=$1
    mkdir -p "$work"
    [ -z "$(ls -A "$work")" ] || die "$work is not empty"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
work=$(cd "$work" && pwd)

list=$(ovs_series_list "$patches") || exit 1

git_tree=$work/git
mkdir -p "$git_tree" "$work/src" "$work/build"
tar -xzf "$tarball" -C "$git_tree" --strip-components=1
(cd "$git_tree" && git init -q && git config user.name check \
    && git config user.email check@invalid && git add -A -f \
    && git commit -q -m pristine)
checkpatch=$git_tree/utilities/checkpatch.py

regen=no
failed=0
n=0
for p in $list; do
    n=$((n + 1))
    log=$work/$n.log
    printf '%s ... ' "$p"
    if ! (cd "$git_tree" && git am -q --keep-cr "$patches/$p") > "$log" 2>&1
    then
        echo "DOES NOT APPLY (git am; see $log)"
        exit 1
    fi
    added=$(ovs_ext_add "$git_tree" "$ext")
    if [ -n "$added" ]; then
        (cd "$git_tree" && git add -f $added && git commit -q --amend --no-edit)
        printf '(+ %s) ' "$(echo $added)"
    fi
    if ! (cd "$git_tree" && git format-patch -1 --stdout) \
            | python3 "$checkpatch" >> "$log" 2>&1; then
        echo "checkpatch: problems (see $log)"
        failed=$((failed + 1))
        continue
    fi
    if (cd "$git_tree" && git show --name-only --format= HEAD) \
            | grep -Eq '(^configure\.ac|\.m4|Makefile\.am|automake\.mk)$'; then
        regen=yes
    fi

    # A clean copy of the tree, regenerated like build-aux/ovs-prepare.sh
    # does, then only changed files copied into the source directory so that
    # make rebuilds only what the patch touches.
    rm -rf "$work/staging"
    mkdir -p "$work/staging"
    (cd "$git_tree" && git archive HEAD) | tar -x -C "$work/staging"
    rm -f "$work/staging/tests/testsuite"
    if [ $regen = yes ]; then
        (cd "$work/staging" && autoreconf --install --force) >> "$log" 2>&1 \
            || { echo "autoreconf failed (see $log)"; exit 1; }
        rm -rf "$work/staging/autom4te.cache"
    fi
    changed=$(rsync -rlc --delete --exclude=autom4te.cache \
              --out-format='%n' "$work/staging/" "$work/src/" | grep -v '/$' || true)
    if echo "$changed" | grep -Eq '(^|/)(configure|Makefile\.in|aclocal\.m4|config\.h\.in)$'; then
        # Autotools outputs newer than their inputs, as ovs-prepare.sh does.
        (cd "$work/src" && touch aclocal.m4 && sleep 1 && touch configure \
            config.h.in && sleep 1 && find . -name Makefile.in -exec touch {} +)
        rm -f "$work/build/config.status"
    fi
    if [ ! -f "$work/build/config.status" ]; then
        (cd "$work/build" && ../src/configure --enable-silent-rules \
            PANDA_CFLAGS="-I$top/lib" \
            PANDA_LIBS="$build/lib/panda/libpanda.a") >> "$log" 2>&1 \
            || { echo "configure FAILED (see $log)"; failed=$((failed + 1)); continue; }
    fi
    start=$(date +%s)
    if make -C "$work/build" -j"$jobs" >> "$log" 2>&1; then
        echo "builds ($(( $(date +%s) - start )) s)"
    else
        echo "BUILD FAILED (see $log)"
        grep -E 'error' "$log" | head -5
        failed=$((failed + 1))
    fi
done
for f in $(ovs_ext_files "$ext"); do
    if [ ! -e "$git_tree/$f" ]; then
        echo "ovs-ext/$f: no patch's build glue names it"
        failed=$((failed + 1))
    fi
done
echo "check-patch-series: $n patches, $failed failed"
[ $failed = 0 ]

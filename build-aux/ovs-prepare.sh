#!/bin/sh
# Prepares the patched Open vSwitch source tree used by the build.
#
#   ovs-prepare.sh TARBALL PATCH_DIR OUT_DIR [EXT_DIR]
#
# OUT_DIR/pristine  the upstream tarball, unpacked once (keyed by checksum)
# OUT_DIR/staging   pristine + the patches listed in PATCH_DIR/series (they
#                   change OVS's own files) + the files of EXT_DIR (the
#                   files the series adds to OVS, kept in this tree as
#                   sources: EXT_DIR/lib/x.c becomes lib/x.c), then
#                   autoreconf'd if any of that touches autotools inputs
# OUT_DIR/src       the tree OVS is built from: only files whose content
#                   differs from staging are copied into it, so a change to
#                   one patch or one file of EXT_DIR rebuilds only what it
#                   touches.
set -eu

tarball=$1
patch_dir=$2
out=$3
ext_dir=${4:-}
. "$(dirname "$0")/ovs-series.sh"

die() { echo "ovs-prepare: $*" >&2; exit 1; }

[ -r "$tarball" ] || die "cannot read $tarball (apt-get install openvswitch-source, or run ./install-deps.sh)"
[ -r "$patch_dir/series" ] || die "missing $patch_dir/series"
command -v rsync >/dev/null || die "rsync not found (run ./install-deps.sh)"

mkdir -p "$out"
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ ! -f "$out/pristine/.tarball-sha256" ] || [ "$(cat "$out/pristine/.tarball-sha256")" != "$sum" ]; then
    echo "ovs-prepare: unpacking $tarball"
    rm -rf "$out/pristine"
    mkdir -p "$out/pristine"
    tar -xzf "$tarball" -C "$out/pristine" --strip-components=1
    echo "$sum" > "$out/pristine/.tarball-sha256"
fi

rm -rf "$out/staging"
cp -a "$out/pristine" "$out/staging"
rm -f "$out/staging/.tarball-sha256"

regen=no
patches=$(ovs_series_list "$patch_dir") || exit 1
for p in $patches; do
    if ! patch -d "$out/staging" -p1 -s -N -F0 --no-backup-if-mismatch < "$patch_dir/$p"; then
        die "patch $p does not apply"
    fi
    if grep -Eq '^\+\+\+ b/(.*configure\.ac|.*\.m4|.*Makefile\.am|.*automake\.mk)' "$patch_dir/$p"; then
        regen=yes
    fi
done
# The files the series adds.  They must be new: a change to a file OVS
# has belongs in a patch, where it shows as a change.
if [ -n "$ext_dir" ]; then
    [ -d "$ext_dir" ] || die "$ext_dir is not a directory"
    for f in $(ovs_ext_files "$ext_dir"); do
        [ ! -e "$out/staging/$f" ] \
            || die "$ext_dir/$f: Open vSwitch (or a patch) already has $f; change it with a patch instead"
        mkdir -p "$out/staging/$(dirname "$f")"
        cp "$ext_dir/$f" "$out/staging/$f"
        case $f in
            configure.ac|*.m4|*Makefile.am|*automake.mk) regen=yes ;;
        esac
    done
    # A file that no build glue names would be copied but never built,
    # distributed or tested: say so rather than leave it dead.
    for f in $(ovs_ext_files "$ext_dir"); do
        ovs_glue_names "$out/staging" "$f" \
            || die "$ext_dir/$f: no automake.mk or Makefile.am of the patched tree names $f (a patch's build glue must)"
    done
fi
if [ $regen = yes ]; then
    (cd "$out/staging" && autoreconf --install --force >/dev/null 2>&1) \
        || die "autoreconf failed in $out/staging"
    rm -rf "$out/staging/autom4te.cache"
fi

mkdir -p "$out/src"
# tests/testsuite is generated from tests/*.at by OVS's makefile; the
# tarball ships a prebuilt one, which must not overwrite (and so hide the
# tests of) the one generated from the patched .at files.
rm -f "$out/staging/tests/testsuite"
changed=$(rsync -rlc --delete --exclude=autom4te.cache --exclude=/tests/testsuite --out-format='%n' \
          "$out/staging/" "$out/src/" | grep -v '/$' || true)
if [ -n "$changed" ]; then
    n=$(echo "$changed" | wc -l)
    echo "ovs-prepare: $n file(s) changed in $out/src"
    # Keep autotools outputs newer than their inputs, so that OVS's own
    # makefile does not try to regenerate them.
    if echo "$changed" | grep -Eq '(configure|Makefile\.in|aclocal\.m4|config\.h\.in)$'; then
        sleep 1
        (cd "$out/src" && touch aclocal.m4 && sleep 1 && touch configure config.h.in \
            && sleep 1 && find . -name Makefile.in -exec touch {} +)
    fi
else
    echo "ovs-prepare: source tree up to date"
fi

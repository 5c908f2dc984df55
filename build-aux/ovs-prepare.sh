#!/bin/sh
# Prepares the patched Open vSwitch source tree used by the build.
#
#   ovs-prepare.sh TARBALL PATCH_DIR OUT_DIR
#
# OUT_DIR/pristine  the upstream tarball, unpacked once (keyed by checksum)
# OUT_DIR/staging   pristine + the patches listed in PATCH_DIR/series, then
#                   autoreconf'd if the series touches autotools inputs
# OUT_DIR/src       the tree OVS is built from: only files whose content
#                   differs from staging are copied into it, so a change to
#                   one patch rebuilds only what that patch touches.
set -eu

tarball=$1
patch_dir=$2
out=$3

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
# series: one patch file name per line ('#' starts a comment); a line naming
# a file that ends in .series includes that file's list (one per topic).
list_patches() {
    sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$1" | while read -r p; do
        [ -n "$p" ] || continue
        case $p in
            *.series)
                [ -r "$patch_dir/$p" ] || die "$1 names $p, which does not exist"
                list_patches "$patch_dir/$p" ;;
            *)
                [ -r "$patch_dir/$p" ] || die "$1 names $p, which does not exist"
                echo "$p" ;;
        esac
    done
}
patches=$(list_patches "$patch_dir/series")
for p in $patches; do
    if ! patch -d "$out/staging" -p1 -s -N -F0 --no-backup-if-mismatch < "$patch_dir/$p"; then
        die "patch $p does not apply"
    fi
    if grep -Eq '^\+\+\+ b/(.*configure\.ac|.*\.m4|.*Makefile\.am|.*automake\.mk)' "$patch_dir/$p"; then
        regen=yes
    fi
done
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

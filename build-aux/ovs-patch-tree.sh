#!/bin/sh
# Developer tool: edit the Open vSwitch patch series as git commits.
#
#   build-aux/ovs-patch-tree.sh init DIR [TARBALL]
#       Unpacks pristine Open vSwitch (Debian's openvswitch-source tarball)
#       into DIR, commits it as "pristine", tags it 'pristine', and applies
#       the series listed in ovs-patches/series with 'git am', one commit
#       per patch.  Edit, reorder, squash or add commits there (git rebase
#       -i pristine), then:
#
#   build-aux/ovs-patch-tree.sh export DIR
#       Replaces ovs-patches/*.patch with 'git format-patch' of
#       pristine..HEAD in DIR (one run, so the numbering is contiguous and
#       every subject reads "[PATCH n/N]"), and rewrites the names in
#       ovs-patches/series and its *.series includes, position by position.
#       If the number of patches changed, it says so and leaves the series
#       files for you to edit.
#
# Check every patch with OVS's checkpatch (utilities/checkpatch.py in DIR)
# and build each one on its own with build-aux/check-patch-series.sh.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
patches=$top/ovs-patches
die() { echo "ovs-patch-tree: $*" >&2; exit 1; }

# The series in application order (the same rules as ovs-prepare.sh).
list_patches() {
    sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$1" | while read -r p; do
        [ -n "$p" ] || continue
        case $p in
            *.series) list_patches "$patches/$p" ;;
            *) echo "$p" ;;
        esac
    done
}

init() {
    dir=$1
    tarball=${2:-/usr/src/openvswitch/openvswitch.tar.gz}
    [ -r "$tarball" ] || die "cannot read $tarball (./install-deps.sh installs it)"
    [ ! -e "$dir" ] || die "$dir exists"
    mkdir -p "$dir"
    tar -xzf "$tarball" -C "$dir" --strip-components=1
    cd "$dir"
    git init -q
    git config user.name "Panda-OVS developers"
    git config user.email "dev@panda-ovs.invalid"
    git add -A -f
    git commit -q -m "pristine Open vSwitch (openvswitch-source tarball)"
    git tag pristine
    for p in $(list_patches "$patches/series"); do
        git am -q --keep-cr "$patches/$p" || die "$p does not apply"
    done
    echo "ovs-patch-tree: $(git rev-list --count pristine..HEAD) patches applied in $dir"
}

export_() {
    dir=$(cd "$1" && pwd)
    old=$(list_patches "$patches/series")
    n_old=$(echo "$old" | wc -l)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    (cd "$dir" && git format-patch -q --numbered --zero-commit \
        --no-signature -o "$tmp" pristine..HEAD)
    new=$(cd "$tmp" && ls ./*.patch | sed 's|^\./||')
    n_new=$(echo "$new" | wc -l)
    rm -f "$patches"/*.patch
    cp "$tmp"/*.patch "$patches"/
    if [ "$n_old" != "$n_new" ]; then
        echo "ovs-patch-tree: $n_new patches exported (the series listed" \
             "$n_old): edit ovs-patches/series and *.series" >&2
        exit 1
    fi
    # Rename position by position in every series file.
    i=1
    for o in $old; do
        nn=$(echo "$new" | sed -n "${i}p")
        for s in "$patches"/series "$patches"/*.series; do
            sed -i "s|^$o\$|$nn|" "$s"
        done
        i=$((i + 1))
    done
    echo "ovs-patch-tree: exported $n_new patches to $patches"
}

case ${1:-} in
    init) shift; [ $# -ge 1 ] || die "usage: $0 init DIR [TARBALL]"; init "$@" ;;
    export) shift; [ $# = 1 ] || die "usage: $0 export DIR"; export_ "$1" ;;
    *) die "usage: $0 init DIR [TARBALL] | export DIR" ;;
esac

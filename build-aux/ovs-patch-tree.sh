#!/bin/sh
# Developer tool: edit the Open vSwitch patch series as git commits.
#
# The series lives in two places in this tree: ovs-patches/ holds the
# changes to Open vSwitch's own files (hooks, build glue, schema, docs,
# tests), one patch per logical change; ovs-ext/ holds, as plain sources at
# their OVS paths, every file the series adds (ovs-ext/lib/x.c is OVS's
# lib/x.c).  In a git tree made by 'init' the two are joined again into
# the series as upstream would read it: each commit adds the files its
# build glue names, in full.
#
#   build-aux/ovs-patch-tree.sh init DIR [TARBALL]
#       Unpacks pristine Open vSwitch (Debian's openvswitch-source tarball)
#       into DIR, commits it as "pristine", tags it 'pristine', and applies
#       the series listed in ovs-patches/series with 'git am', one commit
#       per patch; a commit whose build glue (an automake.mk or
#       Makefile.am) names a file of ovs-ext/ for the first time gets that
#       file too.  Edit, reorder, squash or add commits there (git rebase
#       -i pristine: a new file goes in the commit that adds it to the
#       build, and no later commit changes it), then:
#
#   build-aux/ovs-patch-tree.sh export DIR
#       Copies every file that pristine..HEAD adds into ovs-ext/ (and
#       removes from ovs-ext/ what it no longer adds), then replaces
#       ovs-patches/*.patch with 'git format-patch' of pristine..HEAD
#       without those files (one run, so the numbering is contiguous and
#       every subject reads "[PATCH n/N]"), and rewrites the names in
#       ovs-patches/series and its *.series includes, position by
#       position.  If the number of patches changed, it says so and leaves
#       the series files for you to edit.
#
# After an edit of ovs-ext/ alone (the usual case: the new files are
# ordinary sources), nothing needs exporting; the build copies them.
# build-aux/check-patch-series.sh builds each patch on its own and runs
# OVS's checkpatch on each as upstream would see it (new files included).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
patches=$top/ovs-patches
ext=$top/ovs-ext
. "$top/build-aux/ovs-series.sh"
die() { echo "ovs-patch-tree: $*" >&2; exit 1; }

init() {
    dir=$1
    tarball=${2:-/usr/src/openvswitch/openvswitch.tar.gz}
    [ -r "$tarball" ] || die "cannot read $tarball (./install-deps.sh installs it)"
    [ ! -e "$dir" ] || die "$dir exists"
    list=$(ovs_series_list "$patches") || exit 1
    mkdir -p "$dir"
    tar -xzf "$tarball" -C "$dir" --strip-components=1
    cd "$dir"
    git init -q
    git config user.name "Panda-OVS developers"
    git config user.email "dev@panda-ovs.invalid"
    git add -A -f
    git commit -q -m "pristine Open vSwitch (openvswitch-source tarball)"
    git tag pristine
    for p in $list; do
        git am -q --keep-cr "$patches/$p" || die "$p does not apply"
        added=$(ovs_ext_add . "$ext")
        if [ -n "$added" ]; then
            git add -f $added
            git commit -q --amend --no-edit
        fi
    done
    for f in $(ovs_ext_files "$ext"); do
        [ -e "$f" ] || echo "ovs-patch-tree: warning: no patch's build glue names ovs-ext/$f" >&2
    done
    echo "ovs-patch-tree: $(git rev-list --count pristine..HEAD) patches applied in $dir"
}

export_() {
    dir=$(cd "$1" && pwd)
    old=$(ovs_series_list "$patches") || exit 1
    n_old=$(echo "$old" | wc -l)
    new_files=$(cd "$dir" && git diff --name-only --diff-filter=A pristine HEAD)
    for f in $new_files; do
        ovs_glue_names "$dir" "$f" \
            || die "$f is new but no automake.mk or Makefile.am names it"
    done
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # git format-patch with a pathspec leaves out the excluded files, and
    # the commits that touch nothing else.
    set -- .
    for f in $new_files; do
        set -- "$@" ":(exclude)$f"
    done
    (cd "$dir" && git format-patch -q --numbered --zero-commit \
        --no-signature -o "$tmp" pristine..HEAD -- "$@")
    new=$(cd "$tmp" && ls ./*.patch | sed 's|^\./||')
    n_new=$(echo "$new" | wc -l)

    # ovs-ext/ becomes exactly the new files, at HEAD.
    for f in $(ovs_ext_files "$ext"); do
        echo "$new_files" | grep -qxF "$f" || rm -f "$ext/$f"
    done
    for f in $new_files; do
        mkdir -p "$ext/$(dirname "$f")"
        (cd "$dir" && git show "HEAD:$f") > "$ext/$f"
    done
    find "$ext" -mindepth 1 -type d -empty -delete

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
            [ -e "$s" ] && sed -i "s|^$o\$|$nn|" "$s"
        done
        i=$((i + 1))
    done
    echo "ovs-patch-tree: exported $n_new patches to $patches and" \
         "$(echo "$new_files" | grep -c .) new files to $ext"
}

case ${1:-} in
    init) shift; [ $# -ge 1 ] || die "usage: $0 init DIR [TARBALL]"; init "$@" ;;
    export) shift; [ $# = 1 ] || die "usage: $0 export DIR"; export_ "$1" ;;
    *) die "usage: $0 init DIR [TARBALL] | export DIR" ;;
esac

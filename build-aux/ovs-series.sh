# Shell functions shared by build-aux/ovs-prepare.sh, ovs-patch-tree.sh and
# check-patch-series.sh: how they read the patch series (ovs-patches/) and
# the files that the series adds to Open vSwitch, kept as sources in this
# tree (ovs-ext/, laid out as in OVS's tree).  Sourced, not run.
#
# A file of ovs-ext/ belongs to the patch whose build glue (an automake.mk
# or Makefile.am of OVS) first names it: from that patch on, the file is in
# the tree that patch builds.  ovs-ext/README.md describes the directory
# and is no OVS file.

# ovs_series_list PATCH_DIR [SERIES]: the patch file names of
# PATCH_DIR/series (or SERIES), in order.  One name a line, '#' starts a
# comment; a line naming a file that ends in .series includes that file's
# list (one per topic).  Fails naming a listed file that does not exist.
ovs_series_list() {
    _s=${2:-$1/series}
    [ -r "$_s" ] || { echo "${0##*/}: missing $_s" >&2; return 1; }
    sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$_s" | while read -r _p; do
        [ -n "$_p" ] || continue
        if [ ! -r "$1/$_p" ]; then
            echo "${0##*/}: $_s names $_p, which does not exist" >&2
            exit 1
        fi
        case $_p in
            *.series) ovs_series_list "$1" "$1/$_p" || exit 1 ;;
            *) echo "$_p" ;;
        esac
    done
}

# ovs_ext_files EXT_DIR: the files of EXT_DIR that go into OVS's tree, as
# paths relative to EXT_DIR (= their paths in OVS), sorted.
ovs_ext_files() {
    [ -d "$1" ] || return 0
    (cd "$1" && find . -type f ! -path ./README.md | sed 's|^\./||' \
        | LC_ALL=C sort)
}

# ovs_glue_names TREE PATH: true if an automake.mk or Makefile.am of the
# OVS tree TREE names PATH (as OVS's makefiles do: relative to the top,
# separated by blanks or a line continuation).
ovs_glue_names() {
    _re=$(printf '%s' "$2" | sed 's/[].[\*^$]/\\&/g')
    find "$1" \( -name automake.mk -o -name Makefile.am \) \
         -not -path '*/autom4te.cache/*' -exec cat {} + 2>/dev/null \
        | grep -Eq "(^|[[:space:]])$_re([[:space:]]|\\\\|\$)"
}

# ovs_ext_add TREE EXT_DIR: copies into TREE the files of EXT_DIR that
# TREE's build glue names and TREE does not have yet; prints their paths.
ovs_ext_add() {
    for _f in $(ovs_ext_files "$2"); do
        if [ ! -e "$1/$_f" ] && ovs_glue_names "$1" "$_f"; then
            mkdir -p "$1/$(dirname "$_f")"
            cp "$2/$_f" "$1/$_f"
            echo "$_f"
        fi
    done
}

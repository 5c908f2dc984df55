#!/bin/sh
# Builds the Debian packages of Panda-OVS with dpkg-buildpackage and
# debhelper (packaging/debian/):
#   panda-openvswitch  the patched Open vSwitch under /opt/panda-ovs
#   panda-ovs-tools    panda-model, panda-qos, panda-controller, the load
#                      generator, the pandaovs package, workload CDFs
#
#   packaging/build-debs.sh [--clean] [--check] [--no-dbgsym] [--out DIR]
#
# The packages are made from the tracked files of this checkout as they
# are now (uncommitted changes included: 'git stash create' snapshots
# them without touching the working tree), never from untracked files.
# Version: <configure.ac version>+git<commits>.g<hash>, and .dirty<tree>
# when the tracked files differ from HEAD; apt orders them by commit count.
# panda-openvswitch carries 3.1.0+panda<that version>.
#
# Output: DIR (default _build-deb/ in the checkout; $PANDA_DEB_DIR) holds
# the .deb files of the last build and tree/, the copy the packages are
# built in, kept between runs: its build directory is reused, so after a
# small change only what changed is recompiled.  --clean starts afresh.
# --check runs the unit tests (make check) during the build.
# --no-dbgsym makes no -dbgsym packages (DEB_BUILD_OPTIONS noautodbgsym):
# the test suite's build, which installs none, skips compressing them.
# Needs debhelper, dpkg-dev and the build dependencies of
# packaging/debian/control (./install-deps.sh installs them).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=${PANDA_DEB_DIR:-$top/_build-deb}
clean=no
check=no
dbgsym=yes
while [ $# -gt 0 ]; do
    case $1 in
        --clean) clean=yes ;;
        --check) check=yes ;;
        --no-dbgsym) dbgsym=no ;;
        --out) out=$2; shift ;;
        --out=*) out=${1#--out=} ;;
        -h|--help) sed -n '2,27s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "build-debs.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
die() { echo "build-debs.sh: $*" >&2; exit 1; }
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null \
    || die "dpkg-buildpackage and debhelper are needed (./install-deps.sh installs them)"
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 \
    || die "$top is not a git checkout (the version comes from git)"

# The snapshot: HEAD, or a stash commit holding the uncommitted changes of
# tracked files.
snap=$(git -C "$top" stash create)
base=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$top/configure.ac")
[ -n "$base" ] || die "no version in configure.ac's AC_INIT"
count=$(git -C "$top" rev-list --count HEAD)
hash=$(git -C "$top" rev-parse --short=12 HEAD)
version=$base+git$count.g$hash
if [ -n "$snap" ]; then
    version=$version.dirty$(git -C "$top" rev-parse --short=8 "$snap^{tree}")
else
    snap=HEAD
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
tree=$out/tree
if [ "$clean" = yes ]; then
    rm -rf "$tree"
fi
echo "build-debs.sh: panda-ovs $version in $out"

# Refresh the copy: only files whose content changed are rewritten (rsync
# --checksum, without the commit's times), so make sees just those as
# new; files of the previous snapshot that this one lacks are deleted
# (tree/.snapshot-files lists them).  What the build generated (autotools
# output, _build/) is kept.
stage=$(mktemp -d "$out/.snapshot.XXXXXX")
trap 'rm -rf "$stage" "$stage.files"' EXIT
git -C "$top" archive --format=tar "$snap" | tar -x -C "$stage"
rm -rf "$stage/debian"
mkdir -p "$tree"
rsync --recursive --links --perms --checksum "$stage/" "$tree/"
(cd "$stage" && find . ! -type d | LC_ALL=C sort) > "$stage.files"
if [ -f "$tree/.snapshot-files" ]; then
    LC_ALL=C comm -23 "$tree/.snapshot-files" "$stage.files" \
        | (cd "$tree" && while IFS= read -r f; do rm -f -- "$f"; done)
fi
mv "$stage.files" "$tree/.snapshot-files"
# The commit the programs' --version names (build-aux/git-commit.sh reads
# it where there is no .git).
echo "$hash$( [ "$snap" = HEAD ] || echo -dirty)" > "$tree/.git-commit"
# debian/ is the packaging directory, afresh every time (no debhelper
# state from the previous run), with its changelog.
rsync --recursive --links --perms --delete "$stage/packaging/debian/" "$tree/debian/"
cat > "$tree/debian/changelog" <<EOF
panda-ovs ($version) unstable; urgency=medium

  * Built by packaging/build-debs.sh from commit
    $(git -C "$top" rev-parse HEAD)$( [ "$snap" = HEAD ] || echo ' with uncommitted changes').

 -- Panda-OVS developers <panda-ovs@example.org>  $(date -R)
EOF

rm -f "$out"/*.deb "$out"/*.ddeb "$out"/*.changes "$out"/*.buildinfo
opts="${DEB_BUILD_OPTIONS:-}"
[ "$check" = yes ] || opts="${opts:+$opts }nocheck"
[ "$dbgsym" = yes ] || opts="${opts:+$opts }noautodbgsym"
t0=$(date +%s)
(cd "$tree" && DEB_BUILD_OPTIONS="$opts" \
    dpkg-buildpackage -b -us -uc -j"${JOBS:-$(nproc)}" --no-pre-clean) \
    > "$out/build.log" 2>&1 || { tail -40 "$out/build.log" >&2; die "dpkg-buildpackage failed (log: $out/build.log)"; }
echo "build-debs.sh: built in $(( $(date +%s) - t0 )) s:"
ls -1 "$out"/*.deb

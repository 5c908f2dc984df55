#!/bin/sh
# Writes OUT, a C header defining CLI_GIT_COMMIT: the commit the source
# tree SRCDIR is at (12 hex digits, "-dirty" if tracked files differ from
# it), else the content of SRCDIR/.git-commit (written into source
# snapshots that have no .git, e.g. by packaging/build-debs.sh), else
# "unknown".  OUT is rewritten only when its content changes, so that the
# programs are relinked only when the commit does.
#   build-aux/git-commit.sh SRCDIR OUT
set -eu
srcdir=$1
out=$2
commit=
if git -C "$srcdir" rev-parse --git-dir >/dev/null 2>&1; then
    commit=$(git -C "$srcdir" rev-parse --short=12 HEAD 2>/dev/null || true)
    if [ -n "$commit" ] \
       && [ -n "$(git -C "$srcdir" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
        commit=$commit-dirty
    fi
fi
if [ -z "$commit" ] && [ -r "$srcdir/.git-commit" ]; then
    commit=$(tr -cd '0-9a-z-' < "$srcdir/.git-commit")
fi
[ -n "$commit" ] || commit=unknown
new="#define CLI_GIT_COMMIT \"$commit\""
if [ ! -f "$out" ] || [ "$(cat "$out")" != "$new" ]; then
    mkdir -p "$(dirname "$out")"
    printf '%s\n' "$new" > "$out.tmp"
    mv -f "$out.tmp" "$out"
fi

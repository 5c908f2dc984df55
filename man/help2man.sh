#!/bin/sh
# Writes OUT, the manual page of PAGE, from PROGRAM's --help and --version
# (help2man; $HELP2MAN names it), with the NAME line NAMES gives PAGE.
#   man/help2man.sh PROGRAM PAGE NAMES OUT
# help2man dates the page by $SOURCE_DATE_EPOCH when set (dpkg-buildpackage
# sets it from the changelog), so that a rebuild makes the same page.
set -e
prog=$1 page=$2 names=$3 out=$4
name=$(sed -n "s/^$page[ 	][ 	]*//p" "$names")
if [ -z "$name" ]; then
    echo "$0: $names has no line for $page" >&2
    exit 1
fi
mkdir -p "$(dirname "$out")"
"${HELP2MAN:-help2man}" --no-info --section=1 --name="$name" \
    --output="$out.tmp" "$prog"
mv -f "$out.tmp" "$out"

#!/bin/sh
# Instructions per packet of lib/panda's level decision, exact and
# independent of the machine's load (callgrind), for one version of
# lib/panda or two (the second against the first, as a ratio).
#
#   bench/bench-level.sh [BASE_SRC:BASE_LIB] SRC:LIB
#
# SRC is a checkout (its lib/ has the headers), LIB the libpanda.a built
# from it, e.g. .:_build/lib/panda/libpanda.a.  For each path (the
# connection table, as the datapath calls it; the classifier interface, as
# the load generator's event loop does), policy (Panda, PIAS, compose,
# match) and number of connections (1, 1000), it runs bench/bench-level.c
# under valgrind twice (10000 and 30000 packets) and prints the difference
# per packet: the marginal cost of one packet, warm-up and setup excluded.
# Takes about a minute per version.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "bench-level: $*" >&2; exit 1; }
command -v valgrind >/dev/null || die "needs valgrind (apt install valgrind)"
[ $# = 1 ] || [ $# = 2 ] || die "usage: $0 [BASE_SRC:BASE_LIB] SRC:LIB"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
for v in "$@"; do
    i=$((i + 1))
    src=${v%%:*} lib=${v#*:}
    [ -f "$lib" ] || die "$lib: no such file"
    cc -O2 -I "$src/lib" -o "$tmp/bench-$i" "$top/bench/bench-level.c" \
        "$lib" -lpthread -lm || die "cannot build against $v"
done

PANDA="id=1,threshold=1460,weights=1460:1/9000:2,thresholds=100000/1000000/10000000,dscp=46/26/18/0,queues=0/1/2/3"
PIAS="id=2,kind=pias,thresholds=100000/1000000/10000000,dscp=46/26/18/0,queues=0/1/2/3"
COMPOSE="id=3,kind=compose,match=get\\x20:0,threshold=1460,thresholds=100000/1000000/10000000"
MATCH="id=4,kind=match,match=get\\x20:0/set\\x20:2,levels=3"

# ir EXE MODE POLICY CONNS PACKETS: instructions in the measured loop.
ir() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
        --toggle-collect="loop_$2" "$1" "$2" "$3" "$4" "$5" >/dev/null 2>&1 \
        || die "$1 $2 failed under valgrind"
    sed -n 's/^summary: //p;s/^totals: //p' "$tmp/cg" | head -1
}
per_packet() {
    a=$(ir "$@" 10000)
    b=$(ir "$@" 30000)
    echo "scale=1; ($b - $a) / 20000" | bc
}

if [ $# = 2 ]; then
    echo "instructions per packet: $1 -> $2"
    printf '%-6s %-8s %6s %9s %9s %7s\n' path policy conns base new ratio
else
    echo "instructions per packet: $1"
    printf '%-6s %-8s %6s %9s\n' path policy conns ipp
fi
for mode in table cls; do
    for pol in PANDA PIAS COMPOSE MATCH; do
        eval text=\$$pol
        for conns in 1 1000; do
            a=$(per_packet "$tmp/bench-1" $mode "$text" $conns)
            if [ $# = 2 ]; then
                b=$(per_packet "$tmp/bench-2" $mode "$text" $conns)
                printf '%-6s %-8s %6s %9s %9s %7s\n' $mode $pol $conns "$a" \
                    "$b" "$(echo "scale=3; $b / $a" | bc)"
            else
                printf '%-6s %-8s %6s %9s\n' $mode $pol $conns "$a"
            fi
        done
    done
done
echo "valgrind $(valgrind --version | sed 's/valgrind-//'), $(cc --version | head -1)"

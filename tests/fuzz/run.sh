#!/bin/bash
# Runs the fuzz targets (tests/fuzz/README.md), each for a bounded time on a
# copy of its committed seed corpus (the corpus in the tree is never
# changed), and fails if any crashes.  Prints one line per target
# (executions, and coverage when libFuzzer measures it) and closes with
# "fuzz: N passed, M failed".
#   tests/fuzz/run.sh [-t SECONDS] [-b BUILD_DIR] [-o OUT_DIR] [TARGET...]
#     -t  seconds per target (default 5: the CI run; developers: -t 600)
#     -b  build tree with the targets (default: _build-san when it has
#         libFuzzer targets, else _build); 'make fuzz-build' is run there
#     -o  keep corpora, logs and crash inputs there (default: a temp dir,
#         removed unless something crashed)
#   TARGET: wire policy-text cdf model-input mc-reply fg-request nx-panda
#           odp-panda controller (default: all)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=5
build=
out=
while getopts "t:b:o:" o; do
    case $o in
        t) secs=$OPTARG ;;
        b) build=$OPTARG ;;
        o) out=$OPTARG ;;
        *) sed -n '2,15p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ -z "$build" ]; then
    if [ -x "$top/_build-san/tests/fuzz/fuzz-wire" ] \
       && "$top/_build-san/tests/fuzz/fuzz-wire" -help=1 2>&1 \
          | grep -q libFuzzer; then
        build=$top/_build-san
    else
        build=${BUILD_DIR:-$top/_build}
    fi
fi
targets=${*:-wire policy-text cdf model-input mc-reply fg-request nx-panda odp-panda controller}
keep=1
if [ -z "$out" ]; then
    out=$(mktemp -d /tmp/panda-fuzz.XXXXXX)
    keep=0
fi
mkdir -p "$out"
make -C "$build" fuzz-build > "$out/build.log" 2>&1 || {
    tail -20 "$out/build.log"
    echo "fuzz: 0 passed, 1 failed"
    exit 1
}
# Sanitizers: abort on the first report, so that it is a crash.  Leak
# checks stay off: libFuzzer's own is per input and OVS's parsers keep
# caches by design.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=0:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
passed=0
failed=0
for t in $targets; do
    corpus=$out/corpus-$t
    rm -rf "$corpus"
    mkdir -p "$corpus" "$out/crashes-$t"
    cp "$top/tests/fuzz/corpus/$t"/* "$corpus"/ 2>/dev/null
    log=$out/$t.log
    if [ "$t" = controller ]; then
        cmd=(/usr/bin/python3 "$top/tests/fuzz/fuzz_controller_config.py")
    else
        cmd=("$build/tests/fuzz/fuzz-$t")
    fi
    "${cmd[@]}" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 \
        -seed=1 -print_final_stats=1 -artifact_prefix="$out/crashes-$t/" \
        "$corpus" > "$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [ -n "$execs" ] || execs=$(sed -n 's/.*: \([0-9]*\) executions.*/\1/p' "$log" | tail -1)
    cov=$(grep -oE '(DONE|pulse|NEW|REDUCE) +cov: [0-9]+ ft: [0-9]+' "$log" \
          | tail -1 | sed -E 's/.*cov: ([0-9]+) ft: ([0-9]+)/cov \1, ft \2/')
    engine=plain
    grep -q 'libFuzzer\|INFO: Seed:' "$log" && engine=libFuzzer
    if [ $rc = 0 ]; then
        passed=$((passed + 1))
        printf 'fuzz %-12s ok: %s, %s executions in %s s%s\n' "$t" "$engine" \
            "${execs:-?}" "$secs" "${cov:+, $cov}"
    else
        failed=$((failed + 1))
        keep=1
        printf 'fuzz %-12s FAILED (exit %d): log %s, inputs in %s\n' "$t" \
            "$rc" "$log" "$out/crashes-$t"
        grep -E 'ERROR|runtime error|invariant|SUMMARY|crash' "$log" | head -5
    fi
done
[ $keep = 1 ] || rm -rf "$out"
echo "fuzz: $passed passed, $failed failed"
[ $failed = 0 ]

#!/bin/bash
# Runs every Panda-OVS test: builds first (installing dependencies), then
#   1. lib/panda and tool unit tests (cmocka, via 'make check'),
#   2. the Open vSwitch autotest groups the patches touch
#      (ovs-patches/autotest-keywords),
#   3. the Debian packages (packaging/build-debs.sh), the ovs-dpdk build
#      (DPDK=1 ./build.sh, in $BUILD_DIR-dpdk), then pytest over
#      tests/: the Python package's unit tests, the built programs, the
#      packages, the load generator, and the system tests (network
#      namespaces; root needed, else skipped; the DPDK system test runs
#      on the ovs-dpdk build where hugepages can be reserved);
#   4. the sanitizer build (SANITIZE=1 ./build.sh: ASAN+UBSAN, clang,
#      libFuzzer; in $BUILD_DIR-san) with the C unit tests and the OVS
#      autotests of ovs-patches/autotest-keywords under it;
#   5. every fuzz target for FUZZ_SECONDS (5) seconds (tests/fuzz/run.sh),
#      the libFuzzer ones of stage 4 when it ran, else the plain drivers.
# Prints the skipped tests grouped by reason, then one closing line
# "summary: N passed, M failed, K skipped"; exits non-zero if anything
# failed.  A skip whose reason matches no line of tests/skips-allowed (the
# short list of what a CI machine may lack) is listed as unexpected; with
# STRICT_SKIPS=1 (.ci/run sets it) each unexpected reason counts as a
# failure, so that a suite that silently stopped running its system tests
# (no root, a missing program) cannot pass CI.
#   BUILD_DIR=dir   build tree (default ./_build)
#   SKIP_DEPS=1     do not run install-deps.sh
#   SKIP_OVS_AUTOTEST=1, SKIP_DEBS=1, SKIP_DPDK=1, SKIP_PYTEST=1,
#   SKIP_SANITIZERS=1, SKIP_FUZZ=1       skip a stage
#   PANDA_DPDK_BUILD_DIR=dir             the ovs-dpdk build (default
#                                        $BUILD_DIR-dpdk)
#   PANDA_DEB_DIR=dir                    Debian packages (default
#                                        $BUILD_DIR-deb)
#   PYTEST_ARGS="-k expr"                extra pytest arguments
#   FUZZ_SECONDS=n                       seconds per fuzz target (5)
#   SAN_AUTOTEST_KEYWORDS="k1;k2"        OVS autotests under the sanitizers
#                                        (default: ovs-patches/autotest-keywords)
#   STRICT_SKIPS=1                       an unexpected skip is a failure
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/_build}
export BUILD_DIR=$build PANDA_BUILD_DIR=$build
passed=0
failed=0
skipped=0
log_dir=$build/test-logs
mkdir -p "$log_dir"
skip_file=$log_dir/skips.txt
: > "$skip_file"
# skip COUNT REASON: COUNT tests were not run, for REASON.
skip() {
    [ "${1:-0}" -gt 0 ] 2>/dev/null || return 0
    skipped=$((skipped + $1))
    printf '%s\t%s\n' "$1" "$2" >> "$skip_file"
}
# off STAGE VAR: a stage turned off by its SKIP_ variable.
off() { skip 1 "stage '$1' turned off ($2=1)"; }

suite_t0=$(date +%s)
stage() { printf '\n==== %s (at %d s)\n' "$*" $(( $(date +%s) - suite_t0 )); }
# A build stage: runs COMMAND... with its output in $log_dir/LOG and counts
# one test passed or failed; prints the last N lines of the log on success,
# the last 30 on failure.
build_stage() {
    log=$log_dir/$1 n=$2
    shift 2
    if "$@" > "$log" 2>&1; then
        tail -"$n" "$log"
        passed=$((passed + 1))
    else
        tail -30 "$log"
        failed=$((failed + 1))
    fi
}

stage "build"
if ! "$top/build.sh"; then
    echo "tests/run.sh: build failed" >&2
    echo "summary: 0 passed, 1 failed, 0 skipped"
    exit 1
fi
mkdir -p "$log_dir"

stage "unit tests (make check)"
make -C "$build" check > "$log_dir/make-check.log" 2>&1
rc=$?
grep -E '^(PASS|FAIL|ERROR|XPASS|SKIP):' "$log_dir/make-check.log" | grep -v '^PASS' || true
grep -E '^# (TOTAL|PASS|FAIL|ERROR)' "$log_dir/make-check.log" || true
p=$(sed -n 's/^# PASS: *//p' "$log_dir/make-check.log" | tail -1)
f=$(sed -n 's/^# FAIL: *//p' "$log_dir/make-check.log" | tail -1)
e=$(sed -n 's/^# ERROR: *//p' "$log_dir/make-check.log" | tail -1)
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-0} + ${e:-0}))
for t in $(sed -n 's/^SKIP: *//p' "$log_dir/make-check.log"); do
    skip 1 "unit test $t skipped itself (see its .log in $build)"
done
if [ $rc != 0 ] && [ $((${f:-0} + ${e:-0})) = 0 ]; then
    tail -30 "$log_dir/make-check.log"
    failed=$((failed + 1))
fi

# OVS autotests of keyword $2 in build tree $1 (its ovs/build); adds to
# the totals.
ovs_autotest() {
    local ovsb=$1/ovs/build kw=$2
    echo "-- TESTSUITEFLAGS: -k '$kw' ($ovsb)"
    make -C "$ovsb" check TESTSUITEFLAGS="-j$(nproc) -k '$kw'" \
        > "$log_dir/ovs-autotest.log" 2>&1
    local tslog=$ovsb/tests/testsuite.log ok bad nskip t
    ok=$(grep -cE '^[0-9]+\. .*: ok' "$tslog" 2>/dev/null)
    bad=$(grep -E '^[0-9]+\. .*: FAILED' "$tslog" 2>/dev/null | wc -l)
    nskip=$(grep -cE '^[0-9]+\. .*: skipped' "$tslog" 2>/dev/null)
    sed -n '/^## Summary/,/^$/p;/: FAILED/p' "$tslog" 2>/dev/null | head -20
    echo "   ok ${ok:-0}, failed $bad, skipped ${nskip:-0}"
    if [ "$bad" != 0 ]; then
        # The next keyword's run replaces testsuite.log: keep it, and show
        # the end of it (the failed groups' logs) where CI prints.
        cp "$tslog" "$log_dir/ovs-autotest-${kw// /_}.testsuite.log"
        tail -80 "$tslog"
    fi
    # "NNN. file.at:LINE: testing NAME ... skipped (file.at:LINE)"
    while IFS= read -r t; do
        skip 1 "OVS autotest skipped: $t"
    done < <(sed -nE 's/^[0-9]+\. [^:]*:[0-9]+: (.*): skipped.*/\1/p' \
             "$tslog" 2>/dev/null)
    if [ "${ok:-0}" = 0 ] && [ "$bad" = 0 ]; then
        echo "   no test ran for '$kw'" >&2
        tail -20 "$log_dir/ovs-autotest.log"
        bad=1
    fi
    passed=$((passed + ${ok:-0}))
    failed=$((failed + bad))
}

kw_file=$top/ovs-patches/autotest-keywords
if [ "${SKIP_OVS_AUTOTEST:-0}" != 1 ] && [ -s "$kw_file" ]; then
    stage "Open vSwitch autotests"
    while read -r kw; do
        case $kw in ''|'#'*) continue ;; esac
        ovs_autotest "$build" "$kw"
    done < "$kw_file"
else
    off "Open vSwitch autotests" SKIP_OVS_AUTOTEST
fi

# The Debian packages (packaging/build-debs.sh, in $BUILD_DIR-deb, kept
# between runs so that a rebuild compiles only what changed): the
# packaging tests (tests/build/test_debs.py) and the two-host Ansible test
# (tests/deploy/test_ansible_hosts.py) install them; neither needs the
# -dbgsym packages, which are not made (their compression alone is half a
# CPU-minute).
export PANDA_DEB_DIR=${PANDA_DEB_DIR:-$build-deb}
if [ "${SKIP_DEBS:-0}" != 1 ]; then
    stage "Debian packages (packaging/build-debs.sh)"
    build_stage debs.log 3 "$top/packaging/build-debs.sh" --no-dbgsym \
        --out "$PANDA_DEB_DIR"
else
    off "Debian packages" SKIP_DEBS
fi

# The ovs-dpdk build: the whole patch series built against
# DPDK (the code under #ifdef DPDK_NETDEV compiles nowhere else), kept
# between runs like the packages' tree.  Built here rather than only
# tested when present, so that CI keeps it building.  Cost on a clean
# clone: 9 CPU-minutes (measured: user 7.4 + sys 1.6 min; 20.7 min of wall
# time at load average 10, about 5 on an idle 2-core machine), well inside
# the 90-minute budget with the rest of the suite at about 45; then
# tests/system/test_dpdk.py (3 minutes at load 10; skipped with the reason
# where hugepages cannot be reserved) runs on it in the pytest stage.
# SKIP_DPDK=1 skips the build, and the DPDK tests skip for want of it.
export PANDA_DPDK_BUILD_DIR=${PANDA_DPDK_BUILD_DIR:-$build-dpdk}
if [ "${SKIP_DPDK:-0}" != 1 ]; then
    stage "ovs-dpdk build (DPDK=1 ./build.sh)"
    build_stage dpdk-build.log 1 env SKIP_DEPS=1 DPDK=1 \
        BUILD_DIR="$PANDA_DPDK_BUILD_DIR" "$top/build.sh"
else
    off "ovs-dpdk build" SKIP_DPDK
fi

if [ "${SKIP_PYTEST:-0}" != 1 ]; then
    stage "Python and system tests (pytest)"
    cd "$top"
    # The test tree is tests/ (pytest.ini); the root conftest.py puts
    # python/ (the pandaovs and pandalab packages) on the path.  Debian's interpreter: it
    # has pytest, matplotlib and os-ken.
    /usr/bin/python3 -m pytest -ra -p no:cacheprovider ${PYTEST_ARGS:-} \
        "$top/tests" 2>&1 | tee "$log_dir/pytest.log"
    rc=${PIPESTATUS[0]}
    last=$(grep -E '(passed|failed|error|no tests ran)' "$log_dir/pytest.log" | tail -1)
    p=$(echo "$last" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
    f=$(echo "$last" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+')
    e=$(echo "$last" | grep -oE '[0-9]+ errors?' | grep -oE '[0-9]+')
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0} + ${e:-0}))
    # -ra: "SKIPPED [N] path:line: reason" per group of skipped tests.
    while IFS=$'\t' read -r n why; do
        skip "$n" "$why"
    done < <(sed -nE 's/^SKIPPED \[([0-9]+)\] [^:]+:[0-9]+: (.*)/\1\t\2/p' \
             "$log_dir/pytest.log")
    if [ "$rc" != 0 ] && [ "$rc" != 5 ] && [ $((${f:-0} + ${e:-0})) = 0 ]; then
        failed=$((failed + 1))
    fi
else
    off "Python and system tests" SKIP_PYTEST
fi

fuzz_build=$build
if [ "${SKIP_SANITIZERS:-0}" != 1 ]; then
    # ASAN+UBSAN over lib/panda, lib/cli, the tools, the generator and
    # OVS.  Under them: the C unit tests (all of them) and the OVS
    # autotest groups the patches touch (the same keywords as stage 2:
    # the panda action's own tests and the odp-execute, ofp-actions,
    # dpif-netdev and 'OVS datapath' groups, 46 tests, about 4.5 minutes
    # on 2 busy cores).
    san=${SAN_BUILD_DIR:-$build-san}
    stage "sanitizer build (ASAN+UBSAN) in $san"
    t0=$(date +%s)
    if SANITIZE=1 SKIP_DEPS=1 BUILD_DIR=$san "$top/build.sh" \
            > "$log_dir/san-build.log" 2>&1; then
        echo "   built in $(( $(date +%s) - t0 )) s"
        # Leaks too, for our programs; OVS's testsuite sets its own
        # ASAN_OPTIONS (atlocal), which these must not override.
        ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1} \
        UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
            make -C "$san" check > "$log_dir/san-check.log" 2>&1
        rc=$?
        p=$(sed -n 's/^# PASS: *//p' "$log_dir/san-check.log" | tail -1)
        f=$(sed -n 's/^# FAIL: *//p' "$log_dir/san-check.log" | tail -1)
        e=$(sed -n 's/^# ERROR: *//p' "$log_dir/san-check.log" | tail -1)
        echo "   unit tests under ASAN+UBSAN: pass ${p:-0}, fail ${f:-0}, error ${e:-0}"
        grep -E '^(FAIL|ERROR):' "$log_dir/san-check.log" || true
        passed=$((passed + ${p:-0}))
        failed=$((failed + ${f:-0} + ${e:-0}))
        if [ $rc != 0 ] && [ $((${f:-0} + ${e:-0})) = 0 ]; then
            tail -30 "$log_dir/san-check.log"
            failed=$((failed + 1))
        fi
        if [ -n "${SAN_AUTOTEST_KEYWORDS:-}" ]; then
            IFS=';' read -r -a san_kws <<< "$SAN_AUTOTEST_KEYWORDS"
        else
            mapfile -t san_kws < <(grep -vE '^(#|$)' "$kw_file")
        fi
        for kw in "${san_kws[@]}"; do
            ovs_autotest "$san" "$kw"
        done
        echo "   sanitizer stage: $(( $(date +%s) - t0 )) s"
        fuzz_build=$san
    else
        tail -30 "$log_dir/san-build.log"
        echo "tests/run.sh: sanitizer build failed" >&2
        failed=$((failed + 1))
    fi
else
    off "sanitizer build and tests" SKIP_SANITIZERS
fi

if [ "${SKIP_FUZZ:-0}" != 1 ]; then
    stage "fuzz targets, ${FUZZ_SECONDS:-5} s each ($fuzz_build)"
    "$top/tests/fuzz/run.sh" -t "${FUZZ_SECONDS:-5}" -b "$fuzz_build" \
        2>&1 | tee "$log_dir/fuzz.log"
    last=$(grep -E '^fuzz: [0-9]+ passed, [0-9]+ failed' "$log_dir/fuzz.log" | tail -1)
    p=$(echo "$last" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
    f=$(echo "$last" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+')
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-1}))
else
    off "fuzz targets" SKIP_FUZZ
fi

# The skips, grouped by reason (most first), and which of them the
# allow-list does not expect.
allow=$top/tests/skips-allowed
unexpected=0
if [ -s "$skip_file" ]; then
    stage "skipped: $skipped"
    while IFS=$'\t' read -r n why; do
        if grep -vE '^(#|$)' "$allow" 2>/dev/null | grep -qEf - <(echo "$why"); then
            printf '  %5d  %s\n' "$n" "$why"
        else
            printf '  %5d  %s   [unexpected]\n' "$n" "$why"
            unexpected=$((unexpected + 1))
        fi
    done < <(awk -F'\t' '{c[$2] += $1} END {for (r in c) printf "%d\t%s\n", c[r], r}' \
             "$skip_file" | sort -t$'\t' -k1,1nr -k2)
    if [ $unexpected -gt 0 ]; then
        echo "  $unexpected reason(s) not in tests/skips-allowed"
        if [ "${STRICT_SKIPS:-0}" = 1 ]; then
            echo "  STRICT_SKIPS=1: each counts as a failure"
            failed=$((failed + unexpected))
        fi
    fi
fi

echo
echo "tests/run.sh: $(( $(date +%s) - suite_t0 )) s in all"
echo "summary: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]

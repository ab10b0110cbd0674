#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs every test against $BUILD (default: build): unit tests (cmocka), export and docs checks,
# the multi-process p2p and CollNet suites. Prints one "N passed, M failed" line at the end.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BUILD_ABS=$(cd "$BUILD" && pwd)
export LD_LIBRARY_PATH="$BUILD_ABS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NCCL_JACCL_SOCKET_IFNAME=${NCCL_JACCL_SOCKET_IFNAME:-lo}
if [ "${JACCL_TEST_SAN:-0}" = 1 ]; then
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
# The whole log of each failed suite is kept in JACCL_TEST_LOG_DIR (default $BUILD/test-logs;
# make test-noisy sets its own): the last lines printed below seldom say which check of a long
# suite failed.
JACCL_TEST_LOG_DIR=${JACCL_TEST_LOG_DIR:-$BUILD_ABS/test-logs}
pass=0
fail=0
failed=()

run() { # name, command...
    local name=$1
    shift
    local log
    log=$(mktemp)
    local t0=$SECONDS
    if timeout 900 "$@" >"$log" 2>&1; then
        pass=$((pass + 1))
        echo "PASS $name ($((SECONDS - t0)) s)"
    else
        fail=$((fail + 1))
        failed+=("$name")
        echo "FAIL $name ($((SECONDS - t0)) s); last lines:"
        tail -n 40 "$log" | sed 's/^/    /'
        if [ -n "${JACCL_TEST_LOG_DIR:-}" ] && mkdir -p "$JACCL_TEST_LOG_DIR"; then
            cp "$log" "$JACCL_TEST_LOG_DIR/${name//\//_}.log"
            echo "    (whole log: $JACCL_TEST_LOG_DIR/${name//\//_}.log)"
        fi
    fi
    rm -f "$log"
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] && run "unit/$(basename "$t")" "$t"
done
run check_exports tests/check_exports.sh "$BUILD"
run check_config_doc tests/check_config_doc.sh
run check_spdx tests/check_spdx.sh
run check_layers tests/check_layers.sh "$BUILD"
run check_info env BUILD="$BUILD" tests/check_info.sh
run format make -s format-check
# JACCL_TEST_P2P / JACCL_TEST_COLL: which multi-process tests to run, as run_p2p.sh /
# run_coll.sh arguments ("basic:0,1 fail"); every one when unset (make test-tsan picks some).
# shellcheck disable=SC2086 # word lists on purpose
[ -x tests/run_p2p.sh ] && run p2p tests/run_p2p.sh ${JACCL_TEST_P2P:-}
# shellcheck disable=SC2086
[ -x tests/run_coll.sh ] && run coll tests/run_coll.sh ${JACCL_TEST_COLL:-}

echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "build folder: $BUILD"
echo "suites: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

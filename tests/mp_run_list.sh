# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=sh disable=SC2154 # kind and limit: set by the wrapper
# Sourced by run_p2p.sh and run_coll.sh, which set kind (p2p or coll) and limit (seconds a
# test may take, before the JACCL_TEST_SAN / JACCL_TEST_SLOW stretches). It sees the caller's
# arguments: test names ("basic", or "p2p_basic"), each optionally with scenario indices
# ("basic:1,3" runs the binary with arguments 1 and 3), or none for every $BUILD/tests/mp_$kind_*.
# Runs every binary under `timeout $limit`, prefixing lines with run_$kind, and ends with one
# "N passed, M failed" line (exit status 0 only when every test passed).

BUILD=${BUILD:-build}
LD_LIBRARY_PATH=$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Loopback, and a short liveness deadline so the peer-death tests finish quickly.
NCCL_JACCL_SOCKET_IFNAME=${NCCL_JACCL_SOCKET_IFNAME:-lo}
NCCL_JACCL_TIMEOUT=${NCCL_JACCL_TIMEOUT:-3}
export LD_LIBRARY_PATH NCCL_JACCL_SOCKET_IFNAME NCCL_JACCL_TIMEOUT

# Each test bounds its own ranks with alarm(); this only catches a wedged parent.
# Sanitized code is slower: three times the limit.
[ "${JACCL_TEST_SAN:-0}" = 1 ] && limit=$((limit * 3))
# JACCL_TEST_SLOW=N (a slow machine or fabric) stretches it N times more, like mp_scaled().
limit=$((limit * ${JACCL_TEST_SLOW:-1}))

tests=""
if [ $# -gt 0 ]; then
    for name in "$@"; do
        tests="$tests $BUILD/tests/mp_${kind}_${name#"${kind}"_}"
    done
else
    for t in "$BUILD"/tests/mp_"$kind"_*; do
        case $(basename "$t") in
        *.*) ;; # the build leaves dependency files (.d) beside the binaries
        *) [ -e "$t" ] && tests="$tests $t" ;;
        esac
    done
fi

runner=run_$kind
pass=0
fail=0
failed=""
start=$(date +%s)
for t in $tests; do
    name=$(basename "$t")
    bin=${t%%:*}
    args=""
    case $t in *:*) args=$(echo "${t#*:}" | tr ',' ' ') ;; esac
    if [ ! -x "$bin" ]; then
        echo "$runner: $t not built"
        fail=$((fail + 1))
        failed="$failed $name"
        continue
    fi
    t0=$(date +%s)
    # shellcheck disable=SC2086 # args: scenario indices, split on purpose
    if timeout -k 5 "$limit" "$bin" $args 2>&1; then
        pass=$((pass + 1))
        echo "$runner: PASS $name ($(($(date +%s) - t0)) s)"
    else
        fail=$((fail + 1))
        failed="$failed $name"
        echo "$runner: FAIL $name ($(($(date +%s) - t0)) s)"
    fi
    echo
done

if [ $((pass + fail)) -eq 0 ]; then
    echo "$runner: no tests in $BUILD/tests (run make first)"
    fail=1
fi
[ -n "$failed" ] && echo "$runner: failed:$failed"
echo "$runner: $(($(date +%s) - start)) s against $BUILD/libnccl-net-jaccl.so"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

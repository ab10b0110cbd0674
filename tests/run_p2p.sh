#!/bin/sh
# Runs the multi-process point-to-point tests ($BUILD/tests/mp_p2p_*) against the plugin in
# $BUILD, loaded the way NCCL loads it (by name, through LD_LIBRARY_PATH), and ends with one
# "N passed, M failed" line. Exit status 0 only if every test passed.
#
#   BUILD=build tests/run_p2p.sh              every test
#   BUILD=build tests/run_p2p.sh basic regmr  only mp_p2p_basic and mp_p2p_regmr
#
# JACCL_TEST_SAN=1 (set by `make test-asan`) stretches the timeouts: sanitized code is slower;
# JACCL_TEST_SLOW=N stretches them N times (tests/rdma/suite.sh: soft-RoCE in an emulated VM).
set -u

BUILD=${BUILD:-build}
LD_LIBRARY_PATH=$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Loopback, and a short liveness deadline so the peer-death tests finish quickly.
NCCL_JACCL_SOCKET_IFNAME=${NCCL_JACCL_SOCKET_IFNAME:-lo}
NCCL_JACCL_TIMEOUT=${NCCL_JACCL_TIMEOUT:-3}
export LD_LIBRARY_PATH NCCL_JACCL_SOCKET_IFNAME NCCL_JACCL_TIMEOUT

# Each test bounds its own ranks with alarm(); this only catches a wedged parent.
limit=150
[ "${JACCL_TEST_SAN:-0}" = 1 ] && limit=450
# JACCL_TEST_SLOW=N (a slow machine or fabric) stretches it N times more, like mp_scaled().
limit=$((limit * ${JACCL_TEST_SLOW:-1}))

if [ $# -gt 0 ]; then
    tests=""
    for name in "$@"; do
        tests="$tests $BUILD/tests/mp_p2p_${name#p2p_}"
    done
else
    tests=""
    for t in "$BUILD"/tests/mp_p2p_*; do
        case $(basename "$t") in
        *.*) ;; # the build leaves dependency files (.d) beside the binaries
        *) [ -e "$t" ] && tests="$tests $t" ;;
        esac
    done
fi

runner=run_p2p
. "$(dirname "$0")/mp_run_list.sh"

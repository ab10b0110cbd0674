#!/bin/sh
# Runs the multi-process CollNet tests ($BUILD/tests/mp_coll_*) against the plugin in $BUILD,
# loaded the way NCCL loads it (by name, through LD_LIBRARY_PATH), and ends with one
# "N passed, M failed" line. Exit status 0 only if every test passed.
#
#   BUILD=build tests/run_coll.sh               every test
#   BUILD=build tests/run_coll.sh basic fail    only mp_coll_basic and mp_coll_fail
#   BUILD=build tests/run_coll.sh basic:0,1,5   scenarios 0, 1 and 5 of mp_coll_basic
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
limit=300
[ "${JACCL_TEST_SAN:-0}" = 1 ] && limit=900
# JACCL_TEST_SLOW=N (a slow machine or fabric) stretches it N times more, like mp_scaled().
limit=$((limit * ${JACCL_TEST_SLOW:-1}))

if [ $# -gt 0 ]; then
    tests=""
    for name in "$@"; do
        tests="$tests $BUILD/tests/mp_coll_${name#coll_}"
    done
else
    # Binaries only: the build leaves dependency files (.d) beside them.
    tests=$(ls "$BUILD"/tests/mp_coll_* 2>/dev/null | grep -v '\.')
fi

runner=run_coll
. "$(dirname "$0")/mp_run_list.sh"

#!/usr/bin/env bash
# suite.sh - the verbs test suite, run INSIDE the rxe VM (make test-rdma boots it) from the
# repository root: the point-to-point and CollNet suites on NCCL_JACCL_FABRIC=verbs for UC and
# RC queue pairs, then the same transfers with 1% packet loss on both veth ends, then (with
# RDMA_BENCH=1) the benchmark beside perftest. Every step runs under a timeout; the last line
# is "N passed, M failed"; every step's full log is kept in $BUILD/rdma-logs/.
#
# Emulated CPUs make the shared suites slow (minutes each), so by default UC (the default QP
# type) runs all of run_p2p.sh and run_coll.sh's basic and failure tests, and RC runs
# rdma_p2p; RDMA_FULL=1 runs every shared test for both.
#
# One rank per device: tests/rdma/rdma_p2p sets NCCL_JACCL_HCA itself; the shared suites
# (tests/run_p2p.sh, tests/run_coll.sh) get JACCL_TEST_RANK_ENV_<r>="NAME=VALUE ..." for the
# harness to apply in rank r before it loads the plugin. A harness without that hook runs
# every rank on the first device (rxe0), which still exercises verbs but not the wire.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export LD_LIBRARY_PATH=$BUILD
export NCCL_JACCL_FABRIC=verbs
# The shared suites default to a 3 s liveness deadline; two emulated CPUs running the ranks,
# their threads and the soft-RoCE kernel work stall longer than that, and a 64 MiB message
# takes more than 10 s: the production default (30 s) instead.
export NCCL_JACCL_TIMEOUT=${NCCL_JACCL_TIMEOUT:-30}
# The harness's only "slow machine" switch today: stretches its deadlines x3 (TCG is slower
# than any sanitizer build).
export JACCL_TEST_SAN=${JACCL_TEST_SAN:-1}
export JACCL_TEST_RANK_ENV_0="NCCL_JACCL_HCA==rxe0" JACCL_TEST_RANK_ENV_1="NCCL_JACCL_HCA==rxe1"
# Peers are 10.77.0.x here, not 127.0.0.1: for tests that look for the peer's address in WARNs.
export JACCL_TEST_PEER_MATCH=10.77.0.
STEP_TMO=${RDMA_STEP_TIMEOUT:-900}
pass=0
fail=0
failed=""

LOGS=$BUILD/rdma-logs
rm -rf "$LOGS"
mkdir -p "$LOGS"

run() { # name, command...: PASS/FAIL, with the tail of the log on failure
    local name=$1 t0=$SECONDS log
    shift
    log=$LOGS/$(echo "$name" | tr '/%' '__').log
    if timeout -k 10 "$STEP_TMO" "$@" >"$log" 2>&1; then
        pass=$((pass + 1))
        echo "PASS $name ($((SECONDS - t0)) s)"
        grep -E '^\[[0-9]\] (check|loss):' "$log" | head -4 | sed 's/^/    /'
    else
        fail=$((fail + 1))
        failed="$failed $name"
        echo "FAIL $name ($((SECONDS - t0)) s), last lines:"
        grep -E 'FAIL|failed' "$log" | head -n 20 | sed 's/^/    /'
        tail -n 15 "$log" | sed 's/^/    /'
    fi
}

loss() { # on|off: 1% loss on both directions of the wire between rxe0 and rxe1
    for i in rxv0 rxv1; do
        if [ "$1" = on ]; then tc qdisc add dev $i root netem loss 1%; else tc qdisc del dev $i root; fi
    done
}

echo "devices: $(ibv_devinfo -l 2>/dev/null | tail -n +2 | tr -s ' \n' ' ')"
for qp in uc rc; do
    export NCCL_JACCL_QP_TYPE=$qp
    run "p2p-verbs/$qp" "$BUILD/tests/rdma_p2p" check
    if [ "${RDMA_FULL:-0}" = 1 ]; then
        [ -x tests/run_p2p.sh ] && run "run_p2p/$qp" env BUILD="$BUILD" tests/run_p2p.sh
        [ -x tests/run_coll.sh ] && run "run_coll/$qp" env BUILD="$BUILD" tests/run_coll.sh
    elif [ $qp = uc ]; then
        [ -x tests/run_p2p.sh ] && run "run_p2p/$qp" env BUILD="$BUILD" tests/run_p2p.sh
        [ -x tests/run_coll.sh ] && run "run_coll/$qp" env BUILD="$BUILD" tests/run_coll.sh basic fail
    fi
done
loss on
for qp in uc rc; do
    # Either every byte arrives (retransmitted) or the transfer fails with an error before
    # the deadline; rdma_p2p says which, and fails on a wrong byte or a hang.
    NCCL_JACCL_QP_TYPE=$qp RDMA_TIMEOUT=150 run "p2p-verbs-loss1%/$qp" "$BUILD/tests/rdma_p2p" loss
done
tc -s qdisc show dev rxv0 | grep -o 'dropped [0-9]*' | sed 's/^/netem on rxv0: /'
loss off
if [ "${RDMA_BENCH:-0}" = 1 ]; then
    NCCL_JACCL_QP_TYPE=uc run bench tests/rdma/bench.sh
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

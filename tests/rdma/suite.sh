#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# suite.sh - the verbs test suite, run INSIDE the rxe VM (make test-rdma boots it) from the
# repository root: the shared point-to-point and CollNet suites (tests/run_p2p.sh,
# tests/run_coll.sh) on NCCL_JACCL_FABRIC=verbs for UC and RC queue pairs, then transfers and
# collectives with 1% packet loss on both veth ends, then (with RDMA_BENCH=1) the benchmark
# beside perftest. Every step runs under a timeout; the last line is "N passed, M failed";
# every step's full log is kept in $BUILD/rdma-logs/.
#
# Emulated CPUs make the shared suites about ten times slower than on TCP (every one of them,
# for UC and RC and again under loss, takes 35 minutes), so to keep this suite short (17 minutes
# with the VM's boot on 2026-12-04, UC CollNet 8; 30 and 15 before closes stopped waiting for
# the peers' goodbyes):
#   UC (the default QP type)  every point-to-point test but p2p_lifetime; every CollNet test, but the scenarios
#                             of 5 to 8 ranks only in part (one ring and one mesh of 7 or 8
#                             ranks, two of 5 and 6 in coll_basic; none in window and stress)
#                             and the teardown scenarios on the ring of 2 or 3 ranks (destroy
#                             at once, staggered, leave at once, abort busy and idle);
#   RC                        the same point-to-point tests; CollNet ring and mesh of 2 to 4 ranks,
#                             a rank killed, windows;
#   direct cables             tests/rdma/topo.sh on UC and RC: a triangle and two ranks with two
#                             cables, a soft-RoCE device per cable end (p2p between every pair,
#                             the three collectives on ring, mesh and auto);
#   1% loss                   tests/rdma/rdma_p2p on UC and RC, p2p_basic and CollNet ring and
#                             mesh of 2 and 4 ranks on UC (RC retransmits in hardware).
# RDMA_FULL=1 runs every shared test for UC and RC, and every one again under loss on UC.
#
# Rank r uses device rxe(r % 2) (tests/rdma/rdma_p2p sets NCCL_JACCL_HCA itself; the shared
# suites get JACCL_TEST_RANK_ENV_<r>="NAME=VALUE ..." that the harness applies in rank r before
# it loads the plugin), so ring neighbours and most mesh pairs talk across the veth pair, where
# netem drops packets.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export LD_LIBRARY_PATH=$BUILD
export NCCL_JACCL_FABRIC=verbs
# The shared suites default to a 3 s liveness deadline; two emulated CPUs running up to 8
# ranks, their threads and the soft-RoCE kernel work can stall longer than that.
export NCCL_JACCL_TIMEOUT=${NCCL_JACCL_TIMEOUT:-20}
# The tests' own deadlines, stretched for a slow machine (harness/mp_util.h).
export JACCL_TEST_SLOW=${JACCL_TEST_SLOW:-3}
for r in 0 1 2 3 4 5 6 7; do
    export "JACCL_TEST_RANK_ENV_$r=NCCL_JACCL_HCA==rxe$((r % 2))"
done
# Peers are 10.77.0.x here, not 127.0.0.1: for tests that look for the peer's address in WARNs.
export JACCL_TEST_PEER_MATCH=10.77.0.
# The p2p tests for verbs: every one but p2p_lifetime, the core's leak test (10,000 connect/close
# cycles, most of an hour under emulation; it counts threads, which the verbs back end's
# progress thread makes a moving target). It runs on tcp in every other suite.
P2P_VERBS="badhandle basic close_inflight close_order early_send inflight localfail peerdeath preload regmr teardown truncate"
# CollNet scenario lists, by name (build/tests/mp_coll_<test> --list shows a test's).
COLL_UC="basic:ring-2,mesh-2,ring-3,mesh-3,ring-4,mesh-4,ring-5,mesh-5,mesh-7,ring-8,auto-2,auto-6,rhd-4
         fail
         window:ring-2-v11,ring-3-v11,ring-4-v11,mesh-2-v11,mesh-3-v11,ring-4-v8,mesh-3-v8,rhd-4-v11
         stress:auto-2,auto-3,ring-4
         teardown:destroy-ring,stagger-ring,leave-ring,abort-ring,abort-idle-ring"
COLL_RC="basic:ring-2,mesh-2,ring-3,ring-4,mesh-4,auto-2,rhd-4 fail:killed-ring,killed-mesh
         window:ring-2-v11,mesh-2-v11"
COLL_LOSS="basic:ring-2,mesh-2,ring-4,mesh-4"
# One test at a time, as these lists' durations were measured: the runners' default of two
# (tests/suites.sh) was not tried on two emulated CPUs running soft-RoCE.
export JACCL_TEST_JOBS=${JACCL_TEST_JOBS:-1}
STEP_TMO=${RDMA_STEP_TIMEOUT:-1500} # CollNet on UC took 678 s alone, 900+ on a loaded host
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
        # The log goes with the VM: what failed, which scenario, and its WARNs must be here.
        echo "FAIL $name ($((SECONDS - t0)) s), failed checks and scenarios, WARNs, last lines:"
        grep -E '^not ok|FAIL|failed|\[main\] ---' "$log" | grep -B1 -E '^not ok|FAIL|failed' |
            head -n 40 | sed 's/^/    /'
        grep -E 'WARN' "$log" | tail -n 20 | sed 's/^/    /'
        tail -n 30 "$log" | sed 's/^/    /'
    fi
}

loss() { # on|off: 1% loss on both directions of the wire between rxe0 and rxe1
    for i in rxv0 rxv1; do
        if [ "$1" = on ]; then tc qdisc add dev $i root netem loss 1%; else tc qdisc del dev $i root; fi
    done
}

echo "devices: $(ibv_devinfo -l 2>/dev/null | tail -n +2 | tr -s ' \n' ' ')"
full=${RDMA_FULL:-0}
for qp in uc rc; do
    export NCCL_JACCL_QP_TYPE=$qp
    run "p2p-verbs/$qp" "$BUILD/tests/rdma_p2p" check
    # shellcheck disable=SC2086 # a word list on purpose
    run "run_p2p/$qp" env BUILD="$BUILD" tests/run_p2p.sh $P2P_VERBS
    if [ "$full" = 1 ]; then
        run "run_coll/$qp" env BUILD="$BUILD" tests/run_coll.sh
    else
        list=$COLL_UC
        [ $qp = rc ] && list=$COLL_RC
        # shellcheck disable=SC2086 # a list of test names
        run "run_coll/$qp" env BUILD="$BUILD" tests/run_coll.sh $list
    fi
    # Direct cables on verbs: a triangle and two ranks with two cables, a device per cable end.
    run "topo/$qp" env BUILD="$BUILD" tests/rdma/topo.sh
done
loss on
for qp in uc rc; do
    # Either every byte arrives (retransmitted) or the transfer fails with an error before
    # the deadline; rdma_p2p says which, and fails on a wrong byte or a hang.
    NCCL_JACCL_QP_TYPE=$qp RDMA_TIMEOUT=150 run "p2p-verbs-loss1%/$qp" "$BUILD/tests/rdma_p2p" loss
done
# The shared tests under loss must still pass: every loss is repaired by retransmission.
export NCCL_JACCL_QP_TYPE=uc
if [ "$full" = 1 ]; then
    # shellcheck disable=SC2086
    run "run_p2p-loss1%/uc" env BUILD="$BUILD" tests/run_p2p.sh $P2P_VERBS
    run "run_coll-loss1%/uc" env BUILD="$BUILD" tests/run_coll.sh
else
    run "run_p2p-loss1%/uc" env BUILD="$BUILD" tests/run_p2p.sh basic
    # shellcheck disable=SC2086 # a list of test names
    run "run_coll-loss1%/uc" env BUILD="$BUILD" tests/run_coll.sh $COLL_LOSS
fi
tc -s qdisc show dev rxv0 | grep -o 'dropped [0-9]*' | sed 's/^/netem on rxv0: /'
tc -s qdisc show dev rxv1 | grep -o 'dropped [0-9]*' | sed 's/^/netem on rxv1: /'
loss off
if [ "${RDMA_BENCH:-0}" = 1 ]; then
    NCCL_JACCL_QP_TYPE=uc run bench tests/rdma/bench.sh
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make perf: benchmarks through the plugin's ABI, each printing its own figures beside the
# anchor it is judged against. Not a test: the exit status only says whether a tool failed.
#
#   BUILD=build tools/perf.sh                 everything
#   BUILD=build tools/perf.sh -e 16M -f 4     extra options go to every jaccl-perf p2p run
#
# JACCL_PERF_NSOCKS lists the NCCL_JACCL_NSOCKS values the p2p benchmark is run with.
set -u

BUILD=${BUILD:-build}
LD_LIBRARY_PATH=$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
NCCL_JACCL_SOCKET_IFNAME=${NCCL_JACCL_SOCKET_IFNAME:-lo}
export LD_LIBRARY_PATH NCCL_JACCL_SOCKET_IFNAME

status=0

# ---- point-to-point: jaccl-perf p2p, once per socket count ----
for nsocks in ${JACCL_PERF_NSOCKS:-1 2 4}; do
    echo "### point-to-point, NCCL_JACCL_NSOCKS=$nsocks"
    NCCL_JACCL_NSOCKS=$nsocks "$BUILD/jaccl-perf" p2p "$@" || status=1
    echo
done

# ---- collectives: all-reduce, reduce-scatter, all-gather beside Open MPI and the socket ring ----
echo "### collectives"
BUILD=$BUILD tools/coll-perf.sh || status=1

exit $status

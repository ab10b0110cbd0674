#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make demo: a few local ranks load the plugin by its NCCL name and exchange data through it,
# printing what they measured. Each part is one command; add more below the marked line.
#
#   BUILD=build tools/demo.sh            (JACCL_DEMO_RANKS=4 by default)
set -u

BUILD=${BUILD:-build}
LD_LIBRARY_PATH=$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
NCCL_JACCL_SOCKET_IFNAME=${NCCL_JACCL_SOCKET_IFNAME:-lo}
export LD_LIBRARY_PATH NCCL_JACCL_SOCKET_IFNAME

status=0

echo "=== point-to-point ring"
"$BUILD/demo" -n "${JACCL_DEMO_RANKS:-4}" || status=1
echo

# ---- collectives: add the collective demo below this line ----
# Through the CollNet table (ncclCollNetPlugin_v11): every result is checked against the exact
# expected values; #wrong must be 0.
for op in allreduce reducescatter; do
    echo "=== CollNet $op, ${JACCL_DEMO_RANKS:-4} ranks, float32 sum"
    "$BUILD/jaccl-coll-perf" "$op" -N "${JACCL_DEMO_RANKS:-4}" -b 4K -e 16M -f 8 || status=1
    echo
done

exit $status

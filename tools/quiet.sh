#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Waits until the box has been idle for a moment: at least IDLE (default 0.85) of all CPU time
# idle over 2 s, for at most LIMIT seconds (default 900). On the shared development box other
# jobs come in bursts; benchmark rounds that start in a quiet moment compare what they measure,
# not the neighbours (docs/performance.md). Exit status 1 when it never got quiet.
#
#   tools/quiet.sh && build/jaccl-coll-perf allreduce -N 2 -W 1
set -u
IDLE=${IDLE:-0.85}
LIMIT=${LIMIT:-900}
stat() { awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }
t=0
while [ "$t" -lt "$LIMIT" ]; do
    a=$(stat)
    sleep 2
    b=$(stat)
    echo "$a $b" | awk -v min="$IDLE" '{ exit !(($3 - $1) / ($4 - $2) >= min) }' && exit 0
    t=$((t + 2))
done
exit 1

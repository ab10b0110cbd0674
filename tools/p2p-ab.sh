#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two or more builds of the plugin (or settings) side by side under jaccl-perf p2p, in
# interleaved rounds, with per-cell medians: coll-ab.sh for point-to-point.
#
#   tools/p2p-ab.sh ROUNDS "jaccl-perf p2p arguments" VARIANT...
#
# A VARIANT is a list of NAME=VALUE settings for that run; LD_LIBRARY_PATH=<dir> picks the
# library (default: $BUILD). Each round runs every variant once, in order; the output is one line
# per variant: for each size, the median microseconds per message with the window full (-W) and
# the median one-way ping-pong latency. Example, the build before a change beside the current one:
#
#   tools/p2p-ab.sh 9 "-b 8 -e 8 -t 0" LD_LIBRARY_PATH=/tmp/base/build LD_LIBRARY_PATH=build
set -u
[ $# -ge 3 ] || { sed -n '3,14p' "$0"; exit 2; }
BUILD=${BUILD:-build}
rounds=$1
args=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for r in $(seq "$rounds"); do
    i=0
    for v in "$@"; do
        i=$((i + 1))
        # shellcheck disable=SC2086 # the variant and the arguments are word lists
        env LD_LIBRARY_PATH="$BUILD" NCCL_JACCL_SOCKET_IFNAME="${NCCL_JACCL_SOCKET_IFNAME:-lo}" \
            $v "$BUILD/jaccl-perf" p2p $args 2>/dev/null |
            awk -v v="$i" '/^ +[0-9]/ { print v, $1, $3, $6 }' >>"$tmp/all"
    done
done

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'; }

i=0
for v in "$@"; do
    i=$((i + 1))
    printf '%-36s' "[$v]"
    for s in $(awk '{ print $2 }' "$tmp/all" | sort -nu); do
        m1=$(awk -v i="$i" -v s="$s" '$1 == i && $2 == s { print $3 }' "$tmp/all" | median)
        m2=$(awk -v i="$i" -v s="$s" '$1 == i && $2 == s { print $4 }' "$tmp/all" | median)
        printf ' %sB %s/%s' "$s" "$m1" "$m2"
    done
    echo
done

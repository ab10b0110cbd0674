#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two or more builds of the plugin (or settings) side by side under jaccl-coll-perf, in
# interleaved rounds, with per-cell medians: what a change did, measured in the same minute.
#
#   tools/coll-ab.sh ROUNDS "jaccl-coll-perf arguments" VARIANT...
#
# A VARIANT is a list of NAME=VALUE settings for that run; LD_LIBRARY_PATH=<dir> picks the
# library (default: $BUILD). Each round runs every variant once, in order; the output is one line
# per variant: for each size, the median microseconds per operation of the first and the second
# window (-W, default 1 and 8). Example, the build before a change beside the current one:
#
#   git worktree add /tmp/base HEAD~1 && make -C /tmp/base build/libnccl-net-jaccl.so
#   tools/coll-ab.sh 5 "allreduce -N 2 -b 4K -e 1M -f 4 -n 300" \
#       LD_LIBRARY_PATH=/tmp/base/build LD_LIBRARY_PATH=build
#   tools/coll-ab.sh 5 "allreduce -N 4" NCCL_JACCL_SPIN_US=50 NCCL_JACCL_SPIN_US=0
set -u
[ $# -ge 3 ] || { sed -n '3,16p' "$0"; exit 2; }
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
            $v "$BUILD/jaccl-coll-perf" $args 2>/dev/null |
            awk -v v="$i" '/^ +[0-9]/ { print v, $1, $5, (NF >= 11 ? $9 : "-") }' >>"$tmp/all"
    done
done

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'; }

i=0
for v in "$@"; do
    i=$((i + 1))
    printf '%-36s' "[$v]"
    for s in $(awk '{ print $2 }' "$tmp/all" | sort -nu); do
        m1=$(awk -v i="$i" -v s="$s" '$1 == i && $2 == s { print $3 }' "$tmp/all" | median)
        m2=$(awk -v i="$i" -v s="$s" '$1 == i && $2 == s && $4 != "-" { print $4 }' "$tmp/all" | median)
        printf ' %sK %s/%s' "$((s / 1024))" "$m1" "$m2"
    done
    echo
done

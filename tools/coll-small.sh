#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Small collectives one at a time (-W 1), 4 KiB .. 256 KiB by 4: this build of jaccl, another
# one (BASE, optional) and Open MPI over TCP (tools/mpi/mpi-coll.c, built by coll-perf.sh) in
# interleaved rounds, each round started once the box is quiet (tools/quiet.sh); prints the
# median microseconds per operation of each and the ratios, and the median foreign load of the
# jaccl runs.
#
#   ROUNDS=7 RANKS="2 4" BASE=/tmp/base/build BUILD=build tools/coll-small.sh
set -u
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-7}
RANKS=${RANKS:-2 4}
OPS=${OPS:-allreduce reducescatter allgather}
ITERS=${ITERS:-2000}
BASE=${BASE:-}
export NCCL_JACCL_SOCKET_IFNAME="${NCCL_JACCL_SOCKET_IFNAME:-lo}"
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none --mca pml ob1 \
        --mca btl tcp,self --mca btl_tcp_if_include lo"
SWEEP="-b 4K -e 256K -f 4"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$BUILD/mpi-coll" ] || mpicc -O2 -o "$BUILD/mpi-coll" tools/mpi/mpi-coll.c || exit 1

# tag lib n op: one jaccl run's rows as "tag n op size us", and its foreign load as "L ..."
jaccl() {
    # shellcheck disable=SC2086 # the sweep is a word list
    LD_LIBRARY_PATH=$2 "$BUILD/jaccl-coll-perf" "$4" -N "$3" $SWEEP -W 1 -n "$ITERS" 2>/dev/null |
        awk -v t="$1" -v n="$3" -v op="$4" '/^ +[0-9]/ { print t, n, op, $1, $5 }
            /foreign load/ { print "L", n, op, 0, $4 }'
}

for r in $(seq "$ROUNDS"); do
    for n in $RANKS; do
        for op in $OPS; do
            tools/quiet.sh || echo "# round $r: the box never got quiet" >&2
            jaccl j "$BUILD" "$n" "$op" >>"$tmp/all"
            [ -n "$BASE" ] && jaccl b "$BASE" "$n" "$op" >>"$tmp/all"
            # shellcheck disable=SC2086
            $MPIRUN -np "$n" "$BUILD/mpi-coll" "$op" $SWEEP -n "$ITERS" 2>/dev/null |
                awk -v n="$n" -v op="$op" '/^ +[0-9]/ { print "m", n, op, $1, $5 }' >>"$tmp/all"
        done
    done
done

med() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'; }
cell() { awk -v t="$1" -v n="$2" -v op="$3" -v s="$4" '$1 == t && $2 == n && $3 == op && $4 == s { print $5 }' "$tmp/all" | med; }
ratio() { echo "$1 $2" | awk '{ if ($1 == "-" || $2 == "-" || $2 == 0) print "-"; else printf "%.2f", $1 / $2 }'; }
echo "| n | op | size | jaccl (us) | base (us) | Open MPI (us) | jaccl/MPI | base/MPI |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
for n in $RANKS; do
    for op in $OPS; do
        for s in 4096 16384 65536 262144; do
            j=$(cell j "$n" "$op" "$s") b=$(cell b "$n" "$op" "$s") m=$(cell m "$n" "$op" "$s")
            echo "| $n | $op | $((s / 1024)) KiB | $j | $b | $m | $(ratio "$j" "$m") | $(ratio "$b" "$m") |"
        done
    done
done
echo "foreign load (cores, median of the jaccl runs): $(awk '$1 == "L" { print $5 }' "$tmp/all" | med)"

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# CollNet benchmarks beside their anchors, in one run: for each rank count, jaccl-coll-perf
# (all-reduce, reduce-scatter, all-gather through the plugin's ABI), Open MPI over TCP on
# loopback (tools/mpi/mpi-coll.c, built here with mpicc) and the plain socket ring exchange
# ceiling (jaccl-coll-perf ceiling). Prints each tool's table, then one markdown table per rank
# count with busbw and the ratios jaccl / ceiling and jaccl / Open MPI.
#
# The default sweep is the regime NCCL's CollNet proxy creates (32 KiB .. 1 MiB: it cuts every
# collective into steps of 32 KiB per channel up to 512 KiB and keeps up to 8 in flight): jaccl
# with 1 and with 8 requests in flight beside Open MPI, which runs one operation at a time.
# --long is the old sweep. Beside busbw, each table has the CPU time of all ranks per GB of the
# operation's size, one at a time (both tools' last columns: getrusage of every rank over its
# timed operations), and jaccl's over Open MPI's.
#
#   BUILD=build tools/coll-perf.sh                       2 and 4 ranks, 32 KiB .. 1 MiB
#   BUILD=build tools/coll-perf.sh --long                4 KiB .. 256 MiB by 4
#   RANKS="2" BUILD=build tools/coll-perf.sh -e 64M      extra options go to both benchmarks
#   REPS=9 BUILD=build tools/coll-perf.sh                 rounds (default 5)
#   QUIET=1 BUILD=build tools/coll-perf.sh               each operation's turn starts once the
#                                                        box is quiet (tools/quiet.sh)
#
# Each round runs jaccl then Open MPI for every operation, back to back, and the summary takes
# each cell's median over the rounds (#wrong: the sum): on a shared virtual machine one run of
# either can come out twice as slow as the next, and interleaved rounds put both under the same
# conditions.
#
# Targets (docs/performance.md): all-reduce busbw >= 0.9 x ceiling from 1 MiB up, and
# >= 1.25 x Open MPI with 8 in flight. The foreign-load line of each jaccl run says whether
# the box was quiet; compare numbers from the same run only.
set -u

BUILD=${BUILD:-build}
RANKS=${RANKS:-2 4}
OPS=${OPS:-allreduce reducescatter allgather}
LD_LIBRARY_PATH=$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
NCCL_JACCL_SOCKET_IFNAME=${NCCL_JACCL_SOCKET_IFNAME:-lo}
export LD_LIBRARY_PATH NCCL_JACCL_SOCKET_IFNAME
SWEEP="-b 32K -e 1M -f 2"
if [ "${1:-}" = --long ]; then
    SWEEP="-b 4K -e 256M -f 4"
    shift
fi
[ $# -gt 0 ] && SWEEP="$SWEEP $*"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

have_mpi=0
if command -v mpicc >/dev/null && command -v mpirun >/dev/null &&
    mpicc -O2 -o "$BUILD/mpi-coll" tools/mpi/mpi-coll.c; then
    have_mpi=1
else
    echo "# Open MPI (mpicc/mpirun from openmpi-bin) not available: MPI columns left empty"
fi
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none --mca pml ob1 \
        --mca btl tcp,self --mca btl_tcp_if_include lo"

rows() { grep -E '^ +[0-9]' "$1"; }

# The rows of several runs (files) as one table: per size, the median of every numeric column
# (column 8, #wrong, of the jaccl and MPI tables: the sum). Column 3 and 4 are words.
median_rows() {
    cat "$@" | grep -E '^ +[0-9]' | sort -n -k1,1 | awk '
        function flush(   c, k, i, j, t, line) {
            if (key == "") return
            line = ""
            for (c = 1; c <= nf; c++) {
                if (c == 3 || c == 4) { line = line " " word[c]; continue }
                k = 0
                for (i = 1; i <= n; i++) if ((i, c) in v) a[++k] = v[i, c]
                for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
                    t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
                if (c == 8 && nf >= 8) { t = 0; for (i = 1; i <= k; i++) t += a[i]
                    line = line " " t; continue }
                line = line " " (k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2)
            }
            print "  " line
            delete v; n = 0
        }
        $1 != key { flush(); key = $1 }
        { n++; nf = NF; for (c = 1; c <= NF; c++) v[n, c] = $c; word[3] = $3; word[4] = $4 }
        END { flush() }'
}

# size busbw, one per line, from a table file (column 3 for the ceiling, 7 otherwise)
col() { rows "$1" | awk -v c="$2" '{ print $1, $c }'; }

# jaccl's rows: busbw of the first window in column 7, #wrong in 8, the second window's busbw in
# 11, then the CPU microseconds per operation of each window (12 and 13; 9 when -W names one
# window). Open MPI's: busbw in 7, CPU microseconds in 9. CPU s/GB = CPU per operation / size.
report() { # n op jaccl mpi ceiling
    echo
    echo "| $2, n=$1 | jaccl busbw W1 | jaccl busbw W8 | Open MPI busbw | ceiling GB/s | W1/MPI | W8/MPI | W8/ceiling | jaccl CPU s/GB | Open MPI CPU s/GB | CPU jaccl/MPI | #wrong |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    col "$5" 3 >"$tmp/c"
    col "$4" 7 >"$tmp/m"
    col "$4" 9 >"$tmp/mc"
    rows "$3" | awk -v cf="$tmp/c" -v mf="$tmp/m" -v mcf="$tmp/mc" '
        BEGIN { while ((getline l < cf) > 0) { split(l, a, " "); c[a[1]] = a[2] }
                while ((getline l < mf) > 0) { split(l, a, " "); m[a[1]] = a[2] }
                while ((getline l < mcf) > 0) { split(l, a, " "); mc[a[1]] = a[2] } }
        function human(b) { return b >= 1048576 ? b / 1048576 " MiB" : b / 1024 " KiB" }
        function ratio(x, y) { return y > 0 && x != "" ? sprintf("%.2f", x / y) : "-" }
        function perg(us, b) { return us != "" ? sprintf("%.2f", us * 1000 / b) : "-" }
        { w8 = NF >= 11 ? $11 : ""; cpu = NF >= 13 ? $12 : (NF == 9 ? $9 : "")
          mcpu = ($1 in mc) ? mc[$1] : ""
          printf "| %s | %.2f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", human($1), $7,
                 w8 == "" ? "-" : w8, ($1 in m) ? m[$1] : "-", ($1 in c) ? c[$1] : "-",
                 ratio($7, m[$1]), ratio(w8, m[$1]), ratio(w8, c[$1]), perg(cpu, $1),
                 perg(mcpu, $1), ratio(cpu, mcpu), $8 }'
}

REPS=${REPS:-5}
status=0
for n in $RANKS; do
    for r in $(seq "$REPS"); do
        echo "### $n ranks, round $r of $REPS"
        "$BUILD/jaccl-coll-perf" ceiling -N "$n" $SWEEP | tee "$tmp/ceil.$n.$r" || status=1
        for op in $OPS; do
            [ -n "${QUIET:-}" ] && tools/quiet.sh
            "$BUILD/jaccl-coll-perf" "$op" -N "$n" $SWEEP | tee "$tmp/j.$n.$op.$r" || status=1
            : >"$tmp/m.$n.$op.$r"
            if [ $have_mpi = 1 ]; then
                $MPIRUN -np "$n" "$BUILD/mpi-coll" "$op" $SWEEP 2>/dev/null | tee "$tmp/m.$n.$op.$r"
            fi
        done
    done
done
echo
echo "## Summary (busbw GB/s, medians of $REPS interleaved rounds; ratios of the medians)"
for n in $RANKS; do
    median_rows "$tmp"/ceil.$n.* >"$tmp/ceil.$n"
    for op in $OPS; do
        median_rows "$tmp"/j.$n.$op.* >"$tmp/j.$n.$op"
        median_rows "$tmp"/m.$n.$op.* >"$tmp/m.$n.$op"
        report "$n" "$op" "$tmp/j.$n.$op" "$tmp/m.$n.$op" "$tmp/ceil.$n"
    done
done
exit $status

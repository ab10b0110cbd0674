#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench.sh - inside the rxe VM: jaccl point-to-point bandwidth (tests/rdma/rdma_p2p bench,
# rank 0 on rxe0 -> rank 1 on rxe1, 8 requests in flight like NCCL) beside perftest's
# `ib_write_bw -c UC` between the same two devices, same sizes, same boot. Software RDMA under
# emulation: the numbers compare the two, they say nothing about hardware.
#
# jaccl runs twice per size. "yield": both ranks poll test() with sched_yield() between rounds,
# as NCCL's proxy thread does. "sleep": they sleep 30 us between rounds instead. The VM has two
# emulated CPUs, which the two polling ranks, the plugin's progress threads and the kernel's
# soft-RoCE work share; perftest polls on its client only (its server waits in a socket), so
# "sleep" is the comparison on equal terms and "yield" what NCCL's habit costs on such a box.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
SIZES=${RDMA_BENCH_SIZES:-"65536 1048576 4194304"}
export LD_LIBRARY_PATH=$BUILD NCCL_JACCL_FABRIC=${NCCL_JACCL_FABRIC:-verbs}
gid() { # index of the IPv4-mapped GID of $1, found by content
    local f
    for f in /sys/class/infiniband/$1/ports/1/gids/*; do
        case $(cat "$f") in 0000:0000:0000:0000:0000:ffff:*) basename "$f"; return ;; esac
    done
}
perftest() { # size -> MB/s (average) of ib_write_bw -c UC
    local port=$((18600 + RANDOM % 1000)) n=$(( $1 >= 1048576 ? 64 : 512 ))
    timeout 120 ib_write_bw -d rxe1 -x "$(gid rxe1)" -c UC -s "$1" -n $n -p $port -F >/dev/null 2>&1 &
    sleep 1
    timeout 120 ib_write_bw -d rxe0 -x "$(gid rxe0)" -c UC -s "$1" -n $n -p $port -F 10.77.0.2 2>/dev/null |
        awk -v s="$1" '$1 == s { print $4 }'
    wait
}
jaccl() { # size [env...] -> MB/s of rdma_p2p bench
    local size=$1
    shift
    env "$@" timeout 600 "$BUILD/tests/rdma_p2p" bench "$size" 2>/dev/null |
        awk -v s="$size" '$1 == "jaccl" && $2 == s { print $3 }'
}
ratio() { awk -v j="${1:-0}" -v p="${2:-0}" 'BEGIN { if (p > 0 && j > 0) printf "%.0f%%", 100 * j / p; else print "?" }'; }
# One size at a time, perftest then jaccl, so all see the same (shared, noisy) machine.
printf '%-9s %14s %9s %14s %9s %10s\n' bytes "perftest MB/s" "jaccl" "(yield)" "jaccl" "(sleep)"
ok=1
for s in $SIZES; do
    p=$(perftest "$s")
    [ -n "$p" ] || p=$(perftest "$s") # a port clash or a slow start: once more
    y=$(jaccl "$s" MP_POLL_SLEEP_US=0)
    z=$(jaccl "$s" MP_POLL_SLEEP_US=30)
    [ -n "$y" ] && [ -n "$z" ] || ok=0
    printf '%-9s %14s %9s %14s %9s %10s\n' "$s" "${p:-?}" "${y:-?}" "$(ratio "$y" "$p")" "${z:-?}" "$(ratio "$z" "$p")"
done
[ $ok = 1 ] # jaccl must produce its figures; perftest's are for comparison only

#!/usr/bin/env bash
# bench.sh - inside the rxe VM: jaccl point-to-point bandwidth (tests/rdma/rdma_p2p bench,
# rank 0 on rxe0 -> rank 1 on rxe1, 8 requests in flight like NCCL) beside perftest's
# `ib_write_bw -c UC` between the same two devices, same sizes, same boot. Software RDMA under
# emulation: the numbers compare the two, they say nothing about hardware.
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
jaccl() { # size -> MB/s of rdma_p2p bench
    timeout 600 "$BUILD/tests/rdma_p2p" bench "$1" 2>/dev/null | awk -v s="$1" '$1 == "jaccl" && $2 == s { print $3 }'
}
# One size at a time, perftest then jaccl, so both see the same (shared, noisy) machine.
printf '%-10s %14s %16s %8s\n' bytes "jaccl MB/s" "perftest MB/s" ratio
ok=1
for s in $SIZES; do
    p=$(perftest "$s")
    [ -n "$p" ] || p=$(perftest "$s") # a port clash or a slow start: once more
    j=$(jaccl "$s")
    [ -n "$j" ] || ok=0
    printf '%-10s %14s %16s %8s\n' "$s" "${j:-?}" "${p:-?}" \
        "$(awk -v j="${j:-0}" -v p="${p:-0}" 'BEGIN { if (p > 0) printf "%.0f%%", 100 * j / p; else print "?" }')"
done
[ $ok = 1 ] # jaccl must produce its figures; perftest's are for comparison only

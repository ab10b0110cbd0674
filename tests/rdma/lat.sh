#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# lat.sh - inside the rxe VM: the small-message figures of the verbs back end (issue 23) beside
# perftest, for UC and RC queue pairs, same boot, ROUNDS (default 3) interleaved rounds, medians:
#
#   latency       jaccl-perf p2p's 8-byte ping-pong (lat_us: one-way, 2 receives kept posted)
#                 beside `ib_write_lat` and `ib_send_lat` (t_typical: their median, one-way);
#                 target: jaccl <= 2 x perftest on UC, <= 1.5 x on RC
#   message rate  jaccl-perf p2p's 8-byte stream, 8 requests in flight (kmsg/s) beside
#                 `ib_write_bw -s 8 -t 8` (MsgRate, 8 writes in flight)
#   side frames   per one-way ping-pong message, both ranks (NCCL_JACCL_DEBUG_COUNTERS=1: side_tx),
#                 beside what travels through RDMA instead: RECV advertisements (rdma_adv) and
#                 ACKs / receive credits (rdma_ctl)
#   all-reduce    jaccl-coll-perf allreduce, 2 ranks, 4 KiB, one operation at a time (-W 1), over
#                 the one-way p2p latency of the same round; target <= 3 x
#
# Rank 0 / the perftest client on rxe0 (10.77.0.1), rank 1 / the server on rxe1 (10.77.0.2).
# A round runs every measurement of one QP type, then of the other (UC first in odd rounds, RC
# first in even ones). jaccl's ranks poll with sched_yield() between tests, as NCCL's proxy does;
# perftest's latency tests busy-poll on both sides. Software RDMA under emulation on a shared
# host: the numbers compare jaccl with perftest in one boot, they say nothing about hardware.
#
#   tests/rdma/vm.sh -t 1500 -e ROUNDS -- tests/rdma/lat.sh     (from the host; or make rdma-lat)
# Env: BUILD (build), ROUNDS (3), LAT_N (perftest latency exchanges, 1000), RATE_N (perftest
# rate messages, 5000), P2P_N (jaccl-perf -n, 1000), COLL_N (all-reduce operations, 300).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
ROUNDS=${ROUNDS:-3}
LAT_N=${LAT_N:-1000}
RATE_N=${RATE_N:-5000}
P2P_N=${P2P_N:-1000}
COLL_N=${COLL_N:-300}
export LD_LIBRARY_PATH=$BUILD NCCL_JACCL_FABRIC=verbs
export JACCL_TEST_RANK_ENV_0=NCCL_JACCL_HCA==rxe0 JACCL_TEST_RANK_ENV_1=NCCL_JACCL_HCA==rxe1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gid() { # index of the IPv4-mapped GID of $1, found by content
    local f
    for f in /sys/class/infiniband/$1/ports/1/gids/*; do
        case $(cat "$f") in 0000:0000:0000:0000:0000:ffff:*) basename "$f"; return ;; esac
    done
}
perftest() { # tool conn awk-program args... -> the client's 8-byte row through the program
    local tool=$1 conn=$2 prog=$3 port=$((18600 + RANDOM % 1000)) out
    shift 3
    timeout 120 "$tool" -d rxe1 -x "$(gid rxe1)" -c "$conn" -s 8 -p $port -F "$@" >/dev/null 2>&1 &
    sleep 1
    out=$(timeout 120 "$tool" -d rxe0 -x "$(gid rxe0)" -c "$conn" -s 8 -p $port -F "$@" 10.77.0.2 2>/dev/null |
        awk '$1 == 8 && NF >= 5' | awk "$prog")
    wait
    echo "$out"
}
once() { # perftest, once more on nothing (a port clash or a slow start)
    local v
    v=$(perftest "$@")
    [ -n "$v" ] || v=$(perftest "$@")
    echo "$v"
}
add() { [ -z "$2" ] || echo "$r $qp $1 $2" >>"$tmp/all"; } # name value (of measure's round)
# One QP type, every measurement: "round qp name value" lines into $tmp/all, one line to stdout.
measure() {
    local r=$1 qp=$2 QP wl sl wb pl pr sf sa sc ar
    QP=${qp^^}
    wl=$(once ib_write_lat "$QP" '{ print $5 }' -n "$LAT_N")
    sl=$(once ib_send_lat "$QP" '{ print $5 }' -n "$LAT_N")
    wb=$(once ib_write_bw "$QP" '{ printf "%.2f\n", $5 * 1000 }' -n "$RATE_N" -t 8)
    NCCL_JACCL_QP_TYPE=$qp NCCL_JACCL_DEBUG_COUNTERS=1 timeout 300 \
        "$BUILD/jaccl-perf" p2p -b 8 -e 8 -t 0 -n "$P2P_N" -R 3 -W 8 >"$tmp/p2p" 2>&1
    # lat_us, and kmsg/s from time_us (the kmsg/s column has one decimal)
    read -r pl pr < <(awk '$1 == 8 && $2 ~ /^[0-9]+$/ { printf "%s %.2f\n", $6, 1000 / $3 }' "$tmp/p2p")
    read -r sf sa sc < <(awk '/^# syscalls\/msg +8:/ {
        match($0, /verbs side frames [0-9.]+/); f = substr($0, RSTART + 18, RLENGTH - 18)
        match($0, /verbs RDMA adverts [0-9.]+/); a = substr($0, RSTART + 19, RLENGTH - 19)
        match($0, /verbs RDMA ACKs\/credits [0-9.]+/); c = substr($0, RSTART + 24, RLENGTH - 24)
        print f, a, c }' "$tmp/p2p")
    NCCL_JACCL_QP_TYPE=$qp timeout 300 "$BUILD/jaccl-coll-perf" allreduce -N 2 -b 4K -e 4K -W 1 \
        -n "$COLL_N" >"$tmp/coll" 2>&1
    ar=$(awk '$1 == 4096 { print $5 }' "$tmp/coll")
    [ -n "${pl:-}" ] || { echo "# round $r $qp: jaccl-perf gave no row:"; tail -n 15 "$tmp/p2p"; }
    [ -n "$ar" ] || { echo "# round $r $qp: jaccl-coll-perf gave no row:"; tail -n 15 "$tmp/coll"; }
    add write_lat "${wl:-}"; add send_lat "${sl:-}"; add write_rate "${wb:-}"; add lat "${pl:-}"
    add rate "${pr:-}"; add side "${sf:-}"; add adverts "${sa:-}"; add ctls "${sc:-}"
    add allreduce "${ar:-}"
    printf '# round %d %s: ib_write_lat %s us, ib_send_lat %s us, ib_write_bw %s kmsg/s | jaccl lat %s us, %s kmsg/s, side %s, RDMA adverts %s, ACKs/credits %s | all-reduce 4 KiB %s us\n' \
        "$r" "$QP" "${wl:-?}" "${sl:-?}" "${wb:-?}" "${pl:-?}" "${pr:-?}" "${sf:-?}" "${sa:-?}" "${sc:-?}" "${ar:-?}"
}

echo "# lat.sh: $ROUNDS interleaved rounds, $(ibv_devinfo -l 2>/dev/null | tail -n +2 | tr -s ' \t\n' ' ')(rank 0 / client on rxe0)"
echo "# perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null), kernel $(uname -r), $(nproc) CPUs, library $BUILD/libnccl-net-jaccl.so"
t0=$SECONDS
for r in $(seq "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then order="uc rc"; else order="rc uc"; fi
    for qp in $order; do measure "$r" "$qp"; done
done

med() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
cell() { awk -v q="$1" -v k="$2" '$2 == q && $3 == k { print $4 }' "$tmp/all" | med; }
x() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a != "" && b > 0) printf "%.2f x", a / b; else print "?" }'; }
pct() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a != "" && b > 0) printf "%.0f %%", 100 * a / b; else print "?" }'; }
verdict() { # value limit
    awk -v a="${1:-}" -v l="$2" 'BEGIN { if (a !~ /^[0-9.]+$/) print "?"; else if (a + 0 <= l + 0) print "met"; else print "NOT met" }'
}
row() { printf '%-46s %14s %14s  %s\n' "$1" "${2:-?}" "${3:-?}" "${4:-}"; }
for q in uc rc; do
    for k in write_lat send_lat write_rate lat rate side adverts ctls allreduce; do
        eval "${k}_$q=\$(cell $q $k)"
    done
done
# shellcheck disable=SC2154 # the cells are set by the eval above
{
    echo
    echo "# medians of $ROUNDS rounds (the rounds above), 8 B unless said; $((SECONDS - t0)) s"
    row "" UC RC
    row "perftest ib_write_lat, one-way us" "$write_lat_uc" "$write_lat_rc"
    row "perftest ib_send_lat, one-way us" "$send_lat_uc" "$send_lat_rc"
    row "jaccl p2p ping-pong, one-way us (lat_us)" "$lat_uc" "$lat_rc"
    wx_uc=$(x "$lat_uc" "$write_lat_uc") wx_rc=$(x "$lat_rc" "$write_lat_rc")
    sx_uc=$(x "$lat_uc" "$send_lat_uc") sx_rc=$(x "$lat_rc" "$send_lat_rc")
    row "  jaccl / ib_write_lat" "$wx_uc" "$wx_rc" \
        "target UC <= 2, RC <= 1.5: $(verdict "${wx_uc% x}" 2) / $(verdict "${wx_rc% x}" 1.5)"
    row "  jaccl / ib_send_lat" "$sx_uc" "$sx_rc" \
        "target UC <= 2, RC <= 1.5: $(verdict "${sx_uc% x}" 2) / $(verdict "${sx_rc% x}" 1.5)"
    row "perftest ib_write_bw -t 8, kmsg/s" "$write_rate_uc" "$write_rate_rc"
    row "jaccl p2p stream, 8 in flight, kmsg/s" "$rate_uc" "$rate_rc"
    row "  jaccl / perftest" "$(pct "$rate_uc" "$write_rate_uc")" "$(pct "$rate_rc" "$write_rate_rc")"
    row "side frames per one-way message (side_tx)" "$side_uc" "$side_rc"
    row "  target RC 0, UC <= 0.1" "$(verdict "$side_uc" 0.1)" "$(verdict "$side_rc" 0)"
    row "RECV adverts through RDMA per message" "$adverts_uc" "$adverts_rc"
    row "ACKs / credits through RDMA per message" "$ctls_uc" "$ctls_rc"
    row "all-reduce 4 KiB, 2 ranks, -W 1, us" "$allreduce_uc" "$allreduce_rc"
    ax_uc=$(x "$allreduce_uc" "$lat_uc") ax_rc=$(x "$allreduce_rc" "$lat_rc")
    row "  all-reduce / jaccl one-way p2p" "$ax_uc" "$ax_rc" \
        "target <= 3: $(verdict "${ax_uc% x}" 3) / $(verdict "${ax_rc% x}" 3)"
}
# jaccl must produce its figures every round; perftest's are for comparison only
for q in uc rc; do
    for k in lat rate side allreduce; do
        [ "$(awk -v q=$q -v k=$k '$2 == q && $3 == k' "$tmp/all" | wc -l)" = "$ROUNDS" ] || exit 1
    done
done

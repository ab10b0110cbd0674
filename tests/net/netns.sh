#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# netns.sh - a real network between two "hosts": network namespaces A (10.99.0.1/24) and
# B (10.99.0.2/24) joined by a veth pair. Each test runs one rank per namespace over the tcp
# fabric (NCCL_JACCL_SOCKET_IFNAME = that namespace's veth), and the ranks meet through the
# tools' multi-host rendezvous (--rank/--nranks/--root 10.99.0.1:PORT), so every byte, the
# rendezvous included, crosses the veth and whatever qdisc sits on it.
#
#   BUILD=build tests/net/netns.sh                  every test
#   BUILD=build tests/net/netns.sh netem flap       only these (bench netem down flap drain)
#
# Tests:
#   bench  jaccl-perf p2p and jaccl-coll-perf allreduce across the namespaces, once with the
#          flags and once launched by mpirun (Open MPI's environment fills them) if installed
#   netem  netem on both veth ends: 5 ms +- 1 ms delay, 1% loss, 1% duplication, 10%
#          reordering; p2p (jaccl-perf check: every byte and the guard behind it verified,
#          both directions, 512 B .. 4 MiB, many small messages) and the three collectives
#          on ring and on mesh (jaccl-coll-perf checks every result element)
#   down   the link taken down in the middle of a stream (NCCL_JACCL_TIMEOUT=3): both ranks
#          must fail within the deadline, with a NET/JACCL WARN, and nothing may hang
#   flap   the link down for 2 s in the middle of a stream (less than NCCL_JACCL_TIMEOUT=10):
#          the stream must finish with every byte right
#   drain  a slow link (tbf 50 Mbit/s), 4 MiB messages: the sender closes its comms as soon as
#          its own requests are done, as NCCL's proxy does, while its last bytes are still on
#          the way; the receiver must still get every one of them
#
# Needs root, `ip netns`, veth, and the sch_netem and sch_tbf qdiscs (tbf paces the down and
# flap streams so that they are surely running when the link goes). Where one is missing
# the script says which and fails; JACCL_NET_SKIP=1 makes that a skip (exit 0) instead, for
# a developer's machine. Where this kernel lacks netem (some cloud kernels are built without
# it) the netem test runs inside the soft-RoCE VM of make test-rdma, whose Debian kernel has
# sch_netem; the other tests still run here. JACCL_NET_VM=0 turns that fallback off.
# JACCL_TEST_SLOW=N stretches every deadline N times. Logs stay in $BUILD/net-logs/.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export BUILD
SLOW=${JACCL_TEST_SLOW:-1}
LOGS=${JACCL_NET_LOGS:-$BUILD/net-logs}
A=jnA$$ B=jnB$$ VA=jva$$ VB=jvb$$
IP_A=10.99.0.1 IP_B=10.99.0.2
NETEM=(delay 5ms 1ms distribution normal loss 1% duplicate 1% reorder 10% 50%)
PORT=$((29600 + $$ % 200))
PIDS=()
pass=0 fail=0

say() { echo "[net] $*" | tee -a "$LOGS/summary.log"; }

cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    ip netns del "$A" 2>/dev/null
    ip netns del "$B" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# What is missing, or nothing; the netem qdisc too when $1 = 1, tbf when $2 = 1. Tried on a
# throw-away pair so the real one starts clean.
missing() {
    [ "$(id -u)" -eq 0 ] || { echo "not root (network namespaces need CAP_NET_ADMIN)"; return; }
    if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
        echo "ip/tc (iproute2) not installed"
        return
    fi
    ip netns add "$A" 2>/dev/null || { echo "'ip netns add' failed"; return; }
    ip netns add "$B" 2>/dev/null || { echo "'ip netns add' failed"; return; }
    ip link add "$VA" netns "$A" type veth peer name "$VB" netns "$B" 2>/dev/null ||
        { echo "cannot create a veth pair (no veth driver?)"; return; }
    command -v modprobe >/dev/null && { modprobe sch_netem; modprobe sch_tbf; } 2>/dev/null
    if [ "$1" = 1 ] && ! ip netns exec "$A" tc qdisc replace dev "$VA" root netem delay 1ms 2>/dev/null; then
        echo "the netem qdisc is unavailable (kernel without sch_netem: 'modprobe sch_netem' fails or CONFIG_NET_SCH_NETEM is off)"
        return
    fi
    if [ "$2" = 1 ] && ! ip netns exec "$A" tc qdisc replace dev "$VA" root tbf rate 100mbit burst 64k latency 50ms 2>/dev/null; then
        echo "the tbf qdisc is unavailable (kernel without sch_tbf)"
        return
    fi
    ip netns del "$A"
    ip netns del "$B"
}

setup() {
    ip netns add "$A" && ip netns add "$B" &&
        ip link add "$VA" netns "$A" type veth peer name "$VB" netns "$B" &&
        ip -n "$A" addr add "$IP_A/24" dev "$VA" && ip -n "$B" addr add "$IP_B/24" dev "$VB" &&
        ip -n "$A" link set lo up && ip -n "$B" link set lo up &&
        ip -n "$A" link set "$VA" up && ip -n "$B" link set "$VB" up && carrier
}

# Waits until both veth ends report carrier (operstate up): the plugin skips an interface
# that is not RUNNING yet, and the kernel sets that a moment after "link set up".
carrier() {
    local deadline=$((SECONDS + 10))
    while [ $SECONDS -lt $deadline ]; do
        [ "$(ip netns exec "$A" cat "/sys/class/net/$VA/operstate")" = up ] &&
            [ "$(ip netns exec "$B" cat "/sys/class/net/$VB/operstate")" = up ] && return 0
        sleep 0.1
    done
    say "the veth pair has no carrier after 10 s"
    return 1
}

# qdisc SPEC... on both ends ("" removes them)
qdisc() {
    ip netns exec "$A" tc qdisc del dev "$VA" root 2>/dev/null
    ip netns exec "$B" tc qdisc del dev "$VB" root 2>/dev/null
    [ $# -eq 0 ] && return 0
    ip netns exec "$A" tc qdisc add dev "$VA" root "$@" &&
        ip netns exec "$B" tc qdisc add dev "$VB" root "$@"
}

# rank NAME R SECONDS ENV... -- PROGRAM ARGS...: rank R in its namespace, in the background
rank() {
    local name=$1 r=$2 secs=$3 ns=$A dev=$VA
    shift 3
    [ "$r" = 1 ] && ns=$B dev=$VB
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    # tcp, not auto: RDMA devices (soft-RoCE in the VM) are visible from every namespace.
    ip netns exec "$ns" env LD_LIBRARY_PATH="$BUILD" NCCL_JACCL_FABRIC=tcp \
        NCCL_JACCL_SOCKET_IFNAME="$dev" "${envs[@]}" timeout -k 5 "$((secs * SLOW))" "$@" \
        --rank "$r" --nranks 2 --root "$IP_A:$PORT" >"$LOGS/$name.$r.log" 2>&1 &
    PIDS+=($!)
}

# Waits for the two ranks started last; their exit codes in rc0 and rc1.
wait_pair() {
    local n=${#PIDS[@]}
    wait "${PIDS[n - 2]}"
    rc0=$?
    wait "${PIDS[n - 1]}"
    rc1=$?
    PIDS=()
    PORT=$((PORT + 1)) # the root's port may linger in TIME_WAIT; each run takes the next
}

verdict() { # NAME OK(0/1) WHY
    if [ "$2" = 0 ]; then
        pass=$((pass + 1))
        say "PASS $1"
    else
        fail=$((fail + 1))
        say "FAIL $1: $3"
        for f in "$LOGS/$1".*.log; do echo "----- $f (last 30 lines)"; tail -30 "$f"; done
    fi
}

# both NAME SECONDS ENV... -- PROGRAM ARGS...: both ranks must exit 0
both() {
    local name=$1 secs=$2 t0=$SECONDS
    shift 2
    rank "$name" 0 "$secs" "$@"
    rank "$name" 1 "$secs" "$@"
    wait_pair
    say "$name: rank 0 exit $rc0, rank 1 exit $rc1, $((SECONDS - t0)) s"
    local why="a rank failed"
    if [ "$rc0" = 124 ] || [ "$rc1" = 124 ]; then why="a rank timed out (exit 124)"; fi
    [ "$rc0" = 0 ] && [ "$rc1" = 0 ]
    verdict "$name" $? "$why"
}

# Waits until both ranks of NAME have joined the rendezvous and SECS more seconds passed.
when_running() {
    local name=$1 secs=$2 deadline=$((SECONDS + 30 * SLOW))
    while [ $SECONDS -lt $deadline ]; do
        if grep -qs "joined the rendezvous" "$LOGS/$name.0.log" &&
            grep -qs "joined the rendezvous" "$LOGS/$name.1.log"; then
            sleep "$secs"
            return 0
        fi
        sleep 0.2
    done
    return 1
}

t_bench() {
    local perf=(-- "$BUILD/jaccl-perf" p2p -b 4K -e 4M -f 4 -R 1 -t 0.5)
    both bench-p2p 120 "${perf[@]}"
    both bench-allreduce 120 -- "$BUILD/jaccl-coll-perf" allreduce -b 4K -e 4M -f 4
    grep -hE '^ +[0-9]' "$LOGS"/bench-p2p.0.log "$LOGS"/bench-allreduce.0.log | sed 's/^/[net]   /'
    if ! command -v mpirun >/dev/null; then
        say "bench-mpirun: no mpirun (openmpi-bin): not run"
        return
    fi
    # Open MPI starts one process per namespace (MPMD); neither calls MPI_Init: the tools read
    # OMPI_COMM_WORLD_RANK/SIZE, and JACCL_PERF_ROOT names the rendezvous.
    local t0=$SECONDS rc
    local app=("$BUILD/jaccl-coll-perf" allgather -b 4K -e 1M -f 16)
    local envs=(LD_LIBRARY_PATH="$BUILD" NCCL_JACCL_FABRIC=tcp JACCL_PERF_ROOT="$IP_A:$PORT")
    timeout -k 5 $((120 * SLOW)) mpirun --allow-run-as-root --oversubscribe \
        -np 1 ip netns exec "$A" env "${envs[@]}" NCCL_JACCL_SOCKET_IFNAME="$VA" "${app[@]}" : \
        -np 1 ip netns exec "$B" env "${envs[@]}" NCCL_JACCL_SOCKET_IFNAME="$VB" "${app[@]}" \
        >"$LOGS/bench-mpirun.0.log" 2>&1
    rc=$?
    PORT=$((PORT + 1))
    say "bench-mpirun: mpirun exit $rc, $((SECONDS - t0)) s"
    [ "$rc" = 0 ] && [ "$(grep -c 'PASS allgather' "$LOGS/bench-mpirun.0.log")" = 2 ]
    verdict bench-mpirun $? "mpirun exit $rc, or not both ranks passed"
}

t_netem() {
    qdisc netem "${NETEM[@]}" || { verdict netem-setup 1 "cannot add netem"; return; }
    say "netem on both ends: ${NETEM[*]}"
    local env=(NCCL_JACCL_TIMEOUT=20 --)
    both netem-p2p-small 180 "${env[@]}" "$BUILD/jaccl-perf" check -b 512 -e 16K -f 2 -n 300
    both netem-p2p-large 180 "${env[@]}" "$BUILD/jaccl-perf" check -b 256K -e 4M -f 4 -n 4
    for algo in ring mesh; do
        for op in allreduce reducescatter allgather; do
            both "netem-$op-$algo" 180 "${env[@]}" "$BUILD/jaccl-coll-perf" "$op" -a "$algo" \
                -b 64K -e 1M -f 16 -n 3 -w 1
        done
    done
    ip netns exec "$A" tc -s qdisc show dev "$VA" | sed 's/^/[net]   A: /'
    qdisc
}

# The stream both tests use: 1 MiB messages both ways, paced to 200 Mbit/s so that it runs
# for about 10 s (down: stops at the first error).
STREAM=("$BUILD/jaccl-perf" check -b 1M -e 1M -n 1200 -W 4)
FLAP_STREAM=("$BUILD/jaccl-perf" check -b 1M -e 1M -n 240 -W 4)

t_down() {
    local tmo=3 t0 why=""
    qdisc tbf rate 200mbit burst 256k latency 100ms || { verdict down 1 "cannot add tbf"; return; }
    rank down 0 90 NCCL_JACCL_TIMEOUT=$tmo -- "${STREAM[@]}"
    rank down 1 90 NCCL_JACCL_TIMEOUT=$tmo -- "${STREAM[@]}"
    if ! when_running down 2; then
        why="the ranks did not start"
    else
        ip -n "$A" link set "$VA" down
        t0=$SECONDS
        say "down: link $VA down"
    fi
    wait_pair
    local took=$((SECONDS - ${t0:-$SECONDS}))
    ip -n "$A" link set "$VA" up
    carrier
    qdisc
    say "down: rank 0 exit $rc0, rank 1 exit $rc1, $took s after the link went down"
    # Liveness deadline, then at most the 5 s a failed rank gives the rendezvous, plus slack.
    local limit=$(((tmo + 5) * SLOW + 10))
    if [ -z "$why" ]; then
        if [ "$rc0" = 0 ] || [ "$rc1" = 0 ]; then
            why="a rank passed although the link was down"
        elif [ "$rc0" = 124 ] || [ "$rc1" = 124 ] || [ "$rc0" = 137 ] || [ "$rc1" = 137 ]; then
            why="a rank hung (killed by timeout)"
        elif [ "$took" -gt "$limit" ]; then
            why="the ranks took $took s to fail (limit $limit s)"
        elif ! grep -qs "WARN NET/JACCL" "$LOGS"/down.0.log "$LOGS"/down.1.log; then
            why="no NET/JACCL WARN logged"
        fi
    fi
    grep -h "WARN NET/JACCL" "$LOGS"/down.*.log | head -4 | sed 's/^/[net]   /'
    [ -z "$why" ]
    verdict down $? "$why"
}

t_flap() {
    local why=""
    qdisc tbf rate 200mbit burst 256k latency 100ms || { verdict flap 1 "cannot add tbf"; return; }
    local t0=$SECONDS
    rank flap 0 120 NCCL_JACCL_TIMEOUT=10 -- "${FLAP_STREAM[@]}"
    rank flap 1 120 NCCL_JACCL_TIMEOUT=10 -- "${FLAP_STREAM[@]}"
    if when_running flap 2; then
        ip -n "$A" link set "$VA" down
        say "flap: link $VA down for 2 s"
        sleep 2
        ip -n "$A" link set "$VA" up
    else
        why="the ranks did not start"
    fi
    wait_pair
    qdisc
    say "flap: rank 0 exit $rc0, rank 1 exit $rc1, $((SECONDS - t0)) s"
    if [ -z "$why" ] && { [ "$rc0" != 0 ] || [ "$rc1" != 0 ]; }; then
        why="the stream did not survive a 2 s flap"
    fi
    # The stream must still have been running when the link came back.
    [ -z "$why" ] && [ "$((SECONDS - t0))" -lt 5 ] && why="the stream ended before the flap"
    [ -z "$why" ]
    verdict flap $? "$why"
}

# The netem test inside the test-rdma VM (tests/rdma/vm.sh), for a host kernel without netem.
t_netem_vm() {
    say "netem: this kernel has no netem qdisc; running the netem test in the soft-RoCE VM"
    if ! { tests/rdma/deps.sh && tests/rdma/image.sh >/dev/null; }; then
        verdict netem-vm 1 "cannot prepare the VM"
        return
    fi
    local t0=$SECONDS vlogs=$LOGS/vm rc
    mkdir -p "$vlogs"
    JACCL_NET_LOGS=$vlogs JACCL_TEST_SLOW=${JACCL_TEST_SLOW:-3} \
        tests/rdma/vm.sh -t $((900 * SLOW)) -x "$BUILD" -e BUILD -e JACCL_TEST_SLOW \
        -e JACCL_NET_LOGS -- tests/net/netns.sh netem >"$LOGS/netem-vm.console.log" 2>&1
    rc=$?
    sed 's/^\[net\]/[net] (vm)/' "$vlogs/summary.log" 2>/dev/null
    say "netem-vm: exit $rc, $((SECONDS - t0)) s (logs in $vlogs)"
    [ "$rc" = 0 ]
    verdict netem-vm $? "the netem test failed inside the VM"
}

t_drain() {
    qdisc tbf rate 50mbit burst 64k latency 400ms || { verdict drain 1 "cannot add tbf"; return; }
    both drain 60 -- "$BUILD/jaccl-perf" check -b 4M -e 4M -n 4 -W 4
    qdisc
}

main() {
    local tests="${*:-bench netem down flap drain}" why
    for t in $tests; do
        case $t in bench | netem | down | flap | drain) ;; *) echo "unknown test $t" >&2; exit 2 ;; esac
    done
    for f in jaccl-perf jaccl-coll-perf libnccl-net-jaccl.so; do
        [ -e "$BUILD/$f" ] || { echo "$BUILD/$f missing: run make all" >&2; exit 2; }
    done
    local want_netem=0 want_tbf=0
    case " $tests " in *" netem "*) want_netem=1 ;; esac
    case " $tests " in *" down "* | *" flap "* | *" drain "*) want_tbf=1 ;; esac
    mkdir -p "$LOGS"
    rm -f "$LOGS"/*.log
    why=$(missing $want_netem $want_tbf)
    cleanup
    if [ "$want_netem" = 1 ] && [ "${JACCL_NET_VM:-1}" = 1 ] && [[ $why == *netem* ]]; then
        tests=${tests/netem/netem_vm}
        why=$(missing 0 $want_tbf)
        cleanup
    fi
    if [ -n "$why" ]; then
        if [ "${JACCL_NET_SKIP:-0}" = 1 ]; then
            say "SKIPPED (JACCL_NET_SKIP=1): $why"
            exit 0
        fi
        say "FAIL: cannot build the test network: $why"
        say "(JACCL_NET_SKIP=1 skips these tests on a machine that cannot run them; JACCL_NET_VM=0 had turned off running a netem-less kernel's netem test in the soft-RoCE VM)"
        exit 1
    fi
    setup || { say "FAIL: setting up the namespaces"; exit 1; }
    say "namespaces $A ($IP_A on $VA) and $B ($IP_B on $VB)"
    local t0=$SECONDS
    for t in $tests; do "t_$t"; done
    say "$pass passed, $fail failed ($((SECONDS - t0)) s)"
    [ "$fail" = 0 ]
}

main "$@"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# topo.sh - switchless direct-cable clusters on one machine (issue 21): one network namespace per
# node, one veth pair per cable, each cable its own /24 (node i is 10.77.<cable>.<i+1> on
# interface cab<cable>), MTU 9000, plus a management bridge shared by every node (10.78.0.<i+1>
# on mgmt0, rate-limited to 100 Mbit/s with tbf) that carries only the tools' rendezvous. One
# rank runs in each namespace over the tcp fabric; the ranks meet at node 0's management
# address (--rank/--nranks/--root 10.78.0.1:PORT).
#
#   BUILD=build tests/net/topo.sh                        every topology, every test
#   BUILD=build tests/net/topo.sh 2x2 triangle           only these topologies
#   BUILD=build tests/net/topo.sh ring4 p2p relay        only these tests, on ring4
#   BUILD=build tests/net/topo.sh local                  only the forked loopback run
#   BUILD=build tests/net/topo.sh bench [2x2 ...]        the benchmark (not pass/fail)
#   BUILD=build tests/net/topo.sh keep triangle          build it, print how to enter it, wait
#
# Topologies (cables: node-node):
#   switch3   control: 3 nodes on one switched subnet (a bridge, 10.77.0.0/24 on sw0), no cable
#   2x2       2 nodes, 2 cables (1: 0-1, 2: 0-1)
#   triangle  3 nodes, one cable per pair (1: 0-1, 2: 1-2, 3: 2-0)
#   ring4     4 nodes, each cabled to its two neighbours (1: 0-1, 2: 1-2, 3: 2-3, 4: 3-0);
#             0-2 and 1-3 share no cable: their traffic is relayed by node 1 or 3
#
# What each rank is given is what a user of such a cluster sets: NCCL_JACCL_FABRIC=tcp (soft-
# RoCE devices, where there are any, are seen from every namespace) and
# NCCL_JACCL_SOCKET_IFNAME=^mgmt, the one knob that keeps data off the management LAN. An
# exclude list replaces the automatic choice, so lo is a device too (as with NCCL's own
# NCCL_SOCKET_IFNAME=^eno1): the harness then names lo to the plugin, which must still go
# over the cables. JACCL_TOPO_IFNAME overrides it (^mgmt,lo: the cables only). NCCL_DEBUG=INFO
# with NCCL_DEBUG_SUBSYS=INIT,NET: the logs say which cable(s) each connection took.
#
# Tests (each topology):
#   local  (once, no namespaces) mp_topo_p2p with 4 forked ranks on loopback
#   p2p    mp_topo_p2p: every ordered pair, sizes 0 B .. 4 MiB, every byte checked, on the
#          default device and with a different device per peer; ring4: the INFO lines must
#          say that the opposite pairs are "relayed via" (elsewhere nothing may be relayed);
#          2x2: both cables carry data
#   coll   jaccl-coll-perf allreduce / reducescatter / allgather with every algorithm the
#          topology allows and auto (switch3, 2x2, triangle: ring mesh auto; ring4: ring auto),
#          sizes 60 B .. 13 MB (odd element counts), 4 in flight, every element checked; ring4:
#          rhd must be refused with a WARN and the result still be right; the CollNet INIT line
#          must name what was found ("switched", "fully cabled", "ring of 4")
#   down   a stream between nodes 0 and 1 (cables paced to 200 Mbit/s), their cable taken down
#          on node 0 (NCCL_JACCL_TIMEOUT=3): both must fail within the deadline, each with a
#          NET/JACCL WARN, and no rank may hang
#   relay  ring4 only: a stream between nodes 0 and 2, relayed; (relay-kill) the relay's process
#          killed with SIGKILL, (relay-down) the relay's cable to node 2 taken down: both ends
#          must fail within the deadline with a WARN naming the relay
# After every run the management interfaces' byte counters must show no data: their bytes
# must stay below 2 % of the bytes the cables carried (or 512 KiB; both are printed).
#
# bench: every cable paced to 1 Gbit/s (tbf, both ends); in JACCL_TOPO_ROUNDS interleaved rounds
# (default 3; medians printed): 2x2 all-reduce busbw at 64 MiB over both cables vs one
# (NCCL_JACCL_SOCKET_IFNAME also excluding cab2; target >= 1.8 x); the triangle's ring and
# ring4's ring busbw against 2 cables x 1 Gbit/s, the triangle's mesh against its own bound,
# 4/3 of one cable (it sends every vector whole to each peer) (targets >= 0.85); ring4 relayed
# p2p (0->2) beside direct (0->1); Open MPI's MPI_Allreduce over the cables
# (btl_tcp_if_include 10.77.0.0/16) in the same rounds where mpicc/mpirun exist.
#
# Needs root, `ip netns`, veth, bridge and the tbf qdisc. Where one is missing the script says
# which and fails; JACCL_NET_SKIP=1 makes that a skip (exit 0). JACCL_TEST_SLOW=N stretches
# every deadline N times. Logs: $BUILD/topo-logs/<topology>.<test>.<rank>.log, summary.log.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export BUILD
SLOW=${JACCL_TEST_SLOW:-1}
LOGS=${JACCL_TOPO_LOGS:-$BUILD/topo-logs}
IFSPEC=${JACCL_TOPO_IFNAME:-^mgmt}
ROUNDS=${JACCL_TOPO_ROUNDS:-3}
PFX=jt$$ # namespaces: ${PFX}n<i> per node, ${PFX}sw for the bridges
SWNS=${PFX}sw
PORT=29500
MGMT_TBF=(tbf rate 100mbit burst 32kbit latency 50ms)
MGMT_FLOOR=$((512 * 1024))
ALL_TOPOS="switch3 2x2 triangle ring4"
ALL_TESTS="p2p coll down relay"
PIDS=()
NSS=()
pass=0 fail=0
failed_names=()

say() { echo "[topo] $*" | tee -a "$LOGS/summary.log"; }

# Every process still in one of our namespaces (the ranks, and anything they started), then
# the namespaces themselves; their veths and bridges go with them.
kill_ns_procs() {
    local ns p
    for ns in "$@"; do
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    done
}

teardown() {
    local ns p
    for p in "${PIDS[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
    PIDS=()
    kill_ns_procs "${NSS[@]}" "$SWNS"
    for ns in "${NSS[@]}" "$SWNS"; do ip netns del "$ns" 2>/dev/null; done
    NSS=()
}

cleanup() {
    teardown
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${PFX}"); do
        ip netns del "$ns" 2>/dev/null
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- topologies ----

# topo_def NAME: N (nodes), CABLES ("a b" per cable, cable k = index k-1), SWITCHED, ALGOS.
topo_def() {
    TOPO=$1 SWITCHED=0 CABLES=()
    case $1 in
    switch3) N=3 SWITCHED=1 ALGOS="ring mesh auto" ;;
    2x2) N=2 CABLES=("0 1" "0 1") ALGOS="ring mesh auto" ;;
    triangle) N=3 CABLES=("0 1" "1 2" "2 0") ALGOS="ring mesh auto" ;;
    ring4) N=4 CABLES=("0 1" "1 2" "2 3" "3 0") ALGOS="ring auto" ;;
    *) return 1 ;;
    esac
}

# Data interfaces of node i, in creation order (the plugin's device order).
node_ifaces() {
    local i=$1 k a b
    [ "$SWITCHED" = 1 ] && echo sw0
    for k in "${!CABLES[@]}"; do
        read -r a b <<<"${CABLES[k]}"
        if [ "$a" = "$i" ] || [ "$b" = "$i" ]; then echo "cab$((k + 1))"; fi
    done
}

# "iface address" per data interface of node i
node_addrs() {
    local i=$1 k a b
    [ "$SWITCHED" = 1 ] && echo "sw0 10.77.0.$((i + 1))"
    for k in "${!CABLES[@]}"; do
        read -r a b <<<"${CABLES[k]}"
        if [ "$a" = "$i" ] || [ "$b" = "$i" ]; then echo "cab$((k + 1)) 10.77.$((k + 1)).$((i + 1))"; fi
    done
}

# The node that owns address $1, or nothing.
node_of_addr() {
    local i
    for ((i = 0; i < N; i++)); do
        if node_addrs "$i" | awk -v a="$1" '$2 == a {f = 1} END {exit !f}'; then
            echo "$i"
            return
        fi
    done
}

# The interface on node $1 that is cabled to node $2 (the first such cable; sw0 when switched).
iface_towards() {
    local k a b
    [ "$SWITCHED" = 1 ] && { echo sw0; return; }
    for k in "${!CABLES[@]}"; do
        read -r a b <<<"${CABLES[k]}"
        if { [ "$a" = "$1" ] && [ "$b" = "$2" ]; } || { [ "$a" = "$2" ] && [ "$b" = "$1" ]; }; then
            echo "cab$((k + 1))"
            return
        fi
    done
}

root_addr() { echo "10.78.0.1:$PORT"; }

build_topo() {
    local i k a b
    topo_def "$1" || return 1
    NSS=()
    for ((i = 0; i < N; i++)); do NSS+=("${PFX}n$i"); done
    ip netns add "$SWNS" || return 1
    ip -n "$SWNS" link set lo up &&
        ip -n "$SWNS" link add mgmt type bridge && ip -n "$SWNS" link set mgmt up || return 1
    if [ "$SWITCHED" = 1 ]; then
        ip -n "$SWNS" link add data type bridge && ip -n "$SWNS" link set data mtu 9000 up ||
            return 1
    fi
    for ((i = 0; i < N; i++)); do
        ip netns add "${NSS[i]}" && ip -n "${NSS[i]}" link set lo up || return 1
        # Loose reverse-path filtering, as common distributions set it: the test must not
        # depend on whatever the host's namespace passes down.
        ip netns exec "${NSS[i]}" sysctl -qw net.ipv4.conf.all.rp_filter=2 \
            net.ipv4.conf.default.rp_filter=2 || return 1
        if [ "$SWITCHED" = 1 ]; then
            ip link add sw0 netns "${NSS[i]}" type veth peer name "d$i" netns "$SWNS" &&
                ip -n "$SWNS" link set "d$i" mtu 9000 master data up &&
                ip -n "${NSS[i]}" link set sw0 mtu 9000 up &&
                ip -n "${NSS[i]}" addr add "10.77.0.$((i + 1))/24" dev sw0 || return 1
        fi
    done
    for k in "${!CABLES[@]}"; do
        read -r a b <<<"${CABLES[k]}"
        local c=cab$((k + 1)) na=${NSS[a]} nb=${NSS[b]}
        ip link add "$c" netns "$na" type veth peer name "$c" netns "$nb" &&
            ip -n "$na" link set "$c" mtu 9000 up && ip -n "$nb" link set "$c" mtu 9000 up &&
            ip -n "$na" addr add "10.77.$((k + 1)).$((a + 1))/24" dev "$c" &&
            ip -n "$nb" addr add "10.77.$((k + 1)).$((b + 1))/24" dev "$c" || return 1
    done
    for ((i = 0; i < N; i++)); do
        ip link add mgmt0 netns "${NSS[i]}" type veth peer name "m$i" netns "$SWNS" &&
            ip -n "$SWNS" link set "m$i" master mgmt up &&
            ip -n "${NSS[i]}" link set mgmt0 up &&
            ip -n "${NSS[i]}" addr add "10.78.0.$((i + 1))/24" dev mgmt0 &&
            ip netns exec "${NSS[i]}" tc qdisc add dev mgmt0 root "${MGMT_TBF[@]}" &&
            ip netns exec "$SWNS" tc qdisc add dev "m$i" root "${MGMT_TBF[@]}" || return 1
    done
    carrier
}

# Waits until every node interface reports carrier (operstate up): the plugin skips an
# interface that is not RUNNING yet, and the kernel sets that a moment after "link set up".
carrier() {
    local deadline=$((SECONDS + 10 * SLOW)) i f ok
    while [ $SECONDS -lt $deadline ]; do
        ok=1
        for ((i = 0; i < N; i++)); do
            for f in $(node_ifaces "$i") mgmt0; do
                [ "$(ip netns exec "${NSS[i]}" cat "/sys/class/net/$f/operstate" 2>/dev/null)" = up ] ||
                    ok=0
            done
        done
        [ "$ok" = 1 ] && return 0
        sleep 0.1
    done
    say "$TOPO: an interface has no carrier after $((10 * SLOW)) s"
    return 1
}

describe_topo() {
    local i
    say "$TOPO: $N nodes$([ "$SWITCHED" = 1 ] && echo ", one switched subnet")$([ ${#CABLES[@]} -gt 0 ] && echo ", ${#CABLES[@]} cables")"
    for ((i = 0; i < N; i++)); do
        say "  node $i (${NSS[i]}): $(node_addrs "$i" | awk '{printf "%s %s/24, ", $1, $2}')mgmt0 10.78.0.$((i + 1))/24"
    done
}

# qdisc_all SPEC...: the same root qdisc on every data interface of every node ("" removes).
qdisc_all() {
    local i f
    for ((i = 0; i < N; i++)); do
        for f in $(node_ifaces "$i"); do
            ip netns exec "${NSS[i]}" tc qdisc del dev "$f" root 2>/dev/null
            if [ $# -gt 0 ] && ! ip netns exec "${NSS[i]}" tc qdisc add dev "$f" root "$@"; then
                return 1
            fi
        done
    done
    return 0
}

# ---- byte counters ----

# "node iface tx_bytes" for every interface of every node
counters() {
    local i
    for ((i = 0; i < N; i++)); do
        # shellcheck disable=SC2016 # expanded by the inner shell
        ip netns exec "${NSS[i]}" sh -c 'cd /sys/class/net && for f in *; do
            echo "$f $(cat "$f/statistics/tx_bytes")"; done' | sed "s/^/$i /"
    done
}

# Between two snapshots: MGMT_BYTES (sent on mgmt0, all nodes), DATA_BYTES (sent on the data
# interfaces), and PER_IF ("iface bytes" summed over both ends, one line each).
count_delta() {
    local before=$1 after=$2
    read -r MGMT_BYTES DATA_BYTES < <(join <(awk '{print $1 "/" $2, $3}' "$before" | sort) \
        <(awk '{print $1 "/" $2, $3}' "$after" | sort) | awk '
        { split($1, k, "/"); d = $3 - $2
          if (k[2] == "mgmt0") m += d; else if (k[2] != "lo") x += d }
        END { printf "%d %d\n", m, x }')
    PER_IF=$(join <(awk '{print $1 "/" $2, $3}' "$before" | sort) \
        <(awk '{print $1 "/" $2, $3}' "$after" | sort) | awk '
        { split($1, k, "/"); if (k[2] != "lo") s[k[2]] += $3 - $2 }
        END { for (f in s) printf "%s %d\n", f, s[f] }' | sort)
}

mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

# "" if the management network carried no data in the last run, else why not.
mgmt_clean() {
    local limit=$((DATA_BYTES / 50))
    [ "$limit" -lt "$MGMT_FLOOR" ] && limit=$MGMT_FLOOR
    if [ "$MGMT_BYTES" -gt "$limit" ]; then
        echo "the management network carried $MGMT_BYTES bytes (limit $limit): data crossed it"
    fi
}

# ---- running ranks ----

# start_rank NAME R SECONDS ENV... -- PROGRAM ARGS...: rank R in node R's namespace, in the
# background; its log is $LOGS/$TOPO.NAME.R.log.
start_rank() {
    local name=$1 r=$2 secs=$3
    shift 3
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    # tcp, not auto: an RDMA device (soft-RoCE in the VM) is visible from every namespace.
    ip netns exec "${NSS[r]}" env LD_LIBRARY_PATH="$BUILD" NCCL_JACCL_FABRIC=tcp \
        NCCL_JACCL_SOCKET_IFNAME="$IFSPEC" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET \
        "${envs[@]}" timeout -k 5 "$((secs * SLOW))" "$@" \
        --rank "$r" --nranks "$N" --root "$(root_addr)" >"$LOGS/$TOPO.$name.$r.log" 2>&1 &
    PIDS[r]=$!
}

# start_job NAME SECONDS ENV... -- PROGRAM ARGS...: every rank; counters snapshot first.
start_job() {
    local name=$1 r
    counters >"$LOGS/.before"
    for ((r = 0; r < N; r++)); do start_rank "$name" "$r" "${@:2}"; done
}

# wait_job [T0 [UNTIL]]: waits for every rank; exit codes in RC[r], seconds since T0 in
# ENDED[r]. With UNTIL, ranks still running UNTIL seconds after T0 are killed and count as
# hung (RC 124), instead of running on to their own timeout.
wait_job() {
    local t0=${1:-$SECONDS} until=${2:-} r left=1
    local -a hung=()
    RC=() ENDED=()
    if [ -n "$until" ]; then
        while [ "$left" = 1 ] && [ $((SECONDS - t0)) -le "$until" ]; do
            left=0
            for ((r = 0; r < N; r++)); do
                if kill -0 "${PIDS[r]}" 2>/dev/null; then
                    left=1
                elif [ -z "${ENDED[r]:-}" ]; then
                    ENDED[r]=$((SECONDS - t0))
                fi
            done
            [ "$left" = 1 ] && sleep 0.2
        done
        if [ "$left" = 1 ]; then
            for ((r = 0; r < N; r++)); do kill -0 "${PIDS[r]}" 2>/dev/null && hung[r]=1; done
            kill_ns_procs "${NSS[@]}"
        fi
    fi
    for ((r = 0; r < N; r++)); do
        wait "${PIDS[r]}"
        RC[r]=$?
        [ -n "${ENDED[r]:-}" ] || ENDED[r]=$((SECONDS - t0))
        [ -n "${hung[r]:-}" ] && RC[r]=124
    done
    PIDS=()
    counters >"$LOGS/.after"
    count_delta "$LOGS/.before" "$LOGS/.after"
    PORT=$((PORT + 1)) # the root's port may linger in TIME_WAIT; each run takes the next
}

# logs_of NAME: LOGF=(every rank's log of run NAME)
logs_of() {
    local r
    LOGF=()
    for ((r = 0; r < N; r++)); do LOGF+=("$LOGS/$TOPO.$1.$r.log"); done
}

verdict() { # NAME OK(0/1) WHY
    local f
    if [ "$2" = 0 ]; then
        pass=$((pass + 1))
        say "PASS $TOPO $1"
    else
        fail=$((fail + 1))
        failed_names+=("$TOPO/$1")
        say "FAIL $TOPO $1: $3"
        for f in "$LOGS/$TOPO.$1".*.log; do
            [ -e "$f" ] || continue
            echo "----- $f (last 25 lines)"
            grep -v "INFO" "$f" | tail -25
        done
    fi
}

# run_all NAME SECONDS ENV... -- PROGRAM ARGS...: every rank must exit 0, and the management
# network must have carried no data. Extra checks may follow with ${WHY}.
run_all() {
    local name=$1 secs=$2 t0=$SECONDS r rcs="" why=""
    start_job "$@"
    wait_job "$t0"
    for ((r = 0; r < N; r++)); do rcs="$rcs ${RC[r]}"; done
    say "$TOPO $name: exits$rcs, $((SECONDS - t0)) s; cables $(mb "$DATA_BYTES"), mgmt $MGMT_BYTES B"
    for ((r = 0; r < N; r++)); do
        if [ "${RC[r]}" = 124 ] || [ "${RC[r]}" = 137 ]; then
            why="rank $r timed out (exit ${RC[r]})"
        elif [ "${RC[r]}" != 0 ] && [ -z "$why" ]; then
            why="rank $r failed (exit ${RC[r]})"
        fi
    done
    [ -z "$why" ] && why=$(mgmt_clean)
    WHY=$why
}

# ---- tests ----

t_local() {
    local t0=$SECONDS rc
    LD_LIBRARY_PATH="$BUILD" NCCL_JACCL_SOCKET_IFNAME=lo timeout -k 5 $((300 * SLOW)) \
        "$BUILD/tests/mp_topo_p2p" >"$LOGS/local.p2p.log" 2>&1
    rc=$?
    say "local: forked 4 ranks on loopback, exit $rc, $((SECONDS - t0)) s"
    local TOPO=local
    [ "$rc" = 0 ]
    verdict p2p $? "mp_topo_p2p failed (exit $rc; $LOGS/local.p2p.log)"
}

t_p2p() {
    run_all p2p 180 -- "$BUILD/tests/mp_topo_p2p"
    local why=$WHY
    say "  bytes sent per interface (both ends): $(echo "$PER_IF" | awk '{printf "%s %.1f MB  ", $1, $2 / 1e6}')"
    logs_of p2p
    grep -hiE "INFO NET/JACCL.*(cable|relayed)" "${LOGF[@]}" 2>/dev/null | head -6 | sed 's/^/[topo]   /'
    if [ -z "$why" ] && [ "$TOPO" = ring4 ]; then
        grep -qis "relayed via" "${LOGF[@]}" ||
            why="no INFO line says \"relayed via\" (nodes 0-2 and 1-3 share no cable)"
    elif [ -z "$why" ] && grep -qis "relayed via" "${LOGF[@]}"; then
        why="a connection was relayed although every pair shares a cable or the switch"
    fi
    if [ -z "$why" ] && [ "$TOPO" = 2x2 ]; then
        # Two cables between two nodes: both carry data (each at least a quarter).
        local c b
        for c in cab1 cab2; do
            b=$(echo "$PER_IF" | awk -v c="$c" '$1 == c {print $2}')
            [ "$((${b:-0} * 4))" -lt "$DATA_BYTES" ] &&
                why="$c carried $(mb "${b:-0}") of $(mb "$DATA_BYTES"): not both cables used"
        done
    fi
    [ -z "$why" ]
    verdict p2p $? "$why"
}

# Collective runs: sizes 60 B .. 13 MB by 61 (element counts 15, 915, 55815, 3404715; per rank
# odd ones too), 4 in flight, every element checked by jaccl-coll-perf (#wrong, exit status).
COLL_ARGS=(-b 60 -e 14M -f 61 -n 3 -w 1 -W 4)
# The liveness deadline also bounds CollNet connect: the tools' default (60 s) would make a
# group that cannot connect cost a minute per run.
COLL_ENV=(NCCL_JACCL_TIMEOUT=10)

t_coll() {
    local algo op why noconn
    for algo in $ALGOS; do
        noconn=""
        for op in allreduce reducescatter allgather; do
            if [ -n "$noconn" ]; then
                verdict "coll-$op-$algo" 1 "not run: $noconn"
                continue
            fi
            run_all "coll-$op-$algo" 120 "${COLL_ENV[@]}" -- "$BUILD/jaccl-coll-perf" "$op" -a "$algo" \
                "${COLL_ARGS[@]}"
            why=$WHY
            # Nothing crossed the cables: the group never connected, nor will the next one.
            if [ -n "$why" ] && [ "$DATA_BYTES" -lt 1000000 ]; then
                noconn="coll-$op-$algo did not connect"
            fi
            logs_of "coll-$op-$algo"
            if [ -z "$why" ] && grep -qs "WARN NET/JACCL" "${LOGF[@]}"; then
                why="a clean run logged a NET/JACCL WARN: $(grep -hs "WARN NET/JACCL" "${LOGF[@]}" | head -1)"
            fi
            [ -z "$why" ]
            verdict "coll-$op-$algo" $? "$why"
        done
    done
    # What the auto run's CollNet INIT line says it found.
    local want=""
    case $TOPO in switch3) want="switched" ;; triangle) want="fully cabled" ;; ring4) want="ring of 4" ;; esac
    grep -hE "INFO NET/JACCL.*CollNet comm" "$LOGS/$TOPO.coll-allreduce-auto.0.log" 2>/dev/null |
        head -1 | sed 's/^/[topo]   /'
    if [ -n "$want" ]; then
        grep -qisE "INFO NET/JACCL.*$want" "$LOGS/$TOPO.coll-allreduce-auto.0.log"
        verdict coll-init-line $? "rank 0's INIT lines do not say \"$want\""
    fi
    if [ "$TOPO" = ring4 ]; then
        # Halving-doubling needs partners 0-2 and 1-3, which share no cable: refused with a
        # WARN, and the fallback's results must still be right.
        run_all coll-allreduce-rhd 120 "${COLL_ENV[@]}" -- "$BUILD/jaccl-coll-perf" allreduce -a rhd \
            "${COLL_ARGS[@]}"
        why=$WHY
        logs_of coll-allreduce-rhd
        if [ -z "$why" ] && ! grep -qs "WARN NET/JACCL" "${LOGF[@]}"; then
            why="rhd forced on a ring of 4 logged no NET/JACCL WARN"
        fi
        grep -hs "WARN NET/JACCL" "${LOGF[@]}" | head -2 | sed 's/^/[topo]   /'
        [ -z "$why" ]
        verdict coll-allreduce-rhd $? "$why"
    fi
}

# The fault tests' stream: 1 MiB messages both ways between two nodes, cables paced to
# 200 Mbit/s, so that it runs for 25 s or more; it stops at the first error.
STREAM_ARGS=(-b 1M -n 1200 -W 4)
TMO=3
# A broken connection must fail within this after the event: the liveness deadline, the 5 s
# a failed rank gives the rendezvous, and slack. Ranks still running 5 s later are hung.
FAULT_LIMIT=$(((TMO + 5) * SLOW + 10))

# Waits until ranks $2 and $3 of run $1 print "streaming", then $4 more seconds. 0 or 1.
when_streaming() {
    local name=$1 a=$2 b=$3 secs=$4 deadline=$((SECONDS + 60 * SLOW))
    while [ $SECONDS -lt $deadline ]; do
        if grep -qs "streaming to rank" "$LOGS/$TOPO.$name.$a.log" &&
            grep -qs "streaming to rank" "$LOGS/$TOPO.$name.$b.log"; then
            sleep "$secs"
            return 0
        fi
        # Every rank gone: nothing will stream.
        local r alive=0
        for ((r = 0; r < N; r++)); do kill -0 "${PIDS[r]}" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && return 1
        sleep 0.2
    done
    return 1
}

# judge_fault NAME EVENT_T0 RANK_A RANK_B [KILLED_RANK] [NEEDLE...]: A and B must fail (not
# time out) within the deadline after the event, each with a NET/JACCL WARN (containing one of
# the needles, if given); no rank may hang. Sets WHY.
judge_fault() {
    local name=$1 t0=$2 a=$3 b=$4 killed=${5:--1}
    shift 5
    local needles=("$@") limit=$FAULT_LIMIT r rcs="" why=""
    for ((r = 0; r < N; r++)); do rcs="$rcs ${RC[r]}@$((ENDED[r]))s"; done
    say "$TOPO $name: exits (code@seconds after the event)$rcs; limit $limit s"
    for ((r = 0; r < N; r++)); do
        [ "$r" = "$killed" ] && continue
        if [ "${RC[r]}" = 124 ] || [ "${RC[r]}" = 137 ]; then
            why="rank $r hung (still running $((FAULT_LIMIT + 5)) s after the event: killed)"
        elif [ "${ENDED[r]}" -gt "$limit" ]; then
            why="rank $r took ${ENDED[r]} s to end (limit $limit s)"
        fi
        [ -n "$why" ] && break
    done
    for r in "$a" "$b"; do
        [ -n "$why" ] && break
        local log=$LOGS/$TOPO.$name.$r.log
        if [ "${RC[r]}" = 0 ]; then
            why="rank $r passed although its connection was broken"
        elif ! grep -qs "WARN NET/JACCL" "$log"; then
            why="rank $r logged no NET/JACCL WARN"
        elif [ ${#needles[@]} -gt 0 ] && ! grep "WARN NET/JACCL" "$log" | grep -qF "${needles[@]/#/-e}"; then
            why="rank $r's WARNs do not name the relay (${needles[*]})"
        fi
    done
    grep -hs "WARN NET/JACCL" "$LOGS/$TOPO.$name.$a.log" "$LOGS/$TOPO.$name.$b.log" | head -4 |
        sed 's/^/[topo]   /'
    WHY=$why
}

# Puts everything back after a fault test: links up, carrier, no qdisc, and no neighbour entry
# that failed while a cable was down (the kernel answers "No route to host" for an address whose
# ARP resolution failed until it tries again, seconds later: the next test's first connects
# across that cable would fail).
restore() {
    local i f
    for ((i = 0; i < N; i++)); do
        for f in $(node_ifaces "$i"); do ip -n "${NSS[i]}" link set "$f" up 2>/dev/null; done
        ip -n "${NSS[i]}" neigh flush all 2>/dev/null
    done
    carrier
    qdisc_all
}

t_down() {
    local dev why="" t0
    dev=$(iface_towards 0 1)
    qdisc_all tbf rate 200mbit burst 256k latency 100ms || { verdict down 1 "cannot add tbf"; return; }
    start_job down 120 NCCL_JACCL_TIMEOUT=$TMO -- "$BUILD/tests/mp_topo_p2p" stream 0 1 "${STREAM_ARGS[@]}"
    t0=$SECONDS
    if when_streaming down 0 1 2; then
        ip -n "${NSS[0]}" link set "$dev" down
        t0=$SECONDS
        say "$TOPO down: $dev down on node 0 (nodes 0 and 1 streaming)"
    else
        why="the stream between nodes 0 and 1 did not start"
    fi
    wait_job "$t0" $((FAULT_LIMIT + 5))
    restore
    if [ -z "$why" ]; then
        judge_fault down "$t0" 0 1 -1
        why=$WHY
    fi
    [ -z "$why" ]
    verdict down $? "$why"
}

# relay MODE: kill (the relay's process) or down (the relay's cable to node 2).
t_relay_one() {
    local mode=$1 name=relay-$1 why="" t0 via relay needles=()
    qdisc_all tbf rate 200mbit burst 256k latency 100ms || { verdict "$name" 1 "cannot add tbf"; return; }
    start_job "$name" 120 NCCL_JACCL_TIMEOUT=$TMO -- "$BUILD/tests/mp_topo_p2p" stream 0 2 "${STREAM_ARGS[@]}"
    t0=$SECONDS
    if ! when_streaming "$name" 0 2 2; then
        why="the relayed stream between nodes 0 and 2 did not start"
    else
        via=$(grep -hoiE "relayed via [0-9.]+" "$LOGS/$TOPO.$name.0.log" | head -1 | awk '{print $3}')
        relay=$(node_of_addr "${via:-none}")
        if [ -z "$relay" ]; then
            why="no INFO line of rank 0 says \"relayed via <address of node 1 or 3>\" (got \"${via:-nothing}\")"
        else
            mapfile -t needles < <(node_addrs "$relay" | awk '{print $2}')
            if [ "$mode" = kill ]; then
                local pid
                pid=$(pgrep -P "${PIDS[relay]}" | head -1)
                kill -9 "${pid:-${PIDS[relay]}}"
                say "$TOPO $name: killed node $relay's rank (pid ${pid:-?}), the relay ($via)"
            else
                local dev
                dev=$(iface_towards "$relay" 2)
                ip -n "${NSS[relay]}" link set "$dev" down
                say "$TOPO $name: $dev down on node $relay, the relay ($via)"
            fi
            t0=$SECONDS
        fi
    fi
    [ -n "$why" ] && kill_ns_procs "${NSS[@]}"
    wait_job "$t0" $((FAULT_LIMIT + 5))
    restore
    if [ -z "$why" ]; then
        judge_fault "$name" "$t0" 0 2 "$([ "$mode" = kill ] && echo "$relay" || echo -1)" "${needles[@]}"
        why=$WHY
    fi
    [ -z "$why" ]
    verdict "$name" $? "$why"
}

t_relay() {
    [ "$TOPO" = ring4 ] || return 0
    t_relay_one kill
    t_relay_one down
}

# ---- bench ----

# Open MPI's collective benchmark, built once (tools/mpi/mpi-coll.c); empty if not possible.
MPI_BIN=""
mpi_prepare() {
    if command -v mpicc >/dev/null && command -v mpirun >/dev/null &&
        mpicc -O2 -o "$BUILD/mpi-coll" tools/mpi/mpi-coll.c 2>"$LOGS/mpicc.log"; then
        MPI_BIN=$BUILD/mpi-coll
    fi
}

# Open MPI takes any two private addresses to be reachable from each other, so on a triangle
# it connects from cab1 to a peer's address on cab2 and fails (Network is unreachable). What
# its users do: a host route to each peer address on another cable, through the cable to that
# peer (it owns the address: nothing is forwarded), and on a ring of 4, where opposite nodes
# share no cable, through the neighbour on the address's cable, with forwarding on in its
# kernel. mpi_routes add|del puts them in place around each MPI run only.
mpi_routes() {
    local op=$1 i j m ifc addr c via
    for ((i = 0; i < N; i++)); do
        for ((j = 0; j < N; j++)); do
            [ "$i" = "$j" ] && continue
            while read -r ifc addr; do
                node_ifaces "$i" | grep -qx "$ifc" && continue # on a cable i shares
                via=""
                c=$(iface_towards "$i" "$j")
                if [ -n "$c" ]; then
                    via=10.77.${c#cab}.$((j + 1))
                else # the neighbour m at the other end of that address's cable
                    for ((m = 0; m < N; m++)); do
                        [ "$(iface_towards "$m" "$j")" = "$ifc" ] || continue
                        c=$(iface_towards "$i" "$m")
                        [ -n "$c" ] && via=10.77.${c#cab}.$((m + 1))
                    done
                fi
                [ -n "$via" ] && ip -n "${NSS[i]}" route "$op" "$addr/32" via "$via" 2>/dev/null
            done < <(node_addrs "$j")
        done
        ip netns exec "${NSS[i]}" sysctl -qw net.ipv4.ip_forward="$([ "$op" = add ] && echo 1 || echo 0)"
    done
}

# One MPI process per namespace: mpirun runs in node 0 and starts its daemons on the other
# nodes through a launch agent that enters their namespaces (like ssh to each host, over the
# management network), so every MPI process sees exactly its node's interfaces. Each node gets
# its own host name (a UTS namespace), or Open MPI would take them for one host.
mpi_agent() {
    local a=$LOGS/.mpi-agent i
    {
        cat <<'EOS'
#!/bin/sh
# mpirun's launch agent: HOST COMMAND... runs COMMAND in HOST's namespace
h=$1
shift
case $h in
EOS
        for ((i = 0; i < N; i++)); do echo "10.78.0.$((i + 1))) ns=${NSS[i]} name=node$i ;;"; done
        cat <<'EOS'
*) echo "unknown host $h" >&2; exit 1 ;;
esac
exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $name && $*"
EOS
    } >"$a"
    chmod +x "$a"
    echo "$a"
}

# mpi_allreduce NAME IFINCLUDE: MPI_Allreduce of 64 MiB; busbw (MB/s) on stdout ("" if it
# failed).
mpi_allreduce() {
    local name=$1 inc=$2 hosts="" i agent log=$LOGS/$TOPO.$1.log
    agent=$(mpi_agent)
    for ((i = 0; i < N; i++)); do hosts="$hosts${hosts:+,}10.78.0.$((i + 1)):1"; done
    mpi_routes add
    ip netns exec "${NSS[0]}" unshare --uts timeout -k 5 $((180 * SLOW)) sh -c 'hostname node0 &&
        exec "$@"' mpirun mpirun --allow-run-as-root \
        --oversubscribe --bind-to none -np "$N" --host "$hosts" \
        --mca plm_rsh_agent "$agent" --mca orte_keep_fqdn_hostnames 1 \
        --mca oob_tcp_if_include 10.78.0.0/24 --mca pml ob1 --mca btl tcp,self \
        --mca btl_tcp_if_include "$inc" "$MPI_BIN" allreduce -b 64M -e 64M -n 3 >"$log" 2>&1
    mpi_routes del
    busbw_ar <"$log"
}

# The all-reduce table's last row (jaccl-coll-perf or mpi-coll) as busbw in MB/s, from the
# time column (the tables print GB/s with two decimals, too coarse at 1 Gbit/s).
busbw_ar() {
    grep -E '^ +[0-9]' | tail -1 | awk -v n="$N" '$5 > 0 { printf "%.1f\n", $1 / $5 * 2 * (n - 1) / n }'
}

# jaccl_coll NAME ENV... -- OP ARGS: all-reduce busbw (MB/s) at 64 MiB ("" if the run failed)
jaccl_coll() {
    local name=$1
    shift
    start_job "$name" 240 "${COLL_ENV[@]}" "$@"
    wait_job
    local r
    for ((r = 0; r < N; r++)); do [ "${RC[r]}" = 0 ] || return 0; done
    busbw_ar <"$LOGS/$TOPO.$name.0.log"
}

median() { tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -g | awk '{v[NR] = $1} END {
    if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

BENCH_AR=(allreduce -b 64M -e 64M -n 4 -w 1 -W 1)

bench_topo() {
    local round key
    declare -A res=()
    qdisc_all tbf rate 1gbit burst 512k latency 20ms || { say "bench $TOPO: cannot add tbf"; return; }
    say "bench $TOPO: every cable paced to 1 Gbit/s (tbf, both ends); $ROUNDS rounds"
    for ((round = 1; round <= ROUNDS; round++)); do
        case $TOPO in
        2x2)
            res[both]+=" $(jaccl_coll bench-ar-both -- "$BUILD/jaccl-coll-perf" "${BENCH_AR[@]}")"
            res[one]+=" $(IFSPEC="$IFSPEC,cab2" jaccl_coll bench-ar-one -- "$BUILD/jaccl-coll-perf" "${BENCH_AR[@]}")"
            ;;
        triangle)
            res[mesh]+=" $(jaccl_coll bench-ar-mesh -- "$BUILD/jaccl-coll-perf" "${BENCH_AR[@]}" -a mesh)"
            res[ring]+=" $(jaccl_coll bench-ar-ring -- "$BUILD/jaccl-coll-perf" "${BENCH_AR[@]}" -a ring)"
            ;;
        ring4)
            res[ring]+=" $(jaccl_coll bench-ar-ring -- "$BUILD/jaccl-coll-perf" "${BENCH_AR[@]}" -a ring)"
            start_job bench-bw 300 -- "$BUILD/tests/mp_topo_p2p" bw -b 4M -n 16 -R 1 0:1 0:2
            wait_job
            res[direct]+=" $(awk '$1 == "0->1" {print $2}' "$LOGS/$TOPO.bench-bw.0.log")"
            res[relayed]+=" $(awk '$1 == "0->2" {print $2}' "$LOGS/$TOPO.bench-bw.0.log")"
            ;;
        esac
        if [ -n "$MPI_BIN" ]; then
            res[mpi]+=" $(mpi_allreduce bench-mpi 10.77.0.0/16)"
        fi
        say "bench $TOPO round $round: $(for key in "${!res[@]}"; do printf '%s=[%s] ' "$key" "${res[$key]# }"; done)"
    done
    qdisc_all
    local m_both m_one m_mesh m_ring m_mpi
    m_mpi=$(echo "${res[mpi]:-}" | median)
    case $TOPO in
    2x2)
        m_both=$(echo "${res[both]}" | median)
        m_one=$(echo "${res[one]}" | median)
        say "bench 2x2: all-reduce 64 MiB busbw MB/s: both cables $m_both, one cable $m_one, ratio $(ratio "$m_both" "$m_one") (target >= 1.8); Open MPI over both cables $m_mpi, jaccl/MPI $(ratio "$m_both" "$m_mpi")"
        ;;
    triangle)
        m_mesh=$(echo "${res[mesh]}" | median)
        m_ring=$(echo "${res[ring]}" | median)
        # The mesh sends each rank's whole vector to every peer, one cable each: algbw <= 1 cable,
        # busbw <= 2(n-1)/n cables. The ring runs both ways round: busbw <= 2 cables.
        say "bench triangle: all-reduce 64 MiB busbw MB/s: mesh $m_mesh = $(ratio "$m_mesh" 166.7) x its bound (4/3 x 125 MB/s: every vector whole to each peer; target >= 0.85), ring $m_ring = $(ratio "$m_ring" 250) x 2 cables x 125 MB/s (target >= 0.85); Open MPI $m_mpi, ring/MPI $(ratio "$m_ring" "$m_mpi"), mesh/MPI $(ratio "$m_mesh" "$m_mpi")"
        ;;
    ring4)
        m_ring=$(echo "${res[ring]}" | median)
        local d r
        d=$(echo "${res[direct]}" | median)
        r=$(echo "${res[relayed]}" | median)
        say "bench ring4: all-reduce 64 MiB busbw MB/s: ring $m_ring = $(ratio "$m_ring" 250) x 2 cables x 125 MB/s (target >= 0.85); Open MPI $m_mpi, ring/MPI $(ratio "$m_ring" "$m_mpi")"
        say "bench ring4: p2p one-way MB/s: direct 0->1 $d, relayed 0->2 $r, relayed/direct $(ratio "$r" "$d") (cable: 125 MB/s)"
        ;;
    esac
}

# ---- main ----

# What is missing to build the networks, or nothing. Tried on throw-away namespaces.
missing() {
    [ "$(id -u)" -eq 0 ] || { echo "not root (network namespaces need CAP_NET_ADMIN)"; return; }
    if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
        echo "ip/tc (iproute2) not installed"
        return
    fi
    local a=${PFX}xa b=${PFX}xb
    if ! ip netns add "$a" 2>/dev/null || ! ip netns add "$b" 2>/dev/null; then
        echo "'ip netns add' failed"
        return
    fi
    ip link add x0 netns "$a" type veth peer name x0 netns "$b" 2>/dev/null ||
        { echo "cannot create a veth pair (no veth driver?)"; return; }
    ip -n "$a" link add xbr type bridge 2>/dev/null || { echo "cannot create a bridge (no bridge driver?)"; return; }
    command -v modprobe >/dev/null && modprobe sch_tbf 2>/dev/null
    ip netns exec "$a" tc qdisc add dev x0 root "${MGMT_TBF[@]}" 2>/dev/null ||
        { echo "the tbf qdisc is unavailable (kernel without sch_tbf)"; return; }
    ip netns del "$a"
    ip netns del "$b"
}

run_topo() { # TOPO TESTS
    local t
    if ! build_topo "$1"; then
        verdict setup 1 "cannot build the $1 topology"
        teardown
        return
    fi
    describe_topo
    for t in $2; do "t_$t"; done
    teardown
}

main() {
    local topos="" tests="" bench=0 keep=0 local_run=0 w why
    for w in "$@"; do
        case $w in
        switch3 | 2x2 | triangle | ring4) topos="$topos $w" ;;
        p2p | coll | down | relay) tests="$tests $w" ;;
        local) local_run=1 ;;
        bench) bench=1 ;;
        keep) keep=1 ;;
        *) echo "unknown word $w (topologies: $ALL_TOPOS; tests: local $ALL_TESTS; bench; keep)" >&2; exit 2 ;;
        esac
    done
    for w in jaccl-coll-perf libnccl-net-jaccl.so tests/mp_topo_p2p; do
        [ -e "$BUILD/$w" ] || { echo "$BUILD/$w missing: run make all tests" >&2; exit 2; }
    done
    mkdir -p "$LOGS"
    [ "$keep" = 1 ] || rm -f "$LOGS"/*.log
    local t0=$SECONDS
    # Only `local` named, or nothing: the forked run (no namespaces needed).
    if [ "$bench" = 0 ] && [ "$keep" = 0 ] && { [ "$local_run" = 1 ] || [ -z "$topos$tests" ]; }; then
        t_local
        if [ "$local_run" = 1 ] && [ -z "$topos$tests" ]; then
            [ "$fail" = 0 ]
            exit
        fi
    fi
    why=$(missing)
    cleanup
    if [ -n "$why" ]; then
        if [ "${JACCL_NET_SKIP:-0}" = 1 ]; then
            say "SKIPPED (JACCL_NET_SKIP=1): $why"
            [ "$fail" = 0 ]
            exit
        fi
        say "FAIL: cannot build the test networks: $why"
        say "(JACCL_NET_SKIP=1 skips these tests on a machine that cannot run them)"
        exit 1
    fi
    if [ "$keep" = 1 ]; then
        w=${topos# }
        w=${w%% *}
        build_topo "${w:-triangle}" || { say "cannot build ${w:-triangle}"; exit 1; }
        describe_topo
        say "enter a node: ip netns exec ${NSS[0]} bash; root for the tools: $(root_addr); Ctrl-C (or kill $$) tears it down"
        while :; do
            sleep 3600 &
            wait $! # a builtin wait, so that Ctrl-C runs the trap at once
        done
    fi
    if [ "$bench" = 1 ]; then
        mpi_prepare
        [ -z "$MPI_BIN" ] && say "bench: no mpicc/mpirun (openmpi-bin): Open MPI not run"
        for w in ${topos:-2x2 triangle ring4}; do
            build_topo "$w" || { say "bench: cannot build $w"; teardown; continue; }
            bench_topo
            teardown
        done
        say "bench: $((SECONDS - t0)) s (logs in $LOGS)"
        exit 0
    fi
    for w in ${topos:-$ALL_TOPOS}; do run_topo "$w" "${tests:-$ALL_TESTS}"; done
    say "$pass passed, $fail failed ($((SECONDS - t0)) s)${failed_names[*]:+; failed: ${failed_names[*]}}"
    [ "$fail" = 0 ]
}

main "$@"

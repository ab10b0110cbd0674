#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# topo.sh - direct-cable clusters on real verbs, INSIDE the rxe VM (tests/rdma/suite.sh runs it
# for UC and RC; by hand: tests/rdma/vm.sh -x build -e BUILD -- tests/rdma/topo.sh).
#
# The VM's kernel (6.1) keeps RDMA devices out of network namespaces, so the hosts of
# tests/net/topo.sh become ranks here: one veth pair per cable, each cable its own subnet, a
# soft-RoCE device on each end, and each rank restricted to its own cables' devices
# (NCCL_JACCL_HCA through JACCL_TEST_RANK_ENV_<r>). Every rank runs in the VM's one namespace, so
# jaccl takes them for one host (the INIT line says so); which device reaches which peer is
# decided by the cables' subnets alone, as between hosts:
#   triangle  three ranks, a cable per pair: each rank's two neighbours are on two different
#             devices, so every p2p connection takes its peer's device and a CollNet comm spans
#             both (a domain per device, every registration in each);
#   2x2       two ranks, two cables.
# On each: p2p between every pair (topo_p2p), the three collectives with the ring, the mesh and
# auto (every element checked). Prints "N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export LD_LIBRARY_PATH=$BUILD NCCL_JACCL_FABRIC=verbs
export NCCL_JACCL_TIMEOUT=${NCCL_JACCL_TIMEOUT:-20} JACCL_TEST_SLOW=${JACCL_TEST_SLOW:-3}
QP=${NCCL_JACCL_QP_TYPE:-uc}
pass=0
fail=0

# cable K A B: a veth pair 10.88.K.0/24 between rank A (address .A+1, device rxk<K>a) and rank B
# (.B+1, rxk<K>b).
cable() {
    local k=$1 a=$2 b=$3
    ip link show "rxk${k}a" >/dev/null 2>&1 && return 0
    ip link add "rxk${k}a" type veth peer name "rxk${k}b" || return 1
    ip addr add "10.88.$k.$((a + 1))/24" dev "rxk${k}a"
    ip addr add "10.88.$k.$((b + 1))/24" dev "rxk${k}b"
    for e in a b; do
        ip link set "rxk$k$e" mtu 9000 up
        rdma link add "rxek$k$e" type rxe netdev "rxk$k$e" || return 1
    done
}

gids() { # waits for the IPv4-mapped GIDs of the devices named
    local d
    for d in "$@"; do
        for _ in $(seq 100); do
            grep -qs '0000:0000:0000:0000:0000:ffff:' "/sys/class/infiniband/$d/ports/1/gids/"* && break
            sleep 0.1
        done
    done
}

step() { # NAME COMMAND...: one check
    local name=$1 t0=$SECONDS log
    shift
    log=$BUILD/rdma-logs/topo-$QP-$name.log
    mkdir -p "$BUILD/rdma-logs"
    if timeout -k 10 600 "$@" >"$log" 2>&1; then
        pass=$((pass + 1))
        echo "PASS topo $name ($((SECONDS - t0)) s)"
    else
        fail=$((fail + 1))
        echo "FAIL topo $name ($((SECONDS - t0)) s):"
        grep -E 'WARN|FAIL|not ok' "$log" | head -20 | sed 's/^/    /'
        tail -n 15 "$log" | sed 's/^/    /'
    fi
}

ranks() { # the devices of each rank: DEVS0 DEVS1 ...
    local r=0 d
    for d in "$@"; do
        export "JACCL_TEST_RANK_ENV_$r=NCCL_JACCL_HCA==$d"
        r=$((r + 1))
    done
}

colls() { # N: the three collectives, ring, mesh and auto
    local n=$1 kind a
    for kind in allreduce reducescatter allgather; do
        for a in ring mesh auto; do
            step "$TOPO-$kind-$a" "$BUILD/jaccl-coll-perf" "$kind" -N "$n" -a "$a" -b 5000 -e 1M \
                -f 14 -n 5 -w 1 -W 1,4 -p 200
        done
    done
}

TOPO=triangle
{ cable 1 0 1 && cable 2 1 2 && cable 3 2 0; } || { echo "FAIL topo: cannot build the cables"; exit 1; }
gids rxek1a rxek1b rxek2a rxek2b rxek3a rxek3b
ranks rxek1a,rxek3b rxek1b,rxek2a rxek2b,rxek3a
step triangle-p2p "$BUILD/tests/mp_topo_p2p" -N 3
colls 3
TOPO=2x2
{ cable 4 0 1 && cable 5 0 1; } || { echo "FAIL topo: cannot build the cables"; exit 1; }
gids rxek4a rxek4b rxek5a rxek5b
ranks rxek4a,rxek5a rxek4b,rxek5b
step 2x2-p2p "$BUILD/tests/mp_topo_p2p" -N 2
colls 2
echo "topo ($QP): $pass passed, $fail failed"
[ "$fail" -eq 0 ]

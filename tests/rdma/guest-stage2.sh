#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# PID 1 on the host's userland inside the VM: rxe0 on rxv0 (10.77.0.1) and rxe1 on rxv1
# (10.77.0.2), the two ends of a veth pair, both in the root namespace (6.1's rxe is not netns
# aware), so traffic between them crosses the veth and `tc netem` on it applies. Then the
# command runs; its exit code goes to /run/jvm/rc and the VM powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
. /run/jvm/env
ulimit -l unlimited # ibv_reg_mr pins memory
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd # devtmpfs lacks it; bash's <(...) needs it
ip link set lo up
KV=$(uname -r)
if [ ! -d /lib/modules/$KV ] && [ -d "$JVM_KROOT/lib/modules/$KV" ]; then
    mkdir -p /lib/modules/$KV && mount --bind "$JVM_KROOT/lib/modules/$KV" /lib/modules/$KV
fi
ip link add rxv0 type veth peer name rxv1
ip addr add 10.77.0.1/24 dev rxv0
ip addr add 10.77.0.2/24 dev rxv1
# Both addresses are local: the ARP requests and UDP 4791 packets rxe sends between them
# arrive with a local source address and are dropped as martians unless this is allowed
# (RTR fails with EINVAL otherwise). Written to /proc: sysctl may not be installed.
echo 1 > /proc/sys/net/ipv4/conf/all/accept_local
for c in all default rxv0 rxv1; do echo 0 > /proc/sys/net/ipv4/conf/$c/rp_filter; done
for i in rxv0 rxv1; do ip link set $i mtu "${JVM_MTU:-9000}" up; done
rdma link add rxe0 type rxe netdev rxv0
rdma link add rxe1 type rxe netdev rxv1
for d in rxe0 rxe1; do # the IPv4-mapped GIDs appear asynchronously
    for _ in $(seq 100); do
        grep -qs '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/$d/ports/1/gids/* && break
        sleep 0.1
    done
done
echo "jaccl-vm: ready after $(cut -d' ' -f1 /proc/uptime) s"
cd "$JVM_CWD"
exec </dev/null >/dev/console 2>&1
stty -F /dev/console -onlcr 2>/dev/null
bash /run/jvm/cmd
echo $? > /run/jvm/rc
sync
echo o > /proc/sysrq-trigger # the host's poweroff is systemd's
sleep 60

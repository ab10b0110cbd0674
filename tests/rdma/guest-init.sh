#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the initramfs: load the modules, mount the host's / (9p, read-only) under a tmpfs
# overlay, mount the read-write share and the control share, switch to the host's userland.
B=/bin/busybox
$B mount -t proc proc /proc
$B mount -t sysfs sys /sys
$B mount -t devtmpfs dev /dev
for m in /mod/*.ko; do $B insmod "$m" || echo "jaccl-vm: insmod $m failed"; done
opt=trans=virtio,version=9p2000.L,msize=262144
work=$($B sed -n 's/.*jvm\.work=\([^ ]*\).*/\1/p' /proc/cmdline)
extra=$($B sed -n 's/.*jvm\.extra=\([^ ]*\).*/\1/p' /proc/cmdline)
# cache=loose: the host root does not change under us while the VM runs
$B mount -t 9p -o $opt,ro,cache=loose hostroot /lower || { echo "jaccl-vm: no host root"; $B poweroff -f; }
$B mount -t tmpfs -o size=75% tmpfs /rw
$B mkdir -p /rw/up /rw/wk
$B mount -t overlay -o lowerdir=/lower,upperdir=/rw/up,workdir=/rw/wk overlay /root ||
    { echo "jaccl-vm: overlay failed"; $B poweroff -f; }
for d in proc sys dev; do $B mount --move /$d /root/$d; done
$B mkdir -p /root/dev/pts /root/dev/shm
$B mount -t devpts devpts /root/dev/pts
for d in tmp run dev/shm; do $B mount -t tmpfs tmpfs /root/$d; done
$B mkdir -p /root/run/jvm "/root$work"
$B mount -t 9p -o $opt ctl /root/run/jvm || { echo "jaccl-vm: no control share"; $B poweroff -f; }
$B mount -t 9p -o $opt work "/root$work" || echo "jaccl-vm: cannot mount $work"
if [ -n "$extra" ]; then
    $B mkdir -p "/root$extra"
    $B mount -t 9p -o $opt extra "/root$extra" || echo "jaccl-vm: cannot mount $extra"
fi
exec $B switch_root /root /bin/bash /run/jvm/stage2.sh

#!/usr/bin/env bash
# Debian packages for `make test-rdma` (idempotent, quiet when present): qemu for the VM
# (TCG: this machine's /dev/kvm cannot run a stock kernel), busybox for the initramfs, kmod
# for depmod/modprobe, xz to unpack the kernel, rdma-core's userland with the rxe provider,
# iproute2 for `rdma link` and `tc netem`, perftest for the reference bandwidth.
set -euo pipefail
PKGS="qemu-system-x86 busybox-static kmod xz-utils libibverbs1 ibverbs-providers ibverbs-utils
      iproute2 perftest libibverbs-dev"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "test-rdma: installing:$missing"
SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null

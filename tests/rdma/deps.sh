#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Debian packages for `make test-rdma` (idempotent, quiet when present): qemu for the VM
# (TCG: this machine's /dev/kvm cannot run a stock kernel), busybox for the initramfs, kmod
# for depmod/modprobe, xz to unpack the kernel, rdma-core's userland with the rxe provider,
# iproute2 for `rdma link` and `tc netem`, perftest for the reference bandwidth.
set -euo pipefail
exec "$(dirname "$0")/../../tools/install-deps.sh" --no-install-recommends \
    qemu-system-x86 busybox-static kmod xz-utils libibverbs1 ibverbs-providers ibverbs-utils \
    iproute2 perftest libibverbs-dev

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Debian packages the build, the tests and the benchmarks need. Idempotent; quiet when all present.
#
#   tools/install-deps.sh                                      the default list below
#   tools/install-deps.sh [--no-install-recommends] PKG...     these packages instead
#                                                              (tests/rdma/deps.sh)
set -euo pipefail
APT_OPTS=""
if [ "${1:-}" = --no-install-recommends ]; then
    APT_OPTS=$1
    shift
fi
PKGS="build-essential clang libclang-rt-14-dev libtsan2 clang-format libcmocka-dev libibverbs-dev openmpi-bin libopenmpi-dev iproute2 kmod procps python3 perl"
[ $# -gt 0 ] && PKGS="$*"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086 # word lists on purpose
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $APT_OPTS $missing >/dev/null
fi

#!/usr/bin/env bash
# Debian packages the build, the tests and the benchmarks need. Idempotent; quiet when all present.
set -euo pipefail
PKGS="build-essential clang-format libcmocka-dev libibverbs-dev openmpi-bin libopenmpi-dev iproute2 procps"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

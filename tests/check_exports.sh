#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Checks that libnccl-net-jaccl.so exports exactly the ABI tables, a net and a CollNet one for
# each version of plugin/abi/versions.h and a tuner table for each of its tuner versions, as
# data, and nothing else: a stray global could bind to a same-named symbol of NCCL or of
# another plugin.
#
#   tests/check_exports.sh BUILD_DIR
set -u

build=${1:?usage: $0 BUILD_DIR}
lib=$build/libnccl-net-jaccl.so

words() {
    printf '%s\n' "$1" | tr '\n' ' '
}

fail() {
    echo "check_exports: $*" >&2
    echo "0 passed, 1 failed"
    exit 1
}

[ -f "$lib" ] || fail "$lib not found"
syms=$(nm -D --defined-only "$lib") || fail "nm failed on $lib"

tmp=$(mktemp -d) || fail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
versions=$(sed -n 's/^#define JACCL_ABI_VERSIONS(X) //p' plugin/abi/versions.h | grep -o '[0-9][0-9]*')
[ -n "$versions" ] || fail "no versions in plugin/abi/versions.h"
tuners=$(sed -n 's/^#define JACCL_TUNER_VERSIONS(X) //p' plugin/abi/versions.h | grep -o '[0-9][0-9]*')
[ -n "$tuners" ] || fail "no tuner versions in plugin/abi/versions.h"
{
    for v in $versions; do
        printf 'ncclNetPlugin_v%s\nncclCollNetPlugin_v%s\n' "$v" "$v"
    done
    for v in $tuners; do
        printf 'ncclTunerPlugin_v%s\n' "$v"
    done
} | LC_ALL=C sort > "$tmp/want"
# Version nodes (type A) and the linker's _init/_fini/_edata/_end/__bss_start are housekeeping,
# not surface we chose.
printf '%s\n' "$syms" | awk 'NF == 3 && $2 != "A" { print $3 }' |
    grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' | LC_ALL=C sort > "$tmp/got"

missing=$(LC_ALL=C comm -23 "$tmp/want" "$tmp/got")
extra=$(LC_ALL=C comm -13 "$tmp/want" "$tmp/got")
[ -z "$missing" ] || fail "missing exports: $(words "$missing")"
[ -z "$extra" ] || fail "unexpected exports: $(words "$extra")"

# The tables are const data: D (or R); anything else means a wrong definition.
bad=$(printf '%s\n' "$syms" | awk '$3 ~ /^nccl((Coll)?Net|Tuner)Plugin_v/ && $2 !~ /^[DR]$/ { print $3 "(" $2 ")" }')
[ -z "$bad" ] || fail "tables that are not data: $(words "$bad")"

echo "1 passed, 0 failed"

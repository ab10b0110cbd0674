#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The algorithms sit below the core: no object built from plugin/algo may need a symbol that an
# object from plugin/core defines (they reach the core only through algo/xport.h's ops table).
#   tests/check_layers.sh [BUILD]     (default: build)
set -u
cd "$(dirname "$0")/.." || exit 2
obj="${1:-build}/obj/plugin"
if ! ls "$obj"/algo/*.o "$obj"/core/*.o >/dev/null 2>&1; then
    echo "check_layers: no objects under $obj (build first)"
    exit 2
fi
core_defs=$(nm --defined-only "$obj"/core/*.o | awk 'NF == 3 && $2 ~ /[TDRBC]/ {print $3}' | sort -u)
bad=0
for o in "$obj"/algo/*.o; do
    for s in $(nm -u "$o" | awk '{print $2}'); do
        if grep -qxF "$s" <<<"$core_defs"; then
            echo "check_layers: $o uses $s, defined in plugin/core"
            bad=$((bad + 1))
        fi
    done
done
[ "$bad" -eq 0 ] && echo "check_layers: plugin/algo uses nothing from plugin/core"
[ "$bad" -eq 0 ]

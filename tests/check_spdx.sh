#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every source file (C, headers, scripts, the Makefile, the linker map) names its license in
# an SPDX line near its top, as LICENSE says for the whole tree.
set -u
cd "$(dirname "$0")/.." || exit 2
missing=0
while read -r f; do
    case "$f" in
    *.c | *.h | *.sh | *.map | *.supp | Makefile | .ci/run) ;;
    *) continue ;;
    esac
    [ -f "$f" ] || continue
    if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: BSD-3-Clause'; then
        echo "no SPDX line: $f"
        missing=$((missing + 1))
    fi
done < <(git ls-files 2>/dev/null || find . -type f | sed 's|^\./||')
[ "$missing" -eq 0 ] && echo "check_spdx: every source file has its SPDX line"
[ "$missing" -eq 0 ]

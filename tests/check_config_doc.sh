#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# docs/configuration.md must be exactly what tools/config-doc.c makes of plugin/util/param.c's
# table and docs/configuration.in.md (names, types, defaults, ranges, fallbacks, descriptions):
# run `make docs` after changing a knob. The generator is compiled here on its own, so the check
# works in every build folder (the sanitizer build has no tools).
# Run from anywhere; prints "1 passed, 0 failed" or "0 passed, 1 failed".
cd "$(dirname "$0")/.." || exit 2
doc=docs/configuration.md

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

fail=0
if ! ${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -Iinclude -Iplugin -o "$tmp/config-doc" \
        tools/config-doc.c plugin/util/param.c; then
    echo "tools/config-doc.c does not build" >&2
    fail=1
elif ! "$tmp/config-doc" docs/configuration.in.md >"$tmp/configuration.md"; then
    echo "tools/config-doc.c failed" >&2
    fail=1
elif ! diff -u "$doc" "$tmp/configuration.md" >"$tmp/diff"; then
    head -n 40 "$tmp/diff" >&2
    echo "$doc is stale: run 'make docs' and commit the result" >&2
    fail=1
fi

if [ "$fail" -eq 0 ]; then
    echo "check_config_doc: $(grep -c '^| `NCCL_JACCL_' "$doc") knobs, $doc up to date"
    echo "1 passed, 0 failed"
    exit 0
fi
echo "0 passed, 1 failed"
exit 1

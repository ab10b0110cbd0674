#!/bin/sh
# docs/configuration.md must document exactly the NCCL_JACCL_* knobs of plugin/util/param.c:
# a knob missing from the doc, or a documented knob that the table does not have, fails.
# Run from anywhere; prints "1 passed, 0 failed" or "0 passed, 1 failed".
cd "$(dirname "$0")/.." || exit 2
table=plugin/util/param.c
doc=docs/configuration.md

# At least one character after the prefix, so a wildcard like NCCL_JACCL_* is not a name.
names() {
    grep -o 'NCCL_JACCL_[A-Z0-9][A-Z0-9_]*' "$1" | sort -u
}

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
names "$table" >"$tmp/table"
names "$doc" >"$tmp/doc"

fail=0
if [ ! -s "$tmp/table" ]; then
    echo "no NCCL_JACCL_* names found in $table" >&2
    fail=1
fi
for n in $(comm -23 "$tmp/table" "$tmp/doc"); do
    echo "$n is in $table but not documented in $doc" >&2
    fail=1
done
for n in $(comm -13 "$tmp/table" "$tmp/doc"); do
    echo "$n is documented in $doc but not in $table" >&2
    fail=1
done

if [ "$fail" -eq 0 ]; then
    echo "check_config_doc: $(wc -l <"$tmp/table") knobs documented"
    echo "1 passed, 0 failed"
    exit 0
fi
echo "0 passed, 1 failed"
exit 1

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Prints jaccl's version: `git describe` of a v<version> tag when the source is a git checkout
# (0.2.0, 0.2.0-3-gabc1234, -dirty appended for uncommitted changes); between tags, or with no
# tag yet, VERSION's number plus the commit (0.1.0+gabc1234). Outside git: VERSION alone.
#
#   packaging/version.sh          run from anywhere; reads the tree it lives in
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
base=$(cat "$root/VERSION" 2>/dev/null || echo 0.0.0)

# Only this tree's own repository counts: a tarball unpacked inside another checkout (a
# packaging repository, say) must not take that repository's commit as its version.
top=$(git -C "$root" rev-parse --show-toplevel 2>/dev/null || true)
if [ -z "$top" ] || [ "$(cd "$top" && pwd)" != "$root" ]; then
    echo "$base"
    exit 0
fi
if v=$(git -C "$root" describe --tags --dirty --match 'v[0-9]*' 2>/dev/null); then
    echo "${v#v}"
elif c=$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null); then
    echo "$base+g$c"
else
    echo "$base"
fi

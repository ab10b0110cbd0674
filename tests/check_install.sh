#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make install / make uninstall into a DESTDIR: exactly the library, the three tools and the
# docs go in; the libnccl-net.so alias only with INSTALL_DEFAULT_ALIAS=1; uninstall takes out
# exactly what went in (and leaves a foreign libnccl-net.so alone). No root needed.
#
#   BUILD=build tests/check_install.sh       (after make; make test-deb runs it)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=/opt/jaccl

check() { # name, command...
    local name=$1
    shift
    if "$@" >"$tmp/last" 2>&1; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name"
        sed 's/^/    /' "$tmp/last" | tail -n 20
    fi
}

mk() { # DESTDIR, make arguments...
    local d=$1
    shift
    make -s --no-print-directory BUILD="$BUILD" PREFIX=$P DESTDIR="$d" "$@"
}

listing() { # DESTDIR: every file and link, relative
    (cd "$1" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
}

same() { # expected file, actual file
    diff -u "$1" "$2"
}

docs=$( (echo README.md; echo LICENSE; cd docs && ls ./*.md) | sed "s|^\./||; s|^|opt/jaccl/share/doc/jaccl/|")
{
    printf '%s\n' opt/jaccl/bin/jaccl-info opt/jaccl/bin/jaccl-perf opt/jaccl/bin/jaccl-coll-perf \
        opt/jaccl/lib/libnccl-net-jaccl.so
    printf '%s\n' "$docs"
} | LC_ALL=C sort >"$tmp/want"

check "install" mk "$tmp/a" install
listing "$tmp/a" >"$tmp/got"
check "install: exactly the files" same "$tmp/want" "$tmp/got"
check "install: library mode 644" [ "$(stat -c %a "$tmp/a$P/lib/libnccl-net-jaccl.so")" = 644 ]
check "install: tools executable" [ -x "$tmp/a$P/bin/jaccl-info" ]
check "uninstall" mk "$tmp/a" uninstall
check "uninstall: nothing left" [ -z "$(listing "$tmp/a")" ]
check "uninstall: doc folder gone" [ ! -e "$tmp/a$P/share/doc/jaccl" ]

check "install with alias" mk "$tmp/b" install INSTALL_DEFAULT_ALIAS=1
check "alias points at jaccl" [ "$(readlink "$tmp/b$P/lib/libnccl-net.so")" = libnccl-net-jaccl.so ]
check "uninstall with alias" mk "$tmp/b" uninstall
check "alias removed" [ -z "$(listing "$tmp/b")" ]

# Another plugin's libnccl-net.so is not ours to remove.
mkdir -p "$tmp/c$P/lib"
: >"$tmp/c$P/lib/other.so"
ln -s other.so "$tmp/c$P/lib/libnccl-net.so"
check "install beside a foreign alias" mk "$tmp/c" install
check "uninstall keeps the foreign alias" mk "$tmp/c" uninstall
check "foreign alias kept" [ "$(readlink "$tmp/c$P/lib/libnccl-net.so")" = other.so ]

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

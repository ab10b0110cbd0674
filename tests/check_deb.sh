#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian package as a user gets it: dpkg -i, jaccl-info and the demo against the installed
# library with nothing pointing into the build folder (clean environment, another working
# directory), dpkg -r, then nothing of the package may be left. Root; part of make test (CI).
#
#   make deb && BUILD=build tests/check_deb.sh        (make test-deb does both)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BUILD_ABS=$(cd "$BUILD" && pwd)
PKG=libnccl-net-jaccl
pass=0
fail=0
tmp=$(mktemp -d)

die() {
    echo "check_deb: $*"
    echo "$pass passed, $((fail + 1)) failed"
    exit 1
}

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

installed() {
    dpkg-query -W -f='${db:Status-Status}' "$PKG" 2>/dev/null | grep -qx installed
}

# The path after "=>" (ldconfig -p) or "->" (the demo) in FILE must be the installed library;
# merged-/usr systems name it /lib/..., so real paths are compared.
names_lib() { # file, arrow
    local p
    p=$(grep -o -m1 -- "$2 [^ ,]*libnccl-net-jaccl.so" "$1" | sed "s/^$2 //")
    [ -n "$p" ] && [ "$(realpath "$p")" = "$lib" ] || { echo "found '$p', want $lib"; return 1; }
}

# A clean environment: no LD_LIBRARY_PATH, the system PATH, a working directory outside the tree.
clean_env() {
    (cd "$tmp" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp" \
        NCCL_JACCL_SOCKET_IFNAME=lo "$@")
}

[ "$(id -u)" -eq 0 ] || die "must run as root (dpkg -i); CI runs make test as root"
debs=("$BUILD_ABS"/deb/*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || die "want exactly one $BUILD/deb/*.deb (make deb)"
deb=${debs[0]}
# Someone's real install is not ours to remove.
installed && die "$PKG is already installed here; remove it first (dpkg -r $PKG)"
trap 'installed && dpkg -r "$PKG" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

# Everything the package will create that is not there yet must be gone again afterwards.
dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|; s|/$||' | grep -v '^$' >"$tmp/contents"
while read -r p; do [ -e "$p" ] || echo "$p"; done <"$tmp/contents" >"$tmp/new"
multiarch=$(cc -print-multiarch)
lib=/usr/lib/$multiarch/libnccl-net-jaccl.so

check "dpkg -i" dpkg -i "$deb"
installed || die "dpkg -i did not install $PKG"
ldconfig -p >"$tmp/cache"
check "library in the loader cache" names_lib "$tmp/cache" "=>"
check "jaccl-info on PATH" sh -c "[ \"\$(cd / && env -i PATH=/usr/local/bin:/usr/bin:/bin sh -c 'command -v jaccl-info')\" = /usr/bin/jaccl-info ]"
clean_env jaccl-info --json >"$tmp/info.json" 2>"$tmp/info.err"
check "jaccl-info exit 0" [ $? -eq 0 ]
check "jaccl-info: installed library, its version, usable" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["plugin"]["path"] == sys.argv[2], j["plugin"]["path"]
assert j["plugin"]["library_version"] == j["version"], (j["plugin"]["library_version"], j["version"])
assert j["usable"] is True, j["error"]
' "$tmp/info.json" "$lib"
# The demo binary comes from the build folder, but the plugin it loads by name can only be the
# installed one: nothing on the search path leads to $BUILD.
clean_env "$BUILD_ABS/demo" -n 2 >"$tmp/demo.out" 2>&1
check "demo exit 0" [ $? -eq 0 ]
check "demo loaded the installed library" names_lib "$tmp/demo.out" "->"
check "installed jaccl-coll-perf" clean_env jaccl-coll-perf allreduce -N 2 -b 4K -e 1M -f 16

check "dpkg -r" dpkg -r "$PKG"
check "not installed" sh -c "! dpkg-query -W -f='\${db:Status-Status}' $PKG 2>/dev/null | grep -qv not-installed"
check "no file left" sh -c "for p in \$(cat $tmp/new); do [ ! -e \"\$p\" ] || { echo \"left: \$p\"; exit 1; }; done"
check "library out of the loader cache" sh -c "! ldconfig -p | grep -q libnccl-net-jaccl"
[ $fail -eq 0 ] || { echo "--- jaccl-info stderr"; cat "$tmp/info.err"; echo "--- demo"; cat "$tmp/demo.out"; }
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

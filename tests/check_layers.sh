#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The layer arrows point one way: abi -> core -> algo -> fabric -> util (include/nccl_abi, NCCL's
# own ABI, sits under all of them); the two back ends, fabric/tcp and fabric/verbs, never reach
# into each other, and the layers above fabric see only its interface (fabric/*.h), never a back
# end. Checked two ways:
#  - source: every `#include "..."` in plugin/ names a header of its own layer or one below;
#  - objects: `nm` on $BUILD/obj/plugin: no object needs a symbol that only a higher layer (or
#    the other back end) defines. That catches a call through a prototype written by hand,
#    which the include check cannot see.
# And for the test code: no file includes a .c, and neither harness/ nor tools/ include
# anything from tests/.
# And the data path (core/p2p_proto.c, p2p_comm.c, mr.c, coll_*.c) never calls jaccl_fabric():
# it reaches the fabric through the objects it holds, which carry their back end's ops
# (fabric/fabric.h), so that nothing on it assumes one back end per process.
#
# Every violation is printed. The known ones are in tests/layers.allow (one a line, with the
# reason), so the check passes on today's tree and fails on any new violation; an entry that no
# longer matches anything is printed as stale, so that the list shrinks as the layers are fixed.
#
# usage: tests/check_layers.sh [build folder] (default $BUILD or build)
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${1:-${BUILD:-build}}
ALLOW=${JACCL_LAYERS_ALLOW:-tests/layers.allow}
OBJ=$BUILD/obj/plugin

# The layer of a path under plugin/ (or of an include path relative to plugin/).
layer_of() {
    local p=${1#plugin/}
    case "$p" in
    nccl_abi/* | jaccl_version.h) echo base ;;
    fabric/tcp/*) echo fabric/tcp ;;
    fabric/verbs/*) echo fabric/verbs ;;
    abi/* | core/* | algo/* | fabric/* | util/*) echo "${p%%/*}" ;;
    *) echo unknown ;;
    esac
}

rank_of() {
    case "$1" in
    base) echo 0 ;;
    util) echo 1 ;;
    fabric | fabric/tcp | fabric/verbs) echo 2 ;;
    algo) echo 3 ;;
    core) echo 4 ;;
    abi) echo 5 ;;
    *) echo 9 ;;
    esac
}

# 0 when layer $1 may depend on layer $2.
may_use() {
    local a=$1 b=$2
    [ "$a" = "$b" ] && return 0
    case "$a:$b" in
    fabric/tcp:fabric/verbs | fabric/verbs:fabric/tcp) return 1 ;;
    fabric:fabric/* | util:fabric/* | base:fabric/*) ;;
    *:fabric/tcp | *:fabric/verbs) return 1 ;; # above fabric, only its interface is visible
    esac
    [ "$(rank_of "$b")" -le "$(rank_of "$a")" ]
}

violations=()

# ---- includes ----
check_includes() {
    local f inc target from to
    while read -r f; do
        from=$(layer_of "$f")
        while read -r inc; do
            # A bare name is the file's own directory (that is how the compiler finds it).
            if [ -f "$(dirname "$f")/$inc" ] && [ "${inc#*/}" = "$inc" ]; then
                target=$(dirname "$f")/$inc
            else
                target=$inc
            fi
            to=$(layer_of "$target")
            if [ "$to" = unknown ]; then
                violations+=("include $f $inc (not a header of any layer)")
            elif ! may_use "$from" "$to"; then
                violations+=("include $f $inc ($from -> $to)")
            fi
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done < <(find plugin -name '*.[ch]' | sort)
}

# ---- the test code ----
check_test_code() {
    local hit
    while read -r hit; do
        violations+=("include ${hit%%:*} ${hit#*:} (a .c file)")
    done < <(grep -rHo --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*\.c"' \
        plugin harness tests tools | sed 's/:[^"]*"\([^"]*\)"$/:\1/')
    while read -r hit; do
        violations+=("include ${hit%%:*} ${hit#*:} (outside tests/, from tests/)")
    done < <(grep -rHo --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*tests/[^"]*"' \
        harness tools | sed 's/:[^"]*"\([^"]*\)"$/:\1/')
}

# ---- the data path: no process-wide fabric ----
DATA_PATH=(plugin/core/p2p_proto.c plugin/core/p2p_comm.c plugin/core/mr.c plugin/core/coll_*.c)
check_data_path() {
    local hit
    while read -r hit; do
        violations+=("fabric ${hit%%:*} jaccl_fabric (line ${hit#*:}: calls the process-wide fabric)")
    done < <(grep -Hn -E '(^|[^[:alnum:]_])jaccl_fabric[[:space:]]*\(' "${DATA_PATH[@]}" | cut -d: -f1,2)
}

# ---- objects ----
# "object layer" of every object, then the global symbols each defines and needs.
check_symbols() {
    local defs undefs o sym from to tos ok
    defs=$(mktemp)
    undefs=$(mktemp)
    while read -r o; do
        from=$(layer_of "${o#"$OBJ"/}")
        nm -g --defined-only "$o" | awk -v L="$from" 'NF == 3 { print $3, L }' >>"$defs"
        nm -u "$o" | awk -v O="${o#"$BUILD"/obj/}" -v L="$from" '{ print $NF, O, L }' >>"$undefs"
    done < <(find "$OBJ" -name '*.o' | sort)
    # Each needed symbol with the layers that define it, when none is the object's own; a
    # violation when no defining layer may be used.
    while read -r sym o from tos; do
        ok=1
        for to in ${tos//,/ }; do
            may_use "$from" "$to" && ok=0
        done
        [ "$ok" = 1 ] && violations+=("symbol $o $sym ($from -> $tos)")
    done < <(awk 'NR == FNR { if ($1 in d) d[$1] = d[$1] "," $2; else d[$1] = $2; next }
                  ($1 in d) && index("," d[$1] ",", "," $3 ",") == 0 { print $1, $2, $3, d[$1] }' \
        "$defs" <(sort -u "$undefs"))
    rm -f "$defs" "$undefs"
}

if [ ! -d "$OBJ" ]; then
    echo "check_layers: no objects in $OBJ (build first: make lib BUILD=$BUILD)"
    exit 2
fi
check_includes
check_test_code
check_data_path
check_symbols

# ---- the allow-list: "include|symbol|fabric <file> <header|symbol>  # reason", globs allowed ----
declare -A used=()
allowed() { # the violation's kind, file, what
    local n=0 kind file what rest
    while IFS= read -r line; do
        n=$((n + 1))
        line=${line%%#*}
        read -r kind file what rest <<<"$line"
        [ -z "${kind:-}" ] && continue
        # shellcheck disable=SC2053 # globs on purpose
        if [ "$kind" = "$1" ] && [[ $2 == $file ]] && [[ $3 == $what ]]; then
            used[$n]=1
            return 0
        fi
    done <"$ALLOW"
    return 1
}

bad=0
known=0
[ -f "$ALLOW" ] || ALLOW=/dev/null
for v in "${violations[@]}"; do
    read -r kind file what _ <<<"$v"
    if allowed "$kind" "$file" "$what"; then
        known=$((known + 1))
        echo "known: $v"
    else
        bad=$((bad + 1))
        echo "NEW:   $v"
    fi
done

# Entries without a reason, and entries nothing matches any more.
n=0
while IFS= read -r line; do
    n=$((n + 1))
    entry=${line%%#*}
    [ -z "${entry// /}" ] && continue
    reason=${line#*#}
    if [ "$reason" = "$line" ] || [ -z "${reason// /}" ]; then
        echo "NO REASON: $ALLOW:$n: $line"
        bad=$((bad + 1))
    fi
    [ -z "${used[$n]:-}" ] && echo "stale (remove it): $ALLOW:$n: $entry"
done <"$ALLOW"

echo "check_layers: $known known violations (in $ALLOW), $bad new"
[ "$bad" -eq 0 ]

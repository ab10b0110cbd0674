#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# jaccl-info against $BUILD: exit codes, the JSON it prints (parsed by python3's json module and
# checked field by field), knob values and sources, the plugin path it resolves, and on a
# machine without RDMA devices (this one, CI) the TCP fallback reason.
#
#   BUILD=build tests/check_info.sh
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BUILD_ABS=$(cd "$BUILD" && pwd)
INFO=$BUILD_ABS/jaccl-info
LIB=$BUILD_ABS/libnccl-net-jaccl.so
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # name, then a command that must succeed
    local name=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name"
    fi
}

# rc WANT, then the jaccl-info command line: stdout in $tmp/out, stderr in $tmp/err.
rc_is() {
    local want=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || { echo "exit $rc, want $want: $*" && cat "$tmp/err"; return 1; }
}

# Python assertions over the JSON in $tmp/out; `j` is the document, extra names from env.
json_ok() {
    python3 - "$tmp/out" "$@" <<'PY'
import json, os, sys
with open(sys.argv[1]) as f:
    j = json.load(f)
env = os.environ
for expr in sys.argv[2:]:
    if not eval(expr):
        print("json check failed:", expr)
        sys.exit(1)
PY
}

[ -x "$INFO" ] || { echo "check_info: $INFO not built (make all)"; echo "0 passed, 1 failed"; exit 1; }
export NCCL_JACCL_SOCKET_IFNAME=lo LD_LIBRARY_PATH=$BUILD_ABS

# The default run: usable, text mentions the version and the resolved library.
check "text exit 0" rc_is 0 "$INFO"
check "text names the library" grep -q "path: $LIB" "$tmp/out"
check "text has the knobs" grep -q "NCCL_JACCL_TIMEOUT" "$tmp/out"

# JSON: every section there, every knob of param.c listed once with a source and a description.
knobs=$(grep -o '"NCCL_JACCL_[A-Z0-9_]*"' plugin/util/param.c | tr -d '"' | sort -u | tr '\n' ' ')
export KNOBS=$knobs LIB
check "json exit 0" rc_is 0 "$INFO" --json
check "json parses" python3 -m json.tool "$tmp/out" /dev/null
check "json content" json_ok \
    'j["usable"] is True and j["error"] is None' \
    'j["plugin"]["path"] == env["LIB"]' \
    'j["version"] and j["plugin"]["library_version"] == j["version"]' \
    'set(j["plugin"]["tables"]) == {f"{t}_v{v}" for t in ("ncclNetPlugin", "ncclCollNetPlugin") for v in range(8, 13)} | {"ncclTunerPlugin_v5", "ncclTunerPlugin_v6"}' \
    'sorted(k["name"] for k in j["knobs"]) == sorted(env["KNOBS"].split())' \
    'all(k["source"] and k["description"] for k in j["knobs"])' \
    '[d["name"] for d in j["plugin"]["devices"]] == ["lo"]' \
    '[d["name"] for d in j["fabric"]["devices"]] == ["lo"]' \
    '[i["used"] for i in j["interfaces"] if i["name"] == "lo"] == [True]' \
    'all(not i["used"] and i["reason"] for i in j["interfaces"] if i["name"] != "lo")'

# The tuner's model: the link from the device, the default hop, kernels measured here; a knob
# replaces the device's speed and says so.
check "tuner model" json_ok \
    'j["tuner"]["enabled"] is True and j["tuner"]["model"] == "ok"' \
    'j["tuner"]["link_GBps"] == 1.25 and j["tuner"]["link_from"] == "device lo"' \
    'j["tuner"]["hop_us"] == 12 and j["tuner"]["hop_from"] == "default"' \
    'sorted(k["type"] for k in j["tuner"]["kernels"]) == ["bfloat16", "float16", "float32"]' \
    'all(k["in_cache_GBps"] > 0 and k["from_memory_GBps"] > 0 for k in j["tuner"]["kernels"])' \
    'j["tuner"]["dtype"] in ("bfloat16", "float16", "float32")'
check "tuner knobs" rc_is 0 env NCCL_JACCL_TUNER_LINK_MBPS=2000 NCCL_JACCL_TUNER_LAT_NS=3500 \
    NCCL_JACCL_TUNER=0 "$INFO" --json
check "tuner knobs: model" json_ok 'j["tuner"]["enabled"] is False' \
    'j["tuner"]["link_GBps"] == 0.25 and j["tuner"]["link_from"] == "NCCL_JACCL_TUNER_LINK_MBPS"' \
    'j["tuner"]["hop_us"] == 3.5 and j["tuner"]["hop_from"] == "NCCL_JACCL_TUNER_LAT_NS"'

# Where a value came from: environment, or the default when unset or invalid.
check "knob from env" rc_is 0 env NCCL_JACCL_NSOCKS=3 "$INFO" --json
check "knob from env: value" json_ok \
    '[(k["value"], k["source"]) for k in j["knobs"] if k["name"] == "NCCL_JACCL_NSOCKS"] == [("3", "environment")]'
check "invalid knob" rc_is 0 env NCCL_JACCL_NSOCKS=many "$INFO" --json
check "invalid knob: default" json_ok \
    '[k["value"] for k in j["knobs"] if k["name"] == "NCCL_JACCL_NSOCKS"] == ["2"]' \
    '[k["source"].startswith("default") and k["source"] != "default" for k in j["knobs"] if k["name"] == "NCCL_JACCL_NSOCKS"] == [True]'
check "invalid knob: warned" grep -q 'NCCL_JACCL_NSOCKS="many"' "$tmp/err"
# Unset, but NCCL's own equivalent is: the value comes from it, and the source names it.
check "NCCL fallback" rc_is 0 env -u NCCL_JACCL_SOCKET_FAMILY NCCL_SOCKET_FAMILY=AF_INET "$INFO" --json
check "NCCL fallback: source" json_ok \
    '[(k["value"], k["source"]) for k in j["knobs"] if k["name"] == "NCCL_JACCL_SOCKET_FAMILY"] == [("AF_INET", "NCCL fallback (NCCL_SOCKET_FAMILY)")]'

# An explicit path, with the loader's search path empty.
check "explicit path" rc_is 0 env -u LD_LIBRARY_PATH "$INFO" --json "$LIB"
check "explicit path: resolved" json_ok 'j["plugin"]["path"] == env["LIB"]'
# NCCL's resolution of NCCL_NET_PLUGIN=jaccl: "jaccl" first, then libnccl-net-jaccl.so.
check "NCCL_NET_PLUGIN=jaccl" rc_is 0 env NCCL_NET_PLUGIN=jaccl "$INFO" --json
check "NCCL_NET_PLUGIN=jaccl: resolved" json_ok 'j["plugin"]["requested"] == "jaccl"' \
    'j["plugin"]["loaded_as"] == "libnccl-net-jaccl.so"' 'j["plugin"]["path"] == env["LIB"]'
check "missing library" rc_is 1 env -u LD_LIBRARY_PATH "$INFO" "$tmp/none.so"
check "missing library: reason" grep -q "could not be loaded" "$tmp/err"
check "usage" rc_is 2 "$INFO" --bogus

# No RDMA device here: auto falls back to tcp and says why; verbs on demand fails with it.
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    check "fallback" rc_is 0 "$INFO" --json
    check "fallback: reason" json_ok \
        'j["fabric"]["chosen"] == "tcp"' \
        '"no RDMA device" in j["fabric"]["reason"]' \
        'j["rdma"]["devices"] == []' \
        '[(u["name"], u["reason"]) for u in j["fabric"]["not_used"]] == [("verbs", "no RDMA device")]'
    check "fallback: text" rc_is 0 "$INFO"
    check "fallback: text reason" grep -q "reason: .*no RDMA device" "$tmp/out"
    check "verbs forced" rc_is 1 env NCCL_JACCL_FABRIC=verbs "$INFO" --json
    check "verbs forced: reason" grep -q "nothing usable: .*no RDMA device" "$tmp/err"
    check "verbs forced: json" json_ok 'j["usable"] is False' '"no RDMA device" in j["error"]' \
        '[(u["name"], u["reason"]) for u in j["fabric"]["not_used"]] == [("verbs", "no RDMA device"), ("tcp", "not tried: NCCL_JACCL_FABRIC=verbs")]'
fi
check "fabric tcp by knob" rc_is 0 env NCCL_JACCL_FABRIC=tcp "$INFO" --json
check "fabric tcp by knob: reason" json_ok '"NCCL_JACCL_FABRIC=tcp" in j["fabric"]["reason"]' \
    '[(u["name"], u["reason"]) for u in j["fabric"]["not_used"]] == [("verbs", "not tried: NCCL_JACCL_FABRIC=tcp")]'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

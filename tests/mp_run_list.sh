# Sourced by run_p2p.sh and run_coll.sh: runs every binary in $tests under `timeout $limit`,
# ("path:1,3" runs the binary with arguments 1 and 3: its scenarios by index),
# prefixing lines with $runner, and ends with one "N passed, M failed" line (exit status 0 only
# when every test passed).
pass=0
fail=0
failed=""
start=$(date +%s)
for t in $tests; do
    name=$(basename "$t")
    bin=${t%%:*}
    args=""
    case $t in *:*) args=$(echo "${t#*:}" | tr ',' ' ') ;; esac
    if [ ! -x "$bin" ]; then
        echo "$runner: $t not built"
        fail=$((fail + 1))
        failed="$failed $name"
        continue
    fi
    t0=$(date +%s)
    # shellcheck disable=SC2086 # args: scenario indices, split on purpose
    if timeout -k 5 "$limit" "$bin" $args 2>&1; then
        pass=$((pass + 1))
        echo "$runner: PASS $name ($(($(date +%s) - t0)) s)"
    else
        fail=$((fail + 1))
        failed="$failed $name"
        echo "$runner: FAIL $name ($(($(date +%s) - t0)) s)"
    fi
    echo
done

if [ $((pass + fail)) -eq 0 ]; then
    echo "$runner: no tests in $BUILD/tests (run make first)"
    fail=1
fi
[ -n "$failed" ] && echo "$runner: failed:$failed"
echo "$runner: $(($(date +%s) - start)) s against $BUILD/libnccl-net-jaccl.so"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

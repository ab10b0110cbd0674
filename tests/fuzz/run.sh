#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs every libFuzzer target in $BUILD/fuzz (default build-fuzz) for FUZZ_S seconds (default 30)
# from its seed corpus in tests/fuzz/corpus/<target> (read only: what the run finds goes to a
# temporary folder), FUZZ_JOBS targets at a time (default 2). Prints executions, coverage and
# corpus size per target; fails if any target crashes, leaks, hangs or trips a sanitizer (its
# input is left in $BUILD/fuzz/artifacts: add it to the corpus as regress-<what> once fixed).
#   tests/fuzz/run.sh [target...]
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-fuzz}
FUZZ_S=${FUZZ_S:-30}
FUZZ_JOBS=${FUZZ_JOBS:-2}
art="$BUILD/fuzz/artifacts"
mkdir -p "$art"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for t in "$BUILD"/fuzz/fuzz_*; do
        [ -x "$t" ] && targets+=("$(basename "$t")")
    done
fi
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz targets in $BUILD/fuzz (make fuzz builds them)"; exit 1; }

one() { # target: runs it, writes its log and exit status into $logs
    local t=$1 work="$logs/$1.corpus"
    mkdir -p "$work"
    # -timeout: one input running this long is a hang; the TCP stream target's own deadline
    # (5 s) fires first and names the invariant.
    timeout $((FUZZ_S + 120)) "$BUILD/fuzz/$t" -max_total_time="$FUZZ_S" -timeout=20 \
        -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 -artifact_prefix="$art/$t-" \
        "$work" "tests/fuzz/corpus/$t" >"$logs/$t.log" 2>&1
    echo $? >"$logs/$t.rc"
}

running=0
for t in "${targets[@]}"; do
    one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$FUZZ_JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

fail=0
printf '%-18s %10s %8s %8s %6s  %s\n' target execs exec/s cov ft result
for t in "${targets[@]}"; do
    log="$logs/$t.log"
    rc=$(cat "$logs/$t.rc")
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    result=ok
    if [ "$rc" -ne 0 ]; then
        result="FAILED (exit $rc)"
        fail=1
    fi
    printf '%-18s %10s %8s %8s %6s  %s\n' "$t" "${execs:-?}" "${speed:-?}" "${cov:-?}" \
        "${ft:-?}" "$result"
    if [ "$rc" -ne 0 ]; then
        grep -E 'ERROR|SUMMARY|invariant|runtime error|Test unit written' "$log" | head -n 8 |
            sed 's/^/    /'
    fi
done
echo "fuzz: ${#targets[@]} targets, ${FUZZ_S} s each; $([ $fail = 0 ] && echo passed || echo FAILED)"
exit $fail

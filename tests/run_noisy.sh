#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make test-noisy: `make test-fast` while two load processes keep both cores busy, one a plain
# busy loop, one spinning on sched_yield() as a polling proxy does (tests/noise_load.c). A test
# that bets on a thread being scheduled within some milliseconds loses that bet here. The loads
# stop when this script exits, however it exits (and die with it if it is killed outright).
#
#   BUILD=build tests/run_noisy.sh      (make test-noisy builds $BUILD/tests/noise_load first)
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
LOAD=$BUILD/tests/noise_load
[ -x "$LOAD" ] || {
    echo "test-noisy: $LOAD not built (make test-noisy builds it)" >&2
    exit 2
}

pids=()
# shellcheck disable=SC2317 # reached through the trap
stop_loads() {
    [ ${#pids[@]} -gt 0 ] || return 0
    kill "${pids[@]}" 2>/dev/null
    wait "${pids[@]}" 2>/dev/null
    pids=()
}
# make runs in the foreground, so Ctrl-C stops it and its tests as usual; the signal's trap
# (bash runs it once make is gone) then exits through the EXIT trap, which stops the loads.
trap stop_loads EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

"$LOAD" spin $$ &
pids+=($!)
"$LOAD" yield $$ &
pids+=($!)
echo "test-noisy: load started (busy loop: pid ${pids[0]}, sched_yield loop: pid ${pids[1]})"

# The whole log of every failed suite, for the one check among hundreds that lost its bet
# (each run's under its own name: tests/suites.sh).
logs=$BUILD/noisy-logs
t0=$SECONDS
JACCL_TEST_LOG_DIR=$logs "${MAKE:-make}" test-fast BUILD="$BUILD"
rc=$?
echo "test-noisy: make test-fast under load exited $rc after $((SECONDS - t0)) s"
[ "$rc" -eq 0 ] || echo "test-noisy: the failed suites' whole logs are in $logs"
exit "$rc"

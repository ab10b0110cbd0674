# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by run_all.sh, run_p2p.sh and run_coll.sh: they add suites (suite_add, mp_suites) and
# call suites_run, which runs them JACCL_TEST_JOBS at a time (default 2: two cores, and most
# suites spend their time waiting on peers and deadlines), each under its own timeout, and
# prints what they found as TAP (https://testanything.org), which prove reads
# (prove -e '' tests/run_all.sh):
#   - a line per test of a suite that speaks TAP itself (an mp test's scenarios,
#     harness/mp_scenario.h; a cmocka unit test's cases), renumbered into one stream and
#     prefixed with the suite: "ok 12 - p2p_basic/v8 (0.4 s)";
#   - one line for a suite that does not (the checks); a "not ok" line for a suite whose exit
#     status, timeout or plan says more than its lines (a crash between two scenarios);
#   - a suite's output goes to its log and is printed once the suite has ended, so two suites
#     never interleave: whole with JACCL_TEST_VERBOSE=1, else only a failed suite's last
#     lines, as "# " comments. A failed suite's whole log stays in JACCL_TEST_LOG_DIR (default
#     $BUILD/test-logs) as <suite>.<date-time>.log, never overwritten or deleted by a later
#     run; a passed suite's is deleted;
#   - the plan, then "suites: N passed, M failed"; suites_run returns 0 only if all passed.
# JACCL_TEST_SAN=1 (sanitized code is slower) stretches every time limit 3 times,
# JACCL_TEST_SLOW=N N times more. Needs bash 5.1 (wait -p).

BUILD=${BUILD:-build}
JACCL_TEST_LOG_DIR=${JACCL_TEST_LOG_DIR:-$BUILD/test-logs}
S_STRETCH=$(((${JACCL_TEST_SAN:-0} == 1 ? 3 : 1) * ${JACCL_TEST_SLOW:-1}))
S_NAME=() # per suite: its name, tap or plain, its limit (s), its command (quoted for eval)
S_TAP=()
S_LIMIT=()
S_CMD=()
S_T0=()
declare -A S_OF_PID=()
S_NUM=0 # TAP lines printed
S_PASS=0
S_FAIL=0
S_FAILED=()

suite_add() { # tap|plain, name, seconds (before the stretch), command...
    S_TAP+=("$1")
    S_NAME+=("$2")
    S_LIMIT+=($(($3 * S_STRETCH)))
    shift 3
    S_CMD+=("$(printf '%q ' "$@")")
}

# The multi-process tests of one kind (p2p, coll: $BUILD/tests/mp_<kind>_*), `seconds` each.
# Words as run_p2p.sh takes them: "basic" (or "p2p_basic") runs every scenario of that test,
# "basic:v8,v9" (names, patterns or indices) only those; no word runs every test of the kind.
mp_suites() { # kind, seconds, words...
    local kind=$1 limit=$2 w t
    shift 2
    if [ $# -eq 0 ]; then
        for t in "$BUILD"/tests/mp_"$kind"_*; do
            case $t in *.*) ;; *) [ -e "$t" ] && set -- "$@" "${t##*/mp_}" ;; esac
        done # (the build leaves dependency files, *.d, beside the binaries)
    fi
    for w in "$@"; do
        local test=${w%%:*} scen=()
        test=${test#mp_}
        test=${test#"$kind"_}
        # read, not word splitting: a pattern such as abort-* must reach the test unexpanded
        [ "$w" != "${w#*:}" ] && IFS=, read -ra scen <<<"${w#*:}"
        suite_add tap "${kind}_$test" "$limit" env NCCL_JACCL_TIMEOUT="${NCCL_JACCL_TIMEOUT:-3}" \
            "$BUILD/tests/mp_${kind}_$test" "${scen[@]}"
    done
}

s_log() { # index: its log while it runs
    echo "$JACCL_TEST_LOG_DIR/.running/${S_NAME[$1]//\//_}.log"
}

# A failed suite's log, moved where the next run will not touch it; echoes where it is.
s_keep() { # index, log
    local kept
    kept=$JACCL_TEST_LOG_DIR/${S_NAME[$1]//\//_}.$(date +%Y%m%d-%H%M%S).$$.log
    if mv "$2" "$kept"; then echo "$kept"; else echo "$2"; fi
}

s_start() { # index
    S_T0[$1]=$SECONDS
    # exec: the job is timeout itself, so s_stop's signal reaches it
    eval "exec timeout -k 5 ${S_LIMIT[$1]} ${S_CMD[$1]}" >"$(s_log "$1")" 2>&1 </dev/null &
    S_OF_PID[$!]=$1
}

s_line() { # ok|"not ok", text
    S_NUM=$((S_NUM + 1))
    echo "$1 $S_NUM - $2"
}

# The suite's own TAP lines, renumbered; sets T_BAD (failed lines), T_PLANS, T_PLANNED (the sum
# of its plans: cmocka prints one per group) and T_SEEN (its lines) for s_verdict.
s_tap_lines() { # index, log
    local name=${S_NAME[$1]} line rest no
    T_BAD=0 T_PLANS=0 T_PLANNED=0 T_SEEN=0
    [ "${S_TAP[$1]}" = tap ] || return 0
    while IFS= read -r line; do
        if [[ $line =~ ^(not\ )?ok\ [0-9]+(.*)$ ]]; then
            no=${BASH_REMATCH[1]}
            rest=${BASH_REMATCH[2]# }
            rest=${rest#- }
            T_SEEN=$((T_SEEN + 1))
            if [[ ${rest,,} =~ ^\#\ *skip\ *(.*)$ ]]; then # cmocka: "not ok 3 # SKIP name"
                # (the name as the suite spelt it: the match ran on the lower-cased line)
                s_line ok "$name/${rest:${#rest}-${#BASH_REMATCH[1]}} # SKIP"
                continue
            fi
            # a "not ok" marked TODO is no failure, and stays "not ok" for prove
            [ -n "$no" ] && [[ ! ${rest,,} =~ \#\ *todo ]] && T_BAD=$((T_BAD + 1))
            s_line "${no}ok" "$name${rest:+/$rest}"
        elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
            T_PLANNED=$((T_PLANNED + BASH_REMATCH[1]))
            T_PLANS=$((T_PLANS + 1))
        fi
    done <"$2"
}

# A line for what the exit status or the plan says and the suite's lines did not (a plain
# suite's only line); 0 if the suite passed.
s_verdict() { # index, exit status, seconds
    local name=${S_NAME[$1]} rc=$2 secs=$3 tap=0 ok=ok
    [ "${S_TAP[$1]}" = tap ] && tap=1
    if [ "$rc" -ne 0 ] && [ "$secs" -ge "${S_LIMIT[$1]}" ]; then
        s_line "not ok" "$name (timed out after ${S_LIMIT[$1]} s)"
    elif [ "$rc" -ne 0 ] && [ "$T_BAD" -eq 0 ]; then
        [ "$rc" -gt 128 ] && rc="$rc: signal $((rc - 128))"
        s_line "not ok" "$name (exit status $rc)"
    elif [ $tap = 0 ]; then
        s_line ok "$name ($secs s)"
    elif [ "$T_PLANS" -eq 0 ] || [ "$T_PLANNED" -ne "$T_SEEN" ]; then
        s_line "not ok" "$name ($T_SEEN results, $T_PLANNED planned: it stopped early)"
        ok=
    fi
    [ "$rc" = 0 ] && [ "$T_BAD" -eq 0 ] && [ -n "$ok" ]
}

s_report() { # index, exit status
    local i=$1 log secs=$((SECONDS - S_T0[$1]))
    log=$(s_log "$i")
    [ "${JACCL_TEST_VERBOSE:-0}" = 1 ] && sed 's/^/# /' "$log"
    s_tap_lines "$i" "$log"
    if s_verdict "$i" "$2" "$secs"; then
        S_PASS=$((S_PASS + 1))
        echo "# ${S_NAME[$i]}: passed, $secs s"
        rm -f "$log"
        return
    fi
    S_FAIL=$((S_FAIL + 1))
    S_FAILED+=("${S_NAME[$i]}")
    echo "# ${S_NAME[$i]}: FAILED, $secs s; the last lines of its log:"
    tail -n 40 "$log" | sed 's/^/#     /'
    echo "# (whole log: $(s_keep "$i" "$log"))"
}

# Ctrl-C or a kill of the runner: the suites started (each under timeout, which passes the
# signal to its whole process group, ranks included) stop too.
s_stop() {
    local pid
    for pid in "${!S_OF_PID[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    wait
}

suites_run() {
    local jobs=${JACCL_TEST_JOBS:-2} next=0 n=${#S_NAME[@]} pid rc t0=$SECONDS
    if [ "${BASH_VERSINFO[0]}${BASH_VERSINFO[1]}" -lt 51 ]; then
        echo "Bail out! bash $BASH_VERSION: the test runner needs 5.1 or newer (wait -p)"
        return 2
    fi
    mkdir -p "$JACCL_TEST_LOG_DIR/.running" || return 2
    trap 's_stop; echo "Bail out! interrupted"; exit 130' INT
    trap 's_stop; echo "Bail out! terminated"; exit 143' TERM
    while [ $next -lt "$n" ] || [ ${#S_OF_PID[@]} -gt 0 ]; do
        while [ $next -lt "$n" ] && [ ${#S_OF_PID[@]} -lt "$jobs" ]; do
            s_start $next
            next=$((next + 1))
        done
        wait -n -p pid 2>/dev/null # (its death by a signal: s_verdict says it)
        rc=$?
        [ -n "${pid:-}" ] || break # nothing left to wait for: counted as lost below
        [ -n "${S_OF_PID[$pid]:-}" ] || continue
        local i=${S_OF_PID[$pid]}
        unset "S_OF_PID[$pid]"
        s_report "$i" "$rc"
    done
    trap - INT TERM
    [ "$n" -eq 0 ] && s_line "not ok" "no suites in $BUILD (run make first)" && S_FAIL=1
    if [ $((S_PASS + S_FAIL)) -lt "$n" ]; then
        s_line "not ok" "$((n - S_PASS - S_FAIL)) suites lost (the runner stopped waiting)"
        S_FAIL=$((S_FAIL + n - S_PASS - S_FAIL))
    fi
    echo "1..$S_NUM"
    [ ${#S_FAILED[@]} -gt 0 ] && echo "# failed: ${S_FAILED[*]}"
    echo "# $((SECONDS - t0)) s, $jobs suites at a time, against $BUILD"
    echo "suites: $S_PASS passed, $S_FAIL failed"
    [ "$S_FAIL" -eq 0 ]
}

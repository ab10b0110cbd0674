#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs every test against $BUILD (default: build), two suites at a time (tests/suites.sh): the
# multi-process CollNet and p2p tests, the unit tests (cmocka), the export, docs, format and
# layering checks. Prints TAP, one line per scenario or unit test (prove -e '' tests/run_all.sh
# reads it; make test-fast does), and ends with "suites: N passed, M failed".
#
#   JACCL_TEST_COLL / JACCL_TEST_P2P   which multi-process tests, as run_coll.sh / run_p2p.sh
#                                      take them ("basic:ring-2,mesh-* fail"); every one when
#                                      unset (make test-tsan picks some)
#   JACCL_TEST_JOBS=N                  suites at a time (default 2)
#   JACCL_TEST_VERBOSE=1               every suite's whole output, not only a failed one's tail
#   JACCL_TEST_LOG_DIR                 where a failed suite's whole log stays ($BUILD/test-logs)
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
BUILD_ABS=$(cd "$BUILD" && pwd) || exit 2
export LD_LIBRARY_PATH="$BUILD_ABS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NCCL_JACCL_SOCKET_IFNAME=${NCCL_JACCL_SOCKET_IFNAME:-lo}
if [ "${JACCL_TEST_SAN:-0}" = 1 ]; then
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
# shellcheck source=tests/suites.sh
. tests/suites.sh

# The longest first, so the two slots end close together: the CollNet tests, then p2p. (read
# splits the words without expanding a pattern such as "teardown:abort-*" against our files.)
read -ra coll <<<"${JACCL_TEST_COLL:-}"
read -ra p2p <<<"${JACCL_TEST_P2P:-}"
mp_suites coll 300 "${coll[@]}"
mp_suites p2p 150 "${p2p[@]}"
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] && suite_add tap "unit/${t##*/}" 300 env CMOCKA_MESSAGE_OUTPUT=TAP "$t"
done
suite_add plain check_exports 300 tests/check_exports.sh "$BUILD"
suite_add plain check_config_doc 300 tests/check_config_doc.sh
suite_add plain check_spdx 300 tests/check_spdx.sh
suite_add plain check_layers 300 tests/check_layers.sh "$BUILD"
suite_add plain check_info 300 env BUILD="$BUILD" tests/check_info.sh
suite_add plain format 300 make -s format-check
suites_run

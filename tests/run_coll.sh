#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the multi-process CollNet tests ($BUILD/tests/mp_coll_*) against the plugin in
# $BUILD, loaded the way NCCL loads it (by name, through LD_LIBRARY_PATH), two at a time, each
# test's whole output printed once it ends, then its scenarios' TAP lines (tests/suites.sh),
# and last "suites: N passed, M failed". Exit status 0 only if every test passed.
#
#   BUILD=build tests/run_coll.sh                   every test
#   BUILD=build tests/run_coll.sh basic fail        only mp_coll_basic and mp_coll_fail
#   BUILD=build tests/run_coll.sh teardown:abort-*  the scenarios of mp_coll_teardown that match
#   build/tests/mp_coll_teardown --list             a test's scenarios
#
# JACCL_TEST_SAN=1 (set by `make test-asan`) stretches the timeouts: sanitized code is slower;
# JACCL_TEST_SLOW=N stretches them N times (tests/rdma/suite.sh: soft-RoCE in an emulated VM);
# JACCL_TEST_JOBS=N runs N tests at a time; JACCL_TEST_VERBOSE=0 prints only the TAP lines.
set -u
export LD_LIBRARY_PATH=${BUILD:-build}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Loopback, and a short liveness deadline (mp_suites) so the peer-death tests finish quickly.
export NCCL_JACCL_SOCKET_IFNAME=${NCCL_JACCL_SOCKET_IFNAME:-lo}
export JACCL_TEST_VERBOSE=${JACCL_TEST_VERBOSE:-1}
# shellcheck source=tests/suites.sh
. "$(dirname "$0")/suites.sh"
mp_suites coll 300 "$@" # seconds per test (JACCL_TEST_SAN=1: x3)
suites_run

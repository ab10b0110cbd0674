#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs the multi-process CollNet tests ($BUILD/tests/mp_coll_*) against the plugin in $BUILD,
# loaded the way NCCL loads it (by name, through LD_LIBRARY_PATH), and ends with one
# "N passed, M failed" line. Exit status 0 only if every test passed.
#
#   BUILD=build tests/run_coll.sh               every test
#   BUILD=build tests/run_coll.sh basic fail    only mp_coll_basic and mp_coll_fail
#   BUILD=build tests/run_coll.sh basic:0,1,5   scenarios 0, 1 and 5 of mp_coll_basic
#
# JACCL_TEST_SAN=1 (set by `make test-asan`) stretches the timeouts: sanitized code is slower;
# JACCL_TEST_SLOW=N stretches them N times (tests/rdma/suite.sh: soft-RoCE in an emulated VM).
set -u

# shellcheck disable=SC2034 # kind and limit are read by mp_run_list.sh
kind=coll
limit=300 # seconds per test (JACCL_TEST_SAN=1: x3)
# shellcheck source=tests/mp_run_list.sh
. "$(dirname "$0")/mp_run_list.sh"

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs the multi-process point-to-point tests ($BUILD/tests/mp_p2p_*) against the plugin in
# $BUILD, loaded the way NCCL loads it (by name, through LD_LIBRARY_PATH), and ends with one
# "N passed, M failed" line. Exit status 0 only if every test passed.
#
#   BUILD=build tests/run_p2p.sh              every test
#   BUILD=build tests/run_p2p.sh basic regmr  only mp_p2p_basic and mp_p2p_regmr
#
# JACCL_TEST_SAN=1 (set by `make test-asan`) stretches the timeouts: sanitized code is slower;
# JACCL_TEST_SLOW=N stretches them N times (tests/rdma/suite.sh: soft-RoCE in an emulated VM).
set -u

# shellcheck disable=SC2034 # kind and limit are read by mp_run_list.sh
kind=p2p
limit=150 # seconds per test (JACCL_TEST_SAN=1: x3)
# shellcheck source=tests/mp_run_list.sh
. "$(dirname "$0")/mp_run_list.sh"

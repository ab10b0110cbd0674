/* SPDX-License-Identifier: BSD-3-Clause */
/* The ABI versions the library exports, newest first: the one list. abi/tables.c defines a net
 * and a CollNet table for each (and fails to compile when one is missing), the build writes the
 * linker's export list from it (plugin/exports.map.in), tests/check_exports.sh and the tests'
 * version loops read it. Adding v13: X(13) here, include/nccl_abi/net_v13.h, its shims and its
 * two tables (docs/style.md). */
#ifndef JACCL_ABI_VERSIONS_H
#define JACCL_ABI_VERSIONS_H

#define JACCL_ABI_VERSIONS(X) X(12) X(11) X(10) X(9) X(8)
#define JACCL_ABI_NEWEST      12
#define JACCL_ABI_OLDEST      8
/* The tuner tables (abi/tuner.c), newest first: NCCL 2.30 takes v6, 2.28 v5. */
#define JACCL_TUNER_VERSIONS(X) X(6) X(5)
/* The first version whose init takes a per-communicator context and config. */
#define JACCL_ABI_CTX 11

#endif

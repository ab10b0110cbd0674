/* SPDX-License-Identifier: BSD-3-Clause */
/* The multi-process test harness: everything a tests/mp/X.c or tools/X.c needs.
 *
 * Tests reach the plugin only the way NCCL does: dlopen("jaccl"), then the versioned table
 * (mp_net.h). Ranks are forked processes that share one anonymous region for handles, flags
 * and a barrier (mp_proc.h); each runs under alarm() so a hang fails instead of stalling CI. */
#ifndef MP_MP_H
#define MP_MP_H

#include "common/mp_check.h"
#include "common/mp_data.h"
#include "common/mp_flow.h"
#include "common/mp_link.h"
#include "common/mp_log.h"
#include "common/mp_net.h"
#include "common/mp_proc.h"
#include "common/mp_util.h"

#endif

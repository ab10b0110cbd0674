/* SPDX-License-Identifier: BSD-3-Clause */
/* The multi-process test harness: everything a tests/mp/X.c or tools/X.c needs.
 *
 * Tests reach the plugin only the way NCCL does: dlopen("jaccl"), then the versioned table
 * (mp_net.h). Ranks are forked processes that share one anonymous region for handles, flags
 * and a barrier (mp_proc.h); each runs under alarm() so a hang fails instead of stalling CI. */
#ifndef MP_MP_H
#define MP_MP_H

#include "mp_check.h"
#include "mp_closes.h"
#include "mp_data.h"
#include "mp_flow.h"
#include "mp_link.h"
#include "mp_log.h"
#include "mp_net.h"
#include "mp_proc.h"
#include "mp_util.h"

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* The one export besides the ABI tables: the debug counters (util/counters.h), for jaccl's own
 * tools, found with dlsym like the tables. NCCL never calls it; the jaccl_ prefix keeps it clear
 * of NCCL's and other plugins' names. */
#include <stdint.h>

#include "util/counters.h"

__attribute__((visibility("default"))) int jaccl_debug_counters(uint64_t *vals, const char **names,
                                                                int max);

/* Copies up to max counters (and their names, if names is not NULL); returns how many exist.
 * All zero unless NCCL_JACCL_DEBUG_COUNTERS=1. */
int jaccl_debug_counters(uint64_t *vals, const char **names, int max)
{
    return jaccl_counters_read(vals, names, max);
}

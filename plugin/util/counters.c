/* SPDX-License-Identifier: BSD-3-Clause */
/* The debug counters (see counters.h). */
#include "util/counters.h"
#include "util/param.h"

int jaccl_counters_on;
_Atomic uint64_t jaccl_counters[JC_NUM_COUNTERS];

static const char *const g_names[JC_NUM_COUNTERS] = {
        [JC_SENDMSG] = "sendmsg",           [JC_RECVMSG] = "recvmsg_io",
        [JC_RECVMSG_POLL] = "recvmsg_poll", [JC_EPOLL_WAKE] = "epoll_wake",
        [JC_EVENTFD_WAKE] = "eventfd_wake", [JC_CQ_SIGNAL] = "cq_signal",
        [JC_STAGE_BYTES] = "stage_bytes",   [JC_HANDOFF] = "io_handoff",
};

void jaccl_counters_init(void)
{
    jaccl_counters_on = jaccl_param_int(JP_DEBUG_COUNTERS) != 0;
}

int jaccl_counters_read(uint64_t *vals, const char **names, int max)
{
    for (int i = 0; i < max && i < JC_NUM_COUNTERS; i++) {
        if (vals)
            vals[i] = atomic_load_explicit(&jaccl_counters[i], memory_order_relaxed);
        if (names)
            names[i] = g_names[i];
    }
    return JC_NUM_COUNTERS;
}

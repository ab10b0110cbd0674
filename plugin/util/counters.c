/* SPDX-License-Identifier: BSD-3-Clause */
/* The debug counters (see counters.h). */
#include "util/counters.h"
#include "util/param.h"

int jaccl_counters_on;
_Atomic uint64_t jaccl_counters[JACCL_CNT_NUM];

static const char *const g_names[JACCL_CNT_NUM] = {
        [JACCL_CNT_SENDMSG] = "sendmsg",           [JACCL_CNT_RECVMSG] = "recvmsg_io",
        [JACCL_CNT_RECVMSG_POLL] = "recvmsg_poll", [JACCL_CNT_EPOLL_WAKE] = "epoll_wake",
        [JACCL_CNT_EVENTFD_WAKE] = "eventfd_wake", [JACCL_CNT_CQ_SIGNAL] = "cq_signal",
        [JACCL_CNT_STAGE_BYTES] = "stage_bytes",   [JACCL_CNT_HANDOFF] = "io_handoff",
};

void jaccl_counters_init(void)
{
    jaccl_counters_on = jaccl_param_int(JP_DEBUG_COUNTERS) != 0;
}

int jaccl_counters_read(uint64_t *vals, const char **names, int max)
{
    for (int i = 0; i < max && i < JACCL_CNT_NUM; i++) {
        if (vals)
            vals[i] = atomic_load_explicit(&jaccl_counters[i], memory_order_relaxed);
        if (names)
            names[i] = g_names[i];
    }
    return JACCL_CNT_NUM;
}

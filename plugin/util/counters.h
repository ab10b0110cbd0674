/* SPDX-License-Identifier: BSD-3-Clause */
/* Debug counters of the data path: system calls, wake-ups and staging copies, process-wide.
 * Off unless NCCL_JACCL_DEBUG_COUNTERS=1: then each event costs one relaxed atomic add (the
 * counters are read by tools, e.g. jaccl-perf's "# syscalls/msg" line, never by the plugin). */
#ifndef JACCL_UTIL_COUNTERS_H
#define JACCL_UTIL_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

enum jaccl_counter {
    JACCL_CNT_SENDMSG,      /* sendmsg()/writev() on a data socket */
    JACCL_CNT_RECVMSG,      /* recvmsg()/read() on a data socket, by the I/O thread */
    JACCL_CNT_RECVMSG_POLL, /* the same, by a thread polling a CQ (inline progress) */
    JACCL_CNT_EPOLL_WAKE,   /* epoll_wait() returns of a progress thread */
    JACCL_CNT_EVENTFD_WAKE, /* eventfd writes that wake a progress thread */
    JACCL_CNT_CQ_SIGNAL,    /* condition-variable broadcasts to cq_wait sleepers */
    JACCL_CNT_STAGE_BYTES,  /* payload bytes copied out of a receive staging buffer */
    JACCL_CNT_HANDOFF,      /* an I/O thread switched between reading and leaving it to pollers */
    JACCL_CNT_NUM
};

extern int jaccl_counters_on;
extern _Atomic uint64_t jaccl_counters[JACCL_CNT_NUM];

/* Reads NCCL_JACCL_DEBUG_COUNTERS once; called before the fabric starts. */
void jaccl_counters_init(void);
/* Copies up to max counters and their names; returns how many there are. */
int jaccl_counters_read(uint64_t *vals, const char **names, int max);

static inline void jaccl_count(enum jaccl_counter c, uint64_t n)
{
    if (jaccl_counters_on)
        atomic_fetch_add_explicit(&jaccl_counters[c], n, memory_order_relaxed);
}

#endif

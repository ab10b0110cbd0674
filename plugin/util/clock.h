/* SPDX-License-Identifier: BSD-3-Clause */
/* One monotonic clock for every deadline in the plugin. Tests inject their own clock to drive
 * timeouts without sleeping (gpudirecttcpx's stuck-request idea). */
#ifndef JACCL_UTIL_CLOCK_H
#define JACCL_UTIL_CLOCK_H

#include <stdint.h>

typedef uint64_t (*jaccl_clock_fn)(void);

/* Nanoseconds from CLOCK_MONOTONIC unless a test clock is installed. */
uint64_t jaccl_now_ns(void);
/* CLOCK_MONOTONIC always, for waits on the kernel that a test's frozen clock must not turn
 * into hangs. */
uint64_t jaccl_mono_ns(void);
/* Install a test clock; NULL restores the real one. Not thread-safe: call before any comm. */
void jaccl_clock_set(jaccl_clock_fn fn);

static inline uint64_t jaccl_deadline_ns(uint64_t timeout_ns)
{
    return timeout_ns == 0 ? UINT64_MAX : jaccl_now_ns() + timeout_ns;
}
static inline int jaccl_expired(uint64_t deadline_ns)
{
    return deadline_ns != UINT64_MAX && jaccl_now_ns() >= deadline_ns;
}

/* How long poll()/epoll_wait() may sleep to wake at deadline_ns: 0 once now_ns has reached it,
 * else the milliseconds left rounded up (so the caller never wakes just short of the deadline
 * and spins on a zero timeout), at most cap_ms. With no deadline (UINT64_MAX) it is cap_ms, or
 * -1 (forever) when cap_ms is INT_MAX (no cap). */
int jaccl_poll_ms(uint64_t deadline_ns, uint64_t now_ns, int cap_ms);

#endif

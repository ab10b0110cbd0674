/* SPDX-License-Identifier: BSD-3-Clause */
/* The plugin's single time source. The override is an atomic pointer so that a test can swap
 * clocks without a data race even if a stray thread is still reading the time. */
#include "util/clock.h"

#include <limits.h>
#include <stdatomic.h>
#include <time.h>

static _Atomic(jaccl_clock_fn) g_test_clock;

void jaccl_clock_set(jaccl_clock_fn fn)
{
    atomic_store_explicit(&g_test_clock, fn, memory_order_release);
}

uint64_t jaccl_mono_ns(void)
{
    struct timespec ts;
    /* CLOCK_MONOTONIC: deadlines must not jump when NTP or an admin changes the wall clock. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t jaccl_now_ns(void)
{
    jaccl_clock_fn fn = atomic_load_explicit(&g_test_clock, memory_order_acquire);
    return fn != NULL ? fn() : jaccl_mono_ns();
}

int jaccl_poll_ms(uint64_t deadline_ns, uint64_t now_ns, int cap_ms)
{
    uint64_t left, ms;

    if (deadline_ns == UINT64_MAX)
        return cap_ms == INT_MAX ? -1 : cap_ms; /* no timer: the cap alone, if there is one */
    if (now_ns >= deadline_ns)
        return 0;
    left = deadline_ns - now_ns;
    ms = left / 1000000 + (left % 1000000 != 0);
    return ms > (uint64_t)cap_ms ? cap_ms : (int)ms;
}

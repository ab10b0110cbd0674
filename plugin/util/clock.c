/* The plugin's single time source. The override is an atomic pointer so that a test can swap
 * clocks without a data race even if a stray thread is still reading the time. */
#include "util/clock.h"

#include <stdatomic.h>
#include <time.h>

static _Atomic(jaccl_clock_fn) g_test_clock;

void jaccl_clock_set(jaccl_clock_fn fn)
{
    atomic_store_explicit(&g_test_clock, fn, memory_order_release);
}

uint64_t jaccl_now_ns(void)
{
    jaccl_clock_fn fn = atomic_load_explicit(&g_test_clock, memory_order_acquire);
    if (fn != NULL)
        return fn();
    struct timespec ts;
    /* CLOCK_MONOTONIC: deadlines must not jump when NTP or an admin changes the wall clock. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

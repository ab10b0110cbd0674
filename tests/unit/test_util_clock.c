/* SPDX-License-Identifier: BSD-3-Clause */
/* Monotonic clock and the test-clock override used to drive deadlines without sleeping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "util/clock.h"

static uint64_t g_fake_ns;

static uint64_t fake_clock(void)
{
    return g_fake_ns;
}

static int teardown(void **state)
{
    jaccl_clock_set(NULL);
    return 0;
}

static void test_real_clock_monotonic(void **state)
{
    uint64_t a = jaccl_now_ns();
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    uint64_t b = jaccl_now_ns();
    assert_true(a > 0);
    assert_true(b >= a + 2000000);
    assert_true(b - a < 5000000000ull); /* sanity: nanoseconds, not something coarser */
}

static void test_injected_clock(void **state)
{
    g_fake_ns = 1000;
    jaccl_clock_set(fake_clock);
    assert_int_equal(jaccl_now_ns(), 1000);
    g_fake_ns = 5000;
    assert_int_equal(jaccl_now_ns(), 5000);
}

static void test_deadline_with_injected_clock(void **state)
{
    g_fake_ns = 1000000;
    jaccl_clock_set(fake_clock);
    uint64_t d = jaccl_deadline_ns(500);
    assert_int_equal(d, 1000500);
    assert_false(jaccl_expired(d));
    g_fake_ns = 1000499;
    assert_false(jaccl_expired(d));
    g_fake_ns = 1000500;
    assert_true(jaccl_expired(d));
}

static void test_zero_timeout_never_expires(void **state)
{
    g_fake_ns = 1;
    jaccl_clock_set(fake_clock);
    uint64_t d = jaccl_deadline_ns(0);
    assert_true(d == UINT64_MAX);
    g_fake_ns = UINT64_MAX - 1;
    assert_false(jaccl_expired(d));
}

static void test_restore_real_clock(void **state)
{
    g_fake_ns = 7;
    jaccl_clock_set(fake_clock);
    assert_int_equal(jaccl_now_ns(), 7);
    jaccl_clock_set(NULL);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t mono = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    uint64_t now = jaccl_now_ns();
    assert_true(now >= mono && now - mono < 1000000000ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(test_real_clock_monotonic, teardown),
            cmocka_unit_test_teardown(test_injected_clock, teardown),
            cmocka_unit_test_teardown(test_deadline_with_injected_clock, teardown),
            cmocka_unit_test_teardown(test_zero_timeout_never_expires, teardown),
            cmocka_unit_test_teardown(test_restore_real_clock, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

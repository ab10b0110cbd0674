/* SPDX-License-Identifier: BSD-3-Clause */
/* Who reads an endpoint's sockets on a crowded machine (util/crowd.h): the pollers whenever the
 * machine is not crowded; when it is, only where this host's own CollNet ranks are the crowd
 * (at most two per usable CPU) and no large message landed lately. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "util/crowd.h"

static void test_uncrowded_pollers_own(void **state)
{
    jaccl_cpu_crowd_force(0);
    assert_true(jaccl_cpu_poller_owns(0, 0));
    assert_true(jaccl_cpu_poller_owns(0, 1)); /* large messages too */
    assert_true(jaccl_cpu_poller_owns(1000000, 0));
}

static void test_crowded_unknown_ranks(void **state)
{
    jaccl_cpu_crowd_force(1);
    /* no CollNet comm: the crowd may be anyone's */
    assert_false(jaccl_cpu_poller_owns(0, 0));
    assert_false(jaccl_cpu_poller_owns(-3, 0));
}

static void test_crowded_own_ranks_fit(void **state)
{
    int cpus = jaccl_cpus_usable();

    jaccl_cpu_crowd_force(1);
    /* two per CPU: each poller is back within a yield */
    assert_true(jaccl_cpu_poller_owns(2 * cpus, 0));
    assert_false(
            jaccl_cpu_poller_owns(2 * cpus, 1)); /* a large message keeps the I/O thread reading */
    assert_true(jaccl_cpu_poller_owns(1, 0));
}

static void test_crowded_too_many_ranks(void **state)
{
    jaccl_cpu_crowd_force(1);
    assert_false(jaccl_cpu_poller_owns(2 * jaccl_cpus_usable() + 1, 0));
    assert_false(jaccl_cpu_poller_owns(2 * jaccl_cpus_usable() + 1, 1));
}

static int teardown(void **state)
{
    jaccl_cpu_crowd_force(-1);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_uncrowded_pollers_own),
            cmocka_unit_test(test_crowded_unknown_ranks),
            cmocka_unit_test(test_crowded_own_ranks_fit),
            cmocka_unit_test(test_crowded_too_many_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}

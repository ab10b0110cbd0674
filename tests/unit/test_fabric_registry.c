/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabric registry (fabric/fabric.c) through fabric.h only: the trial order (verbs, then the
 * tcp fallback), the reason it records for every back end not used, NCCL_JACCL_FABRIC naming
 * one, the fallback INFO / WARN, shutdown and a second select, and the slots the core asks the
 * chosen back end for (handle id, side-channel address, p2p lanes). Fake verbs devices (this
 * machine has no RDMA device); the TCP fabric on lo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fabric/fabric.h"
#include "util/log.h"
#include "util/param.h"
#include "util/sock.h"
#include "verbs_fake.h"

#define MAX_LINES 64

static struct {
    int n, warns;
    char line[MAX_LINES][512];
    int level[MAX_LINES];
} g_log;

static void fake_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...)
{
    va_list ap;

    if (g_log.n >= MAX_LINES)
        return;
    va_start(ap, fmt);
    vsnprintf(g_log.line[g_log.n], sizeof(g_log.line[0]), fmt, ap);
    va_end(ap);
    g_log.level[g_log.n++] = level;
    g_log.warns += level == NCCL_LOG_WARN;
}

/* Index of the one log line containing `needle`, at `level`; fails when none or several. */
static int expect_line(ncclDebugLogLevel level, const char *needle)
{
    int found = -1;

    for (int i = 0; i < g_log.n; i++) {
        if (strstr(g_log.line[i], needle) == NULL)
            continue;
        if (found >= 0)
            fail_msg("two log lines contain \"%s\"", needle);
        assert_int_equal(g_log.level[i], level);
        found = i;
    }
    if (found < 0)
        fail_msg("no log line contains \"%s\"", needle);
    return found;
}

static int setup(void **st)
{
    memset(&g_log, 0, sizeof(g_log));
    jaccl_log_set(fake_logger);
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 1);
    unsetenv("NCCL_JACCL_FABRIC");
    fk_reset();
    vb_ibv_set(&fk_lib);
    jaccl_param_reset();
    return 0;
}

static int teardown(void **st)
{
    fab_shutdown();
    vb_ibv_set(NULL);
    jaccl_log_set(NULL);
    unsetenv("NCCL_JACCL_FABRIC");
    unsetenv("NCCL_JACCL_NSOCKS");
    unsetenv("NCCL_JACCL_QPS_PER_CONN");
    jaccl_param_reset();
    return 0;
}

/* The index of the back end called `name` in the registry's order. */
static int backend_index(const char *name)
{
    for (int i = 0; i < fab_backend_count(); i++)
        if (strcmp(fab_backend(i)->name, name) == 0)
            return i;
    fail_msg("no back end %s", name);
    return -1;
}

static void assert_why_not(const char *name, const char *want)
{
    const char *why = fab_backend_why_not(backend_index(name));

    if (want == NULL) {
        assert_null(why);
        return;
    }
    assert_non_null(why);
    assert_string_equal(why, want);
}

static void setfabric(const char *v)
{
    setenv("NCCL_JACCL_FABRIC", v, 1);
    jaccl_param_reset();
}

/* Runs first: nothing was selected yet, so no reasons; the order itself. */
static void test_order_before_select(void **st)
{
    assert_int_equal(fab_backend_count(), 2);
    assert_string_equal(fab_backend(0)->name, "verbs");
    assert_string_equal(fab_backend(1)->name, "tcp");
    assert_null(fab_backend(2));
    assert_null(fab_backend(-1));
    assert_null(fab_chosen());
    assert_string_equal(fab_why(), "init() was not called");
    for (int i = 0; i < fab_backend_count(); i++)
        assert_null(fab_backend_why_not(i));
}

/* No RDMA device: verbs is tried first, passed over with its reason and an INFO, then tcp. */
static void test_auto_no_rdma(void **st)
{
    const struct fab_ops *ops = NULL;
    int n = fab_select(&ops);

    assert_true(n >= 1); /* lo */
    assert_non_null(ops);
    assert_ptr_equal(ops, fab_chosen());
    assert_string_equal(ops->name, "tcp");
    assert_string_equal(fab_why(), "auto: no RDMA device");
    assert_why_not("verbs", "no RDMA device");
    assert_why_not("tcp", NULL);
    /* verbs was tried before tcp: its fallback line comes before tcp's device list */
    int fallback = expect_line(NCCL_LOG_INFO,
                               "verbs fabric not used (no RDMA device): falling back to tcp");
    assert_true(fallback < expect_line(NCCL_LOG_INFO, "TCP fabric: "));
    assert_int_equal(g_log.warns, 0);
}

/* RDMA devices present, none usable: the same fallback, but a WARN naming the count. */
static void test_auto_unusable_rdma_warns(void **st)
{
    const struct fab_ops *ops = NULL;

    fk_add_dev("mlx5_0", 1)->port[0].state = IBV_PORT_DOWN;
    fk_add_dev("mlx5_1", 1)->port[0].state = IBV_PORT_DOWN;
    assert_true(fab_select(&ops) >= 1);
    assert_string_equal(ops->name, "tcp");
    assert_string_equal(fab_why(), "auto: no RDMA port is active");
    assert_why_not("verbs", "no RDMA port is active");
    int w = expect_line(NCCL_LOG_WARN, "2 RDMA device(s) present but none is usable");
    assert_non_null(strstr(g_log.line[w], "(no RDMA port is active): falling back to the tcp "
                                          "fabric"));
    assert_non_null(strstr(g_log.line[w], "NCCL_JACCL_FABRIC=tcp silences this"));
    assert_int_equal(g_log.warns, 1);
}

/* A usable port: verbs wins, tcp is never opened and says why. */
static void test_auto_verbs_first(void **st)
{
    const struct fab_ops *ops = NULL;

    fk_add_dev("rxe0", 1);
    assert_int_equal(fab_select(&ops), 1);
    assert_string_equal(ops->name, "verbs");
    assert_string_equal(fab_why(), "auto: a usable RDMA port was found");
    assert_why_not("verbs", NULL);
    assert_why_not("tcp", "not tried: verbs came first and was usable");
    assert_int_equal(fab_backend(backend_index("tcp"))->ndevs(), 0);
    assert_int_equal(g_log.warns, 0);
}

/* NCCL_JACCL_FABRIC=tcp: verbs is not even tried, although it would be usable. */
static void test_knob_tcp(void **st)
{
    const struct fab_ops *ops = NULL;

    fk_add_dev("rxe0", 1);
    setfabric("tcp");
    assert_true(fab_select(&ops) >= 1);
    assert_string_equal(ops->name, "tcp");
    assert_string_equal(fab_why(), "NCCL_JACCL_FABRIC=tcp");
    assert_why_not("verbs", "not tried: NCCL_JACCL_FABRIC=tcp");
    assert_why_not("tcp", NULL);
    assert_int_equal(fab_backend(backend_index("verbs"))->ndevs(), 0);
    for (int i = 0; i < g_log.n; i++) /* an init of verbs would list its device */
        assert_null(strstr(g_log.line[i], "verbs fabric"));
}

/* NCCL_JACCL_FABRIC=verbs: taken when usable; without a device a WARN and -ENODEV, and tcp is
 * not the fallback then. */
static void test_knob_verbs(void **st)
{
    static const struct fab_ops stale;
    const struct fab_ops *ops = NULL;

    fk_add_dev("rxe0", 1);
    setfabric("verbs");
    assert_int_equal(fab_select(&ops), 1);
    assert_string_equal(ops->name, "verbs");
    assert_string_equal(fab_why(), "NCCL_JACCL_FABRIC=verbs");
    assert_why_not("tcp", "not tried: NCCL_JACCL_FABRIC=verbs");
    fab_shutdown();

    fk_reset();
    ops = &stale; /* a failed select must clear it */
    assert_int_equal(fab_select(&ops), -ENODEV);
    assert_null(ops);
    assert_null(fab_chosen());
    assert_string_equal(fab_why(), "NCCL_JACCL_FABRIC=verbs, but no RDMA device");
    assert_why_not("verbs", "no RDMA device");
    assert_why_not("tcp", "not tried: NCCL_JACCL_FABRIC=verbs");
    assert_int_equal(fab_backend(backend_index("tcp"))->ndevs(), 0);
    expect_line(NCCL_LOG_WARN, "NCCL_JACCL_FABRIC=verbs, but no RDMA device");
    assert_int_equal(g_log.warns, 1);
}

/* Shutdown closes the chosen back end but keeps the reasons; a second select starts afresh. */
static void test_shutdown_reselect(void **st)
{
    const struct fab_ops *ops = NULL, *verbs = fab_backend(backend_index("verbs"));

    fk_add_dev("rxe0", 1);
    assert_int_equal(fab_select(&ops), 1);
    assert_ptr_equal(ops, verbs);
    fab_shutdown();
    assert_null(fab_chosen());
    assert_int_equal(verbs->ndevs(), 0);
    assert_string_equal(fab_why(), "auto: a usable RDMA port was found");
    assert_why_not("tcp", "not tried: verbs came first and was usable");
    fab_shutdown(); /* nothing open: a no-op */

    fk_reset(); /* the RDMA device went away */
    assert_true(fab_select(&ops) >= 1);
    assert_string_equal(ops->name, "tcp");
    assert_string_equal(fab_why(), "auto: no RDMA device");
    assert_why_not("verbs", "no RDMA device");
    assert_why_not("tcp", NULL);

    /* selecting again with one open closes it first: the old one does not leak */
    fk_add_dev("rxe0", 1);
    assert_int_equal(fab_select(&ops), 1);
    assert_ptr_equal(ops, verbs);
    assert_int_equal(fab_backend(backend_index("tcp"))->ndevs(), 0);
}

/* auto with no interface for tcp either: tcp, the fallback, is still taken, with no device. */
static void test_fallback_taken_without_devices(void **st)
{
    const struct fab_ops *ops = NULL;

    setenv("NCCL_JACCL_SOCKET_IFNAME", "=jaccl-no-such-if0", 1);
    jaccl_param_reset();
    assert_int_equal(fab_select(&ops), 0);
    assert_non_null(ops);
    assert_string_equal(ops->name, "tcp");
    assert_non_null(strstr(ops->why_unavailable(), "no usable IP interface"));
    assert_why_not("verbs", "no RDMA device");
    assert_why_not("tcp", NULL);
}

/* The slots the core reads instead of naming a back end. */
static void test_slots(void **st)
{
    const struct fab_ops *tcp = fab_backend(backend_index("tcp"));
    const struct fab_ops *verbs = fab_backend(backend_index("verbs"));
    const struct fab_ops *ops = NULL;
    struct jaccl_link a;
    char s[80];

    assert_int_equal(tcp->handle_id, 1); /* wire values */
    assert_int_equal(verbs->handle_id, 2);
    setenv("NCCL_JACCL_NSOCKS", "3", 1);
    setenv("NCCL_JACCL_QPS_PER_CONN", "5", 1);
    jaccl_param_reset();
    assert_int_equal(tcp->p2p_lanes(), 3);
    assert_int_equal(verbs->p2p_lanes(), 5);

    assert_true(fab_select(&ops) >= 1);
    assert_ptr_equal(ops, tcp);
    assert_int_equal(ops->dev_link(0, &a), 0);
    jaccl_sockaddr_str(&a.addr, s, sizeof(s));
    assert_string_equal(s, "127.0.0.1:0");
    assert_int_equal(a.prefix, 8);
    assert_int_equal(ops->dev_link(ops->ndevs(), &a), -EINVAL);
    assert_null(ops->why_unavailable());
    fab_shutdown();

    fk_add_dev("rxe0", 1); /* GID 1 is ::ffff:10.0.0.1 */
    assert_int_equal(fab_select(&ops), 1);
    assert_ptr_equal(ops, verbs);
    assert_int_equal(ops->dev_link(0, &a), 0);
    jaccl_sockaddr_str(&a.addr, s, sizeof(s));
    assert_string_equal(s, "10.0.0.1:0");
    assert_int_equal(ops->dev_link(1, &a), -EINVAL);
    assert_null(ops->why_unavailable());
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
            T(test_order_before_select),
            T(test_auto_no_rdma),
            T(test_auto_unusable_rdma_warns),
            T(test_auto_verbs_first),
            T(test_knob_tcp),
            T(test_knob_verbs),
            T(test_shutdown_reselect),
            T(test_fallback_taken_without_devices),
            T(test_slots),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The log lines that prove jaccl is in use: the INIT line (release, fabric and why, devices),
 * that buffers are host memory, whether CollNet is offered or disabled and why; the fallback to
 * TCP is a WARN when RDMA devices exist but none is usable and an INFO when there are none.
 * Fake verbs devices; the TCP fabric on lo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/api.h"
#include "core/version.h"
#include "util/log.h"
#include "util/param.h"
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

/* The one line containing `needle`, at `level`; fails when there is none or more than one. */
static const char *expect_line(ncclDebugLogLevel level, const char *needle)
{
    const char *found = NULL;
    for (int i = 0; i < g_log.n; i++) {
        if (strstr(g_log.line[i], needle) == NULL)
            continue;
        assert_null(found);
        assert_int_equal(g_log.level[i], level);
        found = g_log.line[i];
    }
    if (found == NULL)
        fail_msg("no log line contains \"%s\"", needle);
    return found;
}

static int setup(void **state)
{
    memset(&g_log, 0, sizeof(g_log));
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 1);
    unsetenv("NCCL_JACCL_FABRIC");
    unsetenv("NCCL_JACCL_COLL_ENABLE");
    unsetenv("NCCL_COLLNET_ENABLE");
    fk_reset();
    vb_ibv_set(&fk_lib);
    jaccl_param_reset();
    return 0;
}

static int teardown(void **state)
{
    vb_ibv_set(NULL);
    jaccl_log_set(NULL);
    return 0;
}

static void init_fini(void)
{
    void *ctx = NULL;
    assert_int_equal(jaccl_init(&ctx, 1, NULL, fake_logger, NULL), ncclSuccess);
    assert_int_equal(jaccl_finalize(ctx), ncclSuccess);
}

static void test_tcp_machine(void **state)
{
    init_fini();
    const char *l = expect_line(NCCL_LOG_INFO, "fabric tcp (auto: no RDMA device)");
    assert_non_null(strstr(l, "NET/JACCL : jaccl " JACCL_VERSION_STR ", fabric tcp"));
    assert_non_null(strstr(l, "[0]lo"));
    expect_line(NCCL_LOG_INFO, "verbs fabric not used (no RDMA device): falling back to tcp");
    expect_line(NCCL_LOG_INFO, "buffers are host memory only");
    l = expect_line(NCCL_LOG_INFO, "CollNet offered");
    assert_non_null(strstr(l, "NCCL_COLLNET_ENABLE=1, which is not set here"));
    assert_int_equal(g_log.warns, 0);
}

static void test_unusable_rdma_warns(void **state)
{
    fk_add_dev("mlx5_0", 1)->port[0].state = IBV_PORT_DOWN;
    setenv("NCCL_COLLNET_ENABLE", "1", 1);
    init_fini();
    const char *w = expect_line(NCCL_LOG_WARN, "RDMA device(s) present but none is usable");
    assert_non_null(strstr(w, "1 RDMA device(s)"));
    assert_non_null(strstr(w, "no RDMA port is active"));
    assert_non_null(strstr(w, "falling back to the tcp fabric"));
    expect_line(NCCL_LOG_INFO, "fabric tcp (auto: no RDMA port is active)");
    const char *l = expect_line(NCCL_LOG_INFO, "CollNet offered");
    assert_null(strstr(l, "not set here"));
    assert_int_equal(g_log.warns, 1);
}

static void test_verbs_chosen_and_collnet_off(void **state)
{
    fk_add_dev("rxe0", 1);
    setenv("NCCL_JACCL_COLL_ENABLE", "0", 1);
    init_fini();
    expect_line(NCCL_LOG_INFO, "fabric verbs (auto: a usable RDMA port was found), 1 device(s): "
                               "[0]rxe0:1");
    expect_line(NCCL_LOG_INFO, "CollNet disabled (NCCL_JACCL_COLL_ENABLE=0)");
    setenv("NCCL_JACCL_FABRIC", "tcp", 1);
    memset(&g_log, 0, sizeof(g_log));
    init_fini();
    expect_line(NCCL_LOG_INFO, "fabric tcp (NCCL_JACCL_FABRIC=tcp)");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
            T(test_tcp_machine),
            T(test_unusable_rdma_warns),
            T(test_verbs_chosen_and_collnet_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

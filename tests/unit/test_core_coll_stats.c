/* SPDX-License-Identifier: BSD-3-Clause */
/* closeColl's INFO line counts the operations and bytes that went through CollNet: a one-rank
 * CollNet comm (the local algorithm) over the TCP fabric on lo, in one process. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/api.h"
#include "util/log.h"
#include "util/param.h"

static char g_stats[512];
static int g_nstats;

static void fake_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (level == NCCL_LOG_INFO && strstr(msg, "CollNet closeColl: ")) {
        snprintf(g_stats, sizeof(g_stats), "%s", msg);
        g_nstats++;
    }
}

/* Waits (30 s at most) for a CollNet request; returns its result. */
static ncclResult_t wait_coll(void *req)
{
    int done = 0, size = 0;
    ncclResult_t rc = ncclSuccess;
    time_t end = time(NULL) + 30;
    while (!done && rc == ncclSuccess && time(NULL) < end) {
        rc = jaccl_coll_test(req, &done, &size);
        if (!done)
            sched_yield();
    }
    assert_true(done || rc != ncclSuccess);
    return rc;
}

static void test_close_counts(void **state)
{
    enum { N = 1024 };
    static float in[N], out[N];
    void *ctx = NULL, *lc = NULL, *cc = NULL, *mh_in = NULL, *mh_out = NULL;
    char handle[128];
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 1);
    jaccl_param_reset();
    assert_int_equal(jaccl_coll_init(&ctx, 3, fake_logger), ncclSuccess);
    assert_int_equal(jaccl_coll_listen(ctx, 0, handle, &lc), ncclSuccess);
    void *handles[1] = {handle};
    assert_int_equal(jaccl_coll_connect(handles, 1, 0, lc, &cc), ncclSuccess);
    assert_non_null(cc);
    assert_int_equal(jaccl_reg_mr(cc, in, sizeof(in), JACCL_MEM_HOST, &mh_in), ncclSuccess);
    assert_int_equal(jaccl_reg_mr(cc, out, sizeof(out), JACCL_MEM_HOST, &mh_out), ncclSuccess);
    for (int i = 0; i < 3; i++) {
        void *req = NULL;
        while (req == NULL)
            assert_int_equal(jaccl_coll_iallreduce(cc, in, out, N, ncclFloat32, ncclSum, mh_in,
                                                   mh_out, &req),
                             ncclSuccess);
        assert_int_equal(wait_coll(req), ncclSuccess);
    }
    jaccl_dereg_mr(cc, mh_in);
    jaccl_dereg_mr(cc, mh_out);
    assert_int_equal(jaccl_coll_close(cc), ncclSuccess);
    assert_int_equal(jaccl_coll_close_listen(lc), ncclSuccess);
    assert_int_equal(g_nstats, 1);
    assert_non_null(strstr(g_stats, "rank 0 of 1: 3 operation(s), 12288 byte(s) through "
                                    "CollNet (0 ring, 0 mesh, 0 rhd, 3 local), 0 failed"));
    jaccl_finalize(ctx);
    jaccl_log_set(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_close_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

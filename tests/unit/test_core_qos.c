/* SPDX-License-Identifier: BSD-3-Clause */
/* Traffic class and service level from the NCCL context to the sockets: the trafficClass NCCL
 * passes to init (v11 config) marks every lane of the comms that context listens for and
 * connects, NCCL_JACCL_TC (or NCCL_IB_TC) overrides it, and the resolution rules of
 * jaccl_qos_fill (service level only from a trafficClass that fits in 4 bits). Over the TCP
 * fabric on lo, in one process. */
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "fabric/fabric.h"

#include "core/api.h"
#include "abi/shims.h"
#include "core/p2p.h"
#include "core/state.h"
#include "fabric/tcp/tcp_int.h"
#include "util/clock.h"
#include "util/param.h"

/* Connecting and accepting take as many tries as the handshake needs: bounded by time, not by
 * tries, since on a loaded box the loopback packets may wait for the kernel's softirq thread
 * while a try count runs out. */
#define LINK_NS 30000000000ull

static void clear_env(void)
{
    unsetenv("NCCL_JACCL_TC");
    unsetenv("NCCL_JACCL_SL");
    unsetenv("NCCL_IB_TC");
    unsetenv("NCCL_IB_SL");
    jaccl_param_reset();
}

static int setup(void **state)
{
    clear_env();
    setenv("NCCL_JACCL_SOCKET_IFNAME", "lo", 1);
    setenv("NCCL_JACCL_NSOCKS", "2", 1);
    return 0;
}

static int teardown(void **state)
{
    clear_env();
    return 0;
}

static void expect_fill(int ctx_tc, int tclass, int sl)
{
    struct fab_ep_attr a = {.nlanes = 1};
    jaccl_param_reset();
    jaccl_qos_fill(ctx_tc, &a);
    assert_int_equal(a.tclass, tclass);
    assert_int_equal(a.sl, sl);
}

static void test_fill_rules(void **state)
{
    expect_fill(-1, 0, 0);    /* nothing anywhere: the system default */
    expect_fill(106, 106, 0); /* trafficClass too large for a service level */
    expect_fill(5, 5, 5);
    setenv("NCCL_IB_TC", "40", 1); /* NCCL's variable beats the context */
    setenv("NCCL_IB_SL", "2", 1);
    expect_fill(106, 40, 2);
    setenv("NCCL_JACCL_TC", "0", 1); /* and ours beats NCCL's, even when it says 0 */
    setenv("NCCL_JACCL_SL", "7", 1);
    expect_fill(106, 0, 7);
    assert_int_equal(jaccl_ctx_traffic_class(NULL), -1);
}

static int lane_tos(struct p2p_comm *c, int lane)
{
    int v = -1;
    socklen_t len = sizeof(v);
    assert_int_equal(getsockopt(tcp_ep_of(c->ep)->lane[lane].fd, IPPROTO_IP, IP_TOS, &v, &len), 0);
    return v;
}

/* init with trafficClass = tc, one connection through that context; both ends' lanes carry
 * `want`. */
static void connect_with(int tc, int want)
{
    struct jaccl_comm_config cfg = {.traffic_class = tc};
    void *ctx = NULL, *lc = NULL, *sc = NULL, *rc = NULL;
    char handle[128];
    jaccl_param_reset();
    assert_int_equal(jaccl_init(&ctx, 9, &cfg, NULL, NULL), ncclSuccess);
    assert_int_equal(jaccl_ctx_traffic_class(ctx), tc);
    assert_int_equal(jaccl_listen(ctx, 0, handle, &lc), ncclSuccess);
    for (uint64_t dl = jaccl_mono_ns() + LINK_NS; (!sc || !rc) && jaccl_mono_ns() < dl;
         sched_yield()) {
        if (!sc)
            assert_int_equal(jaccl_connect(ctx, 0, handle, &sc, NULL), ncclSuccess);
        if (!rc)
            assert_int_equal(jaccl_accept(lc, &rc, NULL), ncclSuccess);
    }
    assert_non_null(sc);
    assert_non_null(rc);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(lane_tos(sc, i), want);
        assert_int_equal(lane_tos(rc, i), want);
    }
    jaccl_close_listen(lc);
    jaccl_close_send(sc);
    jaccl_close_recv(rc);
    jaccl_finalize(ctx);
}

static void test_context_marks_sockets(void **state)
{
    connect_with(0x48, 0x48);
    connect_with(NCCL_NET_TRAFFIC_CLASS_UNDEF, 0);
    setenv("NCCL_JACCL_TC", "0x20", 1);
    connect_with(0x48, 0x20);
}

/* v10 gives trafficClass to connect, per connection; the accepting side has none. Runs last:
 * the pre-v11 process-wide context is never finalized. */
static void test_v10_connect_config(void **state)
{
    ncclNetCommConfig_v10_t cfg = {.trafficClass = 0x30};
    void *lc = NULL, *sc = NULL, *rc = NULL;
    char handle[128];
    jaccl_param_reset();
    assert_int_equal(jaccl_v10_init(NULL, NULL), ncclSuccess);
    assert_int_equal(jaccl_v8_listen(0, handle, &lc), ncclSuccess);
    for (uint64_t dl = jaccl_mono_ns() + LINK_NS; (!sc || !rc) && jaccl_mono_ns() < dl;
         sched_yield()) {
        if (!sc)
            assert_int_equal(jaccl_v10_connect(0, &cfg, handle, &sc, NULL), ncclSuccess);
        if (!rc)
            assert_int_equal(jaccl_accept(lc, &rc, NULL), ncclSuccess);
    }
    assert_non_null(sc);
    assert_non_null(rc);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(lane_tos(sc, i), 0x30);
        assert_int_equal(lane_tos(rc, i), 0);
    }
    jaccl_close_listen(lc);
    jaccl_close_send(sc);
    jaccl_close_recv(rc);
}

/* As the fabric's shutdown does: the reaper thread that ended these tests' connections in order
 * is joined (ThreadSanitizer reports a thread that exited unjoined). */
static int reaper_join(void **state)
{
    fab_sock_retire_fini();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_fill_rules, setup, teardown),
            cmocka_unit_test_setup_teardown(test_context_marks_sockets, setup, teardown),
            cmocka_unit_test_setup_teardown(test_v10_connect_config, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, reaper_join);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The fabric contract suite (fab_contract.h) on the verbs back end, whole (progress threads,
 * side channel, reliability protocol), over the loopback fake verbs of verbs_loop.h: two fake
 * queue pairs per lane move the bytes between the endpoints. Once on UC, once on RC. The
 * protocol's own mechanics (segments, gaps, retransmission) are test_verbs_rel.c's, QP set-up
 * test_verbs_qp.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fab_contract.h"
#include "fabric/verbs/verbs.h"
#include "util/param.h"
#include "verbs_loop.h"

static const char *g_qp_type;

/* Not "rxe": a hardware NIC's multi-packet UC segments (soft-RoCE gets single-packet ones). */
static void verbs_setup(void)
{
    lp_reset();
    fk_add_dev("fake0", 1);
    vb_ibv_set(&lp_lib);
    setenv("NCCL_JACCL_QP_TYPE", g_qp_type, 1);
    jaccl_param_reset();
    assert_int_equal(fab_verbs_ops.init(), 1);
}

static void verbs_teardown(void)
{
    fab_verbs_ops.fini();
    vb_ibv_set(NULL);
    unsetenv("NCCL_JACCL_QP_TYPE");
    jaccl_param_reset();
}

static struct fc_harness verbs_harness = {
        .ops = &fab_verbs_ops,
        .dev = 0,
        .sock_pair = fc_tcp_pair, /* the side channel is TCP in production too */
        .setup = verbs_setup,
        .teardown = verbs_teardown,
        .silent_drops = lp_drops,
        .closed_why = "closed the connection (device ",
        .lane0 = "lane 0 (QP",
        .writes_done_when_sent = 0, /* a write completes once the peer acknowledged it */
        .skip =
                {
                        [FC_SEND_IMM] = "a SEND's immediate bits are the back end's own (its "
                                        "sequence numbers and flags, verbs_wire.h): no "
                                        "post_send_imm, its callers send those bits otherwise",
                        [FC_WRITE_OTHER_ENDPOINT] =
                                "verbs scopes a registration per protection domain (one per fabric "
                                "domain), as far as the NIC enforces it (fabric.h, mr_remote): a "
                                "key "
                                "advertised on another endpoint of the target's domain is valid "
                                "there",
                },
};

int main(void)
{
    int failed;

    g_qp_type = "uc";
    verbs_harness.name = "fabric contract: verbs UC (loopback fake verbs)";
    failed = fc_run(&verbs_harness);
    g_qp_type = "rc";
    verbs_harness.name = "fabric contract: verbs RC (loopback fake verbs)";
    failed += fc_run(&verbs_harness);
    fab_sock_retire_fini(); /* the reaper thread that ended the side channels is joined */
    return failed;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Queue-pair set-up over fake verbs: INIT at ep_create (receives posted at once), RTR/RTS at
 * ep_connect with the attribute masks UC and RC each require and the peer's QPN/PSN/GID, the
 * smaller MTU, and the error paths (a transition that fails, a peer blob that does not fit).
 * Runs the real domain (progress thread included) and a socketpair as the side channel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "fab_contract.h"
#include "fabric/verbs/verbs.h"
#include "util/param.h"
#include "verbs_fake.h"

#define UC_INIT (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define UC_RTR  (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define UC_RTS  (IBV_QP_STATE | IBV_QP_SQ_PSN)
#define RC_RTR  (UC_RTR | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RC_RTS \
    (UC_RTS | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)

struct fix {
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *a, *b;
    unsigned char blob_b[FAB_CONN_INFO_MAX];
    int blob_len;
    int peer_fd; /* our end of the side channel stays open: closing it is a peer loss */
};

static struct fix F;
static int g_tclass, g_sl; /* the endpoints' QoS attributes; setup_qos sets them */

static int setup_type(const char *qp_type)
{
    struct fab_ep_attr attr = {.nlanes = 2,
                               .max_send_wr = 8,
                               .max_recv_wr = 8,
                               .liveness_ns = 0,
                               .peer_desc = "peer:1",
                               .tclass = g_tclass,
                               .sl = g_sl};

    fk_reset();
    fk_add_dev("rxe0", 1);
    vb_ibv_set(&fk_lib);
    setenv("NCCL_JACCL_QP_TYPE", qp_type, 1);
    jaccl_param_reset();
    assert_int_equal(fab_verbs_ops.init(), 1);
    assert_int_equal(fab_verbs_ops.domain_open(0, &F.dom), 0);
    assert_int_equal(fab_verbs_ops.cq_create(F.dom, 64, &F.cq), 0);
    assert_int_equal(fab_verbs_ops.ep_create(F.dom, F.cq, &attr, &F.a), 0);
    assert_int_equal(fab_verbs_ops.ep_create(F.dom, F.cq, &attr, &F.b), 0);
    F.blob_len = fab_verbs_ops.ep_local_info(F.b, F.blob_b, sizeof(F.blob_b));
    assert_true(F.blob_len > 0);
    F.peer_fd = -1;
    return 0;
}

static int setup_uc(void **st)
{
    return setup_type("uc");
}

static int setup_rc(void **st)
{
    return setup_type("rc");
}

static int setup_qos(void **st)
{
    g_tclass = 106; /* DSCP 26, ECN capable */
    g_sl = 3;
    return setup_type("uc");
}

static int teardown(void **st)
{
    fab_verbs_ops.ep_close(F.a);
    fab_verbs_ops.ep_close(F.b);
    if (F.peer_fd >= 0)
        close(F.peer_fd);
    fab_verbs_ops.cq_destroy(F.cq);
    fab_verbs_ops.domain_close(F.dom);
    fab_verbs_ops.fini();
    vb_ibv_set(NULL);
    unsetenv("NCCL_JACCL_QP_TYPE");
    jaccl_param_reset();
    g_tclass = g_sl = 0;
    return 0;
}

static const struct fk_modify *find_mod(uint32_t qpn, enum ibv_qp_state st)
{
    for (int i = 0; i < fk_nmod; i++)
        if (fk_mod[i].qpn == qpn && fk_mod[i].state == st)
            return &fk_mod[i];
    return NULL;
}

static int connect_a(void)
{
    int sv[2];
    int rc;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    rc = fab_verbs_ops.ep_connect(F.a, F.blob_b, (size_t)F.blob_len, &sv[0], 1);
    F.peer_fd = sv[1];
    return rc;
}

static void test_init_at_create(void **st)
{
    for (int i = 0; i < 2; i++) {
        const struct fk_modify *m = find_mod(vb_ep_of(F.a)->lane[i].qp->qp_num, IBV_QPS_INIT);

        assert_non_null(m);
        assert_int_equal(m->mask, UC_INIT);
        assert_int_equal(m->attr.port_num, 1);
        assert_true(m->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE);
    }
    assert_int_equal(fk_nrecv, 4 * VB_HW_RQ); /* 2 endpoints x 2 lanes, posted in INIT */
}

static void test_uc_rtr_rts(void **st)
{
    fk_dev[0].port[0].active_mtu = IBV_MTU_4096; /* ours is larger: the peer's 1024 wins */
    assert_int_equal(connect_a(), 0);
    for (int i = 0; i < 2; i++) {
        const struct fk_modify *rtr = find_mod(vb_ep_of(F.a)->lane[i].qp->qp_num, IBV_QPS_RTR);
        const struct fk_modify *rts = find_mod(vb_ep_of(F.a)->lane[i].qp->qp_num, IBV_QPS_RTS);

        assert_non_null(rtr);
        assert_non_null(rts);
        assert_int_equal(rtr->mask, UC_RTR);
        assert_int_equal(rts->mask, UC_RTS);
        assert_int_equal(rtr->attr.dest_qp_num, vb_ep_of(F.b)->lane[i].qp->qp_num);
        assert_int_equal(rtr->attr.rq_psn, vb_ep_of(F.b)->lane[i].psn);
        assert_int_equal(rts->attr.sq_psn, vb_ep_of(F.a)->lane[i].psn);
        assert_int_equal(rtr->attr.path_mtu, IBV_MTU_1024);
        assert_int_equal(rtr->attr.ah_attr.is_global, 1);
        assert_int_equal(rtr->attr.ah_attr.grh.sgid_index, 1); /* found by content */
        assert_memory_equal(rtr->attr.ah_attr.grh.dgid.raw, fk_dev[0].gid[0][1].raw, 16);
        assert_int_equal(rtr->attr.ah_attr.grh.traffic_class, 0); /* unset: device default */
        assert_int_equal(rtr->attr.ah_attr.sl, 0);
    }
    assert_int_equal(fc_ep_status(&fab_verbs_ops, F.a, NULL), FAB_WC_OK);
    /* soft-RoCE peer: single-packet UC segments */
    assert_int_equal(vb_ep_of(F.a)->seg_size, 1024);
}

/* The endpoint's traffic class and service level reach every lane's address vector. */
static void test_qos_in_av(void **st)
{
    assert_int_equal(connect_a(), 0);
    for (int i = 0; i < 2; i++) {
        const struct fk_modify *rtr = find_mod(vb_ep_of(F.a)->lane[i].qp->qp_num, IBV_QPS_RTR);

        assert_non_null(rtr);
        assert_int_equal(rtr->attr.ah_attr.is_global, 1);
        assert_int_equal(rtr->attr.ah_attr.grh.traffic_class, 106);
        assert_int_equal(rtr->attr.ah_attr.sl, 3);
    }
}

static void test_rc_rtr_rts(void **st)
{
    assert_int_equal(connect_a(), 0);
    for (int i = 0; i < 2; i++) {
        const struct fk_modify *rtr = find_mod(vb_ep_of(F.a)->lane[i].qp->qp_num, IBV_QPS_RTR);
        const struct fk_modify *rts = find_mod(vb_ep_of(F.a)->lane[i].qp->qp_num, IBV_QPS_RTS);

        assert_int_equal(rtr->mask, RC_RTR);
        assert_int_equal(rts->mask, RC_RTS);
        assert_int_equal(rts->attr.retry_cnt, 7);
        assert_int_equal(rts->attr.rnr_retry, 7);
    }
}

static void test_rtr_failure_fails_endpoint(void **st)
{
    const char *why = NULL;

    fk_fail_state = IBV_QPS_RTR;
    assert_true(connect_a() < 0);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, F.a, &why), FAB_WC_LOCAL_ERR);
    assert_non_null(strstr(why, "could not be connected"));
    assert_null(find_mod(vb_ep_of(F.a)->lane[0].qp->qp_num, IBV_QPS_RTS));
    assert_int_equal(fab_verbs_ops.post_recv(F.a, 0, NULL, 0, NULL, 1), -ENOTCONN);
}

static void test_blob_mismatch(void **st)
{
    struct vb_info *info = (struct vb_info *)F.blob_b;

    info->qp_type = IBV_QPT_RC;
    assert_int_equal(connect_a(), -EPROTO);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, F.a, NULL), FAB_WC_LOCAL_ERR);
}

/* The peer's receive count sizes an allocation per lane: a huge one is refused, not trusted. */
static void test_blob_max_recv_bounded(void **st)
{
    struct vb_info *info = (struct vb_info *)F.blob_b;

    info->max_recv = VB_MAX_RECV + 1;
    assert_int_equal(connect_a(), -EPROTO);
    assert_int_not_equal(fc_ep_status(&fab_verbs_ops, F.a, NULL), FAB_WC_OK);
}

static void test_short_blob(void **st)
{
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(fab_verbs_ops.ep_connect(F.a, F.blob_b, 8, &sv[0], 1), -EPROTO);
    F.peer_fd = sv[1];
}

/* NCCL registers sub-ranges of one buffer again and again: one hardware registration. */
static void test_mr_cache(void **st)
{
    static char buf[3 * 4096] __attribute__((aligned(4096)));
    struct fab_mr *a, *b, *c;
    struct fab_remote_buf rb;
    int base = fk_nreg; /* the endpoints' own registrations */

    assert_int_equal(fab_verbs_ops.mr_reg(F.dom, buf, sizeof(buf), &a), 0);
    assert_int_equal(fab_verbs_ops.mr_reg(F.dom, buf + 100, 5000, &b), 0);
    assert_int_equal(fk_nreg, base + 1);
    rb = fab_verbs_ops.mr_remote(b, F.a, buf + 200);
    assert_int_equal(rb.addr, (uint64_t)(uintptr_t)(buf + 200));
    assert_int_equal(rb.rkey, vb_mr_of(a)->rkey);
    fab_verbs_ops.mr_dereg(a);
    assert_int_equal(fk_ndereg, 0); /* b still holds it */
    assert_int_equal(fab_verbs_ops.mr_reg(F.dom, buf + 4096, 10, &c), 0);
    assert_int_equal(fk_nreg, base + 1);
    fab_verbs_ops.mr_dereg(b);
    fab_verbs_ops.mr_dereg(c);
    assert_int_equal(fk_ndereg, 1);
    /* a range outside the registration is refused at post time */
    assert_int_equal(fab_verbs_ops.post_recv(F.a, 0, buf, 10, NULL, 1), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_init_at_create, setup_uc, teardown),
            cmocka_unit_test_setup_teardown(test_uc_rtr_rts, setup_uc, teardown),
            cmocka_unit_test_setup_teardown(test_qos_in_av, setup_qos, teardown),
            cmocka_unit_test_setup_teardown(test_rc_rtr_rts, setup_rc, teardown),
            cmocka_unit_test_setup_teardown(test_rtr_failure_fails_endpoint, setup_uc, teardown),
            cmocka_unit_test_setup_teardown(test_blob_mismatch, setup_uc, teardown),
            cmocka_unit_test_setup_teardown(test_blob_max_recv_bounded, setup_uc, teardown),
            cmocka_unit_test_setup_teardown(test_short_blob, setup_uc, teardown),
            cmocka_unit_test_setup_teardown(test_mr_cache, setup_uc, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

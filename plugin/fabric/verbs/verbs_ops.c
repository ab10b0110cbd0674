/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs back end as the rest of the plugin sees it. */
#include "fabric/verbs/verbs.h"
#include "fabric/verbs/verbs_int.h"
#include "util/param.h"

/* A lane is a queue pair here. */
static int verbs_p2p_lanes(void)
{
    return (int)jaccl_param_int(JP_QPS_PER_CONN);
}

/* ---- The fab_ops functions: they take the heads and convert at the top (fabric.h) ---- */

static int vb_op_domain_open(int dev, struct fab_domain **out)
{
    struct vb_domain *d = NULL;
    int rc = fab_verbs_domain_open(dev, &d);

    *out = rc == 0 ? &d->fab : NULL;
    return rc;
}

static void vb_op_domain_close(struct fab_domain *dom)
{
    fab_verbs_domain_close(vb_domain_of(dom));
}

static int vb_op_mr_reg(struct fab_domain *dom, void *addr, size_t len, struct fab_mr **out)
{
    struct vb_mr *m = NULL;
    int rc = fab_verbs_mr_reg(vb_domain_of(dom), addr, len, &m);

    *out = rc == 0 ? &m->fab : NULL;
    return rc;
}

static void vb_op_mr_dereg(struct fab_mr *mr)
{
    fab_verbs_mr_dereg(vb_mr_of(mr));
}

static struct fab_remote_buf vb_op_mr_remote(struct fab_mr *mr, struct fab_ep *ep, void *addr)
{
    return fab_verbs_mr_remote(vb_mr_of(mr), vb_ep_of(ep), addr);
}

static int vb_op_ep_create(struct fab_domain *dom, struct fab_cq *cq,
                           const struct fab_ep_attr *attr, struct fab_ep **out)
{
    struct vb_ep *e = NULL;
    int rc = fab_verbs_ep_create(vb_domain_of(dom), cq, attr, &e);

    *out = rc == 0 ? &e->fab : NULL;
    return rc;
}

static int vb_op_ep_local_info(struct fab_ep *ep, void *buf, size_t cap)
{
    return fab_verbs_ep_local_info(vb_ep_of(ep), buf, cap);
}

static int vb_op_ep_connect(struct fab_ep *ep, const void *peer_info, size_t len, const int *socks,
                            int nsocks)
{
    return fab_verbs_ep_connect(vb_ep_of(ep), peer_info, len, socks, nsocks);
}

static void vb_op_ep_close(struct fab_ep *ep)
{
    fab_verbs_ep_close(vb_ep_of(ep));
}

static int vb_op_ep_error(struct fab_ep *ep, const char **reason)
{
    return fab_verbs_ep_error(vb_ep_of(ep), reason);
}

static int vb_op_post_recv(struct fab_ep *ep, int lane, void *buf, size_t cap, struct fab_mr *mr,
                           uint64_t wr_id)
{
    return fab_verbs_post_recv(vb_ep_of(ep), lane, buf, cap, vb_mr_of(mr), wr_id);
}

static int vb_op_post_send(struct fab_ep *ep, int lane, const void *buf, size_t len,
                           struct fab_mr *mr, uint64_t wr_id)
{
    return fab_verbs_post_send(vb_ep_of(ep), lane, buf, len, vb_mr_of(mr), wr_id);
}

static int vb_op_post_write_imm(struct fab_ep *ep, int lane, const void *buf, size_t len,
                                struct fab_mr *mr, struct fab_remote_buf dst, uint32_t imm,
                                uint64_t wr_id)
{
    return fab_verbs_post_write_imm(vb_ep_of(ep), lane, buf, len, vb_mr_of(mr), dst, imm, wr_id);
}

const struct fab_ops fab_verbs_ops = {
        .name = "verbs",
        .handle_id = 2,
        .init = fab_verbs_init,
        .ndevs = fab_verbs_ndevs,
        .dev_info = fab_verbs_dev_info,
        .fini = fab_verbs_fini,
        .dev_link = fab_verbs_dev_link,
        .why_unavailable = fab_verbs_why_none,
        .devices_listed = fab_verbs_devices_listed,
        .p2p_lanes = verbs_p2p_lanes,
        .lanes_are_socks = 0,
        .domain_open = vb_op_domain_open,
        .domain_close = vb_op_domain_close,
        .mr_reg = vb_op_mr_reg,
        .mr_dereg = vb_op_mr_dereg,
        .mr_remote = vb_op_mr_remote,
        .cq_create = fab_swcq_create,
        .cq_destroy = fab_swcq_destroy,
        .cq_poll = fab_swcq_poll,
        .cq_wait = fab_swcq_wait,
        .cq_wake = fab_swcq_wake,
        .side_socks = fab_verbs_side_socks,
        .ep_create = vb_op_ep_create,
        .ep_local_info = vb_op_ep_local_info,
        .ep_connect = vb_op_ep_connect,
        .ep_close = vb_op_ep_close,
        .ep_error = vb_op_ep_error,
        .post_recv = vb_op_post_recv,
        .post_send = vb_op_post_send,
        .post_write_imm = vb_op_post_write_imm,
};

/* SPDX-License-Identifier: BSD-3-Clause */
/* The TCP back end as the rest of the plugin sees it. */
#include "fabric/tcp/tcp.h"
#include "fabric/tcp/tcp_int.h"
#include "util/param.h"

/* A lane is a socket here. */
static int tcp_p2p_lanes(void)
{
    return (int)jaccl_param_int(JP_NSOCKS);
}

/* ---- The fab_ops functions: they take the heads and convert at the top (fabric.h) ---- */

static int tcp_op_domain_open(int dev, struct fab_domain **out)
{
    struct tcp_domain *d = NULL;
    int rc = fab_tcp_domain_open(dev, &d);

    *out = rc == 0 ? &d->fab : NULL;
    return rc;
}

static void tcp_op_domain_close(struct fab_domain *dom)
{
    fab_tcp_domain_close(tcp_domain_of(dom));
}

static int tcp_op_mr_reg(struct fab_domain *dom, void *addr, size_t len, struct fab_mr **out)
{
    struct tcp_mr *m = NULL;
    int rc = fab_tcp_mr_reg(tcp_domain_of(dom), addr, len, &m);

    *out = rc == 0 ? &m->fab : NULL;
    return rc;
}

static void tcp_op_mr_dereg(struct fab_mr *mr)
{
    fab_tcp_mr_dereg(tcp_mr_of(mr));
}

static struct fab_remote_buf tcp_op_mr_remote(struct fab_mr *mr, struct fab_ep *ep, void *addr)
{
    return fab_tcp_mr_remote(tcp_mr_of(mr), tcp_ep_of(ep), addr);
}

static int tcp_op_ep_create(struct fab_domain *dom, struct fab_cq *cq,
                            const struct fab_ep_attr *attr, struct fab_ep **out)
{
    struct tcp_ep *e = NULL;
    int rc = fab_tcp_ep_create(tcp_domain_of(dom), cq, attr, &e);

    *out = rc == 0 ? &e->fab : NULL;
    return rc;
}

static int tcp_op_ep_local_info(struct fab_ep *ep, void *buf, size_t cap)
{
    return fab_tcp_ep_local_info(tcp_ep_of(ep), buf, cap);
}

static int tcp_op_ep_connect(struct fab_ep *ep, const void *peer_info, size_t len, const int *socks,
                             int nsocks)
{
    return fab_tcp_ep_connect(tcp_ep_of(ep), peer_info, len, socks, nsocks);
}

static void tcp_op_ep_close(struct fab_ep *ep)
{
    fab_tcp_ep_close(tcp_ep_of(ep));
}

static int tcp_op_ep_error(struct fab_ep *ep, const char **reason)
{
    return fab_tcp_ep_error(tcp_ep_of(ep), reason);
}

static int tcp_op_post_recv(struct fab_ep *ep, int lane, void *buf, size_t cap, struct fab_mr *mr,
                            uint64_t wr_id)
{
    return fab_tcp_post_recv(tcp_ep_of(ep), lane, buf, cap, tcp_mr_of(mr), wr_id);
}

static int tcp_op_post_send(struct fab_ep *ep, int lane, const void *buf, size_t len,
                            struct fab_mr *mr, uint64_t wr_id)
{
    return fab_tcp_post_send(tcp_ep_of(ep), lane, buf, len, tcp_mr_of(mr), wr_id);
}

static int tcp_op_post_send_imm(struct fab_ep *ep, int lane, const void *buf, size_t len,
                                struct fab_mr *mr, uint32_t imm, uint64_t wr_id)
{
    return fab_tcp_post_send_imm(tcp_ep_of(ep), lane, buf, len, tcp_mr_of(mr), imm, wr_id);
}

static int tcp_op_post_write_imm(struct fab_ep *ep, int lane, const void *buf, size_t len,
                                 struct fab_mr *mr, struct fab_remote_buf dst, uint32_t imm,
                                 uint64_t wr_id)
{
    return fab_tcp_post_write_imm(tcp_ep_of(ep), lane, buf, len, tcp_mr_of(mr), dst, imm, wr_id);
}

const struct fab_ops fab_tcp_ops = {
        .name = "tcp",
        .handle_id = 1,
        .init = fab_tcp_init,
        .ndevs = fab_tcp_ndevs,
        .dev_info = fab_tcp_dev_info,
        .fini = fab_tcp_fini,
        .dev_link = fab_tcp_dev_link,
        .why_unavailable = fab_tcp_why_none,
        .devices_listed = NULL, /* the last resort: nothing to fall back from */
        .p2p_lanes = tcp_p2p_lanes,
        .lanes_are_socks = 1,
        .domain_open = tcp_op_domain_open,
        .domain_close = tcp_op_domain_close,
        .mr_reg = tcp_op_mr_reg,
        .mr_dereg = tcp_op_mr_dereg,
        .mr_remote = tcp_op_mr_remote,
        .cq_create = fab_swcq_create,
        .cq_destroy = fab_swcq_destroy,
        .cq_poll = fab_swcq_poll,
        .cq_wait = fab_swcq_wait,
        .cq_wake = fab_swcq_wake,
        .side_socks = fab_tcp_side_socks,
        .ep_create = tcp_op_ep_create,
        .ep_local_info = tcp_op_ep_local_info,
        .ep_connect = tcp_op_ep_connect,
        .ep_close = tcp_op_ep_close,
        .ep_error = tcp_op_ep_error,
        .post_recv = tcp_op_post_recv,
        .post_send = tcp_op_post_send,
        .post_write_imm = tcp_op_post_write_imm,
        .post_send_imm = tcp_op_post_send_imm,
};

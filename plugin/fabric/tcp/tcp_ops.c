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

const struct fab_ops fab_tcp_ops = {
        .name = "tcp",
        .handle_id = 1,
        .init = fab_tcp_init,
        .ndevs = fab_tcp_ndevs,
        .dev_info = fab_tcp_dev_info,
        .fini = fab_tcp_fini,
        .dev_addr = fab_tcp_dev_addr,
        .why_unavailable = fab_tcp_why_none,
        .devices_listed = NULL, /* the last resort: nothing to fall back from */
        .p2p_lanes = tcp_p2p_lanes,
        .domain_open = fab_tcp_domain_open,
        .domain_close = fab_tcp_domain_close,
        .mr_reg = fab_tcp_mr_reg,
        .mr_dereg = fab_tcp_mr_dereg,
        .mr_remote = fab_tcp_mr_remote,
        .cq_create = fab_swcq_create,
        .cq_destroy = fab_swcq_destroy,
        .cq_poll = fab_swcq_poll,
        .cq_wait = fab_swcq_wait,
        .cq_wake = fab_swcq_wake,
        .side_socks = fab_tcp_side_socks,
        .ep_create = fab_tcp_ep_create,
        .ep_local_info = fab_tcp_ep_local_info,
        .ep_connect = fab_tcp_ep_connect,
        .ep_close = fab_tcp_ep_close,
        .ep_error = fab_tcp_ep_error,
        .post_recv = fab_tcp_post_recv,
        .post_send = fab_tcp_post_send,
        .post_write_imm = fab_tcp_post_write_imm,
};

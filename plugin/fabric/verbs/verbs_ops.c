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

const struct fab_ops fab_verbs_ops = {
        .name = "verbs",
        .handle_id = 2,
        .init = fab_verbs_init,
        .ndevs = fab_verbs_ndevs,
        .dev_info = fab_verbs_dev_info,
        .fini = fab_verbs_fini,
        .dev_addr = fab_verbs_dev_addr,
        .why_unavailable = fab_verbs_why_none,
        .devices_listed = fab_verbs_devices_listed,
        .p2p_lanes = verbs_p2p_lanes,
        .domain_open = fab_verbs_domain_open,
        .domain_close = fab_verbs_domain_close,
        .mr_reg = fab_verbs_mr_reg,
        .mr_dereg = fab_verbs_mr_dereg,
        .mr_remote = fab_verbs_mr_remote,
        .cq_create = fab_swcq_create,
        .cq_destroy = fab_swcq_destroy,
        .cq_poll = fab_swcq_poll,
        .cq_wait = fab_swcq_wait,
        .cq_wake = fab_swcq_wake,
        .side_socks = fab_verbs_side_socks,
        .ep_create = fab_verbs_ep_create,
        .ep_local_info = fab_verbs_ep_local_info,
        .ep_connect = fab_verbs_ep_connect,
        .ep_close = fab_verbs_ep_close,
        .ep_error = fab_verbs_ep_error,
        .post_recv = fab_verbs_post_recv,
        .post_send = fab_verbs_post_send,
        .post_write_imm = fab_verbs_post_write_imm,
};

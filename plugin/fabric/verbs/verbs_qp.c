/* SPDX-License-Identifier: BSD-3-Clause */
/* Queue pairs: creation and the RESET -> INIT -> RTR -> RTS transitions with the attribute masks
 * each type requires (UC: no retry/timeout/atomic attributes, which the kernel rejects), and
 * the connection blob both ends exchange before RTR. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "fabric/verbs/verbs_int.h"
#include "util/log.h"

#define VB_RC_TIMEOUT 16 /* 4.096 us * 2^16 = 268 ms: slow soft-RoCE peers ack late */
#define VB_RNR_TIMER  12
#define VB_HOP_LIMIT  255

int vb_qp_create(struct vb_ep *ep, struct vb_lane *l)
{
    struct ibv_qp_init_attr a;

    memset(&a, 0, sizeof(a));
    a.send_cq = ep->hcq;
    a.recv_cq = ep->hcq;
    a.qp_type = (enum ibv_qp_type)ep->qp_type;
    a.cap.max_send_wr = VB_HWQ_CAP;
    a.cap.max_recv_wr = VB_HW_RQ + 8;
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = 1;
    l->qp = ep->ibv->create_qp(ep->dom->pd, &a);
    if (!l->qp) {
        JWARN("verbs fabric: creating a %s queue pair on %s failed: %s",
              ep->qp_type == IBV_QPT_RC ? "RC" : "UC", ep->dom->dev->info.name, strerror(errno));
        return -ENOMEM;
    }
    return 0;
}

static int qp_modify(struct vb_ep *ep, struct vb_lane *l, struct ibv_qp_attr *a, int mask,
                     const char *state)
{
    int rc = ep->ibv->modify_qp(l->qp, a, mask);

    if (rc == 0)
        return 0;
    rc = rc > 0 ? rc : errno ? errno : EINVAL; /* verbs returns errno or -1 */
    JWARN("verbs fabric: moving QP %u (lane %d, %s, peer %s) to %s failed: %s%s", l->qp->qp_num,
          l->idx, ep->dom->dev->info.name, ep->base.peer, state, strerror(rc),
          strcmp(state, "RTR") == 0 ? " (wrong GID index, or the two RoCE addresses cannot "
                                      "reach each other?)"
                                    : "");
    return -rc;
}

int vb_qp_init(struct vb_ep *ep, struct vb_lane *l)
{
    struct ibv_qp_attr a;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = (uint8_t)ep->dom->dev->port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    return qp_modify(ep, l, &a,
                     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT");
}

/* RoCE always routes by GID; IB by LID, with a GRH only across subnets. The service level and
 * traffic class come from the endpoint's attributes (NCCL_JACCL_SL / NCCL_JACCL_TC or NCCL's
 * trafficClass): on RoCE the traffic class is the DSCP/ECN byte of every packet. */
static void qp_av(struct vb_ep *ep, const struct vb_info *peer, struct ibv_ah_attr *av)
{
    const struct vb_dev *d = ep->dom->dev;
    int global = d->link_layer == IBV_LINK_LAYER_ETHERNET ||
                 (d->gid_index >= 0 && memcmp(d->gid.raw, peer->gid, 8) != 0);

    av->dlid = peer->lid;
    av->sl = (uint8_t)ep->sl;
    av->port_num = (uint8_t)d->port;
    av->is_global = (uint8_t)global;
    if (global) {
        memcpy(av->grh.dgid.raw, peer->gid, 16);
        av->grh.sgid_index = (uint8_t)(d->gid_index < 0 ? 0 : d->gid_index);
        av->grh.hop_limit = VB_HOP_LIMIT;
        av->grh.traffic_class = (uint8_t)ep->tclass;
    }
}

int vb_qp_rtr(struct vb_ep *ep, struct vb_lane *l, const struct vb_info *peer, int mtu)
{
    struct ibv_qp_attr a;
    int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = (enum ibv_mtu)mtu;
    a.dest_qp_num = peer->lane[l->idx].qpn;
    a.rq_psn = peer->lane[l->idx].psn;
    qp_av(ep, peer, &a.ah_attr);
    if (ep->qp_type == IBV_QPT_RC) {
        a.max_dest_rd_atomic = 1;
        a.min_rnr_timer = VB_RNR_TIMER;
        mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    }
    return qp_modify(ep, l, &a, mask, "RTR");
}

int vb_qp_rts(struct vb_ep *ep, struct vb_lane *l)
{
    struct ibv_qp_attr a;
    int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = l->psn;
    if (ep->qp_type == IBV_QPT_RC) {
        a.timeout = VB_RC_TIMEOUT;
        a.retry_cnt = (uint8_t)(ep->retry_cnt > 7 ? 7 : ep->retry_cnt);
        a.rnr_retry = 7; /* infinite: a receiver that is merely slow is not an error */
        a.max_rd_atomic = 1;
        mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    }
    return qp_modify(ep, l, &a, mask, "RTS");
}

void vb_info_fill(struct vb_ep *ep, struct vb_info *info)
{
    const struct vb_dev *d = ep->dom->dev;

    memset(info, 0, sizeof(*info));
    info->magic = VB_INFO_MAGIC;
    info->qp_type = (uint8_t)ep->qp_type;
    info->nlanes = (uint8_t)ep->nlanes;
    info->link_layer = (uint8_t)d->link_layer;
    info->mtu = (uint8_t)d->active_mtu;
    info->lid = d->lid;
    info->flags = d->soft_roce ? VB_INFO_ONE_PACKET : 0;
    info->max_recv = (uint32_t)ep->max_recv_wr;
    memcpy(info->gid, d->gid.raw, 16);
    vb_ring_fill_info(ep, info);
    for (int i = 0; i < ep->nlanes; i++) {
        info->lane[i].qpn = ep->lane[i].qp->qp_num;
        info->lane[i].psn = ep->lane[i].psn;
    }
}

const char *vb_info_check(const struct vb_ep *ep, const struct vb_info *peer, size_t len)
{
    return vb_info_check_vals(ep->nlanes, ep->qp_type, ep->dom->dev->link_layer, peer, len);
}

const char *vb_info_check_vals(int nlanes, int qp_type, int link_layer, const struct vb_info *peer,
                               size_t len)
{
    if (len < offsetof(struct vb_info, lane) || peer->magic != VB_INFO_MAGIC)
        return "is not a verbs endpoint";
    if (peer->nlanes != nlanes ||
        len < offsetof(struct vb_info, lane) + (size_t)nlanes * sizeof(peer->lane[0]))
        return "has a different number of queue pairs";
    if (peer->qp_type != qp_type)
        return "uses another NCCL_JACCL_QP_TYPE";
    if (peer->link_layer != link_layer)
        return "is on another link layer (IB vs RoCE)";
    if (peer->max_recv == 0 || peer->max_recv > VB_MAX_RECV)
        return "announces an invalid number of receives (none, or more than any endpoint posts)";
    if (peer->ring_slots != peer->max_recv)
        return "announces advertisement rings that do not fit its receives";
    /* The segment size is 128 << mtu: only IBV_MTU_256 (1) .. IBV_MTU_4096 (5) are MTUs. */
    if (peer->mtu < IBV_MTU_256 || peer->mtu > IBV_MTU_4096)
        return "announces an invalid MTU";
    return NULL;
}

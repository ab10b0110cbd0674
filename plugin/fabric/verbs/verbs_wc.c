/* SPDX-License-Identifier: BSD-3-Clause */
/* Hardware completions of one endpoint: every CQE's status is checked (an error becomes a WARN
 * with the verbs status string and fails the endpoint), receive CQEs feed the reliability
 * protocol (segments) or the sender side (controls: ACKs, credits), send CQEs release the buffers
 * the hardware was reading (and on RC deliver the segments). Then receives are posted again,
 * acknowledgements (UC) or credits (RC) sent, finished sends completed and the send windows
 * refilled. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "fabric/verbs/verbs_int.h"
#include "util/log.h"

#define VB_POLL_BATCH 32
#define VB_DRAIN_MAX  512

static struct vb_lane *lane_of(struct vb_ep *ep, uint32_t qpn)
{
    for (int i = 0; i < ep->nlanes; i++)
        if (ep->lane[i].qp && ep->lane[i].qp->qp_num == qpn)
            return &ep->lane[i];
    return NULL;
}

/* A peer that closed took its QPs with it, so what we still write to it fails (on RC once the
 * retries are exhausted): its side channel's end, when that is all the socket has left, says
 * why better than the completion's status does. */
static int side_ended(struct vb_ep *ep, enum ibv_wc_status st)
{
    char c;

    if (st != IBV_WC_RETRY_EXC_ERR && st != IBV_WC_RNR_RETRY_EXC_ERR)
        return 0;
    return ep->side.fd >= 0 && ep->side.in_n == 0 &&
           recv(ep->side.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static void wc_error(struct vb_ep *ep, struct vb_lane *l, const struct ibv_wc *wc)
{
    if (side_ended(ep, wc->status)) {
        vb_ep_peer_closed(ep);
        return;
    }
    JWARN("verbs fabric: peer %s, device %s, lane %d (QP %u): completion error %s (status %d, "
          "opcode %d, vendor error 0x%x)",
          ep->base.peer, ep->dom->dev->info.name, l->idx, wc->qp_num,
          ep->ibv->wc_status_str(wc->status), (int)wc->status, (int)wc->opcode, wc->vendor_err);
    vb_ep_fail(ep, vb_wc_err(wc->status),
               "completion error on lane %d (QP %u): %s (status %d, opcode %d, vendor error "
               "0x%x)",
               l->idx, wc->qp_num, ep->ibv->wc_status_str(wc->status), (int)wc->status,
               (int)wc->opcode, wc->vendor_err);
}

static void wc_one(struct vb_ep *ep, const struct ibv_wc *wc, uint64_t now)
{
    struct vb_lane *l = lane_of(ep, wc->qp_num);

    if (!l || fab_ep_base_err(&ep->base) != 0)
        return; /* after a failure only flush errors arrive: the caller has its completions */
    if (wc->status != IBV_WC_SUCCESS) {
        wc_error(ep, l, wc);
        return;
    }
    if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM && (wc->wc_flags & IBV_WC_WITH_IMM)) {
        uint32_t imm = ntohl(wc->imm_data);

        l->rx.reposts++;
        ep->last_rx_ns = now; /* data from the peer proves it alive as well as a heartbeat */
        if (vb_imm_is_ctl(imm)) {
            l->rx.ctl_reposts++;
            if (wc->byte_len != 0)
                vb_ep_fail(ep, -EPROTO, "sent a control with %u bytes (lane %d)", wc->byte_len,
                           l->idx);
            else
                vb_ctl_arrived(ep, l, imm, now);
        } else {
            vb_rx_segment(ep, l, imm, wc->byte_len);
        }
    } else if (wc->opcode & IBV_WC_RECV) {
        vb_ep_fail(ep, -EPROTO, "sent a message without immediate data (lane %d, QP %u)", l->idx,
                   wc->qp_num);
    } else {
        vb_tx_on_send_cqe(ep, l);
    }
}

static void lane_after_drain(struct vb_ep *ep, struct vb_lane *l, uint64_t now)
{
    if (l->rx.reposts || l->rx.credit_due) {
        int n = l->rx.reposts, segs = n - l->rx.ctl_reposts;
        int rc = n ? vb_post_hw_recvs(ep, l, n) : 0;

        l->rx.reposts = l->rx.ctl_reposts = 0;
        if (rc != 0) {
            vb_ep_fail(ep, rc, "reposting receives on QP %u failed: %s", l->qp->qp_num,
                       strerror(-rc));
            return;
        }
        vb_rx_reposted(ep, l, segs);
    }
    /* A caller's drive leaves the ACK to its next drive (vb_ep_drive): the caller first acts on
     * what this drain delivered (an echo, its next send), and the ACK is not on that path. */
    if (!ep->in_drive)
        vb_rx_ack(ep, l, now);
    vb_tx_complete(ep, l);
    vb_tx_pump(ep, l, now);
}

/* At most VB_DRAIN_MAX CQEs per call, so that one busy endpoint cannot starve the others of
 * the thread (their heartbeats and ACKs); ep->drain_more asks the thread to come back. */
void vb_ep_drain(struct vb_ep *ep, uint64_t now)
{
    struct ibv_wc wc[VB_POLL_BATCH];
    int n = 0, total = 0;

    while (total < VB_DRAIN_MAX && (n = ep->ibv->poll_cq(ep->hcq, VB_POLL_BATCH, wc)) > 0) {
        for (int i = 0; i < n; i++)
            wc_one(ep, &wc[i], now);
        total += n;
    }
    ep->drain_more = total >= VB_DRAIN_MAX;
    ep->stats.cqes += (uint64_t)total;
    ep->stats.drains += total > 0;
    if (n < 0)
        vb_ep_fail(ep, -EIO, "polling the completion queue failed (%d)", n);
    for (int i = 0; i < ep->nlanes && fab_ep_base_err(&ep->base) == 0; i++)
        lane_after_drain(ep, &ep->lane[i], now);
}

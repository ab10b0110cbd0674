/* SPDX-License-Identifier: BSD-3-Clause */
/* Endpoint errors: the first cause wins and is WARNed once with everything needed to find it
 * (peer, device, QP, sequence number, verbs status); the queue pairs are moved to ERR so the
 * hardware stops reading caller buffers, the side channel is shut so the peer fails too, and
 * every outstanding caller work item completes (the first with the cause, the rest FLUSHED). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "fabric/verbs/verbs_int.h"
#include "util/log.h"

int vb_wc_err(enum ibv_wc_status st)
{
    switch (st) {
    case IBV_WC_SUCCESS:
        return 0;
    case IBV_WC_WR_FLUSH_ERR:
        return -ECANCELED;
    case IBV_WC_LOC_LEN_ERR:
        return -EMSGSIZE;
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
        return -EACCES;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
        return -ETIMEDOUT;
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_ABORT_ERR:
        return -ECONNABORTED;
    default:
        return -EIO;
    }
}

static void flush_one(struct vb_ep *ep, int lane, uint64_t wr_id, enum fab_wc_op op)
{
    struct fab_wc wc = {.wr_id = wr_id, .ep = &ep->fab, .op = op, .lane = lane};

    wc.status = FAB_WC_FLUSHED;
    if (!ep->flushed) {
        wc.status = fab_wc_status_of(fab_ep_base_err(&ep->base));
        ep->flushed = 1;
    }
    fab_swcq_push(ep->cq, &wc);
}

static void flush_lane(struct vb_ep *ep, struct vb_lane *l)
{
    if (l->rx.in_msg && l->rx.is_send)
        flush_one(ep, l->idx, l->rx.cur.wr_id, FAB_WC_RECV);
    l->rx.in_msg = 0;
    for (; l->rq_n; l->rq_n--, l->rq_head = (l->rq_head + 1) % l->rq_cap)
        flush_one(ep, l->idx, l->rq[l->rq_head].wr_id, FAB_WC_RECV);
    for (; l->mq_head != l->mq_tail; l->mq_head++) {
        const struct vb_msg *m = &l->mq[l->mq_head % l->mq_cap];

        flush_one(ep, l->idx, m->wr_id, m->is_send ? FAB_WC_SEND : FAB_WC_WRITE);
    }
    l->tx.msg_cur = l->mq_tail;
}

static void stop_hardware(struct vb_ep *ep)
{
    struct ibv_qp_attr a;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_ERR;
    for (int i = 0; i < ep->nlanes; i++)
        if (ep->lane[i].qp)
            ep->ibv->modify_qp(ep->lane[i].qp, &a, IBV_QP_STATE);
    if (ep->side.fd >= 0) {
        epoll_ctl(ep->dom->epfd, EPOLL_CTL_DEL, ep->side.fd, NULL);
        shutdown(ep->side.fd, SHUT_WR); /* not SHUT_RD: see fab_sock_retire */
    }
}

/* `orderly`: the peer closed its side channel (end of stream), which is how every normal
 * teardown looks from here, so the line does not call it a failure. */
static void vb_ep_down(struct vb_ep *ep, int err, int orderly, const char *what)
{
    char full[256];
    snprintf(full, sizeof(full), "%s (device %s)", what, ep->dom->dev->info.name);
    /* INFO like the TCP back end: a peer closing is normal at teardown, and the layer above
     * WARNs with this reason when a request fails. The causes nobody above would explain
     * (an error CQE, retransmissions exhausted) WARN where they are found. */
    if (!fab_ep_base_fail(&ep->base, "verbs", ep, err, orderly, full))
        return;
    stop_hardware(ep);
    for (int i = 0; i < ep->nlanes; i++)
        flush_lane(ep, &ep->lane[i]);
}

void vb_ep_fail(struct vb_ep *ep, int err, const char *fmt, ...)
{
    char what[160];
    va_list ap;

    if (fab_ep_base_err(&ep->base) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    vb_ep_down(ep, err, 0, what);
}

void vb_ep_peer_closed(struct vb_ep *ep)
{
    if (fab_ep_base_err(&ep->base) == 0)
        vb_ep_down(ep, -ECONNRESET, 1, "closed the connection");
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The data-path entry points. Caller RECVs queue in software (the back end owns every hardware
 * receive) and are advertised to the peer through RDMA (verbs_adv.c); SENDs and WRITE_IMMs queue
 * as messages. All go out as far as the window allows, right from the caller's thread. Nothing
 * here blocks. */
#include <errno.h>
#include <string.h>

#include "fabric/verbs/verbs_int.h"
#include "util/clock.h"

#define VB_RECV_CHAIN 32

int vb_post_hw_recvs(struct vb_ep *ep, struct vb_lane *l, int n)
{
    struct ibv_recv_wr wr[VB_RECV_CHAIN], *bad = NULL;

    while (n > 0) {
        int k = n < VB_RECV_CHAIN ? n : VB_RECV_CHAIN;
        int rc;

        memset(wr, 0, sizeof(wr[0]) * (size_t)k);
        for (int i = 0; i + 1 < k; i++)
            wr[i].next = &wr[i + 1];
        rc = ep->ibv->post_recv(l->qp, wr, &bad);
        if (rc != 0)
            return -(rc > 0 ? rc : errno ? errno : EIO);
        n -= k;
    }
    return 0;
}

int fab_verbs_post_recv(struct vb_ep *ep, int lane, void *buf, size_t cap, struct vb_mr *mr,
                        uint64_t wr_id)
{
    struct vb_lane *l;
    int rc = 0;

    if (lane < 0 || lane >= ep->nlanes || cap > VB_MAX_MSG ||
        vb_mr_check(ep->dom, mr, buf, cap) != 0)
        return -EINVAL;
    l = &ep->lane[lane];
    pthread_mutex_lock(&ep->mu);
    if (fab_ep_base_err(&ep->base) != 0) {
        rc = -ENOTCONN;
    } else if (l->rq_n >= l->rq_cap) {
        rc = -EAGAIN;
    } else {
        struct vb_rwr *w = &l->rq[(l->rq_head + l->rq_n) % l->rq_cap];

        w->wr_id = wr_id;
        w->buf = buf;
        w->cap = cap;
        l->rq_n++;
        /* the peer's back end writes a SEND straight into it */
        vb_adv_posted(ep, l, w, cap ? mr->rkey : 0);
        /* While a caller polls, the advertisement waits for the next post's doorbell or drive
         * (NCCL's proxy reposts a receive, then sends: one doorbell, not two); else now. */
        if (!atomic_load(&ep->polled))
            vb_tx_pump(ep, l, jaccl_now_ns());
    }
    pthread_mutex_unlock(&ep->mu);
    return rc;
}

static int post_msg(struct vb_ep *ep, int lane, const struct vb_msg *m)
{
    struct vb_lane *l = &ep->lane[lane];
    int rc = 0;

    pthread_mutex_lock(&ep->mu);
    if (fab_ep_base_err(&ep->base) != 0) {
        rc = -ENOTCONN;
    } else if (l->mq_tail - l->mq_head >= l->mq_cap) {
        rc = -EAGAIN;
    } else {
        l->mq[l->mq_tail % l->mq_cap] = *m;
        l->mq_tail++;
        vb_tx_pump(ep, l, jaccl_now_ns());
    }
    pthread_mutex_unlock(&ep->mu);
    return rc;
}

static int check_post(struct vb_ep *ep, int lane, const void *buf, size_t len,
                      const struct vb_mr *mr)
{
    if (lane < 0 || lane >= ep->nlanes)
        return -EINVAL;
    if (len > VB_MAX_MSG)
        return -EMSGSIZE;
    return vb_mr_check(ep->dom, mr, buf, len);
}

int fab_verbs_post_send(struct vb_ep *ep, int lane, const void *buf, size_t len, struct vb_mr *mr,
                        uint64_t wr_id)
{
    struct vb_msg m = {.wr_id = wr_id, .is_send = 1, .buf = buf, .len = len};
    int rc = check_post(ep, lane, buf, len, mr);

    if (rc != 0)
        return rc;
    m.lkey = len ? mr->lkey : 0;
    return post_msg(ep, lane, &m);
}

int fab_verbs_post_write_imm(struct vb_ep *ep, int lane, const void *buf, size_t len,
                             struct vb_mr *mr, struct fab_remote_buf dst, uint32_t imm,
                             uint64_t wr_id)
{
    struct vb_msg m = {.wr_id = wr_id,
                       .buf = buf,
                       .len = len,
                       .raddr = dst.addr,
                       .rkey = (uint32_t)dst.rkey,
                       .imm = (uint16_t)imm};
    int rc = check_post(ep, lane, buf, len, mr);

    if (rc != 0)
        return rc;
    if (imm > FAB_IMM_MAX)
        return -EINVAL;
    m.lkey = len ? mr->lkey : 0;
    return post_msg(ep, lane, &m);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Endpoint life cycle. ep_create builds the hardware CQ, the QPs (already in INIT with their
 * zero-length receives posted); callers may post at
 * once (it all queues). ep_connect takes the peer's blob to RTR/RTS, adopts the side-channel
 * socket and says READY on it; nothing is transmitted before the peer's READY, so no message
 * can reach a peer whose QPs are not ready for it, and ep_connect itself never blocks. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fabric/verbs/verbs_int.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/param.h"
#include "util/sock.h"

int fab_verbs_side_socks(const struct fab_ep_attr *attr)
{
    return 1; /* kept open: control frames and liveness */
}

static uint32_t random_psn(void)
{
    uint32_t r = 0;

    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
        r = (uint32_t)jaccl_now_ns();
    return r & 0xffffffu;
}

static int lane_init(struct vb_ep *ep, struct vb_lane *l, int idx)
{
    l->ep = ep;
    l->idx = idx;
    l->psn = random_psn();
    l->rq_cap = (uint32_t)ep->max_recv_wr;
    l->mq_cap = (uint32_t)ep->max_send_wr;
    l->rq = calloc(l->rq_cap, sizeof(*l->rq));
    l->mq = calloc(l->mq_cap, sizeof(*l->mq));
    vb_tx_init(&l->tx, jaccl_now_ns());
    l->rx.nak_epoch = -1;
    if (!l->rq || !l->mq)
        return -ENOMEM;
    if (vb_qp_create(ep, l) != 0)
        return -ENOMEM;
    if (vb_qp_init(ep, l) != 0)
        return -EIO;
    return vb_post_hw_recvs(ep, l, VB_HW_RQ);
}

static void ep_free(struct vb_ep *ep)
{
    const struct vb_ibv *ibv = ep->ibv;

    /* The side channel first (our last ACKs still reach the peer): the peer hears the close
     * before anything it still writes to our QPs can fail for want of them, as on hardware,
     * where such writes fail only once their retries ran out. */
    fab_sock_retire(ep->side.fd, ep->liveness_ns);
    for (int i = 0; i < ep->nlanes; i++) {
        if (ep->lane[i].qp)
            ibv->destroy_qp(ep->lane[i].qp);
        free(ep->lane[i].rq);
        free(ep->lane[i].mq);
    }
    vb_ring_destroy(ep); /* after the QPs: nothing reads or writes it any more */
    if (ep->hcq)
        ibv->destroy_cq(ep->hcq);
    free(ep->side.out);
    pthread_mutex_destroy(&ep->mu);
    free(ep);
}

static struct vb_ep *ep_alloc(struct vb_domain *dom, struct fab_cq *cq,
                              const struct fab_ep_attr *attr)
{
    struct vb_ep *ep = calloc(1, sizeof(*ep) + (size_t)attr->nlanes * sizeof(ep->lane[0]));

    if (!ep)
        return NULL;
    ep->fab.ops = dom->fab.ops;
    ep->dom = dom;
    ep->ibv = dom->ibv;
    ep->cq = cq;
    ep->nlanes = attr->nlanes;
    ep->max_send_wr = attr->max_send_wr;
    ep->max_recv_wr = attr->max_recv_wr;
    ep->liveness_ns = attr->liveness_ns;
    fab_ep_base_init(&ep->base, attr->peer_desc);
    ep->qp_type = strcmp(jaccl_param_str(JP_QP_TYPE), "rc") == 0 ? IBV_QPT_RC : IBV_QPT_UC;
    ep->retry_cnt = (int)jaccl_param_int(JP_RETRY_CNT);
    ep->tclass = attr->tclass;
    ep->sl = attr->sl;
    ep->side.fd = -1;
    ep->side.want_out = -1;
    pthread_mutex_init(&ep->mu, NULL);
    return ep;
}

static int ep_build(struct vb_ep *ep)
{
    int cqe = ep->nlanes * (VB_HWQ_CAP + VB_HW_RQ + 32);
    int rc;

    ep->hcq = ep->ibv->create_cq(ep->dom->ctx, cqe, (void *)(uintptr_t)ep->id, ep->dom->chan, 0);
    ep->armed = 1;
    if (!ep->hcq || ep->ibv->req_notify_cq(ep->hcq, 0) != 0) {
        JWARN("verbs fabric: creating a %d-entry CQ on %s failed", cqe, ep->dom->dev->info.name);
        return -ENOMEM;
    }
    rc = vb_ring_create(ep);
    if (rc != 0)
        JWARN("verbs fabric: registering the advertisement rings on %s failed",
              ep->dom->dev->info.name);
    for (int i = 0; rc == 0 && i < ep->nlanes; i++)
        rc = lane_init(ep, &ep->lane[i], i);
    return rc;
}

int fab_verbs_ep_create(struct vb_domain *dom, struct fab_cq *cq, const struct fab_ep_attr *attr,
                        struct vb_ep **out)
{
    struct vb_ep *ep;
    int rc;

    if (attr->nlanes < 1 || attr->nlanes > FAB_MAX_LANES || attr->max_send_wr < 1 ||
        attr->max_recv_wr < 1 || (uint32_t)attr->max_recv_wr > VB_MAX_RECV || !cq)
        return -EINVAL;
    ep = ep_alloc(dom, cq, attr);
    if (!ep)
        return -ENOMEM;
    pthread_mutex_lock(&dom->mu);
    ep->id = dom->next_id++; /* names the hardware CQ's events */
    pthread_mutex_unlock(&dom->mu);
    rc = ep_build(ep);
    if (rc != 0) {
        ep_free(ep);
        return rc;
    }
    pthread_mutex_lock(&dom->mu);
    ep->next = dom->eps;
    dom->eps = ep;
    pthread_mutex_unlock(&dom->mu);
    *out = ep;
    return 0;
}

int fab_verbs_ep_local_info(struct vb_ep *ep, void *buf, size_t cap)
{
    struct vb_info info;
    size_t n = offsetof(struct vb_info, lane) + (size_t)ep->nlanes * sizeof(info.lane[0]);

    if (cap < n)
        return -ENOSPC;
    vb_info_fill(ep, &info);
    memcpy(buf, &info, n);
    return (int)n;
}

/* The data-path parameters that depend on both ends: MTU, segment size, the peer's rings. */
static int ep_adopt_peer(struct vb_ep *ep, const struct vb_info *peer)
{
    int mtu = ep->dom->dev->active_mtu < peer->mtu ? ep->dom->dev->active_mtu : peer->mtu;

    ep->mtu = mtu;
    /* UC loses a whole segment per lost packet: keep them short. RC retransmits packets.
     * Soft-RoCE (kernel 6.1) is stricter: when a packet of a multi-packet UC WRITE is lost, its
     * responder stays in "middle of a message" for good (its class D1 recovery only resets
     * when a receive WQE is attached, which a WRITE has not) and drops every later message.
     * Single-packet segments never leave it in the middle of one. */
    ep->seg_size = (uint32_t)VB_SEG_PKTS * (128u << mtu);
    if ((peer->flags & VB_INFO_ONE_PACKET) || ep->dom->dev->soft_roce)
        ep->seg_size = 128u << mtu;
    if (ep->qp_type == IBV_QPT_RC)
        ep->seg_size = VB_MAX_MSG;
    vb_ring_adopt(ep, peer);
    return 0;
}

static int ep_qps_up(struct vb_ep *ep, const struct vb_info *peer)
{
    for (int i = 0; i < ep->nlanes; i++) {
        int rc = vb_qp_rtr(ep, &ep->lane[i], peer, ep->mtu);

        if (rc == 0)
            rc = vb_qp_rts(ep, &ep->lane[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Live: the thread watches the socket; READY goes out; the peer's READY opens the windows. */
static void ep_go_live(struct vb_ep *ep, int fd)
{
    uint64_t now = jaccl_now_ns();

    pthread_mutex_lock(&ep->dom->mu);
    pthread_mutex_lock(&ep->mu);
    ep->side.fd = fd;
    ep->connected = 1;
    ep->last_rx_ns = ep->last_tx_ns = now;
    vb_side_send(ep, VB_F_READY, 0, 0, 0);
    vb_side_flush(ep);
    if (fab_ep_base_err(&ep->base) == 0)
        vb_thread_watch(ep->dom, ep);
    pthread_mutex_unlock(&ep->mu);
    pthread_mutex_unlock(&ep->dom->mu);
    ep->src.drive = vb_ep_drive; /* from now on cq_poll drains the hardware CQ too */
    ep->src.quiet = vb_ep_quiet;
    fab_swcq_attach(ep->cq, &ep->src);
    ep->src_attached = 1;
    vb_thread_wake(ep->dom);
}

int fab_verbs_ep_connect(struct vb_ep *ep, const void *peer_info, size_t len, const int *socks,
                         int nsocks)
{
    struct vb_info peer;
    const char *why;
    int rc;

    memset(&peer, 0, sizeof(peer));
    memcpy(&peer, peer_info, len < sizeof(peer) ? len : sizeof(peer));
    why = nsocks == 1 && !ep->connected ? vb_info_check(ep, &peer, len) : "bad call";
    if (why) {
        JWARN("verbs fabric: peer %s %s", ep->base.peer, why);
        rc = -EPROTO;
    } else {
        rc = ep_adopt_peer(ep, &peer);
        if (rc == 0)
            rc = ep_qps_up(ep, &peer);
        if (rc == 0)
            rc = jaccl_sock_adopt(socks[0]);
    }
    if (rc != 0) {
        for (int i = 0; i < nsocks; i++)
            close(socks[i]);
        pthread_mutex_lock(&ep->mu);
        vb_ep_fail(ep, -EIO, "could not be connected: %s", strerror(-rc));
        pthread_mutex_unlock(&ep->mu);
        return rc;
    }
    ep_go_live(ep, socks[0]);
    return 0;
}

/* Data the peer sent us has landed, but its sender completes only on our ACK (UC): an ACK still
 * waiting for its delay (or for room in the send queue) goes out now, on the side channel, which
 * outlives our QPs (fab_sock_retire), so closing right after our own requests finished does not
 * fail the peer's last sends. Best effort: never blocks. */
static void ep_last_acks(struct vb_ep *ep)
{
    pthread_mutex_lock(&ep->mu);
    if (ep->connected && fab_ep_base_err(&ep->base) == 0) {
        for (int i = 0; i < ep->nlanes; i++)
            if (ep->lane[i].rx.ack_due) {
                ep->lane[i].rx.ack_due = 0;
                vb_side_send(ep, VB_F_ACK, i, 0, ep->lane[i].rx.expected);
            }
        vb_side_flush(ep);
    }
    pthread_mutex_unlock(&ep->mu);
}

void fab_verbs_ep_close(struct vb_ep *ep)
{
    struct vb_domain *dom;

    if (!ep)
        return;
    dom = ep->dom;
    if (ep->src_attached)
        fab_swcq_detach(ep->cq, &ep->src); /* waits for a poller still draining it */
    pthread_mutex_lock(&dom->mu);
    for (struct vb_ep **pp = &dom->eps; *pp; pp = &(*pp)->next) {
        if (*pp == ep) {
            *pp = ep->next;
            break;
        }
    }
    if (ep->side.fd >= 0)
        epoll_ctl(dom->epfd, EPOLL_CTL_DEL, ep->side.fd, NULL);
    pthread_mutex_unlock(&dom->mu);
    ep_last_acks(ep);
    /* Unlinked: the progress thread no longer touches the counters. */
    JINFO(NCCL_NET,
          "verbs fabric: closing endpoint to %s: %llu segments sent, %llu resent, "
          "%llu gap reports, %llu probes (%llu needless); %llu completions in %llu drains, "
          "%llu acks, %llu credits and %llu advertisements sent",
          ep->base.peer, (unsigned long long)ep->stats.segs, (unsigned long long)ep->stats.retx,
          (unsigned long long)ep->stats.naks, (unsigned long long)ep->stats.probes,
          (unsigned long long)ep->stats.spurious, (unsigned long long)ep->stats.cqes,
          (unsigned long long)ep->stats.drains, (unsigned long long)ep->stats.acks,
          (unsigned long long)ep->stats.credits, (unsigned long long)ep->stats.advs);
    ep_free(ep); /* outstanding work is dropped without completions */
}

int fab_verbs_ep_error(struct vb_ep *ep, const char **reason)
{
    return fab_ep_base_error(&ep->base, reason);
}

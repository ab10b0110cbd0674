/* SPDX-License-Identifier: BSD-3-Clause */
/* Endpoint life cycle: create (RECVs and sends may be posted at once; they queue), connect
 * (adopt one connected socket per lane and start the I/O thread), close. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fabric/tcp/tcp_int.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/sock.h"

/* Endpoint ids for registration scopes; never reused, so a registration advertised on a closed
 * endpoint is never valid on a new one that happens to get the same address. */
static atomic_uint_fast64_t g_ep_ids;

int fab_tcp_side_socks(const struct fab_ep_attr *attr)
{
    return attr->nlanes; /* they become the lanes */
}

static int tcp_lane_init(struct tcp_lane *l, int idx, const struct fab_ep_attr *attr)
{
    l->fd = -1;
    l->idx = idx;
    l->sq_cap = (uint32_t)attr->max_send_wr + 1; /* + one heartbeat */
    l->rq_cap = (uint32_t)attr->max_recv_wr;
    l->sq = calloc(l->sq_cap, sizeof(*l->sq));
    l->rq = calloc(l->rq_cap, sizeof(*l->rq));
    pthread_mutex_init(&l->send_mu, NULL);
    pthread_mutex_init(&l->rx_mu, NULL);
    pthread_mutex_init(&l->recv_mu, NULL);
    return l->sq && l->rq ? 0 : -ENOMEM;
}

static void tcp_lane_free(struct tcp_lane *l, uint64_t stall_ns)
{
    fab_sock_retire(l->fd, stall_ns);
    free(l->sq);
    free(l->rq);
    pthread_mutex_destroy(&l->send_mu);
    pthread_mutex_destroy(&l->rx_mu);
    pthread_mutex_destroy(&l->recv_mu);
}

static void tcp_ep_free(struct tcp_ep *ep, int nlanes)
{
    for (int i = 0; i < nlanes; i++)
        tcp_lane_free(&ep->lane[i], ep->liveness_ns);
    if (ep->epfd >= 0)
        close(ep->epfd);
    if (ep->wakefd >= 0)
        close(ep->wakefd);
    pthread_mutex_destroy(&ep->mu);
    free(ep);
}

int fab_tcp_ep_create(struct tcp_domain *dom, struct fab_cq *cq, const struct fab_ep_attr *attr,
                      struct tcp_ep **out)
{
    struct tcp_ep *ep;

    if (attr->nlanes < 1 || attr->nlanes > FAB_MAX_LANES || attr->max_send_wr < 1 ||
        attr->max_recv_wr < 1 || !cq)
        return -EINVAL;
    ep = calloc(1, sizeof(*ep) + (size_t)attr->nlanes * sizeof(ep->lane[0]));
    if (!ep)
        return -ENOMEM;
    ep->fab.ops = dom->fab.ops;
    ep->dom = dom;
    ep->id = atomic_fetch_add(&g_ep_ids, 1) + 1;
    ep->cq = cq;
    ep->nlanes = attr->nlanes;
    ep->max_send_wr = attr->max_send_wr;
    ep->tclass = attr->tclass;
    ep->liveness_ns = attr->liveness_ns;
    ep->host_ranks = attr->host_ranks;
    fab_ep_base_init(&ep->base, attr->peer_desc);
    ep->epfd = ep->wakefd = -1;
    ep->fail_lane = -1;
    atomic_init(&ep->cut_lane, -1);
    pthread_mutex_init(&ep->mu, NULL);
    for (int i = 0; i < attr->nlanes; i++) {
        if (tcp_lane_init(&ep->lane[i], i, attr)) {
            tcp_ep_free(ep, i + 1);
            return -ENOMEM;
        }
    }
    *out = ep;
    return 0;
}

int fab_tcp_ep_local_info(struct tcp_ep *ep, void *buf, size_t cap)
{
    return 0; /* the sockets are the connection; nothing to exchange */
}

/* The traffic class goes on each lane's socket as IP_TOS or IPV6_TCLASS (by the socket's own
 * family; a UNIX socket has none). A refusal is not fatal: the data still flows, unmarked, so
 * it is a WARN naming the peer. */
static void tcp_lane_tclass(struct tcp_ep *ep, int lane, int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    int v = ep->tclass, rc = 0;
    if (v == 0 || getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return;
    if (ss.ss_family == AF_INET)
        rc = setsockopt(fd, IPPROTO_IP, IP_TOS, &v, sizeof(v));
    else if (ss.ss_family == AF_INET6)
        rc = setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &v, sizeof(v));
    if (rc != 0)
        JWARN("TCP fabric: peer %s lane %d: cannot set traffic class %d (%s); sending unmarked",
              ep->base.peer, lane, v, strerror(errno));
}

static int tcp_ep_adopt(struct tcp_ep *ep, const int *socks)
{
    uint64_t now = jaccl_now_ns();
    int rc = 0;

    for (int i = 0; i < ep->nlanes; i++) {
        struct tcp_lane *l = &ep->lane[i];

        if (rc == 0)
            rc = jaccl_sock_adopt(socks[i]);
        if (rc == 0)
            tcp_lane_tclass(ep, i, socks[i]);
        pthread_mutex_lock(&l->send_mu);
        l->fd = socks[i];
        l->last_tx_ns = now;
        pthread_mutex_unlock(&l->send_mu);
    }
    return rc;
}

static void tcp_ep_unwatch(struct tcp_ep *ep)
{
    for (; ep->nwatched > 0; ep->nwatched--)
        fab_swcq_unwatch(ep->cq, ep->lane[ep->nwatched - 1].fd);
}

/* A connect that fails leaves the endpoint in error with its queued work flushed, so the caller
 * sees the same thing as for a connection lost later. The I/O thread never started (io_start
 * failing leaves none behind), so the flush is ours to do. */
static int tcp_ep_connect_failed(struct tcp_ep *ep, int rc)
{
    fab_tcp_ep_fail(ep, -EIO, -1, "could not be connected: %s", strerror(-rc));
    fab_tcp_ep_flush(ep);
    return rc;
}

int fab_tcp_ep_connect(struct tcp_ep *ep, const void *peer_info, size_t len, const int *socks,
                       int nsocks)
{
    int rc;

    if (nsocks != ep->nlanes || ep->lane[0].fd >= 0) {
        for (int i = 0; i < nsocks; i++)
            close(socks[i]);
        return -EINVAL;
    }
    rc = tcp_ep_adopt(ep, socks);
    if (rc == 0)
        rc = fab_tcp_io_start(ep);
    for (int i = 0; rc == 0 && i < ep->nlanes; i++) {
        ep->lane[i].cqfd = (struct fab_cq_fd){&ep->src, 1u << i};
        rc = fab_swcq_watch(ep->cq, ep->lane[i].fd, &ep->lane[i].cqfd);
        ep->nwatched += rc == 0;
    }
    if (rc) {
        tcp_ep_unwatch(ep);
        return tcp_ep_connect_failed(ep, rc);
    }
    /* From now on cq_poll reads the lanes too (see tcp_int.h on who reads a socket). */
    ep->src.drive = fab_tcp_ep_drive;
    ep->src.quiet = fab_tcp_ep_quiet;
    fab_swcq_attach(ep->cq, &ep->src);
    ep->src_attached = 1;
    return 0;
}

void fab_tcp_ep_close(struct tcp_ep *ep)
{
    if (!ep)
        return;
    tcp_ep_unwatch(ep); /* before the sockets go to the reaper, which keeps them open */
    if (ep->src_attached)
        fab_swcq_detach(ep->cq, &ep->src); /* waits for a poller still reading it */
    if (ep->thread_started) {
        atomic_store(&ep->stop, 1);
        fab_tcp_io_wake(ep);
        pthread_join(ep->thread, NULL);
    }
    fab_tcp_mr_forget_ep(ep->dom, ep->id);
    tcp_ep_free(ep, ep->nlanes); /* work is dropped; the sockets end in order (fabric.h) */
}

int fab_tcp_ep_error(struct tcp_ep *ep, const char **reason)
{
    return fab_ep_base_error(&ep->base, reason);
}

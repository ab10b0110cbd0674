/* SPDX-License-Identifier: BSD-3-Clause */
/* Endpoint errors: recording the first cause, and flushing every outstanding work item so the
 * layer above learns about it from the CQ like it would from a verbs QP in error. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "fabric/tcp/tcp_int.h"
#include "util/log.h"

/* `orderly`: the peer closed the connection (end of stream), which is how every normal
 * teardown looks from this side; the log line then does not call it a failure. Whether it was
 * one is for the layer above, which WARNs if a request of its own dies with it. */
/* The lane, and the host its socket leads to when the peer's description does not name it: a
 * connection's lanes may go through different relays (core/relay.h), and the WARN must name the
 * one on the path that broke. */
static void lane_str(const struct tcp_ep *ep, int lane, char *buf, size_t len)
{
    union jaccl_sockaddr a;
    socklen_t alen = sizeof(a);
    char host[64] = "";
    if (ep->lane[lane].fd >= 0 && getpeername(ep->lane[lane].fd, &a.sa, &alen) == 0)
        jaccl_host_str(&a, host, sizeof(host));
    if (host[0] && !strstr(ep->base.peer, host))
        snprintf(buf, len, " (lane %d, through %s)", lane, host);
    else
        snprintf(buf, len, " (lane %d)", lane);
}

static void tcp_ep_down(struct tcp_ep *ep, int err, int lane, int orderly, const char *what)
{
    char full[224], where[96] = "";
    if (lane >= 0)
        lane_str(ep, lane, where, sizeof(where));
    snprintf(full, sizeof(full), "%s%s", what, where);
    pthread_mutex_lock(&ep->mu);
    if (fab_ep_base_err(&ep->base) != 0) {
        pthread_mutex_unlock(&ep->mu);
        return;
    }
    /* Before the status is published: the I/O thread flushes as soon as it sees it. */
    ep->cause_owed = 1;
    ep->fail_lane = lane;
    fab_ep_base_fail(&ep->base, "TCP", ep, err, orderly, full);
    pthread_mutex_unlock(&ep->mu);
    fab_tcp_io_wake(ep);
}

void fab_tcp_ep_fail(struct tcp_ep *ep, int err, int lane, const char *fmt, ...)
{
    char what[160];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    tcp_ep_down(ep, err, lane, 0, what);
}

void fab_tcp_ep_peer_closed(struct tcp_ep *ep, int lane)
{
    tcp_ep_down(ep, -ECONNRESET, lane, 1, "closed the connection");
}

static void tcp_flush_one(struct tcp_ep *ep, int lane, uint64_t wr_id, enum fab_wc_op op)
{
    struct fab_wc wc = {.wr_id = wr_id, .ep = &ep->fab, .op = op, .lane = lane};

    wc.status = FAB_WC_FLUSHED;
    if (ep->cause_owed) {
        wc.status = fab_wc_status_of(fab_ep_base_err(&ep->base));
        ep->cause_owed = 0;
    }
    fab_swcq_push(ep->cq, &wc);
}

/* Within a lane: the RECV that was being filled first (it may be the very one
 * that broke the endpoint: LEN_ERR, REMOTE_ACCESS), then the other RECVs, then the sends. */
static void tcp_flush_lane(struct tcp_ep *ep, struct tcp_lane *l)
{
    pthread_mutex_lock(&l->rx_mu); /* a poller may be reading the lane (tcp_int.h) */
    if (l->rx.have_wr) {
        tcp_flush_one(ep, l->idx, l->rx.wr.wr_id,
                      l->rx.msg.op == TCP_OP_WRITE_IMM ? FAB_WC_RECV_IMM : FAB_WC_RECV);
        l->rx.have_wr = 0;
    }
    l->rx.in_msg = 0;
    pthread_mutex_unlock(&l->rx_mu);
    pthread_mutex_lock(&l->recv_mu);
    for (; l->rq_n; l->rq_n--, l->rq_head = (l->rq_head + 1) % l->rq_cap)
        tcp_flush_one(ep, l->idx, l->rq[l->rq_head].wr_id, FAB_WC_RECV);
    pthread_mutex_unlock(&l->recv_mu);
    pthread_mutex_lock(&l->send_mu);
    for (; l->sq_n; l->sq_n--, l->sq_head = (l->sq_head + 1) % l->sq_cap) {
        const struct tcp_swr *w = &l->sq[l->sq_head];

        if (w->op != TCP_OP_HEARTBEAT)
            tcp_flush_one(ep, l->idx, w->wr_id, w->op == TCP_OP_SEND ? FAB_WC_SEND : FAB_WC_WRITE);
    }
    l->sq_hb = 0;
    pthread_mutex_unlock(&l->send_mu);
}

/* The lane that broke goes first, so the cause lands on its own work when it has any. */
void fab_tcp_ep_flush(struct tcp_ep *ep)
{
    if (ep->fail_lane >= 0)
        tcp_flush_lane(ep, &ep->lane[ep->fail_lane]);
    for (int i = 0; i < ep->nlanes; i++)
        if (i != ep->fail_lane)
            tcp_flush_lane(ep, &ep->lane[i]);
}

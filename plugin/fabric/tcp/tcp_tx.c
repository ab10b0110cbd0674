/* SPDX-License-Identifier: BSD-3-Clause */
/* Send side: each lane keeps a FIFO of posted SEND / WRITE_IMM frames. The poster writes inline
 * when the FIFO was empty (no hop through the I/O thread for the common case); whatever the
 * socket did not take is written by the next thread that polls the endpoint's CQ, or by the I/O
 * thread on EPOLLOUT when nobody polls (tcp_io.c). A send completes once its last byte is in the
 * kernel, like UC's "transmitted". */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "fabric/tcp/tcp_int.h"
#include "util/clock.h"
#include "util/counters.h"

/* Frames gathered into one sendmsg() when several small ones are queued. */
#define TCP_TX_FRAMES 32

static size_t tcp_swr_left(const struct tcp_swr *w)
{
    return sizeof(w->hdr) + w->len - w->done;
}

/* iovecs for up to TCP_TX_FRAMES queued frames, the head one resumed where it stopped. */
static int tcp_tx_iov(struct tcp_lane *l, struct iovec *iov)
{
    int k = 0;

    for (uint32_t i = 0; i < l->sq_n && i < TCP_TX_FRAMES; i++) {
        struct tcp_swr *w = &l->sq[(l->sq_head + i) % l->sq_cap];
        size_t hd = w->done < sizeof(w->hdr) ? w->done : sizeof(w->hdr);
        size_t pd = w->done - hd;

        if (hd < sizeof(w->hdr)) {
            iov[k].iov_base = (char *)&w->hdr + hd;
            iov[k++].iov_len = sizeof(w->hdr) - hd;
        }
        if (pd < w->len) {
            iov[k].iov_base = (char *)w->buf + pd;
            iov[k++].iov_len = w->len - pd;
        }
    }
    return k;
}

static void tcp_tx_complete(struct tcp_ep *ep, struct tcp_lane *l, const struct tcp_swr *w)
{
    struct fab_wc wc = {
            .wr_id = w->wr_id, .ep = &ep->fab, .status = FAB_WC_OK, .len = w->len, .lane = l->idx};

    if (w->op == TCP_OP_HEARTBEAT) {
        l->sq_hb = 0;
        return;
    }
    wc.op = w->op == TCP_OP_SEND ? FAB_WC_SEND : FAB_WC_WRITE;
    fab_swcq_push(ep->cq, &wc);
}

/* Retires the frames the kernel took `n` bytes of, in order. */
static void tcp_tx_account(struct tcp_ep *ep, struct tcp_lane *l, size_t n)
{
    while (l->sq_n) {
        struct tcp_swr *w = &l->sq[l->sq_head];
        size_t left = tcp_swr_left(w);

        if (n < left) {
            w->done += n;
            return;
        }
        n -= left;
        tcp_tx_complete(ep, l, w);
        l->sq_head = (l->sq_head + 1) % l->sq_cap;
        l->sq_n--;
    }
}

/* The socket refused a send for good: the endpoint fails (send_mu before ep->mu is the lock
 * order, so fab_tcp_ep_fail may run under send_mu). */
static int tcp_tx_failed(struct tcp_ep *ep, struct tcp_lane *l, int err)
{
    fab_tcp_ep_fail(ep, -err, l->idx, "send failed: %s",
                    err == EPIPE ? "connection closed" : strerror(err));
    return -err;
}

int fab_tcp_tx_progress(struct tcp_ep *ep, struct tcp_lane *l)
{
    struct iovec iov[2 * TCP_TX_FRAMES];
    struct msghdr mh = {.msg_iov = iov};
    ssize_t n;

    while (l->sq_n) {
        mh.msg_iovlen = (size_t)tcp_tx_iov(l, iov);
        n = sendmsg(l->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        jaccl_count(JACCL_CNT_SENDMSG, 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return tcp_tx_failed(ep, l, errno);
        }
        l->last_tx_ns = jaccl_now_ns();
        tcp_tx_account(ep, l, (size_t)n);
    }
    atomic_store_explicit(&l->tx_left, l->sq_n != 0, memory_order_relaxed);
    return l->sq_n == 0;
}

/* Queues a frame (caller holds send_mu) and, if it is alone, starts writing it right here. */
static int tcp_tx_post(struct tcp_ep *ep, struct tcp_lane *l, const struct tcp_swr *w)
{
    if (fab_ep_base_err(&ep->base) != 0)
        return -ENOTCONN;
    if (w->op != TCP_OP_HEARTBEAT && l->sq_n - l->sq_hb >= (uint32_t)ep->max_send_wr)
        return -EAGAIN;
    l->sq[(l->sq_head + l->sq_n) % l->sq_cap] = *w;
    l->sq_n++;
    if (w->op == TCP_OP_HEARTBEAT)
        l->sq_hb = 1;
    /* Not alone: the frame ahead is waiting for EPOLLOUT, which the I/O thread will get. */
    if (l->fd < 0 || l->sq_n > 1) {
        atomic_store_explicit(&l->tx_left, 1, memory_order_relaxed);
        return 0;
    }
    /* An error fails the endpoint; the frame is queued, so it reaches the caller as a
     * completion. */
    fab_tcp_tx_progress(ep, l);
    return 0;
}

static int tcp_tx_submit(struct tcp_ep *ep, int lane, const struct tcp_swr *w, struct tcp_mr *mr)
{
    struct tcp_lane *l;
    int rc;

    if (lane < 0 || lane >= ep->nlanes)
        return -EINVAL;
    if (fab_tcp_mr_check_local(ep->dom, mr, w->buf, w->len))
        return -EINVAL;
    l = &ep->lane[lane];
    pthread_mutex_lock(&l->send_mu);
    rc = tcp_tx_post(ep, l, w);
    pthread_mutex_unlock(&l->send_mu);
    return rc;
}

/* A SEND (dst unused: 0; imm 0 unless post_send_imm) or a WRITE_IMM. */
static int tcp_post(struct tcp_ep *ep, int lane, const void *buf, size_t len, struct tcp_mr *mr,
                    uint16_t op, uint32_t imm, struct fab_remote_buf dst, uint64_t wr_id)
{
    struct tcp_swr w = {.wr_id = wr_id, .buf = buf, .op = op};

    if (len > TCP_MAX_MSG)
        return -EMSGSIZE;
    w.len = (uint32_t)len;
    w.hdr = tcp_hdr_make(op, w.len, imm, dst.addr, dst.rkey);
    return tcp_tx_submit(ep, lane, &w, mr);
}

int fab_tcp_post_send(struct tcp_ep *ep, int lane, const void *buf, size_t len, struct tcp_mr *mr,
                      uint64_t wr_id)
{
    return tcp_post(ep, lane, buf, len, mr, TCP_OP_SEND, 0, (struct fab_remote_buf){0}, wr_id);
}

int fab_tcp_post_send_imm(struct tcp_ep *ep, int lane, const void *buf, size_t len,
                          struct tcp_mr *mr, uint32_t imm, uint64_t wr_id)
{
    if (imm > FAB_IMM_MAX)
        return -EINVAL;
    return tcp_post(ep, lane, buf, len, mr, TCP_OP_SEND, imm, (struct fab_remote_buf){0}, wr_id);
}

int fab_tcp_post_write_imm(struct tcp_ep *ep, int lane, const void *buf, size_t len,
                           struct tcp_mr *mr, struct fab_remote_buf dst, uint32_t imm,
                           uint64_t wr_id)
{
    return tcp_post(ep, lane, buf, len, mr, TCP_OP_WRITE_IMM, imm, dst, wr_id);
}

uint64_t fab_tcp_tx_heartbeat(struct tcp_ep *ep, struct tcp_lane *l, uint64_t now)
{
    uint64_t period = ep->liveness_ns / 4;
    struct tcp_swr hb = {.op = TCP_OP_HEARTBEAT};
    uint64_t due;

    hb.hdr = tcp_hdr_make(TCP_OP_HEARTBEAT, 0, 0, 0, 0);
    /* Taken: somebody is writing this lane right now, so it is not idle; look again soon
     * rather than make the writer's unlock wake this thread. */
    if (pthread_mutex_trylock(&l->send_mu) != 0)
        return now + TCP_HB_RETRY_NS;
    /* A lane with frames queued is not idle: the peer will hear from it when the socket
     * drains, and a heartbeat could not overtake them anyway. */
    if (l->sq_n == 0 && now >= l->last_tx_ns && now - l->last_tx_ns >= period) {
        l->last_tx_ns = now; /* one attempt per period even if the socket is full */
        tcp_tx_post(ep, l, &hb);
    }
    /* Frames still queued wait for EPOLLOUT, not for a timer. */
    due = l->sq_n ? UINT64_MAX : l->last_tx_ns + period;
    pthread_mutex_unlock(&l->send_mu);
    return due;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive side of a lane, run under the lane's rx_mu by the endpoint's I/O thread or by a thread
 * polling the endpoint's CQ (see tcp_int.h).
 *
 * Headers are read into a small staging buffer, several at a time when small frames queue up;
 * a payload is received straight into its destination (the RECV's buffer, or the registered
 * memory a WRITE_IMM names) with the staging buffer as a second iovec that catches the next
 * header(s) in the same system call. Only payload bytes that arrived together with their header
 * (at most TCP_STAGE) are copied. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "fabric/tcp/tcp_int.h"
#include "util/clock.h"
#include "util/counters.h"

#define TCP_RX_DRY (-2) /* the socket has nothing more for now */

int fab_tcp_post_recv(struct tcp_ep *ep, int lane, void *buf, size_t cap, struct tcp_mr *mr,
                      uint64_t wr_id)
{
    struct tcp_lane *l;
    int rc = 0;

    if (lane < 0 || lane >= ep->nlanes)
        return -EINVAL;
    if (fab_tcp_mr_check_local(ep->dom, mr, buf, cap))
        return -EINVAL;
    l = &ep->lane[lane];
    pthread_mutex_lock(&l->recv_mu);
    if (fab_ep_base_err(&ep->base) != 0) {
        rc = -ENOTCONN;
    } else if (l->rq_n >= l->rq_cap) {
        rc = -EAGAIN;
    } else {
        struct tcp_rwr *w = &l->rq[(l->rq_head + l->rq_n) % l->rq_cap];

        w->wr_id = wr_id;
        w->buf = buf;
        w->cap = cap;
        l->rq_n++;
    }
    pthread_mutex_unlock(&l->recv_mu);
    return rc;
}

static int tcp_rx_pop(struct tcp_lane *l)
{
    int rc = -1;

    pthread_mutex_lock(&l->recv_mu);
    if (l->rq_n) {
        l->rx.wr = l->rq[l->rq_head];
        l->rx.have_wr = 1;
        l->rq_head = (l->rq_head + 1) % l->rq_cap;
        l->rq_n--;
        rc = 0;
    }
    pthread_mutex_unlock(&l->recv_mu);
    return rc;
}

/* Checked before a RECV is consumed, as a verbs responder checks the rkey first. Zero-length
 * writes are not checked: verbs does not validate the rkey of a zero-length RDMA WRITE either. */
static int tcp_rx_check_write(struct tcp_ep *ep, struct tcp_lane *l, const struct tcp_msg *m)
{
    struct tcp_mr *mr;

    if (m->len == 0)
        return 0;
    if (fab_tcp_mr_pin(ep, m->rkey, m->raddr, m->len, &mr) == 0) {
        fab_tcp_mr_unpin(mr);
        return 0;
    }
    fab_tcp_ep_fail(ep, -EACCES, l->idx,
                    "wrote %u bytes at 0x%llx with key 0x%llx, outside the live registrations "
                    "advertised on this connection",
                    m->len, (unsigned long long)m->raddr, (unsigned long long)m->rkey);
    return -1;
}

/* Parses the header at the front of the staging buffer and picks the message's destination. */
static int tcp_rx_begin(struct tcp_ep *ep, struct tcp_lane *l)
{
    struct tcp_rx *rx = &l->rx;
    struct tcp_hdr h;

    memcpy(&h, rx->stage + rx->off, sizeof(h));
    rx->off += sizeof(h);
    const char *bad = tcp_frame_check(&h, &rx->msg);
    if (bad) {
        fab_tcp_ep_fail(ep, -EPROTO, l->idx, "%s (type %u)", bad, rx->msg.op);
        return -1;
    }
    if (rx->msg.op == TCP_OP_HEARTBEAT)
        return 0;
    if (rx->msg.len > TCP_OWN_MAX_MSG)
        atomic_store_explicit(&ep->big_rx_ns, jaccl_now_ns(), memory_order_relaxed);
    if (rx->msg.op == TCP_OP_WRITE_IMM && tcp_rx_check_write(ep, l, &rx->msg))
        return -1;
    if (tcp_rx_pop(l)) {
        fab_tcp_ep_fail(ep, -ENOMSG, l->idx, "sent a %u-byte %s with no RECV posted", rx->msg.len,
                        rx->msg.op == TCP_OP_SEND ? "SEND" : "WRITE_IMM");
        return -1;
    }
    if (rx->msg.op == TCP_OP_SEND && rx->wr.cap < rx->msg.len) {
        fab_tcp_ep_fail(ep, -EMSGSIZE, l->idx, "sent %u bytes into a %zu-byte RECV", rx->msg.len,
                        rx->wr.cap);
        return -1;
    }
    rx->in_msg = 1;
    rx->got = 0;
    return 0;
}

static void tcp_rx_finish(struct tcp_ep *ep, struct tcp_lane *l)
{
    struct tcp_rx *rx = &l->rx;
    struct fab_wc wc = {.wr_id = rx->wr.wr_id,
                        .ep = &ep->fab,
                        .status = FAB_WC_OK,
                        .len = rx->msg.len,
                        .lane = l->idx};

    wc.op = rx->msg.op == TCP_OP_WRITE_IMM ? FAB_WC_RECV_IMM : FAB_WC_RECV;
    wc.imm = rx->msg.imm; /* a SEND's: post_send_imm's, 0 from post_send */
    rx->have_wr = 0;
    rx->in_msg = 0;
    fab_swcq_push(ep->cq, &wc);
}

/* The peer closed the lane. That fails nothing yet, even in mid-message: its other lanes may
 * still carry whole messages it sent before closing, and the RECVs they fill must complete
 * (a peer that failed its own next operation closes in mid-message, but what it sent for the
 * previous one is complete). The endpoint fails once every lane is closed; the cut-short
 * message's RECV then carries the failure. */
static ssize_t tcp_rx_eof(struct tcp_ep *ep, struct tcp_lane *l)
{
    int none = -1;

    if (l->rx.in_msg || l->rx.off < l->rx.end)
        atomic_compare_exchange_strong(&ep->cut_lane, &none, l->idx);
    l->rx.eof = 1;
    l->rx.drained = 1;
    if (atomic_fetch_add(&ep->neof, 1) + 1 < ep->nlanes)
        return TCP_RX_DRY;
    int cut = atomic_load(&ep->cut_lane);
    if (cut >= 0)
        fab_tcp_ep_fail(ep, -ECONNRESET, cut, "closed the connection in mid-message");
    else
        fab_tcp_ep_peer_closed(ep, l->idx);
    return -1;
}

/* One recvmsg(); bytes read, TCP_RX_DRY, or -1 with the endpoint failed. */
static ssize_t tcp_rx_read(struct tcp_ep *ep, struct tcp_lane *l, struct iovec *iov, int niov)
{
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
    size_t asked = 0;
    ssize_t n;

    do {
        n = recvmsg(l->fd, &mh, MSG_DONTWAIT);
        jaccl_count(l->rx.polling ? JACCL_CNT_RECVMSG_POLL : JACCL_CNT_RECVMSG, 1);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        for (int i = 0; i < niov; i++)
            asked += iov[i].iov_len;
        /* A short read emptied the socket: whatever comes next raises a new edge, so the
         * EAGAIN-returning recvmsg() that would confirm it can be skipped. Not once the peer
         * hung up: its EOF came with the edge already consumed, only a read can see it. */
        l->rx.drained = (size_t)n < asked && !l->rx.hup;
        return n;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return TCP_RX_DRY;
    if (n == 0)
        return tcp_rx_eof(ep, l);
    int err = errno;
    fab_tcp_ep_fail(ep, -err, l->idx, "connection failed: %s", strerror(err));
    return -1;
}

/* Refills the staging buffer when it holds less than a header. */
static ssize_t tcp_rx_fill(struct tcp_ep *ep, struct tcp_lane *l)
{
    struct tcp_rx *rx = &l->rx;
    uint32_t have = rx->end - rx->off;
    struct iovec iov;
    ssize_t n;

    memmove(rx->stage, rx->stage + rx->off, have);
    rx->off = 0;
    rx->end = have;
    iov.iov_base = rx->stage + have;
    iov.iov_len = TCP_STAGE - have;
    n = tcp_rx_read(ep, l, &iov, 1);
    if (n > 0)
        rx->end += (uint32_t)n;
    return n;
}

/* Lands payload bytes: first those already staged, then straight from the socket. For a
 * WRITE_IMM the registration is pinned around each copy, so a racing mr_dereg either waits for
 * it or makes the write fail before any byte touches the freed range. */
static ssize_t tcp_rx_payload(struct tcp_ep *ep, struct tcp_lane *l)
{
    struct tcp_rx *rx = &l->rx;
    uint32_t want = rx->msg.len - rx->got;
    struct tcp_mr *mr = NULL;
    struct iovec iov[2];
    char *dst;
    ssize_t n;

    if (rx->msg.op == TCP_OP_SEND) {
        dst = rx->wr.buf + rx->got;
    } else {
        if (fab_tcp_mr_pin(ep, rx->msg.rkey, rx->msg.raddr, rx->msg.len, &mr)) {
            fab_tcp_ep_fail(ep, -EACCES, l->idx,
                            "wrote into memory deregistered while the write landed");
            return -1;
        }
        dst = (char *)(uintptr_t)rx->msg.raddr + rx->got;
    }
    if (rx->off < rx->end) {
        n = rx->end - rx->off < want ? rx->end - rx->off : want;
        memcpy(dst, rx->stage + rx->off, (size_t)n);
        jaccl_count(JACCL_CNT_STAGE_BYTES, (uint64_t)n);
        rx->off += (uint32_t)n;
        rx->got += (uint32_t)n;
        n = 0; /* nothing read from the socket */
    } else {
        rx->off = rx->end = 0;
        iov[0] = (struct iovec){.iov_base = dst, .iov_len = want};
        iov[1] = (struct iovec){.iov_base = rx->stage, .iov_len = TCP_STAGE};
        n = tcp_rx_read(ep, l, iov, 2);
        if (n > 0) {
            rx->got += (uint32_t)(n < want ? n : want);
            rx->end = n > want ? (uint32_t)(n - want) : 0;
        }
    }
    if (mr)
        fab_tcp_mr_unpin(mr);
    return n;
}

static ssize_t tcp_rx_step(struct tcp_ep *ep, struct tcp_lane *l)
{
    struct tcp_rx *rx = &l->rx;

    if (rx->eof)
        return TCP_RX_DRY;

    if (rx->in_msg) {
        if (rx->got == rx->msg.len) {
            tcp_rx_finish(ep, l);
            return 0;
        }
        if (rx->off == rx->end && rx->drained)
            return TCP_RX_DRY;
        return tcp_rx_payload(ep, l);
    }
    if (rx->end - rx->off >= sizeof(struct tcp_hdr))
        return tcp_rx_begin(ep, l);
    return rx->drained ? TCP_RX_DRY : tcp_rx_fill(ep, l);
}

int fab_tcp_rx_service(struct tcp_ep *ep, struct tcp_lane *l)
{
    size_t total = 0;
    ssize_t n = 0;
    int done = 0;

    size_t budget = l->rx.polling ? TCP_RX_POLL_BUDGET : TCP_RX_BUDGET;

    while (total < budget) {
        int was_in_msg = l->rx.in_msg;

        n = tcp_rx_step(ep, l);
        if (n < 0)
            break;
        done += was_in_msg && !l->rx.in_msg;
        total += (size_t)n;
    }
    if (total)
        atomic_store_explicit(&l->last_rx_ns, jaccl_now_ns(), memory_order_relaxed);
    if (n == TCP_RX_DRY)
        l->rx.ready = 0;
    atomic_store_explicit(&l->rx_left,
                          l->rx.off < l->rx.end || (l->rx.in_msg && l->rx.got == l->rx.msg.len),
                          memory_order_relaxed);
    return n == -1 ? -EPIPE : done;
}

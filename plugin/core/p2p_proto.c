/* SPDX-License-Identifier: BSD-3-Clause */
/* The p2p data path: irecv posts receives and a CTS, isend matches CTSs in order and writes,
 * test drives completions. Every function takes the comm lock; nothing blocks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/api.h"
#include "core/err.h"
#include "core/p2p.h"
#include "core/registry.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/counters.h"
#include "util/log.h"

static const char *p2p_dir(const struct p2p_comm *c)
{
    return c->hdr.kind == COMM_SEND ? "connection to" : "connection from";
}

/* The comm's failure is about to reach the caller as an error: say why, once. */
static void p2p_warn_owed(struct p2p_comm *c)
{
    const char *why = "";
    if (jaccl_sticky_warn_once(&c->fail) && jaccl_sticky_get(&c->fail, &why))
        JWARN("%s %s on device %d: %s", p2p_dir(c), c->peer, c->hdr.dev, why);
}

int p2p_fail(struct p2p_comm *c, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int first = jaccl_sticky_vset(&c->fail, err, fmt, ap);
    va_end(ap);
    if (!first)
        return jaccl_sticky_status(&c->fail); /* only the first failure is worth a WARN */
    p2p_warn_owed(c);
    return err;
}

/* An endpoint failure is recorded at once but WARNed only when it fails a request (now, or a
 * later call): a peer closing after our last request completed is a clean end, not news. */
static void p2p_fail_ep(struct p2p_comm *c, int err, const char *why)
{
    if (jaccl_sticky_set(&c->fail, err, "%s", why))
        JINFO(NCCL_NET, "%s %s on device %d failed: %s", p2p_dir(c), c->peer, c->hdr.dev, why);
}

static int p2p_failed(const struct p2p_comm *c)
{
    return jaccl_sticky_status(&c->fail) != 0;
}

static int req_done(const struct p2p_req *r)
{
    return r->chunks_done >= r->nlanes;
}

static int p2p_pending(const struct p2p_comm *c)
{
    for (int i = 0; i < P2P_NSLOTS; i++)
        if (c->reqs[i].used && !req_done(&c->reqs[i]))
            return 1;
    return 0;
}

/* Send side: a CTS landed in one of our control buffers. */
static void on_cts(struct p2p_comm *c, const struct fab_wc *wc)
{
    unsigned idx = P2P_WR_IDX(wc->wr_id);
    struct p2p_cts cts;
    if (p2p_cts_decode(&c->ctrl[idx], wc->len, c->next_seq, c->nlanes, &cts) != 0 ||
        c->cts_tail - c->cts_head >= P2P_CTRL_BUFS) {
        p2p_fail(c, -EPROTO, "malformed or out-of-order clear-to-send (seq %u)", c->next_seq);
        return;
    }
    c->next_seq++;
    c->cts_q[c->cts_tail++ % P2P_CTRL_BUFS] = cts;
    int rc = c->ops->post_recv(c->ep, 0, &c->ctrl[idx], sizeof(cts), c->ctrl_mr, wc->wr_id);
    if (rc != 0)
        p2p_fail(c, rc, "reposting a control receive failed (%d)", rc);
}

/* Receive side: one stripe of a message landed. */
static void on_chunk(struct p2p_comm *c, const struct fab_wc *wc)
{
    unsigned slot = P2P_IMM_SLOT(wc->imm);
    struct p2p_req *r = slot < P2P_NSLOTS ? &c->reqs[slot] : NULL;
    uint32_t lane_bit = 1u << wc->lane;
    /* The receive we consumed names the request we posted it for; the immediate names the one
     * the sender wrote. They must agree, or a message went missing or astray. */
    if (!r || !r->used || r->is_send || P2P_WR_SEQ(wc->wr_id) != r->seq ||
        (r->lanes_seen & lane_bit) || r->size + wc->len > r->cap) {
        p2p_fail(c, -EPROTO, "unexpected data (slot %u, seq %u, %u bytes, lane %d)", slot,
                 P2P_WR_SEQ(wc->wr_id), wc->len, wc->lane);
        return;
    }
    r->lanes_seen |= lane_bit;
    r->size += wc->len;
    r->chunks_done++;
    if (wc->imm & P2P_IMM_TRUNC)
        r->trunc = 1;
}

static void on_wc(struct p2p_comm *c, const struct fab_wc *wc)
{
    if (wc->status != FAB_WC_OK) {
        if (p2p_failed(c))
            return; /* the flush of a comm already failed (its endpoint may be closed) */
        const char *why;
        int rc = jaccl_wc_failure(c->ops, c->ep, wc->status, &why);
        p2p_fail_ep(c, rc, why);
        return;
    }
    /* After a failure only data completions still count: a request whose bytes got through
     * before the peer went away is complete (the flush comes after them on each lane, but
     * another lane's success may follow it in the CQ). */
    if (p2p_failed(c) && P2P_WR_TYPE(wc->wr_id) != WR_DATA_RECV &&
        P2P_WR_TYPE(wc->wr_id) != WR_DATA_WRITE)
        return;
    switch (P2P_WR_TYPE(wc->wr_id)) {
    case WR_CTRL_RECV:
        on_cts(c, wc);
        break;
    case WR_DATA_RECV:
        on_chunk(c, wc);
        break;
    case WR_DATA_WRITE:
        c->reqs[P2P_WR_IDX(wc->wr_id) % P2P_NSLOTS].chunks_done++;
        break;
    case WR_CTRL_SEND:
        break;
    default:
        p2p_fail(c, -EFAULT, "completion with unknown id %#llx", (unsigned long long)wc->wr_id);
    }
}

/* Drains the CQ even once the comm has failed, so that completions queued behind the failure
 * still finish their requests. */
void p2p_progress(struct p2p_comm *c)
{
    struct fab_wc wc[16];
    int n;
    while ((n = c->ops->cq_poll(c->cq, wc, 16)) > 0)
        for (int i = 0; i < n; i++)
            on_wc(c, &wc[i]);
    if (n < 0)
        p2p_fail(c, n, "its completion queue lost a completion (out of memory)");
    if (p2p_failed(c) && p2p_pending(c))
        p2p_warn_owed(c);
    p2p_close_failed(c);
}

/* A comm that failed, for whatever reason, closes its endpoint at once: the peer then fails
 * promptly instead of waiting for NCCL to close this side, and no buffer is touched again.
 * Completions already queued stay in the CQ and are still polled (see on_wc). */
void p2p_close_failed(struct p2p_comm *c)
{
    if (!p2p_failed(c) || !c->ep)
        return;
    c->ops->ep_close(c->ep);
    c->ep = NULL;
}

/* ---- receive ---- */

static int lanes_for(const struct p2p_comm *c, size_t cap)
{
    size_t n = cap / c->min_chunk;
    return n < 1 ? 1 : n > (size_t)c->nlanes ? c->nlanes : (int)n;
}

static int post_irecv(struct p2p_comm *c, struct p2p_req *r, void *data, size_t cap, int tag,
                      struct jaccl_mh *mh)
{
    const struct fab_ops *ops = c->ops;
    r->nlanes = lanes_for(c, cap);
    r->lane0 = (int)(r->seq % (uint32_t)c->nlanes);
    for (int i = 0; i < r->nlanes; i++) {
        int lane = (r->lane0 + i) % c->nlanes;
        int rc = ops->post_recv(c->ep, lane, NULL, 0, NULL, P2P_WR(WR_DATA_RECV, r->seq, lane));
        if (rc != 0)
            return p2p_fail(c, rc, "posting a receive failed");
    }
    struct fab_remote_buf rb = {0, 0};
    if (cap > 0)
        rb = ops->mr_remote(mh->mr, c->ep, data);
    struct p2p_cts *cts = &c->ctrl[r->seq % P2P_CTRL_BUFS];
    *cts = (struct p2p_cts){.magic = P2P_CTS_MAGIC,
                            .seq = r->seq,
                            .addr = rb.addr,
                            .rkey = rb.rkey,
                            .cap = cap,
                            .tag = tag,
                            .nlanes = (uint16_t)r->nlanes,
                            .lane0 = (uint16_t)r->lane0};
    int rc = ops->post_send(c->ep, 0, cts, sizeof(*cts), c->ctrl_mr,
                            P2P_WR(WR_CTRL_SEND, r->seq, 0));
    if (rc != 0)
        return p2p_fail(c, rc, "sending a clear-to-send failed");
    return 0;
}

static int p2p_irecv(void *recvComm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
                     void **request)
{
    if (!request)
        return -EFAULT;
    *request = NULL; /* NCCL may have preloaded 0x1 */
    struct p2p_comm *c = (struct p2p_comm *)jaccl_comm_check(recvComm, COMM_RECV, "irecv");
    if (!c)
        return -EBADF;
    if (n != 1 || !data || !sizes || !tags || !mhandles) {
        JWARN("irecv: %d buffers requested; jaccl reports maxRecvs = 1", n);
        return n != 1 ? -EMSGSIZE : -EFAULT;
    }
    int rc = jaccl_mh_covers(mhandles[0], data[0], sizes[0], "irecv");
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&c->lock);
    rc = jaccl_sticky_status(&c->fail);
    struct p2p_req *r = &c->reqs[c->next_seq % P2P_NSLOTS];
    if (rc == 0 && !r->used) {
        *r = (struct p2p_req){.magic = P2P_REQ_MAGIC,
                              .comm = c,
                              .used = 1,
                              .seq = c->next_seq,
                              .cap = sizes[0],
                              .t_start = jaccl_now_ns()};
        c->next_seq++;
        rc = post_irecv(c, r, data[0], sizes[0], tags[0], mhandles[0]);
        if (rc == 0)
            *request = r;
    }
    if (rc != 0)
        p2p_warn_owed(c);
    p2p_close_failed(c);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

ncclResult_t jaccl_irecv(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                         void **mhandles, void **phandles, void **request)
{
    return jaccl_err_to_nccl(p2p_irecv(recvComm, n, data, sizes, tags, mhandles, request));
}

/* ---- send ---- */

static int post_isend(struct p2p_comm *c, struct p2p_req *r, const struct p2p_cts *cts, char *data,
                      struct jaccl_mh *mh)
{
    const struct fab_ops *ops = c->ops;
    size_t per = (r->size + (size_t)cts->nlanes - 1) / cts->nlanes;
    per = (per + P2P_ALIGN - 1) / P2P_ALIGN * P2P_ALIGN;
    uint32_t flags = r->trunc ? P2P_IMM_TRUNC : 0;
    for (int i = 0; i < cts->nlanes; i++) {
        size_t off = (size_t)i * per, len = 0;
        if (!r->trunc && off < r->size)
            len = r->size - off < per ? r->size - off : per;
        struct fab_remote_buf dst = {cts->addr + (len ? off : 0), cts->rkey};
        int lane = (cts->lane0 + i) % c->nlanes;
        int rc = ops->post_write_imm(c->ep, lane, len ? data + off : NULL, len, len ? mh->mr : NULL,
                                     dst, P2P_IMM(cts->seq % P2P_NSLOTS, flags),
                                     P2P_WR(WR_DATA_WRITE, cts->seq, cts->seq % P2P_NSLOTS));
        if (rc != 0)
            return p2p_fail(c, rc, "posting a write failed (%d)", rc);
    }
    return 0;
}

static int start_send(struct p2p_comm *c, void *data, size_t size, int tag, struct jaccl_mh *mh,
                      void **request)
{
    if (c->cts_head == c->cts_tail)
        return 0; /* the receiver has not asked yet: NCCL retries */
    const struct p2p_cts *cts = &c->cts_q[c->cts_head % P2P_CTRL_BUFS];
    struct p2p_req *r = &c->reqs[cts->seq % P2P_NSLOTS];
    if (r->used)
        return 0;
    if (cts->tag != tag)
        return p2p_fail(c, -EINVAL, "isend tag %d does not match the receive's tag %d", tag,
                        cts->tag);
    *r = (struct p2p_req){.magic = P2P_REQ_MAGIC,
                          .comm = c,
                          .used = 1,
                          .is_send = 1,
                          .seq = cts->seq,
                          .nlanes = cts->nlanes,
                          .size = size,
                          .cap = cts->cap,
                          .t_start = jaccl_now_ns()};
    if (size > cts->cap) {
        JWARN("isend of %zu bytes to %s: the receiver posted only %llu bytes (message truncated)",
              size, c->peer, (unsigned long long)cts->cap);
        r->trunc = 1;
    }
    c->cts_head++;
    int rc = post_isend(c, r, cts, data, mh);
    if (rc == 0)
        *request = r;
    return rc;
}

static int p2p_isend(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                     void **request)
{
    if (!request)
        return -EFAULT;
    *request = NULL;
    struct p2p_comm *c = (struct p2p_comm *)jaccl_comm_check(sendComm, COMM_SEND, "isend");
    if (!c)
        return -EBADF;
    int rc = jaccl_mh_covers(mhandle, data, size, "isend");
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&c->lock);
    p2p_progress(c);
    rc = jaccl_sticky_status(&c->fail);
    if (rc == 0)
        rc = start_send(c, data, size, tag, mhandle, request);
    if (rc != 0)
        p2p_warn_owed(c);
    p2p_close_failed(c);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

ncclResult_t jaccl_isend(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                         void *phandle, void **request)
{
    return jaccl_err_to_nccl(p2p_isend(sendComm, data, size, tag, mhandle, request));
}

/* ---- test ---- */

/* Waiting is fine (the peer may be busy), but not silently: say so, less and less often. */
static void warn_if_stuck(struct p2p_comm *c, struct p2p_req *r)
{
    uint64_t now = jaccl_now_ns(), waited = now - r->t_start;
    /* First at twice the liveness deadline: a dead or silent peer has been reported by then. */
    uint64_t next = r->t_warn ? r->t_warn * 2 : 2 * jaccl_timeout_ns();
    if (waited < next)
        return;
    r->t_warn = waited;
    JWARN("%s %s: request seq %u still pending after %.1f s (connection healthy, waiting)",
          r->is_send ? "send to" : "receive from", c->peer, r->seq, (double)waited / 1e9);
}

static int p2p_test(void *request, int *done, int *sizes)
{
    jaccl_count(JACCL_CNT_TEST, 1);
    struct p2p_req *r = jaccl_reg_find(request, JO_P2P_REQ, "test", NULL);
    if (!r || !done)
        return -EFAULT;
    struct p2p_comm *c = r->comm;
    pthread_mutex_lock(&c->lock);
    if (!r->used) {
        pthread_mutex_unlock(&c->lock);
        JWARN("test: request %p to/from %s is not in flight (already completed?)", request,
              c->peer);
        return -EALREADY;
    }
    *done = 0;
    p2p_progress(c);
    int rc = jaccl_sticky_status(&c->fail);
    /* A request whose data got through is done, whatever broke the comm afterwards: NCCL's
     * proxy keeps testing its last sends after the peer destroyed its communicator. */
    if (req_done(r)) {
        if (r->trunc && !r->is_send)
            JWARN("message truncated: %s sent more than the %zu bytes posted (seq %u)", c->peer,
                  r->cap, r->seq);
        rc = r->trunc ? -EMSGSIZE : 0;
        *done = 1;
        if (sizes)
            sizes[0] = (int)r->size;
    }
    if (rc != 0 || *done)
        r->used = 0;
    else
        warn_if_stuck(c, r);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

ncclResult_t jaccl_test(void *request, int *done, int *sizes)
{
    return jaccl_err_to_nccl(p2p_test(request, done, sizes));
}

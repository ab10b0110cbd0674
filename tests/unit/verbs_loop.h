/* SPDX-License-Identifier: BSD-3-Clause */
/* Loopback fake verbs: verbs_fake.h's devices, with a data path that moves bytes between fake
 * queue pairs connected to each other (the RTR transition's dest_qp_num), so that the verbs
 * back end runs whole (progress threads, side channel, reliability protocol) in one process.
 *
 *  - RDMA_WRITE_WITH_IMM: checks the local buffer against the sender's registrations (else a
 *    local protection error CQE), the remote range and rkey against the registrations of the
 *    target QP's protection domain (else the target's receive completes with a remote access
 *    error, and on RC the sender's WR too), copies the bytes, consumes one posted receive of
 *    the target and completes it (RECV_RDMA_WITH_IMM, the immediate, the length), and completes
 *    the sender's WR when signaled.
 *  - UC semantics: a message to a QP with no receive posted, not ready to receive (RTR), or
 *    gone is dropped without a trace, as a UC responder does; each drop is counted
 *    (lp_drops_no_recv, lp_drops_dead), so a test can assert there were none. RC: a message
 *    to a QP that is gone fails the sender's WR (retries exceeded).
 *  - Completion channels: a CQE on an armed CQ (req_notify_cq) queues one event on its channel
 *    and makes the channel's fd readable, which is what the back end's progress thread epolls.
 *  - A QP moved to ERR completes its posted receives with WR_FLUSH_ERR.
 * One mutex (lp_mu) guards all of it; it is a leaf: nothing here calls back into the back end.
 * Included by the test files that use it (each test is one file). */
#ifndef TEST_VERBS_LOOP_H
#define TEST_VERBS_LOOP_H

#include <pthread.h>
#include <stdint.h>

#include "verbs_fake.h"

#define LP_MAX_QPS   256
#define LP_MAX_EVENT 256

struct lp_cq;

struct lp_chan {
    struct ibv_comp_channel ch; /* first: the library hands out &lp_chan.ch */
    struct lp_cq *ev[LP_MAX_EVENT];
    int nev;
};

struct lp_cq {
    struct ibv_cq cq; /* first */
    struct lp_chan *chan;
    struct ibv_wc *ring;
    uint32_t cap, head, n;
    int armed;
};

struct lp_qp {
    struct ibv_qp qp; /* first */
    struct lp_cq *scq, *rcq;
    uint32_t dest;
    uint64_t *rq; /* posted receives' wr_ids */
    uint32_t rq_cap, rq_head, rq_n;
};

struct lp_mr {
    struct ibv_mr mr; /* first */
    struct lp_mr *next;
};

static pthread_mutex_t lp_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lp_qp *lp_qps[LP_MAX_QPS];
static struct lp_mr *lp_mrs;
static uint32_t lp_key_seq;
static uint64_t lp_drops_no_recv, lp_drops_dead, lp_cq_overruns;

FK_FN void lp_reset(void)
{
    fk_reset();
    pthread_mutex_lock(&lp_mu);
    lp_drops_no_recv = lp_drops_dead = lp_cq_overruns = 0;
    pthread_mutex_unlock(&lp_mu);
}

/* ---- completion queues and channels ---- */

static struct ibv_comp_channel *lp_create_comp_channel(struct ibv_context *c)
{
    struct lp_chan *ch = calloc(1, sizeof(*ch));

    ch->ch.context = c;
    ch->ch.fd = eventfd(0, EFD_NONBLOCK);
    return &ch->ch;
}

static int lp_destroy_comp_channel(struct ibv_comp_channel *ch)
{
    close(ch->fd);
    free(ch);
    return 0;
}

static struct ibv_cq *lp_create_cq(struct ibv_context *c, int cqe, void *cq_ctx,
                                   struct ibv_comp_channel *ch, int vector)
{
    struct lp_cq *cq = calloc(1, sizeof(*cq));

    cq->cq.context = c;
    cq->cq.cq_context = cq_ctx;
    cq->cq.channel = ch;
    cq->cq.cqe = cqe;
    cq->chan = (struct lp_chan *)ch;
    cq->cap = (uint32_t)cqe;
    cq->ring = calloc(cq->cap, sizeof(*cq->ring));
    return &cq->cq;
}

static int lp_destroy_cq(struct ibv_cq *ibcq)
{
    struct lp_cq *cq = (struct lp_cq *)ibcq;

    pthread_mutex_lock(&lp_mu);
    if (cq->chan) { /* its events go with it */
        int k = 0;

        for (int i = 0; i < cq->chan->nev; i++)
            if (cq->chan->ev[i] != cq)
                cq->chan->ev[k++] = cq->chan->ev[i];
        cq->chan->nev = k;
    }
    pthread_mutex_unlock(&lp_mu);
    free(cq->ring);
    free(cq);
    return 0;
}

/* Caller holds lp_mu. A full CQ is an overrun (a fatal async error on hardware): counted. */
static void lp_cq_push(struct lp_cq *cq, const struct ibv_wc *wc)
{
    uint64_t one = 1;

    if (cq->n == cq->cap) {
        lp_cq_overruns++;
        return;
    }
    cq->ring[(cq->head + cq->n++) % cq->cap] = *wc;
    if (cq->armed && cq->chan && cq->chan->nev < LP_MAX_EVENT) {
        cq->armed = 0;
        cq->chan->ev[cq->chan->nev++] = cq;
        (void)!write(cq->chan->ch.fd, &one, sizeof(one));
    }
}

static int lp_get_cq_event(struct ibv_comp_channel *ibch, struct ibv_cq **cq, void **ctx)
{
    struct lp_chan *ch = (struct lp_chan *)ibch;
    uint64_t junk;
    int rc = 0;

    pthread_mutex_lock(&lp_mu);
    if (ch->nev == 0) {
        (void)!read(ch->ch.fd, &junk, sizeof(junk)); /* not readable again until an event */
        errno = EAGAIN;
        rc = -1;
    } else {
        *cq = &ch->ev[0]->cq;
        *ctx = ch->ev[0]->cq.cq_context;
        memmove(ch->ev, ch->ev + 1, (size_t)(ch->nev - 1) * sizeof(ch->ev[0]));
        ch->nev--;
    }
    pthread_mutex_unlock(&lp_mu);
    return rc;
}

static int lp_req_notify_cq(struct ibv_cq *cq, int solicited)
{
    pthread_mutex_lock(&lp_mu);
    ((struct lp_cq *)cq)->armed = 1;
    pthread_mutex_unlock(&lp_mu);
    return 0;
}

static int lp_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
    struct lp_cq *cq = (struct lp_cq *)ibcq;
    int k = 0;

    pthread_mutex_lock(&lp_mu);
    for (; k < n && cq->n; k++, cq->n--) {
        wc[k] = cq->ring[cq->head];
        cq->head = (cq->head + 1) % cq->cap;
    }
    pthread_mutex_unlock(&lp_mu);
    return k;
}

/* ---- registrations ---- */

static struct ibv_mr *lp_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    struct lp_mr *m = calloc(1, sizeof(*m));

    m->mr.pd = pd;
    m->mr.addr = addr;
    m->mr.length = len;
    pthread_mutex_lock(&lp_mu);
    fk_nreg++;
    /* Spread out, so that a key off by a bit (a forged one) names nothing. */
    m->mr.lkey = m->mr.rkey = (++lp_key_seq << 8) | 0x5a;
    m->next = lp_mrs;
    lp_mrs = m;
    pthread_mutex_unlock(&lp_mu);
    return &m->mr;
}

static int lp_dereg_mr(struct ibv_mr *mr)
{
    pthread_mutex_lock(&lp_mu);
    fk_ndereg++;
    for (struct lp_mr **pp = &lp_mrs; *pp; pp = &(*pp)->next)
        if (&(*pp)->mr == mr) {
            *pp = (*pp)->next;
            break;
        }
    pthread_mutex_unlock(&lp_mu);
    free(mr);
    return 0;
}

/* Whether [addr, addr + len) lies in a registration of pd with that key (caller holds lp_mu). */
static int lp_mr_ok(struct ibv_pd *pd, uint32_t key, uint64_t addr, uint64_t len)
{
    for (struct lp_mr *m = lp_mrs; m; m = m->next) {
        uint64_t b = (uint64_t)(uintptr_t)m->mr.addr;

        if (m->mr.pd == pd && m->mr.rkey == key && addr >= b && len <= m->mr.length &&
            addr - b <= m->mr.length - len)
            return 1;
    }
    return 0;
}

/* ---- queue pairs ---- */

static struct ibv_qp *lp_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    struct lp_qp *q = calloc(1, sizeof(*q));

    q->qp.pd = pd;
    q->qp.qp_type = a->qp_type;
    q->qp.state = IBV_QPS_RESET;
    q->scq = (struct lp_cq *)a->send_cq;
    q->rcq = (struct lp_cq *)a->recv_cq;
    q->rq_cap = a->cap.max_recv_wr;
    q->rq = calloc(q->rq_cap, sizeof(*q->rq));
    pthread_mutex_lock(&lp_mu);
    q->qp.qp_num = fk_next_qpn++;
    for (int i = 0; i < LP_MAX_QPS; i++)
        if (!lp_qps[i]) {
            lp_qps[i] = q;
            break;
        }
    pthread_mutex_unlock(&lp_mu);
    return &q->qp;
}

static struct lp_qp *lp_qp_find(uint32_t qpn) /* caller holds lp_mu */
{
    for (int i = 0; i < LP_MAX_QPS; i++)
        if (lp_qps[i] && lp_qps[i]->qp.qp_num == qpn)
            return lp_qps[i];
    return NULL;
}

static int lp_destroy_qp(struct ibv_qp *qp)
{
    struct lp_qp *q = (struct lp_qp *)qp;

    pthread_mutex_lock(&lp_mu);
    for (int i = 0; i < LP_MAX_QPS; i++)
        if (lp_qps[i] == q)
            lp_qps[i] = NULL;
    pthread_mutex_unlock(&lp_mu);
    free(q->rq);
    free(q);
    return 0;
}

static void lp_wc(struct lp_cq *cq, uint32_t qpn, uint64_t wr_id, enum ibv_wc_opcode op,
                  enum ibv_wc_status st, uint32_t len, uint32_t imm_net)
{
    struct ibv_wc w;

    memset(&w, 0, sizeof(w));
    w.wr_id = wr_id;
    w.qp_num = qpn;
    w.opcode = op;
    w.status = st;
    w.byte_len = len;
    if (op == IBV_WC_RECV_RDMA_WITH_IMM) {
        w.wc_flags = IBV_WC_WITH_IMM;
        w.imm_data = imm_net;
    }
    lp_cq_push(cq, &w);
}

static int lp_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    struct lp_qp *q = (struct lp_qp *)qp;

    pthread_mutex_lock(&lp_mu);
    if (fk_nmod < FK_MAX_LOG)
        fk_mod[fk_nmod++] = (struct fk_modify){qp->qp_num, a->qp_state, mask, *a};
    if (mask & IBV_QP_DEST_QPN)
        q->dest = a->dest_qp_num;
    qp->state = a->qp_state;
    if (a->qp_state == IBV_QPS_ERR) /* the hardware flushes what was posted */
        for (; q->rq_n; q->rq_n--, q->rq_head = (q->rq_head + 1) % q->rq_cap)
            lp_wc(q->rcq, qp->qp_num, q->rq[q->rq_head], IBV_WC_RECV, IBV_WC_WR_FLUSH_ERR, 0, 0);
    pthread_mutex_unlock(&lp_mu);
    return 0;
}

static int lp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct lp_qp *q = (struct lp_qp *)qp;
    int rc = 0;

    pthread_mutex_lock(&lp_mu);
    for (; wr && rc == 0; wr = wr->next) {
        if (q->rq_n == q->rq_cap) {
            *bad = wr;
            rc = ENOMEM;
        } else {
            q->rq[(q->rq_head + q->rq_n++) % q->rq_cap] = wr->wr_id;
            fk_nrecv++;
        }
    }
    pthread_mutex_unlock(&lp_mu);
    return rc;
}

/* One RDMA WRITE with immediate from q to its peer (caller holds lp_mu). */
static void lp_write_imm(struct lp_qp *q, const struct ibv_send_wr *wr)
{
    uint32_t len = wr->num_sge ? wr->sg_list[0].length : 0;
    uint64_t laddr = wr->num_sge ? wr->sg_list[0].addr : 0;
    struct lp_qp *t = lp_qp_find(q->dest);
    int signaled = !!(wr->send_flags & IBV_SEND_SIGNALED), ok;

    if (len && !lp_mr_ok(q->qp.pd, wr->sg_list[0].lkey, laddr, len)) {
        lp_wc(q->scq, q->qp.qp_num, wr->wr_id, IBV_WC_RDMA_WRITE, IBV_WC_LOC_PROT_ERR, 0, 0);
        return;
    }
    if (!t || t->dest != q->qp.qp_num ||
        (t->qp.state != IBV_QPS_RTR && t->qp.state != IBV_QPS_RTS)) {
        lp_drops_dead++;
        if (q->qp.qp_type == IBV_QPT_RC) { /* nobody acknowledges: RC gives up */
            lp_wc(q->scq, q->qp.qp_num, wr->wr_id, IBV_WC_RDMA_WRITE, IBV_WC_RETRY_EXC_ERR, 0, 0);
            return;
        }
    } else if (t->rq_n == 0) {
        lp_drops_no_recv++;
    } else {
        uint64_t rwr = t->rq[t->rq_head];

        /* A zero-length write names no memory: no key is checked (as on hardware). */
        ok = len == 0 || lp_mr_ok(t->qp.pd, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, len);
        t->rq_head = (t->rq_head + 1) % t->rq_cap;
        t->rq_n--;
        if (ok) {
            if (len) /* a zero-length write may name NULL buffers, which memcpy may not take */
                memcpy((void *)(uintptr_t)wr->wr.rdma.remote_addr, (void *)(uintptr_t)laddr, len);
            lp_wc(t->rcq, t->qp.qp_num, rwr, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS, len,
                  wr->imm_data);
        } else {
            lp_wc(t->rcq, t->qp.qp_num, rwr, IBV_WC_RECV, IBV_WC_REM_ACCESS_ERR, 0, 0);
            if (q->qp.qp_type == IBV_QPT_RC) { /* RC's responder answers with a NAK */
                lp_wc(q->scq, q->qp.qp_num, wr->wr_id, IBV_WC_RDMA_WRITE, IBV_WC_REM_ACCESS_ERR, 0,
                      0);
                return;
            }
        }
    }
    if (signaled) /* UC: done once sent, whatever became of it */
        lp_wc(q->scq, q->qp.qp_num, wr->wr_id, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, len, 0);
}

static int lp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct lp_qp *q = (struct lp_qp *)qp;
    int rc = 0;

    pthread_mutex_lock(&lp_mu);
    for (; wr && rc == 0; wr = wr->next) {
        if (wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM || wr->num_sge > 1 ||
            (q->qp.state != IBV_QPS_RTS && q->qp.state != IBV_QPS_ERR)) {
            *bad = wr;
            rc = EINVAL;
        } else if (q->qp.state == IBV_QPS_ERR) {
            lp_wc(q->scq, qp->qp_num, wr->wr_id, IBV_WC_RDMA_WRITE, IBV_WC_WR_FLUSH_ERR, 0, 0);
        } else {
            lp_write_imm(q, wr);
        }
    }
    pthread_mutex_unlock(&lp_mu);
    return rc;
}

/* What the back end must never cause: a message to a live QP with no receive posted (UC would
 * lose it without a word) and a CQ overrun. Messages to a peer that is gone (lp_drops_dead)
 * are not counted: a peer's close or failure makes them. */
FK_FN uint64_t lp_drops(void)
{
    uint64_t n;

    pthread_mutex_lock(&lp_mu);
    n = lp_drops_no_recv + lp_cq_overruns;
    pthread_mutex_unlock(&lp_mu);
    return n;
}

static const struct vb_ibv lp_lib __attribute__((unused)) = {
        .get_device_list = fk_get_device_list,
        .free_device_list = fk_free_device_list,
        .get_device_name = fk_get_device_name,
        .open_device = fk_open_device,
        .close_device = fk_close_device,
        .query_device = fk_query_device,
        .query_port = fk_query_port,
        .query_gid = fk_query_gid,
        .gid_is_v2 = fk_gid_is_v2,
        .gid_netdev = fk_gid_netdev,
        .alloc_pd = fk_alloc_pd,
        .dealloc_pd = fk_dealloc_pd,
        .reg_mr = lp_reg_mr,
        .dereg_mr = lp_dereg_mr,
        .create_comp_channel = lp_create_comp_channel,
        .destroy_comp_channel = lp_destroy_comp_channel,
        .create_cq = lp_create_cq,
        .destroy_cq = lp_destroy_cq,
        .get_cq_event = lp_get_cq_event,
        .ack_cq_events = fk_ack_cq_events,
        .create_qp = lp_create_qp,
        .modify_qp = lp_modify_qp,
        .destroy_qp = lp_destroy_qp,
        .wc_status_str = fk_wc_status_str,
        .post_send = lp_post_send,
        .post_recv = lp_post_recv,
        .poll_cq = lp_poll_cq,
        .req_notify_cq = lp_req_notify_cq,
};

#endif

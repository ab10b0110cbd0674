/* SPDX-License-Identifier: BSD-3-Clause */
/* Sender side of the data path: caller posts cut into segments (WRITE_IMMs into the caller's
 * remote buffer or, for a SEND, into the RECV it consumes, as the peer advertised it), and the
 * advertisements of our own RECVs between them, posted in chains, retired by send CQEs, and
 * completed to the caller once delivered: on UC once acknowledged, on RC once the send CQE of its
 * last segment arrived (verbs_rel.c says why). */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "fabric/verbs/verbs_int.h"

/* A SEND goes straight into the RECV it consumes: the k-th message of a lane consumes the k-th
 * RECV the peer posted there. 0 while that RECV's advertisement has not arrived yet. */
static int tx_send_dst(struct vb_ep *ep, struct vb_lane *l, struct vb_msg *m, uint32_t k,
                       uint64_t now)
{
    struct vb_adv_wire a;

    if (m->have_dst)
        return 1;
    if (vb_adv_lookup(ep, l, k, now, &a) <= 0)
        return 0;
    m->raddr = a.addr;
    m->rkey = a.rkey;
    m->too_long = m->len > a.cap;
    m->have_dst = 1;
    return 1;
}

/* Advertisements go first, between the segments of a message if need be: a SEND of ours
 * waiting for the peer's advertisement must not hold back the one the peer waits for. */
static int tx_new_adv(struct vb_ep *ep, struct vb_lane *l)
{
    struct vb_tx *tx = &l->tx;
    struct vb_seg *s;
    uint32_t k;

    if (!vb_adv_due(ep, l, &k))
        return 0;
    s = vb_seg_at(tx, tx->nxt);
    memset(s, 0, sizeof(*s));
    s->msg = k;
    s->len = sizeof(struct vb_adv_wire);
    s->type = VB_SEND_FINAL;
    s->adv = 1;
    tx->nxt++;
    return 1;
}

/* Cuts the next segment (an advertisement or off the message queue) into seq tx->nxt; 0 when
 * there is none yet. A SEND too long for its RECV becomes one empty segment that makes the
 * receiver fail LEN_ERR. */
static int tx_new_seg(struct vb_ep *ep, struct vb_lane *l, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    struct vb_msg *m;
    struct vb_seg *s;
    size_t left, n;
    int final;

    if (tx_new_adv(ep, l))
        return 1;
    if (tx->msg_cur == l->mq_tail)
        return 0;
    m = vb_msg_at(l, tx->msg_cur);
    if (m->is_send && !tx_send_dst(ep, l, m, tx->msg_cur, now))
        return 0;
    left = m->too_long ? 0 : m->len - tx->cur_off;
    n = left < ep->seg_size ? left : ep->seg_size;
    final = tx->cur_off + n == m->len || m->too_long;
    s = vb_seg_at(tx, tx->nxt);
    memset(s, 0, sizeof(*s));
    s->msg = tx->msg_cur;
    s->off = tx->cur_off;
    s->len = (uint32_t)n;
    if (m->is_send)
        s->type = final ? VB_SEND_FINAL : VB_SEND_PART;
    else
        s->type = final ? VB_WRITE_FINAL : VB_WRITE_PART;
    tx->cur_off += n;
    if (final) {
        m->all_segs = 1;
        m->last_seq = tx->nxt;
        tx->msg_cur++;
        tx->cur_off = 0;
    }
    tx->nxt++;
    return 1;
}

static void tx_fill_wr(struct vb_ep *ep, struct vb_lane *l, uint32_t seq, struct ibv_send_wr *wr,
                       struct ibv_sge *sge)
{
    struct vb_tx *tx = &l->tx;
    struct vb_seg *s = vb_seg_at(tx, seq);
    struct vb_msg *m;
    uint32_t lo = 0;

    if (s->adv) {
        vb_adv_fill_wr(ep, l, s->msg, wr, sge);
        wr->imm_data = htonl(
                vb_imm_make(VB_SEND_FINAL, tx->epoch, seq, VB_LO_CTL | (s->msg & VB_ADV_IDX_MASK)));
        return;
    }
    m = vb_msg_at(l, s->msg);
    if (s->type == VB_WRITE_FINAL)
        lo = m->imm;
    else if (s->type == VB_SEND_FINAL && m->too_long)
        lo = VB_SEND_TOO_LONG;
    else if (ep->qp_type != IBV_QPT_RC && (s->type == VB_WRITE_PART || s->type == VB_SEND_PART) &&
             seq + 1 - tx->una >= tx->cwnd)
        lo = VB_ACK_REQ; /* the window is full after this one: the receiver must not wait */
    memset(wr, 0, sizeof(*wr));
    sge->addr = (uint64_t)(uintptr_t)(m->buf + s->off);
    sge->length = s->len;
    sge->lkey = m->lkey;
    wr->sg_list = s->len ? sge : NULL;
    wr->num_sge = s->len ? 1 : 0;
    wr->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr->send_flags = 0; /* vb_tx_pump signals some */
    wr->imm_data = htonl(vb_imm_make((enum vb_seg_type)s->type, tx->epoch, seq, lo));
    wr->wr.rdma.remote_addr = m->raddr + s->off;
    wr->wr.rdma.rkey = m->rkey;
}

/* The hardware now reads the segment's buffer once more. */
static void tx_account(struct vb_ep *ep, struct vb_lane *l, uint32_t seq, int sig, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    struct vb_seg *s = vb_seg_at(tx, seq);

    ep->stats.segs++;
    if (vb_sdiff(seq, tx->high) < 0) {
        s->retx = 1;
        ep->stats.retx++;
    } else {
        tx->high = seq + 1;
    }
    s->tx_ns = now;
    if (!s->adv)
        vb_msg_at(l, s->msg)->hw_refs++;
    vb_hw_push(tx, s->adv ? VB_HW_ADV : VB_HW_MSG, s->msg, s->len, sig);
}

/* Whether a WR asks for a CQE: every VB_SIGNAL_EVERY-th and the last of a chain (a send CQE
 * means the QP is done with that WR and every WR before it, and each CQE costs the progress
 * thread a turn), and on RC a message's final segment too: its CQE completes the message. */
static int tx_signal(struct vb_ep *ep, struct vb_lane *l, uint32_t seq, int chain_end)
{
    const struct vb_seg *s = vb_seg_at(&l->tx, seq);
    int final = !(s->type & 1) && !s->adv; /* VB_WRITE_FINAL, VB_SEND_FINAL of a caller post */

    return ++l->tx.unsignaled >= VB_SIGNAL_EVERY || chain_end ||
           (ep->qp_type == IBV_QPT_RC && final);
}

int vb_tx_post_chain(struct vb_ep *ep, struct vb_lane *l, struct ibv_send_wr *wr)
{
    struct ibv_send_wr *bad = NULL;
    int rc = ep->ibv->post_send(l->qp, wr, &bad), err;

    if (rc == 0)
        return 0;
    err = rc > 0 ? rc : errno ? errno : EIO;
    vb_ep_fail(ep, -err, "posting to QP %u (lane %d) failed: %s", l->qp->qp_num, l->idx,
               strerror(err));
    return -err;
}

/* Posts segments [first, first + n) as one chain: one doorbell for the batch. */
static int tx_post(struct vb_ep *ep, struct vb_lane *l, uint32_t first, int n,
                   struct ibv_send_wr *wr, uint64_t now)
{
    if (n == 0)
        return 0;
    wr[n - 1].next = NULL;
    for (int i = 0; i < n; i++) {
        if (tx_signal(ep, l, first + (uint32_t)i, i == n - 1)) {
            wr[i].send_flags |= IBV_SEND_SIGNALED;
            l->tx.unsignaled = 0;
        }
    }
    if (vb_tx_post_chain(ep, l, wr) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        tx_account(ep, l, first + (uint32_t)i, !!(wr[i].send_flags & IBV_SEND_SIGNALED), now);
    return 0;
}

#define VB_POST_BATCH 32

/* Whether the next segment may go out. UC: the congestion window (segments unacknowledged).
 * RC: the hardware retransmits, so no window; but a WRITE_IMM that finds no hardware receive
 * posted draws an RNR NAK and a stall of the RNR timer, so the sender stops at the last segment
 * the peer's receives cover: the VB_HW_RQ it posted before READY and those it reported posting
 * again since, less a reserve for our controls. The segment ring bounds both. */
static int tx_may_send(const struct vb_ep *ep, const struct vb_tx *tx)
{
    uint32_t granted = tx->peer_reposted + VB_HW_RQ - VB_CTL_RESERVE;

    if (ep->qp_type == IBV_QPT_RC)
        return tx->snd - tx->una < VB_SEG_WIN && vb_sdiff(granted, tx->snd) > 0;
    return tx->snd - tx->una < tx->cwnd;
}

void vb_tx_pump(struct vb_ep *ep, struct vb_lane *l, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    struct ibv_send_wr wr[VB_POST_BATCH];
    struct ibv_sge sge[VB_POST_BATCH];
    uint32_t first = tx->snd;
    size_t bytes = 0;
    int n = 0;

    if (fab_ep_base_err(&ep->base) != 0 || !ep->peer_ready || tx->probe_pending)
        return;
    while (tx->hw_n + (uint32_t)n < VB_HW_SQ && tx->hw_bytes + bytes < VB_HW_BYTES &&
           tx_may_send(ep, tx)) {
        if (tx->snd == tx->nxt && !tx_new_seg(ep, l, now))
            break;
        tx_fill_wr(ep, l, tx->snd, &wr[n], &sge[n]);
        if (n > 0)
            wr[n - 1].next = &wr[n];
        bytes += vb_seg_at(tx, tx->snd)->len;
        tx->snd++;
        if (++n == VB_POST_BATCH) {
            if (tx_post(ep, l, first, n, wr, now) != 0)
                return;
            first = tx->snd;
            n = 0;
            bytes = 0;
        }
    }
    tx_post(ep, l, first, n, wr, now);
}

/* A signaled WR completed: so did every unsignaled one posted before it. On RC a successful
 * send CQE also means the peer's QP acknowledged the segment, so it is delivered: una moves past
 * it (RC never retransmits, so the segments retire in sequence order, one sequence number each;
 * controls have none). */
void vb_tx_on_send_cqe(struct vb_ep *ep, struct vb_lane *l)
{
    struct vb_tx *tx = &l->tx;
    int sig = 0;

    while (tx->hw_n > 0 && !sig) {
        uint32_t h = tx->hw_head;

        sig = tx->hw_sig[h];
        if (tx->hw_kind[h] == VB_HW_MSG)
            vb_msg_at(l, tx->hwq[h])->hw_refs--;
        if (tx->hw_kind[h] != VB_HW_CTRL && ep->qp_type == IBV_QPT_RC)
            tx->una++;
        tx->hw_bytes -= tx->hw_len[h];
        tx->hw_head = (h + 1) % VB_HWQ_CAP;
        tx->hw_n--;
    }
}

void vb_tx_on_credit(struct vb_ep *ep, struct vb_lane *l, uint32_t low, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    /* Cumulative: it moved forward by less than the sequence space since the last one (we never
     * send more than VB_HW_RQ segments past a credit). */
    uint32_t reposted = tx->peer_reposted + ((low - tx->peer_reposted) & VB_SEQ_MASK);

    /* The peer reposts only receives our segments consumed: never more than we sent. */
    if (vb_sdiff(reposted, tx->snd) > 0) {
        vb_ep_fail(ep, -EPROTO, "reported %u receives posted again on lane %d after %u segments",
                   reposted, l->idx, tx->snd);
        return;
    }
    tx->peer_reposted = reposted; /* never backwards: unwrapped forward from the last one */
    vb_tx_pump(ep, l, now);
}

void vb_tx_complete(struct vb_ep *ep, struct vb_lane *l)
{
    while (l->mq_head != l->tx.msg_cur) {
        struct vb_msg *m = vb_msg_at(l, l->mq_head);
        struct fab_wc wc = {.wr_id = m->wr_id,
                            .ep = &ep->fab,
                            .status = FAB_WC_OK,
                            .len = (uint32_t)m->len,
                            .lane = l->idx};

        if (!m->all_segs || vb_sdiff(l->tx.una, m->last_seq) <= 0 || m->hw_refs > 0)
            break;
        wc.op = m->is_send ? FAB_WC_SEND : FAB_WC_WRITE;
        l->mq_head++;
        fab_swcq_push(ep->cq, &wc);
    }
}

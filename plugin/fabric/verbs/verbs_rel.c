/* The reliability protocol that turns UC queue pairs into the fabric's "reliable, in order, or
 * the endpoint fails" lanes (it runs unchanged on RC, where it simply never sees a loss).
 *
 * Sender: each caller post becomes one or more segments (WRITE_IMMs of at most seg_size bytes,
 * into the caller's remote buffer or, for a SEND, into the RECV it consumes), numbered per lane.
 * The immediate carries the segment's type, the sender's current epoch and the low bits of its
 * sequence number. Segments stay in the window until the receiver acknowledges them (cumulative ACK
 * on the side channel); only then, and once the hardware has finished reading the buffer, does the
 * caller get its completion.
 *
 * Receiver: delivers a segment only if it is the next expected one; anything else is dropped,
 * and a gap (a later segment arrived first) is reported once per epoch with a NAK carrying the
 * expected number and the epoch of the segment that revealed it.
 *
 * Loss recovery is go-back-N: on a NAK of the current epoch the sender bumps its epoch and
 * retransmits from the expected number. If acknowledgements stop for an RTO, the sender sends a
 * PROBE with a new epoch on the side channel and stops transmitting; the receiver fences off
 * every older epoch and replies with its expected number, and the sender resumes from there.
 *
 * Why no stale copy ever lands on memory the caller already got back: a QP sends in posting
 * order, so when a NAK says "expected e", every copy of e sent so far is lost, and every copy
 * still in flight precedes the retransmission and is dropped as out of order; a PROBE's fence
 * drops whatever older copy is still in flight. So the sender only ever retransmits segments
 * that have not been delivered and never will be by an older copy. A retransmitted WRITE lands
 * the same bytes at a target that is still reserved for that message. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "fabric/verbs/verbs_int.h"
#include "util/log.h"

static struct vb_msg *msg_at(struct vb_lane *l, uint32_t idx)
{
    return &l->mq[idx % l->mq_cap];
}

static struct vb_seg *seg_at(struct vb_tx *tx, uint32_t seq)
{
    return &tx->seg[seq % VB_SEG_WIN];
}

/* a - b as a signed distance (sequence numbers wrap at 2^32) */
static int32_t sdiff(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b);
}

void vb_tx_init(struct vb_tx *tx, uint64_t now)
{
    memset(tx, 0, sizeof(*tx));
    tx->cwnd = VB_CWND_INIT;
    tx->ssthresh = VB_SEG_WIN;
    tx->last_progress_ns = now;
}

static uint64_t tx_rto(const struct vb_tx *tx)
{
    uint64_t rto = tx->srtt_ns ? tx->srtt_ns + 4 * tx->rttvar_ns : VB_RTO_INIT;

    if (rto < VB_RTO_MIN)
        rto = VB_RTO_MIN;
    rto <<= tx->backoff;
    return rto > VB_RTO_MAX ? VB_RTO_MAX : rto;
}

/* Jacobson's estimator over "posted to acknowledged", retransmitted segments excluded (Karn). */
static void tx_rtt_sample(struct vb_tx *tx, uint64_t r)
{
    if (tx->srtt_ns == 0) {
        tx->srtt_ns = r;
        tx->rttvar_ns = r / 2;
        return;
    }
    uint64_t dev = r > tx->srtt_ns ? r - tx->srtt_ns : tx->srtt_ns - r;

    tx->rttvar_ns = (3 * tx->rttvar_ns + dev) / 4;
    tx->srtt_ns = (7 * tx->srtt_ns + r) / 8;
}

/* A SEND goes straight into the RECV it consumes: the k-th message of a lane consumes the k-th
 * RECV the peer posted there. 0 while that RECV's advertisement has not arrived yet. */
static int tx_send_dst(struct vb_lane *l, struct vb_msg *m, uint32_t k)
{
    const struct vb_adv *a;

    if (m->have_dst)
        return 1;
    if (l->adv_cap == 0 || sdiff(l->adv_n, k) <= 0)
        return 0;
    a = &l->adv[k % l->adv_cap];
    m->raddr = a->addr;
    m->rkey = a->rkey;
    m->too_long = m->len > a->cap;
    m->have_dst = 1;
    return 1;
}

/* Cuts the next segment off the message queue into seq tx->nxt; 0 when there is none yet. A
 * SEND too long for its RECV becomes one empty segment that makes the receiver fail LEN_ERR. */
static int tx_new_seg(struct fab_ep *ep, struct vb_lane *l)
{
    struct vb_tx *tx = &l->tx;
    struct vb_msg *m;
    struct vb_seg *s;
    size_t left, n;
    int final;

    if (tx->msg_cur == l->mq_tail)
        return 0;
    m = msg_at(l, tx->msg_cur);
    if (m->is_send && !tx_send_dst(l, m, tx->msg_cur))
        return 0;
    left = m->too_long ? 0 : m->len - tx->cur_off;
    n = left < ep->seg_size ? left : ep->seg_size;
    final = tx->cur_off + n == m->len || m->too_long;
    s = seg_at(tx, tx->nxt);
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

static void tx_fill_wr(struct fab_ep *ep, struct vb_lane *l, uint32_t seq, struct ibv_send_wr *wr,
                       struct ibv_sge *sge)
{
    struct vb_tx *tx = &l->tx;
    struct vb_seg *s = seg_at(tx, seq);
    struct vb_msg *m = msg_at(l, s->msg);
    uint32_t lo = 0;

    if (s->type == VB_WRITE_FINAL)
        lo = m->imm;
    else if (s->type == VB_SEND_FINAL && m->too_long)
        lo = VB_SEND_TOO_LONG;
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
static void tx_account(struct fab_ep *ep, struct vb_lane *l, uint32_t seq, int sig, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    struct vb_seg *s = seg_at(tx, seq);
    uint32_t slot = (tx->hw_head + tx->hw_n) % VB_HW_SQ;

    ep->stats.segs++;
    if (sdiff(seq, tx->high) < 0) {
        s->retx = 1;
        ep->stats.retx++;
    } else {
        tx->high = seq + 1;
    }
    s->tx_ns = now;
    msg_at(l, s->msg)->hw_refs++;
    tx->hwq[slot] = s->msg;
    tx->hw_len[slot] = s->len;
    tx->hw_sig[slot] = sig;
    tx->hw_n++;
    tx->hw_bytes += s->len;
}

/* Posts segments [first, first + n) as one chain: one doorbell for the batch. Only every
 * VB_SIGNAL_EVERY-th WR and the last of the chain ask for a CQE: a send CQE means the QP is
 * done with that WR and every WR before it, and each CQE costs the progress thread a turn. */
static int tx_post(struct fab_ep *ep, struct vb_lane *l, uint32_t first, int n,
                   struct ibv_send_wr *wr, uint64_t now)
{
    struct ibv_send_wr *bad = NULL;
    int rc;

    if (n == 0)
        return 0;
    wr[n - 1].next = NULL;
    for (int i = 0; i < n; i++) {
        if (++l->tx.unsignaled >= VB_SIGNAL_EVERY || i == n - 1) {
            wr[i].send_flags |= IBV_SEND_SIGNALED;
            l->tx.unsignaled = 0;
        }
    }
    rc = ep->L->post_send(l->qp, wr, &bad);
    if (rc != 0) {
        vb_ep_fail(ep, FAB_WC_LOCAL_ERR, "posting to QP %u (lane %d) failed: %s", l->qp->qp_num,
                   l->idx, strerror(rc > 0 ? rc : errno));
        return -1;
    }
    for (int i = 0; i < n; i++)
        tx_account(ep, l, first + (uint32_t)i, !!(wr[i].send_flags & IBV_SEND_SIGNALED), now);
    return 0;
}

#define VB_POST_BATCH 32

void vb_tx_pump(struct fab_ep *ep, struct vb_lane *l, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    struct ibv_send_wr wr[VB_POST_BATCH];
    struct ibv_sge sge[VB_POST_BATCH];
    uint32_t first = tx->snd;
    size_t bytes = 0;
    int n = 0;

    if (atomic_load(&ep->status) != FAB_WC_OK || !ep->peer_ready || tx->probe_pending)
        return;
    while (tx->hw_n + (uint32_t)n < VB_HW_SQ && tx->hw_bytes + bytes < VB_HW_BYTES &&
           tx->snd - tx->una < tx->cwnd) {
        if (tx->snd == tx->nxt && !tx_new_seg(ep, l))
            break;
        tx_fill_wr(ep, l, tx->snd, &wr[n], &sge[n]);
        if (n > 0)
            wr[n - 1].next = &wr[n];
        bytes += seg_at(tx, tx->snd)->len;
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

/* A signaled WR completed: so did every unsignaled one posted before it. */
void vb_tx_on_send_cqe(struct fab_ep *ep, struct vb_lane *l)
{
    struct vb_tx *tx = &l->tx;
    int sig = 0;

    while (tx->hw_n > 0 && !sig) {
        sig = tx->hw_sig[tx->hw_head];
        msg_at(l, tx->hwq[tx->hw_head])->hw_refs--;
        tx->hw_bytes -= tx->hw_len[tx->hw_head];
        tx->hw_head = (tx->hw_head + 1) % VB_HW_SQ;
        tx->hw_n--;
    }
}

/* Slow start up to ssthresh, then one segment per window's worth of acknowledgements. */
static void tx_cwnd_grow(struct vb_tx *tx, uint32_t n)
{
    if (tx->cwnd < tx->ssthresh) {
        tx->cwnd += n;
    } else {
        tx->cwnd_acc += n;
        while (tx->cwnd_acc >= tx->cwnd) {
            tx->cwnd_acc -= tx->cwnd;
            tx->cwnd++;
        }
    }
    if (tx->cwnd > VB_SEG_WIN)
        tx->cwnd = VB_SEG_WIN;
}

/* Everything below `e` was delivered. */
static void tx_acked(struct vb_lane *l, uint32_t e, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    uint32_t n;

    if (sdiff(e, tx->una) <= 0 || sdiff(e, tx->nxt) > 0)
        return;
    for (uint32_t q = tx->una; q != e; q++) {
        struct vb_seg *s = seg_at(tx, q);

        if (!s->retx && now > s->tx_ns)
            tx_rtt_sample(tx, now - s->tx_ns);
    }
    n = e - tx->una;
    tx->una = e;
    if (sdiff(tx->snd, e) < 0)
        tx->snd = e;
    tx->last_progress_ns = now;
    if (sdiff(e, tx->retry_seq) > 0) { /* the segment that needed retransmitting got through */
        tx->retries = 0;
        tx->backoff = 0;
    }
    tx_cwnd_grow(tx, n);
}

void vb_tx_complete(struct fab_ep *ep, struct vb_lane *l)
{
    while (l->mq_head != l->tx.msg_cur) {
        struct vb_msg *m = msg_at(l, l->mq_head);
        struct fab_wc wc = {.wr_id = m->wr_id,
                            .ep = ep,
                            .status = FAB_WC_OK,
                            .len = (uint32_t)m->len,
                            .lane = l->idx};

        if (!m->all_segs || sdiff(l->tx.una, m->last_seq) <= 0 || m->hw_refs > 0)
            break;
        wc.op = m->is_send ? FAB_WC_SEND : FAB_WC_WRITE;
        l->mq_head++;
        vb_cq_push(ep->cq, &wc);
    }
}

void vb_tx_on_ack(struct fab_ep *ep, struct vb_lane *l, uint32_t expected, uint64_t now)
{
    tx_acked(l, expected, now);
    vb_tx_complete(ep, l);
    vb_tx_pump(ep, l, now);
}

/* Segment `e` was lost: count the attempt, halve the window, go back to it. */
static void tx_rewind(struct fab_ep *ep, struct vb_lane *l, uint32_t e, uint64_t now)
{
    struct vb_tx *tx = &l->tx;

    if (e == tx->retry_seq && tx->retries > 0) {
        tx->retries++;
    } else {
        tx->retry_seq = e;
        tx->retries = 1;
    }
    if (tx->retries > ep->retry_cnt) {
        JWARN("verbs fabric: peer %s, device %s, lane %d (QP %u): segment seq %u lost %d times, "
              "giving up (NCCL_JACCL_RETRY_CNT=%d)",
              ep->peer, ep->dom->dev->info.name, l->idx, l->qp->qp_num, e, tx->retries,
              ep->retry_cnt);
        vb_ep_fail(ep, FAB_WC_PEER_LOST,
                   "lost segment seq %u on lane %d (QP %u) %d times: retransmissions "
                   "exhausted (NCCL_JACCL_RETRY_CNT=%d)",
                   e, l->idx, l->qp->qp_num, tx->retries, ep->retry_cnt);
        return;
    }
    tx->ssthresh = tx->cwnd / 2 > VB_CWND_MIN ? tx->cwnd / 2 : VB_CWND_MIN;
    tx->cwnd = tx->ssthresh;
    tx->cwnd_acc = 0;
    tx->snd = e;
    JTRACE(NCCL_NET, "verbs fabric: peer %s lane %d: retransmitting from seq %u (try %d)", ep->peer,
           l->idx, e, tx->retries);
    vb_tx_pump(ep, l, now);
}

void vb_tx_on_nak(struct fab_ep *ep, struct vb_lane *l, uint32_t expected, uint32_t epoch,
                  uint64_t now)
{
    struct vb_tx *tx = &l->tx;

    if (tx->probe_pending || epoch != tx->epoch)
        return; /* a rewind since then already covers it */
    tx_acked(l, expected, now);
    vb_tx_complete(ep, l);
    if (expected != tx->una || expected == tx->snd)
        return;
    tx->epoch = (tx->epoch + 1) & VB_EPOCH_MASK;
    ep->stats.naks++;
    tx_rewind(ep, l, expected, now);
}

void vb_tx_on_reply(struct fab_ep *ep, struct vb_lane *l, uint32_t expected, uint32_t epoch,
                    uint64_t now)
{
    struct vb_tx *tx = &l->tx;

    if (!tx->probe_pending || epoch != tx->epoch)
        return;
    tx->probe_pending = 0;
    tx_acked(l, expected, now);
    vb_tx_complete(ep, l);
    if (expected == tx->una && sdiff(tx->snd, expected) > 0) {
        tx_rewind(ep, l, expected, now); /* the fence dropped what was still in flight */
    } else {
        ep->stats.spurious++;
        vb_tx_pump(ep, l, now);
    }
}

/* No acknowledgement for an RTO while segments are in flight: probe. The side channel is
 * reliable, so an outstanding probe needs no timer of its own (liveness covers a dead peer).
 * RC needs none at all: the hardware retransmits, or fails the QP with an error CQE. */
uint64_t vb_tx_timer(struct fab_ep *ep, struct vb_lane *l, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    uint64_t base, due;

    if (ep->qp_type == IBV_QPT_RC || tx->probe_pending || tx->una == tx->snd ||
        atomic_load(&ep->status) != FAB_WC_OK)
        return UINT64_MAX;
    base = seg_at(tx, tx->una)->tx_ns;
    if (base < tx->last_progress_ns)
        base = tx->last_progress_ns;
    due = base + tx_rto(tx);
    if (now < due)
        return due;
    tx->epoch = (tx->epoch + 1) & VB_EPOCH_MASK;
    tx->probe_pending = 1;
    tx->probe_ns = now;
    ep->stats.probes++;
    if (tx->backoff < 6)
        tx->backoff++;
    JTRACE(NCCL_NET, "verbs fabric: peer %s lane %d: no ack for seq %u, probing", ep->peer, l->idx,
           tx->una);
    vb_side_send(ep, VB_F_PROBE, l->idx, tx->epoch, tx->snd);
    return UINT64_MAX;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The reliability protocol that turns UC queue pairs into the fabric's "reliable, in order, or
 * the endpoint fails" lanes, and what is left of it on RC, where the hardware is reliable.
 *
 * Sender: each caller post becomes one or more segments (WRITE_IMMs of at most seg_size bytes,
 * into the caller's remote buffer or, for a SEND, into the RECV it consumes), numbered per lane.
 * The immediate carries the segment's type, the sender's current epoch and the low bits of its
 * sequence number. On UC, segments stay in the window until the receiver acknowledges them
 * (a cumulative ACK, an RDMA control: verbs_ctl.c); only then, and once the hardware has finished
 * reading the buffer, does the caller get its completion. A lost ACK costs nothing but time: a
 * later one covers it, or the probe below.
 *
 * RC: a successful send CQE means the peer's QP acknowledged the WRITE_IMM, so the segment is
 * delivered (its RECV CQE is in the peer's CQ) and the buffer read: the final segment of each
 * caller post is signaled, and its CQE completes the post (verbs_tx.c). No ACK is sent or awaited,
 * and no window, epoch or timer is used: the hardware retransmits, or fails the QP with an error
 * CQE that fails the endpoint (verbs_wc.c). What RC still needs is receive credit: every
 * WRITE_IMM consumes one of the peer's VB_HW_RQ hardware receives, and one that finds none draws
 * an RNR NAK and a stall (rnr_retry is infinite, verbs_qp.c, so it would not fail, only wait).
 * The receiver reports the receives it has posted again for segments (cumulative, a credit
 * control, one per VB_CREDIT_EVERY of them); the sender sends no segment they do not cover, and
 * leaves VB_CTL_RESERVE receives to its own credits, which nothing covers.
 *
 * Receiver: delivers a segment only if it is the next expected one. On RC anything else is a
 * protocol error (the hardware delivers in order); on UC it is dropped, and a gap (a later
 * segment arrived first) is reported once per epoch with a NAK carrying the expected number and
 * the epoch of the segment that revealed it.
 *
 * UC loss recovery is go-back-N: on a NAK of the current epoch the sender bumps its epoch and
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
#include <errno.h>
#include <string.h>

#include "fabric/verbs/verbs_int.h"
#include "util/log.h"

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

    if (vb_sdiff(e, tx->una) <= 0 || vb_sdiff(e, tx->nxt) > 0)
        return;
    for (uint32_t q = tx->una; q != e; q++) {
        struct vb_seg *s = vb_seg_at(tx, q);

        if (!s->retx && now > s->tx_ns)
            tx_rtt_sample(tx, now - s->tx_ns);
    }
    n = e - tx->una;
    tx->una = e;
    if (vb_sdiff(tx->snd, e) < 0)
        tx->snd = e;
    tx->last_progress_ns = now;
    if (vb_sdiff(e, tx->retry_seq) > 0) { /* the segment that needed retransmitting got through */
        tx->retries = 0;
        tx->backoff = 0;
    }
    tx_cwnd_grow(tx, n);
}

void vb_tx_on_ack(struct vb_ep *ep, struct vb_lane *l, uint32_t expected, uint64_t now)
{
    tx_acked(l, expected, now);
    vb_tx_complete(ep, l);
    vb_tx_pump(ep, l, now);
}

/* Segment `e` was lost: count the attempt, halve the window, go back to it. */
static void tx_rewind(struct vb_ep *ep, struct vb_lane *l, uint32_t e, uint64_t now)
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
              ep->base.peer, ep->dom->dev->info.name, l->idx, l->qp->qp_num, e, tx->retries,
              ep->retry_cnt);
        vb_ep_fail(ep, -ETIMEDOUT,
                   "lost segment seq %u on lane %d (QP %u) %d times: retransmissions "
                   "exhausted (NCCL_JACCL_RETRY_CNT=%d)",
                   e, l->idx, l->qp->qp_num, tx->retries, ep->retry_cnt);
        return;
    }
    tx->ssthresh = tx->cwnd / 2 > VB_CWND_MIN ? tx->cwnd / 2 : VB_CWND_MIN;
    tx->cwnd = tx->ssthresh;
    tx->cwnd_acc = 0;
    tx->snd = e;
    JTRACE(NCCL_NET, "verbs fabric: peer %s lane %d: retransmitting from seq %u (try %d)",
           ep->base.peer, l->idx, e, tx->retries);
    vb_tx_pump(ep, l, now);
}

void vb_tx_on_nak(struct vb_ep *ep, struct vb_lane *l, uint32_t expected, uint32_t epoch,
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

void vb_tx_on_reply(struct vb_ep *ep, struct vb_lane *l, uint32_t expected, uint32_t epoch,
                    uint64_t now)
{
    struct vb_tx *tx = &l->tx;

    if (!tx->probe_pending || epoch != tx->epoch)
        return;
    tx->probe_pending = 0;
    tx_acked(l, expected, now);
    vb_tx_complete(ep, l);
    if (expected == tx->una && vb_sdiff(tx->snd, expected) > 0) {
        tx_rewind(ep, l, expected, now); /* the fence dropped what was still in flight */
    } else {
        ep->stats.spurious++;
        vb_tx_pump(ep, l, now);
    }
}

/* No acknowledgement for an RTO while segments are in flight: probe. The side channel is
 * reliable, so an outstanding probe needs no timer of its own (liveness covers a dead peer).
 * RC needs none at all: the hardware retransmits, or fails the QP with an error CQE. */
uint64_t vb_tx_timer(struct vb_ep *ep, struct vb_lane *l, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    uint64_t base, due;

    if (ep->qp_type == IBV_QPT_RC || tx->probe_pending || tx->una == tx->snd ||
        fab_ep_base_err(&ep->base) != 0)
        return UINT64_MAX;
    base = vb_seg_at(tx, tx->una)->tx_ns;
    if (base < tx->last_progress_ns)
        base = tx->last_progress_ns;
    due = base + tx_rto(tx);
    if (now < due)
        return due;
    tx->epoch = (tx->epoch + 1) & VB_EPOCH_MASK;
    tx->probe_pending = 1;
    ep->stats.probes++;
    if (tx->backoff < 6)
        tx->backoff++;
    JTRACE(NCCL_NET, "verbs fabric: peer %s lane %d: no ack for seq %u, probing", ep->base.peer,
           l->idx, tx->una);
    vb_side_send(ep, VB_F_PROBE, l->idx, tx->epoch, tx->snd);
    return UINT64_MAX;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive side of the reliability protocol (see verbs_rel.c): in-order delivery of arrived
 * segments to the caller's posted receives (and of the peer's advertisements to the sender side);
 * on UC gap reports, acknowledgements and the fence a probe sets, on RC receive credits. */
#include "fabric/verbs/verbs_int.h"

/* Epochs only move forward, a few at a time. A copy of an epoch older than the newest one seen
 * (or fenced by a probe) was sent before every copy of the newer one: it is stale. */
static int epoch_stale(struct vb_rx *rx, uint32_t e)
{
    if (((e - rx->min_epoch) & VB_EPOCH_MASK) >= 4)
        return 1;
    rx->min_epoch = e;
    return 0;
}

static int rq_pop(struct vb_lane *l, struct vb_rwr *out)
{
    if (l->rq_n == 0)
        return -1;
    *out = l->rq[l->rq_head];
    l->rq_head = (l->rq_head + 1) % l->rq_cap;
    l->rq_n--;
    l->rq_taken++;
    return 0;
}

static void rx_push(struct vb_ep *ep, struct vb_lane *l, uint64_t wr_id, enum fab_wc_op op,
                    uint64_t len, uint32_t imm)
{
    struct fab_wc wc = {.wr_id = wr_id,
                        .ep = &ep->fab,
                        .op = op,
                        .status = FAB_WC_OK,
                        .len = (uint32_t)len,
                        .imm = imm,
                        .lane = l->idx};

    fab_swcq_push(ep->cq, &wc);
}

static void rx_write(struct vb_ep *ep, struct vb_lane *l, enum vb_seg_type t, uint32_t lo,
                     uint32_t len)
{
    struct vb_rx *rx = &l->rx;
    struct vb_rwr w;

    if (rx->in_msg && rx->is_send) {
        vb_ep_fail(ep, -EPROTO, "sent a WRITE segment inside a SEND (lane %d)", l->idx);
        return;
    }
    if (!rx->in_msg) {
        rx->in_msg = 1;
        rx->is_send = 0;
        rx->bytes = 0;
    }
    /* The count is reported in 32 bits: a peer that keeps sending PART segments must not wrap
     * it (no caller post is larger than VB_MAX_MSG). */
    if (len > VB_MAX_MSG - rx->bytes) {
        vb_ep_fail(ep, -EPROTO, "sent a WRITE_IMM over %u bytes (lane %d)", VB_MAX_MSG, l->idx);
        return;
    }
    rx->bytes += len;
    if (t == VB_WRITE_PART)
        return;
    rx->in_msg = 0;
    if (rq_pop(l, &w) != 0) {
        vb_ep_fail(ep, -ENOMSG, "sent a %llu-byte WRITE_IMM with no RECV posted (lane %d)",
                   (unsigned long long)rx->bytes, l->idx);
        return;
    }
    rx_push(ep, l, w.wr_id, FAB_WC_RECV_IMM, rx->bytes, lo);
}

/* The SEND's bytes are already in the RECV's buffer (the sender wrote them there). */
static void rx_send(struct vb_ep *ep, struct vb_lane *l, enum vb_seg_type t, uint32_t lo,
                    uint32_t len)
{
    struct vb_rx *rx = &l->rx;

    if (rx->in_msg && !rx->is_send) {
        vb_ep_fail(ep, -EPROTO, "sent a SEND inside a WRITE (lane %d)", l->idx);
        return;
    }
    if (!rx->in_msg) {
        if (rq_pop(l, &rx->cur) != 0) {
            vb_ep_fail(ep, -ENOMSG, "sent a SEND with no RECV posted (lane %d)", l->idx);
            return;
        }
        rx->in_msg = 1;
        rx->is_send = 1;
        rx->bytes = 0;
    }
    rx->bytes += len;
    if ((lo & VB_SEND_TOO_LONG) || rx->bytes > rx->cur.cap) {
        vb_ep_fail(ep, -EMSGSIZE, "sent a SEND longer than the %zu-byte RECV (lane %d)",
                   rx->cur.cap, l->idx);
        return;
    }
    if (t == VB_SEND_FINAL) {
        rx->in_msg = 0;
        rx_push(ep, l, rx->cur.wr_id, FAB_WC_RECV, rx->bytes, 0);
    }
}

/* RC: delivered once, in order, by the hardware; a sequence number out of place is a broken
 * peer (or back end), not a loss to recover from. */
static int rx_rc_in_order(struct vb_ep *ep, struct vb_lane *l, uint32_t imm)
{
    uint32_t seq = vb_imm_seq(imm), want = l->rx.expected & VB_SEQ_MASK;

    if (seq == want && vb_imm_epoch(imm) == 0)
        return 1;
    vb_ep_fail(ep, -EPROTO, "sent segment seq %u (epoch %u) on RC lane %d where seq %u was due",
               seq, vb_imm_epoch(imm), l->idx, want);
    return 0;
}

/* UC: whether the segment is the next one due. Counts it for the next ACK when it is; reports a
 * gap once per epoch when it is not. */
static int rx_uc_in_order(struct vb_ep *ep, struct vb_lane *l, uint32_t imm)
{
    struct vb_rx *rx = &l->rx;
    enum vb_seg_type t = vb_imm_type(imm);
    uint32_t e = vb_imm_epoch(imm);
    uint32_t d = (vb_imm_seq(imm) - rx->expected) & VB_SEQ_MASK;

    if (epoch_stale(rx, e))
        return 0;
    if (d != 0) {
        if (d < (VB_SEQ_MASK + 1) / 2 && rx->nak_epoch != (int)e) {
            rx->nak_epoch = (int)e; /* one gap report per epoch, not one per dropped copy */
            vb_side_send(ep, VB_F_NAK, l->idx, e, rx->expected);
        }
        return 0; /* out of order (gap) or an old duplicate */
    }
    rx->nak_epoch = -1;
    /* One ACK per segment costs a message and a completion at each end: acknowledge a
     * caller message's end at once (its sender completes on it), and a segment that fills the
     * sender's window (it sends nothing more until acknowledged), the rest every few; an
     * advertisement completes nothing, so it waits for company too. */
    int adv = vb_imm_is_adv(imm); /* its low bits name a RECV: no VB_ACK_REQ among them */

    if (t == VB_WRITE_FINAL || (!adv && (t == VB_SEND_FINAL || (imm & VB_ACK_REQ))) ||
        ++rx->unacked >= VB_ACK_EVERY)
        rx->ack_due = VB_ACK_NOW;
    else if (!rx->ack_due)
        rx->ack_due = VB_ACK_LATER;
    return 1;
}

void vb_rx_segment(struct vb_ep *ep, struct vb_lane *l, uint32_t imm, uint32_t len)
{
    enum vb_seg_type t = vb_imm_type(imm);

    if (ep->qp_type == IBV_QPT_RC ? !rx_rc_in_order(ep, l, imm) : !rx_uc_in_order(ep, l, imm))
        return;
    l->rx.expected++;
    if (vb_imm_is_adv(imm))
        vb_adv_arrived(ep, l, imm & VB_ADV_IDX_MASK, len);
    else if (t == VB_WRITE_FINAL || t == VB_WRITE_PART)
        rx_write(ep, l, t, imm & 0xffffu, len);
    else
        rx_send(ep, l, t, imm & 0xffffu, len);
}

uint64_t vb_rx_ack(struct vb_ep *ep, struct vb_lane *l, uint64_t now)
{
    struct vb_rx *rx = &l->rx;

    if (!rx->ack_due)
        return UINT64_MAX;
    if (rx->ack_due == VB_ACK_LATER) {
        if (!rx->ack_by_ns)
            rx->ack_by_ns = now + VB_ACK_DELAY_NS;
        if (now < rx->ack_by_ns)
            return rx->ack_by_ns;
    }
    if (vb_ctl_post(ep, l, VB_LO_CTL, rx->expected) != 0)
        return now + VB_ACK_DELAY_NS; /* the send queue is full: after its next CQE */
    rx->ack_due = 0;
    rx->unacked = 0;
    rx->ack_by_ns = 0;
    ep->stats.acks++;
    return UINT64_MAX;
}

/* Reported once VB_CREDIT_EVERY gathered, not per segment: that would cost the side frame per
 * message the ACKs cost. No sender waits for ever: one stopped at its last covered segment has
 * used VB_HW_RQ receives beyond the last report, so once they have arrived and been posted
 * again, more than VB_CREDIT_EVERY have gathered. */
void vb_rx_reposted(struct vb_ep *ep, struct vb_lane *l, int n)
{
    struct vb_rx *rx = &l->rx;

    if (ep->qp_type != IBV_QPT_RC)
        return; /* UC: the window is under VB_HW_RQ, the ACK of a segment follows its repost */
    rx->reposted += (uint32_t)n;
    if (!rx->credit_due && rx->reposted - rx->credit_sent < VB_CREDIT_EVERY)
        return;
    rx->credit_due = vb_ctl_post(ep, l, VB_LO_CTL | VB_LO_CREDIT, rx->reposted) != 0;
    if (rx->credit_due)
        return; /* the send queue is full: the next drain tries again */
    rx->credit_sent = rx->reposted;
    ep->stats.credits++;
}

void vb_rx_on_probe(struct vb_ep *ep, struct vb_lane *l, uint32_t epoch)
{
    l->rx.min_epoch = epoch & VB_EPOCH_MASK;
    l->rx.nak_epoch = -1;
    vb_side_send(ep, VB_F_REPLY, l->idx, epoch, l->rx.expected);
}

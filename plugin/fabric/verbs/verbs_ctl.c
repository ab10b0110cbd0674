/* SPDX-License-Identifier: BSD-3-Clause */
/* Controls: zero-byte WRITE_IMMs on the lane's own QP whose immediate carries an ACK (UC: the
 * receiver's next expected segment), a receive credit (RC: the hardware receives it has posted
 * again) or an ASK (where is your RECV k?, verbs_adv.c), where a frame on the TCP side channel
 * would go: no system call, and the peer learns it from the CQ it drains anyway. They have no
 * sequence number of their own and no caller buffer. ACKs and credits are cumulative, so one UC
 * loses is covered by the next, or by the probe after an RTO (verbs_rel.c); an ASK is repeated
 * while its SEND waits. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "fabric/verbs/verbs_int.h"
#include "util/counters.h"

int vb_ctl_post(struct vb_ep *ep, struct vb_lane *l, uint32_t lo, uint32_t val)
{
    struct vb_tx *tx = &l->tx;
    struct ibv_send_wr wr;
    int rc, sig;

    if (fab_ep_base_err(&ep->base) != 0 || !ep->peer_ready)
        return -ENOTCONN;
    if (tx->hw_n >= VB_HWQ_CAP)
        return -EAGAIN;
    memset(&wr, 0, sizeof(wr));
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.imm_data = htonl(vb_imm_make(VB_WRITE_PART, 0, val, lo));
    /* Signaled as often as segments are, so the send queue never fills with unretired WRs. */
    sig = ++tx->unsignaled >= VB_SIGNAL_EVERY;
    if (sig) {
        wr.send_flags = IBV_SEND_SIGNALED;
        tx->unsignaled = 0;
    }
    rc = vb_tx_post_chain(ep, l, &wr);
    if (rc != 0)
        return rc;
    vb_hw_push(tx, VB_HW_CTRL, 0, 0, sig);
    jaccl_count(JACCL_CNT_RDMA_CTL, 1);
    return 0;
}

void vb_ctl_arrived(struct vb_ep *ep, struct vb_lane *l, uint32_t imm, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    uint32_t low = vb_imm_seq(imm), d;
    int credit = (imm & VB_LO_CREDIT) != 0;

    if (imm & VB_LO_ASK) {
        if (credit) {
            vb_ep_fail(ep, -EPROTO, "sent a control of no known kind on lane %d", l->idx);
            return;
        }
        vb_adv_asked(ep, l, (low << 13) | (imm & VB_ASK_LO_MASK));
        vb_tx_pump(ep, l, now);
        return;
    }
    /* An ACK on RC would move una, which there only send CQEs move. */
    if (credit != (ep->qp_type == IBV_QPT_RC)) {
        vb_ep_fail(ep, -EPROTO, "sent %s on lane %d, which its %s lanes never send",
                   credit ? "a receive credit" : "an ACK", l->idx,
                   ep->qp_type == IBV_QPT_RC ? "RC" : "UC");
        return;
    }
    if (credit) {
        vb_tx_on_credit(ep, l, low, now);
        return;
    }
    /* ACKs go out in order, each covering those before; but a probe's reply (side channel) may
     * have moved una past one still in flight, which then reads as far ahead: it is old. */
    d = (low - tx->una) & VB_SEQ_MASK;
    if (d > tx->nxt - tx->una)
        return;
    vb_tx_on_ack(ep, l, tx->una + d, now);
}

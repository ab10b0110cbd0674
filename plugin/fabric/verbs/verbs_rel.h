/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs back end's reliability protocol: per-lane sequence numbers, epochs and the send
 * window (sender: verbs_tx.c, verbs_rel.c; receiver: verbs_rx.c), and its tunables. The wire
 * format it speaks is verbs_wire.h; verbs_rel.c says why a stale copy never lands on memory
 * already handed back to the caller. Everything here runs under the endpoint's ep->mu. */
#ifndef JACCL_FABRIC_VERBS_REL_H
#define JACCL_FABRIC_VERBS_REL_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/verbs/verbs_wire.h"

struct vb_ep;
struct vb_lane;
struct ibv_send_wr;

#define VB_SEG_WIN      512 /* unacknowledged segments per lane (< half the sequence space) */
#define VB_CWND_INIT    32  /* segments in flight before the first loss */
#define VB_CWND_MIN     2
#define VB_HW_SQ        256          /* send WRs outstanding on one QP, segments */
#define VB_HW_CTL       8            /* and this many more for controls (verbs_ctl.c) */
#define VB_HW_BYTES     (512u << 10) /* bytes outstanding on one QP's send queue */
#define VB_SIGNAL_EVERY 16           /* one send CQE per this many segments, at least */
#define VB_ACK_EVERY    8            /* segments delivered before an ACK goes out at once */
#define VB_ACK_DELAY_NS 1000000ull   /* longest an ACK of a message's middle waits */
/* RC: receives a sender leaves to the peer's controls (credits, a few per VB_HW_RQ segments),
 * which no credit covers */
#define VB_CTL_RESERVE 16
/* A RECV without room for bytes is advertised only when the SEND that consumes it (empty, or too
 * long) asks: a SEND that has waited this long for its RECV's advertisement asks for it (an
 * ASK control), and asks again after VB_RTO_MIN if UC lost the ASK or the answer. */
#define VB_ADV_ASK_NS 100000ull
/* Retransmission timeout: soft-RoCE under emulation stalls for tens of ms now and then, and a
 * spurious probe throws away everything in flight, so the floor is high. */
#define VB_RTO_INIT 300000000ull
#define VB_RTO_MIN  100000000ull
#define VB_RTO_MAX  3000000000ull

/* Receiver's ACK urgency: a message's last segment, a segment that fills the sender's window
 * (VB_ACK_REQ), or VB_ACK_EVERY segments are acknowledged at the end of the drain; other
 * middle segments may wait VB_ACK_DELAY_NS for company. */
enum { VB_ACK_LATER = 1, VB_ACK_NOW = 2 };

struct vb_rwr { /* a caller's posted RECV */
    uint64_t wr_id;
    char *buf;
    size_t cap;
};

struct vb_msg { /* a caller's SEND or WRITE_IMM, kept until acknowledged */
    uint64_t wr_id;
    int is_send;
    const char *buf;
    uint32_t lkey;
    size_t len;
    uint64_t raddr;
    uint32_t rkey;
    uint16_t imm;
    int have_dst;      /* SEND: the RECV it consumes is known (raddr, rkey) */
    int too_long;      /* SEND: longer than that RECV */
    int hw_refs;       /* copies the hardware may still be reading */
    int all_segs;      /* its final segment exists */
    uint32_t last_seq; /* sequence number of that final segment */
};

struct vb_seg {   /* one WRITE_IMM on the wire */
    uint32_t msg; /* absolute message index; of an advertisement: its RECV's number */
    size_t off;
    uint32_t len;
    uint8_t type; /* enum vb_seg_type */
    uint8_t retx; /* sent more than once (no RTT sample) */
    uint8_t adv;  /* an advertisement of one of our RECVs, not a caller's bytes */
    uint64_t tx_ns;
};

struct vb_tx {              /* sender side of a lane (verbs_rel.c) */
    uint32_t una, snd, nxt; /* oldest unacked, next to (re)transmit, next new */
    struct vb_seg seg[VB_SEG_WIN];
    uint32_t high;           /* one past the highest sequence number ever posted */
    uint32_t cwnd, cwnd_acc; /* congestion window in segments, additive-increase credit */
    uint32_t ssthresh;
    uint32_t epoch;
    int probe_pending;
    uint32_t retry_seq;
    int retries;
    uint64_t last_progress_ns;
    uint64_t srtt_ns, rttvar_ns;
    int backoff;
    uint32_t msg_cur; /* message being cut into segments (absolute) */
    size_t cur_off;
    /* every posted WR, in order: */
    uint32_t hwq[VB_HW_SQ + VB_HW_CTL];    /* absolute message index (VB_HW_MSG) */
    uint8_t hw_kind[VB_HW_SQ + VB_HW_CTL]; /* enum vb_hw_kind */
    uint32_t hw_len[VB_HW_SQ + VB_HW_CTL];
    uint8_t hw_sig[VB_HW_SQ + VB_HW_CTL]; /* signaled: its CQE retires it and all before it */
    uint32_t hw_head, hw_n;
    size_t hw_bytes;
    uint32_t unsignaled;    /* WRs posted since the last signaled one */
    uint32_t peer_reposted; /* RC: the peer's receives posted again, as its last credit said */
    uint32_t wait_k;        /* one past the peer's RECV a SEND waits to see advertised, or 0 */
    uint64_t wait_ns;       /* since when */
    uint64_t asked_ns;      /* when it asked (0: not yet) */
};

/* What a posted WR is: a caller's segment, an advertisement segment (sequenced, no caller
 * buffer), or a control (neither). */
enum vb_hw_kind { VB_HW_MSG = 0, VB_HW_ADV, VB_HW_CTRL };
#define VB_HWQ_CAP (VB_HW_SQ + VB_HW_CTL)

struct vb_rx { /* receiver side of a lane */
    uint32_t expected;
    int nak_epoch; /* epoch a NAK was sent for since the last delivery, -1 none */
    uint32_t min_epoch;
    int ack_due;        /* VB_ACK_LATER or VB_ACK_NOW; 0: nothing to acknowledge */
    uint32_t unacked;   /* segments delivered since the last ACK */
    uint64_t ack_by_ns; /* when a VB_ACK_LATER must go out at the latest */
    int in_msg, is_send;
    struct vb_rwr cur;
    uint64_t bytes;
    int reposts;          /* hardware receives to post again */
    int ctl_reposts;      /* of those, taken by the peer's controls (no credit counts them) */
    uint32_t reposted;    /* RC: hardware receives posted again for segments so far (wraps) */
    uint32_t credit_sent; /* RC: the value of `reposted` the last credit carried */
    int credit_due;       /* RC: a credit could not be posted yet (send queue full) */
};

/* Records a WR just posted to the lane's QP, in posting order (send CQEs retire them). */
static inline void vb_hw_push(struct vb_tx *tx, enum vb_hw_kind kind, uint32_t msg, uint32_t len,
                              int sig)
{
    uint32_t slot = (tx->hw_head + tx->hw_n) % VB_HWQ_CAP;

    tx->hw_kind[slot] = (uint8_t)kind;
    tx->hwq[slot] = msg;
    tx->hw_len[slot] = len;
    tx->hw_sig[slot] = (uint8_t)sig;
    tx->hw_n++;
    tx->hw_bytes += len;
}

static inline struct vb_seg *vb_seg_at(struct vb_tx *tx, uint32_t seq)
{
    return &tx->seg[seq % VB_SEG_WIN];
}

/* a - b as a signed distance (sequence numbers wrap at 2^32) */
static inline int32_t vb_sdiff(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b);
}

/* verbs_tx.c (segments, posting, completions) and verbs_rel.c (acknowledgements, loss
 * recovery, the window): the sender side of the protocol, all under ep->mu */
void vb_tx_init(struct vb_tx *tx, uint64_t now);
/* Posts a chain of WRs to the lane's QP: one doorbell. A refusal fails the endpoint: -errno. */
int vb_tx_post_chain(struct vb_ep *ep, struct vb_lane *l, struct ibv_send_wr *wr);
/* Transmits what the window, the hardware queue and the peer's advertised RECVs allow. */
void vb_tx_pump(struct vb_ep *ep, struct vb_lane *l, uint64_t now);
void vb_tx_on_send_cqe(struct vb_ep *ep, struct vb_lane *l);
void vb_tx_on_ack(struct vb_ep *ep, struct vb_lane *l, uint32_t expected, uint64_t now);
void vb_tx_on_nak(struct vb_ep *ep, struct vb_lane *l, uint32_t expected, uint32_t epoch,
                  uint64_t now);
void vb_tx_on_reply(struct vb_ep *ep, struct vb_lane *l, uint32_t expected, uint32_t epoch,
                    uint64_t now);
/* Retransmit timer; returns the next time it wants to run (UINT64_MAX: idle). */
uint64_t vb_tx_timer(struct vb_ep *ep, struct vb_lane *l, uint64_t now);
/* RC: a credit control: the low VB_SEQ_BITS of the hardware receives the peer has posted again
 * for our segments since the start. */
void vb_tx_on_credit(struct vb_ep *ep, struct vb_lane *l, uint32_t low, uint64_t now);
/* RC: `n` hardware receives were posted again for segments; reports them once VB_CREDIT_EVERY
 * gathered. */
void vb_rx_reposted(struct vb_ep *ep, struct vb_lane *l, int n);
/* Sends the lane's due ACK (now: VB_ACK_NOW or past its delay) as a control; returns when to
 * look again. */
uint64_t vb_rx_ack(struct vb_ep *ep, struct vb_lane *l, uint64_t now);
/* One arrived segment (imm in host order, len = bytes written). */
void vb_rx_segment(struct vb_ep *ep, struct vb_lane *l, uint32_t imm, uint32_t len);
void vb_rx_on_probe(struct vb_ep *ep, struct vb_lane *l, uint32_t epoch);
/* Completes finished caller sends in order. */
void vb_tx_complete(struct vb_ep *ep, struct vb_lane *l);

#endif

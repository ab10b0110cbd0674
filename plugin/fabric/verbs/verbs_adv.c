/* SPDX-License-Identifier: BSD-3-Clause */
/* Advertisements of posted RECVs, through RDMA, the way NCCL's IB transport posts its receives
 * into a FIFO in the sender's memory. A caller SEND is written straight into the RECV it
 * consumes (the k-th message of a lane consumes the k-th RECV), so its sender must know where
 * that RECV is. The RECV's owner writes {addr, rkey, cap, k} into slot k % slots of the lane's
 * ring in the sender's memory, with a WRITE_IMM that is a sequenced segment of its own stream:
 * in order with the rest, and on UC as reliable as the rest (go-back-N). Its immediate names k's
 * low bits. Nothing crosses the side channel.
 *
 * Slots: the sender reads slot k only for a message k it has not cut yet. The owner writes RECV
 * k + peer_slots only once RECV k was consumed (the sender cut message k), and a ring holds as
 * many slots as its owner may have RECVs posted, so that wait is for rings of different sizes.
 *
 * A RECV without room for bytes (p2p's receives for WRITE_IMMs, an empty piece of a collective)
 * is advertised only when a RECV with room is posted after it (advertisements go in order) or
 * when the peer asks for it: a WRITE_IMM needs no advertisement, and only a SEND that is empty
 * or too long would go into it. Such a SEND waits VB_ADV_ASK_NS, then sends an ASK control
 * naming the RECV (again after VB_RTO_MIN while it waits: UC may lose either message), and the
 * owner advertises everything up to it. A RECV consumed before its advertisement went out is
 * skipped; the reader tolerates the gap: it never wants a RECV whose message it already sent. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/verbs/verbs_int.h"
#include "util/counters.h"

int vb_ring_create(struct vb_ep *ep)
{
    struct vb_ring *r = &ep->ring;
    size_t n = 2 * (size_t)ep->nlanes * (size_t)ep->max_recv_wr;

    r->slots = (uint32_t)ep->max_recv_wr;
    r->mem = calloc(n, sizeof(*r->mem));
    if (!r->mem)
        return -ENOMEM;
    r->mr = ep->ibv->reg_mr(ep->dom->pd, r->mem, n * sizeof(*r->mem),
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!r->mr)
        return -ENOMEM;
    for (int i = 0; i < ep->nlanes; i++) {
        ep->lane[i].adv_in = r->mem + (size_t)i * r->slots;
        ep->lane[i].adv_out = r->mem + (size_t)(ep->nlanes + i) * r->slots;
    }
    return 0;
}

void vb_ring_destroy(struct vb_ep *ep)
{
    if (ep->ring.mr)
        ep->ibv->dereg_mr(ep->ring.mr);
    free(ep->ring.mem);
    ep->ring.mr = NULL;
    ep->ring.mem = NULL;
}

void vb_ring_fill_info(const struct vb_ep *ep, struct vb_info *info)
{
    info->ring_addr = htole64((uint64_t)(uintptr_t)ep->ring.mem);
    info->ring_rkey = htole32(ep->ring.mr->rkey);
    info->ring_slots = htole32(ep->ring.slots);
}

void vb_ring_adopt(struct vb_ep *ep, const struct vb_info *peer)
{
    ep->ring.peer_addr = le64toh(peer->ring_addr);
    ep->ring.peer_rkey = le32toh(peer->ring_rkey);
    ep->ring.peer_slots = le32toh(peer->ring_slots);
}

void vb_adv_posted(struct vb_ep *ep, struct vb_lane *l, const struct vb_rwr *w, uint32_t rkey)
{
    uint32_t k = l->rq_posted++;
    struct vb_adv_wire *a = &l->adv_out[k % ep->ring.slots];

    a->addr = htole64((uint64_t)(uintptr_t)w->buf);
    a->rkey = htole32(rkey);
    a->cap = htole32((uint32_t)w->cap);
    a->idx = htole32(k);
    if (w->cap > 0)
        l->rq_room = k + 1;
}

/* The oldest RECV still to advertise, past those whose message came (nobody reads their slots
 * again); 0 if none. */
static int adv_pending(struct vb_lane *l)
{
    if (vb_sdiff(l->rq_taken, l->adv_next) > 0)
        l->adv_next = l->rq_taken;
    return l->adv_next != l->rq_posted;
}

int vb_adv_due(struct vb_ep *ep, struct vb_lane *l, uint32_t *k)
{
    if (!adv_pending(l) || ep->ring.peer_slots == 0)
        return 0;
    if (l->adv_next - l->rq_taken >= ep->ring.peer_slots)
        return 0; /* the peer may still read the slot it would land in */
    if (vb_sdiff(l->rq_room, l->adv_next) <= 0 && vb_sdiff(l->adv_asked, l->adv_next) <= 0)
        return 0; /* no room, nobody asked */
    *k = l->adv_next++;
    ep->stats.advs++;
    jaccl_count(JACCL_CNT_RDMA_ADV, 1);
    return 1;
}

void vb_adv_asked(struct vb_ep *ep, struct vb_lane *l, uint32_t k24)
{
    /* The peer asks for the RECV of a message it has not sent: at or past our consumed ones,
     * and within the numbers an ASK can tell apart. */
    uint32_t mask = (1u << VB_ASK_BITS) - 1;
    uint32_t k = l->rq_taken + ((k24 - l->rq_taken) & mask);

    if (vb_sdiff(k + 1, l->adv_asked) > 0)
        l->adv_asked = k + 1;
}

/* The peer's RECV k is not advertised yet: ask for it, once it waited VB_ADV_ASK_NS (most
 * advertisements are only on their way), and again every VB_RTO_MIN. */
static void adv_ask(struct vb_ep *ep, struct vb_lane *l, uint32_t k, uint64_t now)
{
    struct vb_tx *tx = &l->tx;

    if (tx->wait_k != k + 1) {
        tx->wait_k = k + 1;
        tx->wait_ns = now;
        tx->asked_ns = 0;
    }
    if (now < (tx->asked_ns ? tx->asked_ns + VB_RTO_MIN : tx->wait_ns + VB_ADV_ASK_NS))
        return;
    if (vb_ctl_post(ep, l, VB_LO_CTL | VB_LO_ASK | (k & VB_ASK_LO_MASK), (k >> 13) & VB_SEQ_MASK) ==
        0)
        tx->asked_ns = now ? now : 1;
}

uint64_t vb_adv_timer(struct vb_ep *ep, struct vb_lane *l, uint64_t now)
{
    struct vb_tx *tx = &l->tx;
    uint64_t due;

    if (tx->wait_k == 0 || fab_ep_base_err(&ep->base) != 0)
        return UINT64_MAX;
    due = tx->asked_ns ? tx->asked_ns + VB_RTO_MIN : tx->wait_ns + VB_ADV_ASK_NS;
    if (now < due)
        return due;
    vb_tx_pump(ep, l, now); /* looks the advertisement up again, and asks */
    if (tx->wait_k == 0)
        return UINT64_MAX;
    return tx->asked_ns ? tx->asked_ns + VB_RTO_MIN : now + VB_ADV_ASK_NS;
}

void vb_adv_fill_wr(struct vb_ep *ep, struct vb_lane *l, uint32_t k, struct ibv_send_wr *wr,
                    struct ibv_sge *sge)
{
    const struct vb_ring *r = &ep->ring;
    uint64_t slot = (uint64_t)l->idx * r->peer_slots + k % r->peer_slots;

    memset(wr, 0, sizeof(*wr));
    sge->addr = (uint64_t)(uintptr_t)&l->adv_out[k % r->slots];
    sge->length = sizeof(struct vb_adv_wire);
    sge->lkey = r->mr->lkey;
    wr->sg_list = sge;
    wr->num_sge = 1;
    wr->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr->wr.rdma.remote_addr = r->peer_addr + slot * sizeof(struct vb_adv_wire);
    wr->wr.rdma.rkey = r->peer_rkey;
}

void vb_adv_arrived(struct vb_ep *ep, struct vb_lane *l, uint32_t k15, uint32_t len)
{
    /* Advertisements come in order, skipping some: k is the first number at or past adv_n with
     * these low bits. */
    uint32_t k = l->adv_n + ((k15 - l->adv_n) & VB_ADV_IDX_MASK);

    if (len != sizeof(struct vb_adv_wire)) {
        vb_ep_fail(ep, -EPROTO, "sent a %u-byte advertisement (lane %d)", len, l->idx);
        return;
    }
    /* Its slot must not hold one we still need: only [msg_cur, adv_n) is still to be read. */
    if (vb_sdiff(k, l->tx.msg_cur) >= (int32_t)ep->ring.slots) {
        vb_ep_fail(ep, -EPROTO,
                   "advertised RECV %u on lane %d with %u messages sent: more than "
                   "the %u it may have posted",
                   k, l->idx, l->tx.msg_cur, ep->ring.slots);
        return;
    }
    l->adv_n = k + 1;
}

int vb_adv_lookup(struct vb_ep *ep, struct vb_lane *l, uint32_t k, uint64_t now,
                  struct vb_adv_wire *out)
{
    const struct vb_adv_wire *a = &l->adv_in[k % ep->ring.slots];

    if (vb_sdiff(l->adv_n, k) <= 0) {
        adv_ask(ep, l, k, now);
        return 0;
    }
    l->tx.wait_k = 0;
    out->addr = le64toh(a->addr);
    out->rkey = le32toh(a->rkey);
    out->cap = le32toh(a->cap);
    out->idx = le32toh(a->idx);
    if (out->idx == k)
        return 1;
    vb_ep_fail(ep, -EPROTO, "left RECV %u of lane %d unadvertised (its slot holds RECV %u)", k,
               l->idx, out->idx);
    return -1;
}

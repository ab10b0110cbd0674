/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs back end's reliability protocol, with the verbs calls replaced by fakes: segmenting,
 * completion only once acknowledged (UC) or from the send CQE with no side frame (RC), in-order
 * delivery, gap detection (one NAK per epoch; fatal on RC), go-back-N retransmission, stale-NAK
 * and fenced-copy rejection, bounded retries, probes, ACKs and RC receive credits as RDMA
 * controls, RECV advertisements written through RDMA (deferred and skipped when they have no
 * room), SENDs written into the advertised RECV, and error CQEs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "fab_contract.h"
#include "fabric/verbs/verbs.h"
#include "verbs_fake.h"

static struct vb_dev g_vdev;
static struct vb_domain g_dom;
static char g_buf[8192];
static struct vb_mr g_mr;

static struct vb_ep *mk_ep(int nlanes, int qp_type)
{
    struct vb_ep *ep = calloc(1, sizeof(*ep) + (size_t)nlanes * sizeof(struct vb_lane));

    fk_reset();
    snprintf(g_vdev.info.name, sizeof(g_vdev.info.name), "fake0:1");
    g_dom.dev = &g_vdev;
    g_dom.ibv = &fk_lib;
    g_dom.epfd = -1;
    g_mr = (struct vb_mr){.dom = &g_dom, .addr = g_buf, .len = sizeof(g_buf), .lkey = 7, .rkey = 9};
    ep->dom = &g_dom;
    ep->ibv = &fk_lib;
    assert_int_equal(fab_swcq_create(&g_dom.fab, 64, &ep->cq), 0);
    ep->nlanes = nlanes;
    ep->max_send_wr = ep->max_recv_wr = 16;
    snprintf(ep->base.peer, sizeof(ep->base.peer), "10.0.0.9:1234");
    ep->qp_type = qp_type;
    ep->retry_cnt = 3;
    ep->seg_size = 1024;
    ep->side.fd = -1;
    ep->side.want_out = -1;
    ep->peer_ready = ep->connected = 1;
    pthread_mutex_init(&ep->mu, NULL);
    for (int i = 0; i < nlanes; i++) {
        struct vb_lane *l = &ep->lane[i];
        struct ibv_qp_init_attr qa = {.qp_type = (enum ibv_qp_type)qp_type};

        l->ep = ep;
        l->idx = i;
        l->rq_cap = l->mq_cap = 16;
        l->rq = calloc(16, sizeof(*l->rq));
        l->mq = calloc(16, sizeof(*l->mq));
        vb_tx_init(&l->tx, 0);
        l->rx.nak_epoch = -1;
        l->qp = fk_create_qp(NULL, &qa);
    }
    assert_int_equal(vb_ring_create(ep), 0);
    /* the peer's rings: as big as ours, somewhere else */
    ep->ring.peer_addr = 0x7f0000000000ull;
    ep->ring.peer_rkey = 0x66;
    ep->ring.peer_slots = ep->ring.slots;
    return ep;
}

static void free_ep(struct vb_ep *ep)
{
    for (int i = 0; i < ep->nlanes; i++) {
        free(ep->lane[i].rq);
        free(ep->lane[i].mq);
        free(ep->lane[i].qp);
    }
    vb_ring_destroy(ep);
    if (ep->side.fd >= 0)
        close(ep->side.fd);
    free(ep->side.out);
    fab_swcq_destroy(ep->cq);
    free(ep);
}

static int poll1(struct vb_ep *ep, struct fab_wc *wc)
{
    return fab_swcq_poll(ep->cq, wc, 1);
}

/* Frame i of what the endpoint queued on its side channel (24 bytes each). */
static int frame(const struct vb_ep *ep, int i, int *type, int *lane, int *epoch, uint32_t *seq)
{
    const unsigned char *f = ep->side.out + 24 * i;

    if ((uint32_t)(24 * (i + 1)) > ep->side.out_n)
        return 0;
    *type = f[0];
    *lane = f[1];
    *epoch = f[2];
    memcpy(seq, f + 4, 4);
    return 1;
}

/* The controls (ACKs, credits) among the WRs posted so far: how many, and the last one's value
 * (its sequence field) and whether it was a credit. */
static int ctls_sent(uint32_t *last, int *credit)
{
    int n = 0;

    for (int i = 0; i < fk_nsent; i++) {
        if (!vb_imm_is_ctl(fk_sent[i].imm))
            continue;
        assert_int_equal(fk_sent[i].len, 0);
        *last = vb_imm_seq(fk_sent[i].imm);
        if (credit)
            *credit = !!(fk_sent[i].imm & VB_LO_CREDIT);
        n++;
    }
    return n;
}

static void write_imm(struct vb_ep *ep, size_t len, uint32_t imm, uint64_t wr_id)
{
    struct fab_remote_buf dst = {0x10000, 0x77};

    assert_int_equal(fab_verbs_post_write_imm(ep, 0, g_buf, len, &g_mr, dst, imm, wr_id), 0);
}

static void test_imm_codec(void **st)
{
    uint32_t imm = vb_imm_make(VB_SEND_PART, 5, 0x12345, 0xbeef);

    assert_int_equal(vb_imm_type(imm), VB_SEND_PART);
    assert_int_equal(vb_imm_epoch(imm), 5);
    assert_int_equal(vb_imm_seq(imm), 0x12345 & VB_SEQ_MASK);
    assert_int_equal(imm & 0xffff, 0xbeef);
}

static void test_segments_and_completion_after_ack(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct fab_wc wc;

    write_imm(ep, 2500, 0x1234, 77);
    assert_int_equal(fk_nsent, 3);
    assert_int_equal(vb_imm_type(fk_sent[0].imm), VB_WRITE_PART);
    assert_int_equal(vb_imm_type(fk_sent[2].imm), VB_WRITE_FINAL);
    assert_int_equal(fk_sent[2].imm & 0xffff, 0x1234);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(vb_imm_seq(fk_sent[i].imm), i);
        assert_int_equal(vb_imm_epoch(fk_sent[i].imm), 0);
        assert_int_equal(fk_sent[i].raddr, 0x10000 + 1024u * (unsigned)i);
    }
    assert_int_equal(fk_sent[2].len, 2500 - 2048);
    /* UC: transmitted is not delivered. Nothing completes before the ACK... */
    for (int i = 0; i < 3; i++)
        vb_tx_on_send_cqe(ep, &ep->lane[0]);
    vb_tx_complete(ep, &ep->lane[0]);
    assert_int_equal(poll1(ep, &wc), 0);
    vb_tx_on_ack(ep, &ep->lane[0], 2, 1000);
    assert_int_equal(poll1(ep, &wc), 0);
    vb_tx_on_ack(ep, &ep->lane[0], 3, 2000);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 77);
    assert_int_equal(wc.op, FAB_WC_WRITE);
    assert_int_equal(wc.status, FAB_WC_OK);
    free_ep(ep);
}

/* ...nor while the hardware may still read the buffer for a retransmitted copy. */
static void test_no_completion_while_hw_reads(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct fab_wc wc;

    write_imm(ep, 100, 1, 5);
    vb_tx_on_ack(ep, &ep->lane[0], 1, 1000);
    assert_int_equal(poll1(ep, &wc), 0);
    vb_tx_on_send_cqe(ep, &ep->lane[0]);
    vb_tx_complete(ep, &ep->lane[0]);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 5);
    free_ep(ep);
}

static void test_nak_rewinds_and_stale_nak_ignored(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];

    write_imm(ep, 3000, 0, 1); /* seqs 0, 1, 2 */
    assert_int_equal(fk_nsent, 3);
    vb_tx_on_nak(ep, l, 1, 0, 1000); /* seq 1 lost */
    assert_int_equal(fk_nsent, 5);
    assert_int_equal(vb_imm_seq(fk_sent[3].imm), 1);
    assert_int_equal(vb_imm_epoch(fk_sent[3].imm), 1);
    assert_int_equal(vb_imm_seq(fk_sent[4].imm), 2);
    assert_int_equal(l->tx.una, 1);
    /* a second report of the same gap, from before the rewind, changes nothing */
    vb_tx_on_nak(ep, l, 1, 0, 1100);
    assert_int_equal(fk_nsent, 5);
    free_ep(ep);
}

static void test_retries_exhausted_fails_and_flushes(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    const char *why = NULL;
    struct fab_wc wc;

    write_imm(ep, 3000, 0, 42);
    write_imm(ep, 10, 0, 43);
    for (int i = 0; i <= ep->retry_cnt; i++)
        vb_tx_on_nak(ep, l, 1, l->tx.epoch, 1000 + (uint64_t)i);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, &why), FAB_WC_PEER_LOST);
    assert_non_null(strstr(why, "seq 1"));
    assert_non_null(strstr(why, "QP"));
    assert_non_null(strstr(why, "10.0.0.9:1234"));
    assert_non_null(strstr(why, "fake0:1"));
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 42);
    assert_int_equal(wc.status, FAB_WC_PEER_LOST);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 43);
    assert_int_equal(wc.status, FAB_WC_FLUSHED);
    assert_int_equal(poll1(ep, &wc), 0);
    free_ep(ep);
}

static void post_recvs(struct vb_ep *ep, int n)
{
    int before = fk_nsent;

    for (int i = 0; i < n; i++)
        assert_int_equal(fab_verbs_post_recv(ep, 0, NULL, 0, NULL, 100 + (uint64_t)i), 0);
    assert_int_equal(fk_nsent, before); /* no room: not advertised unless asked for */
}

static void test_rx_in_order_gap_nak_once(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    struct fab_wc wc;
    int t, ln, e;
    uint32_t seq;

    post_recvs(ep, 3);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 0, 0, 0x42), 100);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.op, FAB_WC_RECV_IMM);
    assert_int_equal(wc.len, 100);
    assert_int_equal(wc.imm, 0x42);
    assert_int_equal(wc.wr_id, 100);
    /* seq 1 lost: seq 2 and 3 are dropped, one NAK for the epoch */
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 0, 2, 0), 10);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 0, 3, 0), 10);
    assert_int_equal(poll1(ep, &wc), 0);
    assert_true(frame(ep, 0, &t, &ln, &e, &seq));
    assert_int_equal(t, VB_F_NAK);
    assert_int_equal(seq, 1);
    assert_int_equal(e, 0);
    assert_false(frame(ep, 1, &t, &ln, &e, &seq));
    /* the retransmission (epoch 1) delivers in order; an old duplicate is dropped */
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 1, 1, 7), 20);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 1, 0, 7), 20);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 101);
    assert_int_equal(wc.len, 20);
    assert_int_equal(poll1(ep, &wc), 0);
    /* a late copy from before the rewind (epoch 0) is stale */
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 0, 2, 0), 10);
    assert_int_equal(poll1(ep, &wc), 0);
    assert_int_equal(l->rx.expected, 2);
    free_ep(ep);
}

static void test_rx_multi_segment_write(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    struct fab_wc wc;

    post_recvs(ep, 1);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_PART, 0, 0, 0), 100);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_PART, 0, 1, 0), 100);
    assert_int_equal(poll1(ep, &wc), 0);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 0, 2, 9), 50);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.len, 250);
    assert_int_equal(wc.imm, 9);
    free_ep(ep);
}

/* A peer that never ends a WRITE cannot wrap the 32-bit byte count: past VB_MAX_MSG bytes
 * the endpoint fails, and it is the peer's fault. */
static void test_rx_write_overflow_fails(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    struct fab_wc wc;

    post_recvs(ep, 1);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_PART, 0, 0, 0), VB_MAX_MSG / 2);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_PART, 0, 1, 0), VB_MAX_MSG / 2);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, NULL), FAB_WC_OK);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_PART, 0, 2, 0), VB_MAX_MSG / 2);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, NULL), FAB_WC_PEER_PROTO);
    assert_int_equal(poll1(ep, &wc), 1); /* the RECV it was filling, flushed, never completed */
    assert_int_not_equal(wc.status, FAB_WC_OK);
    free_ep(ep);
}

/* The peer's last WRITE landed (its CQE not yet drained) and then it closed the side channel:
 * the landed message completes, only the RECV nothing arrived for fails. */
static void test_side_eof_delivers_landed_data_first(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    struct fab_wc wc;
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ep->side.fd = sv[0];
    post_recvs(ep, 2);
    fk_push_wc(l->qp->qp_num, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS,
               vb_imm_make(VB_WRITE_FINAL, 0, 0, 0x42), 100);
    close(sv[1]);
    vb_side_read(ep, 5000);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, NULL), FAB_WC_PEER_LOST);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.status, FAB_WC_OK);
    assert_int_equal(wc.len, 100);
    assert_int_equal(wc.imm, 0x42);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.status, FAB_WC_PEER_LOST);
    free_ep(ep);
}

static void test_rx_no_recv_is_fatal(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);

    vb_rx_segment(ep, &ep->lane[0], vb_imm_make(VB_WRITE_FINAL, 0, 0, 0), 8);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, NULL), FAB_WC_NO_RECV);
    free_ep(ep);
}

/* Feeds one frame to the endpoint through a real socket, as the peer would. */
static void feed(struct vb_ep *ep, int peer_fd, int type, uint32_t seq, uint64_t addr,
                 uint32_t rkey)
{
    unsigned char f[24] = {(unsigned char)type, 0, 0, 0};

    memcpy(f + 4, &seq, 4);
    memcpy(f + 8, &addr, 8);
    memcpy(f + 16, &rkey, 4);
    assert_int_equal(write(peer_fd, f, sizeof(f)), (ssize_t)sizeof(f));
    vb_side_read(ep, 5000);
}

/* The peer's back end advertises its RECV k as it would: the entry in our ring, then the
 * sequenced segment (seq) that says so, drained from the CQ. */
static void peer_adv(struct vb_ep *ep, uint32_t seq, uint32_t k, uint64_t addr, uint32_t cap)
{
    struct vb_lane *l = &ep->lane[0];

    l->adv_in[k % ep->ring.slots] =
            (struct vb_adv_wire){.addr = addr, .rkey = 0x55, .cap = cap, .idx = k};
    fk_push_wc(l->qp->qp_num, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS,
               vb_imm_make(VB_SEND_FINAL, 0, seq, VB_LO_CTL | k), sizeof(struct vb_adv_wire));
    vb_ep_drain(ep, 1000);
}

static void test_send_goes_into_advertised_recv(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);

    assert_int_equal(fab_verbs_post_send(ep, 0, g_buf, 40, &g_mr, 11), 0);
    assert_int_equal(fk_nsent, 0); /* where it goes is not known yet */
    peer_adv(ep, 0, 0, 0xabc000, 64);
    assert_int_equal(fk_nsent, 1); /* the SEND; the advertisement's ACK waits for company */
    assert_int_equal(vb_imm_type(fk_sent[0].imm), VB_SEND_FINAL);
    assert_false(vb_imm_is_adv(fk_sent[0].imm));
    assert_int_equal(fk_sent[0].raddr, 0xabc000);
    assert_int_equal(fk_sent[0].rkey, 0x55);
    assert_int_equal(fk_sent[0].len, 40);
    assert_int_equal(ep->lane[0].rx.ack_due, VB_ACK_LATER);
    /* longer than the next RECV: one empty segment flagged too long */
    assert_int_equal(fab_verbs_post_send(ep, 0, g_buf, 100, &g_mr, 12), 0);
    peer_adv(ep, 1, 1, 0xabd000, 10);
    assert_int_equal(fk_nsent, 2);
    assert_int_equal(fk_sent[1].len, 0);
    assert_int_equal(fk_sent[1].imm & 0xffff, VB_SEND_TOO_LONG);
    assert_int_equal(ep->side.out_n, 0); /* nothing on the side channel */
    free_ep(ep);
}

/* Our RECV with room is advertised at once, through RDMA: its entry goes from our outgoing ring
 * to its slot in the peer's, in a sequenced segment whose immediate names the RECV. */
static void test_recv_advertised_through_rdma(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_RC);
    struct vb_lane *l = &ep->lane[0];
    const struct vb_adv_wire *a;

    assert_int_equal(fab_verbs_post_recv(ep, 0, g_buf + 128, 64, &g_mr, 1), 0);
    assert_int_equal(fab_verbs_post_recv(ep, 0, g_buf + 256, 8, &g_mr, 2), 0);
    assert_int_equal(fk_nsent, 2);
    for (uint32_t k = 0; k < 2; k++) {
        assert_true(vb_imm_is_adv(fk_sent[k].imm));
        assert_int_equal(fk_sent[k].imm & VB_ADV_IDX_MASK, k);
        assert_int_equal(vb_imm_seq(fk_sent[k].imm), k); /* sequenced like any segment */
        assert_int_equal(fk_sent[k].len, sizeof(struct vb_adv_wire));
        assert_int_equal(fk_sent[k].raddr, ep->ring.peer_addr + k * sizeof(struct vb_adv_wire));
        assert_int_equal(fk_sent[k].rkey, 0x66);
        a = (const struct vb_adv_wire *)(uintptr_t)fk_sent[k].laddr;
        assert_ptr_equal(a, &l->adv_out[k]);
        assert_int_equal(a->idx, k);
        assert_int_equal(a->rkey, 9);
    }
    assert_int_equal(l->adv_out[0].addr, (uint64_t)(uintptr_t)(g_buf + 128));
    assert_int_equal(l->adv_out[0].cap, 64);
    assert_int_equal(l->adv_out[1].cap, 8);
    assert_int_equal(ep->side.out_n, 0);
    free_ep(ep);
}

/* A RECV without room is advertised only when asked for, or taken along by a RECV with room
 * posted after it; one whose message came before anyone asked is skipped. */
static void test_roomless_recv_advertised_when_asked(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_RC);
    struct vb_lane *l = &ep->lane[0];

    post_recvs(ep, 2);                                             /* RECVs 0 and 1 */
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 0, 0, 0), 8); /* RECV 0's message came */
    vb_ctl_arrived(ep, l, vb_imm_make(VB_WRITE_PART, 0, 0, VB_LO_CTL | VB_LO_ASK | 1), 100);
    assert_int_equal(fk_nsent, 1); /* only RECV 1, the one asked about */
    assert_true(vb_imm_is_adv(fk_sent[0].imm));
    assert_int_equal(fk_sent[0].imm & VB_ADV_IDX_MASK, 1);
    assert_int_equal(l->adv_out[1].cap, 0);
    post_recvs(ep, 1);                                                    /* RECV 2 waits... */
    assert_int_equal(fab_verbs_post_recv(ep, 0, g_buf, 64, &g_mr, 9), 0); /* ...not after this */
    assert_int_equal(fk_nsent, 3);
    assert_int_equal(fk_sent[1].imm & VB_ADV_IDX_MASK, 2);
    assert_int_equal(fk_sent[2].imm & VB_ADV_IDX_MASK, 3);
    /* an ASK names the RECV with 24 bits: the 11 above the low 13 ride in the seq field */
    l->rq_taken = l->rq_posted = l->adv_next = 0x12340;
    vb_adv_asked(ep, l, (0x12345u >> 13 << 13) | (0x12345u & VB_ASK_LO_MASK));
    assert_int_equal(l->adv_asked, 0x12346);
    free_ep(ep);
}

/* A SEND waiting for its RECV's advertisement asks for it after VB_ADV_ASK_NS (not before:
 * most advertisements are only on their way), then again only after VB_RTO_MIN. */
static void test_waiting_send_asks(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    uint64_t t0 = 1000000;
    uint32_t k;

    ep->peer_ready = 0;
    assert_int_equal(fab_verbs_post_send(ep, 0, g_buf, 0, &g_mr, 5), 0);
    ep->peer_ready = 1;
    vb_tx_pump(ep, l, t0);
    assert_int_equal(fk_nsent, 0);
    assert_int_equal(vb_adv_timer(ep, l, t0 + 10), t0 + VB_ADV_ASK_NS);
    assert_int_equal(vb_adv_timer(ep, l, t0 + VB_ADV_ASK_NS), t0 + VB_ADV_ASK_NS + VB_RTO_MIN);
    assert_int_equal(fk_nsent, 1);
    assert_true(vb_imm_is_ctl(fk_sent[0].imm));
    assert_true(fk_sent[0].imm & VB_LO_ASK);
    k = (vb_imm_seq(fk_sent[0].imm) << 13) | (fk_sent[0].imm & VB_ASK_LO_MASK);
    assert_int_equal(k, 0);
    vb_tx_pump(ep, l, t0 + 2 * VB_ADV_ASK_NS);
    assert_int_equal(fk_nsent, 1); /* not again so soon */
    peer_adv(ep, 0, 0, 0, 0);      /* the answer: a RECV without room; the empty SEND fits */
    assert_int_equal(fk_nsent, 2);
    assert_int_equal(vb_imm_type(fk_sent[1].imm), VB_SEND_FINAL);
    assert_int_equal(fk_sent[1].imm & VB_SEND_TOO_LONG, 0);
    assert_int_equal(vb_adv_timer(ep, l, t0 + VB_RTO_MIN * 2), UINT64_MAX);
    free_ep(ep);
}

/* What the peer writes into our ring is checked before use: a slot holding another RECV than
 * the one advertised, and a RECV beyond what the peer may have posted, fail the endpoint. */
static void test_bad_advertisements_refused(void **st)
{
    for (int c = 0; c < 2; c++) {
        struct vb_ep *ep = mk_ep(1, IBV_QPT_RC);
        struct vb_lane *l = &ep->lane[0];
        const char *why = NULL;

        assert_int_equal(fab_verbs_post_send(ep, 0, g_buf, 8, &g_mr, 1), 0);
        if (c == 0) {
            l->adv_in[0] = (struct vb_adv_wire){.addr = 0x1000, .rkey = 1, .cap = 8, .idx = 16};
            fk_push_wc(l->qp->qp_num, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS,
                       vb_imm_make(VB_SEND_FINAL, 0, 0, VB_LO_CTL | 0), 24);
        } else { /* RECV 16 with 16 slots and no message sent: RECV 0 is still unread */
            fk_push_wc(l->qp->qp_num, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS,
                       vb_imm_make(VB_SEND_FINAL, 0, 0, VB_LO_CTL | 16), 24);
        }
        vb_ep_drain(ep, 1000);
        assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, &why), FAB_WC_PEER_PROTO);
        assert_non_null(strstr(why, c == 0 ? "unadvertised" : "may have posted"));
        assert_int_equal(fk_nsent, 0); /* nothing was written anywhere */
        free_ep(ep);
    }
}

static void test_rx_send_and_too_long(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    struct fab_wc wc;

    assert_int_equal(fab_verbs_post_recv(ep, 0, g_buf, 64, &g_mr, 1), 0);
    assert_int_equal(fab_verbs_post_recv(ep, 0, g_buf, 8, &g_mr, 2), 0);
    vb_rx_segment(ep, l, vb_imm_make(VB_SEND_PART, 0, 0, 0), 30);
    vb_rx_segment(ep, l, vb_imm_make(VB_SEND_FINAL, 0, 1, 0), 10);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.op, FAB_WC_RECV);
    assert_int_equal(wc.len, 40);
    assert_int_equal(wc.wr_id, 1);
    vb_rx_segment(ep, l, vb_imm_make(VB_SEND_FINAL, 0, 2, VB_SEND_TOO_LONG), 0);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, NULL), FAB_WC_LEN_ERR);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 2);
    assert_int_equal(wc.status, FAB_WC_LEN_ERR);
    free_ep(ep);
}

static void test_probe_after_rto_then_rewind(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    int t, ln, e;
    uint32_t seq;
    uint64_t due;

    write_imm(ep, 2000, 0, 1); /* seqs 0, 1 */
    due = vb_tx_timer(ep, l, 1000);
    assert_true(due > 1000 && due != UINT64_MAX);
    assert_int_equal(ep->side.out_n, 0);
    assert_int_equal(vb_tx_timer(ep, l, due), UINT64_MAX);
    assert_true(frame(ep, 0, &t, &ln, &e, &seq));
    assert_int_equal(t, VB_F_PROBE);
    assert_int_equal(e, 1);
    assert_int_equal(seq, 2);
    /* probing: nothing more goes out; the reply says seq 1 never arrived */
    vb_tx_on_reply(ep, l, 1, 1, due + 10);
    assert_int_equal(fk_nsent, 3);
    assert_int_equal(vb_imm_seq(fk_sent[2].imm), 1);
    assert_int_equal(vb_imm_epoch(fk_sent[2].imm), 1);
    free_ep(ep);
}

static void test_rc_never_probes(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_RC);

    write_imm(ep, 100, 0, 1);
    assert_int_equal(vb_tx_timer(ep, &ep->lane[0], UINT64_MAX / 2), UINT64_MAX);
    free_ep(ep);
}

static void test_probe_fences_older_epochs(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    struct fab_wc wc;
    int t, ln, e;
    uint32_t seq;

    post_recvs(ep, 2);
    vb_rx_on_probe(ep, l, 3);
    assert_true(frame(ep, 0, &t, &ln, &e, &seq));
    assert_int_equal(t, VB_F_REPLY);
    assert_int_equal(e, 3);
    assert_int_equal(seq, 0);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 2, 0, 0), 10); /* still in flight */
    assert_int_equal(poll1(ep, &wc), 0);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 3, 0, 0), 10);
    assert_int_equal(poll1(ep, &wc), 1);
    free_ep(ep);
}

/* A WRITE_IMM whose send CQE carries an error: the endpoint fails with the verbs WARN's reason,
 * and the post completes with the failure's status. */
static struct vb_ep *error_cqe_case(int nlanes, enum ibv_qp_type qpt)
{
    struct vb_ep *ep = mk_ep(nlanes, qpt);
    const char *why = NULL;
    struct fab_wc wc;

    write_imm(ep, 10, 0, 99);
    fk_push_wc(ep->lane[0].qp->qp_num, IBV_WC_RDMA_WRITE, IBV_WC_RETRY_EXC_ERR, 0, 0);
    vb_ep_drain(ep, 1000);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, &why), FAB_WC_PEER_LOST);
    assert_non_null(strstr(why, "transport retry counter exceeded"));
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 99);
    assert_int_equal(wc.status, FAB_WC_PEER_LOST);
    return ep;
}

static void test_error_cqe_fails_endpoint(void **st)
{
    struct vb_ep *ep = error_cqe_case(2, IBV_QPT_UC);
    /* the QPs were moved to ERR so the hardware stops reading caller memory */
    assert_int_equal(fk_mod[fk_nmod - 1].state, IBV_QPS_ERR);
    free_ep(ep);
}

static void test_drain_delivers_and_acks(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct fab_wc wc;
    uint32_t seq = 0;
    int credit = 1;

    post_recvs(ep, 1);
    fk_push_wc(ep->lane[0].qp->qp_num, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS,
               vb_imm_make(VB_WRITE_FINAL, 0, 0, 5), 64);
    vb_ep_drain(ep, 1000);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.len, 64);
    assert_int_equal(fk_nrecv, 1);                 /* the hardware receive was posted again */
    assert_int_equal(ctls_sent(&seq, &credit), 1); /* the ACK: an RDMA control */
    assert_int_equal(seq, 1);
    assert_false(credit);
    assert_int_equal(ep->side.out_n, 0);
    free_ep(ep);
}

/* A caller's drive leaves the ACK of what it delivered to its next drive: the caller acts on the
 * delivery first. */
static void test_drive_leaves_ack_to_next_drive(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    uint32_t seq = 0;
    struct fab_wc wc;

    post_recvs(ep, 1);
    fk_push_wc(ep->lane[0].qp->qp_num, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS,
               vb_imm_make(VB_WRITE_FINAL, 0, 0, 5), 64);
    assert_int_equal(vb_ep_drive(&ep->src), 1);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(ctls_sent(&seq, NULL), 0);
    assert_int_equal(ep->lane[0].rx.ack_due, VB_ACK_NOW);
    assert_int_equal(vb_ep_drive(&ep->src), 0);
    assert_int_equal(ctls_sent(&seq, NULL), 1);
    assert_int_equal(seq, 1);
    free_ep(ep);
}

/* While a caller polls, a RECV's advertisement rides the doorbell of the next post. */
static void test_polled_advertisement_rides_next_post(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_RC);

    atomic_store(&ep->polled, 1);
    assert_int_equal(fab_verbs_post_recv(ep, 0, g_buf, 64, &g_mr, 1), 0);
    assert_int_equal(fk_nsent, 0);
    write_imm(ep, 8, 0, 2);
    assert_int_equal(fk_nsent, 2);
    assert_true(vb_imm_is_adv(fk_sent[0].imm));
    assert_false(fk_sent[0].signaled); /* one chain: only its end asks for a CQE */
    assert_int_equal(vb_imm_type(fk_sent[1].imm), VB_WRITE_FINAL);
    free_ep(ep);
}

/* An ACK control moves una and completes; one from before a probe's reply moved una past it
 * reads as far ahead of what was sent and is ignored. */
static void test_ack_control_completes_and_old_one_ignored(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    struct fab_wc wc;

    write_imm(ep, 2500, 0, 7); /* seqs 0..2 */
    vb_tx_on_send_cqe(ep, l);
    vb_ctl_arrived(ep, l, vb_imm_make(VB_WRITE_PART, 0, 3, VB_LO_CTL), 1000);
    assert_int_equal(l->tx.una, 3);
    vb_tx_complete(ep, l);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 7);
    vb_ctl_arrived(ep, l, vb_imm_make(VB_WRITE_PART, 0, 1, VB_LO_CTL), 1100); /* old */
    assert_int_equal(l->tx.una, 3);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, NULL), FAB_WC_OK);
    free_ep(ep);
}

/* Middle segments wait for company (VB_ACK_EVERY of them, or VB_ACK_DELAY_NS); a message's last
 * segment is acknowledged at the end of its drain. */
static int acks_queued(const struct vb_ep *ep, uint32_t *last)
{
    assert_int_equal(ep->side.out_n, 0);
    return ctls_sent(last, NULL);
}

static void test_acks_coalesced(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    uint32_t seq = 0, n = 0;
    uint64_t now = 5000;

    post_recvs(ep, 2);
    for (; n < VB_ACK_EVERY - 1; n++)
        vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_PART, 0, n, 0), 64);
    assert_int_equal(vb_rx_ack(ep, l, now), now + VB_ACK_DELAY_NS);
    assert_int_equal(acks_queued(ep, &seq), 0);
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_PART, 0, n++, 0), 64); /* the 8th */
    assert_int_equal(vb_rx_ack(ep, l, now), UINT64_MAX);
    assert_int_equal(acks_queued(ep, &seq), 1);
    assert_int_equal(seq, VB_ACK_EVERY);
    /* one more middle segment: held until its delay has passed */
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_PART, 0, n++, 0), 64);
    assert_int_equal(vb_rx_ack(ep, l, now + 10), now + 10 + VB_ACK_DELAY_NS);
    assert_int_equal(vb_rx_ack(ep, l, now + 20), now + 10 + VB_ACK_DELAY_NS);
    assert_int_equal(acks_queued(ep, &seq), 1);
    assert_int_equal(vb_rx_ack(ep, l, now + 10 + VB_ACK_DELAY_NS), UINT64_MAX);
    assert_int_equal(acks_queued(ep, &seq), 2);
    assert_int_equal(seq, n);
    /* a message's last segment goes out at once */
    vb_rx_segment(ep, l, vb_imm_make(VB_WRITE_FINAL, 0, n++, 0), 64);
    assert_int_equal(vb_rx_ack(ep, l, now + 30), UINT64_MAX);
    assert_int_equal(acks_queued(ep, &seq), 3);
    assert_int_equal(seq, n);
    assert_int_equal(vb_rx_ack(ep, l, now + 40), UINT64_MAX); /* nothing left to say */
    assert_int_equal(acks_queued(ep, &seq), 3);
    free_ep(ep);
}

/* A middle segment that fills the sender's window asks for its ACK, and gets it at once: with a
 * window under VB_ACK_EVERY (after a loss) the sender would otherwise wait out the delay. */
static void test_window_end_asks_for_ack(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct vb_lane *l = &ep->lane[0];
    uint32_t seq = 0;

    l->tx.cwnd = 2;
    write_imm(ep, 4000, 0x55, 7); /* 4 segments, 2 of them allowed out */
    assert_int_equal(fk_nsent, 2);
    assert_int_equal(fk_sent[0].imm & VB_ACK_REQ, 0);
    assert_int_equal(fk_sent[1].imm & VB_ACK_REQ, VB_ACK_REQ);
    post_recvs(ep, 1);
    vb_rx_segment(ep, l, fk_sent[0].imm, 1024);
    assert_int_equal(vb_rx_ack(ep, l, 100), 100 + VB_ACK_DELAY_NS);
    vb_rx_segment(ep, l, fk_sent[1].imm, 1024);
    assert_int_equal(vb_rx_ack(ep, l, 200), UINT64_MAX);
    assert_int_equal(acks_queued(ep, &seq), 1);
    assert_int_equal(seq, 2);
    free_ep(ep);
}

/* Frames of type `type` the endpoint has queued on its side channel. */
static int frames_of(const struct vb_ep *ep, int type)
{
    int t, ln, e, n = 0;
    uint32_t seq;

    for (int i = 0; frame(ep, i, &t, &ln, &e, &seq); i++)
        n += t == type;
    return n;
}

static void send_cqe(struct vb_ep *ep, int lane)
{
    fk_push_wc(ep->lane[lane].qp->qp_num, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, 0, 0);
}

/* RC: the send CQE of a post's last segment completes it; no ACK is awaited, no side frame
 * goes out, and each caller post's last segment asks for its own CQE. */
static void test_rc_completes_on_send_cqe(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_RC);
    struct fab_wc wc;

    ep->peer_ready = 0; /* queue two posts, so that they go out in one chain */
    write_imm(ep, 2500, 0x1234, 77);
    write_imm(ep, 10, 0x99, 78);
    ep->peer_ready = 1;
    vb_tx_pump(ep, &ep->lane[0], 100);
    assert_int_equal(fk_nsent, 4);
    assert_false(fk_sent[0].signaled);
    assert_false(fk_sent[1].signaled);
    assert_true(fk_sent[2].signaled); /* the first post's last segment */
    assert_true(fk_sent[3].signaled);
    for (int i = 0; i < 2; i++) /* no window, so no middle segment asks for an ACK */
        assert_int_equal(fk_sent[i].imm & 0xffff, 0);
    vb_ep_drain(ep, 1000); /* nothing from the hardware yet: nothing completes */
    assert_int_equal(poll1(ep, &wc), 0);
    send_cqe(ep, 0);
    vb_ep_drain(ep, 2000);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 77);
    assert_int_equal(wc.op, FAB_WC_WRITE);
    assert_int_equal(wc.status, FAB_WC_OK);
    assert_int_equal(poll1(ep, &wc), 0);
    send_cqe(ep, 0);
    vb_ep_drain(ep, 3000);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 78);
    assert_int_equal(ep->side.out_n, 0); /* not one side frame */
    assert_int_equal(vb_tx_timer(ep, &ep->lane[0], UINT64_MAX / 2), UINT64_MAX);
    free_ep(ep);
}

/* UC: the same send CQE only releases the buffer; the ACK completes the post. */
static void test_uc_send_cqe_waits_for_ack(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_UC);
    struct fab_wc wc;

    write_imm(ep, 2500, 0x1234, 77);
    assert_int_equal(fk_nsent, 3);
    assert_false(fk_sent[1].signaled);
    assert_true(fk_sent[2].signaled); /* the chain's last */
    send_cqe(ep, 0);
    vb_ep_drain(ep, 1000);
    assert_int_equal(poll1(ep, &wc), 0);
    vb_tx_on_ack(ep, &ep->lane[0], 3, 2000);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 77);
    free_ep(ep);
}

/* RC receiver: delivers on the RECV CQE, sends no ACK, reposts the hardware receive. */
static void test_rc_receiver_sends_no_ack(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_RC);
    struct fab_wc wc;

    post_recvs(ep, 2);
    fk_push_wc(ep->lane[0].qp->qp_num, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS,
               vb_imm_make(VB_WRITE_PART, 0, 0, 0), 64);
    fk_push_wc(ep->lane[0].qp->qp_num, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS,
               vb_imm_make(VB_WRITE_FINAL, 0, 1, 5), 64);
    vb_ep_drain(ep, 1000);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.len, 128);
    assert_int_equal(wc.imm, 5);
    assert_int_equal(fk_nrecv, 2);
    assert_int_equal(vb_rx_ack(ep, &ep->lane[0], UINT64_MAX / 2), UINT64_MAX);
    assert_int_equal(ep->side.out_n, 0);
    free_ep(ep);
}

/* RC delivers in order: a sequence number out of place fails the endpoint, with no NAK. */
static void test_rc_gap_is_fatal(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_RC);
    const char *why = NULL;

    post_recvs(ep, 2);
    vb_rx_segment(ep, &ep->lane[0], vb_imm_make(VB_WRITE_FINAL, 0, 1, 0), 8);
    assert_int_not_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, &why), FAB_WC_OK);
    assert_non_null(strstr(why, "seq 0 was due"));
    assert_int_equal(frames_of(ep, VB_F_NAK), 0);
    free_ep(ep);
}

/* RC receiver: the receives it posted again, reported once VB_CREDIT_EVERY gathered. */
static void test_rc_credit_reported_in_batches(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_RC);
    uint32_t seq = 0;
    int credit = 0;

    vb_rx_reposted(ep, &ep->lane[0], VB_CREDIT_EVERY - 1);
    assert_int_equal(fk_nsent, 0);
    vb_rx_reposted(ep, &ep->lane[0], 1);
    assert_int_equal(ctls_sent(&seq, &credit), 1);
    assert_true(credit);
    assert_int_equal(seq, VB_CREDIT_EVERY);
    vb_rx_reposted(ep, &ep->lane[0], VB_CREDIT_EVERY + 3);
    assert_int_equal(ctls_sent(&seq, &credit), 2);
    assert_int_equal(seq, 2 * VB_CREDIT_EVERY + 3);
    assert_int_equal(ep->side.out_n, 0);
    free_ep(ep);
}

/* RC sender: no more segments out than the peer's hardware receives cover, whatever the send
 * CQEs say; a credit lets the next one go; a credit for more than was sent is a broken peer. */
static void test_rc_credit_gates_segments(void **st)
{
    struct vb_ep *ep = mk_ep(1, IBV_QPT_RC);
    struct vb_lane *l = &ep->lane[0];
    struct fab_wc wc;
    int before;

    ep->seg_size = 8;
    /* exactly the receives the peer starts with, less those left to our own credits */
    write_imm(ep, 8 * (VB_HW_RQ - VB_CTL_RESERVE), 0, 1);
    do { /* the hardware finishes everything posted */
        before = fk_nsent;
        while (l->tx.hw_n > 0)
            vb_tx_on_send_cqe(ep, l);
        vb_tx_pump(ep, l, 100);
    } while (fk_nsent != before);
    assert_int_equal(fk_nsent, VB_HW_RQ - VB_CTL_RESERVE);
    vb_tx_complete(ep, l);
    assert_int_equal(poll1(ep, &wc), 1);
    assert_int_equal(wc.wr_id, 1);
    write_imm(ep, 8, 0, 2);
    assert_int_equal(fk_nsent, VB_HW_RQ - VB_CTL_RESERVE); /* no receive left for it */
    vb_tx_on_credit(ep, l, 1, 200);
    assert_int_equal(fk_nsent, VB_HW_RQ - VB_CTL_RESERVE + 1);
    assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, NULL), FAB_WC_OK);
    /* a credit arrives as the low bits of the count: unwrapped forward from the last one */
    vb_tx_on_credit(ep, l, 1000 & VB_SEQ_MASK, 250);
    assert_int_equal(l->tx.peer_reposted, 1000);
    vb_tx_on_credit(ep, l, VB_HW_RQ + 2, 300); /* more than was ever sent */
    assert_int_not_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, NULL), FAB_WC_OK);
    free_ep(ep);
}

/* RC: an error CQE still fails the endpoint (no software retry behind it), the post with it. */
static void test_rc_error_cqe_fails_endpoint(void **st)
{
    free_ep(error_cqe_case(1, IBV_QPT_RC));
}

/* Each lane type refuses the other's controls (an ACK on RC, a credit on UC) and RC every lane
 * frame (loss recovery is UC's); a control of no known kind is refused on both. */
static void test_other_qp_types_controls_refused(void **st)
{
    for (int c = 0; c < 4; c++) {
        int rc = c != 1;
        struct vb_ep *ep = mk_ep(1, rc ? IBV_QPT_RC : IBV_QPT_UC);
        const char *why = NULL;
        int sv[2];

        if (c == 2) {
            assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
            ep->side.fd = sv[0];
            feed(ep, sv[1], VB_F_ACK, 0, 0, 0);
            close(sv[1]);
        } else {
            uint32_t lo = VB_LO_CTL | (c == 3 ? VB_LO_CREDIT | VB_LO_ASK : rc ? 0 : VB_LO_CREDIT);

            fk_push_wc(ep->lane[0].qp->qp_num, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS,
                       vb_imm_make(VB_WRITE_PART, 0, 0, lo), 0);
            vb_ep_drain(ep, 1000);
        }
        assert_int_equal(fc_ep_status(&fab_verbs_ops, &ep->fab, &why), FAB_WC_PEER_PROTO);
        assert_non_null(strstr(why, c == 3 ? "no known kind" : rc ? "RC" : "UC"));
        free_ep(ep);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_imm_codec),
            cmocka_unit_test(test_segments_and_completion_after_ack),
            cmocka_unit_test(test_no_completion_while_hw_reads),
            cmocka_unit_test(test_nak_rewinds_and_stale_nak_ignored),
            cmocka_unit_test(test_retries_exhausted_fails_and_flushes),
            cmocka_unit_test(test_rx_in_order_gap_nak_once),
            cmocka_unit_test(test_rx_multi_segment_write),
            cmocka_unit_test(test_rx_write_overflow_fails),
            cmocka_unit_test(test_side_eof_delivers_landed_data_first),
            cmocka_unit_test(test_rx_no_recv_is_fatal),
            cmocka_unit_test(test_send_goes_into_advertised_recv),
            cmocka_unit_test(test_recv_advertised_through_rdma),
            cmocka_unit_test(test_roomless_recv_advertised_when_asked),
            cmocka_unit_test(test_waiting_send_asks),
            cmocka_unit_test(test_bad_advertisements_refused),
            cmocka_unit_test(test_rx_send_and_too_long),
            cmocka_unit_test(test_probe_after_rto_then_rewind),
            cmocka_unit_test(test_rc_never_probes),
            cmocka_unit_test(test_probe_fences_older_epochs),
            cmocka_unit_test(test_error_cqe_fails_endpoint),
            cmocka_unit_test(test_drain_delivers_and_acks),
            cmocka_unit_test(test_ack_control_completes_and_old_one_ignored),
            cmocka_unit_test(test_drive_leaves_ack_to_next_drive),
            cmocka_unit_test(test_polled_advertisement_rides_next_post),
            cmocka_unit_test(test_acks_coalesced),
            cmocka_unit_test(test_window_end_asks_for_ack),
            cmocka_unit_test(test_rc_completes_on_send_cqe),
            cmocka_unit_test(test_uc_send_cqe_waits_for_ack),
            cmocka_unit_test(test_rc_receiver_sends_no_ack),
            cmocka_unit_test(test_rc_gap_is_fatal),
            cmocka_unit_test(test_rc_credit_reported_in_batches),
            cmocka_unit_test(test_rc_credit_gates_segments),
            cmocka_unit_test(test_other_qp_types_controls_refused),
            cmocka_unit_test(test_rc_error_cqe_fails_endpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

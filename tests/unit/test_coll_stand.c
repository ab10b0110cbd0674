/* SPDX-License-Identifier: BSD-3-Clause */
/* Standing receives (core/coll_stand.c) on a comm with one link and a fake fabric: posted on
 * lane 0 only while no operation has receives left to post, granted at once; taken in order by
 * the next operation's receives, in their slot or copied where the operation wants them; a
 * frame that landed before its operation started is checked when it is taken; a peer that left
 * after sending into one still delivers it, one it never sent fails the operation. Where the
 * fabric has post_send_imm, lane-0 data carries the grants both ways and no control message
 * goes; a grant that rides on data may overtake a control message, never exceed what the peer
 * can have posted. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/coll.h"
#include "core/err.h"

#define FAKE_EP ((struct fab_ep *)0x10)
#define MAXPOST 8

static struct fab_wc g_wc[8];
static int g_nwc, g_ctrl_sent, g_imm_sent;
static uint32_t g_last_imm;
static struct {
    int lane;
    void *buf;
    size_t cap;
    uint64_t wr_id;
} g_post[MAXPOST];
static int g_nposts;

static int fake_poll(struct fab_cq *cq, struct fab_wc *wc, int max)
{
    int n = g_nwc < max ? g_nwc : max;
    memcpy(wc, g_wc, (size_t)n * sizeof(*wc));
    g_nwc = 0;
    return n;
}

static void fake_close(struct fab_ep *ep) {}

static int fake_error(struct fab_ep *ep, const char **reason)
{
    return 0;
}

static int fake_post_recv(struct fab_ep *ep, int lane, void *buf, size_t cap, struct fab_mr *mr,
                          uint64_t wr_id)
{
    if (lane == 0 && g_nposts < MAXPOST)
        g_post[g_nposts++] = (typeof(g_post[0])){lane, buf, cap, wr_id};
    return 0;
}

static int fake_post_send(struct fab_ep *ep, int lane, const void *buf, size_t len,
                          struct fab_mr *mr, uint64_t wr_id)
{
    g_ctrl_sent += lane == 2; /* the control lane of a one-wire link */
    return 0;
}

static int fake_post_send_imm(struct fab_ep *ep, int lane, const void *buf, size_t len,
                              struct fab_mr *mr, uint32_t imm, uint64_t wr_id)
{
    g_imm_sent++;
    g_last_imm = imm;
    return 0;
}

static const struct fab_ops fake_ops = {
        .name = "fake",
        .cq_poll = fake_poll,
        .ep_close = fake_close,
        .ep_error = fake_error,
        .post_recv = fake_post_recv,
        .post_send = fake_post_send,
};

/* The same fabric, able to carry 16 bits with a SEND (as TCP). */
static const struct fab_ops fake_imm_ops = {
        .name = "fake-imm",
        .cq_poll = fake_poll,
        .ep_close = fake_close,
        .ep_error = fake_error,
        .post_recv = fake_post_recv,
        .post_send = fake_post_send,
        .post_send_imm = fake_post_send_imm,
};

struct fixture {
    struct coll_comm *c;
    struct coll_ctrl rx[COLL_CTRL_N], tx[COLL_CTRL_N];
    struct coll_link link;
    char out[4096];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct coll_comm *c = calloc(1, sizeof(*c));
    c->ops = &fake_ops;
    c->xp.ops = &coll_xport_ops;
    c->nranks = 2;
    c->rank = 0;
    c->wires = 1;
    c->ndata = 2;
    c->nlinks = c->maxlinks = 1;
    c->links = &f->link;
    c->link_r[1] = c->link_l[1] = 0;
    c->nstage = 1;
    c->stage_mem = calloc(ALGO_SLOTS + 2, ALGO_FRAME_MAX);
    f->link.peer = 1;
    f->link.ep = FAKE_EP;
    f->link.rx = f->rx;
    f->link.tx = f->tx;
    snprintf(f->link.desc, sizeof(f->link.desc), "fake peer");
    for (int s = 0; s < ALGO_MAX_PARTS; s++) {
        f->link.s[s].stage = s == 0 ? 0 : -1;
        memset(f->link.s[s].stand_slot, -1, sizeof(f->link.s[s].stand_slot));
    }
    f->c = c;
    g_nwc = g_ctrl_sent = g_nposts = g_imm_sent = 0;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    free(f->c->stage_mem);
    free(f->c);
    free(f);
    return 0;
}

static struct algo_xport *xp(struct fixture *f)
{
    return coll_xport(f->c);
}

static int comm_error(const struct fixture *f)
{
    return jaccl_err_to_nccl(jaccl_sticky_status(&f->c->fail));
}

/* The peer's message number idx lands on lane 0 with len bytes (written into what was posted)
 * and immediate imm. */
static void land_imm(struct fixture *f, uint32_t idx, uint32_t len, char fill, uint32_t imm)
{
    for (int i = 0; i < g_nposts; i++)
        if (COLL_WR_IDX(g_post[i].wr_id) == idx)
            memset(g_post[i].buf, fill, len);
    g_wc[g_nwc++] = (struct fab_wc){.wr_id = COLL_WR(COLL_WR_DRECV, 0, 0, idx),
                                    .ep = FAKE_EP,
                                    .status = FAB_WC_OK,
                                    .len = len,
                                    .imm = imm};
    coll_x_poll(f->c);
}

static void land(struct fixture *f, uint32_t idx, uint32_t len, char fill)
{
    land_imm(f, idx, len, fill, 0);
}

/* The peer's control message granting `posted` receives on lane 0. */
static void ctrl_grant(struct fixture *f, uint32_t idx, uint32_t posted)
{
    struct coll_ctrl m = {.magic = COLL_CTRL_MAGIC, .ndata = 2, .src = 1, .op_seq = UINT64_MAX};
    m.posted[0] = posted;
    f->rx[idx % COLL_CTRL_N] = m;
    g_wc[g_nwc++] = (struct fab_wc){.wr_id = COLL_WR(COLL_WR_CRECV, 0, 2, idx),
                                    .ep = FAKE_EP,
                                    .status = FAB_WC_OK,
                                    .len = sizeof(m)};
    coll_x_poll(f->c);
}

/* A quiet comm: standing receives into the staging slots, granted in one control message. */
static void quiet_comm_stands_and_grants(void **state)
{
    struct fixture *f = *state;
    coll_x_stand(f->c);
    coll_x_grants(f->c);
    assert_int_equal(g_nposts, COLL_STAND);
    for (int i = 0; i < g_nposts; i++) {
        assert_int_equal(g_post[i].cap, ALGO_FRAME_MAX);
        assert_int_equal(COLL_WR_IDX(g_post[i].wr_id), i);
    }
    assert_int_equal(f->link.s[0].posted, COLL_STAND);
    assert_int_equal(ax_posted(xp(f), 1, 0), 0); /* no operation's yet */
    assert_int_equal(g_ctrl_sent, 1);
    assert_int_equal(f->link.tx[0].posted[0], COLL_STAND);
    coll_x_stand(f->c); /* all slots stand already: nothing more */
    assert_int_equal(g_nposts, COLL_STAND);
}

/* An operation queued and not started will post its own receives: nothing stands. */
static void queued_operation_keeps_them_off(void **state)
{
    struct fixture *f = *state;
    struct coll_req *q = &f->c->req[0];
    q->seq = 0;
    atomic_store(&q->state, COLL_REQ_QUEUED);
    coll_x_stand(f->c);
    assert_int_equal(g_nposts, 0);
}

/* The operation's receives take them in order: its slot is the standing one, nothing is
 * posted, and a frame that landed early counts once it is taken. */
static void taken_in_their_slots(void **state)
{
    struct fixture *f = *state;
    coll_x_stand(f->c);
    land(f, 0, 100, 'a'); /* before any operation */
    assert_int_equal(ax_landed(xp(f), 1, 0), 0);
    int s = ax_slot_take(xp(f), 1, 0);
    char *buf = ax_slot(xp(f), 1, 0, s, NULL);
    assert_ptr_equal(buf, g_post[0].buf);
    assert_true(ax_can_recv(xp(f), 1, 0));
    assert_int_equal(ax_recv(xp(f), 1, 0, buf, 100, NULL), 0);
    assert_int_equal(g_nposts, COLL_STAND); /* taken, not posted */
    assert_int_equal(ax_posted(xp(f), 1, 0), 1);
    assert_int_equal(ax_landed(xp(f), 1, 0), 1);
    assert_int_equal(buf[99], 'a');
    assert_int_equal(comm_error(f), ncclSuccess);
}

/* One the operation wants elsewhere (an all-gather frame) is copied there, before or after it
 * lands, and its slot goes back to the stream. */
static void copied_where_wanted(void **state)
{
    struct fixture *f = *state;
    coll_x_stand(f->c);
    uint8_t busy = f->link.s[0].busy;
    assert_int_equal(ax_recv(xp(f), 1, 0, f->out, 64, NULL), 0); /* taken before it lands */
    land(f, 0, 64, 'b');
    assert_int_equal(f->out[63], 'b');
    assert_int_equal(ax_landed(xp(f), 1, 0), 1);
    land(f, 1, 32, 'c'); /* lands before it is taken */
    assert_int_equal(ax_recv(xp(f), 1, 0, f->out + 64, 32, NULL), 0);
    assert_int_equal(f->out[64 + 31], 'c');
    assert_int_equal(ax_landed(xp(f), 1, 0), 2);
    assert_int_equal(f->link.s[0].busy, 0); /* both slots back */
    assert_true(busy != 0);
    assert_int_equal(comm_error(f), ncclSuccess);
}

/* A frame that landed with another length than the operation that takes it expects: the
 * ranks disagree, and the comm fails saying so. */
static void early_frame_of_wrong_length_fails(void **state)
{
    struct fixture *f = *state;
    coll_x_stand(f->c);
    land(f, 0, 100, 'a');
    int s = ax_slot_take(xp(f), 1, 0);
    assert_true(ax_recv(xp(f), 1, 0, ax_slot(xp(f), 1, 0, s, NULL), 200, NULL) < 0);
    assert_int_equal(comm_error(f), ncclInvalidUsage);
}

/* The peer left (goodbye, then its connection went down) after sending into the first standing
 * receive only: that frame is still delivered, the next one it never sent fails at once. */
static void peer_gone_after_one(void **state)
{
    struct fixture *f = *state;
    coll_x_stand(f->c);
    land(f, 0, 100, 'a');
    struct coll_ctrl m = {
            .magic = COLL_CTRL_MAGIC, .ndata = 2, .src = 1, .op_seq = 0, .flags = COLL_CTRL_BYE};
    m.posted[0] = 0;
    m.sent[0] = 1;
    f->rx[0] = m;
    g_wc[g_nwc++] = (struct fab_wc){.wr_id = COLL_WR(COLL_WR_CRECV, 0, 2, 0),
                                    .ep = FAKE_EP,
                                    .status = FAB_WC_OK,
                                    .len = sizeof(m)};
    g_wc[g_nwc++] = (struct fab_wc){.wr_id = COLL_WR(COLL_WR_DRECV, 0, 0, 1),
                                    .ep = FAKE_EP,
                                    .status = FAB_WC_FLUSHED,
                                    .len = 0};
    coll_x_poll(f->c);
    assert_null(f->link.ep); /* the link went down */
    assert_true(ax_can_recv(xp(f), 1, 0));
    int s = ax_slot_take(xp(f), 1, 0);
    assert_int_equal(ax_recv(xp(f), 1, 0, ax_slot(xp(f), 1, 0, s, NULL), 100, NULL), 0);
    assert_int_equal(ax_landed(xp(f), 1, 0), 1);
    assert_int_equal(comm_error(f), ncclSuccess);
    assert_false(ax_can_recv(xp(f), 1, 0)); /* it never sent the second */
    assert_int_equal(comm_error(f), ncclRemoteError);
}

/* A lane-0 send carries our count of receives posted for what the peer sends back, standing
 * ones included (posted first if they may be): no control message follows. */
static void grants_ride_on_data(void **state)
{
    struct fixture *f = *state;
    f->c->ops = &fake_imm_ops;
    char buf[64] = {0};
    assert_int_equal(ax_send(xp(f), 1, 0, buf, sizeof(buf), NULL), 0);
    assert_int_equal(g_imm_sent, 1);
    assert_int_equal(g_nposts, COLL_STAND);
    assert_int_equal(g_last_imm, COLL_STAND);
    coll_x_stand(f->c);
    coll_x_grants(f->c);
    assert_int_equal(g_ctrl_sent, 0);
    /* One taken: the round tops nothing up (the next lane-0 message will carry it). */
    assert_int_equal(ax_recv(xp(f), 1, 0, f->out, 64, NULL), 0);
    land(f, 0, 64, 'a');
    coll_x_stand(f->c);
    assert_int_equal(g_nposts, COLL_STAND);
    assert_int_equal(ax_send(xp(f), 1, 0, buf, sizeof(buf), NULL), 0);
    assert_int_equal(g_nposts, COLL_STAND + 1);
    assert_int_equal(g_last_imm, COLL_STAND + 1);
    f->c->ops = &fake_ops; /* without post_send_imm, the control message goes */
    assert_int_equal(ax_send(xp(f), 1, 0, buf, sizeof(buf), NULL), 0);
    assert_int_equal(g_imm_sent, 2);
    f->link.s[0].advertised = 0;
    coll_x_grants(f->c);
    assert_int_equal(g_ctrl_sent, 1);
}

/* A grant riding on data: newer ones count, older ones (a control message overtook it) change
 * nothing, a control message older than it is no protocol error; one beyond what the peer can
 * have posted is. */
static void grants_from_data(void **state)
{
    struct fixture *f = *state;
    coll_x_stand(f->c); /* something for the data to land in */
    f->c->ops = &fake_imm_ops;
    land_imm(f, 0, 8, 'a', 3);
    assert_int_equal(f->link.s[0].granted, 3);
    land_imm(f, 1, 8, 'a', 2);
    assert_int_equal(f->link.s[0].granted, 3);
    ctrl_grant(f, 0, 1);
    assert_int_equal(f->link.s[0].granted, 3);
    assert_int_equal(comm_error(f), ncclSuccess);
    ctrl_grant(f, 1, 4);
    assert_int_equal(f->link.s[0].granted, 4);
    f->link.s[0].stand_slot[2 % ALGO_POST_MAX] = -1; /* a plain receive at index 2 */
    f->link.s[0].exp_len[2 % ALGO_POST_MAX] = 8;
    f->link.s[0].posted = 3;
    land_imm(f, 2, 8, 'a', (uint32_t)(ALGO_POST_MAX + 1) & FAB_IMM_MAX);
    assert_int_equal(comm_error(f), ncclRemoteError);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(quiet_comm_stands_and_grants, setup, teardown),
            cmocka_unit_test_setup_teardown(queued_operation_keeps_them_off, setup, teardown),
            cmocka_unit_test_setup_teardown(taken_in_their_slots, setup, teardown),
            cmocka_unit_test_setup_teardown(copied_where_wanted, setup, teardown),
            cmocka_unit_test_setup_teardown(early_frame_of_wrong_length_fails, setup, teardown),
            cmocka_unit_test_setup_teardown(peer_gone_after_one, setup, teardown),
            cmocka_unit_test_setup_teardown(grants_ride_on_data, setup, teardown),
            cmocka_unit_test_setup_teardown(grants_from_data, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The CollNet transport's judgement of its peers, on a comm with one link and a fake fabric:
 * control messages a well-behaved peer cannot send are the peer's fault (ncclRemoteError), and
 * after a peer's goodbye whatever this rank still wants beyond the peer's final counts fails
 * the comm at once, while what is already on its way may still land. */
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

static struct fab_wc g_wc[8];
static int g_nwc, g_closed, g_reposts;

static int fake_poll(struct fab_cq *cq, struct fab_wc *wc, int max)
{
    int n = g_nwc < max ? g_nwc : max;
    memcpy(wc, g_wc, (size_t)n * sizeof(*wc));
    g_nwc = 0;
    return n;
}

static void fake_close(struct fab_ep *ep)
{
    g_closed++;
}

/* The endpoint is healthy unless a test breaks it (its failed completions say so anyway). */
static int g_ep_status;

static int fake_error(struct fab_ep *ep, const char **reason)
{
    if (reason)
        *reason = g_ep_status ? "closed by the peer" : NULL;
    return g_ep_status;
}

static int fake_post_recv(struct fab_ep *ep, int lane, void *buf, size_t cap, struct fab_mr *mr,
                          uint64_t wr_id)
{
    g_reposts++;
    return 0;
}

static const struct fab_ops fake_ops = {
        .name = "fake",
        .cq_poll = fake_poll,
        .ep_close = fake_close,
        .ep_error = fake_error,
        .post_recv = fake_post_recv,
};

struct fixture {
    struct coll_comm *c;
    struct coll_ctrl rx[COLL_CTRL_N], tx[COLL_CTRL_N];
    struct coll_link link;
    uint32_t next_ctrl; /* index of the next control receive */
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
    f->link.peer = 1;
    f->link.ep = FAKE_EP;
    f->link.rx = f->rx;
    f->link.tx = f->tx;
    snprintf(f->link.desc, sizeof(f->link.desc), "fake peer");
    f->c = c;
    g_nwc = g_closed = g_reposts = g_ep_status = 0;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    free(f->c);
    free(f);
    return 0;
}

static struct coll_ctrl good_ctrl(void)
{
    struct coll_ctrl m;
    memset(&m, 0, sizeof(m));
    m.magic = COLL_CTRL_MAGIC;
    m.ndata = 2;
    m.src = 1;
    m.op_seq = UINT64_MAX;
    return m;
}

/* Delivers m as the next control message and runs the completion dispatch. */
static void deliver(struct fixture *f, struct coll_ctrl m)
{
    uint32_t idx = f->next_ctrl++;
    f->rx[idx % COLL_CTRL_N] = m;
    g_wc[g_nwc++] = (struct fab_wc){.wr_id = COLL_WR(COLL_WR_CRECV, 0, 2, idx),
                                    .ep = FAKE_EP,
                                    .status = FAB_WC_OK,
                                    .len = sizeof(m)};
    coll_x_poll(f->c);
}

/* The comm's sticky failure as the API edge reports it. */
static int comm_error(const struct fixture *f)
{
    return jaccl_err_to_nccl(jaccl_sticky_status(&f->c->fail));
}

static void accepts_good_credits(void **state)
{
    struct fixture *f = *state;
    struct coll_ctrl m = good_ctrl();
    m.posted[0] = ALGO_POST_MAX;
    deliver(f, m);
    assert_int_equal(comm_error(f), ncclSuccess);
    assert_int_equal(f->link.s[0].granted, ALGO_POST_MAX);
    assert_int_equal(g_reposts, 1); /* the control receive goes back */
}

static void refuses_bad_magic(void **state)
{
    struct fixture *f = *state;
    struct coll_ctrl m = good_ctrl();
    m.magic ^= 1;
    deliver(f, m);
    assert_int_equal(comm_error(f), ncclRemoteError);
    assert_int_equal(g_closed, 1);
}

static void refuses_grants_going_back(void **state)
{
    struct fixture *f = *state;
    struct coll_ctrl m = good_ctrl();
    m.posted[0] = 3;
    deliver(f, m);
    m.posted[0] = 2;
    deliver(f, m);
    assert_int_equal(comm_error(f), ncclRemoteError);
}

static void refuses_more_grants_than_possible(void **state)
{
    struct fixture *f = *state;
    struct coll_ctrl m = good_ctrl();
    f->link.s[0].sent = f->link.s[0].granted = 5;
    m.posted[0] = 5 + ALGO_POST_MAX + 1; /* more receives than it may post past what we sent */
    deliver(f, m);
    assert_int_equal(comm_error(f), ncclRemoteError);
}

static void refuses_sends_past_grants(void **state)
{
    struct fixture *f = *state;
    struct coll_ctrl m = good_ctrl();
    f->link.s[1].posted = 2;
    m.sent[1] = 3;
    deliver(f, m);
    assert_int_equal(comm_error(f), ncclRemoteError);
}

static void refuses_unknown_flags(void **state)
{
    struct fixture *f = *state;
    struct coll_ctrl m = good_ctrl();
    m.flags = 0x80;
    deliver(f, m);
    assert_int_equal(comm_error(f), ncclRemoteError);
}

static struct coll_ctrl bye(uint32_t sent1)
{
    struct coll_ctrl m = good_ctrl();
    m.flags = COLL_CTRL_BYE;
    m.sent[1] = sent1;
    return m;
}

static void bye_with_data_in_flight_is_fine(void **state)
{
    struct fixture *f = *state;
    f->link.s[1].posted = 2; /* both already sent by the peer, not landed yet */
    deliver(f, bye(2));
    assert_int_equal(comm_error(f), ncclSuccess);
    assert_true(f->link.bye_rcvd);
}

static void bye_short_of_posted_receives_fails(void **state)
{
    struct fixture *f = *state;
    f->link.s[1].posted = 2;
    deliver(f, bye(1)); /* receive #1 can never land */
    assert_int_equal(comm_error(f), ncclRemoteError);
}

static void wanting_more_after_bye_fails(void **state)
{
    struct fixture *f = *state;
    struct algo_xport *x = coll_xport(f->c);
    deliver(f, bye(0));
    assert_int_equal(comm_error(f), ncclSuccess); /* idle: nothing was wanted */
    assert_int_equal(ax_can_recv(x, 1, 1), 0);
    assert_int_equal(comm_error(f), ncclRemoteError);
}

static void no_credit_after_bye_fails(void **state)
{
    struct fixture *f = *state;
    struct algo_xport *x = coll_xport(f->c);
    deliver(f, bye(0)); /* grants nothing on lane 0 */
    assert_int_equal(ax_can_send(x, 1, 0), 0);
    assert_int_equal(comm_error(f), ncclRemoteError);
}

static void link_down_after_bye(void **state)
{
    struct fixture *f = *state;
    deliver(f, bye(0));
    g_wc[g_nwc++] = (struct fab_wc){
            .wr_id = COLL_WR(COLL_WR_CRECV, 0, 2, 5), .ep = FAKE_EP, .status = FAB_WC_PEER_LOST};
    coll_x_poll(f->c);
    assert_int_equal(comm_error(f), ncclSuccess); /* nothing in flight: not a failure */
    assert_null(f->link.ep);
    assert_int_equal(g_closed, 1);
}

static void link_down_after_bye_with_data_owed(void **state)
{
    struct fixture *f = *state;
    f->link.s[1].posted = 1;
    deliver(f, bye(1));
    g_wc[g_nwc++] = (struct fab_wc){
            .wr_id = COLL_WR(COLL_WR_CRECV, 0, 2, 5), .ep = FAKE_EP, .status = FAB_WC_PEER_LOST};
    coll_x_poll(f->c);
    assert_int_equal(comm_error(f), ncclRemoteError); /* the message it sent was lost */
}

/* The first failure of a link says why; the flushed completions behind it must not. */
static void first_failure_of_a_link_counts(void **state)
{
    struct fixture *f = *state;
    f->link.s[1].posted = 1; /* a receive the peer never sent: the operation needs the link */
    g_wc[g_nwc++] = (struct fab_wc){
            .wr_id = COLL_WR(COLL_WR_CRECV, 0, 2, 0), .ep = FAKE_EP, .status = FAB_WC_PEER_LOST};
    g_wc[g_nwc++] = (struct fab_wc){
            .wr_id = COLL_WR(COLL_WR_CRECV, 0, 2, 1), .ep = FAKE_EP, .status = FAB_WC_FLUSHED};
    coll_x_poll(f->c);
    assert_int_equal(comm_error(f), ncclRemoteError);
}

/* A connection that goes down without a goodbye (a peer that failed its own next operation,
 * or died) while nothing of ours is in flight on it fails nothing yet: what landed is good.
 * The link is closed, and what still wants the peer fails as it asks. */
static void link_down_idle_fails_only_what_needs_it(void **state)
{
    struct fixture *f = *state;
    struct algo_xport *x = coll_xport(f->c);
    g_wc[g_nwc++] = (struct fab_wc){
            .wr_id = COLL_WR(COLL_WR_CRECV, 0, 2, 0), .ep = FAKE_EP, .status = FAB_WC_PEER_LOST};
    coll_x_poll(f->c);
    assert_int_equal(comm_error(f), ncclSuccess);
    assert_null(f->link.ep);
    assert_int_equal(g_closed, 1);
    assert_int_equal(ax_can_recv(x, 1, 1), 0);
    assert_int_equal(comm_error(f), ncclRemoteError);
}

/* Landed data survives the connection going down: receives that completed count, sends in
 * flight are done with (nobody can take them), and only a receive still owed fails. */
static void link_down_keeps_what_landed(void **state)
{
    struct fixture *f = *state;
    f->link.s[1].posted = 1;
    f->link.s[1].landed = 1;
    f->link.s[0].sent = 1; /* its completion never comes */
    g_wc[g_nwc++] = (struct fab_wc){
            .wr_id = COLL_WR(COLL_WR_DSEND, 0, 0, 0), .ep = FAKE_EP, .status = FAB_WC_FLUSHED};
    coll_x_poll(f->c);
    assert_int_equal(comm_error(f), ncclSuccess);
    assert_int_equal(f->link.s[0].sdone, 1);
    assert_null(f->link.ep);
}

/* The endpoint reports its failure before its completions are polled: nothing more is posted
 * on it, the comm does not fail, and the message that landed first still counts once the
 * queue is drained, after which the link is down. */
static void broken_endpoint_waits_for_its_completions(void **state)
{
    struct fixture *f = *state;
    struct algo_xport *x = coll_xport(f->c);
    f->link.s[1].posted = 1;
    f->link.s[1].exp_len[0] = 8;
    g_ep_status = -ECONNRESET;                 /* ep_error: a negative errno */
    assert_int_equal(ax_can_recv(x, 1, 1), 0); /* not now: its completions come first */
    assert_int_equal(comm_error(f), ncclSuccess);
    assert_non_null(f->link.ep);
    g_wc[g_nwc++] = (struct fab_wc){
            .wr_id = COLL_WR(COLL_WR_DRECV, 0, 1, 0), .ep = FAKE_EP, .status = FAB_WC_OK, .len = 8};
    coll_x_poll(f->c);
    assert_int_equal(f->link.s[1].landed, 1);
    assert_null(f->link.ep);                      /* down once the queue was drained */
    assert_int_equal(comm_error(f), ncclSuccess); /* it sent what was wanted */
    assert_int_equal(ax_can_recv(x, 1, 1), 0);    /* more would never come */
    assert_int_equal(comm_error(f), ncclRemoteError);
}

/* A goodbye queued behind the connection's failure is read first: the peer left, it did not
 * break, and with nothing in flight that is no failure at all. */
static void goodbye_read_before_the_failure(void **state)
{
    struct fixture *f = *state;
    g_wc[g_nwc++] = (struct fab_wc){
            .wr_id = COLL_WR(COLL_WR_CRECV, 0, 2, 7), .ep = FAKE_EP, .status = FAB_WC_PEER_LOST};
    struct coll_ctrl m = bye(0);
    f->rx[0] = m;
    g_wc[g_nwc++] = (struct fab_wc){.wr_id = COLL_WR(COLL_WR_CRECV, 0, 2, 0),
                                    .ep = FAKE_EP,
                                    .status = FAB_WC_OK,
                                    .len = sizeof(m)};
    coll_x_poll(f->c);
    assert_int_equal(comm_error(f), ncclSuccess);
    assert_true(f->link.bye_rcvd);
    assert_null(f->link.ep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(accepts_good_credits, setup, teardown),
            cmocka_unit_test_setup_teardown(refuses_bad_magic, setup, teardown),
            cmocka_unit_test_setup_teardown(refuses_grants_going_back, setup, teardown),
            cmocka_unit_test_setup_teardown(refuses_more_grants_than_possible, setup, teardown),
            cmocka_unit_test_setup_teardown(refuses_sends_past_grants, setup, teardown),
            cmocka_unit_test_setup_teardown(refuses_unknown_flags, setup, teardown),
            cmocka_unit_test_setup_teardown(bye_with_data_in_flight_is_fine, setup, teardown),
            cmocka_unit_test_setup_teardown(bye_short_of_posted_receives_fails, setup, teardown),
            cmocka_unit_test_setup_teardown(wanting_more_after_bye_fails, setup, teardown),
            cmocka_unit_test_setup_teardown(no_credit_after_bye_fails, setup, teardown),
            cmocka_unit_test_setup_teardown(link_down_after_bye, setup, teardown),
            cmocka_unit_test_setup_teardown(link_down_after_bye_with_data_owed, setup, teardown),
            cmocka_unit_test_setup_teardown(first_failure_of_a_link_counts, setup, teardown),
            cmocka_unit_test_setup_teardown(link_down_idle_fails_only_what_needs_it, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(link_down_keeps_what_landed, setup, teardown),
            cmocka_unit_test_setup_teardown(broken_endpoint_waits_for_its_completions, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(goodbye_read_before_the_failure, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The ring, as JACCL runs it: nranks chunks, a reduce-scatter phase then an all-gather phase of
 * nranks-1 steps each, every chunk cut into two halves travelling in opposite directions, each
 * half striped over the wires and moved in frames through two staging slots.
 *
 * Unlike JACCL, steps are not separated by a drain: each (direction, wire) lane is a dataflow
 * pipeline. What a rank sends at step t+1 is what it received at step t, frame for frame, so
 * frame f of step t+1 leaves as soon as frame f of step t has been reduced. Received partial
 * sums land in a staging slot and are reduced straight into their home (the output for
 * all-reduce, a scratch buffer for reduce-scatter) with the fused out = in OP recv kernel, which
 * frees the slot at once: a slot is never held while waiting for a peer, so the ring cannot
 * deadlock on its buffers. Frames of the all-gather phase land directly in the output. */
#include <errno.h>
#include <string.h>

#include "algo/algo.h"

static void part_of(const struct algo_geom *g, const struct algo_rlane *l, int t, int recv,
                    struct algo_range *r)
{
    algo_ring_part(g, t, l->d, l->w, recv, r);
}

/* Caches step t's part in the cursor: it changes only with the step. */
static void cur_load(const struct algo_geom *g, const struct algo_rlane *l, int recv,
                     struct algo_cur *c)
{
    part_of(g, l, c->t, recv, &c->r);
    c->nf = algo_nframes(g, &c->r);
}

/* Moves a cursor to the next frame, skipping steps whose part is empty. */
static void cur_norm(const struct algo_geom *g, const struct algo_rlane *l, int T, int recv,
                     struct algo_cur *c)
{
    while (c->t < T && c->f >= c->nf) {
        c->t++;
        c->f = 0;
        if (c->t < T)
            cur_load(g, l, recv, c);
    }
}

/* The cursor at the first frame of the operation. */
static void cur_init(const struct algo_geom *g, const struct algo_rlane *l, int T, int recv,
                     struct algo_cur *c)
{
    c->t = 0;
    c->f = 0;
    if (T > 0)
        cur_load(g, l, recv, c);
    cur_norm(g, l, T, recv, c);
}

static void cur_next(const struct algo_geom *g, const struct algo_rlane *l, int T, int recv,
                     struct algo_cur *c)
{
    c->f++;
    cur_norm(g, l, T, recv, c);
}

static void cur_frame(const struct algo_geom *g, const struct algo_cur *c, struct algo_range *fr)
{
    algo_frame(g, &c->r, c->f, fr);
}

static uint32_t frames_total(const struct algo_geom *g, const struct algo_rlane *l, int T, int recv)
{
    uint32_t n = 0;
    struct algo_range r;
    for (int t = 0; t < T; t++) {
        part_of(g, l, t, recv, &r);
        n += (uint32_t)algo_nframes(g, &r);
    }
    return n;
}

static void lane_init(struct algo_run *run, struct algo_xport *x, int d, int w)
{
    struct algo_ring_run *rr = &run->ring;
    const struct algo_geom *g = &run->op->g;
    struct algo_rlane *l = &rr->l[rr->nl++];
    struct algo_range r0;
    memset(l, 0, sizeof(*l));
    l->d = d;
    l->w = w;
    l->lane = algo_ring_lane(ax_wires(x), d, w);
    l->speer = algo_ring_peer(g, d, 0);
    l->rpeer = algo_ring_peer(g, d, 1);
    l->rbase = ax_posted(x, l->rpeer, l->lane);
    l->nsend = frames_total(g, l, rr->T, 0);
    l->nrecv = frames_total(g, l, rr->T, 1);
    part_of(g, l, 0, 0, &r0);
    l->nsend0 = rr->T > 0 ? (uint32_t)algo_nframes(g, &r0) : 0;
    cur_init(g, l, rr->T, 0, &l->send_at);
    cur_init(g, l, rr->T, 1, &l->post_at);
    cur_init(g, l, rr->T, 1, &l->proc_at);
}

/* Receive side only: the previous operation may still be running. */
static int ring_start(struct algo_run *run, struct algo_xport *x)
{
    struct algo_ring_run *rr = &run->ring;
    const struct algo_geom *g = &run->op->g;
    rr->T = algo_ring_steps(g);
    rr->nl = 0;
    for (int d = 0; d < g->ndirs; d++)
        for (int w = 0; w < g->nwires; w++)
            lane_init(run, x, d, w);
    return 0;
}

/* The previous operation is done: this one may send, and touch the caller's memory. */
static int ring_arm(struct algo_run *run, struct algo_xport *x)
{
    struct algo_ring_run *rr = &run->ring;
    const struct algo_op *op = run->op;
    const struct algo_geom *g = &op->g;
    for (int i = 0; i < rr->nl; i++)
        rr->l[i].sbase = ax_sent(x, rr->l[i].speer, rr->l[i].lane);
    rr->acc = op->out;
    if (g->kind == ALGO_REDUCESCATTER) {
        /* Partial sums of other ranks' chunks need a home: never the caller's input. */
        rr->acc = (struct algo_buf){.base = g->wo, .len = g->wb};
        rr->acc.p = ax_scratch(x, run->idx, g->wb, &rr->acc.mr);
        if (!rr->acc.p)
            return -ENOMEM;
    }
    if (g->kind == ALGO_ALLGATHER)
        algo_copy_own(op);
    return 0;
}

/* Reduces (or just accounts for) every frame that landed, in order. */
static void lane_process(struct algo_run *run, struct algo_xport *x, struct algo_rlane *l,
                         int *prog)
{
    const struct algo_op *op = run->op;
    const struct algo_geom *g = &op->g;
    uint32_t landed = algo_since(ax_landed(x, l->rpeer, l->lane), l->rbase);
    /* Landings past nrecv belong to the next operation, which posted after us. */
    while (l->proc < landed && l->proc < l->nrecv) {
        if (algo_ring_reduces(g, l->proc_at.t)) {
            struct algo_range fr;
            int s = l->slot_of[l->proc % ALGO_POST_MAX];
            cur_frame(g, &l->proc_at, &fr);
            char *dst = algo_ring_final(g, l->proc_at.t) ? algo_at(&op->out, fr.lo)
                                                         : algo_at(&run->ring.acc, fr.lo);
            op->fn(dst, algo_at(&op->in, fr.lo), ax_slot(x, l->rpeer, l->lane, s, NULL),
                   fr.len / g->esz);
            ax_slot_give(x, l->rpeer, l->lane, s);
        }
        l->proc++;
        cur_next(g, l, run->ring.T, 1, &l->proc_at);
        *prog = 1;
    }
}

/* Posts receives in schedule order: partial sums into a free slot, final data in place. */
static int lane_post(struct algo_run *run, struct algo_xport *x, struct algo_rlane *l, int *prog)
{
    const struct algo_op *op = run->op;
    const struct algo_geom *g = &op->g;
    /* posted - proc stays below ALGO_POST_MAX so that slot_of is not overwritten while an
     * operation posts ahead without processing (the next one, see algo_ops). */
    while (l->posted < l->nrecv && l->posted - l->proc < ALGO_POST_MAX &&
           ax_can_recv(x, l->rpeer, l->lane)) {
        struct algo_range fr;
        char *buf;
        struct fab_mr *mr = op->out.mr;
        int s = -1;
        cur_frame(g, &l->post_at, &fr);
        if (algo_ring_reduces(g, l->post_at.t)) {
            if ((s = ax_slot_take(x, l->rpeer, l->lane)) < 0)
                break;
            buf = ax_slot(x, l->rpeer, l->lane, s, &mr);
        } else {
            buf = algo_at(&op->out, fr.lo);
        }
        int rc = ax_recv(x, l->rpeer, l->lane, buf, fr.len, mr);
        if (rc != 0)
            return rc;
        l->slot_of[l->posted % ALGO_POST_MAX] = (int8_t)s;
        l->posted++;
        cur_next(g, l, run->ring.T, 1, &l->post_at);
        *prog = 1;
    }
    return 0;
}

/* Where the frame sent at step t lives: the input at step 0, else where step t-1 put it. */
static const struct algo_buf *send_src(const struct algo_run *run, int t)
{
    if (t == 0)
        return &run->op->in;
    return algo_ring_reduces(&run->op->g, t) ? &run->ring.acc : &run->op->out;
}

static int lane_send(struct algo_run *run, struct algo_xport *x, struct algo_rlane *l, int *prog)
{
    const struct algo_geom *g = &run->op->g;
    while (l->sent < l->nsend && ax_can_send(x, l->speer, l->lane)) {
        /* Frame k of step >= 1 is received frame k - nsend0: it must be processed first. */
        if (l->sent >= l->nsend0 && l->proc <= l->sent - l->nsend0)
            break;
        struct algo_range fr;
        const struct algo_buf *b = send_src(run, l->send_at.t);
        cur_frame(g, &l->send_at, &fr);
        int rc = ax_send(x, l->speer, l->lane, algo_at(b, fr.lo), fr.len, b->mr);
        if (rc != 0)
            return rc;
        l->sent++;
        cur_next(g, l, run->ring.T, 0, &l->send_at);
        *prog = 1;
    }
    return 0;
}

static int lane_done(struct algo_xport *x, const struct algo_rlane *l)
{
    /* >=: the next operation's sends may complete on the same stream after ours. */
    return l->proc == l->nrecv && l->sent == l->nsend &&
           algo_since(ax_sdone(x, l->speer, l->lane), l->sbase) >= l->nsend;
}

static int ring_post(struct algo_run *run, struct algo_xport *x, int *progress)
{
    for (int i = 0; i < run->ring.nl; i++) {
        int rc = lane_post(run, x, &run->ring.l[i], progress);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int ring_posted_all(const struct algo_run *run)
{
    for (int i = 0; i < run->ring.nl; i++)
        if (run->ring.l[i].posted < run->ring.l[i].nrecv)
            return 0;
    return 1;
}

static int ring_sent_all(const struct algo_run *run)
{
    for (int i = 0; i < run->ring.nl; i++)
        if (run->ring.l[i].sent < run->ring.l[i].nsend)
            return 0;
    return 1;
}

static int ring_advance(struct algo_run *run, struct algo_xport *x, int *progress)
{
    int done = 1;
    for (int i = 0; i < run->ring.nl; i++) {
        struct algo_rlane *l = &run->ring.l[i];
        lane_process(run, x, l, progress);
        int rc = lane_post(run, x, l, progress);
        if (rc == 0)
            rc = lane_send(run, x, l, progress);
        if (rc != 0)
            return rc;
        done &= lane_done(x, l);
    }
    return done;
}

/* The ring runs any group on the two neighbours' connections: the fallback, wanted least. */
static int ring_fits(int nranks)
{
    return nranks >= 2;
}

/* Neighbours in ring order (two ranks: each other, by two connections). */
static int ring_talks(const struct algo_ring_order *o, int nranks, int a, int b)
{
    return a != b && (algo_ring_neighbour(o, a, nranks, 0, 0) == b ||
                      algo_ring_neighbour(o, a, nranks, 0, 1) == b);
}

static int ring_auto_rank(const struct algo_geom *g, const struct algo_choice *ch)
{
    return 1;
}

static int ring_auto_may(int nranks, const struct algo_choice *ch)
{
    return nranks >= 2;
}

static void ring_shape(struct algo_geom *g, const struct algo_choice *ch)
{
    algo_geom_ring_shape(g, ch->wires);
}

/* For the tuner: each of the steps (2(n-1) for all-reduce, n-1 for the other two) moves a
 * chunk, 1/n of the operation, to the next rank, and every reduce-scatter step reduces what
 * arrives. Two directions reach the two neighbours (one neighbour with two ranks), each part
 * (direction, wire) on a lane of its own. */
static void ring_work(const struct algo_geom *g, struct algo_work *w)
{
    int n = g->nranks, steps = algo_ring_steps(g);
    double chunk = (double)w->bytes / n;
    w->hops = steps;
    w->sent = steps * chunk;
    w->reduced = g->kind == ALGO_ALLGATHER ? 0 : (n - 1) * chunk;
    w->peers = g->ndirs == 2 && n > 2 ? 2 : 1;
    w->lanes = g->ndirs * g->nwires;
}

const struct algo_ops algo_ring_ops = {
        .name = "ring",
        .talks = ring_talks,
        .all_pairs = 0,
        .fits = ring_fits,
        .auto_rank = ring_auto_rank,
        .auto_may = ring_auto_may,
        .shape = ring_shape,
        .work = ring_work,
        .start = ring_start,
        .post = ring_post,
        .posted_all = ring_posted_all,
        .sent_all = ring_sent_all,
        .arm = ring_arm,
        .advance = ring_advance,
};

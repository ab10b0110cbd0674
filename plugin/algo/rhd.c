/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursive halving-doubling (Rabenseifner's all-reduce) for power-of-two groups: a
 * reduce-scatter of log2 n steps, each with one partner and half the bytes of the step before,
 * then an all-gather of log2 n steps walking back (the schedule: algo_rhd_step, chunks.h). It
 * moves the ring's bytes in 2 log2 n steps instead of 2 (n - 1): fewer hand-offs between ranks,
 * which is what costs at 128 KiB - 16 MiB when ranks outnumber cores.
 *
 * Every element is reduced on one rank only (the owner of its chunk) and copied everywhere else,
 * so every rank holds the same bits. Received partial sums land in the staging slots of the
 * partner's stream (lane 0, as the mesh) and are reduced into their home with the fused
 * out = a OP recv kernel, which frees the slot at once; all-gather frames land in the output.
 *
 * Receives are processed strictly in step order, frame by frame, and a frame of step t leaves
 * once what it carries has been produced by step t - 1 (or is the input): step t + 1 starts
 * while step t's last frames are still in flight. A partner appears in one reduce-scatter step
 * and one all-gather step; the later one posts and sends only after the earlier one has, so each
 * stream sees its messages in schedule order. */
#include <errno.h>
#include <string.h>

#include "algo/algo.h"

static size_t min_sz(size_t a, size_t b)
{
    return a < b ? a : b;
}

static size_t range_end(const struct algo_range *r)
{
    return r->lo + r->len;
}

static void step_init(struct algo_run *run, struct algo_xport *x, int t)
{
    const struct algo_geom *g = &run->op->g;
    struct algo_hstep *st = &run->rhd.st[t];
    memset(st, 0, sizeof(*st));
    st->reduces = algo_rhd_step(g, t, &st->peer, &st->s, &st->r);
    st->nsend = (uint32_t)algo_nframes(g, &st->s);
    st->nrecv = (uint32_t)algo_nframes(g, &st->r);
    st->prev = -1;
    for (int u = t - 1; u >= 0 && st->prev < 0; u--)
        if (run->rhd.st[u].peer == st->peer)
            st->prev = u;
    const struct algo_hstep *pv = st->prev >= 0 ? &run->rhd.st[st->prev] : NULL;
    st->rbase = pv ? pv->rbase + pv->nrecv : ax_posted(x, st->peer, 0);
}

/* Receive side only: the previous operation may still be running. */
static int rhd_start(struct algo_run *run, struct algo_xport *x)
{
    struct algo_rhd_run *h = &run->rhd;
    h->T = algo_rhd_steps(&run->op->g);
    h->pt = 0;
    for (int t = 0; t < h->T; t++)
        step_init(run, x, t);
    return 0;
}

/* The previous operation is done: this one may send, and touch the caller's memory. */
static int rhd_arm(struct algo_run *run, struct algo_xport *x)
{
    struct algo_rhd_run *h = &run->rhd;
    const struct algo_op *op = run->op;
    const struct algo_geom *g = &op->g;
    for (int t = 0; t < h->T; t++) {
        struct algo_hstep *st = &h->st[t];
        const struct algo_hstep *pv = st->prev >= 0 ? &h->st[st->prev] : NULL;
        st->sbase = pv ? pv->sbase + pv->nsend : ax_sent(x, st->peer, 0);
    }
    h->acc = op->out;
    if (g->kind == ALGO_REDUCESCATTER && h->T > 1) {
        /* Partial sums of other ranks' chunks need a home: never the caller's input. */
        h->acc = (struct algo_buf){.base = g->wo, .len = g->wb};
        h->acc.p = ax_scratch(x, run->idx, g->wb, &h->acc.mr);
        if (!h->acc.p)
            return -ENOMEM;
    }
    if (g->kind == ALGO_ALLGATHER)
        algo_copy_own(op);
    return 0;
}

/* Where the partial sums of step t land: the output at the reduce-scatter's last step. */
static const struct algo_buf *reduce_dst(const struct algo_run *run, int t)
{
    const struct algo_op *op = run->op;
    int last = op->g.kind == ALGO_REDUCESCATTER && t == run->rhd.T - 1;
    return last ? &op->out : &run->rhd.acc;
}

static void reduce_frame(struct algo_run *run, struct algo_xport *x, int t)
{
    const struct algo_op *op = run->op;
    struct algo_hstep *st = &run->rhd.st[t];
    struct algo_range fr;
    int s = st->slot_of[st->proc % ALGO_POST_MAX];
    algo_frame(&op->g, &st->r, st->proc, &fr);
    const struct algo_buf *a = t == 0 ? &op->in : &run->rhd.acc;
    op->fn(algo_at(reduce_dst(run, t), fr.lo), algo_at(a, fr.lo), ax_slot(x, st->peer, 0, s, NULL),
           fr.len / op->g.esz);
    ax_slot_give(x, st->peer, 0, s);
}

/* Reduces (or just accounts for) every frame that landed, step after step. */
static void rhd_process(struct algo_run *run, struct algo_xport *x, int *prog)
{
    struct algo_rhd_run *h = &run->rhd;
    while (h->pt < h->T) {
        struct algo_hstep *st = &h->st[h->pt];
        uint32_t landed = algo_since(ax_landed(x, st->peer, 0), st->rbase);
        /* Landings past nrecv belong to a later step or operation on the same stream. */
        while (st->proc < landed && st->proc < st->nrecv) {
            if (st->reduces)
                reduce_frame(run, x, h->pt);
            st->proc++;
            *prog = 1;
        }
        if (st->proc < st->nrecv)
            return;
        h->pt++;
    }
}

static int step_post(struct algo_run *run, struct algo_xport *x, int t, int *prog)
{
    const struct algo_op *op = run->op;
    struct algo_hstep *st = &run->rhd.st[t];
    if (st->prev >= 0 && run->rhd.st[st->prev].posted < run->rhd.st[st->prev].nrecv)
        return 0; /* the stream's earlier step first */
    /* posted - proc stays below ALGO_POST_MAX so that slot_of is not overwritten. */
    while (st->posted < st->nrecv && st->posted - st->proc < ALGO_POST_MAX &&
           ax_can_recv(x, st->peer, 0)) {
        struct algo_range fr;
        struct fab_mr *mr = op->out.mr;
        char *buf;
        int s = -1;
        algo_frame(&op->g, &st->r, st->posted, &fr);
        if (st->reduces) {
            if ((s = ax_slot_take(x, st->peer, 0)) < 0)
                break;
            buf = ax_slot(x, st->peer, 0, s, &mr);
        } else {
            buf = algo_at(&op->out, fr.lo);
        }
        int rc = ax_recv(x, st->peer, 0, buf, fr.len, mr);
        if (rc != 0)
            return rc;
        st->slot_of[st->posted % ALGO_POST_MAX] = (int8_t)s;
        st->posted++;
        *prog = 1;
    }
    return 0;
}

/* 1 if the bytes of fr, sent at step t, are final: the input at step 0, else every earlier
 * step processed as far as fr reaches into what it received. */
static int ready(const struct algo_run *run, int t, const struct algo_range *fr)
{
    const struct algo_rhd_run *h = &run->rhd;
    if (t == 0 || h->pt >= t)
        return 1;
    if (h->pt < t - 1)
        return 0;
    const struct algo_hstep *pv = &h->st[t - 1];
    size_t lo = fr->lo > pv->r.lo ? fr->lo : pv->r.lo;
    size_t hi = min_sz(range_end(fr), range_end(&pv->r));
    size_t done = pv->r.lo + min_sz((size_t)pv->proc * run->op->g.frame, pv->r.len);
    return hi <= lo || hi <= done;
}

/* Where the bytes sent at step t live: the input at step 0 of a reduction, the partial sums
 * during the reduce-scatter, the output in the all-gather. */
static const struct algo_buf *send_src(const struct algo_run *run, int t)
{
    const struct algo_op *op = run->op;
    if (op->g.kind == ALGO_ALLGATHER || !run->rhd.st[t].reduces)
        return &op->out;
    return t == 0 ? &op->in : &run->rhd.acc;
}

static int step_send(struct algo_run *run, struct algo_xport *x, int t, int *prog)
{
    struct algo_hstep *st = &run->rhd.st[t];
    if (st->prev >= 0 && run->rhd.st[st->prev].sent < run->rhd.st[st->prev].nsend)
        return 0;
    const struct algo_buf *b = send_src(run, t);
    while (st->sent < st->nsend && ax_can_send(x, st->peer, 0)) {
        struct algo_range fr;
        algo_frame(&run->op->g, &st->s, st->sent, &fr);
        if (!ready(run, t, &fr))
            break;
        int rc = ax_send(x, st->peer, 0, algo_at(b, fr.lo), fr.len, b->mr);
        if (rc != 0)
            return rc;
        st->sent++;
        *prog = 1;
    }
    return 0;
}

static int rhd_post(struct algo_run *run, struct algo_xport *x, int *progress)
{
    for (int t = 0; t < run->rhd.T; t++) {
        int rc = step_post(run, x, t, progress);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int rhd_posted_all(const struct algo_run *run)
{
    for (int t = 0; t < run->rhd.T; t++)
        if (run->rhd.st[t].posted < run->rhd.st[t].nrecv)
            return 0;
    return 1;
}

static int rhd_sent_all(const struct algo_run *run)
{
    for (int t = 0; t < run->rhd.T; t++)
        if (run->rhd.st[t].sent < run->rhd.st[t].nsend)
            return 0;
    return 1;
}

static int rhd_done(struct algo_run *run, struct algo_xport *x)
{
    if (run->rhd.pt < run->rhd.T)
        return 0;
    for (int t = 0; t < run->rhd.T; t++) {
        const struct algo_hstep *st = &run->rhd.st[t];
        /* >=: a later step's or operation's sends may complete on the same stream. */
        if (st->sent < st->nsend || algo_since(ax_sdone(x, st->peer, 0), st->sbase) < st->nsend)
            return 0;
    }
    return 1;
}

static int rhd_advance(struct algo_run *run, struct algo_xport *x, int *progress)
{
    rhd_process(run, x, progress);
    /* Every receive it may post before any send, as the mesh does. */
    int rc = rhd_post(run, x, progress);
    for (int t = 0; t < run->rhd.T && rc == 0; t++)
        rc = step_send(run, x, t, progress);
    return rc != 0 ? rc : rhd_done(run, x);
}

/* Power-of-two groups only. Auto takes it for mid sizes in groups of 4 or more (2 log2 n steps
 * instead of the ring's 2 (n - 1), the same bytes): above NCCL_JACCL_RHD_MIN_BYTES before the
 * mesh, below it after the mesh but before the ring (2 ranks: the ring is as short). */
static int rhd_fits(int nranks)
{
    return algo_pow2(nranks);
}

/* Partners: ranks whose numbers differ in one bit. */
static int rhd_talks(const struct algo_ring_order *o, int nranks, int a, int b)
{
    return a != b && algo_pow2(nranks) && algo_pow2(a ^ b);
}

static int rhd_auto_may(int nranks, const struct algo_choice *ch)
{
    return ch->rhd_max_bytes > 0 && nranks >= 4 && algo_pow2(nranks);
}

/* Small operations cost messages more than steps (every message is a system call on each side
 * and a hand-off to a rank that must get a core), so below NCCL_JACCL_RHD_MIN_BYTES it takes them
 * from the mesh (one step, n - 1 messages per rank) where it sends fewer (log2 n for
 * reduce-scatter and all-gather, 2 log2 n for all-reduce): reduce-scatter and all-gather from 4
 * ranks, all-reduce from 8 (docs/performance.md). */
static int rhd_auto_rank(const struct algo_geom *g, const struct algo_choice *ch)
{
    size_t total = algo_total(g);
    if (!rhd_auto_may(g->nranks, ch) || total > ch->rhd_max_bytes)
        return 0;
    return total > ch->rhd_min_bytes || algo_rhd_steps(g) < g->nranks - 1 ? 4 : 2;
}

static void rhd_shape(struct algo_geom *g, const struct algo_choice *ch)
{
    algo_geom_rhd_shape(g);
}

/* For the tuner: the ring's bytes in log2 n steps per phase, one partner at a time. The
 * reduce-scatter sends n/2, n/4, .. 1 chunks (n - 1 in all) and reduces as many; the
 * all-gather sends them back in doubling steps. */
static void rhd_work(const struct algo_geom *g, struct algo_work *w)
{
    double moved = (double)(g->nranks - 1) * ((double)w->bytes / g->nranks);
    w->hops = algo_rhd_steps(g);
    w->sent = (g->kind == ALGO_ALLREDUCE ? 2 : 1) * moved;
    w->reduced = g->kind == ALGO_ALLGATHER ? 0 : moved;
    w->peers = 1;
    w->lanes = 1; /* lane 0 of the step's partner */
}

const struct algo_ops algo_rhd_ops = {
        .name = "rhd",
        .talks = rhd_talks,
        .all_pairs = 1,
        .fits = rhd_fits,
        .auto_rank = rhd_auto_rank,
        .auto_may = rhd_auto_may,
        .shape = rhd_shape,
        .work = rhd_work,
        .start = rhd_start,
        .post = rhd_post,
        .posted_all = rhd_posted_all,
        .sent_all = rhd_sent_all,
        .arm = rhd_arm,
        .advance = rhd_advance,
};

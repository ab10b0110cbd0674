/* SPDX-License-Identifier: BSD-3-Clause */
/* The mesh, as JACCL runs it: every rank sends its data to every peer in one step, and each rank
 * reduces the contributions strictly in rank order, frame by frame:
 *     out = c0 OP c1, out = out OP c2, ..., out = out OP c(P-1)
 * so every rank computes the same bits. Peer frames land in two staging slots per peer; frame f
 * may only be posted once frame f-2 is folded, which never waits on a peer's buffers, so the
 * mesh cannot deadlock. All-gather frames land directly in the output.
 *
 * In place, the output is the input: the first write to a frame must wait until that frame has
 * gone to every peer (all-reduce), and a local contribution folded after the first write
 * (rank >= 2) is saved in a private buffer first. */
#include <string.h>

#include "algo/algo.h"

static int reduces(const struct jc_op *op)
{
    return op->g.kind != JC_ALLGATHER;
}

/* Receive side only: the previous operation may still be running. */
static int mesh_start(struct jc_run *run, struct algo_xport *x)
{
    struct jc_mesh_run *m = &run->mesh;
    const struct jc_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++) {
        struct jc_mpeer *mp = &m->p[p];
        struct jc_range s, r;
        memset(mp, 0, sizeof(*mp));
        if (p == g->rank)
            continue;
        jc_mesh_send(g, p, &s);
        jc_mesh_recv(g, p, &r);
        mp->nsend = (uint32_t)jc_nframes(g, &s);
        mp->nrecv = (uint32_t)jc_nframes(g, &r);
        mp->rbase = ax_posted(x, p, 0);
    }
    jc_mesh_reduced(g, &m->red);
    m->nred = jc_nframes(g, &m->red);
    m->ff = 0;
    m->fk = 0;
    return 0;
}

/* The previous operation is done: this one may send, and touch the caller's memory. */
static int mesh_arm(struct jc_run *run, struct algo_xport *x)
{
    const struct jc_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++)
        if (p != g->rank)
            run->mesh.p[p].sbase = ax_sent(x, p, 0);
    if (!reduces(run->op))
        jc_copy_own(run->op);
    return 0;
}

static int peer_send(struct jc_run *run, struct algo_xport *x, int p, int *prog)
{
    const struct jc_op *op = run->op;
    struct jc_mpeer *mp = &run->mesh.p[p];
    struct jc_range s, fr;
    jc_mesh_send(&op->g, p, &s);
    while (mp->sent < mp->nsend && ax_can_send(x, p, 0)) {
        jc_frame(&op->g, &s, mp->sent, &fr);
        int rc = ax_send(x, p, 0, jc_at(&op->in, fr.lo), fr.len, op->in.mr);
        if (rc != 0)
            return rc;
        mp->sent++;
        *prog = 1;
    }
    return 0;
}

/* Reductions land in a staging slot of the peer's stream, given back once folded. */
static int peer_post(struct jc_run *run, struct algo_xport *x, int p, int *prog)
{
    const struct jc_op *op = run->op;
    struct jc_mpeer *mp = &run->mesh.p[p];
    struct jc_range r, fr;
    jc_mesh_recv(&op->g, p, &r);
    while (mp->posted < mp->nrecv && ax_can_recv(x, p, 0)) {
        struct fab_mr *mr = op->out.mr;
        char *buf;
        jc_frame(&op->g, &r, mp->posted, &fr);
        if (reduces(op)) {
            int s = ax_slot_take(x, p, 0);
            if (s < 0)
                break;
            mp->slot_of[mp->posted % JC_POST_MAX] = (int8_t)s;
            buf = ax_slot(x, p, 0, s, &mr);
        } else {
            buf = jc_at(&op->out, fr.lo);
        }
        int rc = ax_recv(x, p, 0, buf, fr.len, mr);
        if (rc != 0)
            return rc;
        mp->posted++;
        *prog = 1;
    }
    return 0;
}

static int landed(struct jc_run *run, struct algo_xport *x, int k, size_t f)
{
    return k == run->op->g.rank || jc_since(ax_landed(x, k, 0), run->mesh.p[k].rbase) > f;
}

/* In-place all-reduce: frame f of the input must have left for every peer. */
static int sent_everywhere(struct jc_run *run, struct algo_xport *x, size_t f)
{
    const struct jc_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++)
        if (p != g->rank && jc_since(ax_sdone(x, p, 0), run->mesh.p[p].sbase) <= f)
            return 0;
    return 1;
}

static const char *contrib(struct jc_run *run, struct algo_xport *x, int k,
                           const struct jc_range *fr)
{
    const struct jc_op *op = run->op;
    if (k != op->g.rank)
        return ax_slot(x, k, 0, run->mesh.p[k].slot_of[run->mesh.ff % JC_POST_MAX], NULL);
    /* In place, a local contribution folded after the first write was saved by fold_first. */
    return op->in_place && k >= 2 ? ax_own(x, run->idx) : jc_at(&op->in, fr->lo);
}

/* Peer k's frame ff is folded: its slot goes back to the stream. */
static void release(struct jc_run *run, struct algo_xport *x, int k)
{
    if (k != run->op->g.rank)
        ax_slot_give(x, k, 0, run->mesh.p[k].slot_of[run->mesh.ff % JC_POST_MAX]);
}

/* The first fold of a frame: out = c0 OP c1, once the in-place rules allow writing. */
static int fold_first(struct jc_run *run, struct algo_xport *x, const struct jc_range *fr)
{
    const struct jc_op *op = run->op;
    struct jc_mesh_run *m = &run->mesh;
    if (!landed(run, x, 0, m->ff) || !landed(run, x, 1, m->ff))
        return 0;
    if (op->in_place) {
        if (op->g.kind == JC_ALLREDUCE && !sent_everywhere(run, x, m->ff))
            return 0;
        if (op->g.rank >= 2)
            memcpy(ax_own(x, run->idx), jc_at(&op->in, fr->lo), fr->len);
    }
    op->fn(jc_at(&op->out, fr->lo), contrib(run, x, 0, fr), contrib(run, x, 1, fr),
           fr->len / op->g.esz);
    release(run, x, 0);
    release(run, x, 1);
    m->fk = 2;
    return 1;
}

/* One fold step of frame ff; 0 when it must wait for a contribution. */
static int fold_step(struct jc_run *run, struct algo_xport *x)
{
    const struct jc_op *op = run->op;
    struct jc_mesh_run *m = &run->mesh;
    struct jc_range fr;
    jc_frame(&op->g, &m->red, m->ff, &fr);
    if (m->fk == 0) {
        if (!fold_first(run, x, &fr))
            return 0;
    } else {
        if (!landed(run, x, m->fk, m->ff))
            return 0;
        char *dst = jc_at(&op->out, fr.lo);
        op->fn(dst, dst, contrib(run, x, m->fk, &fr), fr.len / op->g.esz);
        release(run, x, m->fk);
        m->fk++;
    }
    if (m->fk >= op->g.nranks) {
        m->ff++;
        m->fk = 0;
    }
    return 1;
}

static int mesh_done(struct jc_run *run, struct algo_xport *x)
{
    const struct jc_geom *g = &run->op->g;
    if (run->mesh.ff < run->mesh.nred) /* nred is 0 for all-gather */
        return 0;
    for (int p = 0; p < g->nranks; p++) {
        const struct jc_mpeer *mp = &run->mesh.p[p];
        if (p == g->rank)
            continue;
        if (mp->sent < mp->nsend || jc_since(ax_sdone(x, p, 0), mp->sbase) < mp->nsend ||
            jc_since(ax_landed(x, p, 0), mp->rbase) < mp->nrecv)
            return 0;
    }
    return 1;
}

static int mesh_post(struct jc_run *run, struct algo_xport *x, int *progress)
{
    const struct jc_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++) {
        int rc = p != g->rank ? peer_post(run, x, p, progress) : 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int mesh_posted_all(const struct jc_run *run)
{
    const struct jc_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++)
        if (run->mesh.p[p].posted < run->mesh.p[p].nrecv)
            return 0;
    return 1;
}

static int mesh_sent_all(const struct jc_run *run)
{
    const struct jc_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++)
        if (run->mesh.p[p].sent < run->mesh.p[p].nsend)
            return 0;
    return 1;
}

static int mesh_advance(struct jc_run *run, struct algo_xport *x, int *progress)
{
    const struct jc_geom *g = &run->op->g;
    while (run->mesh.ff < run->mesh.nred && fold_step(run, x)) /* none for all-gather */
        *progress = 1;
    /* Start with the next rank so that not everybody sends to rank 0 first. */
    for (int i = 1; i < g->nranks; i++) {
        int p = (g->rank + i) % g->nranks;
        int rc = peer_post(run, x, p, progress);
        if (rc == 0)
            rc = peer_send(run, x, p, progress);
        if (rc != 0)
            return rc;
    }
    return mesh_done(run, x);
}

const struct jc_algo_ops jc_mesh_ops = {
        .start = mesh_start,
        .post = mesh_post,
        .posted_all = mesh_posted_all,
        .sent_all = mesh_sent_all,
        .arm = mesh_arm,
        .advance = mesh_advance,
};

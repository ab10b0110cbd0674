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

static int reduces(const struct algo_op *op)
{
    return op->g.kind != ALGO_ALLGATHER;
}

/* Receive side only: the previous operation may still be running. */
static int mesh_start(struct algo_run *run, struct algo_xport *x)
{
    struct algo_mesh_run *m = &run->mesh;
    const struct algo_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++) {
        struct algo_mpeer *mp = &m->p[p];
        struct algo_range s, r;
        memset(mp, 0, sizeof(*mp));
        if (p == g->rank)
            continue;
        algo_mesh_send(g, p, &s);
        algo_mesh_recv(g, p, &r);
        mp->nsend = (uint32_t)algo_nframes(g, &s);
        mp->nrecv = (uint32_t)algo_nframes(g, &r);
        mp->rbase = ax_posted(x, p, 0);
    }
    algo_mesh_reduced(g, &m->red);
    m->nred_frames = algo_nframes(g, &m->red);
    m->fold_frame = 0;
    m->fold_rank = 0;
    return 0;
}

/* The previous operation is done: this one may send, and touch the caller's memory. */
static int mesh_arm(struct algo_run *run, struct algo_xport *x)
{
    const struct algo_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++)
        if (p != g->rank)
            run->mesh.p[p].sbase = ax_sent(x, p, 0);
    if (!reduces(run->op))
        algo_copy_own(run->op);
    return 0;
}

static int peer_send(struct algo_run *run, struct algo_xport *x, int p, int *prog)
{
    const struct algo_op *op = run->op;
    struct algo_mpeer *mp = &run->mesh.p[p];
    struct algo_range s, fr;
    algo_mesh_send(&op->g, p, &s);
    while (mp->sent < mp->nsend && ax_can_send(x, p, 0)) {
        algo_frame(&op->g, &s, mp->sent, &fr);
        int rc = ax_send(x, p, 0, algo_at(&op->in, fr.lo), fr.len, op->in.mr);
        if (rc != 0)
            return rc;
        mp->sent++;
        *prog = 1;
    }
    return 0;
}

/* Reductions land in a staging slot of the peer's stream, given back once folded. */
static int peer_post(struct algo_run *run, struct algo_xport *x, int p, int *prog)
{
    const struct algo_op *op = run->op;
    struct algo_mpeer *mp = &run->mesh.p[p];
    struct algo_range r, fr;
    algo_mesh_recv(&op->g, p, &r);
    while (mp->posted < mp->nrecv && ax_can_recv(x, p, 0)) {
        struct fab_mr *mr = op->out.mr;
        char *buf;
        algo_frame(&op->g, &r, mp->posted, &fr);
        if (reduces(op)) {
            int s = ax_slot_take(x, p, 0);
            if (s < 0)
                break;
            mp->slot_of[mp->posted % ALGO_POST_MAX] = (int8_t)s;
            buf = ax_slot(x, p, 0, s, &mr);
        } else {
            buf = algo_at(&op->out, fr.lo);
        }
        int rc = ax_recv(x, p, 0, buf, fr.len, mr);
        if (rc != 0)
            return rc;
        mp->posted++;
        *prog = 1;
    }
    return 0;
}

static int landed(struct algo_run *run, struct algo_xport *x, int k, size_t f)
{
    return k == run->op->g.rank || algo_since(ax_landed(x, k, 0), run->mesh.p[k].rbase) > f;
}

/* In-place all-reduce: frame f of the input must have left for every peer. */
static int sent_everywhere(struct algo_run *run, struct algo_xport *x, size_t f)
{
    const struct algo_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++)
        if (p != g->rank && algo_since(ax_sdone(x, p, 0), run->mesh.p[p].sbase) <= f)
            return 0;
    return 1;
}

static const char *contrib(struct algo_run *run, struct algo_xport *x, int k,
                           const struct algo_range *fr)
{
    const struct algo_op *op = run->op;
    if (k != op->g.rank)
        return ax_slot(x, k, 0, run->mesh.p[k].slot_of[run->mesh.fold_frame % ALGO_POST_MAX], NULL);
    /* In place, a local contribution folded after the first write was saved by fold_first. */
    return op->in_place && k >= 2 ? ax_own(x, run->idx) : algo_at(&op->in, fr->lo);
}

/* Peer k's frame fold_frame is folded: its slot goes back to the stream. */
static void release(struct algo_run *run, struct algo_xport *x, int k)
{
    if (k != run->op->g.rank)
        ax_slot_give(x, k, 0, run->mesh.p[k].slot_of[run->mesh.fold_frame % ALGO_POST_MAX]);
}

/* The first fold of a frame: out = c0 OP c1, once the in-place rules allow writing. */
static int fold_first(struct algo_run *run, struct algo_xport *x, const struct algo_range *fr)
{
    const struct algo_op *op = run->op;
    struct algo_mesh_run *m = &run->mesh;
    if (!landed(run, x, 0, m->fold_frame) || !landed(run, x, 1, m->fold_frame))
        return 0;
    if (op->in_place) {
        if (op->g.kind == ALGO_ALLREDUCE && !sent_everywhere(run, x, m->fold_frame))
            return 0;
        if (op->g.rank >= 2)
            memcpy(ax_own(x, run->idx), algo_at(&op->in, fr->lo), fr->len);
    }
    op->fn(algo_at(&op->out, fr->lo), contrib(run, x, 0, fr), contrib(run, x, 1, fr),
           fr->len / op->g.esz);
    release(run, x, 0);
    release(run, x, 1);
    m->fold_rank = 2;
    return 1;
}

/* One fold step of frame fold_frame; 0 when it must wait for a contribution. */
static int fold_step(struct algo_run *run, struct algo_xport *x)
{
    const struct algo_op *op = run->op;
    struct algo_mesh_run *m = &run->mesh;
    struct algo_range fr;
    algo_frame(&op->g, &m->red, m->fold_frame, &fr);
    if (m->fold_rank == 0) {
        if (!fold_first(run, x, &fr))
            return 0;
    } else {
        if (!landed(run, x, m->fold_rank, m->fold_frame))
            return 0;
        char *dst = algo_at(&op->out, fr.lo);
        op->fn(dst, dst, contrib(run, x, m->fold_rank, &fr), fr.len / op->g.esz);
        release(run, x, m->fold_rank);
        m->fold_rank++;
    }
    if (m->fold_rank >= op->g.nranks) {
        m->fold_frame++;
        m->fold_rank = 0;
    }
    return 1;
}

static int mesh_done(struct algo_run *run, struct algo_xport *x)
{
    const struct algo_geom *g = &run->op->g;
    if (run->mesh.fold_frame < run->mesh.nred_frames) /* nred_frames is 0 for all-gather */
        return 0;
    for (int p = 0; p < g->nranks; p++) {
        const struct algo_mpeer *mp = &run->mesh.p[p];
        if (p == g->rank)
            continue;
        if (mp->sent < mp->nsend || algo_since(ax_sdone(x, p, 0), mp->sbase) < mp->nsend ||
            algo_since(ax_landed(x, p, 0), mp->rbase) < mp->nrecv)
            return 0;
    }
    return 1;
}

static int mesh_post(struct algo_run *run, struct algo_xport *x, int *progress)
{
    const struct algo_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++) {
        int rc = p != g->rank ? peer_post(run, x, p, progress) : 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int mesh_posted_all(const struct algo_run *run)
{
    const struct algo_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++)
        if (run->mesh.p[p].posted < run->mesh.p[p].nrecv)
            return 0;
    return 1;
}

static int mesh_sent_all(const struct algo_run *run)
{
    const struct algo_geom *g = &run->op->g;
    for (int p = 0; p < g->nranks; p++)
        if (run->mesh.p[p].sent < run->mesh.p[p].nsend)
            return 0;
    return 1;
}

static int mesh_advance(struct algo_run *run, struct algo_xport *x, int *progress)
{
    const struct algo_geom *g = &run->op->g;
    while (run->mesh.fold_frame < run->mesh.nred_frames &&
           fold_step(run, x)) /* none for all-gather */
        *progress = 1;
    /* Every receive it may post before any send: the transport's grants then cover them all
     * when its first message leaves (core/coll_stand.c rides them on the data). Start with the
     * next rank so that not everybody sends to rank 0 first. */
    for (int i = 1; i < g->nranks; i++) {
        int rc = peer_post(run, x, (g->rank + i) % g->nranks, progress);
        if (rc != 0)
            return rc;
    }
    for (int i = 1; i < g->nranks; i++) {
        int rc = peer_send(run, x, (g->rank + i) % g->nranks, progress);
        if (rc != 0)
            return rc;
    }
    return mesh_done(run, x);
}

/* One exchange step with every peer: the lowest latency, for small messages in small groups
 * (NCCL_JACCL_MESH_MAX_BYTES, NCCL_JACCL_MESH_MAX_RANKS). */
static int mesh_fits(int nranks)
{
    return nranks >= 2;
}

static int mesh_auto_rank(const struct algo_geom *g, const struct algo_choice *ch)
{
    return algo_total(g) <= ch->mesh_max_bytes && g->nranks <= ch->mesh_max_ranks ? 3 : 0;
}

static int mesh_talks(const struct algo_ring_order *o, int nranks, int a, int b)
{
    return a != b;
}

static int mesh_auto_may(int nranks, const struct algo_choice *ch)
{
    return ch->mesh_max_bytes > 0 && nranks <= ch->mesh_max_ranks;
}

static void mesh_shape(struct algo_geom *g, const struct algo_choice *ch)
{
    algo_geom_mesh_shape(g);
}

/* For the tuner: one step. Every rank sends each peer what it needs (all-reduce: the whole
 * vector; reduce-scatter: the peer's chunk; all-gather: its own chunk) and reduces all it
 * receives (all-reduce: n-1 whole vectors; reduce-scatter: n-1 chunks). */
static void mesh_work(const struct algo_geom *g, struct algo_work *w)
{
    int n = g->nranks;
    double each = g->kind == ALGO_ALLREDUCE ? (double)w->bytes : (double)w->bytes / n;
    w->hops = 1;
    w->sent = (n - 1) * each;
    w->reduced = g->kind == ALGO_ALLGATHER ? 0 : w->sent;
    w->peers = n - 1;
    w->lanes = n - 1; /* lane 0 of each peer */
}

const struct algo_ops algo_mesh_ops = {
        .name = "mesh",
        .talks = mesh_talks,
        .all_pairs = 1,
        .fits = mesh_fits,
        .auto_rank = mesh_auto_rank,
        .auto_may = mesh_auto_may,
        .shape = mesh_shape,
        .work = mesh_work,
        .start = mesh_start,
        .post = mesh_post,
        .posted_all = mesh_posted_all,
        .sent_all = mesh_sent_all,
        .arm = mesh_arm,
        .advance = mesh_advance,
};

/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies that need no peer: the one-rank group, and the local chunk of an all-gather. */
#include <string.h>

#include "algo/algo.h"

/* memmove: a caller may pass overlapping buffers only in the exact in-place layout, which is
 * skipped, but moving is as cheap as copying and never wrong. */
static void copy_range(const struct algo_op *op, const struct algo_range *r)
{
    char *dst = algo_at(&op->out, r->lo);
    const char *src = algo_at(&op->in, r->lo);
    if (r->len && dst != src)
        memmove(dst, src, r->len);
}

void algo_copy_own(const struct algo_op *op)
{
    struct algo_range r;
    algo_chunk(&op->g, op->g.rank, &r);
    copy_range(op, &r);
}

/* One rank: the local chunk is everything (all-reduce: the whole vector), so the copy is all. */
static int local_start(struct algo_run *run, struct algo_xport *x)
{
    return 0;
}

static int local_post(struct algo_run *run, struct algo_xport *x, int *progress)
{
    return 0;
}

static int local_all(const struct algo_run *run)
{
    return 1;
}

static int local_arm(struct algo_run *run, struct algo_xport *x)
{
    algo_copy_own(run->op);
    return 0;
}

static int local_advance(struct algo_run *run, struct algo_xport *x, int *progress)
{
    return 1;
}

/* One rank: the operation is a copy; nothing to connect. */
static int local_fits(int nranks)
{
    return nranks == 1;
}

static int local_auto_rank(const struct algo_geom *g, const struct algo_choice *ch)
{
    return local_fits(g->nranks) ? 5 : 0;
}

static int local_auto_may(int nranks, const struct algo_choice *ch)
{
    return local_fits(nranks);
}

static int local_talks(const struct algo_ring_order *o, int nranks, int a, int b)
{
    return 0;
}

/* For the tuner: no message; the copy is nothing beside a network step (and NCCL runs CollNet
 * across nodes only). */
static void local_work(const struct algo_geom *g, struct algo_work *w)
{
    w->hops = 0;
    w->sent = 0;
    w->reduced = 0;
    w->peers = 0;
    w->lanes = 0;
}

const struct algo_ops algo_local_ops = {
        .name = "local",
        .talks = local_talks,
        .all_pairs = 0,
        .fits = local_fits,
        .auto_rank = local_auto_rank,
        .auto_may = local_auto_may,
        .shape = NULL,
        .work = local_work,
        .start = local_start,
        .post = local_post,
        .posted_all = local_all,
        .sent_all = local_all,
        .arm = local_arm,
        .advance = local_advance,
};

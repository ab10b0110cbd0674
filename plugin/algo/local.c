/* Copies that need no peer: the one-rank group, and the local chunk of an all-gather. */
#include <string.h>

#include "algo/algo.h"

/* memmove: a caller may pass overlapping buffers only in the exact in-place layout, which is
 * skipped, but moving is as cheap as copying and never wrong. */
static void copy_range(const struct jc_op *op, const struct jc_range *r)
{
    char *dst = jc_at(&op->out, r->lo);
    const char *src = jc_at(&op->in, r->lo);
    if (r->len && dst != src)
        memmove(dst, src, r->len);
}

void jc_copy_own(const struct jc_op *op)
{
    struct jc_range r;
    jc_chunk(&op->g, op->g.rank, &r);
    copy_range(op, &r);
}

int jc_local_run(const struct jc_op *op)
{
    struct jc_range r;
    if (op->g.kind == JC_ALLREDUCE)
        r = (struct jc_range){0, jc_total(&op->g)};
    else
        jc_chunk(&op->g, 0, &r);
    copy_range(op, &r);
    return 1;
}

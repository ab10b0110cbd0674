/* SPDX-License-Identifier: BSD-3-Clause */
/* Running the queued operations of a comm, in order, by whoever holds its run_lock: a caller
 * polling inline (test(), the i* calls) or the comm's progress thread (coll_progress.c).
 *
 * Up to two operations are under way: cur, the oldest, and nxt, the one queued behind it. nxt
 * starts by posting its receives (and so sending their credits) once cur has posted all of its
 * own, and is armed (may send and reduce) once cur has also posted all of its sends: every
 * stream then still sees the two operations' messages in schedule order, and nxt's reduce-scatter
 * overlaps cur's last frames instead of waiting for them. Requests complete in order: an nxt that
 * finishes first is completed right after cur. */
#include <errno.h>
#include "core/coll.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/log.h"

static struct algo_run *run_of(struct coll_comm *c, int behind)
{
    return &c->run[c->cur_run ^ behind];
}

static const struct algo_ops *ops_of(const struct coll_req *q)
{
    return algo_ops_of(q->op.algo);
}

static int comm_error(struct coll_comm *c)
{
    return jaccl_sticky_status(&c->fail);
}

static void begin(struct coll_comm *c, struct coll_req *q, int behind)
{
    struct algo_run *r = run_of(c, behind);
    r->op = &q->op;
    r->idx = c->cur_run ^ behind;
    if (behind)
        coll_x_nxt_begins(c);
    ops_of(q)->start(r, coll_xport(c));
}

/* 1 if q is already over (a broken comm), 0 if it now runs. */
static int arm(struct coll_comm *c, struct coll_req *q, int behind)
{
    coll_x_check_sig(c, q);
    if (comm_error(c) != 0)
        return 1;
    if (ops_of(q)->arm(run_of(c, behind), coll_xport(c)) != 0) {
        coll_fail(c, -ENOMEM, "no memory for %s of %zu bytes", algo_kind_name(q->op.g.kind),
                  algo_total(&q->op.g));
        return 1;
    }
    return 0;
}

static void become_cur(struct coll_comm *c)
{
    c->cur_t0 = jaccl_now_ns();
    c->cur_warn = jaccl_timeout_ns();
}

/* Completes cur; nxt takes its place (and is completed too if it already finished). */
static void complete(struct coll_comm *c, int rc)
{
    coll_finish(c, c->cur, rc);
    c->cur = c->nxt;
    c->cur_armed = c->nxt_armed;
    c->nxt = NULL;
    c->nxt_armed = 0;
    c->cur_run ^= 1;
    if (!c->cur)
        return;
    become_cur(c);
    if (comm_error(c) == 0)
        coll_x_check_left(c); /* nxt's receives are cur's now */
    if (c->nxt_over) {
        c->nxt_over = 0;
        complete(c, c->nxt_rc);
    }
}

/* nxt: start once cur posted all its receives, arm once cur posted all its sends. */
static int behind(struct coll_comm *c, int *progress)
{
    if (!c->nxt) {
        struct coll_req *q = coll_next(c, 1);
        if (!q || !ops_of(c->cur)->posted_all(run_of(c, 0)))
            return 0;
        c->nxt = q;
        begin(c, q, 1);
        *progress = 1;
    }
    if (c->nxt_over)
        return 0;
    if (!c->nxt_armed) {
        if (!ops_of(c->cur)->sent_all(run_of(c, 0)))
            return ops_of(c->nxt)->post(run_of(c, 1), coll_xport(c), progress);
        c->nxt_armed = 1;
        *progress = 1;
        if (arm(c, c->nxt, 1)) {
            c->nxt_over = 1;
            c->nxt_rc = comm_error(c);
            return 0;
        }
    }
    int r = ops_of(c->nxt)->advance(run_of(c, 1), coll_xport(c), progress);
    if (r != 0) {
        c->nxt_over = 1;
        c->nxt_rc = r > 0 ? 0 : comm_error(c);
    }
    return r < 0 ? -1 : 0;
}

int coll_run_ops(struct coll_comm *c)
{
    int prog = 0;
    if (!c->cur) {
        if (!(c->cur = coll_next(c, 0)))
            return 0;
        c->cur_armed = 0;
        begin(c, c->cur, 0);
        become_cur(c);
        prog = 1;
    }
    if (comm_error(c) != 0) {
        complete(c, comm_error(c));
        return 1;
    }
    if (!c->cur_armed) {
        c->cur_armed = 1;
        if (arm(c, c->cur, 0)) {
            complete(c, comm_error(c));
            return 1;
        }
    }
    int r = ops_of(c->cur)->advance(run_of(c, 0), coll_xport(c), &prog);
    if (r == 0 && comm_error(c) != 0)
        r = -1; /* the comm broke under it (a peer left): fail it now, not after a sleep */
    if (r != 0) {
        complete(c, r > 0 ? 0 : comm_error(c));
        return 1;
    }
    if (behind(c, &prog) != 0)
        return 1; /* the comm broke: the next round fails what is left */
    return prog;
}

int coll_sched_quiet(struct coll_comm *c)
{
    if (c->cur && !ops_of(c->cur)->posted_all(run_of(c, 0)))
        return 0;
    if (c->nxt && !ops_of(c->nxt)->posted_all(run_of(c, 1)))
        return 0;
    return coll_next(c, (c->cur != NULL) + (c->nxt != NULL)) == NULL;
}

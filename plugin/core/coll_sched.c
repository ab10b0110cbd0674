/* Running the queued operations of a comm, in order, on the progress thread.
 *
 * One operation runs at a time (c->cur). While it finishes, the next queued one (c->nxt) may
 * already post its receives and so send their credits, once the running one has posted all of
 * its own: every stream then still receives in schedule order, and the next operation's first
 * frames do not wait for a credit round trip. It is armed (allowed to send and to touch the
 * caller's memory) only when it becomes the running one. */
#include "core/coll.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/log.h"

static struct jc_run *run_of(struct coll_comm *c, int next)
{
    return &c->run[c->cur_run ^ next];
}

static void begin(struct coll_comm *c, struct coll_req *q, struct jc_run *r)
{
    const struct jc_algo_ops *a = jc_algo_ops_of(q->op.algo);
    r->op = &q->op;
    if (a)
        a->start(r, coll_xport(c));
}

static void finish(struct coll_comm *c, ncclResult_t rc)
{
    coll_finish(c, c->cur, rc);
    c->cur = NULL;
}

/* c->cur becomes the running operation. 1 if it is already over (a local copy, or a broken
 * comm), 0 if it now runs. */
static int arm(struct coll_comm *c)
{
    struct jc_op *op = &c->cur->op;
    const struct jc_algo_ops *a = jc_algo_ops_of(op->algo);
    c->cur_t0 = jaccl_now_ns();
    c->cur_warn = jaccl_timeout_ns();
    coll_x_check_sig(c, c->cur->seq, op->sig);
    if (atomic_load(&c->error) != ncclSuccess)
        return 1;
    if (!a)
        return jc_local_run(op);
    if (a->arm(run_of(c, 0), coll_xport(c)) != 0) {
        coll_fail(c, ncclSystemError, "no memory for %s of %zu bytes", jc_kind_name(op->g.kind),
                  jc_total(&op->g));
        return 1;
    }
    return 0;
}

/* The operation posting ahead if there is one, else the next in the queue. 0 if none. */
static int take(struct coll_comm *c)
{
    if (c->nxt) {
        c->cur = c->nxt;
        c->nxt = NULL;
        c->cur_run ^= 1;
    } else if ((c->cur = coll_next(c, 0)) != NULL) {
        begin(c, c->cur, run_of(c, 0));
    } else {
        return 0;
    }
    if (arm(c))
        finish(c, (ncclResult_t)atomic_load(&c->error));
    return 1;
}

static int look_ahead(struct coll_comm *c, int *progress)
{
    if (!c->nxt) {
        struct coll_req *q = coll_next(c, 1);
        const struct jc_algo_ops *a = jc_algo_ops_of(c->cur->op.algo);
        if (!q || !jc_algo_ops_of(q->op.algo) || !a->posted_all(run_of(c, 0)))
            return 0;
        c->nxt = q;
        begin(c, q, run_of(c, 1));
        *progress = 1;
    }
    return jc_algo_ops_of(c->nxt->op.algo)->post(run_of(c, 1), coll_xport(c), progress);
}

int coll_run_ops(struct coll_comm *c)
{
    int prog = 0;
    if (!c->cur && !take(c))
        return 0;
    if (!c->cur)
        return 1;
    ncclResult_t err = (ncclResult_t)atomic_load(&c->error);
    if (err != ncclSuccess) {
        finish(c, err);
        return 1;
    }
    int r = jc_algo_ops_of(c->cur->op.algo)->advance(run_of(c, 0), coll_xport(c), &prog);
    if (r != 0) {
        finish(c, r > 0 ? ncclSuccess : (ncclResult_t)atomic_load(&c->error));
        return 1;
    }
    if (look_ahead(c, &prog) != 0)
        return 1; /* the comm broke: the next round fails what is queued */
    return prog;
}

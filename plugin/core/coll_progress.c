/* The progress thread of a CollNet comm: dispatches completions, runs queued operations one at
 * a time in order, sends credits, and sleeps in cq_wait whenever nothing moved. A failure of the
 * comm fails the running operation and every later one. An operation that waits on a live peer
 * is waited for, with a WARN after NCCL_JACCL_TIMEOUT, then after twice as long, and so on. */
#include <stdio.h>
#include <string.h>

#include "core/coll.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/log.h"

#define IDLE_SLICE_NS 1000000000ull /* wake up at least this often to check stop and timers */

static void op_done(struct coll_comm *c, ncclResult_t rc)
{
    coll_finish(c, c->cur, rc);
    c->cur = NULL;
}

static int op_start(struct coll_comm *c)
{
    struct jc_op *op = &c->cur->op;
    c->run.op = op;
    c->cur_t0 = jaccl_now_ns();
    c->cur_warn = jaccl_timeout_ns();
    coll_x_check_sig(c, c->cur->seq, op->sig);
    if (atomic_load(&c->error) != ncclSuccess)
        return 0;
    if (op->algo == JC_ALGO_LOCAL)
        return jc_local_run(op);
    int rc = op->algo == JC_ALGO_RING ? jc_ring_start(&c->run, coll_xport(c))
                                      : jc_mesh_start(&c->run, coll_xport(c));
    if (rc != 0)
        coll_fail(c, ncclSystemError, "no memory for %s of %zu bytes", jc_kind_name(op->g.kind),
                  jc_total(&op->g));
    return rc;
}

/* Starts, advances and finishes operations; returns 1 if anything happened. */
static int run_ops(struct coll_comm *c)
{
    int prog = 0;
    if (!c->cur) {
        if (!(c->cur = coll_next(c)))
            return 0;
        prog = 1;
        if (atomic_load(&c->error) == ncclSuccess && op_start(c) == 1) {
            op_done(c, ncclSuccess);
            return 1;
        }
    }
    ncclResult_t err = (ncclResult_t)atomic_load(&c->error);
    if (err != ncclSuccess) {
        op_done(c, err);
        return 1;
    }
    int r = c->cur->op.algo == JC_ALGO_RING ? jc_ring_advance(&c->run, coll_xport(c), &prog)
                                            : jc_mesh_advance(&c->run, coll_xport(c), &prog);
    if (r != 0)
        op_done(c, r > 0 ? ncclSuccess : (ncclResult_t)atomic_load(&c->error));
    return prog || r != 0;
}

/* Who the running operation waits for: peers with receives posted and no data yet, and peers
 * whose last word says they have not reached this operation. */
static void describe_wait(struct coll_comm *c, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->nlinks && off < len; i++) {
        struct jc_link *l = &c->links[i];
        int data = 0;
        for (int s = 0; s < c->ndata; s++)
            data |= l->s[s].posted != l->s[s].landed;
        int behind = l->peer_seq == UINT64_MAX || l->peer_seq < c->cur->seq;
        if (l->peer >= 0 && (data || behind))
            off += (size_t)snprintf(buf + off, len - off, " rank %d (%s)%s;", l->peer, l->desc,
                                    data ? " owes data" : " has not started it");
    }
}

static void warn_if_stuck(struct coll_comm *c)
{
    uint64_t waited = jaccl_now_ns() - c->cur_t0;
    if (!c->cur || waited < c->cur_warn)
        return;
    char who[512];
    describe_wait(c, who, sizeof(who));
    JWARN("CollNet rank %d: %s #%llu (%zu bytes, %s) still waiting after %.0f s for:%s",
          c->rank, jc_kind_name(c->cur->op.g.kind), (unsigned long long)c->cur->seq,
          jc_total(&c->cur->op.g), jc_algo_name(c->cur->op.algo), (double)waited / 1e9, who);
    c->cur_warn *= 2;
}

/* closeColl: whatever is still queued is abandoned; peers get a goodbye and we wait for
 * theirs, so nobody's connections close under an operation it is still finishing. */
static void say_goodbye(struct coll_comm *c)
{
    uint64_t deadline = jaccl_deadline_ns(jaccl_timeout_ns());
    while (atomic_load(&c->error) == ncclSuccess) {
        coll_x_poll(c);
        int waiting = coll_x_bye(c);
        if (!waiting)
            return;
        if (jaccl_expired(deadline)) {
            JINFO(NCCL_NET, "CollNet rank %d: %d peer(s) did not close within the timeout",
                  c->rank, waiting);
            return;
        }
        c->ops->cq_wait(c->cq, jaccl_now_ns() + IDLE_SLICE_NS / 10);
    }
}

void *coll_progress_main(void *arg)
{
    struct coll_comm *c = arg;
    for (;;) {
        if (atomic_load(&c->closing)) {
            say_goodbye(c);
            return NULL;
        }
        int prog = coll_x_poll(c) > 0;
        prog |= run_ops(c);
        if (atomic_load(&c->error) == ncclSuccess)
            coll_x_grants(c);
        if (prog)
            continue;
        c->ops->cq_wait(c->cq, jaccl_now_ns() + IDLE_SLICE_NS);
        if (c->cur)
            warn_if_stuck(c);
    }
}

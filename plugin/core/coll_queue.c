/* SPDX-License-Identifier: BSD-3-Clause */
/* The request queue between NCCL's threads and the state machine, and test().
 *
 * A ring of COLL_QSIZE requests: enqueue fills the slot at q_tail if test() has released it (else
 * NCCL gets a NULL request and retries), the state machine runs slots in order from q_exec.
 * enqueue and test() run the state machine inline when nobody else does (coll_progress_inline)
 * and otherwise only touch the queue: they never block on the comm. */
#include <errno.h>
#include <limits.h>

#include "core/api.h"
#include "core/coll.h"
#include "core/err.h"
#include "core/registry.h"
#include "util/counters.h"
#include "util/log.h"

int coll_enqueue(struct coll_comm *c, const struct algo_op *op, void **request)
{
    pthread_mutex_lock(&c->qlock);
    struct coll_req *r = &c->req[c->q_tail % COLL_QSIZE];
    if (atomic_load(&r->state) != COLL_REQ_FREE) {
        pthread_mutex_unlock(&c->qlock);
        *request = NULL; /* full: NCCL calls again later */
        return 0;
    }
    r->op = *op;
    r->seq = c->q_tail;
    r->result = 0;
    atomic_store(&r->state, COLL_REQ_QUEUED);
    c->q_tail++;
    pthread_mutex_unlock(&c->qlock);
    *request = r;
    /* Started here, it is on the wire before NCCL's first test(). If the state machine was
     * busy, its holder may have looked at the queue already: wake the progress thread. */
    if (coll_progress_inline(c) != 0)
        c->ops->cq_wake(c->cq);
    return 0;
}

/* run_lock holder only. */
struct coll_req *coll_next(struct coll_comm *c, int ahead)
{
    uint64_t seq = c->q_exec + (uint64_t)ahead;
    struct coll_req *r = &c->req[seq % COLL_QSIZE];
    if (atomic_load(&r->state) == COLL_REQ_QUEUED && r->seq == seq)
        return r;
    return NULL;
}

void coll_finish(struct coll_comm *c, struct coll_req *r, int rc)
{
    c->stats.ops++;
    if (rc == 0)
        c->stats.bytes += r->op.out.len;
    else
        c->stats.failed++;
    if ((unsigned)r->op.algo < sizeof(c->stats.by_algo) / sizeof(c->stats.by_algo[0]))
        c->stats.by_algo[r->op.algo]++;
    r->result = rc;
    atomic_store(&r->state, COLL_REQ_DONE);
    c->q_exec++;
}

static int coll_test(void *request, int *done, int *size)
{
    jaccl_count(JACCL_CNT_TEST, 1);
    struct coll_req *r = jaccl_reg_find(request, JO_COLL_REQ, "CollNet test", NULL);
    if (!r || !done)
        return -EFAULT;
    int st = atomic_load(&r->state);
    if (st == COLL_REQ_QUEUED) {
        if (coll_progress_inline(r->comm) > 0)
            r->comm->ops->cq_wake(r->comm->cq); /* more to do than one call does: hand over */
        st = atomic_load(&r->state);
    }
    if (st == COLL_REQ_FREE) {
        JWARN("CollNet test: request %p is not in flight (already completed?)", request);
        return -EALREADY;
    }
    *done = st == COLL_REQ_DONE;
    if (!*done)
        return 0;
    int rc = r->result;
    if (size)
        *size = r->op.out.len > INT_MAX ? INT_MAX : (int)r->op.out.len; /* bytes out */
    atomic_store(&r->state, COLL_REQ_FREE);
    return rc;
}

ncclResult_t jaccl_coll_test(void *request, int *done, int *size)
{
    return jaccl_err_to_nccl(coll_test(request, done, size));
}

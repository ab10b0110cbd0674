/* SPDX-License-Identifier: BSD-3-Clause */
/* The progress thread of a CollNet comm: dispatches completions, runs queued operations in order
 * (coll_sched.c), sends credits, and sleeps in cq_wait whenever nothing moved. A failure of the
 * comm fails the running operation and every later one. An operation that waits on a live peer
 * is waited for, with a WARN after NCCL_JACCL_TIMEOUT, then after twice as long, and so on. */
#include <stdio.h>
#include <string.h>

#include "core/coll.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/log.h"

#define IDLE_SLICE_NS 1000000000ull /* wake up at least this often: close requests, timers */

/* Who the running operation may be waiting for: peers it posted receives for that have not
 * landed, and peers whose last control message named an earlier operation (or none). */
static void describe_wait(struct coll_comm *c, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->nlinks && off < len; i++) {
        struct coll_link *l = &c->links[i];
        int data = 0;
        for (int s = 0; s < c->ndata; s++)
            data |= l->s[s].posted != l->s[s].landed;
        if (l->peer < 0 || (!data && l->peer_seq == c->cur->seq))
            continue;
        if (data)
            off += (size_t)snprintf(buf + off, len - off, " rank %d (%s) owes data;", l->peer,
                                    l->desc);
        else if (l->peer_seq == UINT64_MAX)
            off += (size_t)snprintf(buf + off, len - off, " rank %d (%s) not heard from;", l->peer,
                                    l->desc);
        else
            off += (size_t)snprintf(buf + off, len - off, " rank %d (%s) last at #%llu;", l->peer,
                                    l->desc, (unsigned long long)l->peer_seq);
    }
}

static void warn_if_stuck(struct coll_comm *c)
{
    uint64_t waited = jaccl_now_ns() - c->cur_t0;
    if (!c->cur || waited < c->cur_warn)
        return;
    char who[512];
    describe_wait(c, who, sizeof(who));
    JWARN("CollNet rank %d: %s #%llu (%zu bytes, %s) still waiting after %.0f s for:%s", c->rank,
          jc_kind_name(c->cur->op.g.kind), (unsigned long long)c->cur->seq, jc_total(&c->cur->op.g),
          jc_algo_name(c->cur->op.algo), (double)waited / 1e9, who);
    c->cur_warn *= 2;
}

/* closeColl: whatever is still queued is abandoned; peers get a goodbye and we wait for
 * theirs, so nobody's connections close under an operation it is still finishing. */
static void say_goodbye(struct coll_comm *c)
{
    uint64_t deadline = jaccl_deadline_ns(jaccl_timeout_ns());
    while (jaccl_sticky_status(&c->fail) == 0) {
        coll_x_poll(c);
        int waiting = coll_x_bye(c);
        if (!waiting)
            return;
        if (jaccl_expired(deadline)) {
            JINFO(NCCL_NET, "CollNet rank %d: %d peer(s) did not close within the timeout", c->rank,
                  waiting);
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
        prog |= coll_run_ops(c);
        if (jaccl_sticky_status(&c->fail) == 0)
            coll_x_grants(c);
        if (prog)
            continue;
        c->ops->cq_wait(c->cq, jaccl_now_ns() + IDLE_SLICE_NS);
        if (c->cur)
            warn_if_stuck(c);
    }
}

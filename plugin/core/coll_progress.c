/* SPDX-License-Identifier: BSD-3-Clause */
/* Running a CollNet comm's state machine: one round dispatches completions, runs queued
 * operations in order (coll_sched.c) and sends credits. Callers run rounds inline when they poll
 * (coll_progress_inline); the progress thread runs them when nobody does, and waits in cq_wait
 * whenever nothing moved (see the threading note in coll.h): cq_wait spins briefly first
 * (NCCL_JACCL_SPIN_US, the fabric's one adaptive spin), then sleeps. A failure of the comm fails
 * the running operation and every later one. An operation that waits on a live peer is waited for,
 * with a WARN after NCCL_JACCL_TIMEOUT, then after twice as long, and so on. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/coll.h"
#include "core/state.h"
#include "util/clock.h"
#include "util/counters.h"
#include "util/log.h"

#define IDLE_SLICE_NS 1000000000ull /* wake up at least this often: close requests, timers */
/* A caller that polled this recently is taken to poll again soon, and the thread then naps
 * (it wakes up to take over if the polls stop) instead of waiting on the CQ: a thread woken for
 * each completion takes a core from a rank, and takes run_lock from the caller that would have
 * run the same round a moment later (docs/performance.md, "Where the code's constants come
 * from": the nap halved 2-rank latencies). */
#define POLL_GRACE_NS 1000000ull
#define INLINE_ROUNDS 4 /* rounds a caller runs per call while they keep moving something */

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
            data |= coll_x_aposted(&l->s[s]) != coll_x_alanded(&l->s[s]);
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
          algo_kind_name(c->cur->op.g.kind), (unsigned long long)c->cur->seq,
          algo_total(&c->cur->op.g), algo_name(c->cur->op.algo), (double)waited / 1e9, who);
    c->cur_warn *= 2;
}

/* closeColl: whatever is still queued is abandoned. Every peer gets a goodbye with our final
 * counts, so one that still needs something from us fails at once with a WARN saying we left,
 * and one that does not is not failed by our connections closing (link_down in coll_xport.c).
 * We wait for our goodbyes' sends only (at once on TCP; the peer's fabric acknowledges them on
 * verbs), at most FAB_LINGER_STALL_NS, never for the peers' goodbyes: a peer may close much
 * later, or not at all while it waits on us (an abort). The endpoints' close then ends each
 * connection in order (fabric.h, ep_close): our bytes still reach the peers, in the
 * background. */
static void say_goodbye(struct coll_comm *c)
{
    uint64_t deadline = jaccl_deadline_ns(FAB_LINGER_STALL_NS);
    while (jaccl_sticky_status(&c->fail) == 0) {
        coll_x_poll(c);
        int waiting = coll_x_bye(c);
        if (!waiting)
            return;
        if (jaccl_expired(deadline)) {
            JINFO(NCCL_NET, "CollNet rank %d: goodbyes to %d peer(s) not out after %.0f s", c->rank,
                  waiting, (double)FAB_LINGER_STALL_NS / 1e9);
            return;
        }
        c->ops->cq_wait(c->cq, jaccl_now_ns() + IDLE_SLICE_NS / 100);
    }
}

/* `caller`: a caller's thread runs it (test(), the i* calls). A round that completes an operation
 * there returns to the caller before it posts standing receives (coll_stand.c): the caller is
 * waiting for that result, likely to issue the next operation, and the control message that
 * grants them would be one more system call on that path; the next round (that next operation's
 * own, after its first sends, or the progress thread's) posts them. */
static int one_round(struct coll_comm *c, int caller, int *completed)
{
    uint64_t ops = c->stats.ops;
    int prog = coll_x_poll(c) > 0;
    prog |= coll_run_ops(c);
    *completed = c->stats.ops != ops;
    if (!caller || !*completed)
        coll_x_stand(c);
    if (jaccl_sticky_status(&c->fail) == 0)
        coll_x_grants(c);
    return prog;
}

int coll_progress_round(struct coll_comm *c)
{
    int completed;
    return one_round(c, 0, &completed);
}

int coll_progress_inline(struct coll_comm *c)
{
    atomic_store_explicit(&c->polled_ns, jaccl_now_ns(), memory_order_relaxed);
    if (atomic_load(&c->closing) || pthread_mutex_trylock(&c->run_lock) != 0)
        return -EBUSY; /* someone else runs it (or the comm closes) */
    int moving = 1, completed = 0;
    for (int i = 0; i < INLINE_ROUNDS && moving && !completed; i++)
        moving = one_round(c, 1, &completed);
    pthread_mutex_unlock(&c->run_lock);
    return moving;
}

static int caller_polls(struct coll_comm *c, uint64_t now)
{
    return now - atomic_load_explicit(&c->polled_ns, memory_order_relaxed) < POLL_GRACE_NS;
}

/* While callers poll, the thread naps instead of waiting on the CQ. */
static int should_nap(struct coll_comm *c)
{
    return caller_polls(c, jaccl_now_ns());
}

static void nap(uint64_t ns)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ns};
    nanosleep(&ts, NULL);
}

/* One turn of the progress thread under run_lock: 1 = go again at once, 0 = wait, -1 = the
 * comm closed (goodbyes said). */
static int thread_turn(struct coll_comm *c)
{
    if (atomic_load(&c->closing)) {
        say_goodbye(c);
        return -1;
    }
    if (coll_progress_round(c)) {
        jaccl_count(JACCL_CNT_COLL_THREAD, 1); /* work its callers' threads did not do */
        return 1;
    }
    if (c->cur)
        warn_if_stuck(c);
    return 0;
}

/* While callers poll, run_lock is most likely held by one of them, running the round this
 * thread came for: blocking on it would make that caller's unlock a futex wake-up (the most
 * frequent ones, docs/performance.md). 0 = taken by a caller, nap instead. */
static int take_run_lock(struct coll_comm *c)
{
    if (pthread_mutex_trylock(&c->run_lock) == 0)
        return 1;
    if (should_nap(c) && !atomic_load(&c->closing))
        return 0;
    pthread_mutex_lock(&c->run_lock);
    return 1;
}

void *coll_progress_main(void *arg)
{
    struct coll_comm *c = arg;
    for (;;) {
        if (!take_run_lock(c)) {
            nap(POLL_GRACE_NS);
            continue;
        }
        int turn = thread_turn(c);
        pthread_mutex_unlock(&c->run_lock);
        if (turn < 0)
            return NULL;
        if (turn > 0)
            continue;
        if (should_nap(c))
            nap(POLL_GRACE_NS);
        else
            c->ops->cq_wait(c->cq, jaccl_now_ns() + IDLE_SLICE_NS);
    }
}

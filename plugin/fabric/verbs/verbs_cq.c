/* Completion queues as the caller sees them: a growable ring that the progress thread (and the
 * posting paths) fill with completions the protocol has decided on, and a condition variable
 * that cq_wait sleeps on. The hardware CQs are per endpoint and never seen by callers: a verbs
 * completion is not yet a caller completion (a UC send is done only when acknowledged). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric/verbs/verbs_int.h"
#include "util/clock.h"
#include "util/log.h"

/* Re-read jaccl_now_ns() at least this often so that a test clock moving past the deadline is
 * noticed while asleep. */
#define VB_CQ_SLICE_NS 200000000ull

int fab_verbs_cq_create(struct fab_domain *dom, int depth, struct fab_cq **out)
{
    struct fab_cq *cq = calloc(1, sizeof(*cq));
    pthread_condattr_t ca;

    if (!cq)
        return -ENOMEM;
    cq->cap = depth > 64 ? (uint32_t)depth : 64;
    cq->ring = calloc(cq->cap, sizeof(*cq->ring));
    if (!cq->ring) {
        free(cq);
        return -ENOMEM;
    }
    pthread_mutex_init(&cq->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&cq->cv, &ca);
    pthread_condattr_destroy(&ca);
    *out = cq;
    return 0;
}

void fab_verbs_cq_destroy(struct fab_cq *cq)
{
    if (!cq)
        return;
    pthread_cond_destroy(&cq->cv);
    pthread_mutex_destroy(&cq->mu);
    free(cq->ring);
    free(cq);
}

static int cq_grow(struct fab_cq *cq)
{
    uint32_t cap = cq->cap * 2;
    struct fab_wc *r = malloc((size_t)cap * sizeof(*r));

    if (!r)
        return -ENOMEM;
    for (uint32_t i = 0; i < cq->n; i++)
        r[i] = cq->ring[(cq->head + i) % cq->cap];
    free(cq->ring);
    cq->ring = r;
    cq->cap = cap;
    cq->head = 0;
    return 0;
}

void vb_cq_push(struct fab_cq *cq, const struct fab_wc *wc)
{
    pthread_mutex_lock(&cq->mu);
    if (cq->n == cq->cap && cq_grow(cq) != 0) {
        pthread_mutex_unlock(&cq->mu);
        JWARN("verbs fabric: out of memory growing a CQ past %u entries; completion of wr_id "
              "%llu lost",
              cq->cap, (unsigned long long)wc->wr_id);
        return;
    }
    cq->ring[(cq->head + cq->n) % cq->cap] = *wc;
    cq->n++;
    if (cq->waiters)
        pthread_cond_broadcast(&cq->cv);
    pthread_mutex_unlock(&cq->mu);
}

int fab_verbs_cq_poll(struct fab_cq *cq, struct fab_wc *wc, int max)
{
    int k = 0;

    pthread_mutex_lock(&cq->mu);
    for (; k < max && cq->n; k++) {
        wc[k] = cq->ring[cq->head];
        cq->head = (cq->head + 1) % cq->cap;
        cq->n--;
    }
    pthread_mutex_unlock(&cq->mu);
    return k;
}

static void cq_sleep(struct fab_cq *cq, uint64_t left_ns)
{
    struct timespec ts;
    uint64_t t;

    if (left_ns > VB_CQ_SLICE_NS)
        left_ns = VB_CQ_SLICE_NS;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t = (uint64_t)ts.tv_nsec + left_ns;
    ts.tv_sec += (time_t)(t / 1000000000ull);
    ts.tv_nsec = (long)(t % 1000000000ull);
    pthread_cond_timedwait(&cq->cv, &cq->mu, &ts);
}

/* A cq_wake with no waiter is remembered for the next one, so a progress thread told to stop
 * just before it went to sleep still returns. */
int fab_verbs_cq_wait(struct fab_cq *cq, uint64_t deadline_ns)
{
    uint64_t gen;
    int rc = 0;

    pthread_mutex_lock(&cq->mu);
    if (cq->wake_pending) {
        cq->wake_pending = 0;
        pthread_mutex_unlock(&cq->mu);
        return 0;
    }
    gen = cq->wake_gen;
    cq->waiters++;
    while (cq->n == 0 && cq->wake_gen == gen) {
        uint64_t now = jaccl_now_ns();

        if (now >= deadline_ns) {
            rc = -ETIMEDOUT;
            break;
        }
        cq_sleep(cq, deadline_ns - now);
    }
    cq->waiters--;
    pthread_mutex_unlock(&cq->mu);
    return rc;
}

void fab_verbs_cq_wake(struct fab_cq *cq)
{
    pthread_mutex_lock(&cq->mu);
    cq->wake_gen++;
    if (cq->waiters)
        pthread_cond_broadcast(&cq->cv);
    else
        cq->wake_pending = 1;
    pthread_mutex_unlock(&cq->mu);
}

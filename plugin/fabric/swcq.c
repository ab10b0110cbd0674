/* SPDX-License-Identifier: BSD-3-Clause */
/* The software completion queue shared by both back ends (see swcq.h). */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "fabric/swcq.h"
#include "util/clock.h"
#include "util/counters.h"
#include "util/crowd.h"
#include "util/log.h"
#include "util/param.h"

/* A waiter re-reads jaccl_now_ns() at least this often, so an injected test clock that jumps
 * past the deadline is noticed. */
#define SWCQ_SLICE_NS 200000000ull
/* The spin never shrinks below the most / this, so it keeps probing whether it pays again. */
#define SWCQ_SPIN_FLOOR_DIV 16
/* Readable sockets one readiness check lists; more and every source reads all of its own. */
#define SWCQ_READY_MAX 64

int fab_swcq_create(struct fab_domain *dom, int depth, struct fab_cq **out)
{
    struct fab_swcq *cq = calloc(1, sizeof(*cq));
    pthread_condattr_t ca;

    if (!cq)
        return -ENOMEM;
    cq->cap = depth > 16 ? (uint32_t)depth : 16;
    cq->ring = calloc(cq->cap, sizeof(*cq->ring));
    if (!cq->ring) {
        free(cq);
        return -ENOMEM;
    }
    pthread_mutex_init(&cq->mu, NULL);
    pthread_mutex_init(&cq->src_mu, NULL);
    cq->spin_max_ns = (uint64_t)jaccl_param_int(JP_SPIN_US) * 1000;
    cq->epfd = -1;
    atomic_init(&cq->spin_ns, cq->spin_max_ns);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&cq->cv, &ca);
    pthread_condattr_destroy(&ca);
    cq->fab.ops = dom ? dom->ops : NULL;
    *out = &cq->fab;
    return 0;
}

void fab_swcq_destroy(struct fab_cq *fcq)
{
    struct fab_swcq *cq = fab_swcq_of(fcq);
    if (!cq)
        return;
    pthread_cond_destroy(&cq->cv);
    pthread_mutex_destroy(&cq->mu);
    pthread_mutex_destroy(&cq->src_mu);
    if (cq->epfd >= 0)
        close(cq->epfd);
    free(cq->ring);
    free(cq);
}

/* Doubles the ring, unrolling it so that head becomes 0. */
static int swcq_grow(struct fab_swcq *cq)
{
    uint32_t cap = cq->cap * 2;
    struct fab_wc *r = malloc((size_t)cap * sizeof(*r));
    uint32_t first;

    if (!r)
        return -ENOMEM;
    first = cq->cap - cq->head;
    if (first > cq->n)
        first = cq->n;
    memcpy(r, cq->ring + cq->head, first * sizeof(*r));
    memcpy(r + first, cq->ring, (cq->n - first) * sizeof(*r));
    free(cq->ring);
    cq->ring = r;
    cq->cap = cap;
    cq->head = 0;
    return 0;
}

void fab_swcq_push(struct fab_cq *fcq, const struct fab_wc *wc)
{
    struct fab_swcq *cq = fab_swcq_of(fcq);
    pthread_mutex_lock(&cq->mu);
    if (cq->n == cq->cap && swcq_grow(cq) != 0) {
        /* The request behind wc can never complete: the CQ is broken from now on, and says
         * so to every poller (fab_swcq_poll), so the layer above fails its comm instead of
         * waiting for a completion that was lost. */
        int first = !cq->lost;
        cq->lost = 1;
        pthread_cond_broadcast(&cq->cv);
        pthread_mutex_unlock(&cq->mu);
        if (first)
            JWARN("fabric: out of memory growing a CQ beyond %u entries: completion of wr_id "
                  "%llu lost, every comm on this CQ fails",
                  cq->cap, (unsigned long long)wc->wr_id);
        return;
    }
    cq->ring[(cq->head + cq->n) % cq->cap] = *wc;
    cq->n++;
    if (cq->waiters) {
        jaccl_count(JACCL_CNT_CQ_SIGNAL, 1);
        pthread_cond_broadcast(&cq->cv);
    }
    pthread_mutex_unlock(&cq->mu);
}

void fab_swcq_attach(struct fab_cq *fcq, struct fab_cq_src *src)
{
    struct fab_swcq *cq = fab_swcq_of(fcq);
    pthread_mutex_lock(&cq->src_mu);
    src->next = cq->srcs;
    cq->srcs = src;
    pthread_mutex_unlock(&cq->src_mu);
}

void fab_swcq_detach(struct fab_cq *fcq, struct fab_cq_src *src)
{
    struct fab_swcq *cq = fab_swcq_of(fcq);
    pthread_mutex_lock(&cq->src_mu);
    for (struct fab_cq_src **p = &cq->srcs; *p; p = &(*p)->next) {
        if (*p == src) {
            *p = src->next;
            break;
        }
    }
    pthread_mutex_unlock(&cq->src_mu);
}

int fab_swcq_watch(struct fab_cq *fcq, int fd, struct fab_cq_fd *ref)
{
    struct fab_swcq *cq = fab_swcq_of(fcq);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = ref};
    int rc = 0;

    pthread_mutex_lock(&cq->src_mu);
    if (cq->epfd < 0)
        cq->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (cq->epfd < 0 || epoll_ctl(cq->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        rc = -errno;
    else
        cq->nwatch++;
    pthread_mutex_unlock(&cq->src_mu);
    return rc;
}

void fab_swcq_unwatch(struct fab_cq *fcq, int fd)
{
    struct fab_swcq *cq = fab_swcq_of(fcq);

    pthread_mutex_lock(&cq->src_mu);
    if (cq->epfd >= 0 && epoll_ctl(cq->epfd, EPOLL_CTL_DEL, fd, NULL) == 0)
        cq->nwatch--;
    pthread_mutex_unlock(&cq->src_mu);
}

/* One epoll_wait for every watched socket: which sources have bytes, and on which sockets.
 * Caller holds src_mu. */
static void swcq_check_ready(struct fab_swcq *cq)
{
    struct epoll_event ev[SWCQ_READY_MAX];
    int n = -1;

    if (cq->nwatch > 0) {
        n = epoll_wait(cq->epfd, ev, SWCQ_READY_MAX, 0);
        jaccl_count(JACCL_CNT_POLL_READY, 1);
    }
    uint32_t base = n < 0 || n == SWCQ_READY_MAX ? FAB_CQ_READY_ALL : 0;
    uint64_t now = jaccl_now_ns();
    for (struct fab_cq_src *s = cq->srcs; s; s = s->next) {
        s->ready = base;
        s->now = now;
    }
    for (int i = 0; i < n; i++) {
        const struct fab_cq_fd *ref = ev[i].data.ptr;
        ref->src->ready |= ref->bit;
    }
}

static int swcq_drive(struct fab_swcq *cq)
{
    int moved = 0;

    /* Another poller holding it is driving the same sources right now: nothing to add. */
    if (pthread_mutex_trylock(&cq->src_mu) != 0)
        return 0;
    swcq_check_ready(cq);
    for (struct fab_cq_src *s = cq->srcs; s; s = s->next)
        moved += s->drive(s);
    pthread_mutex_unlock(&cq->src_mu);
    return moved;
}

int fab_swcq_drive(struct fab_cq *cq)
{
    return swcq_drive(fab_swcq_of(cq));
}

static int swcq_pop(struct fab_swcq *cq, struct fab_wc *wc, int max)
{
    int k = 0;

    pthread_mutex_lock(&cq->mu);
    while (k < max && cq->n) {
        wc[k++] = cq->ring[cq->head];
        cq->head = (cq->head + 1) % cq->cap;
        cq->n--;
    }
    pthread_mutex_unlock(&cq->mu);
    return k;
}

/* The caller's thread does the receive work itself when the ring cannot fill its array: no
 * hop through a progress thread and no kernel wake-up on the path of a message. */
int fab_swcq_poll(struct fab_cq *fcq, struct fab_wc *wc, int max)
{
    struct fab_swcq *cq = fab_swcq_of(fcq);
    int k = swcq_pop(cq, wc, max);

    if (k < max && swcq_drive(cq) > 0)
        k += swcq_pop(cq, wc + k, max - k);
    if (k == 0 && atomic_load_explicit(&cq->lost, memory_order_relaxed))
        return -ENOMEM; /* what it held is delivered; a completion it could not keep is not */
    return k;
}

static void swcq_sleep(struct fab_swcq *cq, uint64_t left_ns)
{
    struct timespec ts;
    uint64_t t;

    if (left_ns > SWCQ_SLICE_NS)
        left_ns = SWCQ_SLICE_NS;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t = (uint64_t)ts.tv_nsec + left_ns;
    ts.tv_sec += (time_t)(t / 1000000000ull);
    ts.tv_nsec = (long)(t % 1000000000ull);
    pthread_cond_timedwait(&cq->cv, &cq->mu, &ts);
}

/* Tells every source that nobody polls now (see fab_cq_src.quiet). */
static void swcq_quiet(struct fab_swcq *cq)
{
    pthread_mutex_lock(&cq->src_mu);
    for (struct fab_cq_src *s = cq->srcs; s; s = s->next)
        if (s->quiet)
            s->quiet(s);
    pthread_mutex_unlock(&cq->src_mu);
}

static int swcq_ready(struct fab_swcq *cq)
{
    int r;

    pthread_mutex_lock(&cq->mu);
    r = cq->n > 0 || cq->wake_pending;
    pthread_mutex_unlock(&cq->mu);
    return r;
}

/* Polls (driving the sources) for up to the current spin before the caller sleeps; 1 if
 * something came. Every round yields the CPU, so where ranks outnumber cores the spinner hands
 * its core to whoever is runnable (likely the peer it waits for), and an empty spin halves the
 * next one: waiters that keep missing end up sleeping almost at once. */
static int swcq_spin(struct fab_swcq *cq, uint64_t deadline_ns)
{
    uint64_t t0, end, floor = cq->spin_max_ns / SWCQ_SPIN_FLOOR_DIV;
    uint64_t spin = atomic_load_explicit(&cq->spin_ns, memory_order_relaxed);

    if (spin == 0 || jaccl_cpu_crowded())
        return 0;
    t0 = jaccl_now_ns();
    end = t0 + spin < deadline_ns ? t0 + spin : deadline_ns;
    do {
        swcq_drive(cq);
        if (swcq_ready(cq)) {
            atomic_store_explicit(&cq->spin_ns, cq->spin_max_ns, memory_order_relaxed);
            return 1;
        }
        sched_yield();
    } while (jaccl_now_ns() < end);
    atomic_store_explicit(&cq->spin_ns, spin / 2 > floor ? spin / 2 : floor, memory_order_relaxed);
    return 0;
}

/* cq_wake releases every current waiter; one that comes while nobody waits is kept for the next
 * waiter, so a progress thread told to stop just before it went to sleep still returns. */
int fab_swcq_wait(struct fab_cq *fcq, uint64_t deadline_ns)
{
    struct fab_swcq *cq = fab_swcq_of(fcq);
    uint64_t gen;
    int rc = 0;

    if (swcq_spin(cq, deadline_ns))
        return 0;
    swcq_quiet(cq); /* before sleeping: the back ends' threads read for us again */
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
        if (deadline_ns == UINT64_MAX)
            pthread_cond_wait(&cq->cv, &cq->mu);
        else
            swcq_sleep(cq, deadline_ns - now);
    }
    cq->waiters--;
    pthread_mutex_unlock(&cq->mu);
    return rc;
}

void fab_swcq_wake(struct fab_cq *fcq)
{
    struct fab_swcq *cq = fab_swcq_of(fcq);
    pthread_mutex_lock(&cq->mu);
    cq->wake_gen++;
    if (cq->waiters)
        pthread_cond_broadcast(&cq->cv);
    else
        cq->wake_pending = 1;
    pthread_mutex_unlock(&cq->mu);
}

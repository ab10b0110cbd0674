/* SPDX-License-Identifier: BSD-3-Clause */
/* The completion queue both back ends hand to callers: a growable ring (a completion is never
 * dropped silently, whatever depth the caller guessed: where the ring cannot grow, every later
 * cq_poll fails with -ENOMEM) and a condition variable that cq_wait sleeps on.
 * The verbs back end keeps its hardware CQs private: a verbs completion is not yet a caller
 * completion (a UC send is done only when acknowledged). */
#ifndef JACCL_FABRIC_SWCQ_H
#define JACCL_FABRIC_SWCQ_H

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "util/container.h"

/* Something that can make progress for a CQ from the polling thread itself (an endpoint of
 * either back end). drive() never blocks: it takes its own locks with trylock and returns at
 * once when another thread (the back end's progress thread, another poller) holds them. It
 * returns the number of completions it may have pushed (0: nothing moved). */
struct fab_cq_src {
    struct fab_cq_src *next;
    int (*drive)(struct fab_cq_src *src);
    /* The poller is about to sleep in cq_wait: the back end's own threads must watch for
     * everything again, at once (a back end that stepped back while pollers were active). */
    void (*quiet)(struct fab_cq_src *src);
    /* Set just before each drive() (under src_mu): the bits of the source's watched sockets
     * (fab_swcq_watch) the CQ's readiness check found readable, or FAB_CQ_READY_ALL where it
     * cannot tell (it watches nothing, or more sockets were readable than it could list). */
    uint32_t ready;
    uint64_t now; /* jaccl_now_ns() of this poll, read once for every source, set with ready */
};
#define FAB_CQ_READY_ALL UINT32_MAX

/* A socket a source has the CQ watch: its source and the bit that stands for it in `ready`. */
struct fab_cq_fd {
    struct fab_cq_src *src;
    uint32_t bit;
};

/* The CQ's head (fabric.h) comes first; the fab_swcq_* functions take the head and convert. */
struct fab_swcq {
    struct fab_cq fab;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct fab_wc *ring;
    uint32_t cap, head, n;
    int waiters;
    int wake_pending; /* a cq_wake came while nobody waited */
    atomic_int lost;  /* a completion could not be stored (out of memory): the CQ is broken */
    uint64_t wake_gen;
    /* Sources polled inline (see fab_swcq_attach). src_mu is taken before any back-end lock:
     * pollers trylock it, attach/detach lock it, so a detach waits for a drive in flight. */
    pthread_mutex_t src_mu;
    struct fab_cq_src *srcs;
    /* One readiness check per poll for every watched socket of every source (a level-triggered
     * epoll set; -1 until the first watch), instead of one per source: a CollNet comm's CQ
     * serves an endpoint per peer, and most polls find nothing. Under src_mu. */
    int epfd, nwatch;
    /* cq_wait's spin (NCCL_JACCL_SPIN_US): the most, and what it is now; it halves after
     * a spin that found nothing and is back at the most after one that did. */
    uint64_t spin_max_ns;
    _Atomic uint64_t spin_ns;
};

/* The fab_ops CQ slots of both back ends. create takes the domain's ops (dom may be NULL in
 * tests that drive the CQ alone: the CQ then has no ops). */
int fab_swcq_create(struct fab_domain *dom, int depth, struct fab_cq **out);
void fab_swcq_destroy(struct fab_cq *cq);
int fab_swcq_poll(struct fab_cq *cq, struct fab_wc *wc, int max);
int fab_swcq_wait(struct fab_cq *cq, uint64_t deadline_ns);
void fab_swcq_wake(struct fab_cq *cq);
/* Back ends register an endpoint's inline progress once its sockets/QPs are live, and remove it
 * before freeing the endpoint (detach returns only when no drive() of it is running). */
void fab_swcq_attach(struct fab_cq *cq, struct fab_cq_src *src);
void fab_swcq_detach(struct fab_cq *cq, struct fab_cq_src *src);
/* Back ends have the CQ's readiness check cover a socket of an attached source (EPOLLIN, level:
 * readable while it holds bytes), and stop before the socket is closed or the source detached
 * and freed. watch returns 0 or a negative errno. */
int fab_swcq_watch(struct fab_cq *cq, int fd, struct fab_cq_fd *ref);
void fab_swcq_unwatch(struct fab_cq *cq, int fd);
/* Runs every attached source once (skipped if another poller is at it); returns the sum of
 * their drive() results. cq_poll calls it when the ring alone cannot fill the caller's array. */
int fab_swcq_drive(struct fab_cq *cq);
/* Back ends report a completion. */
void fab_swcq_push(struct fab_cq *cq, const struct fab_wc *wc);

/* The head is first, so a NULL head converts to NULL. */
_Static_assert(offsetof(struct fab_swcq, fab) == 0, "the CQ's head comes first");
static inline struct fab_swcq *fab_swcq_of(struct fab_cq *cq)
{
    return jaccl_head_of(cq, struct fab_swcq, fab);
}

#endif

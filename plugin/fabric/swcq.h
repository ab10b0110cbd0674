/* SPDX-License-Identifier: BSD-3-Clause */
/* The completion queue both back ends hand to callers: a growable ring (a completion is never
 * dropped, whatever depth the caller guessed) and a condition variable that cq_wait sleeps on.
 * The verbs back end keeps its hardware CQs private: a verbs completion is not yet a caller
 * completion (a UC send is done only when acknowledged). */
#ifndef JACCL_FABRIC_SWCQ_H
#define JACCL_FABRIC_SWCQ_H

#include <pthread.h>
#include <stdint.h>

#include "fabric/fabric.h"

struct fab_cq {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct fab_wc *ring;
    uint32_t cap, head, n;
    int waiters;
    int wake_pending; /* a cq_wake came while nobody waited */
    uint64_t wake_gen;
};

/* The fab_ops CQ slots of both back ends. */
int fab_swcq_create(struct fab_domain *dom, int depth, struct fab_cq **out);
void fab_swcq_destroy(struct fab_cq *cq);
int fab_swcq_poll(struct fab_cq *cq, struct fab_wc *wc, int max);
int fab_swcq_wait(struct fab_cq *cq, uint64_t deadline_ns);
void fab_swcq_wake(struct fab_cq *cq);
/* Back ends report a completion. */
void fab_swcq_push(struct fab_cq *cq, const struct fab_wc *wc);

#endif

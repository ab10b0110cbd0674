/* SPDX-License-Identifier: BSD-3-Clause */
/* CollNet comm objects: creation, links (one per connected peer), registered memory (control
 * messages, staging slots, scratch), the progress thread, and teardown. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/coll.h"
#include "core/registry.h"
#include "core/state.h"
#include "util/log.h"

static void *alloc_pages(size_t len)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, len) != 0)
        return NULL;
    memset(p, 0, len);
    return p;
}

static int ctrl_alloc(struct coll_comm *c)
{
    size_t len = (size_t)c->maxlinks * 2 * COLL_CTRL_N * sizeof(struct coll_ctrl);
    c->ctrl_mem = alloc_pages(len);
    if (!c->ctrl_mem || coll_mr_reg(c, c->ctrl_mem, len, &c->ctrl_mr) != 0)
        return -ENOMEM;
    for (int i = 0; i < c->maxlinks; i++) {
        struct coll_link *l = &c->links[i];
        l->peer = -1;
        l->peer_seq = UINT64_MAX; /* has said nothing yet */
        l->rx = (struct coll_ctrl *)c->ctrl_mem + (size_t)i * 2 * COLL_CTRL_N;
        l->tx = l->rx + COLL_CTRL_N;
        for (int s = 0; s < ALGO_MAX_PARTS; s++) {
            l->s[s].stage = -1;
            memset(l->s[s].stand_slot, -1, sizeof(l->s[s].stand_slot));
        }
    }
    return 0;
}

struct coll_comm *coll_comm_new(int dev, int nranks, int rank, int wires)
{
    struct coll_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->xp.ops = &coll_xport_ops;
    c->dev = dev;
    c->nranks = nranks;
    c->rank = rank;
    c->wires = wires;
    c->ndata = 2 * wires;
    c->maxlinks = 2 * nranks + 4; /* room for connection attempts that fail half-way */
    pthread_mutex_init(&c->qlock, NULL);
    pthread_mutex_init(&c->run_lock, NULL);
    pthread_mutex_init(&c->reg_mu, NULL);
    for (int i = 0; i < COLL_QSIZE; i++) {
        c->req[i].magic = COLL_REQ_MAGIC;
        c->req[i].comm = c;
    }
    for (int p = 0; p < ALGO_MAX_RANKS; p++)
        c->link_r[p] = c->link_l[p] = -1;
    c->dom = jaccl_domain_get(dev);
    c->ops = c->dom ? c->dom->ops : NULL; /* the comm reaches the fabric through its domain */
    c->doms[0] = (struct coll_dom){.c = c, .dev = dev, .idx = 0, .dom = c->dom};
    c->ndoms = 1;
    c->links = calloc((size_t)c->maxlinks, sizeof(*c->links));
    int depth = c->maxlinks * (c->ndata * (ALGO_POST_MAX + ALGO_SEND_MAX) + 2 * COLL_CTRL_N);
    if (!c->dom || !c->links || ctrl_alloc(c) != 0 ||
        c->ops->cq_create(c->dom, depth, &c->cq) != 0) {
        coll_comm_free(c);
        return NULL;
    }
    return c;
}

static void release_mem(struct coll_comm *c, char **mem, struct fab_mr **mr)
{
    if (*mr)
        coll_mr_dereg(c, *mr);
    free(*mem);
    *mem = NULL;
    *mr = NULL;
}

void coll_comm_free(struct coll_comm *c)
{
    jaccl_reg_del(c->req);
    coll_x_close_all(c);
    /* The handle NCCL held, with the memory handles NCCL left on it, goes before the domain
     * (the last domain_put may shut the fabric down). */
    if (c->h)
        coll_handle_kill(c->h);
    c->h = NULL;
    release_mem(c, &c->ctrl_mem, &c->ctrl_mr);
    release_mem(c, &c->stage_mem, &c->stage_mr);
    for (int i = 0; i < 2; i++)
        release_mem(c, &c->scratch[i], &c->scratch_mr[i]);
    if (c->cq)
        c->ops->cq_destroy(c->cq);
    coll_doms_free(c);
    if (c->dom)
        jaccl_domain_put(c->dev);
    pthread_mutex_destroy(&c->qlock);
    pthread_mutex_destroy(&c->run_lock);
    pthread_mutex_destroy(&c->reg_mu);
    free(c->links);
    free(c);
}

/* Runs on every new endpoint before it goes live: the peer may send control messages as soon
 * as it is connected, so their receives are posted here, in a link not yet tied to a rank. */
static int post_initial(struct fab_ep *ep, void *arg)
{
    struct coll_dom *cd = arg;
    struct coll_comm *c = cd->c;
    if (c->nlinks >= c->maxlinks)
        return -ENOSPC;
    int li = c->nlinks++;
    struct coll_link *l = &c->links[li];
    l->pending = ep;
    l->dom = cd->idx;
    struct fab_mr *mr = coll_mr_in(c, l->dom, c->ctrl_mr);
    for (uint32_t i = 0; i < COLL_CTRL_N; i++) {
        int rc = c->ops->post_recv(ep, c->ndata, &l->rx[i], sizeof(l->rx[i]), mr,
                                   COLL_WR(COLL_WR_CRECV, li, c->ndata, i));
        if (rc != 0)
            return rc;
    }
    return 0;
}

struct jaccl_conn_setup coll_setup(struct coll_comm *c, int d)
{
    struct jaccl_conn_setup s = {
            .ops = c->ops,
            .dom = c->doms[d].dom,
            .cq = c->cq,
            .attr = {.nlanes = c->ndata + 1,
                     .max_send_wr = COLL_CTRL_N,
                     .max_recv_wr = COLL_CTRL_N,
                     .liveness_ns = jaccl_timeout_ns(),
                     .host_ranks = c->host_ranks},
            .post_initial = post_initial,
            .arg = &c->doms[d],
    };
    jaccl_qos_fill(-1, &s.attr); /* NCCL's CollNet init carries no config: the knobs only */
    return s;
}

/* Ties a finished endpoint to its rank. The newest link with that endpoint pointer wins: an
 * older one belonged to a failed attempt whose endpoint was freed (and its address reused). */
int coll_link_bind(struct coll_comm *c, struct fab_ep *ep, int peer, enum coll_link_role role,
                   const char *desc)
{
    for (int i = c->nlinks - 1; i >= 0; i--) {
        struct coll_link *l = &c->links[i];
        if (l->pending == ep && l->peer < 0) {
            l->ep = ep;
            l->pending = NULL;
            l->peer = peer;
            snprintf(l->desc, sizeof(l->desc), "%s", desc);
            if (role != COLL_LINK_LEFT)
                c->link_r[peer] = (int16_t)i;
            if (role != COLL_LINK_RIGHT)
                c->link_l[peer] = (int16_t)i;
            return 0;
        }
    }
    return -EFAULT; /* an endpoint the connection set-up never handed us: our bug */
}

unsigned coll_algos_to(const struct coll_comm *c, int p)
{
    unsigned talk = 0;
    for (int a = 0; a < ALGO_NUM_IDS; a++)
        if ((c->choice.usable & ALGO_BIT(a)) &&
            algo_ops_of((enum algo_id)a)->talks(&c->ring, c->nranks, c->rank, p))
            talk |= ALGO_BIT(a);
    return talk;
}

/* Marks the incoming stream (peer, lane) as one that reduces what it receives. */
static void mark_stage(struct coll_comm *c, int peer, int lane, int *n)
{
    struct coll_stream *s = coll_x_stream(c, peer, lane, 1);
    if (s->stage < 0)
        s->stage = (*n)++;
}

/* Staging slots go to the incoming streams that reduce: the ring's direction 0 from the left
 * neighbour, direction 1 from the right one, and lane 0 of every peer of the mesh or of
 * halving-doubling. */
int coll_stage_alloc(struct coll_comm *c)
{
    int n = 0;
    for (int w = 0; c->nranks > 1 && w < c->wires; w++)
        for (int d = 0; d < 2; d++)
            mark_stage(c, algo_ring_neighbour(&c->ring, c->rank, c->nranks, d, 1),
                       algo_ring_lane(c->wires, d, w), &n);
    for (int p = 0; p < c->nranks; p++) /* the others run on lane 0 */
        if (coll_algos_to(c, p) & ~ALGO_BIT(ALGO_RING))
            mark_stage(c, p, 0, &n);
    c->nstage = n;
    size_t len = ((size_t)n * ALGO_SLOTS + 2) * ALGO_FRAME_MAX; /* + the mesh's own, per run */
    c->stage_mem = alloc_pages(len);
    if (!c->stage_mem || coll_mr_reg(c, c->stage_mem, len, &c->stage_mr) != 0)
        return -ENOMEM;
    return 0;
}

char *coll_x_scratch(struct algo_xport *x, int idx, size_t len, struct fab_mr **mr)
{
    struct coll_comm *c = xport_comm(x);
    if (len > c->scratch_len[idx]) {
        size_t want = len > 2 * c->scratch_len[idx] ? len : 2 * c->scratch_len[idx];
        want = (want + 4095) & ~(size_t)4095;
        release_mem(c, &c->scratch[idx], &c->scratch_mr[idx]);
        c->scratch_len[idx] = 0;
        c->scratch[idx] = alloc_pages(want);
        if (!c->scratch[idx] || coll_mr_reg(c, c->scratch[idx], want, &c->scratch_mr[idx]) != 0) {
            release_mem(c, &c->scratch[idx], &c->scratch_mr[idx]);
            return NULL;
        }
        c->scratch_len[idx] = want;
    }
    *mr = c->scratch_mr[idx];
    return c->scratch[idx] ? c->scratch[idx] : c->stage_mem; /* len 0: any valid pointer */
}

/* Signals stay with the application's threads. */
int coll_thread_start(struct coll_comm *c)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&c->thread, NULL, coll_progress_main, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    c->started = rc == 0;
    return -rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Domains (device context, protection domain, completion channel, progress thread) and the
 * registration cache: NCCL registers many sub-ranges of one allocation, so a range already
 * covered by a live, page-aligned hardware registration only takes a reference on it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric/verbs/verbs.h"
#include "fabric/verbs/verbs_int.h"
#include "util/log.h"

#define VB_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static void dom_free(struct vb_domain *d)
{
    if (d->chan)
        d->ibv->destroy_comp_channel(d->chan);
    if (d->pd)
        d->ibv->dealloc_pd(d->pd);
    if (d->ctx)
        d->ibv->close_device(d->ctx);
    pthread_mutex_destroy(&d->mr_mu);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

static int dom_setup(struct vb_domain *d)
{
    int fl;

    d->ctx = d->ibv->open_device(d->dev->ibdev);
    if (!d->ctx)
        return -ENODEV;
    d->pd = d->ibv->alloc_pd(d->ctx);
    d->chan = d->pd ? d->ibv->create_comp_channel(d->ctx) : NULL;
    if (!d->chan)
        return -ENOMEM;
    fl = fcntl(d->chan->fd, F_GETFL);
    if (fl < 0 || fcntl(d->chan->fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    return vb_thread_start(d);
}

int fab_verbs_domain_open(int dev, struct vb_domain **out)
{
    struct vb_domain *d;
    int rc;

    if (!vb_dev_get(dev))
        return -EINVAL;
    d = calloc(1, sizeof(*d));
    if (!d)
        return -ENOMEM;
    d->fab.ops = &fab_verbs_ops;
    d->dev = vb_dev_get(dev);
    d->ibv = vb_ibv_get(NULL);
    d->epfd = d->wakefd = -1;
    d->next_id = 1;
    pthread_mutex_init(&d->mr_mu, NULL);
    pthread_mutex_init(&d->mu, NULL);
    rc = d->ibv ? dom_setup(d) : -ENODEV;
    if (rc != 0) {
        JWARN("verbs fabric: opening %s failed: %s", d->dev->info.name, strerror(-rc));
        vb_thread_stop(d);
        dom_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

void fab_verbs_domain_close(struct vb_domain *dom)
{
    if (!dom)
        return;
    vb_thread_stop(dom);
    if (dom->eps)
        JWARN("verbs fabric: %s closed with endpoints still open", dom->dev->info.name);
    while (dom->mrs) {
        struct vb_mr_ent *e = dom->mrs;

        JWARN("verbs fabric: %s closed with %p+%zu still registered", dom->dev->info.name,
              (void *)e->base, e->len);
        dom->mrs = e->next;
        dom->ibv->dereg_mr(e->mr);
        free(e);
    }
    dom_free(dom);
}

/* A live entry covering [b, e), or a new registration of exactly that range. */
static struct vb_mr_ent *mr_ent_get(struct vb_domain *dom, char *b, char *e)
{
    struct vb_mr_ent *m;

    for (m = dom->mrs; m; m = m->next) {
        if (m->base <= b && e <= m->base + m->len) {
            m->refs++;
            return m;
        }
    }
    m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->mr = dom->ibv->reg_mr(dom->pd, b, (size_t)(e - b), VB_ACCESS);
    if (!m->mr) {
        JWARN("verbs fabric: ibv_reg_mr(%p, %zu) on %s failed: %s", (void *)b, (size_t)(e - b),
              dom->dev->info.name, strerror(errno));
        free(m);
        return NULL;
    }
    m->base = b;
    m->len = (size_t)(e - b);
    m->refs = 1;
    m->next = dom->mrs;
    dom->mrs = m;
    return m;
}

int fab_verbs_mr_reg(struct vb_domain *dom, void *addr, size_t len, struct vb_mr **out)
{
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct vb_mr *mr = calloc(1, sizeof(*mr));

    if (!mr)
        return -ENOMEM;
    mr->fab.ops = dom->fab.ops;
    mr->dom = dom;
    mr->addr = addr;
    mr->len = len;
    if (len > 0) {
        char *b = (char *)((uintptr_t)addr & ~(pg - 1));
        char *e = (char *)(((uintptr_t)addr + len + pg - 1) & ~(pg - 1));

        pthread_mutex_lock(&dom->mr_mu);
        mr->ent = mr_ent_get(dom, b, e);
        pthread_mutex_unlock(&dom->mr_mu);
        if (!mr->ent) {
            free(mr);
            return -ENOMEM;
        }
        mr->lkey = mr->ent->mr->lkey;
        mr->rkey = mr->ent->mr->rkey;
    }
    *out = mr;
    return 0;
}

void fab_verbs_mr_dereg(struct vb_mr *mr)
{
    struct vb_domain *dom;

    if (!mr)
        return;
    dom = mr->dom;
    if (mr->ent) {
        pthread_mutex_lock(&dom->mr_mu);
        if (--mr->ent->refs == 0) {
            struct vb_mr_ent **pp = &dom->mrs;

            while (*pp != mr->ent)
                pp = &(*pp)->next;
            *pp = mr->ent->next;
            dom->ibv->dereg_mr(mr->ent->mr);
            free(mr->ent);
        }
        pthread_mutex_unlock(&dom->mr_mu);
    }
    free(mr);
}

/* The NIC checks an incoming WRITE against the registrations of the target QP's protection
 * domain, and the PD is the fabric domain: that is the scope verbs can enforce. A registration
 * of another domain is never advertised (its key would name nothing the peer may reach). */
struct fab_remote_buf fab_verbs_mr_remote(struct vb_mr *mr, struct vb_ep *ep, void *addr)
{
    struct fab_remote_buf rb = {(uint64_t)(uintptr_t)addr, 0};

    if (mr && ep && mr->dom == ep->dom)
        rb.rkey = mr->rkey;

    return rb;
}

int vb_mr_check(struct vb_domain *dom, const struct vb_mr *mr, const void *buf, size_t len)
{
    const char *b = buf;

    if (len == 0)
        return 0;
    if (!mr || mr->dom != dom || !b || b < mr->addr || len > mr->len ||
        (size_t)(b - mr->addr) > mr->len - len)
        return -EINVAL;
    return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* A CollNet comm over several devices: on a cluster with an RDMA port per cable (a triangle, a
 * ring), a rank's connections to its neighbours leave by different devices, and a connection of
 * queue pairs lives in its device's domain (its protection domain). So the comm keeps a domain
 * per device it uses, and every registration it makes (control, staging, scratch, NCCL's
 * buffers) in each of them; the algorithms pass around the registration of the first domain, and
 * a post on a connection of another domain uses the same buffer's registration there
 * (coll_mr_in). A back end whose lanes are sockets (tcp) needs none of it: its endpoints work
 * with any of its domains, so such a comm stays in one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/coll.h"
#include "core/state.h"
#include "util/log.h"

static void reg_drop(struct coll_comm *c, struct coll_reg *r)
{
    for (int d = 0; d < c->ndoms; d++)
        if (r->mr[d])
            r->mr[d]->ops->mr_dereg(r->mr[d]);
    memset(r, 0, sizeof(*r));
}

/* Registers r's buffer in domain d. */
static int reg_in(struct coll_comm *c, struct coll_reg *r, int d)
{
    struct fab_domain *dom = c->doms[d].dom;
    return dom->ops->mr_reg(dom, r->base, r->len, &r->mr[d]);
}

static struct coll_reg *reg_slot(struct coll_comm *c)
{
    for (int i = 0; i < c->nregs; i++)
        if (!c->regs[i].mr[0])
            return &c->regs[i];
    if (c->nregs == c->cap_regs) {
        int cap = c->cap_regs ? 2 * c->cap_regs : 16;
        struct coll_reg *n = realloc(c->regs, (size_t)cap * sizeof(*n));
        if (!n)
            return NULL;
        c->regs = n;
        c->cap_regs = cap;
    }
    memset(&c->regs[c->nregs], 0, sizeof(c->regs[0]));
    return &c->regs[c->nregs++];
}

int coll_mr_reg(struct coll_comm *c, void *buf, size_t len, struct fab_mr **mr0)
{
    pthread_mutex_lock(&c->reg_mu);
    struct coll_reg *r = reg_slot(c);
    int rc = r ? 0 : -ENOMEM;
    if (r) {
        r->base = buf;
        r->len = len;
    }
    for (int d = 0; rc == 0 && d < c->ndoms; d++)
        rc = reg_in(c, r, d);
    if (rc != 0 && r)
        reg_drop(c, r);
    *mr0 = rc == 0 ? r->mr[0] : NULL;
    pthread_mutex_unlock(&c->reg_mu);
    return rc;
}

void coll_mr_dereg(struct coll_comm *c, struct fab_mr *mr0)
{
    pthread_mutex_lock(&c->reg_mu);
    for (int i = 0; mr0 && i < c->nregs; i++)
        if (c->regs[i].mr[0] == mr0)
            reg_drop(c, &c->regs[i]);
    pthread_mutex_unlock(&c->reg_mu);
}

struct fab_mr *coll_mr_in(struct coll_comm *c, int d, struct fab_mr *mr0)
{
    if (d == 0 || !mr0)
        return mr0;
    struct fab_mr *mr = NULL;
    pthread_mutex_lock(&c->reg_mu);
    for (int i = 0; i < c->nregs && !mr; i++)
        if (c->regs[i].mr[0] == mr0)
            mr = c->regs[i].mr[d];
    pthread_mutex_unlock(&c->reg_mu);
    return mr;
}

/* A new domain takes every registration the comm has. */
static int dom_add(struct coll_comm *c, int dev)
{
    if (c->ndoms == COLL_DOMS_MAX) {
        JWARN("CollNet: a comm spans at most %d devices", COLL_DOMS_MAX);
        return -ENOSPC;
    }
    struct fab_domain *dom = jaccl_domain_get(dev);
    if (!dom)
        return -ENOMEM;
    int d = c->ndoms++;
    c->doms[d] = (struct coll_dom){.c = c, .dev = dev, .dom = dom, .idx = d};
    int rc = 0;
    for (int i = 0; rc == 0 && i < c->nregs; i++)
        if (c->regs[i].mr[0])
            rc = reg_in(c, &c->regs[i], d);
    return rc == 0 ? d : rc;
}

int coll_dom_of(struct coll_comm *c, int dev)
{
    if (c->ops->lanes_are_socks) /* any domain of the back end serves every device */
        return 0;
    pthread_mutex_lock(&c->reg_mu);
    int d = -1;
    for (int i = 0; i < c->ndoms && d < 0; i++)
        if (c->doms[i].dev == dev)
            d = i;
    if (d < 0)
        d = dom_add(c, dev);
    pthread_mutex_unlock(&c->reg_mu);
    return d;
}

static struct coll_comm *comm_of(struct jaccl_comm_hdr *h)
{
    return jaccl_container_of(h, struct coll_handle, hdr)->obj;
}

static int reg_nccl(struct jaccl_comm_hdr *h, void *buf, size_t len, struct fab_mr **mr)
{
    return coll_mr_reg(comm_of(h), buf, len, mr);
}

static void dereg_nccl(struct jaccl_comm_hdr *h, struct fab_mr *mr)
{
    coll_mr_dereg(comm_of(h), mr);
}

const struct jaccl_reg_ops coll_reg_ops = {.reg = reg_nccl, .dereg = dereg_nccl};

void coll_doms_free(struct coll_comm *c)
{
    for (int i = 0; i < c->nregs; i++)
        if (c->regs[i].mr[0])
            reg_drop(c, &c->regs[i]);
    free(c->regs);
    c->regs = NULL;
    c->nregs = c->cap_regs = 0;
    for (int d = 1; d < c->ndoms; d++) /* doms[0] is the comm's own: coll_comm_free puts it */
        jaccl_domain_put(c->doms[d].dev);
    c->ndoms = 1;
}

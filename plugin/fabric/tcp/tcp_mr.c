/* SPDX-License-Identifier: BSD-3-Clause */
/* Domains and memory registrations. TCP needs no pinning, but the table is what makes a bad
 * WRITE_IMM (wrong key, outside the buffer, after dereg) fail here as it would on verbs,
 * instead of silently scribbling over memory. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fabric/tcp/tcp.h"
#include "fabric/tcp/tcp_int.h"
#include "util/log.h"

#define TCP_MR_BUCKETS0 64

/* Keys: 64 bits from the kernel's random source per registration, so one advertised key says
 * nothing about any other. 0 stays free to mean "no key". */
static int tcp_key_random(uint64_t *k)
{
    ssize_t n;

    do {
        n = getrandom(k, sizeof(*k), 0);
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof(*k) ? 0 : n < 0 ? -errno : -EIO;
}

static size_t tcp_bucket(const struct tcp_domain *d, uint64_t key)
{
    return (size_t)(key & (d->nbucket - 1)); /* keys are random */
}

static struct tcp_mr *tcp_mr_find(struct tcp_domain *d, uint64_t key)
{
    struct tcp_mr *m = d->bucket[tcp_bucket(d, key)];

    while (m && m->key != key)
        m = m->next;
    return m;
}

/* A fresh key no live registration of d uses (caller holds d->mu). */
static int tcp_key_new(struct tcp_domain *d, uint64_t *k)
{
    int rc;

    do {
        rc = tcp_key_random(k);
    } while (rc == 0 && (*k == 0 || tcp_mr_find(d, *k)));
    return rc;
}

int fab_tcp_domain_open(int dev, struct tcp_domain **out)
{
    struct tcp_domain *d = calloc(1, sizeof(*d));

    if (!d)
        return -ENOMEM;
    d->bucket = calloc(TCP_MR_BUCKETS0, sizeof(*d->bucket));
    if (!d->bucket) {
        free(d);
        return -ENOMEM;
    }
    d->nbucket = TCP_MR_BUCKETS0;
    d->fab.ops = &fab_tcp_ops;
    d->dev = dev;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->idle, NULL);
    *out = d;
    return 0;
}

void fab_tcp_domain_close(struct tcp_domain *dom)
{
    if (!dom)
        return;
    if (dom->nmr)
        JWARN("TCP fabric: domain of device %d closed with %zu registration(s) left", dom->dev,
              dom->nmr);
    pthread_cond_destroy(&dom->idle);
    pthread_mutex_destroy(&dom->mu);
    free(dom->bucket);
    free(dom);
}

/* Keeps chains short as registrations pile up; a failed grow just leaves them longer. */
static void tcp_mr_grow(struct tcp_domain *d)
{
    size_t n = d->nbucket * 2;
    struct tcp_mr **b = calloc(n, sizeof(*b));

    if (!b)
        return;
    for (size_t i = 0; i < d->nbucket; i++) {
        for (struct tcp_mr *m = d->bucket[i], *next; m; m = next) {
            next = m->next;
            m->next = b[m->key & (n - 1)];
            b[m->key & (n - 1)] = m;
        }
    }
    free(d->bucket);
    d->bucket = b;
    d->nbucket = n;
}

int fab_tcp_mr_reg(struct tcp_domain *dom, void *addr, size_t len, struct tcp_mr **out)
{
    struct tcp_mr *mr = calloc(1, sizeof(*mr));
    size_t b;

    if (!mr)
        return -ENOMEM;
    if ((uintptr_t)addr + len < (uintptr_t)addr) {
        free(mr);
        return -EINVAL;
    }
    mr->fab.ops = dom->fab.ops;
    mr->dom = dom;
    mr->addr = addr;
    mr->len = len;
    pthread_mutex_lock(&dom->mu);
    int rc = tcp_key_new(dom, &mr->key);
    if (rc != 0) {
        pthread_mutex_unlock(&dom->mu);
        JWARN("TCP fabric: no random registration key on device %d: %s", dom->dev, strerror(-rc));
        free(mr);
        return rc;
    }
    if (dom->nmr >= dom->nbucket * 2)
        tcp_mr_grow(dom);
    b = tcp_bucket(dom, mr->key);
    mr->next = dom->bucket[b];
    dom->bucket[b] = mr;
    dom->nmr++;
    pthread_mutex_unlock(&dom->mu);
    *out = mr;
    return 0;
}

/* Unlinks first, so no new write can pin it, then waits for writes landing right now. */
void fab_tcp_mr_dereg(struct tcp_mr *mr)
{
    struct tcp_domain *d;
    struct tcp_mr **pp;

    if (!mr)
        return;
    d = mr->dom;
    pthread_mutex_lock(&d->mu);
    for (pp = &d->bucket[tcp_bucket(d, mr->key)]; *pp; pp = &(*pp)->next) {
        if (*pp == mr) {
            *pp = mr->next;
            d->nmr--;
            break;
        }
    }
    while (mr->busy)
        pthread_cond_wait(&d->idle, &d->mu);
    pthread_mutex_unlock(&d->mu);
    free(mr->scope);
    free(mr);
}

static int tcp_mr_scoped(const struct tcp_mr *mr, uint64_t ep_id)
{
    for (uint32_t i = 0; i < mr->nscope; i++)
        if (mr->scope[i] == ep_id)
            return 1;
    return 0;
}

/* Removes ep from mr's scope if it is there (caller holds dom->mu). */
static void tcp_mr_scope_del(struct tcp_mr *mr, uint64_t ep_id)
{
    for (uint32_t i = 0; i < mr->nscope; i++) {
        if (mr->scope[i] == ep_id) {
            mr->scope[i] = mr->scope[--mr->nscope];
            return;
        }
    }
}

/* Adds ep to mr's scope (caller holds dom->mu): 0, or -ENOMEM. */
static int tcp_mr_scope_add(struct tcp_mr *mr, uint64_t ep_id)
{
    if (tcp_mr_scoped(mr, ep_id))
        return 0;
    if (mr->nscope == mr->scope_cap) {
        uint32_t cap = mr->scope_cap ? mr->scope_cap * 2 : 2;
        uint64_t *s = realloc(mr->scope, cap * sizeof(*s));

        if (!s)
            return -ENOMEM;
        mr->scope = s;
        mr->scope_cap = cap;
    }
    mr->scope[mr->nscope++] = ep_id;
    return 0;
}

/* Out of memory, the key handed out is 0: no write can use it, so the failure shows up as a
 * remote access error on the peer's first write instead of opening the registration wider. */
struct fab_remote_buf fab_tcp_mr_remote(struct tcp_mr *mr, struct tcp_ep *ep, void *addr)
{
    struct fab_remote_buf r = {.addr = (uint64_t)(uintptr_t)addr, .rkey = 0};
    struct tcp_domain *d = mr->dom;

    pthread_mutex_lock(&d->mu);
    if (ep->dom == d && tcp_mr_scope_add(mr, ep->id) == 0)
        r.rkey = mr->key;
    pthread_mutex_unlock(&d->mu);
    if (!r.rkey)
        JWARN("TCP fabric: could not advertise a registration to peer %s", ep->base.peer);
    return r;
}

/* The endpoint is gone (its I/O thread joined): no registration is advertised on it any more,
 * so a long job that opens and closes comms over the same buffers keeps each scope as short as
 * the endpoints alive, and every pin's lookup with it. */
void fab_tcp_mr_forget_ep(struct tcp_domain *d, uint64_t ep_id)
{
    pthread_mutex_lock(&d->mu);
    for (size_t b = 0; b < d->nbucket; b++)
        for (struct tcp_mr *m = d->bucket[b]; m; m = m->next)
            tcp_mr_scope_del(m, ep_id);
    pthread_mutex_unlock(&d->mu);
}

static int tcp_range_in(const struct tcp_mr *mr, uint64_t addr, size_t len)
{
    uint64_t base = (uint64_t)(uintptr_t)mr->addr;

    return addr >= base && len <= mr->len && addr - base <= mr->len - len;
}

int fab_tcp_mr_pin(struct tcp_ep *ep, uint64_t key, uint64_t addr, size_t len, struct tcp_mr **out)
{
    struct tcp_domain *dom = ep->dom;
    struct tcp_mr *m;

    pthread_mutex_lock(&dom->mu);
    m = key ? tcp_mr_find(dom, key) : NULL;
    if (!m || !tcp_mr_scoped(m, ep->id) || !tcp_range_in(m, addr, len)) {
        pthread_mutex_unlock(&dom->mu);
        return -EACCES;
    }
    m->busy++;
    pthread_mutex_unlock(&dom->mu);
    *out = m;
    return 0;
}

void fab_tcp_mr_unpin(struct tcp_mr *mr)
{
    struct tcp_domain *d = mr->dom;

    pthread_mutex_lock(&d->mu);
    if (--mr->busy == 0)
        pthread_cond_broadcast(&d->idle);
    pthread_mutex_unlock(&d->mu);
}

int fab_tcp_mr_check_local(struct tcp_domain *dom, struct tcp_mr *mr, const void *buf, size_t len)
{
    if (!mr)
        return 0; /* unregistered local buffers are fine over TCP */
    if (mr->dom != dom || !tcp_range_in(mr, (uint64_t)(uintptr_t)buf, len))
        return -EINVAL;
    return 0;
}

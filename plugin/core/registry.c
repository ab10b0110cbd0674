/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry of live objects: a sorted array of disjoint address ranges, searched by binary
 * search under one mutex. Entries are few (a handful per comm) and every close removes its
 * own, so the array stays as small as the number of live objects. */
#include "core/registry.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/counters.h"
#include "util/log.h"

struct reg_entry {
    uintptr_t lo, hi; /* [lo, hi): hi = lo + stride * count, or lo + 1 for a single object */
    size_t stride;
    uint32_t kind;
    void *owner;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reg_entry *g_ent;
static size_t g_n, g_cap;

static void reg_lock(void)
{
    jaccl_count(JACCL_CNT_REG_LOCK, 1);
    pthread_mutex_lock(&g_lock);
}

/* Index of the first entry with lo > p. Caller holds g_lock. */
static size_t upper(uintptr_t p)
{
    size_t a = 0, b = g_n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (g_ent[m].lo <= p)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* The entry containing p, or NULL. Caller holds g_lock. */
static struct reg_entry *containing(uintptr_t p)
{
    size_t i = upper(p);
    return i > 0 && p < g_ent[i - 1].hi ? &g_ent[i - 1] : NULL;
}

static int grow(void)
{
    if (g_n < g_cap)
        return 0;
    size_t cap = g_cap ? 2 * g_cap : 64;
    struct reg_entry *e = realloc(g_ent, cap * sizeof(*e));
    if (!e)
        return -ENOMEM;
    g_ent = e;
    g_cap = cap;
    return 0;
}

int jaccl_reg_add(void *base, size_t stride, unsigned count, uint32_t kind, void *owner)
{
    uintptr_t lo = (uintptr_t)base;
    struct reg_entry e = {lo, count > 1 ? lo + stride * count : lo + 1, stride, kind, owner};
    reg_lock();
    int rc = grow();
    if (rc == 0) {
        size_t i = upper(lo);
        memmove(&g_ent[i + 1], &g_ent[i], (g_n - i) * sizeof(*g_ent));
        g_ent[i] = e;
        g_n++;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void jaccl_reg_del(const void *base)
{
    uintptr_t lo = (uintptr_t)base;
    reg_lock();
    size_t i = upper(lo);
    if (i > 0 && g_ent[i - 1].lo == lo) {
        memmove(&g_ent[i - 1], &g_ent[i], (g_n - i) * sizeof(*g_ent));
        g_n--;
    }
    pthread_mutex_unlock(&g_lock);
}

static const char *kind_name(uint32_t k)
{
    switch (k) {
    case JO_CTX:
        return "init context";
    case JO_LISTEN:
        return "listen comm";
    case JO_SEND:
        return "send comm";
    case JO_RECV:
        return "recv comm";
    case JO_COLL_LISTEN:
        return "CollNet listen comm";
    case JO_COLL:
        return "CollNet comm";
    case JO_MH:
        return "memory handle";
    case JO_P2P_REQ:
        return "p2p request";
    case JO_COLL_REQ:
        return "CollNet request";
    default:
        return "object";
    }
}

/* The lookup both find and take make; take also unregisters, under the same lock, so that of
 * two racing closes only one gets the object. */
static void *lookup(const void *p, uint32_t kinds, const char *what, void **owner, int take)
{
    uintptr_t a = (uintptr_t)p;
    reg_lock();
    struct reg_entry *e = p ? containing(a) : NULL;
    int aligned = e && (e->hi == e->lo + 1 || (a - e->lo) % e->stride == 0);
    uint32_t found = e && aligned ? e->kind : 0;
    if (found & kinds) {
        if (owner)
            *owner = e->owner;
        if (take) {
            size_t i = (size_t)(e - g_ent);
            memmove(e, e + 1, (g_n - i - 1) * sizeof(*e));
            g_n--;
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (found & kinds)
        return (void *)p;
    const char *want = kinds & (kinds - 1) ? "comm" : kind_name(kinds);
    if (!p)
        JWARN("%s: NULL %s", what, want);
    else if (found)
        JWARN("%s: %p is a jaccl %s, not a %s", what, p, kind_name(found), want);
    else
        JWARN("%s: %p is not a live jaccl %s (never created, or already closed)", what, p, want);
    return NULL;
}

void *jaccl_reg_find(const void *p, uint32_t kinds, const char *what, void **owner)
{
    return lookup(p, kinds, what, owner, 0);
}

void *jaccl_reg_take(const void *p, uint32_t kinds, const char *what, void **owner)
{
    return lookup(p, kinds, what, owner, 1);
}

void jaccl_reg_drain(const void *owner, uint32_t kind, void (*fn)(void *obj))
{
    for (;;) {
        void *obj = NULL;
        reg_lock();
        for (size_t i = 0; i < g_n && !obj; i++) {
            if (g_ent[i].kind == kind && g_ent[i].owner == owner) {
                obj = (void *)g_ent[i].lo;
                memmove(&g_ent[i], &g_ent[i + 1], (g_n - i - 1) * sizeof(*g_ent));
                g_n--;
            }
        }
        pthread_mutex_unlock(&g_lock);
        if (!obj)
            return;
        fn(obj);
    }
}

size_t jaccl_reg_count(void)
{
    reg_lock();
    size_t n = g_n;
    pthread_mutex_unlock(&g_lock);
    return n;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry of live objects. Two views of the same entries:
 *
 * - for the writers (add, del, take, drain: creating and closing objects), a sorted array of
 *   disjoint address ranges under one mutex, g_wlock, as before;
 * - for the readers (find: every entry point, the data path included), a hash index that is
 *   read without any lock (reg_index.c): NCCL's proxy threads call isend/irecv/test for every
 *   connection of every channel, and one process-wide lock there made them take turns.
 *
 * The writers keep both in step, under g_wlock; an entry is in the index from the moment add
 * returns until del (or take) has removed it, which is before the caller frees the object. */
#include "core/registry.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/reg_index.h"
#include "util/counters.h"
#include "util/log.h"

struct reg_entry {
    uintptr_t lo, hi; /* [lo, hi): hi = lo + stride * count, or lo + 1 for a single object */
    size_t stride;
    uint32_t kind;
    void *owner;
};

static pthread_mutex_t g_wlock = PTHREAD_MUTEX_INITIALIZER;
static struct reg_entry *g_ent;
static size_t g_n, g_cap;

/* Only creating and closing objects come here: the debug counter shows the data path does not. */
static void wlock(void)
{
    jaccl_count(JACCL_CNT_REG_LOCK, 1);
    pthread_mutex_lock(&g_wlock);
}

static void wunlock(void)
{
    pthread_mutex_unlock(&g_wlock);
}

/* Index of the first entry with lo > p. Caller holds g_wlock. */
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

static struct reg_span span_of(const struct reg_entry *e)
{
    return (struct reg_span){e->lo, e->hi, e->stride, e->kind, e->owner};
}

/* Removes entry i from both views. Caller holds g_wlock. */
static void remove_at(size_t i)
{
    reg_index_del(&(struct reg_span){g_ent[i].lo, g_ent[i].hi, 0, 0, NULL});
    memmove(&g_ent[i], &g_ent[i + 1], (g_n - i - 1) * sizeof(*g_ent));
    g_n--;
}

int jaccl_reg_add(void *base, size_t stride, unsigned count, uint32_t kind, void *owner)
{
    uintptr_t lo = (uintptr_t)base;
    struct reg_entry e = {lo, count > 1 ? lo + stride * count : lo + 1, stride, kind, owner};
    wlock();
    int rc = grow();
    if (rc == 0)
        rc = reg_index_add(&(struct reg_span){e.lo, e.hi, e.stride, e.kind, e.owner});
    if (rc == 0) {
        size_t i = upper(lo);
        memmove(&g_ent[i + 1], &g_ent[i], (g_n - i) * sizeof(*g_ent));
        g_ent[i] = e;
        g_n++;
    }
    wunlock();
    return rc;
}

void jaccl_reg_del(const void *base)
{
    uintptr_t lo = (uintptr_t)base;
    wlock();
    size_t i = upper(lo);
    if (i > 0 && g_ent[i - 1].lo == lo)
        remove_at(i - 1);
    wunlock();
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
    case JO_TUNER:
        return "tuner context";
    default:
        return "object";
    }
}

/* The kind of the live object at exactly p (an element's start, for arrays), or 0. */
static uint32_t kind_at(const struct reg_span *s, uintptr_t p)
{
    int aligned = s->hi == s->lo + 1 || (p - s->lo) % s->stride == 0;
    return aligned ? s->kind : 0;
}

static void *refuse(const void *p, uint32_t kinds, uint32_t found, const char *what)
{
    const char *want = kinds & (kinds - 1) ? "comm" : kind_name(kinds);
    if (!p)
        JWARN("%s: NULL %s", what, want);
    else if (found)
        JWARN("%s: %p is a jaccl %s, not a %s", what, p, kind_name(found), want);
    else
        JWARN("%s: %p is not a live jaccl %s (never created, or already closed)", what, p, want);
    return NULL;
}

/* No lock: the index is read as it stands. NCCL never calls on an object concurrently with its
 * close, so an object found here stays live until this call returns. */
void *jaccl_reg_find(const void *p, uint32_t kinds, const char *what, void **owner)
{
    struct reg_span s;
    uint32_t found = p && reg_index_find((uintptr_t)p, &s) ? kind_at(&s, (uintptr_t)p) : 0;
    if (!(found & kinds))
        return refuse(p, kinds, found, what);
    if (owner)
        *owner = s.owner;
    return (void *)p;
}

/* Found and unregistered under the writers' lock, so that of two racing closes only one gets
 * the object. */
void *jaccl_reg_take(const void *p, uint32_t kinds, const char *what, void **owner)
{
    uintptr_t a = (uintptr_t)p;
    uint32_t found = 0;
    wlock();
    size_t i = p ? upper(a) : 0;
    if (i > 0 && a < g_ent[i - 1].hi) {
        struct reg_span s = span_of(&g_ent[i - 1]);
        found = kind_at(&s, a);
        if (found & kinds) {
            if (owner)
                *owner = s.owner;
            remove_at(i - 1);
        }
    }
    wunlock();
    return found & kinds ? (void *)p : refuse(p, kinds, found, what);
}

void jaccl_reg_drain(const void *owner, uint32_t kind, void (*fn)(void *obj))
{
    for (;;) {
        void *obj = NULL;
        wlock();
        for (size_t i = 0; i < g_n && !obj; i++) {
            if (g_ent[i].kind == kind && g_ent[i].owner == owner) {
                obj = (void *)g_ent[i].lo;
                remove_at(i);
            }
        }
        wunlock();
        if (!obj)
            return;
        fn(obj);
    }
}

size_t jaccl_reg_count(void)
{
    wlock();
    size_t n = g_n;
    wunlock();
    return n;
}

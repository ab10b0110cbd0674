/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry's lock-free index for readers (see reg_index.h).
 *
 * Memory order: every store to a bucket or node is a release, every load an acquire. A writer
 * makes a bucket's number odd before it changes the chain and even again after; so a reader
 * that saw any of the changes (or a later reuse of a node it walked) also sees the number
 * moved when it looks again, and goes round. No fences: ThreadSanitizer checks these. */
#include "core/reg_index.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#define IDX_SHIFT       12 /* log2 of the buckets: a few per live object at most */
#define IDX_GRAIN_SHIFT 12 /* arrays are indexed by 4 KiB granule */
#define IDX_BLOCK       128
/* Looks that found a writer in the middle before the reader yields: a writer preempted with
 * the number odd (ranks outnumber cores here) must get the CPU back to finish. */
#define IDX_SPINS 64

struct idx_node {
    _Atomic uintptr_t lo, hi;
    _Atomic size_t stride;
    _Atomic uint32_t kind;
    _Atomic(void *) owner;
    _Atomic(struct idx_node *) next; /* the bucket's chain, or the free list */
};

struct idx_bucket {
    _Atomic unsigned seq; /* odd while a writer changes the chain */
    _Atomic(struct idx_node *) head;
};

/* Blocks of nodes, never freed: a reader may still be walking a node that was removed. */
struct idx_block {
    struct idx_block *next;
    struct idx_node n[IDX_BLOCK];
};

static struct idx_bucket g_bucket[1u << IDX_SHIFT];
static struct idx_block *g_blocks; /* writers */
static struct idx_node *g_free;    /* writers */
static size_t g_nfree;             /* writers */
static _Atomic size_t g_nodes;     /* nodes made: no chain is longer */

#define LD(p)    atomic_load_explicit(p, memory_order_acquire)
#define ST(p, v) atomic_store_explicit(p, v, memory_order_release)

static struct idx_bucket *bucket_of(uintptr_t key, int ranged)
{
    uint64_t h = ((uint64_t)key * 2 + (unsigned)ranged) * 0x9e3779b97f4a7c15ull;
    return &g_bucket[h >> (64 - IDX_SHIFT)];
}

static int is_range(uintptr_t lo, uintptr_t hi)
{
    return hi != lo + 1;
}

/* ---- writers ---- */

/* At least n nodes on the free list: 0, or -ENOMEM. */
static int reserve(size_t n)
{
    while (g_nfree < n) {
        struct idx_block *b = calloc(1, sizeof(*b));
        if (!b)
            return -ENOMEM;
        b->next = g_blocks;
        g_blocks = b;
        for (int i = 0; i < IDX_BLOCK; i++) {
            ST(&b->n[i].next, g_free);
            g_free = &b->n[i];
        }
        g_nfree += IDX_BLOCK;
        atomic_fetch_add_explicit(&g_nodes, IDX_BLOCK, memory_order_relaxed);
    }
    return 0;
}

static void change_begin(struct idx_bucket *b)
{
    ST(&b->seq, LD(&b->seq) + 1);
}

static void change_end(struct idx_bucket *b)
{
    ST(&b->seq, LD(&b->seq) + 1);
}

/* A node from the free list (reserved), filled with s, at the head of b's chain. */
static void link(struct idx_bucket *b, const struct reg_span *s)
{
    struct idx_node *n = g_free;
    g_free = LD(&n->next);
    g_nfree--;
    change_begin(b);
    ST(&n->lo, s->lo);
    ST(&n->hi, s->hi);
    ST(&n->stride, s->stride);
    ST(&n->kind, s->kind);
    ST(&n->owner, s->owner);
    ST(&n->next, LD(&b->head));
    ST(&b->head, n);
    change_end(b);
}

/* Takes one node of [lo, hi) out of b's chain onto the free list. */
static void unlink_one(struct idx_bucket *b, uintptr_t lo, uintptr_t hi)
{
    _Atomic(struct idx_node *) *at = &b->head;
    for (struct idx_node *n = LD(at); n; at = &n->next, n = LD(at)) {
        if (LD(&n->lo) != lo || LD(&n->hi) != hi)
            continue;
        change_begin(b);
        ST(at, LD(&n->next));
        change_end(b);
        ST(&n->next, g_free); /* after the bucket's number moved: see the top of the file */
        g_free = n;
        g_nfree++;
        return;
    }
}

int reg_index_add(const struct reg_span *s)
{
    if (!is_range(s->lo, s->hi)) {
        if (reserve(1) != 0)
            return -ENOMEM;
        link(bucket_of(s->lo, 0), s);
        return 0;
    }
    uintptr_t g0 = s->lo >> IDX_GRAIN_SHIFT, g1 = (s->hi - 1) >> IDX_GRAIN_SHIFT;
    if (reserve(g1 - g0 + 1) != 0)
        return -ENOMEM;
    for (uintptr_t g = g0; g <= g1; g++)
        link(bucket_of(g, 1), s);
    return 0;
}

void reg_index_del(const struct reg_span *s)
{
    if (!is_range(s->lo, s->hi)) {
        unlink_one(bucket_of(s->lo, 0), s->lo, s->hi);
        return;
    }
    for (uintptr_t g = s->lo >> IDX_GRAIN_SHIFT; g <= (s->hi - 1) >> IDX_GRAIN_SHIFT; g++)
        unlink_one(bucket_of(g, 1), s->lo, s->hi);
}

/* ---- readers ---- */

/* 1 and *out if node n is the entry holding p (a single object: starting at p). */
static int holds(struct idx_node *n, uintptr_t p, int ranged, struct reg_span *out)
{
    uintptr_t lo = LD(&n->lo), hi = LD(&n->hi);
    if (is_range(lo, hi) != ranged || p < lo || p >= hi)
        return 0;
    *out = (struct reg_span){lo, hi, LD(&n->stride), LD(&n->kind), LD(&n->owner)};
    return 1;
}

/* One look at b: 1 found, 0 not there, -1 a writer changed it meanwhile (look again). */
static int look(struct idx_bucket *b, uintptr_t p, int ranged, struct reg_span *out)
{
    unsigned s1 = LD(&b->seq);
    if (s1 & 1)
        return -1;
    size_t left = atomic_load_explicit(&g_nodes, memory_order_relaxed) + 1;
    int found = 0;
    for (struct idx_node *n = LD(&b->head); n && !found; n = LD(&n->next)) {
        if (left-- == 0)
            return -1; /* longer than any chain: it walked into nodes being moved */
        found = holds(n, p, ranged, out);
    }
    return atomic_load_explicit(&b->seq, memory_order_relaxed) == s1 ? found : -1;
}

int reg_index_find(uintptr_t p, struct reg_span *out)
{
    for (int ranged = 0; ranged < 2; ranged++) {
        struct idx_bucket *b = bucket_of(ranged ? p >> IDX_GRAIN_SHIFT : p, ranged);
        int r;
        for (unsigned tries = 1; (r = look(b, p, ranged, out)) < 0; tries++)
            if (tries % IDX_SPINS == 0)
                sched_yield();
        if (r)
            return 1;
    }
    return 0;
}

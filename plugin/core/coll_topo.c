/* SPDX-License-Identifier: BSD-3-Clause */
/* The physical topology of a CollNet group, from its handles alone (core/coll.h): who is
 * cabled to whom, the ring that follows the cables, and the algorithms the cables carry.
 * Every rank computes it from the same handle bytes, so every rank finds the same. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/coll.h"
#include "core/route.h"

#define SEARCH_STEPS (1 << 20) /* the ring search gives up here and uses rank order */

/* Cables between ranks a and b: the pairs of their links on one subnet (both hosts the same:
 * their loopback too). Symmetric: computed from the lower rank's side. */
static int count_cables(const struct jaccl_handle *hs, int a, int b)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;
    struct jaccl_cable out[JACCL_CABLES_MAX];
    return jaccl_cables_match(hs[lo].links, NULL, hs[lo].nlinks, hs[hi].links, hs[hi].nlinks,
                              hs[lo].host == hs[hi].host, -1, out, JACCL_CABLES_MAX);
}

struct search {
    const struct coll_topo *t;
    int16_t path[ALGO_MAX_RANKS];
    uint8_t used[ALGO_MAX_RANKS];
    long steps;
};

/* Depth-first, lower ranks first: on a switched network the first cycle tried is rank order. */
static int extend(struct search *s, int depth)
{
    const struct coll_topo *t = s->t;
    int last = s->path[depth - 1];
    if (depth == t->nranks)
        return coll_topo_joined(t, last, s->path[0]);
    for (int r = 0; r < t->nranks; r++) {
        if (s->used[r] || !coll_topo_joined(t, last, r) || ++s->steps > SEARCH_STEPS)
            continue;
        s->used[r] = 1;
        s->path[depth] = (int16_t)r;
        if (extend(s, depth + 1))
            return 1;
        s->used[r] = 0;
    }
    return 0;
}

/* A cycle through every rank over cables, or rank order where there is none. */
static void find_ring(struct coll_topo *t)
{
    struct search *s = calloc(1, sizeof(*s));
    int16_t order[ALGO_MAX_RANKS];
    for (int r = 0; r < t->nranks; r++)
        order[r] = (int16_t)r;
    t->ring_cabled = t->nranks <= 2;
    if (s && t->nranks > 2) {
        s->t = t;
        s->used[0] = 1;
        t->ring_cabled = extend(s, 1);
        if (t->ring_cabled)
            memcpy(order, s->path, sizeof(order[0]) * (size_t)t->nranks);
    }
    free(s);
    algo_ring_order_set(&t->ring, order, t->nranks);
}

/* A subnet every rank has a link on: a switch (or one host) joins them all. */
static int one_subnet(const struct jaccl_handle *hs, int nranks)
{
    for (int k = 0; k < hs[0].nlinks; k++) {
        int all = 1;
        for (int r = 1; r < nranks && all; r++) {
            all = 0;
            for (int j = 0; j < hs[r].nlinks && !all; j++)
                all = jaccl_links_join(&hs[0].links[k], &hs[r].links[j], hs[0].host == hs[r].host);
        }
        if (all)
            return 1;
    }
    return 0;
}

static int hosts(const struct jaccl_handle *hs, int nranks)
{
    int n = 0;
    for (int r = 0; r < nranks; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = hs[q].host == hs[r].host;
        n += !seen;
    }
    return n;
}

static void describe(struct coll_topo *t, const struct jaccl_handle *hs)
{
    int all = 1, n = t->nranks, nh = hosts(hs, n);
    for (int a = 0; a < n && all; a++)
        for (int b = a + 1; b < n && all; b++)
            all = coll_topo_joined(t, a, b);
    if (nh == 1)
        snprintf(t->what, sizeof(t->what), "one host");
    else if (nh == 2 && all)
        snprintf(t->what, sizeof(t->what), "2 hosts, %d cable(s) between them",
                 coll_topo_ring_cables(t));
    else if (one_subnet(hs, n))
        snprintf(t->what, sizeof(t->what), "switched: one subnet reaches all %d hosts", nh);
    else if (all)
        snprintf(t->what, sizeof(t->what), "%d hosts fully cabled: mesh", nh);
    else if (t->ring_cabled)
        snprintf(t->what, sizeof(t->what), "ring of %d over cables", n);
    else
        snprintf(t->what, sizeof(t->what),
                 "%d hosts, no cycle through the cables: the ring relays where none joins "
                 "neighbours",
                 nh);
}

int coll_topo_build(struct coll_topo *t, const struct jaccl_handle *hs, int nranks)
{
    memset(t, 0, sizeof(*t));
    t->nranks = nranks;
    t->cables = calloc((size_t)nranks * (size_t)nranks, 1);
    if (!t->cables)
        return -ENOMEM;
    for (int a = 0; a < nranks; a++)
        for (int b = a + 1; b < nranks; b++)
            t->cables[a * nranks + b] = t->cables[b * nranks + a] = (uint8_t)count_cables(hs, a, b);
    find_ring(t);
    describe(t, hs);
    return 0;
}

void coll_topo_free(struct coll_topo *t)
{
    free(t->cables);
    t->cables = NULL;
}

int coll_topo_joined(const struct coll_topo *t, int a, int b)
{
    return a == b || t->cables[a * t->nranks + b] > 0;
}

int coll_topo_ring_cables(const struct coll_topo *t)
{
    int most = 1;
    for (int p = 0; p < t->nranks && t->nranks > 1; p++) {
        int a = t->ring.rank_at[p], b = t->ring.rank_at[(p + 1) % t->nranks];
        int k = a == b ? 1 : t->cables[a * t->nranks + b];
        most = k > most ? k : most;
    }
    return most;
}

int coll_topo_missing(const struct coll_topo *t, enum algo_id a, int *x, int *y)
{
    const struct algo_ops *ops = algo_ops_of(a);
    for (int i = 0; i < t->nranks; i++)
        for (int j = i + 1; j < t->nranks; j++)
            if (ops->talks(&t->ring, t->nranks, i, j) && !coll_topo_joined(t, i, j)) {
                *x = i;
                *y = j;
                return 1;
            }
    return 0;
}

unsigned coll_topo_carries(const struct coll_topo *t)
{
    unsigned ok = ALGO_BIT(ALGO_RING); /* through relays where it must */
    int x, y;
    for (int a = 0; a < ALGO_NUM_IDS; a++)
        if (a != ALGO_RING && !coll_topo_missing(t, (enum algo_id)a, &x, &y))
            ok |= ALGO_BIT(a);
    return ok;
}

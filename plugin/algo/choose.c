/* SPDX-License-Identifier: BSD-3-Clause */
/* Which algorithm runs an operation, and the operation's signature. Both are pure functions of
 * the call's parameters and the communicator's settings, so every rank decides the same. */
#include <string.h>

#include "algo/algo.h"

/* The one list of algorithms, by id. */
static const struct algo_ops *const g_algos[ALGO_NUM_IDS] = {
        [ALGO_RING] = &algo_ring_ops,
        [ALGO_MESH] = &algo_mesh_ops,
        [ALGO_RHD] = &algo_rhd_ops,
        [ALGO_LOCAL] = &algo_local_ops,
};

const struct algo_ops *algo_ops_of(enum algo_id a)
{
    return (unsigned)a < ALGO_NUM_IDS ? g_algos[a] : &algo_local_ops;
}

const char *algo_name(enum algo_id a)
{
    return (unsigned)a < ALGO_NUM_IDS ? g_algos[a]->name : "?";
}

int algo_by_name(const char *name)
{
    for (int a = 0; a < ALGO_NUM_IDS; a++)
        if (strcmp(g_algos[a]->name, name) == 0)
            return a;
    return ALGO_AUTO;
}

const char *algo_kind_name(enum algo_kind k)
{
    return k == ALGO_ALLREDUCE       ? "allreduce"
           : k == ALGO_REDUCESCATTER ? "reducescatter"
                                     : "allgather";
}

/* One rank: a copy. A forced algorithm where it fits and the group can run it (its
 * connections, without relays, exist), else the ring. Auto: the algorithm that wants the
 * operation most (each says how much: the mesh for small messages in small groups,
 * halving-doubling for mid sizes in power-of-two groups, the ring for the rest), among those
 * the group can run. */
static enum algo_id pick(const struct algo_geom *g, const struct algo_choice *ch)
{
    if (g->nranks == 1)
        return ALGO_LOCAL;
    if (ch->force != ALGO_AUTO) {
        const struct algo_ops *a = algo_ops_of((enum algo_id)ch->force);
        int ok = a->fits(g->nranks) && (ch->usable & ALGO_BIT(ch->force));
        return ok ? (enum algo_id)ch->force : ALGO_RING;
    }
    enum algo_id best = ALGO_RING;
    int best_rank = 0;
    for (int i = 0; i < ALGO_NUM_IDS; i++) {
        int r = ch->usable & ALGO_BIT(i) ? g_algos[i]->auto_rank(g, ch) : 0;
        if (r > best_rank) {
            best = (enum algo_id)i;
            best_rank = r;
        }
    }
    return best;
}

unsigned algo_wanted(int nranks, const struct algo_choice *ch)
{
    unsigned want = ALGO_BIT(ALGO_RING);
    if (ch->force != ALGO_AUTO) {
        const struct algo_ops *a = algo_ops_of((enum algo_id)ch->force);
        return want | (a->fits(nranks) ? ALGO_BIT(ch->force) : 0);
    }
    for (int i = 0; i < ALGO_NUM_IDS; i++) {
        const struct algo_ops *a = g_algos[i];
        if (a->auto_may(nranks, ch) && (!a->all_pairs || nranks <= ch->mesh_max_ranks))
            want |= ALGO_BIT(i);
    }
    return want;
}

void algo_choose(struct algo_op *op, const struct algo_choice *ch)
{
    struct algo_geom *g = &op->g;
    g->order = ch->ring;
    op->algo = pick(g, ch);
    const struct algo_ops *a = algo_ops_of(op->algo);
    if (a->shape)
        a->shape(g, ch);
    op->sig = algo_op_sig(op);
}

static uint32_t mix(uint32_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        h = (h ^ (uint32_t)(v & 0xff)) * 16777619u;
    return h;
}

/* Everything the ranks must agree on, nothing rank-specific. */
uint32_t algo_op_sig(const struct algo_op *op)
{
    const struct algo_geom *g = &op->g;
    uint32_t h = 2166136261u;
    h = mix(h, (uint64_t)g->kind | (uint64_t)op->algo << 8 | (uint64_t)op->dtype << 16 |
                       (uint64_t)op->redop << 24 | (uint64_t)g->nranks << 32);
    h = mix(h, g->count);
    h = mix(h, g->bpr);
    h = mix(h, g->wo);
    h = mix(h, g->wb);
    h = mix(h, (uint64_t)g->ndirs | (uint64_t)g->nwires << 8 | (uint64_t)g->frame << 16);
    return h;
}

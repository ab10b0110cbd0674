/* SPDX-License-Identifier: BSD-3-Clause */
/* Which algorithm runs an operation, and the operation's signature. Both are pure functions of
 * the call's parameters and the communicator's settings, so every rank decides the same. */
#include "algo/algo.h"

const char *algo_name(enum algo_id a)
{
    static const char *const names[ALGO_NUM_IDS] = {
            [ALGO_LOCAL] = "local", [ALGO_RING] = "ring", [ALGO_MESH] = "mesh", [ALGO_RHD] = "rhd"};
    return (unsigned)a < ALGO_NUM_IDS ? names[a] : "?";
}

const char *algo_kind_name(enum algo_kind k)
{
    return k == ALGO_ALLREDUCE       ? "allreduce"
           : k == ALGO_REDUCESCATTER ? "reducescatter"
                                     : "allgather";
}

/* Recursive halving-doubling for mid sizes in power-of-two groups of 4 or more (2 log2 n steps
 * instead of the ring's 2 (n - 1), the same bytes; like the mesh, it needs every pair
 * connected); the mesh for small messages in small groups
 * (one exchange step, lowest latency); the ring for the rest (each rank talks to two neighbours
 * only, on every wire in both directions). */
static enum algo_id pick(const struct algo_geom *g, const struct algo_choice *ch)
{
    size_t total = algo_total(g);
    if (g->nranks == 1)
        return ALGO_LOCAL;
    if (!ch->mesh_connected || ch->force == ALGO_RING)
        return ALGO_RING;
    if (ch->force == ALGO_MESH)
        return ALGO_MESH;
    if (ch->force == ALGO_RHD)
        return algo_pow2(g->nranks) ? ALGO_RHD : ALGO_RING;
    int rhd = g->nranks >= 4 && algo_pow2(g->nranks) && total <= ch->rhd_max_bytes;
    if (rhd && total > ch->rhd_min_bytes)
        return ALGO_RHD;
    if (total <= ch->mesh_max_bytes && g->nranks <= ch->mesh_max_ranks)
        return ALGO_MESH;
    return rhd ? ALGO_RHD : ALGO_RING;
}

void algo_choose(struct algo_op *op, const struct algo_choice *ch)
{
    struct algo_geom *g = &op->g;
    op->algo = pick(g, ch);
    if (op->algo == ALGO_RING)
        algo_geom_ring_shape(g, ch->wires);
    else if (op->algo == ALGO_MESH)
        algo_geom_mesh_shape(g);
    else if (op->algo == ALGO_RHD)
        algo_geom_rhd_shape(g);
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

const struct algo_ops *algo_ops_of(enum algo_id a)
{
    static const struct algo_ops *const ops[ALGO_NUM_IDS] = {[ALGO_LOCAL] = &algo_local_ops,
                                                             [ALGO_RING] = &algo_ring_ops,
                                                             [ALGO_MESH] = &algo_mesh_ops,
                                                             [ALGO_RHD] = &algo_rhd_ops};
    return (unsigned)a < ALGO_NUM_IDS ? ops[a] : &algo_local_ops;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Which algorithm runs an operation, and the operation's signature. Both are pure functions of
 * the call's parameters and the communicator's settings, so every rank decides the same. */
#include "algo/algo.h"

const char *algo_name(enum algo_id a)
{
    return a == ALGO_RING ? "ring" : a == ALGO_MESH ? "mesh" : "local";
}

const char *algo_kind_name(enum algo_kind k)
{
    return k == ALGO_ALLREDUCE       ? "allreduce"
           : k == ALGO_REDUCESCATTER ? "reducescatter"
                                     : "allgather";
}

/* Mesh for small messages in small groups (one exchange step, lowest latency), ring for the
 * rest (bandwidth-optimal, each rank talks to two neighbours only). */
void algo_choose(struct algo_op *op, const struct algo_choice *ch)
{
    struct algo_geom *g = &op->g;
    if (g->nranks == 1) {
        op->algo = ALGO_LOCAL;
    } else if (!ch->mesh_connected || ch->force == ALGO_RING) {
        op->algo = ALGO_RING;
    } else if (ch->force == ALGO_MESH) {
        op->algo = ALGO_MESH;
    } else {
        int small = algo_total(g) <= ch->mesh_max_bytes && g->nranks <= ch->mesh_max_ranks;
        op->algo = small ? ALGO_MESH : ALGO_RING;
    }
    if (op->algo == ALGO_RING)
        algo_geom_ring_shape(g, ch->wires);
    else if (op->algo == ALGO_MESH)
        algo_geom_mesh_shape(g);
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
    return a == ALGO_RING ? &algo_ring_ops : a == ALGO_MESH ? &algo_mesh_ops : &algo_local_ops;
}

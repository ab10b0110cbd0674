/* SPDX-License-Identifier: BSD-3-Clause */
/* Which algorithm runs an operation, and the operation's signature. Both are pure functions of
 * the call's parameters and the communicator's settings, so every rank decides the same. */
#include "algo/algo.h"

const char *jc_algo_name(enum jc_algo a)
{
    return a == JC_ALGO_RING ? "ring" : a == JC_ALGO_MESH ? "mesh" : "local";
}

const char *jc_kind_name(enum jc_kind k)
{
    return k == JC_ALLREDUCE ? "allreduce" : k == JC_REDUCESCATTER ? "reducescatter" : "allgather";
}

/* Mesh for small messages in small groups (one exchange step, lowest latency), ring for the
 * rest (bandwidth-optimal, each rank talks to two neighbours only). */
void jc_algo_choose(struct jc_op *op, const struct jc_choice *ch)
{
    struct jc_geom *g = &op->g;
    if (g->nranks == 1) {
        op->algo = JC_ALGO_LOCAL;
    } else if (!ch->mesh_connected || ch->force == JC_ALGO_RING) {
        op->algo = JC_ALGO_RING;
    } else if (ch->force == JC_ALGO_MESH) {
        op->algo = JC_ALGO_MESH;
    } else {
        int small = jc_total(g) <= ch->mesh_max_bytes && g->nranks <= ch->mesh_max_ranks;
        op->algo = small ? JC_ALGO_MESH : JC_ALGO_RING;
    }
    if (op->algo == JC_ALGO_RING)
        jc_geom_ring_shape(g, ch->wires);
    else if (op->algo == JC_ALGO_MESH)
        jc_geom_mesh_shape(g);
    op->sig = jc_op_sig(op);
}

static uint32_t mix(uint32_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        h = (h ^ (uint32_t)(v & 0xff)) * 16777619u;
    return h;
}

/* Everything the ranks must agree on, nothing rank-specific. */
uint32_t jc_op_sig(const struct jc_op *op)
{
    const struct jc_geom *g = &op->g;
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

const struct jc_algo_ops *jc_algo_ops_of(enum jc_algo a)
{
    return a == JC_ALGO_RING ? &jc_ring_ops : a == JC_ALGO_MESH ? &jc_mesh_ops : &jc_local_ops;
}

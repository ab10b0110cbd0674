/* SPDX-License-Identifier: BSD-3-Clause */
/* CollNet correctness through ncclCollNetPlugin_v11: all-reduce, reduce-scatter and all-gather
 * on 2..8 ranks, ring, mesh and recursive halving-doubling (6 ranks: its ring fallback), 1..4
 * wires, every type and reduction, counts around every edge (0, 1, fewer than ranks, not divisible
 * by ranks or wires, multi-frame, not a frame multiple), out of place and in place, each checked
 * bit for bit against a rank-order reference, with guard bytes around every buffer and the input
 * checked unchanged. */
#include "coll_harness.h"

struct scenario {
    const char *name; /* the algorithm and the rank count */
    int nranks, wires;
    const char *algo;
    int full; /* every type x reduction, or a lighter sweep */
};

static const int all_types[] = {ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
                                ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
                                ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
#define NTYPES (int)(sizeof(all_types) / sizeof(all_types[0]))

/* Counts around the edges that matter for P ranks and W wires. */
static int edge_counts(int P, int W, size_t *out)
{
    size_t c[] = {0,
                  1,
                  2,
                  (size_t)P - 1,
                  (size_t)P,
                  (size_t)P + 1,
                  (size_t)(2 * P * W) - 1,
                  (size_t)(2 * P * W) + 1,
                  1000,
                  4097,
                  16411,
                  70001};
    memcpy(out, c, sizeof(c));
    return (int)(sizeof(c) / sizeof(c[0]));
}

static int run_types_ops(struct cn *n, int kind, size_t count, uint64_t *seed)
{
    int ok = 1;
    for (int t = 0; t < NTYPES; t++)
        for (int op = 0; op < 4; op++) {
            if (kind == 2 && op > 0)
                continue; /* all-gather has no reduction */
            struct cn_case k = {kind, all_types[t], op, count, 0, SIZE_MAX, 0, (*seed)++};
            ok &= cn_run(n, k);
        }
    return ok;
}

static int run_counts(struct cn *n, int kind, const struct scenario *s, uint64_t *seed)
{
    static const int types[] = {ncclFloat32, ncclBfloat16, ncclInt8, ncclFloat64};
    size_t counts[16];
    int nc = edge_counts(s->nranks, s->wires, counts), ok = 1;
    /* Chunks large enough for both directions and several wires (the ring splits only chunks
     * of 512 KiB and more), with parts that are not a multiple of the 512 KiB frame. */
    size_t per_chunk[] = {70003 * 2, 270013};
    for (int i = 0; i < 2; i++) {
        size_t c = per_chunk[i] * (kind == 0 ? (size_t)s->nranks : 1);
        struct cn_case k = {kind, ncclFloat32, ncclSum, c, 0, SIZE_MAX, i, (*seed)++};
        ok &= cn_run(n, k);
    }
    for (int i = 0; i < nc; i++)
        for (int in_place = 0; in_place < 2; in_place++) {
            int type = types[(i + in_place) % 4];
            struct cn_case k = {kind, type, i % 4, counts[i], 0, SIZE_MAX, in_place, (*seed)++};
            ok &= cn_run(n, k);
        }
    return ok;
}

static int rank_main(int rank, int nranks, void *arg)
{
    const struct scenario *s = arg;
    cn_config(s->algo, s->wires);
    struct cn n;
    if (cn_open_group(&n, 11, rank, nranks) != 0)
        return 1;
    uint64_t seed = 1;
    int ok = 1;
    for (int kind = 0; kind < 3 && ok; kind++) {
        if (s->full)
            ok &= run_types_ops(&n, kind, 1031, &seed);
        ok &= run_counts(&n, kind, s, &seed);
    }
    if (rank == 0)
        mp_note("%llu collectives checked", (unsigned long long)seed - 1);
    cn_close_group(&n);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    static const struct scenario sc[] = {
            {"ring-2", 2, 1, "ring", 1}, {"mesh-2", 2, 4, "mesh", 1}, {"ring-3", 3, 2, "ring", 1},
            {"mesh-3", 3, 1, "mesh", 0}, {"ring-4", 4, 4, "ring", 0}, {"mesh-4", 4, 2, "mesh", 1},
            {"ring-5", 5, 3, "ring", 0}, {"mesh-5", 5, 2, "mesh", 0}, {"ring-7", 7, 2, "ring", 0},
            {"mesh-7", 7, 1, "mesh", 0}, {"ring-8", 8, 1, "ring", 1}, {"mesh-8", 8, 2, "mesh", 0},
            {"auto-2", 2, 2, "auto", 0}, {"auto-6", 6, 2, "auto", 0}, {"rhd-4", 4, 1, "rhd", 1},
            {"rhd-8", 8, 2, "rhd", 0},   {"rhd-6", 6, 1, "rhd", 0},   {"auto-4", 4, 2, "auto", 0},
    };
    int failed = 0;
    mp_begin("coll_basic", "CollNet results against a rank-order reference", argc, argv);
    for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
        char what[96];
        snprintf(what, sizeof(what), "%s, %d wire(s)%s", sc[i].algo, sc[i].wires,
                 sc[i].full ? ", every type and reduction" : "");
        failed += mp_run(sc[i].name, what, sc[i].nranks, mp_scaled(240), rank_main, (void *)&sc[i]);
    }
    return mp_end(failed);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL's window semantics for iallgather / ireducescatter (CollNet v8 and later): a call covers
 * [windowOffset, windowOffset + windowBytes) of the nranks * bytesPerRank buffer; the rank
 * buffer holds window ∩ own segment. Windows that start or end inside segments, cover one
 * segment or part of one, are empty, a single element, or sweep the buffer in fixed steps the
 * way NCCL splits a large collective; in place and out of place; through the v11 and v12
 * tables and through the v8 table (int count, 32-bit SGE). Also all-reduce through v8. */
#include "coll_harness.h"

struct scenario {
    const char *name; /* the algorithm, the rank count, the table */
    int nranks, wires, version;
    const char *algo;
};

/* Windows (in elements) over P segments of n elements; returns how many. */
static int windows(int P, size_t n, size_t (*w)[2])
{
    size_t total = (size_t)P * n;
    int k = 0;
    w[k][0] = 0, w[k++][1] = total;                     /* everything */
    w[k][0] = n / 2, w[k++][1] = total - n / 2 - n / 3; /* inside first .. last */
    w[k][0] = n + 1, w[k++][1] = n / 2;                 /* part of one segment */
    w[k][0] = 2 % (size_t)P * n, w[k++][1] = n;         /* exactly one segment */
    w[k][0] = n, w[k++][1] = 0;                         /* empty */
    w[k][0] = total - 1, w[k++][1] = 1;                 /* the last element */
    w[k][0] = n - 1, w[k++][1] = n + 2;                 /* straddles two boundaries */
    w[k][0] = (size_t)(P - 1) * n / 2, w[k++][1] = total - (P - 1) * n / 2; /* to the end */
    for (int i = 0; i < k; i++) { /* keep every window inside the buffer */
        w[i][0] = w[i][0] < total ? w[i][0] : total;
        w[i][1] = w[i][1] < total - w[i][0] ? w[i][1] : total - w[i][0];
    }
    return k;
}

static int run_windows(struct cn *n, int kind, size_t count, uint64_t *seed)
{
    static const int types[] = {ncclFloat32, ncclInt64,    ncclFloat16, ncclFloat8e4m3,
                                ncclUint8,   ncclBfloat16, ncclInt32,   ncclFloat64};
    size_t w[16][2];
    int nw = windows(n->nranks, count, w), ok = 1;
    for (int i = 0; i < nw; i++)
        for (int in_place = 0; in_place < 2; in_place++) {
            struct cn_case k = {kind,
                                types[(i + in_place) % 8],
                                (i + 2 * in_place) % 4,
                                count,
                                w[i][0],
                                w[i][1],
                                in_place,
                                (*seed)++};
            ok &= cn_run(n, k);
        }
    return ok;
}

/* NCCL splits one large collective into calls over consecutive windows of a fixed size. */
static int run_sweep(struct cn *n, int kind, size_t count, size_t step, uint64_t *seed)
{
    size_t total = count * (size_t)n->nranks;
    int ok = 1;
    for (size_t off = 0; off < total; off += step) {
        size_t len = total - off < step ? total - off : step;
        struct cn_case k = {kind, ncclFloat32, ncclSum, count, off, len, 0, (*seed)++};
        ok &= cn_run(n, k);
    }
    return ok;
}

static int rank_main(int rank, int nranks, void *arg)
{
    const struct scenario *s = arg;
    cn_config(s->algo, s->wires);
    struct cn n;
    if (cn_open_group(&n, s->version, rank, nranks) != 0)
        return 1;
    uint64_t seed = 1;
    int ok = 1;
    static const size_t counts[] = {1, 3, 1000, 40000};
    for (int kind = 1; kind <= 2; kind++) {
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
            ok &= run_windows(&n, kind, counts[c], &seed);
        ok &= run_sweep(&n, kind, 30011, 16384, &seed);
    }
    if (s->version == 8) { /* the int-count all-reduce of v8 */
        struct cn_case k = {0, ncclFloat32, ncclSum, 100003, 0, SIZE_MAX, 0, seed++};
        ok &= cn_run(&n, k);
    }
    if (rank == 0)
        mp_note("%llu collectives checked", (unsigned long long)seed - 1);
    cn_close_group(&n);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    static const struct scenario sc[] = {
            {"ring-2-v11", 2, 2, 11, "ring"},
            {"ring-3-v11", 3, 1, 11, "ring"},
            {"ring-5-v11", 5, 2, 11, "ring"},
            {"ring-4-v11", 4, 4, 11, "ring"},
            {"mesh-2-v11", 2, 1, 11, "mesh"},
            {"mesh-3-v11", 3, 2, 11, "mesh"},
            {"mesh-7-v11", 7, 1, 11, "mesh"},
            {"ring-4-v8", 4, 2, 8, "ring"},
            {"mesh-3-v8", 3, 2, 8, "mesh"},
            {"auto-8-v8", 8, 2, 8, "auto"},
            {"rhd-4-v11", 4, 1, 11, "rhd"},
            {"rhd-8-v8", 8, 2, 8, "rhd"},
            /* NCCL 2.30's table: same calls as v11, so one ring and one mesh suffice */
            {"ring-3-v12", 3, 2, 12, "ring"},
            {"mesh-2-v12", 2, 1, 12, "mesh"},
    };
    int failed = 0;
    mp_begin("coll_window", "CollNet all-gather / reduce-scatter windows, v12, v11 and v8 tables",
             argc, argv);
    for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
        char what[96];
        snprintf(what, sizeof(what), "v%d, %s, %d wire(s)", sc[i].version, sc[i].algo, sc[i].wires);
        failed += mp_run(sc[i].name, what, sc[i].nranks, mp_scaled(240), rank_main, (void *)&sc[i]);
    }
    return mp_end(failed);
}

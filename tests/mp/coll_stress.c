/* SPDX-License-Identifier: BSD-3-Clause */
/* CollNet under load: many operations in flight at once (up to and past the queue, where a NULL
 * request means "retry"), tested in and out of order; ring and mesh operations back to back;
 * large multi-frame operations; random floating-point data, which must be within rounding of a
 * sequential reference and bit-identical on every rank. */
#include <math.h>

#include "coll_harness.h"

#define INFLIGHT 100
#define OVERFLOW 300

struct scenario {
    const char *name; /* the algorithm and the rank count */
    int nranks, wires;
    const char *algo;
};

/* Element count of operation i: small and medium sizes, so auto mixes mesh and ring. */
static size_t size_of(int i)
{
    static const size_t sz[] = {1, 17, 1000, 4096, 20011, 70001, 3, 256};
    return sz[i % 8];
}

/* Issues every operation before testing any; returns the number issued. */
static int issue_all(struct cn *n, struct cn_buf *s, struct cn_buf *r, void **req, int count,
                     uint64_t seed)
{
    int issued = 0;
    for (int i = 0; i < count; i++) {
        size_t c = size_of(i);
        cn_fill(ncclInt32, ncclSum, n->rank, seed + (uint64_t)i, s[i].p, 0, c);
        if (!MP_OK(cn_allreduce(n, s[i].p, r[i].p, c, ncclInt32, ncclSum, s[i].mh, r[i].mh,
                                &req[i])) ||
            !MP_CHECK(req[i] != NULL, "request %d of %d refused", i, count))
            break;
        issued++;
    }
    return issued;
}

static int check_one(struct cn *n, struct cn_buf *r, int i, uint64_t seed)
{
    size_t c = size_of(i);
    int32_t *ref = malloc(c * 4 + 4);
    cn_reference(ncclInt32, ncclSum, n->nranks, seed + (uint64_t)i, ref, 0, c);
    long d = cn_diff(r->p, ref, c, 4);
    free(ref);
    return MP_CHECK(d < 0, "in-flight allreduce %d (%zu elements): element %ld differs", i, c, d);
}

/* INFLIGHT all-reduces in flight together, completed in reverse order of issue. */
static int run_inflight(struct cn *n, uint64_t seed)
{
    struct cn_buf s[INFLIGHT], r[INFLIGHT];
    void *req[INFLIGHT];
    int ok = 1;
    for (int i = 0; i < INFLIGHT; i++)
        if (cn_buf_new(n, &s[i], size_of(i) * 4) || cn_buf_new(n, &r[i], size_of(i) * 4))
            return 0;
    int issued = issue_all(n, s, r, req, INFLIGHT, seed);
    ok &= issued == INFLIGHT;
    for (int i = issued - 1; i >= 0; i--) {
        ok &= MP_OK(cn_wait(n, req[i], mp_scaled(60)));
        ok &= check_one(n, &r[i], i, seed);
    }
    for (int i = 0; i < INFLIGHT; i++) {
        cn_buf_free(n, &s[i]);
        cn_buf_free(n, &r[i]);
    }
    return ok;
}

/* More operations than the queue holds: NULL requests are retried after the oldest finishes,
 * the way NCCL's proxy does. */
static int run_overflow(struct cn *n, uint64_t seed)
{
    static struct cn_buf s[OVERFLOW], r[OVERFLOW];
    static void *req[OVERFLOW];
    int ok = 1, head = 0, nulls = 0;
    for (int i = 0; i < OVERFLOW; i++)
        if (cn_buf_new(n, &s[i], 16) || cn_buf_new(n, &r[i], 16))
            return 0;
    for (int i = 0; i < OVERFLOW && ok; i++) {
        cn_fill(ncclInt32, ncclSum, n->rank, seed + (uint64_t)i, s[i].p, 0, 4);
        req[i] = NULL;
        while (ok && !req[i]) {
            ok &= MP_OK(cn_allreduce(n, s[i].p, r[i].p, 4, ncclInt32, ncclSum, s[i].mh, r[i].mh,
                                     &req[i]));
            if (ok && !req[i]) { /* full: finish the oldest, then retry */
                nulls++;
                ok &= MP_OK(cn_wait(n, req[head], mp_scaled(60)));
                head++;
            }
        }
    }
    for (; head < OVERFLOW && ok; head++)
        ok &= MP_OK(cn_wait(n, req[head], mp_scaled(60)));
    for (int i = 0; i < OVERFLOW; i++) {
        int32_t ref[4];
        cn_reference(ncclInt32, ncclSum, n->nranks, seed + (uint64_t)i, ref, 0, 4);
        ok &= MP_CHECK(memcmp(r[i].p, ref, 16) == 0, "overflow allreduce %d differs", i);
        cn_buf_free(n, &s[i]);
        cn_buf_free(n, &r[i]);
    }
    ok &= MP_CHECK(nulls > 0, "%d operations in flight never filled the queue", OVERFLOW);
    return ok;
}

/* Random floats: within rounding of the exact sum, and the same bits on every rank. */
static int run_random_float(struct cn *n, int type, size_t count, int flag)
{
    size_t esz = jaccl_dtype_size(type);
    struct cn_buf s, r;
    int ok = 1;
    if (cn_buf_new(n, &s, count * esz) || cn_buf_new(n, &r, count * esz))
        return 0;
    for (size_t i = 0; i < count; i++) {
        double v = (double)(cn_hash(i * 31 + (uint64_t)n->rank) % 2000001) / 1e6 - 1.0;
        if (type == ncclFloat32)
            ((float *)s.p)[i] = (float)v;
        else
            ((double *)s.p)[i] = v;
    }
    void *req = NULL;
    ok &= MP_OK(cn_allreduce(n, s.p, r.p, count, type, ncclSum, s.mh, r.mh, &req));
    ok &= req && MP_OK(cn_wait(n, req, mp_scaled(60)));
    double worst = 0;
    for (size_t i = 0; i < count; i++) {
        double exact = 0, got = type == ncclFloat32 ? ((float *)r.p)[i] : ((double *)r.p)[i];
        for (int q = 0; q < n->nranks; q++) {
            double v = (double)(cn_hash(i * 31 + (uint64_t)q) % 2000001) / 1e6 - 1.0;
            exact += type == ncclFloat32 ? (double)(float)v : v;
        }
        worst = fmax(worst, fabs(got - exact));
    }
    double tol = (type == ncclFloat32 ? 1e-6 : 1e-14) * n->nranks;
    ok &= MP_CHECK(worst <= tol, "random %s sum: error %g above %g", cn_type_name(type), worst,
                   tol);
    uint64_t h = 0;
    for (size_t i = 0; i < count * esz; i++)
        h = cn_hash(h ^ (uint8_t)r.p[i]);
    mp_flag_set(n->rank, flag, (long)h);
    mp_barrier();
    for (int q = 0; q < n->nranks; q++)
        ok &= MP_CHECK(mp_flag_get(q, flag) == (long)h, "rank %d has other bits than rank %d", q,
                       n->rank);
    cn_buf_free(n, &s);
    cn_buf_free(n, &r);
    return ok;
}

/* Large operations: many 512 KiB frames, and sizes that are not frame multiples. */
static int run_large(struct cn *n, uint64_t *seed)
{
    int ok = 1;
    struct cn_case k[] = {
            {0, ncclFloat32, ncclSum, (4u << 20) + 3, 0, SIZE_MAX, 0, (*seed)++},
            {0, ncclBfloat16, ncclMax, (3u << 20) + 1, 0, SIZE_MAX, 1, (*seed)++},
            {1, ncclFloat32, ncclSum, (1u << 20) + 7, 0, SIZE_MAX, 0, (*seed)++},
            {1, ncclInt64, ncclProd, (1u << 19) - 5, 0, SIZE_MAX, 1, (*seed)++},
            {2, ncclInt8, ncclSum, (2u << 20) + 11, 0, SIZE_MAX, 0, (*seed)++},
            {2, ncclFloat32, ncclSum, (1u << 20) - 1, 0, SIZE_MAX, 1, (*seed)++},
    };
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
        ok &= cn_run(n, k[i]);
    return ok;
}

static int rank_main(int rank, int nranks, void *arg)
{
    const struct scenario *s = arg;
    cn_config(s->algo, s->wires);
    struct cn n;
    if (cn_open_group(&n, 11, rank, nranks) != 0)
        return 1;
    uint64_t seed = 1000;
    int ok = run_inflight(&n, seed);
    ok &= run_overflow(&n, seed + 500);
    ok &= run_random_float(&n, ncclFloat32, 300007, 0);
    ok &= run_random_float(&n, ncclFloat64, 70001, 1);
    ok &= run_large(&n, &seed);
    cn_close_group(&n);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    static const struct scenario sc[] = {
            {"auto-2", 2, 2, "auto"}, {"auto-3", 3, 2, "auto"}, {"ring-4", 4, 1, "ring"},
            {"mesh-5", 5, 2, "mesh"}, {"auto-8", 8, 2, "auto"}, {"rhd-4", 4, 2, "rhd"},
            {"rhd-8", 8, 1, "rhd"},
    };
    int failed = 0;
    mp_begin("coll_stress", "CollNet: operations in flight, queue overflow, large, random data",
             argc, argv);
    for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
        char what[96];
        snprintf(what, sizeof(what), "%s, %d wire(s)", sc[i].algo, sc[i].wires);
        failed += mp_run(sc[i].name, what, sc[i].nranks, mp_scaled(240), rank_main, (void *)&sc[i]);
    }
    return mp_end(failed);
}

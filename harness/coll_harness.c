/* SPDX-License-Identifier: BSD-3-Clause */
/* CollNet test helpers: see coll_harness.h. */
#include "coll_harness.h"

/* The bit-exact conversions (jk_f32_to_*) that build floating test data. */
#include "algo/kern_impl.h"

/* A slot whose signature v11 and v12 share (every one but getProperties and makeVDevice). */
#define CN_NEW(n, slot, ...) \
    ((n)->version == 12 ? (n)->v12->slot(__VA_ARGS__) : (n)->v11->slot(__VA_ARGS__))

static void cn_pick_dev(struct cn *n, int ndev)
{
    n->dev = 0;
    for (int d = 0; d < ndev; d++) {
        ncclNetProperties_v12_t p12;
        ncclNetProperties_v11_t p11;
        ncclNetProperties_v8_t p8;
        const char *name = NULL;
        if (n->version == 12 && n->v12->getProperties(d, &p12) == ncclSuccess)
            name = p12.name;
        if (n->version == 11 && n->v11->getProperties(d, &p11) == ncclSuccess)
            name = p11.name;
        if (n->version == 8 && n->v8->getProperties(d, &p8) == ncclSuccess)
            name = p8.name;
        if (name && strcmp(name, "lo") == 0)
            n->dev = d;
    }
}

int cn_load(struct cn *n, int version)
{
    memset(n, 0, sizeof(*n));
    n->version = version;
    n->lib = dlopen("libnccl-net-jaccl.so", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        mp_note("cannot load the plugin (LD_LIBRARY_PATH?): %s", dlerror());
        return -1;
    }
    char sym[32];
    snprintf(sym, sizeof(sym), "ncclCollNetPlugin_v%d", version);
    const void *t = dlsym(n->lib, sym);
    if (!t) {
        mp_note("no symbol %s", sym);
        return -1;
    }
    if (version == 12)
        n->v12 = t;
    else if (version == 11)
        n->v11 = t;
    else
        n->v8 = t;
    ncclResult_t rc =
            version >= 11 ? CN_NEW(n, init, &n->ctx, 1, mp_logger) : n->v8->init(mp_logger);
    int ndev = 0;
    if (rc == ncclSuccess)
        rc = version >= 11 ? CN_NEW(n, devices, &ndev) : n->v8->devices(&ndev);
    if (!MP_CHECK(rc == ncclSuccess && ndev > 0, "CollNet init/devices: %s, %d devices",
                  mp_result_str(rc), ndev))
        return -1;
    cn_pick_dev(n, ndev);
    return 0;
}

ncclResult_t cn_finalize(struct cn *n)
{
    void *ctx = n->ctx;
    n->ctx = NULL;
    return n->version >= 11 && ctx ? CN_NEW(n, finalize, ctx) : ncclSuccess;
}

void cn_unload(struct cn *n)
{
    MP_OK(cn_finalize(n));
    /* No dlclose: the plugin is linked nodelete, as NCCL keeps it. */
}

ncclResult_t cn_listen(struct cn *n, void *handle, void **lc)
{
    return n->version >= 11 ? CN_NEW(n, listen, n->ctx, n->dev, handle, lc)
                            : n->v8->listen(n->dev, handle, lc);
}

ncclResult_t cn_connect(struct cn *n, void **handles, int nranks, int rank, void *lc, void **cc)
{
    return n->version >= 11 ? CN_NEW(n, connect, handles, nranks, rank, lc, cc)
                            : n->v8->connect(handles, nranks, rank, lc, cc);
}

ncclResult_t cn_close_listen(struct cn *n, void *lc)
{
    return n->version >= 11 ? CN_NEW(n, closeListen, lc) : n->v8->closeListen(lc);
}

ncclResult_t cn_close(struct cn *n, void *cc)
{
    return n->version >= 11 ? CN_NEW(n, closeColl, cc) : n->v8->closeColl(cc);
}

ncclResult_t cn_regmr(struct cn *n, void *p, size_t len, void **mh)
{
    return n->version >= 11 ? CN_NEW(n, regMr, n->cc, p, len, NCCL_PTR_HOST, mh)
                            : n->v8->regMr(n->cc, p, len, NCCL_PTR_HOST, mh);
}

ncclResult_t cn_deregmr(struct cn *n, void *mh)
{
    return n->version >= 11 ? CN_NEW(n, deregMr, n->cc, mh) : n->v8->deregMr(n->cc, mh);
}

ncclResult_t cn_test(struct cn *n, void *req, int *done, int *size)
{
    return n->version >= 11 ? CN_NEW(n, test, req, done, size) : n->v8->test(req, done, size);
}

ncclResult_t cn_allreduce(struct cn *n, void *s, void *r, size_t count, int type, int op, void *smh,
                          void *rmh, void **req)
{
    if (n->version >= 11)
        return CN_NEW(n, iallreduce, n->cc, s, r, count, (ncclDataType_t)type, (ncclRedOp_t)op, smh,
                      rmh, req);
    return n->v8->iallreduce(n->cc, s, r, (int)count, (ncclDataType_t)type, (ncclRedOp_t)op, smh,
                             rmh, req);
}

ncclResult_t cn_allgather(struct cn *n, void *s, void *r, size_t rsize, void *rmh, size_t bpr,
                          size_t wo, size_t wb, void *smh, void **req)
{
    if (n->version >= 11) {
        ncclNetSGE_v11_t part = {.mhandle = rmh, .address = r, .size = rsize};
        return CN_NEW(n, iallgather, n->cc, s, 1, &part, bpr, wo, wb, smh, req);
    }
    ncclNetSGE_v8_t part = {.mhandle = rmh, .address = r, .size = (uint32_t)rsize};
    return n->v8->iallgather(n->cc, s, 1, &part, bpr, wo, wb, smh, req);
}

ncclResult_t cn_reducescatter(struct cn *n, void *s, size_t ssize, void *smh, void *r, size_t bpr,
                              size_t wo, size_t wb, int type, int op, void *rmh, void **req)
{
    if (n->version >= 11) {
        ncclNetSGE_v11_t part = {.mhandle = smh, .address = s, .size = ssize};
        return CN_NEW(n, ireducescatter, n->cc, 1, &part, r, bpr, wo, wb, (ncclDataType_t)type,
                      (ncclRedOp_t)op, rmh, req);
    }
    ncclNetSGE_v8_t part = {.mhandle = smh, .address = s, .size = (uint32_t)ssize};
    return n->v8->ireducescatter(n->cc, 1, &part, r, bpr, wo, wb, (ncclDataType_t)type,
                                 (ncclRedOp_t)op, rmh, req);
}

/* Tests until done, pausing between tries (mp_poll_pause: the suites sleep, 8 ranks on 2 cores
 * must not spin). */
ncclResult_t cn_wait(struct cn *n, void *req, int timeout_s)
{
    double deadline = mp_now() + timeout_s;
    for (;;) {
        int done = 0;
        ncclResult_t rc = cn_test(n, req, &done, NULL);
        if (rc != ncclSuccess || done)
            return rc;
        if (mp_now() > deadline) {
            mp_note("request %p not done after %d s", req, timeout_s);
            return ncclSystemError;
        }
        mp_poll_pause(CN_POLL_SLEEP_US);
    }
}

/* Listen, exchange handles in slot 0, connect with the full array, close the listener. */
static int cn_group(struct cn *n, int rank, int nranks)
{
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *handles[MP_MAX_RANKS];
    n->rank = rank;
    n->nranks = nranks;
    if (!MP_OK(cn_listen(n, handle, &lc)))
        return -1;
    mp_publish_handle(0, handle);
    mp_barrier();
    for (int r = 0; r < nranks; r++)
        handles[r] = (void *)mp_peer_handle(r, 0);
    int ok = MP_OK(cn_connect(n, handles, nranks, rank, lc, &n->cc));
    MP_OK(cn_close_listen(n, lc));
    return ok ? 0 : -1;
}

/* The rank's CollNet configuration, set before the plugin is loaded: NCCL_JACCL_ALGO (unless
 * algo is NULL) and NCCL_JACCL_RING_WIRES (unless wires <= 0). */
void cn_config(const char *algo, int wires)
{
    char w[16];
    snprintf(w, sizeof(w), "%d", wires);
    if (wires > 0)
        setenv("NCCL_JACCL_RING_WIRES", w, 1);
    if (algo)
        setenv("NCCL_JACCL_ALGO", algo, 1);
}

int cn_open_group(struct cn *n, int version, int rank, int nranks)
{
    if (cn_load(n, version) != 0 || cn_group(n, rank, nranks) != 0)
        return -1;
    return 0;
}

void cn_close_group(struct cn *n)
{
    if (n->cc)
        MP_OK(cn_close(n, n->cc));
    n->cc = NULL;
    cn_unload(n);
}

int cn_buf_new(struct cn *n, struct cn_buf *b, size_t len)
{
    b->len = len;
    b->raw = malloc(len + 2 * CN_GUARD);
    if (!b->raw)
        return -1;
    memset(b->raw, MP_GUARD_BYTE, len + 2 * CN_GUARD);
    b->p = b->raw + CN_GUARD;
    b->mh = NULL;
    return MP_OK(cn_regmr(n, b->p, len ? len : 1, &b->mh)) ? 0 : -1;
}

int cn_buf_guards_ok(const struct cn_buf *b)
{
    return mp_guard_check(b->raw, CN_GUARD) == (size_t)-1 &&
           mp_guard_check(b->p + b->len, CN_GUARD) == (size_t)-1;
}

void cn_buf_free(struct cn *n, struct cn_buf *b)
{
    if (b->mh)
        MP_OK(cn_deregmr(n, b->mh));
    free(b->raw);
    b->raw = b->p = NULL;
}

uint64_t cn_hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static int cn_is_float(int type)
{
    return type == ncclFloat16 || type == ncclFloat32 || type == ncclFloat64 ||
           type == ncclBfloat16 || type == ncclFloat8e4m3 || type == ncclFloat8e5m2;
}

/* A value whose sums of up to 8 (|partial| <= 16, e5m2 <= 8) and products (powers of two
 * within 2^-8..2^8) are exact in every floating type. */
static float cn_value(int type, int op, uint64_t h)
{
    static const float pw[] = {1.0f, -1.0f, 2.0f, 0.5f, -1.0f, 1.0f, 1.0f, -2.0f};
    if (op == ncclProd)
        return (h >> 8) % 4 == 0 ? pw[(h >> 16) % 8] : ((h >> 20) & 1 ? 1.0f : -1.0f);
    if (op == ncclSum)
        return type == ncclFloat8e5m2 ? (float)((int)(h % 3) - 1) : (float)((int)(h % 5) - 2);
    return (float)((int)(h % 201) - 100) / 4.0f; /* max/min: order never matters */
}

static void cn_store(int type, void *dst, size_t i, float v, uint64_t h)
{
    switch (type) {
    case ncclFloat32:
        ((float *)dst)[i] = v;
        break;
    case ncclFloat64:
        ((double *)dst)[i] = v;
        break;
    case ncclFloat16:
        ((uint16_t *)dst)[i] = jk_f32_to_f16(v);
        break;
    case ncclBfloat16:
        ((uint16_t *)dst)[i] = jk_f32_to_bf16(v);
        break;
    case ncclFloat8e4m3:
        ((uint8_t *)dst)[i] = jk_f32_to_e4m3(v);
        break;
    case ncclFloat8e5m2:
        ((uint8_t *)dst)[i] = jk_f32_to_e5m2(v);
        break;
    default:
        memcpy((char *)dst + i * jaccl_dtype_size(type), &h, jaccl_dtype_size(type));
    }
}

/* Rank r's contribution for element i (absolute index in the operation's logical vector). */
void cn_fill(int type, int op, int r, uint64_t seed, void *dst, size_t first, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t h = cn_hash(seed * 1000003u + (uint64_t)r * 7919u + first + i);
        cn_store(type, dst, i, cn_is_float(type) ? cn_value(type, op, h) : 0.0f, h);
    }
}

/* Rank-order reference of elements [first, first + n): ((c0 op c1) op c2) ... */
void cn_reference(int type, int op, int nranks, uint64_t seed, void *out, size_t first, size_t n)
{
    size_t esz = jaccl_dtype_size(type);
    char *tmp = malloc(n * esz + 1);
    jaccl_reduce_fn fn = jaccl_reduce_fn_get(type, op);
    cn_fill(type, op, 0, seed, out, first, n);
    for (int r = 1; r < nranks; r++) {
        cn_fill(type, op, r, seed, tmp, first, n);
        fn(out, out, tmp, n);
    }
    free(tmp);
}

/* First differing element, or -1. */
long cn_diff(const void *a, const void *b, size_t n, size_t esz)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp((const char *)a + i * esz, (const char *)b + i * esz, esz) != 0)
            return (long)i;
    return -1;
}

const char *cn_type_name(int t)
{
    return jaccl_dtype_name((enum jaccl_dtype)t);
}

static const char *cn_op_name(int op)
{
    return jaccl_redop_name((enum jaccl_redop)op);
}

const char *cn_kind_name(int k)
{
    return k == 0 ? "allreduce" : k == 1 ? "reducescatter" : "allgather";
}

static size_t cn_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

static size_t cn_max(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* Window ∩ segment r, in elements. */
static void cn_mine(const struct cn_case *k, int r, size_t *lo, size_t *len)
{
    size_t s0 = (size_t)r * k->count, s1 = s0 + k->count;
    size_t a = cn_max(s0, k->wo), b = cn_min(s1, k->wo + k->wb);
    *lo = a;
    *len = b > a ? b - a : 0;
}

static int cn_run_allreduce(struct cn *n, const struct cn_case *k)
{
    size_t esz = jaccl_dtype_size(k->type), bytes = k->count * esz;
    struct cn_buf s, r;
    int ok = 1;
    if (cn_buf_new(n, &s, bytes) || (!k->in_place && cn_buf_new(n, &r, bytes)))
        return 0;
    struct cn_buf *out = k->in_place ? &s : &r;
    char *ref = malloc(bytes + 1), *orig = malloc(bytes + 1);
    cn_fill(k->type, k->op, n->rank, k->seed, s.p, 0, k->count);
    memcpy(orig, s.p, bytes);
    cn_reference(k->type, k->op, n->nranks, k->seed, ref, 0, k->count);
    void *req = NULL;
    ok &= MP_OK(cn_allreduce(n, s.p, out->p, k->count, k->type, k->op, s.mh, out->mh, &req));
    ok &= MP_CHECK(req != NULL, "NULL request");
    if (ok && req)
        ok &= MP_OK(cn_wait(n, req, mp_scaled(60)));
    long d = ok ? cn_diff(out->p, ref, k->count, esz) : -1;
    ok &= MP_CHECK(d < 0, "allreduce %s %s count %zu%s: element %ld differs", cn_type_name(k->type),
                   cn_op_name(k->op), k->count, k->in_place ? " in place" : "", d);
    ok &= MP_CHECK(cn_buf_guards_ok(&s) && (k->in_place || cn_buf_guards_ok(&r)),
                   "allreduce wrote outside its buffers");
    if (!k->in_place)
        ok &= MP_CHECK(memcmp(orig, s.p, bytes) == 0, "allreduce changed its input");
    free(ref);
    free(orig);
    cn_buf_free(n, &s);
    if (!k->in_place)
        cn_buf_free(n, &r);
    return ok;
}

/* The window of nranks * count elements; rank buffer = window ∩ own segment. */
static int cn_run_reducescatter(struct cn *n, const struct cn_case *k)
{
    size_t esz = jaccl_dtype_size(k->type), lo, len;
    cn_mine(k, n->rank, &lo, &len);
    struct cn_buf s, r;
    int ok = 1;
    if (cn_buf_new(n, &s, k->wb * esz) || (!k->in_place && cn_buf_new(n, &r, len * esz)))
        return 0;
    char *rp = k->in_place ? s.p + (lo - k->wo) * esz : r.p;
    void *rmh = k->in_place ? s.mh : r.mh;
    char *ref = malloc(len * esz + 1);
    cn_fill(k->type, k->op, n->rank, k->seed, s.p, k->wo, k->wb);
    cn_reference(k->type, k->op, n->nranks, k->seed, ref, lo, len);
    void *req = NULL;
    ok &= MP_OK(cn_reducescatter(n, s.p, k->wb * esz, s.mh, rp, k->count * esz, k->wo * esz,
                                 k->wb * esz, k->type, k->op, rmh, &req));
    ok &= MP_CHECK(req != NULL, "NULL request");
    if (ok && req)
        ok &= MP_OK(cn_wait(n, req, mp_scaled(60)));
    long d = ok ? cn_diff(rp, ref, len, esz) : -1;
    ok &= MP_CHECK(d < 0, "reducescatter %s %s count %zu window [%zu,+%zu)%s: element %ld differs",
                   cn_type_name(k->type), cn_op_name(k->op), k->count, k->wo, k->wb,
                   k->in_place ? " in place" : "", d);
    ok &= MP_CHECK(cn_buf_guards_ok(&s) && (k->in_place || cn_buf_guards_ok(&r)),
                   "reducescatter wrote outside its buffers");
    free(ref);
    cn_buf_free(n, &s);
    if (!k->in_place)
        cn_buf_free(n, &r);
    return ok;
}

static int cn_run_allgather(struct cn *n, const struct cn_case *k)
{
    size_t lo, len, esz = jaccl_dtype_size(k->type);
    cn_mine(k, n->rank, &lo, &len);
    struct cn_buf s, r;
    int ok = 1;
    if (cn_buf_new(n, &r, k->wb * esz) || (!k->in_place && cn_buf_new(n, &s, len * esz)))
        return 0;
    char *sp = k->in_place ? r.p + (lo - k->wo) * esz : s.p;
    void *smh = k->in_place ? r.mh : s.mh;
    char *ref = malloc(k->wb * esz + 1);
    for (int q = 0; q < n->nranks; q++) { /* rank q's bytes of the window */
        size_t qlo, qlen;
        cn_mine(k, q, &qlo, &qlen);
        cn_fill(k->type, k->op, q, k->seed, ref + (qlo - k->wo) * esz, qlo, qlen);
    }
    memcpy(sp, ref + (lo - k->wo) * esz, len * esz);
    void *req = NULL;
    ok &= MP_OK(cn_allgather(n, sp, r.p, k->wb * esz, r.mh, k->count * esz, k->wo * esz,
                             k->wb * esz, smh, &req));
    ok &= MP_CHECK(req != NULL, "NULL request");
    if (ok && req)
        ok &= MP_OK(cn_wait(n, req, mp_scaled(60)));
    long d = ok ? cn_diff(r.p, ref, k->wb, esz) : -1;
    ok &= MP_CHECK(d < 0, "allgather %s count %zu window [%zu,+%zu)%s: element %ld differs",
                   cn_type_name(k->type), k->count, k->wo, k->wb, k->in_place ? " in place" : "",
                   d);
    ok &= MP_CHECK(cn_buf_guards_ok(&r) && (k->in_place || cn_buf_guards_ok(&s)),
                   "allgather wrote outside its buffers");
    free(ref);
    cn_buf_free(n, &r);
    if (!k->in_place)
        cn_buf_free(n, &s);
    return ok;
}

/* Runs one case; a window of SIZE_MAX elements means the whole nranks * count buffer. */
int cn_run(struct cn *n, struct cn_case k)
{
    size_t total = k.count * (size_t)n->nranks;
    if (k.wb == SIZE_MAX) {
        k.wo = 0;
        k.wb = total;
    }
    if (k.kind == 0)
        return cn_run_allreduce(n, &k);
    return k.kind == 1 ? cn_run_reducescatter(n, &k) : cn_run_allgather(n, &k);
}

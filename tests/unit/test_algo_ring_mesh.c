/* SPDX-License-Identifier: BSD-3-Clause */
/* The ring and the mesh (plugin/algo) on an in-memory transport of N ranks in one process: no
 * sockets, no threads. Every rank runs two queued operations the way core/coll_sched.c does
 * (the second one posts while the first finishes), and the fake moves messages between them in
 * a seeded random order, one event at a time:
 *   grant  a receiver's posted receive becomes a credit its sender sees;
 *   take   a posted send's bytes are copied off the sender's buffer (its send completes);
 *   land   those bytes are written into the matching posted receive (it completes).
 * It delivers only what the receiver posted and credited, and each stream has ALGO_SLOTS staging
 * slots exactly as large as a frame, so an algorithm that would wait on a buffer a peer holds
 * stops moving: the run then reports a stall instead of finishing. Results must equal, bit for
 * bit, a reference that folds the ranks' inputs in rank order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "algo/algo.h"

#define MAXR   9
#define NLANES (2 * ALGO_MAX_WIRES)
#define NOPS   2 /* queued on every rank: the second overlaps the first */

/* assert_true for the fake's hot paths: cmocka's costs a call even when it holds. */
#define CHECK(c)                                                         \
    do {                                                                 \
        if (!(c))                                                        \
            fail_msg("%s:%d: %s does not hold", __FILE__, __LINE__, #c); \
    } while (0)

/* ---- the fake transport ---- */

struct fstream {                   /* messages from src to dst on one lane */
    uint32_t sent, sdone, granted; /* the sender's side */
    uint32_t posted, landed;       /* the receiver's side */
    const char *sbuf[ALGO_SEND_MAX];
    size_t slen[ALGO_SEND_MAX];
    char *rbuf[ALGO_POST_MAX];
    size_t rlen[ALGO_POST_MAX];
    char *wire[ALGO_POST_MAX]; /* taken off the sender, not landed yet (wire_cap bytes each) */
    size_t wlen[ALGO_POST_MAX], wire_cap;
    char *slot[ALGO_SLOTS];
    uint8_t busy;
};

struct world;

struct frank {
    struct algo_xport xp;
    struct world *w;
    int rank;
    char *own[2], *scratch[2];
    size_t scratch_len[2];
    /* the scheduler, as core/coll_sched.c runs it */
    struct algo_op op[NOPS];
    struct algo_run run[2];
    int cur, cur_run, cur_armed, nxt_started, nxt_armed, nxt_over;
};

struct world {
    int n, wires;
    int frozen; /* a rank that never runs (-1: none): the others must stall, not spin */
    size_t slot_bytes;
    uint64_t rng;
    struct frank r[MAXR];
    struct fstream *st[MAXR][MAXR][NLANES]; /* [src][dst][lane], made on first use */
    struct fstream *used[MAXR * MAXR * NLANES];
    int nused;
};

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static struct frank *fr_of(struct algo_xport *x)
{
    return (struct frank *)((char *)x - offsetof(struct frank, xp));
}

static struct fstream *stream(struct world *w, int src, int dst, int lane)
{
    CHECK(src >= 0 && src < w->n && dst >= 0 && dst < w->n && src != dst);
    CHECK(lane >= 0 && lane < 2 * w->wires);
    struct fstream **s = &w->st[src][dst][lane];
    if (!*s) {
        *s = calloc(1, sizeof(**s));
        assert_non_null(*s);
        (*s)->wire_cap = w->slot_bytes; /* no message is longer than a frame */
        for (int k = 0; k < ALGO_POST_MAX; k++)
            assert_non_null((*s)->wire[k] = malloc(w->slot_bytes));
        w->used[w->nused++] = *s;
    }
    return *s;
}

static struct fstream *out_of(struct algo_xport *x, int peer, int lane)
{
    struct frank *f = fr_of(x);
    return stream(f->w, f->rank, peer, lane);
}

static struct fstream *in_of(struct algo_xport *x, int peer, int lane)
{
    struct frank *f = fr_of(x);
    return stream(f->w, peer, f->rank, lane);
}

static int f_wires(const struct algo_xport *x)
{
    return ((const struct frank *)((const char *)x - offsetof(struct frank, xp)))->w->wires;
}

static int f_can_send(struct algo_xport *x, int peer, int lane)
{
    struct fstream *s = out_of(x, peer, lane);
    return (int32_t)(s->granted - s->sent) > 0 && s->sent - s->sdone < ALGO_SEND_MAX;
}

/* Sending without a credit is what verbs UC cannot survive: it fails the test at once. */
static int f_send(struct algo_xport *x, int peer, int lane, const void *buf, size_t len,
                  struct fab_mr *mr)
{
    struct fstream *s = out_of(x, peer, lane);
    CHECK(f_can_send(x, peer, lane));
    s->sbuf[s->sent % ALGO_SEND_MAX] = buf;
    s->slen[s->sent % ALGO_SEND_MAX] = len;
    s->sent++;
    return 0;
}

static int f_can_recv(struct algo_xport *x, int peer, int lane)
{
    struct fstream *s = in_of(x, peer, lane);
    return s->posted - s->landed < ALGO_POST_MAX;
}

static int f_recv(struct algo_xport *x, int peer, int lane, void *buf, size_t len,
                  struct fab_mr *mr)
{
    struct fstream *s = in_of(x, peer, lane);
    CHECK(f_can_recv(x, peer, lane));
    s->rbuf[s->posted % ALGO_POST_MAX] = buf;
    s->rlen[s->posted % ALGO_POST_MAX] = len;
    s->posted++;
    return 0;
}

static uint32_t f_sent(struct algo_xport *x, int peer, int lane)
{
    return out_of(x, peer, lane)->sent;
}

static uint32_t f_sdone(struct algo_xport *x, int peer, int lane)
{
    return out_of(x, peer, lane)->sdone;
}

static uint32_t f_posted(struct algo_xport *x, int peer, int lane)
{
    return in_of(x, peer, lane)->posted;
}

static uint32_t f_landed(struct algo_xport *x, int peer, int lane)
{
    return in_of(x, peer, lane)->landed;
}

/* Slots hold exactly one frame: anything larger is an overflow the sanitizers see. */
static char *f_slot(struct algo_xport *x, int peer, int lane, int i, struct fab_mr **mr)
{
    struct fstream *s = in_of(x, peer, lane);
    CHECK(i >= 0 && i < ALGO_SLOTS);
    if (!s->slot[i])
        assert_non_null(s->slot[i] = malloc(fr_of(x)->w->slot_bytes));
    if (mr)
        *mr = NULL;
    return s->slot[i];
}

static int f_slot_take(struct algo_xport *x, int peer, int lane)
{
    struct fstream *s = in_of(x, peer, lane);
    for (int i = 0; i < ALGO_SLOTS; i++) {
        if (!(s->busy & (1u << i))) {
            s->busy |= (uint8_t)(1u << i);
            return i;
        }
    }
    return -1;
}

static void f_slot_give(struct algo_xport *x, int peer, int lane, int i)
{
    struct fstream *s = in_of(x, peer, lane);
    CHECK(i >= 0 && i < ALGO_SLOTS && (s->busy & (1u << i)));
    s->busy &= (uint8_t) ~(1u << i);
}

static char *f_own(struct algo_xport *x, int idx)
{
    struct frank *f = fr_of(x);
    if (!f->own[idx])
        assert_non_null(f->own[idx] = malloc(f->w->slot_bytes));
    return f->own[idx];
}

static char *f_scratch(struct algo_xport *x, int idx, size_t len, struct fab_mr **mr)
{
    struct frank *f = fr_of(x);
    if (len > f->scratch_len[idx]) {
        free(f->scratch[idx]);
        assert_non_null(f->scratch[idx] = malloc(len));
        f->scratch_len[idx] = len;
    }
    *mr = NULL;
    return f->scratch[idx] ? f->scratch[idx] : (char *)f; /* len 0: any valid pointer */
}

static const struct algo_xport_ops fake_ops = {
        .wires = f_wires,
        .can_send = f_can_send,
        .send = f_send,
        .can_recv = f_can_recv,
        .recv = f_recv,
        .sent = f_sent,
        .sdone = f_sdone,
        .posted = f_posted,
        .landed = f_landed,
        .slot = f_slot,
        .slot_take = f_slot_take,
        .slot_give = f_slot_give,
        .own = f_own,
        .scratch = f_scratch,
};

/* ---- delivery: one random event on one random stream ---- */

static int can_grant(const struct fstream *s)
{
    return s->granted != s->posted;
}

static int can_take(const struct fstream *s)
{
    return s->sdone != s->sent;
}

static int can_land(const struct fstream *s)
{
    return s->landed != s->sdone;
}

static void take(struct fstream *s)
{
    uint32_t k = s->sdone;
    size_t len = s->slen[k % ALGO_SEND_MAX];
    /* Sent only against a credit: receive k exists and has not landed. */
    CHECK((int32_t)(s->posted - k) > 0);
    CHECK(len == s->rlen[k % ALGO_POST_MAX]);
    CHECK(len <= s->wire_cap);
    memcpy(s->wire[k % ALGO_POST_MAX], s->sbuf[k % ALGO_SEND_MAX], len);
    s->wlen[k % ALGO_POST_MAX] = len;
    s->sdone++;
}

static void land(struct fstream *s)
{
    uint32_t k = s->landed;
    memcpy(s->rbuf[k % ALGO_POST_MAX], s->wire[k % ALGO_POST_MAX], s->wlen[k % ALGO_POST_MAX]);
    s->landed++;
}

static int ready(const struct fstream *s)
{
    return can_grant(s) || can_take(s) || can_land(s);
}

/* A random stream that can move (a few random picks first: scanning them all is slow), or
 * NULL if none can. */
static struct fstream *pick(struct world *w)
{
    struct fstream *r[MAXR * MAXR * NLANES];
    int n = 0;
    for (int tries = 0; tries < 4 && w->nused > 0; tries++) {
        struct fstream *s = w->used[rnd(&w->rng) % (uint32_t)w->nused];
        if (ready(s))
            return s;
    }
    for (int i = 0; i < w->nused; i++)
        if (ready(w->used[i]))
            r[n++] = w->used[i];
    return n ? r[rnd(&w->rng) % (uint32_t)n] : NULL;
}

/* 0 if nothing can move. */
static int deliver_one(struct world *w)
{
    struct fstream *s = pick(w);
    if (!s)
        return 0;
    for (int tries = 0;; tries++) {
        switch (rnd(&w->rng) % 3) {
        case 0:
            if (can_grant(s)) {
                s->granted++;
                return 1;
            }
            break;
        case 1:
            if (can_take(s)) {
                take(s);
                return 1;
            }
            break;
        default:
            if (can_land(s)) {
                land(s);
                return 1;
            }
        }
    }
}

/* ---- the scheduler of one rank (core/coll_sched.c without the failure paths) ---- */

static const struct algo_ops *ops_of(const struct algo_op *op)
{
    return algo_ops_of(op->algo);
}

static struct algo_run *run_of(struct frank *f, int behind)
{
    return &f->run[f->cur_run ^ behind];
}

static void begin(struct frank *f, int behind)
{
    struct algo_run *r = run_of(f, behind);
    r->op = &f->op[f->cur + behind];
    r->idx = f->cur_run ^ behind;
    assert_int_equal(ops_of(r->op)->start(r, &f->xp), 0);
}

static void complete(struct frank *f)
{
    f->cur++;
    f->cur_armed = f->nxt_armed;
    f->cur_run ^= 1;
    int over = f->nxt_over, started = f->nxt_started;
    f->nxt_started = f->nxt_armed = f->nxt_over = 0;
    if (!started) /* the next one begins from scratch */
        f->cur_armed = -1;
    if (over)
        complete(f);
}

static int behind(struct frank *f, int *prog)
{
    if (f->cur + 1 >= NOPS || f->nxt_over)
        return 0;
    struct algo_run *cr = run_of(f, 0);
    if (!f->nxt_started) {
        if (!ops_of(cr->op)->posted_all(cr))
            return 0;
        f->nxt_started = 1;
        begin(f, 1);
        *prog = 1;
    }
    if (!f->nxt_armed) {
        if (!ops_of(cr->op)->sent_all(cr))
            return ops_of(run_of(f, 1)->op)->post(run_of(f, 1), &f->xp, prog);
        f->nxt_armed = 1;
        *prog = 1;
        assert_int_equal(ops_of(run_of(f, 1)->op)->arm(run_of(f, 1), &f->xp), 0);
    }
    int r = ops_of(run_of(f, 1)->op)->advance(run_of(f, 1), &f->xp, prog);
    if (r > 0)
        f->nxt_over = 1;
    return r < 0 ? -1 : 0;
}

/* One round of one rank; *prog set if anything happened. */
static void step(struct frank *f, int *prog)
{
    if (f->cur >= NOPS)
        return;
    if (f->cur_armed < 0) {
        begin(f, 0);
        f->cur_armed = 0;
        *prog = 1;
    }
    if (!f->cur_armed) {
        f->cur_armed = 1;
        assert_int_equal(ops_of(run_of(f, 0)->op)->arm(run_of(f, 0), &f->xp), 0);
        *prog = 1;
    }
    int r = ops_of(run_of(f, 0)->op)->advance(run_of(f, 0), &f->xp, prog);
    assert_true(r >= 0);
    if (r > 0) {
        complete(f);
        *prog = 1;
        return;
    }
    assert_int_equal(behind(f, prog), 0);
}

/* Runs every rank until all operations are done: 0, or -1 if nothing could move any more
 * (a deadlock). Ranks are stepped and messages delivered in a seeded random order. */
static int run_world(struct world *w)
{
    for (;;) {
        int done = 1, prog = 0;
        for (int i = 0; i < w->n; i++)
            done &= w->r[i].cur >= NOPS || i == w->frozen;
        if (done)
            return 0;
        int k = (int)(rnd(&w->rng) % (uint32_t)w->n);
        if (k != w->frozen)
            step(&w->r[k], &prog);
        for (int e = (int)(rnd(&w->rng) % 8); e > 0; e--)
            prog |= deliver_one(w);
        if (prog)
            continue;
        /* Nothing moved this round: every rank gets one more chance before it is a stall. */
        for (int i = 0; i < w->n; i++)
            if (i != w->frozen)
                step(&w->r[i], &prog);
        if (!prog && !deliver_one(w))
            return -1;
    }
}

static void world_init(struct world *w, int n, int wires, uint64_t seed)
{
    memset(w, 0, sizeof(*w));
    w->n = n;
    w->wires = wires;
    w->rng = seed * 0x9e3779b97f4a7c15ull + 1;
    w->frozen = -1;
    for (int i = 0; i < n; i++) {
        w->r[i].xp.ops = &fake_ops;
        w->r[i].w = w;
        w->r[i].rank = i;
        w->r[i].cur_armed = -1;
    }
}

/* check: every stream must have ended quiet (the run finished). */
static void world_free(struct world *w, int check)
{
    for (int i = 0; i < w->nused; i++) {
        struct fstream *s = w->used[i];
        if (check) {
            assert_int_equal(s->busy, 0); /* every slot given back */
            assert_int_equal(s->posted, s->landed);
            assert_int_equal(s->sent, s->sdone);
            assert_int_equal(s->sent, s->posted); /* nothing posted that was never sent */
        }
        for (int k = 0; k < ALGO_SLOTS; k++)
            free(s->slot[k]);
        for (int k = 0; k < ALGO_POST_MAX; k++)
            free(s->wire[k]);
        free(s);
    }
    for (int i = 0; i < w->n; i++)
        for (int k = 0; k < 2; k++) {
            free(w->r[i].own[k]);
            free(w->r[i].scratch[k]);
        }
}

/* ---- data and the rank-order reference ---- */

struct dt {
    enum jaccl_dtype t;
    enum jaccl_redop op;
    size_t esz;
};

static const struct dt dts[] = {
        {JD_F32, JR_SUM, 4},
        {JD_I32, JR_SUM, 4},
        {JD_F64, JR_MAX, 8},
        {JD_U8, JR_PROD, 1},
};
#define NDTS (sizeof(dts) / sizeof(dts[0]))

/* Inputs. The ring folds in ring order, so its float sums use small integers (exact in any
 * order); the mesh folds in rank order, so its float sums are fractions whose rounding
 * depends on the order: only rank order gives the reference's bits. */
static void gen(const struct dt *d, int exact, uint64_t *rng, char *p, size_t bytes)
{
    size_t n = bytes / d->esz;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = rnd(rng);
        if (d->t == JD_F32) {
            float f = exact ? (float)((int)(v % 17) - 8) : (float)((int)(v % 20001) - 10000) / 7.0f;
            memcpy(p + i * 4, &f, 4);
        } else if (d->t == JD_I32) {
            memcpy(p + i * 4, &v, 4);
        } else if (d->t == JD_F64) {
            double x = (double)(v % 100000 + 1) / 3.0 * ((v >> 20) & 1 ? 1 : -1);
            memcpy(p + i * 8, &x, 8);
        } else {
            p[i] = (char)(v | 1); /* odd: products stay interesting */
        }
    }
}

/* acc = acc OP b over n elements, written out independently of the plugin's kernels. */
static void ref_fold(const struct dt *d, char *acc, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (d->t == JD_F32) {
            float x, y;
            memcpy(&x, acc + i * 4, 4);
            memcpy(&y, b + i * 4, 4);
            x = x + y;
            memcpy(acc + i * 4, &x, 4);
        } else if (d->t == JD_I32) {
            uint32_t x, y;
            memcpy(&x, acc + i * 4, 4);
            memcpy(&y, b + i * 4, 4);
            x += y;
            memcpy(acc + i * 4, &x, 4);
        } else if (d->t == JD_F64) {
            double x, y;
            memcpy(&x, acc + i * 8, 8);
            memcpy(&y, b + i * 8, 8);
            x = y > x ? y : x;
            memcpy(acc + i * 8, &x, 8);
        } else {
            acc[i] = (char)(uint8_t)((uint8_t)acc[i] * (uint8_t)b[i]);
        }
    }
}

/* ---- one case ---- */

struct tcase {
    enum algo_id algo;
    enum algo_kind kind;
    int n, wires;
    size_t count; /* all-reduce: elements; else elements per rank */
    int shape;    /* 0: the plugin's own shape; 1: small frames, every wire, both directions */
    int win;      /* reduce-scatter / all-gather: a window inside the segments */
    int mixed;    /* the second operation runs the other algorithm on the same streams */
    int perm;     /* the ring in a shuffled order, as cables may make it (not rank order) */
    const struct dt *d;
    uint64_t seed;
};

struct opdata { /* one operation of every rank: inputs kept aside, buffers, the reference */
    char *in[MAXR], *out[MAXR], *saved[MAXR], *ref;
    size_t in_len, out_len[MAXR];
};

static void geom_of(const struct tcase *tc, int rank, struct algo_geom *g)
{
    size_t esz = tc->kind == ALGO_ALLGATHER ? 1 : tc->d->esz;
    size_t unit = tc->kind == ALGO_ALLGATHER ? tc->d->esz : 1; /* bytes for all-gather */
    if (tc->kind == ALGO_ALLREDUCE) {
        algo_geom_allreduce(g, tc->n, rank, tc->count, esz);
        return;
    }
    size_t bpr = tc->count * esz * unit, total = bpr * (size_t)tc->n, wo = 0, wb = total;
    if (tc->win && total >= 4 * esz * unit) {
        wo = esz * unit;
        wb = total - 3 * esz * unit;
    }
    algo_geom_window(g, tc->kind, tc->n, rank, esz, bpr, wo, wb);
}

static enum algo_id algo_of(const struct tcase *tc, int j)
{
    if (tc->n == 1)
        return ALGO_LOCAL;
    if (tc->algo == ALGO_RHD && !algo_pow2(tc->n))
        return ALGO_RING; /* as algo_choose: halving-doubling needs a power of two */
    if (tc->mixed && j == 1)
        return tc->algo == ALGO_RING ? ALGO_MESH : ALGO_RING;
    return tc->algo;
}

/* A ring order for n ranks, shuffled by seed (every rank of a case uses the same one). */
static const struct algo_ring_order *order_of(const struct tcase *tc)
{
    static struct algo_ring_order o;
    int16_t at[MAXR];
    uint64_t s = tc->seed * 2654435761u + 1;
    for (int i = 0; i < tc->n; i++)
        at[i] = (int16_t)i;
    for (int i = tc->n - 1; i > 0; i--) {
        int k = (int)(rnd(&s) % (uint32_t)(i + 1));
        int16_t t = at[i];
        at[i] = at[k];
        at[k] = t;
    }
    algo_ring_order_set(&o, at, tc->n);
    return &o;
}

static void shape(const struct tcase *tc, int j, struct algo_op *op)
{
    struct algo_geom *g = &op->g;
    op->algo = algo_of(tc, j);
    g->order = tc->perm ? order_of(tc) : NULL;
    if (op->algo == ALGO_RING)
        algo_geom_ring_shape(g, tc->wires);
    else if (op->algo == ALGO_MESH)
        algo_geom_mesh_shape(g);
    else if (op->algo == ALGO_RHD)
        algo_geom_rhd_shape(g);
    if (tc->shape && op->algo == ALGO_RING) {
        g->ndirs = 2;
        g->nwires = tc->wires;
    }
    if (tc->shape)
        g->frame = 8 * g->esz * (tc->kind == ALGO_ALLGATHER ? tc->d->esz : 1);
    op->sig = algo_op_sig(op);
}

/* Fills operation j of every rank; in place on odd j. */
static void op_setup(struct world *w, const struct tcase *tc, int j, struct opdata *od)
{
    uint64_t rng = tc->seed * 7919 + (uint64_t)j;
    int inplace = j & 1;
    memset(od, 0, sizeof(*od));
    for (int r = 0; r < tc->n; r++) {
        struct algo_op *op = &w->r[r].op[j];
        memset(op, 0, sizeof(*op));
        geom_of(tc, r, &op->g);
        shape(tc, j, op);
        op->dtype = tc->kind == ALGO_ALLGATHER ? -1 : (int)tc->d->t;
        op->redop = tc->kind == ALGO_ALLGATHER ? -1 : (int)tc->d->op;
        if (tc->kind != ALGO_ALLGATHER)
            assert_non_null(op->fn = jaccl_reduce_fn_get(tc->d->t, tc->d->op));
        struct algo_range mine, all = {0, algo_total(&op->g)};
        algo_chunk(&op->g, r, &mine);
        if (op->g.kind != ALGO_ALLREDUCE)
            all.lo = op->g.wo;
        struct algo_range in = op->g.kind == ALGO_ALLGATHER ? mine : all;
        struct algo_range out = op->g.kind == ALGO_REDUCESCATTER ? mine : all;
        od->in_len = in.len;
        od->out_len[r] = out.len;
        od->saved[r] = malloc(in.len + 1);
        assert_non_null(od->saved[r]);
        gen(tc->d, op->algo != ALGO_MESH, &rng, od->saved[r], in.len);
        /* In place: the rank buffer is the window buffer at the rank's chunk. */
        size_t big = in.len > out.len ? in.len : out.len;
        char *b = malloc(big + 1);
        assert_non_null(b);
        if (inplace) {
            od->in[r] = od->out[r] = b;
            op->in_place = (op->g.kind == ALGO_ALLREDUCE ? in.len : mine.len) > 0;
            char *rank_p = b + (op->g.kind == ALGO_ALLREDUCE ? 0 : mine.lo - all.lo);
            if (op->g.kind == ALGO_REDUCESCATTER)
                od->out[r] = rank_p;
            if (op->g.kind == ALGO_ALLGATHER)
                od->in[r] = rank_p;
        } else {
            od->in[r] = b;
            od->out[r] = malloc(out.len + 1);
            assert_non_null(od->out[r]);
            memset(od->out[r], 0xa5, out.len);
        }
        memcpy(od->in[r], od->saved[r], in.len);
        op->in = (struct algo_buf){.p = od->in[r], .base = in.lo, .len = in.len};
        op->out = (struct algo_buf){.p = od->out[r], .base = out.lo, .len = out.len};
    }
}

/* The expected output of rank r: the reduction in rank order, or every rank's chunk. */
static void check_rank(const struct world *w, const struct tcase *tc, int j,
                       const struct opdata *od, int r)
{
    const struct algo_op *op = &w->r[r].op[j];
    size_t len = od->out_len[r];
    char *ref = malloc(len + 1);
    assert_non_null(ref);
    if (op->g.kind == ALGO_ALLGATHER) {
        for (int c = 0; c < tc->n; c++) {
            struct algo_range ch;
            algo_chunk(&op->g, c, &ch);
            memcpy(ref + (ch.lo - op->g.wo), od->saved[c], ch.len);
        }
    } else {
        size_t off = op->out.base - op->in.base; /* where the output starts in the input */
        memcpy(ref, od->saved[0] + off, len);
        for (int k = 1; k < tc->n; k++)
            ref_fold(tc->d, ref, od->saved[k] + off, len / tc->d->esz);
    }
    if (memcmp(ref, od->out[r], len) != 0) {
        size_t b = 0;
        while (ref[b] == od->out[r][b])
            b++;
        fail_msg("%s %s, %d ranks, %d wires, count %zu, shape %d, win %d, dtype %d, seed %llu, "
                 "op %d: rank %d differs at byte %zu of %zu",
                 algo_name(op->algo), algo_kind_name(op->g.kind), tc->n, tc->wires, tc->count,
                 tc->shape, tc->win, (int)tc->d->t, (unsigned long long)tc->seed, j, r, b, len);
    }
    free(ref);
}

static void op_check_free(const struct world *w, const struct tcase *tc, int j, struct opdata *od,
                          int check)
{
    for (int r = 0; check && r < tc->n; r++)
        check_rank(w, tc, j, od, r);
    /* The promise of the mesh and of halving-doubling: every rank holds the same bits. */
    enum algo_id a = algo_of(tc, j);
    if (check && (a == ALGO_MESH || a == ALGO_RHD) && tc->kind == ALGO_ALLREDUCE)
        for (int r = 1; r < tc->n; r++)
            assert_memory_equal(od->out[0], od->out[r], od->out_len[0]);
    for (int r = 0; r < tc->n; r++) {
        int inplace = j & 1;
        const struct algo_op *op = &w->r[r].op[j];
        char *base = op->g.kind == ALGO_ALLGATHER && inplace ? od->out[r] : od->in[r];
        if (op->g.kind == ALGO_REDUCESCATTER && inplace)
            base = od->in[r];
        free(base);
        if (!inplace)
            free(od->out[r]);
        free(od->saved[r]);
    }
}

/* Runs one case with rank `frozen` never running (-1: all run): 0 if every running rank
 * finished, -1 if they stalled. Results are checked only when all ran. */
static int run_case_frozen(const struct tcase *tc, int frozen)
{
    static struct world w; /* large: not on the stack */
    struct opdata od[NOPS];
    world_init(&w, tc->n, tc->wires, tc->seed);
    w.frozen = frozen;
    for (int j = 0; j < NOPS; j++)
        op_setup(&w, tc, j, &od[j]);
    w.slot_bytes = 1;
    for (int j = 0; j < NOPS; j++)
        if (w.r[0].op[j].g.frame > w.slot_bytes)
            w.slot_bytes = w.r[0].op[j].g.frame;
    int rc = run_world(&w);
    if (rc != 0 && frozen < 0)
        fail_msg("%s %s, %d ranks, %d wires, count %zu, shape %d, seed %llu: stalled",
                 algo_name(tc->algo), algo_kind_name(tc->kind), tc->n, tc->wires, tc->count,
                 tc->shape, (unsigned long long)tc->seed);
    for (int j = 0; j < NOPS; j++)
        op_check_free(&w, tc, j, &od[j], frozen < 0);
    world_free(&w, frozen < 0);
    return rc;
}

static void run_case(const struct tcase *tc)
{
    assert_int_equal(run_case_frozen(tc, -1), 0);
}

/* Count classes for n ranks and w wires: empty, one element, fewer than ranks, divisible by
 * neither ranks nor wires, and (with small frames) many frames per part. */
static size_t count_class(int cls, int n, int wires)
{
    switch (cls) {
    case 0:
        return 0;
    case 1:
        return 1;
    case 2:
        return n > 1 ? (size_t)n - 1 : 1;
    case 3:
        return (size_t)(7 * n * 2 * wires + 1); /* 1 past a multiple of both */
    default:
        return (size_t)(29 * n * 2 * wires + 13);
    }
}
#define NCLASSES 5
#define NSEEDS   3

static void sweep(enum algo_id algo, enum algo_kind kind)
{
    unsigned runs = 0;
    for (int n = 1; n <= MAXR; n++)
        for (int wires = 1; wires <= ALGO_MAX_WIRES; wires++) {
            if (algo != ALGO_RING && wires > 2)
                continue; /* the mesh and halving-doubling use lane 0 only */
            if (algo == ALGO_RHD && !algo_pow2(n))
                continue;
            for (int cls = 0; cls < NCLASSES; cls++)
                for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
                    struct tcase tc = {.algo = algo,
                                       .kind = kind,
                                       .n = n,
                                       .wires = wires,
                                       .count = count_class(cls, n, wires),
                                       .shape = seed != 3,
                                       .win = seed == 2,
                                       .d = &dts[(seed + (uint64_t)cls) % NDTS],
                                       .seed = seed + 100 * (uint64_t)cls};
                    run_case(&tc);
                    runs++;
                    tc.perm = algo == ALGO_RING && n > 2; /* again in a cabled order */
                    if (tc.perm)
                        run_case(&tc);
                }
        }
    assert_true(runs > 0);
}

/* A larger case in the plugin's own shape: frames of ALGO_FRAME_MIN, several per part. */
static void big(enum algo_id algo, enum algo_kind kind)
{
    for (int n = 2; n <= 8; n += algo == ALGO_RHD ? 6 : 3) {
        struct tcase tc = {.algo = algo,
                           .kind = kind,
                           .n = n,
                           .wires = 2,
                           .count = (size_t)n * 3000 + 5,
                           .d = &dts[0],
                           .seed = 7};
        run_case(&tc);
    }
}

static void test_ring_allreduce(void **state)
{
    sweep(ALGO_RING, ALGO_ALLREDUCE);
    big(ALGO_RING, ALGO_ALLREDUCE);
}

static void test_ring_reducescatter(void **state)
{
    sweep(ALGO_RING, ALGO_REDUCESCATTER);
    big(ALGO_RING, ALGO_REDUCESCATTER);
}

static void test_ring_allgather(void **state)
{
    sweep(ALGO_RING, ALGO_ALLGATHER);
    big(ALGO_RING, ALGO_ALLGATHER);
}

static void test_mesh_allreduce(void **state)
{
    sweep(ALGO_MESH, ALGO_ALLREDUCE);
    big(ALGO_MESH, ALGO_ALLREDUCE);
}

static void test_mesh_reducescatter(void **state)
{
    sweep(ALGO_MESH, ALGO_REDUCESCATTER);
    big(ALGO_MESH, ALGO_REDUCESCATTER);
}

static void test_mesh_allgather(void **state)
{
    sweep(ALGO_MESH, ALGO_ALLGATHER);
    big(ALGO_MESH, ALGO_ALLGATHER);
}

static void test_rhd_allreduce(void **state)
{
    sweep(ALGO_RHD, ALGO_ALLREDUCE);
    big(ALGO_RHD, ALGO_ALLREDUCE);
}

static void test_rhd_reducescatter(void **state)
{
    sweep(ALGO_RHD, ALGO_REDUCESCATTER);
    big(ALGO_RHD, ALGO_REDUCESCATTER);
}

static void test_rhd_allgather(void **state)
{
    sweep(ALGO_RHD, ALGO_ALLGATHER);
    big(ALGO_RHD, ALGO_ALLGATHER);
}

/* The stall detector itself: with one rank never running, its peers must end up with nothing
 * to do (bounded credits and slots), and the run must say so instead of finishing or spinning. */
static void test_frozen_rank_stalls(void **state)
{
    static const enum algo_id algos[] = {ALGO_RING, ALGO_MESH, ALGO_RHD};
    for (int a = 0; a < 3; a++)
        for (int n = 2; n <= 4; n++)
            for (int frozen = 0; frozen < n; frozen++) {
                struct tcase tc = {.algo = algos[a],
                                   .kind = ALGO_ALLREDUCE,
                                   .n = n,
                                   .wires = 2,
                                   .count = count_class(4, n, 2),
                                   .shape = 1,
                                   .d = &dts[1],
                                   .seed = (uint64_t)(n * 10 + frozen)};
                assert_int_equal(run_case_frozen(&tc, frozen), -1);
            }
}

/* Ring then mesh, mesh then ring, halving-doubling then ring, on the same streams: the second
 * operation posts while the first finishes, and each counts only its own events on the shared lane
 * 0. */
static void test_mixed_algorithms(void **state)
{
    static const enum algo_id algos[] = {ALGO_RING, ALGO_MESH, ALGO_RHD};
    for (int a = 0; a < 3; a++)
        for (int kind = 0; kind < 3; kind++)
            for (int n = 2; n <= MAXR; n++)
                for (int wires = 1; wires <= ALGO_MAX_WIRES; wires += 3)
                    for (int cls = 1; cls < NCLASSES; cls++) {
                        struct tcase tc = {.algo = algos[a],
                                           .kind = (enum algo_kind)kind,
                                           .n = n,
                                           .wires = wires,
                                           .count = count_class(cls, n, wires),
                                           .shape = cls != 2,
                                           .mixed = 1,
                                           .d = &dts[(size_t)(cls + n) % NDTS],
                                           .seed = (uint64_t)(1000 + n * 10 + cls)};
                        run_case(&tc);
                    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_ring_allreduce),     cmocka_unit_test(test_ring_reducescatter),
            cmocka_unit_test(test_ring_allgather),     cmocka_unit_test(test_mesh_allreduce),
            cmocka_unit_test(test_mesh_reducescatter), cmocka_unit_test(test_mesh_allgather),
            cmocka_unit_test(test_rhd_allreduce),      cmocka_unit_test(test_rhd_reducescatter),
            cmocka_unit_test(test_rhd_allgather),      cmocka_unit_test(test_mixed_algorithms),
            cmocka_unit_test(test_frozen_rank_stalls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

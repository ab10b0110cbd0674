/* SPDX-License-Identifier: BSD-3-Clause */
/* Chunk, part and frame arithmetic for the ring and the mesh (see chunks.h). Pure functions of
 * the geometry: every rank computes the same answers from the same operation parameters. */
#include "algo/chunks.h"

static int mod(long a, int n)
{
    long m = a % n;
    return (int)(m < 0 ? m + n : m);
}

static size_t min_sz(size_t a, size_t b)
{
    return a < b ? a : b;
}

static size_t max_sz(size_t a, size_t b)
{
    return a > b ? a : b;
}

void algo_geom_allreduce(struct algo_geom *g, int nranks, int rank, size_t count, size_t esz)
{
    *g = (struct algo_geom){.kind = ALGO_ALLREDUCE,
                            .nranks = nranks,
                            .rank = rank,
                            .esz = esz,
                            .count = count,
                            .wb = count * esz,
                            .ndirs = 1,
                            .nwires = 1,
                            .frame = ALGO_FRAME_MIN};
}

void algo_geom_window(struct algo_geom *g, enum algo_kind kind, int nranks, int rank, size_t esz,
                      size_t bpr, size_t wo, size_t wb)
{
    *g = (struct algo_geom){.kind = kind,
                            .nranks = nranks,
                            .rank = rank,
                            .esz = esz,
                            .bpr = bpr,
                            .wo = wo,
                            .wb = wb,
                            .ndirs = 1,
                            .nwires = 1,
                            .frame = ALGO_FRAME_MIN};
}

size_t algo_total(const struct algo_geom *g)
{
    return g->wb;
}

size_t algo_frame_class(size_t bytes, size_t target)
{
    size_t want = bytes / (target ? target : 1), f = ALGO_FRAME_MIN;
    while (f < ALGO_FRAME_MAX && f * 2 <= want)
        f *= 2;
    return f;
}

/* ---- chunks ---- */

void algo_chunk(const struct algo_geom *g, int c, struct algo_range *out)
{
    if (g->kind == ALGO_ALLREDUCE) {
        /* Balanced: chunk sizes differ by at most one element, for any count. */
        unsigned __int128 n = g->count;
        size_t lo = (size_t)(n * (unsigned)c / (unsigned)g->nranks);
        size_t hi = (size_t)(n * (unsigned)(c + 1) / (unsigned)g->nranks);
        *out = (struct algo_range){lo * g->esz, (hi - lo) * g->esz};
        return;
    }
    size_t seg_lo = (size_t)c * g->bpr, seg_hi = seg_lo + g->bpr;
    size_t lo = max_sz(seg_lo, g->wo), hi = min_sz(seg_hi, g->wo + g->wb);
    *out = (struct algo_range){lo, hi > lo ? hi - lo : 0};
    if (out->len == 0)
        out->lo = min_sz(max_sz(seg_lo, g->wo), g->wo + g->wb);
}

size_t algo_chunk_max(const struct algo_geom *g)
{
    size_t m = 0;
    for (int c = 0; c < g->nranks; c++) {
        struct algo_range r;
        algo_chunk(g, c, &r);
        m = max_sz(m, r.len);
    }
    return m;
}

/* Part k of nparts, split on element boundaries; sizes differ by at most one element. */
void algo_part(const struct algo_geom *g, int c, int d, int w, struct algo_range *out)
{
    struct algo_range ch;
    algo_chunk(g, c, &ch);
    size_t n = ch.len / g->esz, parts = (size_t)(g->ndirs * g->nwires);
    size_t k = (size_t)(d * g->nwires + w);
    size_t lo = n * k / parts, hi = n * (k + 1) / parts;
    *out = (struct algo_range){ch.lo + lo * g->esz, (hi - lo) * g->esz};
}

size_t algo_nframes(const struct algo_geom *g, const struct algo_range *r)
{
    return (r->len + g->frame - 1) / g->frame;
}

void algo_frame(const struct algo_geom *g, const struct algo_range *r, size_t f,
                struct algo_range *out)
{
    size_t off = f * g->frame;
    out->lo = r->lo + off;
    out->len = off < r->len ? min_sz(g->frame, r->len - off) : 0;
}

/* ---- shapes ---- */

void algo_geom_ring_shape(struct algo_geom *g, int wires)
{
    size_t cb = algo_chunk_max(g);
    g->ndirs = 1;
    g->nwires = 1;
    if (cb >= 2 * (size_t)ALGO_MIN_SLICE) {
        size_t nw = cb / (2 * (size_t)ALGO_MIN_SLICE);
        g->ndirs = 2;
        g->nwires = (int)(nw < (size_t)wires ? (nw ? nw : 1) : (size_t)wires);
    }
    /* JACCL's size class: the largest frame not above the part (at most 512 KiB). */
    g->frame = algo_frame_class(cb / (size_t)(g->ndirs * g->nwires), ALGO_FRAMES_SLICE);
}

/* The smallest power-of-two frame from ALGO_FRAME_MIN that holds m bytes, at most cap. */
static size_t frame_holding(size_t m, size_t cap)
{
    size_t f = ALGO_FRAME_MIN;
    while (f < m && f < cap)
        f *= 2;
    return f;
}

void algo_geom_mesh_shape(struct algo_geom *g)
{
    /* The largest message any rank sends to any peer: the same number on every rank, so that
     * sender and receiver cut frames at the same offsets. Up to 64 KiB it goes in one frame;
     * beyond, frames are the largest class not above it (measured: fewer, larger frames beat
     * deeper pipelining over TCP, where every frame costs wake-ups on both sides). */
    size_t m = g->kind == ALGO_ALLREDUCE ? algo_total(g) : algo_chunk_max(g);
    g->frame =
            m <= 64 * 1024 ? frame_holding(m, 64 * 1024) : algo_frame_class(m, ALGO_FRAMES_SLICE);
}

/* ---- ring ---- */

int algo_ring_steps(const struct algo_geom *g)
{
    int s = g->nranks - 1;
    return g->kind == ALGO_ALLREDUCE ? 2 * s : s;
}

/* Splits the linear step t into (phase, step within phase). */
static int ring_phase(const struct algo_geom *g, int t, int *s)
{
    *s = t;
    if (g->kind == ALGO_ALLGATHER)
        return 0;
    if (g->kind == ALGO_ALLREDUCE && t >= g->nranks - 1) {
        *s = t - (g->nranks - 1);
        return 0;
    }
    return 1; /* reduce-scatter */
}

void algo_ring_order_set(struct algo_ring_order *o, const int16_t *rank_at, int n)
{
    for (int p = 0; p < n; p++) {
        o->rank_at[p] = rank_at[p];
        o->pos_of[rank_at[p]] = (int16_t)p;
    }
}

static int pos_of(const struct algo_ring_order *o, int rank)
{
    return o ? o->pos_of[rank] : rank;
}

static int rank_at(const struct algo_ring_order *o, int pos)
{
    return o ? o->rank_at[pos] : pos;
}

/* The schedule walks positions; a chunk is named by the rank standing at its position. */
int algo_ring_chunk(const struct algo_geom *g, int t, int d, int recv)
{
    int s, rs = ring_phase(g, t, &s), p = pos_of(g->order, g->rank);
    long off = (long)s + rs + recv;
    return rank_at(g->order, mod(d == 0 ? p - off : p + off, g->nranks));
}

int algo_ring_neighbour(const struct algo_ring_order *o, int rank, int nranks, int d, int recv)
{
    int right = (d == 0) != (recv != 0);
    return rank_at(o, mod(pos_of(o, rank) + (right ? 1 : -1), nranks));
}

int algo_ring_peer(const struct algo_geom *g, int d, int recv)
{
    return algo_ring_neighbour(g->order, g->rank, g->nranks, d, recv);
}

int algo_ring_reduces(const struct algo_geom *g, int t)
{
    int s;
    return ring_phase(g, t, &s);
}

int algo_ring_final(const struct algo_geom *g, int t)
{
    int s;
    return ring_phase(g, t, &s) && s == g->nranks - 2;
}

void algo_ring_part(const struct algo_geom *g, int t, int d, int w, int recv,
                    struct algo_range *out)
{
    algo_part(g, algo_ring_chunk(g, t, d, recv), d, w, out);
}

/* ---- recursive halving-doubling ---- */

int algo_pow2(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

static int log2_of(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

int algo_rhd_steps(const struct algo_geom *g)
{
    int k = log2_of(g->nranks);
    return g->kind == ALGO_ALLREDUCE ? 2 * k : k;
}

/* Chunks [c, c + m) as one range: chunks are consecutive, an empty one sits where it would be. */
static void block(const struct algo_geom *g, int c, int m, struct algo_range *out)
{
    struct algo_range a, b;
    algo_chunk(g, c, &a);
    algo_chunk(g, c + m - 1, &b);
    *out = (struct algo_range){a.lo, b.lo + b.len - a.lo};
}

int algo_rhd_step(const struct algo_geom *g, int t, int *peer, struct algo_range *send,
                  struct algo_range *recv)
{
    int k = log2_of(g->nranks), r = g->rank, reduces = g->kind != ALGO_ALLGATHER && t < k;
    /* Distance: halving n/2 .. 1 in the reduce-scatter, doubling 1 .. n/2 in the all-gather. */
    int d = reduces ? g->nranks >> (t + 1) : 1 << (g->kind == ALGO_ALLGATHER ? t : t - k);
    int p = r ^ d;
    *peer = p;
    if (reduces) { /* keep the half holding chunk r, send the half holding chunk p */
        block(g, p & ~(d - 1), d, send);
        block(g, r & ~(d - 1), d, recv);
    } else { /* send the block held, receive the partner's */
        block(g, r & ~(d - 1), d, send);
        block(g, p & ~(d - 1), d, recv);
    }
    return reduces;
}

void algo_geom_rhd_shape(struct algo_geom *g)
{
    /* A step in one frame where it fits: the longest step moves n/2 chunks (deeper pipelining
     * was slower over TCP, as for the mesh: every frame costs wake-ups on both sides;
     * docs/performance.md). */
    g->frame = frame_holding(algo_chunk_max(g) * (size_t)(g->nranks / 2), ALGO_FRAME_MAX);
}

/* ---- mesh ---- */

static void everything(const struct algo_geom *g, struct algo_range *out)
{
    *out = (struct algo_range){0, g->count * g->esz};
}

void algo_mesh_send(const struct algo_geom *g, int peer, struct algo_range *out)
{
    if (g->kind == ALGO_ALLREDUCE)
        everything(g, out);
    else
        algo_chunk(g, g->kind == ALGO_REDUCESCATTER ? peer : g->rank, out);
}

void algo_mesh_recv(const struct algo_geom *g, int peer, struct algo_range *out)
{
    if (g->kind == ALGO_ALLREDUCE)
        everything(g, out);
    else
        algo_chunk(g, g->kind == ALGO_REDUCESCATTER ? g->rank : peer, out);
}

void algo_mesh_reduced(const struct algo_geom *g, struct algo_range *out)
{
    if (g->kind == ALGO_ALLGATHER)
        *out = (struct algo_range){0, 0};
    else
        algo_mesh_recv(g, g->rank, out);
}

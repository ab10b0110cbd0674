/* SPDX-License-Identifier: BSD-3-Clause */
/* Chunk, part, frame and schedule arithmetic (plugin/algo/chunks.c), exhaustively for small
 * shapes: every byte is covered exactly once where it should be, nothing falls outside the
 * operation, sender and receiver agree on every step, and a symbolic run of the ring schedule
 * gives every rank the full reduction (reduce-scatter) and every chunk (all-gather). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "algo/chunks.h"

#define MAXP 9

static const size_t counts[] = {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 64, 100, 1000, 4097};
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

/* A geometry for (kind, P, r) over `n` elements; windows exercise partial segments. */
static void geom(struct algo_geom *g, enum algo_kind kind, int P, int r, size_t n, size_t esz,
                 int win)
{
    if (kind == ALGO_ALLREDUCE) {
        algo_geom_allreduce(g, P, r, n, esz);
        return;
    }
    size_t bpr = n * esz, total = bpr * (size_t)P;
    size_t wo = 0, wb = total;
    if (win == 1 && total > 0) { /* a window starting and ending inside segments */
        wo = (total / 3) / esz * esz;
        wb = (total / 2) / esz * esz;
    } else if (win == 2) { /* an empty window */
        wo = total / 2 / esz * esz;
        wb = 0;
    }
    algo_geom_window(g, kind, P, r, esz, bpr, wo, wb);
}

static void test_frame_class(void **state)
{
    assert_int_equal(algo_frame_class(0, 4), ALGO_FRAME_MIN);
    assert_int_equal(algo_frame_class(16384, 4), 4096);
    assert_int_equal(algo_frame_class(16383 * 4, 4), 8192);
    assert_int_equal(algo_frame_class(1u << 30, 4), ALGO_FRAME_MAX);
    for (size_t b = 1; b < (8u << 20); b = b * 3 + 1) {
        size_t f = algo_frame_class(b, 4);
        assert_true(f >= ALGO_FRAME_MIN && f <= ALGO_FRAME_MAX && (f & (f - 1)) == 0);
    }
}

/* Chunks tile the operation's range in order; all-reduce chunks are balanced. */
static void check_chunks(const struct algo_geom *g)
{
    size_t at = g->kind == ALGO_ALLREDUCE ? 0 : g->wo, mn = SIZE_MAX, mx = 0;
    for (int c = 0; c < g->nranks; c++) {
        struct algo_range r;
        algo_chunk(g, c, &r);
        if (r.len) {
            assert_int_equal(r.lo, at);
            at += r.len;
        }
        assert_int_equal(r.len % g->esz, 0);
        if (g->kind != ALGO_ALLREDUCE && r.len) {
            assert_true(r.lo >= (size_t)c * g->bpr);
            assert_true(r.lo + r.len <= (size_t)(c + 1) * g->bpr);
        }
        mn = r.len < mn ? r.len : mn;
        mx = r.len > mx ? r.len : mx;
    }
    assert_int_equal(at, (g->kind == ALGO_ALLREDUCE ? 0 : g->wo) + algo_total(g));
    if (g->kind == ALGO_ALLREDUCE)
        assert_true(mx - mn <= g->esz);
}

/* Parts tile their chunk; frames tile their part and never exceed the frame size. */
static void check_parts(const struct algo_geom *g)
{
    for (int c = 0; c < g->nranks; c++) {
        struct algo_range ch;
        algo_chunk(g, c, &ch);
        size_t at = ch.lo;
        for (int d = 0; d < g->ndirs; d++) {
            for (int w = 0; w < g->nwires; w++) {
                struct algo_range p, f;
                algo_part(g, c, d, w, &p);
                assert_int_equal(p.lo, at);
                assert_int_equal(p.len % g->esz, 0);
                at += p.len;
                size_t fat = p.lo, nf = algo_nframes(g, &p);
                for (size_t i = 0; i < nf; i++) {
                    algo_frame(g, &p, i, &f);
                    assert_int_equal(f.lo, fat);
                    assert_true(f.len > 0 && f.len <= g->frame && f.len % g->esz == 0);
                    fat += f.len;
                }
                assert_int_equal(fat, p.lo + p.len);
            }
        }
        assert_int_equal(at, ch.lo + ch.len);
    }
}

static void test_chunks_parts_frames(void **state)
{
    static const size_t eszs[] = {1, 2, 4, 8};
    for (int kind = 0; kind < 3; kind++)
        for (int P = 1; P <= MAXP; P++)
            for (size_t i = 0; i < NCOUNTS; i++)
                for (size_t e = 0; e < 4; e++)
                    for (int win = 0; win < 3; win++)
                        for (int W = 1; W <= ALGO_MAX_WIRES; W++) {
                            struct algo_geom g;
                            size_t esz = kind == ALGO_ALLGATHER ? 1 : eszs[e];
                            geom(&g, (enum algo_kind)kind, P, P - 1, counts[i], esz, win);
                            check_chunks(&g);
                            algo_geom_ring_shape(&g, W);
                            assert_true(g.nwires >= 1 && g.nwires <= W);
                            assert_true(g.frame % esz == 0);
                            check_parts(&g);
                            /* A frame size small enough to make every part multi-frame. */
                            g.ndirs = 2;
                            g.nwires = W;
                            g.frame = esz * 2;
                            check_parts(&g);
                        }
}

/* Every rank derives the same ring shape from the same call, whatever its own chunk. */
static void test_shape_rank_independent(void **state)
{
    for (int kind = 0; kind < 3; kind++)
        for (int P = 1; P <= MAXP; P++)
            for (size_t i = 0; i < NCOUNTS; i++)
                for (int win = 0; win < 3; win++) {
                    struct algo_geom g0, g;
                    geom(&g0, (enum algo_kind)kind, P, 0, counts[i] * 997, 4, win);
                    algo_geom_ring_shape(&g0, 3);
                    for (int r = 1; r < P; r++) {
                        geom(&g, (enum algo_kind)kind, P, r, counts[i] * 997, 4, win);
                        algo_geom_ring_shape(&g, 3);
                        assert_int_equal(g.frame, g0.frame);
                        assert_int_equal(g.ndirs, g0.ndirs);
                        assert_int_equal(g.nwires, g0.nwires);
                    }
                }
}

/* The ring shape splits small operations less: one direction, one wire. */
static void test_ring_shape(void **state)
{
    struct algo_geom g;
    algo_geom_allreduce(&g, 4, 0, 1000, 4);
    algo_geom_ring_shape(&g, 4);
    assert_int_equal(g.ndirs, 1);
    assert_int_equal(g.nwires, 1);
    algo_geom_allreduce(&g, 4, 0, 64u << 20, 4);
    algo_geom_ring_shape(&g, 4);
    assert_int_equal(g.ndirs, 2);
    assert_int_equal(g.nwires, 4);
    assert_int_equal(g.frame, ALGO_FRAME_MAX);
    algo_geom_ring_shape(&g, 2);
    assert_int_equal(g.nwires, 2);
}

/* Per step, what rank r sends in direction d is what its peer receives, and what r receives
 * at step t it sends again at step t+1. */
static void check_ring_matching(enum algo_kind kind, int P, size_t n)
{
    struct algo_geom g[MAXP] = {0};
    for (int r = 0; r < P; r++) {
        geom(&g[r], kind, P, r, n, kind == ALGO_ALLGATHER ? 1 : 4, 0);
        algo_geom_ring_shape(&g[r], 2);
    }
    int T = algo_ring_steps(&g[0]);
    for (int r = 0; r < P; r++)
        for (int d = 0; d < 2; d++) {
            int to = algo_ring_peer(&g[r], d, 0);
            assert_int_equal(algo_ring_peer(&g[to], d, 1), r);
            for (int t = 0; t < T; t++) {
                int c = algo_ring_chunk(&g[r], t, d, 0);
                assert_int_equal(algo_ring_chunk(&g[to], t, d, 1), c);
                if (t + 1 < T)
                    assert_int_equal(algo_ring_chunk(&g[r], t + 1, d, 0),
                                     algo_ring_chunk(&g[r], t, d, 1));
                assert_int_equal(algo_ring_final(&g[r], t),
                                 algo_ring_reduces(&g[r], t) &&
                                         (t + 1 == T || !algo_ring_reduces(&g[r], t + 1)));
            }
        }
}

/* Symbolic run: bitmasks of contributors per (rank, chunk, direction). */
static void check_ring_symbolic(enum algo_kind kind, int P)
{
    struct algo_geom g[MAXP] = {0};
    uint32_t part[MAXP][MAXP][2]; /* reduce-scatter partial held by rank r for chunk c */
    int have[MAXP][MAXP][2];      /* all-gather: rank r holds the final chunk c */
    uint32_t all = (1u << P) - 1;
    if (P == 1)
        return; /* no steps: the input is the result */
    memset(part, 0, sizeof(part));
    memset(have, 0, sizeof(have));
    for (int r = 0; r < P; r++)
        geom(&g[r], kind, P, r, 100, 4, 0);
    int T = algo_ring_steps(&g[0]);
    if (kind == ALGO_ALLGATHER)
        for (int r = 0; r < P; r++)
            have[r][r][0] = have[r][r][1] = 1;
    for (int t = 0; t < T; t++)
        for (int d = 0; d < 2; d++)
            for (int r = 0; r < P; r++) {
                int to = algo_ring_peer(&g[r], d, 0), c = algo_ring_chunk(&g[r], t, d, 0);
                if (algo_ring_reduces(&g[r], t)) {
                    uint32_t v = t == 0 ? 1u << r : part[r][c][d];
                    assert_int_equal(v & (1u << to), 0); /* nobody is counted twice */
                    part[to][c][d] = v | (1u << to);
                    if (algo_ring_final(&g[to], t)) {
                        assert_int_equal(c, to);
                        assert_int_equal(part[to][c][d], all);
                        have[to][c][d] = 1;
                    }
                } else {
                    assert_true(have[r][c][d]);
                    assert_false(have[to][c][d]);
                    have[to][c][d] = 1;
                }
            }
    for (int r = 0; r < P; r++)
        for (int c = 0; c < P; c++)
            for (int d = 0; d < 2; d++) {
                if (kind == ALGO_REDUCESCATTER)
                    assert_int_equal(have[r][c][d], c == r);
                else
                    assert_true(have[r][c][d]);
            }
}

/* Byte coverage at rank r: all-gather steps deliver every byte outside chunk r exactly once;
 * reduce-scatter steps deliver every byte of a part except the part the rank starts with. */
static void check_ring_bytes(enum algo_kind kind, int P, int r, size_t n, int win)
{
    struct algo_geom g;
    size_t esz = kind == ALGO_ALLGATHER ? 1 : 2;
    geom(&g, kind, P, r, n, esz, win);
    algo_geom_ring_shape(&g, 3);
    g.frame = 6; /* multi-frame parts, not a divisor of most lengths */
    size_t base = kind == ALGO_ALLREDUCE ? 0 : g.wo, total = algo_total(&g);
    unsigned char *rs = calloc(total + 1, 1), *ag = calloc(total + 1, 1);
    for (int t = 0; t < algo_ring_steps(&g); t++)
        for (int d = 0; d < g.ndirs; d++)
            for (int w = 0; w < g.nwires; w++) {
                struct algo_range p, f;
                algo_ring_part(&g, t, d, w, 1, &p);
                for (size_t i = 0; i < algo_nframes(&g, &p); i++) {
                    algo_frame(&g, &p, i, &f);
                    assert_true(f.lo >= base && f.lo + f.len <= base + total);
                    for (size_t b = f.lo; b < f.lo + f.len; b++)
                        (algo_ring_reduces(&g, t) ? rs : ag)[b - base]++;
                }
            }
    for (int c = 0; c < P; c++)
        for (int d = 0; d < g.ndirs; d++)
            for (int w = 0; w < g.nwires; w++) {
                struct algo_range p;
                algo_part(&g, c, d, w, &p);
                int first = algo_ring_chunk(&g, 0, d, 0);
                for (size_t b = p.lo; b < p.lo + p.len; b++) {
                    if (kind != ALGO_ALLGATHER)
                        assert_int_equal(rs[b - base], c != first);
                    if (kind != ALGO_REDUCESCATTER)
                        assert_int_equal(ag[b - base], c != r);
                }
            }
    free(rs);
    free(ag);
}

static void test_ring_schedule(void **state)
{
    for (int kind = 0; kind < 3; kind++)
        for (int P = 1; P <= MAXP; P++) {
            check_ring_symbolic((enum algo_kind)kind, P);
            for (size_t i = 0; i < NCOUNTS; i++) {
                check_ring_matching((enum algo_kind)kind, P, counts[i]);
                for (int r = 0; r < P; r++)
                    for (int win = 0; win < 3; win++)
                        check_ring_bytes((enum algo_kind)kind, P, r, counts[i], win);
            }
        }
}

/* Mesh: what r sends to p is what p expects from r; receptions tile what each rank needs. */
static void test_mesh_schedule(void **state)
{
    for (int kind = 0; kind < 3; kind++)
        for (int P = 1; P <= MAXP; P++)
            for (size_t i = 0; i < NCOUNTS; i++)
                for (int win = 0; win < 3; win++) {
                    struct algo_geom g[MAXP] = {0};
                    for (int r = 0; r < P; r++) {
                        geom(&g[r], (enum algo_kind)kind, P, r, counts[i], 4, win);
                        algo_geom_mesh_shape(&g[r]);
                    }
                    for (int r = 0; r < P; r++) {
                        size_t got = 0;
                        for (int p = 0; p < P; p++) {
                            struct algo_range s, v;
                            algo_mesh_send(&g[r], p, &s);
                            algo_mesh_recv(&g[p], r, &v);
                            assert_int_equal(s.lo, v.lo);
                            assert_int_equal(s.len, v.len);
                            algo_mesh_recv(&g[r], p, &v);
                            got += v.len;
                        }
                        struct algo_range red, own;
                        algo_mesh_reduced(&g[r], &red);
                        algo_chunk(&g[r], r, &own);
                        if (kind == ALGO_ALLREDUCE)
                            assert_int_equal(got, (size_t)P * algo_total(&g[r]));
                        else if (kind == ALGO_REDUCESCATTER)
                            assert_int_equal(got, (size_t)P * own.len);
                        else
                            assert_int_equal(got, algo_total(&g[r]));
                        assert_int_equal(red.len, kind == ALGO_ALLGATHER   ? 0
                                                  : kind == ALGO_ALLREDUCE ? algo_total(&g[r])
                                                                           : own.len);
                        assert_true(g[r].frame >= ALGO_FRAME_MIN && g[r].frame <= ALGO_FRAME_MAX);
                        assert_int_equal(g[r].frame, g[0].frame); /* same cuts everywhere */
                    }
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_frame_class),   cmocka_unit_test(test_chunks_parts_frames),
            cmocka_unit_test(test_ring_shape),    cmocka_unit_test(test_shape_rank_independent),
            cmocka_unit_test(test_ring_schedule), cmocka_unit_test(test_mesh_schedule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The tuner's model of each algorithm (plugin/algo/cost.c and each algorithm's .work): what an
 * algorithm says it sends, reduces and waits for must be what its schedule in chunks.c does,
 * counted here range by range for every kind, 2..8 ranks and sizes that do not divide evenly;
 * algo_time grows with every term and uses the cold kernel rate only above the cache size;
 * algo_predict prices the algorithm algo_choose takes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "algo/algo.h"

static const enum algo_kind kinds[] = {ALGO_ALLREDUCE, ALGO_REDUCESCATTER, ALGO_ALLGATHER};

/* The geometry the core builds, shaped for `a` (rank r). */
static void geom(struct algo_geom *g, enum algo_kind kind, int n, int r, size_t bytes, int a)
{
    size_t esz = kind == ALGO_ALLGATHER ? 1 : 4;
    if (kind == ALGO_ALLREDUCE)
        algo_geom_allreduce(g, n, r, bytes / esz, esz);
    else
        algo_geom_window(g, kind, n, r, esz, bytes / (size_t)n / esz * esz, 0,
                         bytes / (size_t)n / esz * esz * (size_t)n);
    struct algo_choice ch = {.force = a, .usable = ~0u, .wires = 2, .mesh_max_ranks = 8};
    if (algo_ops_of((enum algo_id)a)->shape)
        algo_ops_of((enum algo_id)a)->shape(g, &ch);
}

struct counted {
    double sent, reduced;
    int steps, lanes; /* lanes: the most that carry data in one step */
};

/* The ring's bytes from its schedule: every (direction, wire) part of every step. */
static struct counted count_ring(const struct algo_geom *g)
{
    struct counted c = {.steps = algo_ring_steps(g)};
    for (int t = 0; t < c.steps; t++) {
        int lanes = 0;
        for (int d = 0; d < g->ndirs; d++)
            for (int w = 0; w < g->nwires; w++) {
                struct algo_range s, r;
                algo_ring_part(g, t, d, w, 0, &s);
                algo_ring_part(g, t, d, w, 1, &r);
                c.sent += (double)s.len;
                c.reduced += algo_ring_reduces(g, t) ? (double)r.len : 0;
                lanes += s.len > 0;
            }
        c.lanes = lanes > c.lanes ? lanes : c.lanes;
    }
    return c;
}

static struct counted count_mesh(const struct algo_geom *g)
{
    struct counted c = {.steps = 1};
    for (int p = 0; p < g->nranks; p++) {
        struct algo_range s, r;
        if (p == g->rank)
            continue;
        algo_mesh_send(g, p, &s);
        algo_mesh_recv(g, p, &r);
        c.lanes += s.len > 0; /* one lane per peer */
        c.sent += (double)s.len;
        c.reduced += g->kind == ALGO_ALLGATHER ? 0 : (double)r.len;
    }
    return c;
}

static struct counted count_rhd(const struct algo_geom *g)
{
    struct counted c = {.steps = algo_rhd_steps(g)};
    for (int t = 0; t < c.steps; t++) {
        int peer;
        struct algo_range s, r;
        int red = algo_rhd_step(g, t, &peer, &s, &r);
        c.lanes = s.len > 0 ? 1 : c.lanes; /* one partner at a time, on one lane */
        c.sent += (double)s.len;
        c.reduced += red ? (double)r.len : 0;
    }
    return c;
}

/* The algorithm's own description against the count, for the rank that sends most (ranks
 * differ by at most a few elements per chunk; the model prices the average rank). */
static void check_one(int a, enum algo_kind kind, int n, size_t bytes)
{
    struct counted most = {0};
    struct algo_work w = {0};
    for (int r = 0; r < n; r++) {
        struct algo_geom g;
        geom(&g, kind, n, r, bytes, a);
        struct counted c = a == ALGO_RING   ? count_ring(&g)
                           : a == ALGO_MESH ? count_mesh(&g)
                                            : count_rhd(&g);
        most = c.sent > most.sent ? c : most;
        w = (struct algo_work){.bytes = algo_total(&g)};
        algo_ops_of((enum algo_id)a)->work(&g, &w);
    }
    double slack = 64.0 * n * 4; /* uneven chunks: a few elements per chunk and part */
    if (fabs(w.sent - most.sent) > slack || fabs(w.reduced - most.reduced) > slack ||
        w.hops != most.steps || w.lanes != most.lanes)
        fail_msg("%s kind %d, %d ranks, %zu bytes: work says sent %.0f reduced %.0f hops %d "
                 "lanes %d, the schedule %.0f %.0f %d %d",
                 algo_name((enum algo_id)a), kind, n, bytes, w.sent, w.reduced, w.hops, w.lanes,
                 most.sent, most.reduced, most.steps, most.lanes);
}

static void test_work_matches_schedule(void **state)
{
    static const size_t sizes[] = {4096, 100000, 1u << 20, 3000004, 8u << 20};
    for (int n = 2; n <= 8; n++)
        for (size_t k = 0; k < 3; k++)
            for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
                check_one(ALGO_RING, kinds[k], n, sizes[s]);
                check_one(ALGO_MESH, kinds[k], n, sizes[s]);
                if (algo_pow2(n))
                    check_one(ALGO_RHD, kinds[k], n, sizes[s]);
            }
}

static struct algo_platform platform(void)
{
    return (struct algo_platform){.link_Bps = 1e9,
                                  .hop_s = 10e-6,
                                  .kern_hot_Bps = 8e9,
                                  .kern_cold_Bps = 4e9,
                                  .cache_bytes = 1u << 20,
                                  .cpu_share = 1,
                                  .links = 1};
}

static void test_time_terms(void **state)
{
    struct algo_platform p = platform();
    struct algo_work w = {.bytes = 1000, .hops = 2, .sent = 1e6, .reduced = 8e5, .peers = 1};
    double t = algo_time(&w, &p);
    assert_true(fabs(t - (3 * 10e-6 + 1e6 / 1e9 + 8e5 / 8e9)) < 1e-12);
    w.bytes = (1u << 20) + 1; /* larger than the cache: the cold rate */
    assert_true(fabs(algo_time(&w, &p) - (3 * 10e-6 + 1e6 / 1e9 + 8e5 / 4e9)) < 1e-12);
    struct algo_platform crowded = p;
    crowded.cpu_share = 0.5; /* two ranks per core: every copy takes twice as long */
    assert_true(fabs(algo_time(&w, &crowded) - (3 * 10e-6 + 2 * (1e6 / 1e9 + 8e5 / 4e9))) < 1e-12);
    struct algo_platform two = p;
    two.links = 2; /* one peer: a second cable does not help */
    assert_true(algo_time(&w, &two) == algo_time(&w, &p));
    w.peers = 2; /* two peers over two cables: the transfer halves */
    assert_true(fabs(algo_time(&w, &p) - algo_time(&w, &two) - 1e6 / 2e9) < 1e-12);
    struct algo_platform lanes = p;
    lanes.lane_Bps = 0.25e9; /* two lanes of a quarter of the link: half the link */
    w.peers = 1;
    w.lanes = 2;
    assert_true(fabs(algo_time(&w, &lanes) - algo_time(&w, &p) - 1e6 / 1e9) < 1e-12);
    w.lanes = 8; /* eight of them: the link is the limit again */
    assert_true(algo_time(&w, &lanes) == algo_time(&w, &p));
    struct algo_platform mem = p;
    mem.link_mem_Bps = 0.5e9; /* half the link once the operation is larger than the cache */
    w.lanes = 1;
    w.bytes = 1000;
    assert_true(algo_time(&w, &mem) == algo_time(&w, &p));
    w.bytes = (1u << 20) + 1;
    assert_true(fabs(algo_time(&w, &mem) - algo_time(&w, &p) - 1e6 / 1e9) < 1e-12);
    w.hops = 0; /* no message (one rank): nothing to wait for */
    assert_true(algo_time(&w, &p) == 0);
}

static struct algo_choice auto_choice(int n)
{
    struct algo_choice ch = {.force = ALGO_AUTO,
                             .mesh_max_bytes = 262144,
                             .mesh_max_ranks = 8,
                             .rhd_min_bytes = 16384,
                             .rhd_max_bytes = 4u << 20,
                             .wires = 2};
    ch.usable = algo_wanted(n, &ch);
    return ch;
}

/* The algorithm auto would run for a call of b bytes. */
static int chosen(enum algo_kind kind, int n, size_t b, const struct algo_choice *ch)
{
    struct algo_op op = {0};
    if (kind == ALGO_ALLREDUCE)
        algo_geom_allreduce(&op.g, n, 0, b / 4, 4);
    else
        algo_geom_window(&op.g, kind, n, 0, kind == ALGO_ALLGATHER ? 1 : 4, b / (size_t)n / 4 * 4,
                         0, b / (size_t)n / 4 * 4 * (size_t)n);
    algo_choose(&op, ch);
    return op.algo;
}

/* algo_predict prices what algo_choose picks; each algorithm's time grows with the size. */
static void test_predict(void **state)
{
    struct algo_platform p = platform();
    for (int n = 2; n <= 8; n++)
        for (size_t k = 0; k < 3; k++) {
            struct algo_choice ch = auto_choice(n);
            for (size_t b = 4096; b <= (256u << 20); b *= 2) {
                int a = -1;
                assert_true(algo_predict(kinds[k], n, b, 4, &ch, &p, &a) > 0);
                assert_int_equal(a, chosen(kinds[k], n, b, &ch));
            }
            for (int f = ALGO_RING; f <= ALGO_RHD; f++) {
                struct algo_choice one = ch;
                one.force = f;
                double last = 0;
                for (size_t b = 4096; b <= (256u << 20); b *= 2) {
                    double t = algo_predict(kinds[k], n, b, 4, &one, &p, NULL);
                    assert_true(t > last);
                    last = t;
                }
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_work_matches_schedule),
            cmocka_unit_test(test_time_terms),
            cmocka_unit_test(test_predict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

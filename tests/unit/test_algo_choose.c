/* SPDX-License-Identifier: BSD-3-Clause */
/* Algorithm choice (plugin/algo/choose.c): one rank is a copy, the knobs force ring, mesh or
 * halving-doubling, auto takes the mesh within both thresholds, halving-doubling above it for
 * power-of-two groups of 4 or more within its own threshold, an unconnected mesh is never
 * chosen, and
 * the operation's signature is the same on every rank and differs between operations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "algo/algo.h"

static struct algo_choice auto_choice(void)
{
    return (struct algo_choice){.usable = ALGO_BIT(ALGO_RING) | ALGO_BIT(ALGO_MESH) |
                                          ALGO_BIT(ALGO_RHD),
                                .force = ALGO_AUTO,
                                .mesh_max_bytes = 65536,
                                .mesh_max_ranks = 8,
                                .rhd_max_bytes = 0,
                                .wires = 2};
}

static enum algo_id pick(int P, size_t count, const struct algo_choice *ch)
{
    struct algo_op op = {.dtype = 7, .redop = 0};
    algo_geom_allreduce(&op.g, P, 0, count, 4);
    algo_choose(&op, ch);
    return op.algo;
}

/* A reduce-scatter or all-gather of `bytes` in all (a window of P * bytes / P). */
static enum algo_id pick_window(enum algo_kind kind, int P, size_t bytes,
                                const struct algo_choice *ch)
{
    struct algo_op op = {.dtype = 7, .redop = 0};
    algo_geom_window(&op.g, kind, P, 0, 4, bytes / (size_t)P, 0, bytes);
    algo_choose(&op, ch);
    return op.algo;
}

static void test_choice(void **state)
{
    (void)state;
    struct algo_choice ch = auto_choice();
    assert_int_equal(pick(1, 1000, &ch), ALGO_LOCAL);
    assert_int_equal(pick(4, 16384, &ch), ALGO_MESH); /* 64 KiB: still the mesh */
    assert_int_equal(pick(4, 16385, &ch), ALGO_RING); /* one element more: ring */
    assert_int_equal(pick(9, 10, &ch), ALGO_RING);    /* too many ranks */
    ch.force = ALGO_RING;
    assert_int_equal(pick(4, 10, &ch), ALGO_RING);
    ch.force = ALGO_MESH;
    assert_int_equal(pick(4, 1u << 24, &ch), ALGO_MESH);
    ch = auto_choice();
    ch.usable = ALGO_BIT(ALGO_RING); /* the cables carry no mesh */
    assert_int_equal(pick(2, 10, &ch), ALGO_RING);
    ch.force = ALGO_MESH;
    assert_int_equal(pick(2, 10, &ch), ALGO_RING);
    ch = auto_choice();
    ch.mesh_max_bytes = 0;
    assert_int_equal(pick(2, 1, &ch), ALGO_RING);
}

static void test_choice_rhd(void **state)
{
    (void)state;
    struct algo_choice ch = auto_choice();
    ch.rhd_min_bytes = 16384;
    ch.rhd_max_bytes = 1 << 20;
    assert_int_equal(pick(4, 4096, &ch), ALGO_MESH);   /* 16 KiB: the mesh */
    assert_int_equal(pick(4, 4097, &ch), ALGO_RHD);    /* then halving-doubling */
    assert_int_equal(pick(4, 16385, &ch), ALGO_RHD);   /* above the mesh's range too */
    assert_int_equal(pick(8, 262144, &ch), ALGO_RHD);  /* 1 MiB: still */
    assert_int_equal(pick(8, 262145, &ch), ALGO_RING); /* one element more: ring */
    assert_int_equal(pick(2, 100000, &ch), ALGO_RING); /* 2 ranks: the ring is as short */
    assert_int_equal(pick(6, 100000, &ch), ALGO_RING); /* not a power of two */
    assert_int_equal(pick(2, 1000, &ch), ALGO_MESH);   /* 2 ranks: the mesh's range as before */
    /* Small ones where it sends fewer messages per rank than the mesh's n - 1: all-reduce
     * from 8 ranks (6 against 7; 4 ranks: 4 against 3), reduce-scatter and all-gather from 4
     * (2 against 3). */
    assert_int_equal(pick(8, 100, &ch), ALGO_RHD);
    assert_int_equal(pick(4, 100, &ch), ALGO_MESH);
    assert_int_equal(pick_window(ALGO_REDUCESCATTER, 8, 4096, &ch), ALGO_RHD);
    assert_int_equal(pick_window(ALGO_ALLGATHER, 4, 4096, &ch), ALGO_RHD);
    assert_int_equal(pick_window(ALGO_REDUCESCATTER, 4, 4096, &ch), ALGO_RHD);
    assert_int_equal(pick_window(ALGO_ALLGATHER, 2, 4096, &ch), ALGO_MESH);
    ch.mesh_max_bytes = 0; /* no mesh: halving-doubling below its minimum too */
    assert_int_equal(pick(4, 100, &ch), ALGO_RHD);
    ch.mesh_max_bytes = 65536;
    ch.force = ALGO_RHD;
    assert_int_equal(pick(2, 10, &ch), ALGO_RHD);
    assert_int_equal(pick(8, 1u << 26, &ch), ALGO_RHD);
    assert_int_equal(pick(5, 10, &ch), ALGO_RING);
    assert_int_equal(pick(1, 10, &ch), ALGO_LOCAL);
    ch.usable &= ~ALGO_BIT(ALGO_RHD); /* no cable to the partners */
    assert_int_equal(pick(4, 100000, &ch), ALGO_RING);
    ch.force = ALGO_AUTO;
    assert_int_equal(pick(4, 100000, &ch), ALGO_RING);
    assert_string_equal(algo_name(ALGO_RHD), "rhd");
}

/* What a group asks connections for: the forced algorithm where it fits (the ring always),
 * else whatever auto may pick, all-pairs ones only within the rank cap. */
static void test_wanted(void **state)
{
    (void)state;
    struct algo_choice ch = auto_choice();
    unsigned ring = ALGO_BIT(ALGO_RING), mesh = ALGO_BIT(ALGO_MESH), rhd = ALGO_BIT(ALGO_RHD);
    assert_int_equal(algo_wanted(4, &ch) & (ring | mesh | rhd), ring | mesh);
    ch.rhd_max_bytes = 1 << 20;
    assert_int_equal(algo_wanted(4, &ch) & (ring | mesh | rhd), ring | mesh | rhd);
    assert_int_equal(algo_wanted(6, &ch) & (ring | mesh | rhd), ring | mesh);
    assert_int_equal(algo_wanted(16, &ch) & (ring | mesh | rhd), ring); /* above the cap */
    ch.force = ALGO_RHD;
    assert_int_equal(algo_wanted(16, &ch) & (ring | mesh | rhd), ring | rhd);
    assert_int_equal(algo_wanted(6, &ch) & (ring | mesh | rhd), ring);
}

/* Who talks to whom: the ring's neighbours follow its order, halving-doubling's partners
 * differ in one bit, the mesh joins every pair. */
static void test_talks(void **state)
{
    (void)state;
    struct algo_ring_order o;
    int16_t at[4] = {0, 2, 1, 3};
    algo_ring_order_set(&o, at, 4);
    const struct algo_ops *ring = algo_ops_of(ALGO_RING), *rhd = algo_ops_of(ALGO_RHD);
    assert_true(ring->talks(&o, 4, 0, 2));
    assert_true(ring->talks(&o, 4, 3, 0));
    assert_false(ring->talks(&o, 4, 0, 1));
    assert_true(ring->talks(NULL, 4, 0, 1));
    assert_true(rhd->talks(NULL, 4, 1, 3));
    assert_false(rhd->talks(NULL, 4, 1, 2));
    assert_false(rhd->talks(NULL, 6, 0, 1));
    assert_true(algo_ops_of(ALGO_MESH)->talks(NULL, 5, 0, 4));
    assert_false(algo_ops_of(ALGO_MESH)->talks(NULL, 5, 4, 4));
}

/* The signature covers the call, not the rank. */
static void test_signature(void **state)
{
    (void)state;
    struct algo_choice ch = auto_choice();
    uint32_t sig[4];
    for (int r = 0; r < 4; r++) {
        struct algo_op op = {.dtype = 7, .redop = 0};
        algo_geom_window(&op.g, ALGO_REDUCESCATTER, 4, r, 4, 4000, 1000, 9000);
        algo_choose(&op, &ch);
        sig[r] = op.sig;
    }
    for (int r = 1; r < 4; r++)
        assert_int_equal(sig[r], sig[0]);
    struct algo_op a = {.dtype = 7, .redop = 0}, b = {.dtype = 7, .redop = 1};
    algo_geom_allreduce(&a.g, 4, 0, 100, 4);
    algo_geom_allreduce(&b.g, 4, 0, 100, 4);
    algo_choose(&a, &ch);
    algo_choose(&b, &ch);
    assert_int_not_equal(a.sig, b.sig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_choice),    cmocka_unit_test(test_choice_rhd),
            cmocka_unit_test(test_signature), cmocka_unit_test(test_wanted),
            cmocka_unit_test(test_talks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The cables between two ranks' links (core/route.h) and the topology a CollNet group finds in
 * its handles (core/coll_topo.c): switched, fully cabled, rings of cables in any order, two
 * cables between two hosts, loopback only within one host. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/coll.h"
#include "core/route.h"

static struct jaccl_link lk(const char *a, int prefix)
{
    struct jaccl_link l = {.prefix = prefix};
    l.addr.sin.sin_family = AF_INET;
    l.addr.sin.sin_port = htons(4000);
    inet_pton(AF_INET, a, &l.addr.sin.sin_addr);
    return l;
}

/* Host h of a cluster whose cable k joins hosts a_k and b_k, each on 10.77.<k>.<host+1>/24. */
static struct jaccl_handle host_of(int h, const int (*cables)[2], int ncables)
{
    struct jaccl_handle x = {.kind = JH_COLL, .host = 100 + (uint64_t)h};
    char a[32];
    x.links[x.nlinks++] = lk("127.0.0.1", 8); /* every host has loopback */
    for (int k = 0; k < ncables; k++)
        if (cables[k][0] == h || cables[k][1] == h) {
            snprintf(a, sizeof(a), "10.77.%d.%d", k + 1, h + 1);
            x.links[x.nlinks++] = lk(a, 24);
        }
    return x;
}

static void build(struct coll_topo *t, struct jaccl_handle *hs, int n, const int (*cables)[2],
                  int ncables)
{
    for (int h = 0; h < n; h++)
        hs[h] = host_of(h, cables, ncables);
    assert_int_equal(coll_topo_build(t, hs, n), 0);
}

static void test_cables_match(void **st)
{
    struct jaccl_link mine[3] = {lk("127.0.0.1", 8), lk("10.77.1.1", 24), lk("10.77.2.1", 24)};
    struct jaccl_link theirs[3] = {lk("127.0.0.1", 8), lk("10.77.2.2", 24), lk("10.77.1.2", 24)};
    int devs[3] = {0, 1, 2};
    struct jaccl_cable c[8];
    /* two hosts: the two cables, the one NCCL named first; never the other host's loopback */
    assert_int_equal(jaccl_cables_match(mine, devs, 3, theirs, 3, 0, 2, c, 8), 2);
    assert_int_equal(c[0].dev, 2);
    assert_int_equal(c[1].dev, 1);
    assert_int_equal(ntohl(c[0].remote.sin.sin_addr.s_addr) & 0xff, 2);
    /* one host: loopback joins too */
    assert_int_equal(jaccl_cables_match(mine, devs, 3, theirs, 3, 1, 0, c, 8), 3);
    assert_int_equal(c[0].dev, 0);
    /* nothing in common */
    struct jaccl_link far[1] = {lk("10.77.9.9", 24)};
    assert_int_equal(jaccl_cables_match(mine, devs, 3, far, 1, 0, 0, c, 8), 0);
    /* a switch: two NICs each on one subnet pair up one to one */
    struct jaccl_link sw_a[2] = {lk("10.0.0.1", 24), lk("10.0.0.2", 24)};
    struct jaccl_link sw_b[2] = {lk("10.0.0.3", 24), lk("10.0.0.4", 24)};
    assert_int_equal(jaccl_cables_match(sw_a, devs, 2, sw_b, 2, 0, 0, c, 8), 2);
}

static void test_switched(void **st)
{
    struct jaccl_handle hs[3];
    struct coll_topo t;
    for (int h = 0; h < 3; h++) {
        char a[32];
        hs[h] = (struct jaccl_handle){.kind = JH_COLL, .host = 7 + (uint64_t)h, .nlinks = 1};
        snprintf(a, sizeof(a), "10.0.0.%d", h + 1);
        hs[h].links[0] = lk(a, 24);
    }
    assert_int_equal(coll_topo_build(&t, hs, 3), 0);
    assert_non_null(strstr(t.what, "switched"));
    for (int p = 0; p < 3; p++)
        assert_int_equal(t.ring.rank_at[p], p); /* as before cables: rank order */
    assert_true(t.ring_cabled);
    unsigned all = ALGO_BIT(ALGO_RING) | ALGO_BIT(ALGO_MESH);
    assert_int_equal(coll_topo_carries(&t) & all, all);
    coll_topo_free(&t);
}

static void test_triangle(void **st)
{
    const int cables[3][2] = {{0, 1}, {1, 2}, {2, 0}};
    struct jaccl_handle hs[3];
    struct coll_topo t;
    build(&t, hs, 3, cables, 3);
    assert_non_null(strstr(t.what, "3 hosts fully cabled"));
    assert_true(coll_topo_carries(&t) & ALGO_BIT(ALGO_MESH));
    assert_true(t.ring_cabled);
    assert_int_equal(coll_topo_ring_cables(&t), 1);
    coll_topo_free(&t);
}

/* A ring of four cabled 0-2-1-3-0: the ring takes that order; the mesh and halving-doubling
 * would need cables that are not there, and say which. */
static void test_ring_of_four(void **st)
{
    const int cables[4][2] = {{0, 2}, {2, 1}, {1, 3}, {3, 0}};
    struct jaccl_handle hs[4];
    struct coll_topo t;
    int x, y;
    build(&t, hs, 4, cables, 4);
    assert_non_null(strstr(t.what, "ring of 4 over cables"));
    assert_true(t.ring_cabled);
    int16_t want[4] = {0, 2, 1, 3};
    for (int p = 0; p < 4; p++)
        assert_int_equal(t.ring.rank_at[p], want[p]);
    assert_int_equal(t.ring.pos_of[1], 2);
    assert_int_equal(coll_topo_carries(&t), ALGO_BIT(ALGO_RING) | ALGO_BIT(ALGO_LOCAL));
    assert_true(coll_topo_missing(&t, ALGO_MESH, &x, &y));
    assert_false(coll_topo_joined(&t, x, y));
    assert_true(coll_topo_missing(&t, ALGO_RHD, &x, &y));
    assert_false(coll_topo_missing(&t, ALGO_RING, &x, &y));
    coll_topo_free(&t);
}

/* A square whose cables are exactly halving-doubling's partners (0-1, 1-3, 3-2, 2-0). */
static void test_square_carries_rhd(void **st)
{
    const int cables[4][2] = {{0, 1}, {1, 3}, {3, 2}, {2, 0}};
    struct jaccl_handle hs[4];
    struct coll_topo t;
    build(&t, hs, 4, cables, 4);
    unsigned c = coll_topo_carries(&t);
    assert_true(c & ALGO_BIT(ALGO_RHD));
    assert_false(c & ALGO_BIT(ALGO_MESH));
    assert_true(t.ring_cabled);
    coll_topo_free(&t);
}

static void test_two_cables(void **st)
{
    const int cables[2][2] = {{0, 1}, {0, 1}};
    struct jaccl_handle hs[2];
    struct coll_topo t;
    build(&t, hs, 2, cables, 2);
    assert_int_equal(coll_topo_ring_cables(&t), 2);
    assert_non_null(strstr(t.what, "2 cable(s)"));
    coll_topo_free(&t);
}

/* A line 0-1-2: no cycle over cables; the ring still runs (relayed between 2 and 0). */
static void test_line(void **st)
{
    const int cables[2][2] = {{0, 1}, {1, 2}};
    struct jaccl_handle hs[3];
    struct coll_topo t;
    build(&t, hs, 3, cables, 2);
    assert_false(t.ring_cabled);
    assert_non_null(strstr(t.what, "no cycle"));
    assert_true(coll_topo_carries(&t) & ALGO_BIT(ALGO_RING));
    assert_false(coll_topo_carries(&t) & ALGO_BIT(ALGO_MESH));
    coll_topo_free(&t);
}

/* Two ranks of one host (the same host id) are joined by loopback alone; of two hosts, not. */
static void test_loopback_one_host(void **st)
{
    struct jaccl_handle hs[2] = {{.kind = JH_COLL, .host = 5, .nlinks = 1},
                                 {.kind = JH_COLL, .host = 5, .nlinks = 1}};
    hs[0].links[0] = hs[1].links[0] = lk("127.0.0.1", 8);
    struct coll_topo t;
    assert_int_equal(coll_topo_build(&t, hs, 2), 0);
    assert_true(coll_topo_joined(&t, 0, 1));
    assert_non_null(strstr(t.what, "one host"));
    coll_topo_free(&t);
    hs[1].host = 6;
    assert_int_equal(coll_topo_build(&t, hs, 2), 0);
    assert_false(coll_topo_joined(&t, 0, 1));
    coll_topo_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cables_match),
            cmocka_unit_test(test_switched),
            cmocka_unit_test(test_triangle),
            cmocka_unit_test(test_ring_of_four),
            cmocka_unit_test(test_square_carries_rhd),
            cmocka_unit_test(test_two_cables),
            cmocka_unit_test(test_line),
            cmocka_unit_test(test_loopback_one_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

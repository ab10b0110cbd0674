/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL list syntax (NCCL_IB_HCA / NCCL_SOCKET_IFNAME): parsing and matching. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/ifmatch.h"

static struct jaccl_iflist parse_ok(const char *spec)
{
    struct jaccl_iflist l;
    assert_int_equal(jaccl_iflist_parse(spec, &l), 0);
    return l;
}

static void test_empty_and_null_match_everything(void **state)
{
    const char *specs[] = {NULL, "", "   ", ",", " , ,"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        struct jaccl_iflist l = parse_ok(specs[i]);
        assert_int_equal(l.n, 0);
        assert_int_equal(l.exclude, 0);
        assert_true(jaccl_iflist_match(&l, "eth0", -1));
        assert_true(jaccl_iflist_match(&l, "mlx5_0", 1));
    }
    assert_true(jaccl_iflist_match(NULL, "eth0", -1));
}

static void test_prefix(void **state)
{
    struct jaccl_iflist l = parse_ok("eth");
    assert_int_equal(l.n, 1);
    assert_string_equal(l.ent[0].name, "eth");
    assert_int_equal(l.ent[0].port, -1);
    assert_true(jaccl_iflist_match(&l, "eth0", -1));
    assert_true(jaccl_iflist_match(&l, "eth", -1));
    assert_true(jaccl_iflist_match(&l, "eth12", 3));
    assert_false(jaccl_iflist_match(&l, "et", -1));
    assert_false(jaccl_iflist_match(&l, "ib0", -1));
    assert_false(jaccl_iflist_match(&l, "veth0", -1)); /* prefix, not substring */
}

static void test_name_port_list(void **state)
{
    struct jaccl_iflist l = parse_ok("mlx5_0:1,mlx5_1:1");
    assert_int_equal(l.n, 2);
    assert_int_equal(l.exclude, 0);
    assert_int_equal(l.exact, 0);
    assert_string_equal(l.ent[0].name, "mlx5_0");
    assert_int_equal(l.ent[0].port, 1);
    assert_string_equal(l.ent[1].name, "mlx5_1");
    assert_int_equal(l.ent[1].port, 1);
    assert_true(jaccl_iflist_match(&l, "mlx5_0", 1));
    assert_true(jaccl_iflist_match(&l, "mlx5_1", 1));
    assert_false(jaccl_iflist_match(&l, "mlx5_0", 2));
    assert_false(jaccl_iflist_match(&l, "mlx5_2", 1));
    /* A device without ports (-1) matches any port restriction, like NCCL's matchPort. */
    assert_true(jaccl_iflist_match(&l, "mlx5_0", -1));
    /* Prefix semantics still apply to names with a port: mlx5_1 is a prefix of mlx5_10. */
    assert_true(jaccl_iflist_match(&l, "mlx5_10", 1));
}

static void test_exact(void **state)
{
    struct jaccl_iflist l = parse_ok("=mlx5_0");
    assert_int_equal(l.exact, 1);
    assert_int_equal(l.exclude, 0);
    assert_true(jaccl_iflist_match(&l, "mlx5_0", 1));
    assert_false(jaccl_iflist_match(&l, "mlx5_01", 1));
    assert_false(jaccl_iflist_match(&l, "mlx5_", 1));
    assert_false(jaccl_iflist_match(&l, "mlx5_1", 1));

    l = parse_ok("=mlx5_0:2,mlx5_1");
    assert_true(jaccl_iflist_match(&l, "mlx5_0", 2));
    assert_false(jaccl_iflist_match(&l, "mlx5_0", 1));
    assert_true(jaccl_iflist_match(&l, "mlx5_1", 7));
    assert_false(jaccl_iflist_match(&l, "mlx5_10", 7));
}

static void test_exclude(void **state)
{
    struct jaccl_iflist l = parse_ok("^mlx5_3");
    assert_int_equal(l.exclude, 1);
    assert_int_equal(l.exact, 0);
    assert_int_equal(l.n, 1);
    assert_false(jaccl_iflist_match(&l, "mlx5_3", 1));
    assert_false(jaccl_iflist_match(&l, "mlx5_30", 1)); /* prefix exclude */
    assert_true(jaccl_iflist_match(&l, "mlx5_0", 1));

    l = parse_ok("^docker,lo,virbr");
    assert_int_equal(l.n, 3);
    assert_false(jaccl_iflist_match(&l, "lo", -1));
    assert_false(jaccl_iflist_match(&l, "docker0", -1));
    assert_false(jaccl_iflist_match(&l, "virbr0", -1));
    assert_true(jaccl_iflist_match(&l, "eth0", -1));
}

static void test_exclude_exact(void **state)
{
    struct jaccl_iflist l = parse_ok("^=eth0");
    assert_int_equal(l.exclude, 1);
    assert_int_equal(l.exact, 1);
    assert_false(jaccl_iflist_match(&l, "eth0", -1));
    assert_true(jaccl_iflist_match(&l, "eth01", -1));
    assert_true(jaccl_iflist_match(&l, "eth1", -1));
}

static void test_exclude_port(void **state)
{
    struct jaccl_iflist l = parse_ok("^mlx5_0:1");
    assert_false(jaccl_iflist_match(&l, "mlx5_0", 1));
    assert_true(jaccl_iflist_match(&l, "mlx5_0", 2));
    assert_true(jaccl_iflist_match(&l, "mlx5_1", 1));
}

static void test_bare_markers(void **state)
{
    /* "^" or "=" alone: an empty list, which selects everything (nothing is excluded). */
    struct jaccl_iflist l = parse_ok("^");
    assert_int_equal(l.exclude, 1);
    assert_int_equal(l.n, 0);
    assert_true(jaccl_iflist_match(&l, "eth0", -1));
    l = parse_ok("=");
    assert_int_equal(l.exact, 1);
    assert_true(jaccl_iflist_match(&l, "eth0", -1));
}

static void test_blanks_and_empty_entries(void **state)
{
    struct jaccl_iflist l = parse_ok("  ^ = eth0 , ib0 : 1 ,, ");
    assert_int_equal(l.exclude, 1);
    assert_int_equal(l.exact, 1);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.ent[0].name, "eth0");
    assert_int_equal(l.ent[0].port, -1);
    assert_string_equal(l.ent[1].name, "ib0");
    assert_int_equal(l.ent[1].port, 1);
    assert_false(jaccl_iflist_match(&l, "eth0", -1));
    assert_false(jaccl_iflist_match(&l, "ib0", 1));
    assert_true(jaccl_iflist_match(&l, "ib0", 2));
}

static void test_malformed(void **state)
{
    const char *bad[] = {
            "mlx5_0:",      /* empty port */
            "mlx5_0:x",     /* not a number */
            "mlx5_0:1x",    /* trailing junk */
            "mlx5_0:-1",    /* negative */
            "mlx5_0:65536", /* too large */
            "mlx5_0:1:2",   /* two ports */
            ":1",           /* no name */
            "eth0, :1",     /* one bad entry spoils the list */
            "^=:3",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct jaccl_iflist l;
        l.n = 99;
        assert_int_equal(jaccl_iflist_parse(bad[i], &l), -1);
        assert_int_equal(l.n, 0); /* left empty, not half-filled */
    }
}

static void test_limits(void **state)
{
    char name[80];
    memset(name, 'a', 63);
    name[63] = '\0';
    struct jaccl_iflist l = parse_ok(name);
    assert_int_equal(strlen(l.ent[0].name), 63);
    memset(name, 'a', 64);
    name[64] = '\0';
    assert_int_equal(jaccl_iflist_parse(name, &l), -1);

    char spec[JACCL_IFLIST_MAX * 4 + 8] = "";
    for (int i = 0; i < JACCL_IFLIST_MAX; i++)
        strcat(spec, i ? ",e1" : "e1");
    l = parse_ok(spec);
    assert_int_equal(l.n, JACCL_IFLIST_MAX);
    strcat(spec, ",e2");
    assert_int_equal(jaccl_iflist_parse(spec, &l), -1);

    l = parse_ok("mlx5_0:65535,mlx5_1:0");
    assert_int_equal(l.ent[0].port, 65535);
    assert_int_equal(l.ent[1].port, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_empty_and_null_match_everything),
            cmocka_unit_test(test_prefix),
            cmocka_unit_test(test_name_port_list),
            cmocka_unit_test(test_exact),
            cmocka_unit_test(test_exclude),
            cmocka_unit_test(test_exclude_exact),
            cmocka_unit_test(test_exclude_port),
            cmocka_unit_test(test_bare_markers),
            cmocka_unit_test(test_blanks_and_empty_entries),
            cmocka_unit_test(test_malformed),
            cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

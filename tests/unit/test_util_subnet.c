/* SPDX-License-Identifier: BSD-3-Clause */
/* Subnets (util/subnet.h): netmask lengths, which addresses share a subnet, and when two links
 * meet (the same prefix and subnet, from either side). */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/subnet.h"

static union jaccl_sockaddr a4(const char *s)
{
    union jaccl_sockaddr a;
    memset(&a, 0, sizeof(a));
    a.sin.sin_family = AF_INET;
    inet_pton(AF_INET, s, &a.sin.sin_addr);
    return a;
}

static union jaccl_sockaddr a6(const char *s)
{
    union jaccl_sockaddr a;
    memset(&a, 0, sizeof(a));
    a.sin6.sin6_family = AF_INET6;
    inet_pton(AF_INET6, s, &a.sin6.sin6_addr);
    return a;
}

static void test_mask_prefix(void **st)
{
    union jaccl_sockaddr m = a4("255.255.255.0");
    assert_int_equal(jaccl_mask_prefix(&m.sa), 24);
    m = a4("255.255.255.254");
    assert_int_equal(jaccl_mask_prefix(&m.sa), 31);
    m = a4("255.240.0.0");
    assert_int_equal(jaccl_mask_prefix(&m.sa), 12);
    m = a6("ffff:ffff:ffff:ffff::");
    assert_int_equal(jaccl_mask_prefix(&m.sa), 64);
    m = a6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
    assert_int_equal(jaccl_mask_prefix(&m.sa), 128);
    assert_int_equal(jaccl_mask_prefix(NULL), 0);
}

static void test_same_subnet(void **st)
{
    union jaccl_sockaddr a = a4("10.77.1.1"), b = a4("10.77.1.2"), c = a4("10.77.2.1");
    assert_true(jaccl_same_subnet(&a, &b, 24));
    assert_false(jaccl_same_subnet(&a, &c, 24));
    assert_true(jaccl_same_subnet(&a, &c, 16));
    assert_true(jaccl_same_subnet(&a, &c, 22)); /* 10.77.0.0/22 holds both */
    assert_false(jaccl_same_subnet(&a, &b, 32));
    assert_true(jaccl_same_subnet(&a, &a, 32));
    assert_true(jaccl_same_subnet(&a, &c, 0));
    union jaccl_sockaddr x = a6("fd00:1::5"), y = a6("fd00:1::9"), z = a6("fd00:2::5");
    assert_true(jaccl_same_subnet(&x, &y, 64));
    assert_false(jaccl_same_subnet(&x, &z, 64));
    assert_false(jaccl_same_subnet(&a, &x, 0)); /* families never meet */
    assert_true(jaccl_same_host(&x, &x));
    assert_false(jaccl_same_host(&x, &y));
}

/* Both ends decide alike: the same prefix length and subnet. */
static void test_links_meet(void **st)
{
    struct jaccl_link p = {a4("10.77.1.1"), 24}, q = {a4("10.77.1.2"), 24};
    struct jaccl_link r = {a4("10.77.1.2"), 16}, s = {a4("10.77.2.2"), 24};
    assert_true(jaccl_links_meet(&p, &q));
    assert_true(jaccl_links_meet(&q, &p));
    assert_false(jaccl_links_meet(&p, &r)); /* a different prefix: not one subnet */
    assert_false(jaccl_links_meet(&r, &p));
    assert_false(jaccl_links_meet(&p, &s));
}

static void test_strings(void **st)
{
    char buf[64];
    struct jaccl_link l = {a4("10.77.3.7"), 24};
    assert_string_equal(jaccl_link_str(&l, buf, sizeof(buf)), "10.77.3.7/24");
    assert_string_equal(jaccl_link_net_str(&l, buf, sizeof(buf)), "10.77.3.0/24");
    l = (struct jaccl_link){a6("fd00:77:1::9"), 48};
    assert_string_equal(jaccl_link_net_str(&l, buf, sizeof(buf)), "fd00:77:1::/48");
    l = (struct jaccl_link){a4("10.77.3.7"), 20};
    assert_string_equal(jaccl_link_net_str(&l, buf, sizeof(buf)), "10.77.0.0/20");
    assert_true(jaccl_is_loopback(&(union jaccl_sockaddr){.sin = a4("127.3.0.1").sin}));
    union jaccl_sockaddr one = a6("::1");
    assert_true(jaccl_is_loopback(&one));
    union jaccl_sockaddr ten = a4("10.0.0.1");
    assert_false(jaccl_is_loopback(&ten));
}

/* The loopback interface's prefix is 8 everywhere. */
static void test_local_prefix(void **st)
{
    union jaccl_sockaddr lo = a4("127.0.0.1"), none = a4("192.0.2.77");
    assert_int_equal(jaccl_local_prefix(&lo), 8);
    assert_int_equal(jaccl_local_prefix(&none), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_mask_prefix),  cmocka_unit_test(test_same_subnet),
            cmocka_unit_test(test_links_meet),   cmocka_unit_test(test_strings),
            cmocka_unit_test(test_local_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

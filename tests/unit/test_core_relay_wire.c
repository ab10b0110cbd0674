/* SPDX-License-Identifier: BSD-3-Clause */
/* Relay messages (core/relay_wire.h): round trips, and every malformed one refused. The relay
 * itself runs between network namespaces (tests/net/topo.sh). */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/relay_wire.h"

static struct jaccl_link lk(int family, const char *a, int port, int prefix)
{
    struct jaccl_link l = {.prefix = prefix};
    l.addr.sa.sa_family = (sa_family_t)family;
    l.addr.sin.sin_port = htons((uint16_t)port);
    inet_pton(family, a,
              family == AF_INET ? (void *)&l.addr.sin.sin_addr : (void *)&l.addr.sin6.sin6_addr);
    return l;
}

static void test_query(void **st)
{
    struct relay_query q = {.id = 0x1234567890ull, .nlinks = 2}, out;
    q.links[0] = lk(AF_INET, "10.77.2.3", 4000, 24);
    q.links[1] = lk(AF_INET6, "fd00::3", 4001, 64);
    uint8_t b[RELAY_QUERY_MAX];
    size_t n = relay_query_encode(&q, b);
    assert_int_equal(n, 16 + 8 + 20);
    assert_int_equal(relay_query_decode(b, n, &out), 0);
    assert_int_equal(out.id, q.id);
    assert_int_equal(out.nlinks, 2);
    assert_memory_equal(&out.links[1], &q.links[1], sizeof(q.links[1]));
    assert_int_equal(relay_query_decode(b, n - 1, &out), -EPROTO); /* cut short */
    assert_int_equal(relay_query_decode(b, n + 0, &out), 0);
    b[6] = 3; /* more links than it carries */
    assert_int_equal(relay_query_decode(b, n, &out), -EPROTO);
    b[6] = 2;
    b[0] ^= 1;
    assert_int_equal(relay_query_decode(b, n, &out), -EPROTO);
}

static void test_answer(void **st)
{
    struct relay_answer a = {.id = 77, .link = 1, .port = 45001}, out;
    uint8_t b[RELAY_ANSWER_LEN];
    relay_answer_encode(&a, b);
    assert_int_equal(relay_answer_decode(b, sizeof(b), &out), 0);
    assert_int_equal(out.id, 77);
    assert_int_equal(out.link, 1);
    assert_int_equal(out.port, 45001);
    assert_int_equal(relay_answer_decode(b, sizeof(b) - 1, &out), -EPROTO);
    b[16] = b[17] = 0; /* port 0 */
    assert_int_equal(relay_answer_decode(b, sizeof(b), &out), -EPROTO);
}

static void test_preamble(void **st)
{
    struct jaccl_link t = lk(AF_INET, "10.77.2.3", 4321, 24);
    uint8_t b[JACCL_RELAY_PREAMBLE];
    union jaccl_sockaddr out;
    jaccl_relay_preamble(&t.addr, b);
    assert_int_equal(relay_preamble_decode(b, &out), 0);
    assert_memory_equal(&out.sin, &t.addr.sin, sizeof(out.sin));
    b[20] = 1; /* an IPv4 target leaves the rest of the address zero */
    assert_int_equal(relay_preamble_decode(b, &out), -EPROTO);
    t = lk(AF_INET6, "fd00::9", 4321, 64);
    jaccl_relay_preamble(&t.addr, b);
    assert_int_equal(relay_preamble_decode(b, &out), 0);
    assert_memory_equal(&out.sin6.sin6_addr, &t.addr.sin6.sin6_addr, 16);
    b[6] = 5;
    assert_int_equal(relay_preamble_decode(b, &out), -EPROTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_query),
            cmocka_unit_test(test_answer),
            cmocka_unit_test(test_preamble),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

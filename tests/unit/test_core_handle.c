/* SPDX-License-Identifier: BSD-3-Clause */
/* Handle codec: round trip, and every way a foreign or damaged handle must be refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "core/handle.h"
#include "core/version.h"

static struct jaccl_link v4(const char *a, int port, int prefix)
{
    struct jaccl_link l = {.prefix = prefix};
    l.addr.sin.sin_family = AF_INET;
    l.addr.sin.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, a, &l.addr.sin.sin_addr);
    return l;
}

static struct jaccl_link v6(const char *a, int port, int prefix)
{
    struct jaccl_link l = {.prefix = prefix};
    l.addr.sin6.sin6_family = AF_INET6;
    l.addr.sin6.sin6_port = htons((uint16_t)port);
    inet_pton(AF_INET6, a, &l.addr.sin6.sin6_addr);
    return l;
}

static struct jaccl_handle sample(void)
{
    struct jaccl_handle h = {
            .kind = JH_P2P, .secret = 0x1122334455667788ull, .nlanes = 2, .fabric = 1, .dev = 3};
    h.nlinks = 2;
    h.links[0] = v4("127.0.0.1", 4242, 8);
    h.links[1] = v6("fd00::7", 4343, 64);
    return h;
}

static void round_trip(void **state)
{
    struct jaccl_handle h = sample(), out;
    unsigned char buf[128];
    memset(buf, 0xaa, sizeof(buf));
    assert_int_equal(jaccl_handle_encode(&h, buf), 2);
    for (size_t i = 57 + 8 + 20; i < 124; i++)
        assert_int_equal(buf[i], 0); /* the bytes NCCL stores must not leak stack bytes */
    const char *why = NULL;
    assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), 0);
    assert_int_equal(out.secret, h.secret);
    assert_int_equal(out.nlanes, 2);
    assert_int_equal(out.dev, 3);
    assert_int_equal(out.nlinks, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(out.links[i].prefix, h.links[i].prefix);
        assert_memory_equal(&out.links[i].addr, &h.links[i].addr, sizeof(h.links[i].addr));
    }
    assert_int_equal(strncmp(out.release, JACCL_VERSION_STR, JACCL_RELEASE_MAX - 1), 0);
}

/* 128 bytes hold 9 IPv4 links or 3 IPv6 ones: the rest is left out, and the count says so. */
static void links_beyond_the_room_are_left_out(void **state)
{
    struct jaccl_handle h = sample(), out;
    unsigned char buf[128];
    const char *why = NULL;
    h.nlinks = JACCL_HANDLE_LINKS_MAX;
    for (int i = 0; i < h.nlinks; i++)
        h.links[i] = v4("10.77.0.1", 1000 + i, 24);
    assert_int_equal(jaccl_handle_links_fit(&h), JACCL_HANDLE_LINKS_MAX);
    assert_int_equal(jaccl_handle_encode(&h, buf), JACCL_HANDLE_LINKS_MAX);
    assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), 0);
    assert_int_equal(ntohs(out.links[7].addr.sin.sin_port), 1007);
    for (int i = 0; i < 4; i++)
        h.links[i] = v6("fd00::1", 2000 + i, 64);
    assert_int_equal(jaccl_handle_links_fit(&h), 3);
    assert_int_equal(jaccl_handle_encode(&h, buf), 3);
    assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), 0);
    assert_int_equal(out.nlinks, 3);
}

/* The handle's checksum (FNV-1a over bytes 0 .. 123, at 124), to forge well-sealed handles. */
static void reseal(unsigned char *buf)
{
    uint32_t x = 2166136261u;
    for (int i = 0; i < 124; i++)
        x = (x ^ buf[i]) * 16777619u;
    for (int i = 0; i < 4; i++)
        buf[124 + i] = (unsigned char)(x >> (8 * i));
}

/* A link entry that does not parse, a link count that lies, or bytes behind the last link
 * make the handle invalid, checksum or not. */
static void refuses_bad_links(void **state)
{
    struct jaccl_handle h = sample(), out;
    unsigned char good[128], buf[128];
    const char *why = NULL;
    jaccl_handle_encode(&h, good);
    struct {
        int at, val;
        const char *why;
    } bad[] = {{57, 5, "malformed link"},  {58, 33, "malformed link"},
               {56, 0, "no link"},         {56, 10, "no link"},
               {56, 3, "malformed link"},  {100, 1, "after its last link"},
               {65 + 1, 129, "malformed"}, {40, 0, "lane count"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memcpy(buf, good, sizeof(buf));
        buf[bad[i].at] = (unsigned char)bad[i].val;
        reseal(buf);
        assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), -EINVAL);
        assert_non_null(strstr(why, bad[i].why));
    }
    memcpy(buf, good, sizeof(buf));
    reseal(buf);
    assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), 0);
}

static void refuses_garbage(void **state)
{
    struct jaccl_handle out;
    const char *why = NULL;
    unsigned char buf[128];
    memset(buf, 0, sizeof(buf));
    assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), -EINVAL);
    assert_non_null(why);
    for (int seed = 1; seed < 200; seed++) {
        for (size_t i = 0; i < sizeof(buf); i++)
            buf[i] = (unsigned char)(seed * 131 + i * 17);
        assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), -EINVAL);
    }
    assert_int_equal(jaccl_handle_decode(NULL, JH_P2P, &out, &why), -EFAULT);
}

static void refuses_every_flipped_byte(void **state)
{
    struct jaccl_handle h = sample(), out;
    unsigned char buf[128];
    jaccl_handle_encode(&h, buf);
    for (size_t i = 0; i < sizeof(buf); i++) {
        unsigned char copy[128];
        memcpy(copy, buf, sizeof(copy));
        copy[i] ^= 0x40;
        const char *why = NULL;
        /* the zeros behind the links are covered by the checksum too: every flip is caught */
        assert_int_equal(jaccl_handle_decode(copy, JH_P2P, &out, &why), -EINVAL);
    }
}

static void refuses_wrong_kind(void **state)
{
    struct jaccl_handle h = sample(), out;
    unsigned char buf[128];
    jaccl_handle_encode(&h, buf);
    const char *why = NULL;
    assert_int_equal(jaccl_handle_decode(buf, JH_COLL, &out, &why), -EINVAL);
    assert_non_null(strstr(why, "CollNet"));
}

/* A handle of another format names both releases, read from the fixed offset. */
static void names_both_versions(void **state)
{
    struct jaccl_handle h = sample(), out;
    unsigned char buf[128];
    const char *why = NULL;
    jaccl_handle_encode(&h, buf);
    assert_memory_equal(buf + 8, JACCL_VERSION_STR, 5);
    buf[4] = JACCL_HANDLE_VERSION + 1; /* the version, little-endian */
    memcpy(buf + 8, "9.9.9\x01", 7);   /* an unprintable byte is not passed on */
    assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), -EINVAL);
    assert_non_null(strstr(why, "peer runs jaccl 9.9.9? (handle format 4)"));
    assert_non_null(strstr(why, "(handle format 3): every rank"));
    buf[4] = 1; /* format 1 had no release field */
    assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), -EINVAL);
    assert_non_null(strstr(why, "(handle format 1)"));
    assert_null(strstr(why, "9.9.9"));
}

static void random_is_random(void **state)
{
    uint64_t a = jaccl_random64(), b = jaccl_random64();
    assert_true(a != b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(round_trip),
            cmocka_unit_test(links_beyond_the_room_are_left_out),
            cmocka_unit_test(refuses_bad_links),
            cmocka_unit_test(refuses_garbage),
            cmocka_unit_test(refuses_every_flipped_byte),
            cmocka_unit_test(refuses_wrong_kind),
            cmocka_unit_test(names_both_versions),
            cmocka_unit_test(random_is_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

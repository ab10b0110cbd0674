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

static struct jaccl_handle sample(void)
{
    struct jaccl_handle h = {
            .kind = JH_P2P, .secret = 0x1122334455667788ull, .nlanes = 2, .fabric = 1, .dev = 3};
    h.addr.sin.sin_family = AF_INET;
    h.addr.sin.sin_port = htons(4242);
    h.addr.sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return h;
}

static void round_trip(void **state)
{
    struct jaccl_handle h = sample(), out;
    unsigned char buf[128];
    memset(buf, 0xaa, sizeof(buf));
    jaccl_handle_encode(&h, buf);
    for (size_t i = sizeof(h); i < sizeof(buf); i++)
        assert_int_equal(buf[i], 0); /* the tail NCCL stores must not leak stack bytes */
    const char *why = NULL;
    assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), 0);
    assert_int_equal(out.secret, h.secret);
    assert_int_equal(out.nlanes, 2);
    assert_int_equal(out.dev, 3);
    assert_int_equal(ntohs(out.addr.sin.sin_port), 4242);
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
    for (size_t i = 0; i < sizeof(h); i++) {
        unsigned char copy[128];
        memcpy(copy, buf, sizeof(copy));
        copy[i] ^= 0x40;
        const char *why = NULL;
        /* padding bytes are covered by the checksum too, so every flip must be caught */
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
    struct jaccl_handle *raw = (struct jaccl_handle *)buf;
    assert_string_equal(raw->release, JACCL_VERSION_STR);
    raw->version = JACCL_HANDLE_VERSION + 1;
    memcpy(raw->release, "9.9.9\x01", 7); /* an unprintable byte is not passed on */
    assert_int_equal(jaccl_handle_decode(buf, JH_P2P, &out, &why), -EINVAL);
    assert_non_null(strstr(why, "peer runs jaccl 9.9.9? (handle format 3)"));
    assert_non_null(strstr(why, "this rank runs jaccl " JACCL_VERSION_STR " (handle format 2)"));
    raw->version = 1; /* format 1 had no release field */
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
            cmocka_unit_test(refuses_garbage),
            cmocka_unit_test(refuses_every_flipped_byte),
            cmocka_unit_test(refuses_wrong_kind),
            cmocka_unit_test(names_both_versions),
            cmocka_unit_test(random_is_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

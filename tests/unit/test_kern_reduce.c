/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduction kernels: every (dtype, op) against a naive reference on random data with
 * edge values, exhaustive fp8 pairs, aliasing, odd counts, unaligned pointers, no
 * writes past the end, and the AVX2 build agreeing bit for bit with the portable one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "algo/kern_impl.h"
#include "kern_ref.h" /* the conversion reference: ref_decode, ref_cvt */

#define MAXSZ  8
#define CANARY 0xa5

static const size_t counts[] = {0, 1, 7, 33, 1000003};

/* ------------------------------------------------------------------ data */

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int is_narrow(enum jaccl_dtype t)
{
    return t == JD_F16 || t == JD_BF16 || t == JD_F8E4M3 || t == JD_F8E5M2;
}

static enum ref_fmt fmt_of(enum jaccl_dtype t)
{
    return t == JD_F16 ? RF_F16 : t == JD_BF16 ? RF_BF16 : t == JD_F8E4M3 ? RF_E4M3 : RF_E5M2;
}

static int is_signed(enum jaccl_dtype t)
{
    return t == JD_I8 || t == JD_I32 || t == JD_I64;
}

static uint64_t load(enum jaccl_dtype t, const void *p)
{
    uint64_t v = 0;
    memcpy(&v, p, jaccl_dtype_size(t)); /* little-endian */
    return v;
}

/* Special values per type (bit patterns): zeros, +-1, extremes, subnormals, inf, NaNs. */
static uint64_t edge_value(enum jaccl_dtype t)
{
    static const uint64_t f16[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00, 0xfc00,
                                   0x7e00, 0x7c01, 0xfe00, 0x0001, 0x8001, 0x03ff, 0x0400};
    static const uint64_t bf16[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f7f, 0xff7f, 0x7f80, 0xff80,
                                    0x7fc0, 0x7f81, 0xffc1, 0x0001, 0x8001, 0x007f, 0x0080};
    static const uint64_t e4m3[] = {0x00, 0x80, 0x38, 0xb8, 0x7e, 0xfe, 0x7f,
                                    0xff, 0x01, 0x81, 0x07, 0x08, 0x77};
    static const uint64_t e5m2[] = {0x00, 0x80, 0x3c, 0xbc, 0x7b, 0xfb, 0x7c, 0xfc,
                                    0x7d, 0x7e, 0x7f, 0xff, 0x01, 0x81, 0x03, 0x04};
    static const uint64_t f32[] = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f7fffff,
                                   0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001,
                                   0xffc00123, 0x00000001, 0x80000001, 0x007fffff, 0x00800000};
    static const uint64_t f64[] = {0,
                                   1ull << 63,
                                   0x3ff0000000000000ull,
                                   0xbff0000000000000ull,
                                   0x7fefffffffffffffull,
                                   0x7ff0000000000000ull,
                                   0xfff0000000000000ull,
                                   0x7ff8000000000000ull,
                                   0x7ff0000000000001ull,
                                   0xfff8000000000123ull,
                                   1,
                                   0x8000000000000001ull};
    static const uint64_t ints[] = {
            0,    1,    ~0ull,      2,          0x7fffffffffffffffull, 0x8000000000000000ull,
            0x7f, 0x80, 0x7fffffff, 0x80000000, 0x5555555555555555ull};
#define PICK(arr) arr[rnd() % (sizeof(arr) / sizeof(arr[0]))]
    switch (t) {
    case JD_F16:
        return PICK(f16);
    case JD_BF16:
        return PICK(bf16);
    case JD_F8E4M3:
        return PICK(e4m3);
    case JD_F8E5M2:
        return PICK(e5m2);
    case JD_F32:
        return PICK(f32);
    case JD_F64:
        return PICK(f64);
    default:
        return PICK(ints);
    }
#undef PICK
}

/* A value of ordinary size, so sums and products round instead of saturating. */
static uint64_t moderate_value(enum jaccl_dtype t)
{
    double x = ((double)(rnd() >> 11) / 9007199254740992.0 - 0.5) * 16.0;
    if (is_narrow(t))
        return ref_cvt(fmt_of(t), x);
    if (t == JD_F32) {
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    if (t == JD_F64) {
        uint64_t u;
        memcpy(&u, &x, 8);
        return u;
    }
    return (uint64_t)(int64_t)(x * 8);
}

static void fill(enum jaccl_dtype t, void *buf, size_t n)
{
    size_t sz = jaccl_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        unsigned pick = (unsigned)(rnd() % 8);
        uint64_t v = pick < 2 ? edge_value(t) : pick < 5 ? rnd() : moderate_value(t);
        memcpy((char *)buf + i * sz, &v, sz);
    }
}

/* ------------------------------------------------------------------ reference */

/* max/min rules written out: NaN loses to a number, two NaNs give NaN, +0 > -0. */
static double ref_maxmin(double x, double y, int is_max)
{
    if (isnan(x) || isnan(y))
        return isnan(x) ? y : x;
    if (x == y)
        return (signbit(x) ? !is_max : is_max) ? x : y; /* max keeps x if x is +0 */
    return (x > y) == is_max ? x : y;
}

static double ref_fop(double x, double y, enum jaccl_redop op)
{
    switch (op) {
    case JR_SUM:
        return x + y;
    case JR_PROD:
        return x * y;
    default:
        return ref_maxmin(x, y, op == JR_MAX);
    }
}

static uint64_t ref_int(enum jaccl_dtype t, enum jaccl_redop op, uint64_t x, uint64_t y)
{
    unsigned bits = (unsigned)jaccl_dtype_size(t) * 8;
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    uint64_t sbit = 1ull << (bits - 1);
    int lt; /* x < y in the type's order */

    if (is_signed(t))
        lt = ((x ^ sbit) & mask) < ((y ^ sbit) & mask); /* offset binary */
    else
        lt = x < y;
    switch (op) {
    case JR_SUM:
        return (x + y) & mask;
    case JR_PROD:
        return (x * y) & mask;
    case JR_MAX:
        return lt ? y : x;
    default:
        return lt ? x : y;
    }
}

static uint64_t ref_elem(enum jaccl_dtype t, enum jaccl_redop op, uint64_t x, uint64_t y)
{
    if (is_narrow(t)) {
        enum ref_fmt f = fmt_of(t);
        return ref_cvt(f, ref_fop(ref_decode(f, (uint32_t)x), ref_decode(f, (uint32_t)y), op));
    }
    if (t == JD_F32) {
        float a, b, r;
        uint32_t u32;
        memcpy(&a, &x, 4);
        memcpy(&b, &y, 4);
        r = op == JR_SUM ? a + b : op == JR_PROD ? a * b : (float)ref_fop(a, b, op);
        memcpy(&u32, &r, 4);
        return u32;
    }
    if (t == JD_F64) {
        double a, b, r;
        uint64_t u;
        memcpy(&a, &x, 8);
        memcpy(&b, &y, 8);
        r = op == JR_SUM ? a + b : op == JR_PROD ? a * b : ref_fop(a, b, op);
        memcpy(&u, &r, 8);
        return u;
    }
    return ref_int(t, op, x, y);
}

static int is_nan_bits(enum jaccl_dtype t, uint64_t v)
{
    if (t == JD_F32)
        return (v & 0x7fffffffu) > 0x7f800000u;
    if (t == JD_F64)
        return (v & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    return 0;
}

/* float/double NaN payloads follow the CPU (and operand order the compiler picks);
 * every other result must match bit for bit. */
static int same_result(enum jaccl_dtype t, uint64_t want, uint64_t got)
{
    return want == got || (is_nan_bits(t, want) && is_nan_bits(t, got));
}

static void check_vs_ref(enum jaccl_dtype t, enum jaccl_redop op, const void *d, const void *a,
                         const void *b, size_t n, const char *what)
{
    size_t sz = jaccl_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = load(t, (const char *)a + i * sz), y = load(t, (const char *)b + i * sz);
        uint64_t want = ref_elem(t, op, x, y), got = load(t, (const char *)d + i * sz);
        if (!same_result(t, want, got))
            fail_msg("%s %s/%s [%zu]: 0x%llx op 0x%llx = 0x%llx, want 0x%llx", what,
                     jaccl_dtype_name(t), jaccl_redop_name(op), i, (unsigned long long)x,
                     (unsigned long long)y, (unsigned long long)got, (unsigned long long)want);
    }
}

static void check_same(enum jaccl_dtype t, const void *want, const void *got, size_t n,
                       const char *what, enum jaccl_redop op)
{
    size_t sz = jaccl_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        uint64_t w = load(t, (const char *)want + i * sz), g = load(t, (const char *)got + i * sz);
        if (!same_result(t, w, g))
            fail_msg("%s %s/%s [%zu]: 0x%llx, want 0x%llx", what, jaccl_dtype_name(t),
                     jaccl_redop_name(op), i, (unsigned long long)g, (unsigned long long)w);
    }
}

static void check_canary(const void *p, size_t bytes, const char *what)
{
    for (size_t i = 0; i < bytes; i++)
        if (((const unsigned char *)p)[i] != CANARY)
            fail_msg("%s: byte %zu past the end was written", what, i);
}

static int restore_isa(void **state)
{
    (void)state;
    jaccl_kern_force_scalar(0);
    return 0;
}

/* ------------------------------------------------------------------ tests */

static void test_names_and_lookup(void **state)
{
    (void)state;
    static const size_t sizes[JD_NUM] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    for (int t = 0; t < JD_NUM; t++) {
        assert_int_equal(jaccl_dtype_size(t), sizes[t]);
        assert_string_not_equal(jaccl_dtype_name(t), "invalid");
        for (int op = 0; op < JR_NUM; op++)
            assert_non_null(jaccl_reduce_fn_get(t, op));
        assert_null(jaccl_reduce_fn_get(t, JR_NUM));
        assert_null(jaccl_reduce_fn_get(t, (enum jaccl_redop) - 1));
    }
    assert_string_equal(jaccl_dtype_name(JD_BF16), "bfloat16");
    assert_string_equal(jaccl_redop_name(JR_MIN), "min");
    assert_int_equal(jaccl_dtype_size(JD_NUM), 0);
    assert_int_equal(jaccl_dtype_size((enum jaccl_dtype) - 1), 0);
    assert_string_equal(jaccl_dtype_name(JD_NUM), "invalid");
    assert_string_equal(jaccl_redop_name(JR_NUM), "invalid");
    assert_null(jaccl_reduce_fn_get(JD_NUM, JR_SUM));
}

/* Every pair, both builds, random data with edge values. */
static void test_all_pairs_vs_reference(void **state)
{
    (void)state;
    enum { N = 20011 };
    static unsigned char a[N * MAXSZ], b[N * MAXSZ], d[N * MAXSZ];
    for (int scalar = 0; scalar < 2; scalar++) {
        jaccl_kern_force_scalar(scalar);
        for (int t = 0; t < JD_NUM; t++) {
            for (int op = 0; op < JR_NUM; op++) {
                fill(t, a, N);
                fill(t, b, N);
                jaccl_reduce_fn_get(t, op)(d, a, b, N);
                check_vs_ref(t, op, d, a, b, N, scalar ? "scalar" : "default");
            }
        }
    }
}

/* fp8 has only 65536 operand pairs: try them all, with both builds. */
static void test_fp8_exhaustive(void **state)
{
    (void)state;
    enum { N = 65536 };
    static unsigned char a[N], b[N], d[N];
    for (unsigned i = 0; i < N; i++) {
        a[i] = (unsigned char)(i >> 8);
        b[i] = (unsigned char)i;
    }
    for (int scalar = 0; scalar < 2; scalar++) {
        jaccl_kern_force_scalar(scalar);
        for (int t = JD_F8E4M3; t <= JD_F8E5M2; t++)
            for (int op = 0; op < JR_NUM; op++) {
                jaccl_reduce_fn_get(t, op)(d, a, b, N);
                check_vs_ref(t, op, d, a, b, N, scalar ? "scalar" : "default");
            }
    }
}

/* Every fp16/bf16 code with itself and with +-0 goes through the vector conversions. */
static void test_16bit_codes(void **state)
{
    (void)state;
    enum { N = 65536 };
    static uint16_t a[N], z[N], d[N];
    for (unsigned i = 0; i < N; i++) {
        a[i] = (uint16_t)i;
        z[i] = (uint16_t)((i & 1) << 15);
    }
    for (int scalar = 0; scalar < 2; scalar++) {
        jaccl_kern_force_scalar(scalar);
        for (int k = 0; k < 2; k++)
            for (int op = 0; op < JR_NUM; op++) {
                enum jaccl_dtype t = k ? JD_BF16 : JD_F16;
                jaccl_reduce_fn_get(t, op)(d, a, a, N);
                check_vs_ref(t, op, d, a, a, N, "x op x");
                jaccl_reduce_fn_get(t, op)(d, a, z, N);
                check_vs_ref(t, op, d, a, z, N, "x op 0");
            }
    }
}

/* The counts from the brief with both builds, NULL buffers for count 0, and nothing
 * written past the end. */
static void test_counts(void **state)
{
    (void)state;
    size_t maxn = counts[sizeof(counts) / sizeof(counts[0]) - 1] + 16;
    unsigned char *a = malloc(maxn * MAXSZ), *b = malloc(maxn * MAXSZ), *d = malloc(maxn * MAXSZ);
    assert_non_null(a && b && d);
    for (int k = 0; k < 2 * JD_NUM * JR_NUM; k++) {
        int scalar = k / (JD_NUM * JR_NUM), t = k / JR_NUM % JD_NUM, op = k % JR_NUM;
        size_t sz = jaccl_dtype_size(t);
        jaccl_kern_force_scalar(scalar);
        jaccl_reduce_fn fn = jaccl_reduce_fn_get(t, op);
        fn(NULL, NULL, NULL, 0);
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            size_t n = counts[c];
            fill(t, a, n);
            fill(t, b, n);
            memset(d, CANARY, (n + 16) * sz);
            fn(d, a, b, n);
            check_vs_ref(t, op, d, a, b, n, scalar ? "scalar count" : "count");
            check_canary(d + n * sz, 16 * sz, "count");
        }
    }
    free(a);
    free(b);
    free(d);
}

/* dst == a, dst == b and dst == a == b give what the out-of-place call gives. */
static void test_aliasing(void **state)
{
    (void)state;
    enum { N = 1001 };
    static unsigned char a[N * MAXSZ], b[N * MAXSZ], d[(N + 4) * MAXSZ], want[N * MAXSZ];
    for (int scalar = 0; scalar < 2; scalar++) {
        jaccl_kern_force_scalar(scalar);
        for (int t = 0; t < JD_NUM; t++) {
            size_t sz = jaccl_dtype_size(t), bytes = N * sz;
            for (int op = 0; op < JR_NUM; op++) {
                jaccl_reduce_fn fn = jaccl_reduce_fn_get(t, op);
                fill(t, a, N);
                fill(t, b, N);
                memset(d + bytes, CANARY, 4 * sz);
                fn(want, a, b, N);
                memcpy(d, a, bytes);
                fn(d, d, b, N);
                check_same(t, want, d, N, "dst==a", op);
                memcpy(d, b, bytes);
                fn(d, a, d, N);
                check_same(t, want, d, N, "dst==b", op);
                fn(want, a, a, N);
                memcpy(d, a, bytes);
                fn(d, d, d, N);
                check_same(t, want, d, N, "dst==a==b", op);
                check_canary(d + bytes, 4 * sz, "aliasing");
            }
        }
    }
}

/* Pointers one element past an aligned address, alone or together, with and without
 * aliasing: the vector loops must not assume any alignment beyond the element's. */
static void test_unaligned(void **state)
{
    (void)state;
    enum { N = 1037 };
    static _Alignas(64) unsigned char a[(N + 1) * MAXSZ], b[(N + 1) * MAXSZ], d[(N + 1) * MAXSZ],
            a0[N * MAXSZ];
    for (int k = 0; k < 2 * JD_NUM * JR_NUM * 8; k++) {
        int mask = k % 8, op = k / 8 % JR_NUM, t = k / (8 * JR_NUM) % JD_NUM;
        size_t sz = jaccl_dtype_size(t);
        unsigned char *pa = a + ((mask & 1) ? sz : 0), *pb = b + ((mask & 2) ? sz : 0);
        unsigned char *pd = d + ((mask & 4) ? sz : 0);
        jaccl_kern_force_scalar(k / (8 * JR_NUM * JD_NUM));
        jaccl_reduce_fn fn = jaccl_reduce_fn_get(t, op);
        fill(t, pa, N);
        fill(t, pb, N);
        fn(pd, pa, pb, N);
        check_vs_ref(t, op, pd, pa, pb, N, "unaligned");
        memcpy(a0, pa, N * sz);
        fn(pa, pa, pb, N);
        check_vs_ref(t, op, pa, a0, pb, N, "unaligned dst==a");
    }
}

static jaccl_reduce_fn base_fn(enum jaccl_dtype t, enum jaccl_redop op)
{
    jaccl_reduce_fn fn = jaccl_kern_int_get(t, op, JK_ISA_BASE);
    if (!fn)
        fn = jaccl_kern_ieee_get(t, op, JK_ISA_BASE);
    return fn ? fn : jaccl_kern_narrow_get(t, op);
}

/* The AVX2 build and the portable build agree bit for bit, and each is deterministic. */
static void test_avx2_matches_scalar(void **state)
{
    (void)state;
    enum { N = 100003 };
    static unsigned char a[N * MAXSZ], b[N * MAXSZ], ds[N * MAXSZ], dv[N * MAXSZ];
    if (!jaccl_kern_have_avx2())
        skip();
    for (int t = 0; t < JD_NUM; t++) {
        size_t sz = jaccl_dtype_size(t);
        for (int op = 0; op < JR_NUM; op++) {
            jaccl_kern_force_scalar(1);
            jaccl_reduce_fn fs = jaccl_reduce_fn_get(t, op);
            jaccl_kern_force_scalar(0);
            jaccl_reduce_fn fv = jaccl_reduce_fn_get(t, op);
            assert_ptr_not_equal(fs, fv);
            assert_ptr_equal(fs, base_fn(t, op));
            fill(t, a, N);
            fill(t, b, N);
            fs(ds, a, b, N);
            fv(dv, a, b, N);
            check_same(t, ds, dv, N, "avx2 vs scalar", op);
            fv(ds, a, b, N);
            assert_memory_equal(ds, dv, N * sz); /* same build, same bits, NaNs included */
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_names_and_lookup),
            cmocka_unit_test_teardown(test_all_pairs_vs_reference, restore_isa),
            cmocka_unit_test_teardown(test_fp8_exhaustive, restore_isa),
            cmocka_unit_test_teardown(test_16bit_codes, restore_isa),
            cmocka_unit_test_teardown(test_counts, restore_isa),
            cmocka_unit_test_teardown(test_aliasing, restore_isa),
            cmocka_unit_test_teardown(test_unaligned, restore_isa),
            cmocka_unit_test_teardown(test_avx2_matches_scalar, restore_isa),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

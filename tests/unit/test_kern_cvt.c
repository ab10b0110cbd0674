/* SPDX-License-Identifier: BSD-3-Clause */
/* fp16 / bf16 / fp8 <-> float conversions of the reduction kernels, checked against a
 * slow reference that knows nothing about bit tricks: it decodes codes with ldexp and
 * encodes by searching the sorted table of a format's values (kern_ref.c, which
 * test_kern_reduce.c shares).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "algo/kern_impl.h"
#include "kern_ref.h"

/* ------------------------------------------------------------------ tests */

static float cvt_to_float(enum ref_fmt f, uint32_t c)
{
    switch (f) {
    case RF_F16:
        return jk_f16_to_f32((uint16_t)c);
    case RF_BF16:
        return jk_bf16_to_f32((uint16_t)c);
    case RF_E4M3:
        return jk_e4m3_to_f32((uint8_t)c);
    default:
        return jk_e5m2_to_f32((uint8_t)c);
    }
}

static uint32_t cvt_from_float(enum ref_fmt f, float x)
{
    switch (f) {
    case RF_F16:
        return jk_f32_to_f16(x);
    case RF_BF16:
        return jk_f32_to_bf16(x);
    case RF_E4M3:
        return jk_f32_to_e4m3(x);
    default:
        return jk_f32_to_e5m2(x);
    }
}

static uint32_t ncodes(enum ref_fmt f)
{
    return ref_fmts[f].sign << 1;
}

static void expect_enc(enum ref_fmt f, float x, uint32_t code)
{
    uint32_t got = cvt_from_float(f, x);
    if (got != code)
        fail_msg("fmt %d: %a -> 0x%x, want 0x%x", f, (double)x, got, code);
    assert_int_equal(ref_cvt(f, x), code); /* the reference agrees with the hand value */
}

static void expect_dec(enum ref_fmt f, uint32_t code, float v)
{
    float got = cvt_to_float(f, code);
    if (isnan(v) ? !isnan(got) : memcmp(&got, &v, 4) != 0)
        fail_msg("fmt %d: 0x%x -> %a, want %a", f, code, (double)got, (double)v);
}

static void test_f16_hand_values(void **state)
{
    (void)state;
    expect_enc(RF_F16, 1.0f, 0x3c00);
    expect_enc(RF_F16, -2.0f, 0xc000);
    expect_enc(RF_F16, 65504.0f, 0x7bff);
    expect_enc(RF_F16, 65519.99f, 0x7bff);
    expect_enc(RF_F16, 65520.0f, 0x7c00); /* tie with 2^16 rounds to even: inf */
    expect_enc(RF_F16, -1e6f, 0xfc00);
    expect_enc(RF_F16, 0x1p-24f, 0x0001); /* smallest subnormal */
    expect_enc(RF_F16, 0x1p-25f, 0x0000); /* tie with 0 rounds to even */
    expect_enc(RF_F16, 0x1.8p-25f, 0x0001);
    expect_enc(RF_F16, 0x1.8p-24f, 0x0002); /* tie between 1 and 2 ulps: even */
    expect_enc(RF_F16, 0x1p-14f, 0x0400);
    expect_enc(RF_F16, 1023 * 0x1p-24f, 0x03ff);
    expect_enc(RF_F16, 1.0f + 0x1p-11f, 0x3c00);     /* RNE tie: down to even */
    expect_enc(RF_F16, 1.0f + 3 * 0x1p-11f, 0x3c02); /* RNE tie: up to even */
    expect_enc(RF_F16, -0.0f, 0x8000);
    expect_enc(RF_F16, INFINITY, 0x7c00);
    expect_enc(RF_F16, -NAN, 0x7fff);
    expect_dec(RF_F16, 0x0001, 0x1p-24f);
    expect_dec(RF_F16, 0x8000, -0.0f);
    expect_dec(RF_F16, 0x7bff, 65504.0f);
    expect_dec(RF_F16, 0xfc00, -INFINITY);
    expect_dec(RF_F16, 0x7e00, NAN);
}

static void test_bf16_hand_values(void **state)
{
    (void)state;
    expect_enc(RF_BF16, 1.0f, 0x3f80);
    expect_enc(RF_BF16, 1.0f + 0x1p-8f, 0x3f80);     /* tie: down to even */
    expect_enc(RF_BF16, 1.0f + 3 * 0x1p-8f, 0x3f82); /* tie: up to even */
    expect_enc(RF_BF16, 1.0f + 0x1.8p-8f, 0x3f81);
    expect_enc(RF_BF16, 0x1.fffffep127f, 0x7f80); /* rounds past the max: inf */
    expect_enc(RF_BF16, -0.0f, 0x8000);
    expect_enc(RF_BF16, NAN, 0x7fff);
    expect_enc(RF_BF16, -NAN, 0x7fff); /* NaN stays NaN (canonical) */
    expect_enc(RF_BF16, 0x1p-133f, 0x0001);
    expect_dec(RF_BF16, 0x7fc1, NAN);
    expect_dec(RF_BF16, 0xc000, -2.0f);
}

static void test_e4m3_hand_values(void **state)
{
    (void)state;
    expect_enc(RF_E4M3, 1.0f, 0x38);
    expect_enc(RF_E4M3, 448.0f, 0x7e);
    expect_enc(RF_E4M3, 464.0f, 0x7e); /* tie with the NaN slot rounds to even: 448 */
    expect_enc(RF_E4M3, 480.0f, 0x7e); /* saturates */
    expect_enc(RF_E4M3, -1e9f, 0xfe);
    expect_enc(RF_E4M3, INFINITY, 0x7e);     /* SATFINITE: no inf in e4m3 */
    expect_enc(RF_E4M3, 0.001953125f, 0x01); /* 2^-9, smallest subnormal */
    expect_enc(RF_E4M3, 0x1p-10f, 0x00);     /* tie with 0 */
    expect_enc(RF_E4M3, 0x1.8p-9f, 0x02);    /* tie between 1 and 2: even */
    expect_enc(RF_E4M3, 0x1p-6f, 0x08);      /* smallest normal */
    expect_enc(RF_E4M3, NAN, 0x7f);
    expect_dec(RF_E4M3, 0x7f, NAN);
    expect_dec(RF_E4M3, 0xff, NAN);
    expect_dec(RF_E4M3, 0x7e, 448.0f);
    expect_dec(RF_E4M3, 0x81, -0x1p-9f);
}

static void test_e5m2_hand_values(void **state)
{
    (void)state;
    expect_enc(RF_E5M2, 1.0f, 0x3c);
    expect_enc(RF_E5M2, 57344.0f, 0x7b);
    expect_enc(RF_E5M2, 61440.0f, 0x7b);
    expect_enc(RF_E5M2, 1e6f, 0x7b); /* saturates */
    expect_enc(RF_E5M2, -1e6f, 0xfb);
    expect_enc(RF_E5M2, 0x1p-16f, 0x01);
    expect_enc(RF_E5M2, 0x1p-17f, 0x00);
    expect_enc(RF_E5M2, NAN, 0x7f);
    /* CUDA's __nv_cvt_float_to_fp8(.., __NV_SATFINITE, __NV_E5M2) maps +-inf to
     * +-57344 (its overflow test is |x| > threshold, and inf passes it), and NCCL's
     * fp8 reductions narrow through that conversion. */
    expect_enc(RF_E5M2, INFINITY, 0x7b);
    expect_enc(RF_E5M2, -INFINITY, 0xfb);
    expect_dec(RF_E5M2, 0x7c, INFINITY);
    expect_dec(RF_E5M2, 0xfc, -INFINITY);
    expect_dec(RF_E5M2, 0x7d, NAN);
    expect_dec(RF_E5M2, 0x01, 0x1p-16f);
}

/* Every code decodes like the reference, and every non-NaN code round-trips. */
static void test_all_codes(void **state)
{
    (void)state;
    for (int f = 0; f < RF_NUM; f++) {
        for (uint32_t c = 0; c < ncodes(f); c++) {
            double want = ref_decode(f, c);
            float got = cvt_to_float(f, c);
            if (isnan(want) ? !isnan(got) : (double)got != want || !signbit(got) != !signbit(want))
                fail_msg("fmt %d: decode 0x%x gives %a, want %a", f, c, (double)got, want);
            uint32_t back = cvt_from_float(f, got);
            if (back != ref_cvt(f, got))
                fail_msg("fmt %d: re-encode 0x%x gives 0x%x, want 0x%x", f, c, back,
                         ref_cvt(f, got));
            if (!isnan(want) && !isinf(want) && back != c)
                fail_msg("fmt %d: 0x%x does not round-trip (0x%x)", f, c, back);
        }
    }
}

static void check_enc(enum ref_fmt f, float x)
{
    uint32_t got = cvt_from_float(f, x), want = ref_cvt(f, x);
    if (got != want)
        fail_msg("fmt %d: encode %a gives 0x%x, want 0x%x", f, (double)x, got, want);
}

/* Each midpoint between neighbours, and the floats just around it, for both signs. */
static void test_midpoints(void **state)
{
    (void)state;
    for (int f = 0; f < RF_NUM; f++) {
        for (uint32_t c = 0; c < ref_fmts[f].maxfin; c++) {
            float lo = (float)ref_decode(f, c), hi = (float)ref_decode(f, c + 1);
            float mid = lo + (hi - lo) / 2; /* exact: few significant bits */
            float pts[] = {mid, nextafterf(mid, 0), nextafterf(mid, INFINITY), lo, hi};
            for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
                check_enc(f, pts[i]);
                check_enc(f, -pts[i]);
            }
        }
    }
}

/* Random bit patterns: every exponent, subnormals, NaN payloads, infinities. */
static void test_random_floats(void **state)
{
    (void)state;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 2000000; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint32_t u = (uint32_t)(s >> 16);
        float x;
        if (i & 1) /* half of them near the fp8/fp16 ranges */
            u = (u & 0x807fffffu) | ((100u + (u >> 23) % 50u) << 23);
        memcpy(&x, &u, 4);
        for (int f = 0; f < RF_NUM; f++)
            check_enc(f, x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_f16_hand_values),  cmocka_unit_test(test_bf16_hand_values),
            cmocka_unit_test(test_e4m3_hand_values), cmocka_unit_test(test_e5m2_hand_values),
            cmocka_unit_test(test_all_codes),        cmocka_unit_test(test_midpoints),
            cmocka_unit_test(test_random_floats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

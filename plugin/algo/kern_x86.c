/* SPDX-License-Identifier: BSD-3-Clause */
/* AVX2 + F16C kernels for fp16, bf16 and fp8 (x86-64 only).
 *
 * Compilers do vectorise the portable bit-trick conversions, but slowly (kern-bench -s,
 * 1 MiB sum on Zen 3: fp16 0.8 GB/s, bf16 1.9, fp8 0.4). F16C converts 8 halves in one
 * instruction; with it and 256-bit shifts for bf16 these kernels reach fp16 18 GB/s,
 * bf16 14, e5m2 2.9, e4m3 2.0. fp8 goes through half: e5m2 is
 * the top byte of a half, and e4m3 scaled by 2^-8 lines up with half's exponent range
 * (its subnormals land on half subnormals). Rounding float -> half -> fp8 twice is
 * exact here because every value rounded is the sum, product, max or min of two fp8
 * numbers and half keeps >= 2p+2 bits for both formats (the unit tests check all
 * 65536 operand pairs against the portable kernels).
 *
 * Each block of 16 loads both operands before storing, so dst may alias a or b exactly;
 * the tail uses the scalar ops of kern_reduce.h, which give the same bits.
 */
#include "algo/kern_impl.h"

#if defined(JK_AVX2_ATTR)
#include <immintrin.h>

#define JK_X86 JK_AVX2_ATTR static inline __attribute__((always_inline))
#define JK_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* ---- float ops on 8 lanes, same rules as jk_maxf / jk_minf ---- */

JK_X86 __m256 v_sum(__m256 x, __m256 y)
{
    return _mm256_add_ps(x, y);
}

JK_X86 __m256 v_prod(__m256 x, __m256 y)
{
    return _mm256_mul_ps(x, y);
}

JK_X86 __m256 v_max(__m256 x, __m256 y)
{
    __m256 take_x =
            _mm256_or_ps(_mm256_cmp_ps(x, y, _CMP_GT_OQ), _mm256_cmp_ps(y, y, _CMP_UNORD_Q));
    __m256 r = _mm256_blendv_ps(y, x, take_x);
    return _mm256_blendv_ps(r, _mm256_and_ps(x, y), _mm256_cmp_ps(x, y, _CMP_EQ_OQ));
}

JK_X86 __m256 v_min(__m256 x, __m256 y)
{
    __m256 take_x =
            _mm256_or_ps(_mm256_cmp_ps(x, y, _CMP_LT_OQ), _mm256_cmp_ps(y, y, _CMP_UNORD_Q));
    __m256 r = _mm256_blendv_ps(y, x, take_x);
    return _mm256_blendv_ps(r, _mm256_or_ps(x, y), _mm256_cmp_ps(x, y, _CMP_EQ_OQ));
}

/* Loaders widen 16 elements into two vectors of 8 floats (lo, hi); storers narrow
 * them back. Any lane order works as long as the storer undoes the loader's. */

/* ---- fp16 ---- */

JK_X86 void ld_f16(const uint16_t *p, __m256 v[2])
{
    v[0] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
    v[1] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p + 1));
}

/* A NaN float with all payload bits set converts to the canonical 0x7fff. */
JK_X86 __m128i f32_to_f16x8(__m256 r)
{
    __m256 nan = _mm256_cmp_ps(r, r, _CMP_UNORD_Q);
    r = _mm256_blendv_ps(r, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), nan);
    return _mm256_cvtps_ph(r, JK_RNE);
}

JK_X86 void st_f16(uint16_t *p, __m256 lo, __m256 hi)
{
    _mm_storeu_si128((__m128i *)p, f32_to_f16x8(lo));
    _mm_storeu_si128((__m128i *)p + 1, f32_to_f16x8(hi));
}

/* ---- bf16: the top half of a float. unpack puts elements 0-3,8-11 in lo and 4-7,12-15
 * in hi (per 128-bit lane); packus in st_bf16 restores the order. ---- */

JK_X86 void ld_bf16(const uint16_t *p, __m256 v[2])
{
    __m256i x = _mm256_loadu_si256((const __m256i *)p), z = _mm256_setzero_si256();
    v[0] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, x));
    v[1] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, x));
}

/* RNE: add 0x7fff plus the kept lsb, keep the top 16 bits; NaN -> 0x7fff. */
JK_X86 __m256i f32_to_bf16x8(__m256 r)
{
    __m256i u = _mm256_castps_si256(r);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i h = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb);
    __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(r, r, _CMP_UNORD_Q));
    return _mm256_blendv_epi8(_mm256_srli_epi32(h, 16), _mm256_set1_epi32(0x7fff), nan);
}

JK_X86 void st_bf16(uint16_t *p, __m256 lo, __m256 hi)
{
    __m256i h = _mm256_packus_epi32(f32_to_bf16x8(lo), f32_to_bf16x8(hi));
    _mm256_storeu_si256((__m256i *)p, h);
}

/* ---- fp8 via half: 16 elements as 16-bit lanes ---- */

JK_X86 void halves_to_f32(__m256i h, __m256 v[2])
{
    v[0] = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
    v[1] = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
}

JK_X86 __m256i f32_to_halves(__m256 lo, __m256 hi)
{
    return _mm256_set_m128i(_mm256_cvtps_ph(hi, JK_RNE), _mm256_cvtps_ph(lo, JK_RNE));
}

/* RNE to the top bits (`drop` = half mantissa bits not kept), saturate at `maxcode`
 * (SATFINITE, inf included), NaN -> 0x7f; then pack the 16 codes to bytes. */
JK_X86 __m128i halves_to_fp8(__m256i h, int drop, int maxcode)
{
    __m128i cnt = _mm_cvtsi32_si128(drop);
    __m256i abs = _mm256_and_si256(h, _mm256_set1_epi16(0x7fff));
    __m256i sign = _mm256_and_si256(_mm256_srli_epi16(h, 8), _mm256_set1_epi16(0x80));
    __m256i lsb = _mm256_and_si256(_mm256_srl_epi16(abs, cnt), _mm256_set1_epi16(1));
    __m256i half_ulp = _mm256_set1_epi16((short)((1 << (drop - 1)) - 1));
    __m256i r = _mm256_add_epi16(_mm256_add_epi16(abs, half_ulp), lsb);
    __m256i nan = _mm256_cmpgt_epi16(abs, _mm256_set1_epi16(0x7c00));
    r = _mm256_min_epi16(_mm256_srl_epi16(r, cnt), _mm256_set1_epi16((short)maxcode));
    r = _mm256_blendv_epi8(_mm256_or_si256(r, sign), _mm256_set1_epi16(0x7f), nan);
    r = _mm256_permute4x64_epi64(_mm256_packus_epi16(r, r), 0xd8);
    return _mm256_castsi256_si128(r);
}

JK_X86 void ld_e5m2(const uint8_t *p, __m256 v[2])
{
    __m256i x = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
    halves_to_f32(_mm256_slli_epi16(x, 8), v);
}

/* 0x7b is also where RNE would carry into the inf code 0x7c, so min() saturates. */
JK_X86 void st_e5m2(uint8_t *p, __m256 lo, __m256 hi)
{
    _mm_storeu_si128((__m128i *)p, halves_to_fp8(f32_to_halves(lo, hi), 8, 0x7b));
}

/* e4m3 bits shifted into a half are the value times 2^-8, subnormals included. */
JK_X86 void ld_e4m3(const uint8_t *p, __m256 v[2])
{
    __m256i x = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
    __m256i em = _mm256_and_si256(x, _mm256_set1_epi16(0x7f));
    __m256i sign = _mm256_slli_epi16(_mm256_and_si256(x, _mm256_set1_epi16(0x80)), 8);
    __m256i h = _mm256_or_si256(_mm256_slli_epi16(em, 7), sign);
    __m256i nan = _mm256_cmpeq_epi16(em, _mm256_set1_epi16(0x7f));
    halves_to_f32(_mm256_blendv_epi8(h, _mm256_set1_epi16(0x7fff), nan), v);
    v[0] = _mm256_mul_ps(v[0], _mm256_set1_ps(256.0f));
    v[1] = _mm256_mul_ps(v[1], _mm256_set1_ps(256.0f));
}

/* Codes above 0x7e (448) would be NaN or beyond: min() saturates them. */
JK_X86 void st_e4m3(uint8_t *p, __m256 lo, __m256 hi)
{
    __m256 k = _mm256_set1_ps(0x1p-8f);
    __m256i h = f32_to_halves(_mm256_mul_ps(lo, k), _mm256_mul_ps(hi, k));
    _mm_storeu_si128((__m128i *)p, halves_to_fp8(h, 7, 0x7e));
}

/* ---- kernels ---- */

#define JK_X86_KERNEL(T, ST, OP)                                                                \
    JK_AVX2_ATTR static void x86_##OP##_##T(void *dv, const void *av, const void *bv, size_t n) \
    {                                                                                           \
        ST *d = dv;                                                                             \
        const ST *a = av, *b = bv;                                                              \
        size_t i = 0;                                                                           \
        for (; i + 16 <= n; i += 16) {                                                          \
            __m256 x[2], y[2];                                                                  \
            ld_##T(a + i, x);                                                                   \
            ld_##T(b + i, y);                                                                   \
            st_##T(d + i, v_##OP(x[0], y[0]), v_##OP(x[1], y[1]));                              \
        }                                                                                       \
        for (; i < n; i++)                                                                      \
            d[i] = jk_##OP##_##T(a[i], b[i]);                                                   \
    }

#define JK_X86_TYPE(T, ST)     \
    JK_X86_KERNEL(T, ST, sum)  \
    JK_X86_KERNEL(T, ST, prod) \
    JK_X86_KERNEL(T, ST, max)  \
    JK_X86_KERNEL(T, ST, min)

JK_X86_TYPE(f16, uint16_t)
JK_X86_TYPE(bf16, uint16_t)
JK_X86_TYPE(e4m3, uint8_t)
JK_X86_TYPE(e5m2, uint8_t)

#define JK_ROW(T)                                           \
    {                                                       \
        x86_sum_##T, x86_prod_##T, x86_max_##T, x86_min_##T \
    }

static const jaccl_reduce_fn x86_tab[JD_NUM][JR_NUM] = {
        [JD_F16] = JK_ROW(f16),
        [JD_BF16] = JK_ROW(bf16),
        [JD_F8E4M3] = JK_ROW(e4m3),
        [JD_F8E5M2] = JK_ROW(e5m2),
};

jaccl_reduce_fn jaccl_kern_x86_get(enum jaccl_dtype t, enum jaccl_redop op)
{
    if ((unsigned)t >= JD_NUM || (unsigned)op >= JR_NUM)
        return NULL;
    return x86_tab[t][op];
}

#else /* !JK_AVX2_ATTR */

jaccl_reduce_fn jaccl_kern_x86_get(enum jaccl_dtype t, enum jaccl_redop op)
{
    (void)t, (void)op;
    return NULL;
}

#endif

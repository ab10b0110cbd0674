/* SPDX-License-Identifier: BSD-3-Clause */
/* The reduction kernels' internals, shared by the kern_*.c files, their unit tests and the
 * CollNet test harness (which builds exact floating test data with the conversions): the ISA
 * families, the per-family getters and the scalar element operations. Everything else includes
 * only kern_reduce.h. */
#ifndef JACCL_ALGO_KERN_IMPL_H
#define JACCL_ALGO_KERN_IMPL_H

#include "algo/kern_reduce.h"

/* Which build of the kernels a family getter returns. AVX2 implies F16C here:
 * every AVX2 CPU has it, and the dispatcher checks both. */
enum jaccl_kern_isa { JK_ISA_BASE, JK_ISA_AVX2, JK_ISA_NUM };

/* Nonzero if this CPU and OS can run the AVX2 (+F16C) build. */
int jaccl_kern_have_avx2(void);

/* Each returns NULL for a pair outside its family or without a kernel for `isa`. */
jaccl_reduce_fn jaccl_kern_int_get(enum jaccl_dtype t, enum jaccl_redop op,
                                   enum jaccl_kern_isa isa);
jaccl_reduce_fn jaccl_kern_ieee_get(enum jaccl_dtype t, enum jaccl_redop op,
                                    enum jaccl_kern_isa isa);
/* fp16/bf16/fp8: the portable build, and (kern_x86.c) the AVX2+F16C one. */
jaccl_reduce_fn jaccl_kern_narrow_get(enum jaccl_dtype t, enum jaccl_redop op);
jaccl_reduce_fn jaccl_kern_x86_get(enum jaccl_dtype t, enum jaccl_redop op);

#if defined(__x86_64__)
#define JK_AVX2_ATTR __attribute__((target("avx2,f16c")))
#endif
#define JK_INLINE static inline __attribute__((always_inline))

/* One kernel per aliasing shape so every inner loop can use restrict and
 * vectorise without run-time overlap checks. Operand order is kept in all
 * shapes: with two NaN inputs x86 returns the first one's payload. */
#define JK_DEFINE(NAME, ATTR, T, OPFN)                                                             \
    ATTR static void NAME##_oop(T *restrict d, const T *restrict a, const T *restrict b, size_t n) \
    {                                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = OPFN(a[i], b[i]);                                                               \
    }                                                                                              \
    ATTR static void NAME##_acc(T *restrict d, const T *restrict b, size_t n)                      \
    {                                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = OPFN(d[i], b[i]);                                                               \
    }                                                                                              \
    ATTR static void NAME##_racc(T *restrict d, const T *restrict a, size_t n)                     \
    {                                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = OPFN(a[i], d[i]);                                                               \
    }                                                                                              \
    ATTR static void NAME##_self(T *d, size_t n)                                                   \
    {                                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = OPFN(d[i], d[i]);                                                               \
    }                                                                                              \
    static void NAME(void *d, const void *a, const void *b, size_t n)                              \
    {                                                                                              \
        if (d != a && d != b)                                                                      \
            NAME##_oop(d, a, b, n);                                                                \
        else if (d != b)                                                                           \
            NAME##_acc(d, b, n);                                                                   \
        else if (d != a)                                                                           \
            NAME##_racc(d, a, n);                                                                  \
        else                                                                                       \
            NAME##_self(d, n);                                                                     \
    }

JK_INLINE uint32_t jk_f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

JK_INLINE float jk_u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* c ? x : y without a branch. Plain ?: lets GCC sink the float arithmetic of the
 * unused arm into a branch, and with -ftrapping-math it then refuses to vectorise. */
JK_INLINE uint32_t jk_sel(int c, uint32_t x, uint32_t y)
{
    uint32_t m = 0u - (uint32_t)(c != 0);
    return (x & m) | (y & ~m);
}

/* max/min as documented above; written as selects so they vectorise. */
JK_INLINE float jk_maxf(float x, float y)
{
    float r = (x > y || y != y) ? x : y;
    return x == y ? jk_u2f(jk_f2u(x) & jk_f2u(y)) : r; /* +0 beats -0 */
}

JK_INLINE float jk_minf(float x, float y)
{
    float r = (x < y || y != y) ? x : y;
    return x == y ? jk_u2f(jk_f2u(x) | jk_f2u(y)) : r; /* -0 beats +0 */
}

/* fp16 -> float, exact. Normals and subnormals are rebuilt with an exponent
 * offset and one float subtraction that renormalises (no float denormals, so
 * DAZ cannot interfere). NaN keeps its payload; it is canonicalised on the way back. */
JK_INLINE float jk_f16_to_f32(uint16_t h)
{
    uint32_t mag = (uint32_t)(h & 0x7fffu) << 13;
    uint32_t exp = mag & 0x0f800000u;
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t norm = mag + 0x38000000u;                           /* rebias 15 -> 127 */
    uint32_t special = mag + 0x70000000u;                        /* inf/NaN: exponent 255 */
    uint32_t sub = jk_f2u(jk_u2f(mag + 0x38800000u) - 0x1p-14f); /* m * 2^-24 */
    uint32_t r = jk_sel(exp == 0x0f800000u, special, jk_sel(exp == 0, sub, norm));
    return jk_u2f(r | sign);
}

/* float -> fp16, round to nearest even, overflow to inf, NaN -> 0x7fff. */
JK_INLINE uint16_t jk_f32_to_f16(float f)
{
    uint32_t u = jk_f2u(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    /* Below 2^-14 the result is subnormal: adding 0.5 (ulp 2^-24) makes the float
     * adder round the value to a multiple of 2^-24 in the low mantissa bits. */
    uint32_t sub = jk_f2u(jk_u2f(a) + 0.5f) - 0x3f000000u;
    /* Normal: rebias and add half an ulp (minus one unless the kept lsb is odd). */
    uint32_t norm = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    uint32_t r = jk_sel(a < 0x38800000u, sub, norm);
    r = jk_sel(a >= 0x47800000u, 0x7c00u, r); /* >= 2^16: inf (65520..65536 carry into it) */
    return (uint16_t)jk_sel(a > 0x7f800000u, 0x7fffu, r | sign);
}

/* bf16 is the top half of a float. */
JK_INLINE float jk_bf16_to_f32(uint16_t h)
{
    return jk_u2f((uint32_t)h << 16);
}

/* float -> bf16, round to nearest even (overflow carries into inf), NaN -> 0x7fff. */
JK_INLINE uint16_t jk_f32_to_bf16(float f)
{
    uint32_t u = jk_f2u(f);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (uint16_t)jk_sel((u & 0x7fffffffu) > 0x7f800000u, 0x7fffu, r);
}

/* fp8 e4m3 ("fn": bias 7, no inf, NaN = S.1111.111) -> float, exact. */
JK_INLINE float jk_e4m3_to_f32(uint8_t x)
{
    uint32_t em = x & 0x7fu;
    uint32_t sign = (uint32_t)(x & 0x80u) << 24;
    uint32_t norm = (em << 20) + 0x3c000000u; /* rebias 7 -> 127 */
    uint32_t sub = jk_f2u((float)(int32_t)em * 0x1p-9f);
    uint32_t r = jk_sel(em < 8u, sub, norm);
    return jk_u2f(jk_sel(em == 0x7fu, 0x7fc00000u, r | sign));
}

/* fp8 e5m2 (IEEE-like, bias 15) is the top byte of an fp16. */
JK_INLINE float jk_e5m2_to_f32(uint8_t x)
{
    return jk_f16_to_f32((uint16_t)(x << 8));
}

/* float -> fp8 with RNE and CUDA's SATFINITE: |x| past the rounding range of the
 * largest finite value (inf included) gives +-max, NaN gives 0x7f. `mbits` is the
 * number of stored mantissa bits, `bias` the exponent bias, `sat` the float bits of
 * the first magnitude that saturates, `maxv` the max finite code. */
JK_INLINE uint8_t jk_f32_to_fp8(float f, unsigned mbits, unsigned bias, uint32_t sat, uint32_t maxv)
{
    uint32_t u = jk_f2u(f);
    uint32_t sign = (u >> 24) & 0x80u;
    uint32_t a = u & 0x7fffffffu;
    unsigned drop = 23u - mbits;
    uint32_t minnorm = (128u - bias) << 23;                  /* 2^(1-bias) */
    uint32_t magic = (127u + 1u - bias - mbits + 23u) << 23; /* ulp = smallest subnormal */
    uint32_t sub = jk_f2u(jk_u2f(a) + jk_u2f(magic)) - magic;
    uint32_t norm =
            (a - ((127u - bias) << 23) + ((1u << (drop - 1)) - 1u) + ((a >> drop) & 1u)) >> drop;
    uint32_t r = jk_sel(a < minnorm, sub, norm);
    r = jk_sel(a >= sat, maxv, r);
    return (uint8_t)jk_sel(a > 0x7f800000u, 0x7fu, r | sign);
}

/* e4m3: 464 = 448 + half an ulp is a tie that rounds to even (448); above saturates. */
JK_INLINE uint8_t jk_f32_to_e4m3(float f)
{
    return jk_f32_to_fp8(f, 3, 7, 0x43e80001u, 0x7eu);
}

/* e5m2: 61440 = 57344 + half an ulp would round up to inf, so it already saturates. */
JK_INLINE uint8_t jk_f32_to_e5m2(float f)
{
    return jk_f32_to_fp8(f, 2, 15, 0x47700000u, 0x7bu);
}

JK_INLINE float jk_addf(float x, float y)
{
    return x + y;
}

JK_INLINE float jk_mulf(float x, float y)
{
    return x * y;
}

/* Scalar narrow ops, e.g. jk_sum_f16(x, y): widen, apply the float op, narrow. */
#define JK_NARROW_OP(NAME, ST, TO, FROM, FOP) \
    JK_INLINE ST NAME(ST x, ST y)             \
    {                                         \
        return FROM(FOP(TO(x), TO(y)));       \
    }
#define JK_NARROW_OPS(T, ST, TO, FROM)               \
    JK_NARROW_OP(jk_sum_##T, ST, TO, FROM, jk_addf)  \
    JK_NARROW_OP(jk_prod_##T, ST, TO, FROM, jk_mulf) \
    JK_NARROW_OP(jk_max_##T, ST, TO, FROM, jk_maxf)  \
    JK_NARROW_OP(jk_min_##T, ST, TO, FROM, jk_minf)

JK_NARROW_OPS(f16, uint16_t, jk_f16_to_f32, jk_f32_to_f16)
JK_NARROW_OPS(bf16, uint16_t, jk_bf16_to_f32, jk_f32_to_bf16)
JK_NARROW_OPS(e4m3, uint8_t, jk_e4m3_to_f32, jk_f32_to_e4m3)
JK_NARROW_OPS(e5m2, uint8_t, jk_e5m2_to_f32, jk_f32_to_e5m2)

#endif /* JACCL_ALGO_KERN_IMPL_H */

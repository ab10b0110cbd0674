/* fp16, bf16 and fp8 (e4m3, e5m2) reduction kernels.
 *
 * Each element widens to float, is combined in float and rounds back once (see
 * kern_reduce.h for why that matches NCCL bit for bit). The conversions are
 * branch-free selects, so the same C vectorises for SSE2 and for AVX2.
 */
#define JACCL_KERN_INTERNAL
#include "algo/kern_reduce.h"

/* NAME(x, y) on storage type ST: widen with TO, apply FOP in float, narrow with FROM. */
#define JK_NARROW_OP(NAME, ST, TO, FROM, FOP)                                                      \
    JK_INLINE ST NAME(ST x, ST y)                                                                  \
    {                                                                                              \
        return FROM(FOP(TO(x), TO(y)));                                                            \
    }

JK_INLINE float jk_addf(float x, float y)
{
    return x + y;
}

JK_INLINE float jk_mulf(float x, float y)
{
    return x * y;
}

#define JK_NARROW_OPS(T, ST, TO, FROM)                                                             \
    JK_NARROW_OP(sum_##T, ST, TO, FROM, jk_addf)                                                   \
    JK_NARROW_OP(prod_##T, ST, TO, FROM, jk_mulf)                                                  \
    JK_NARROW_OP(max_##T, ST, TO, FROM, jk_maxf)                                                   \
    JK_NARROW_OP(min_##T, ST, TO, FROM, jk_minf)

JK_NARROW_OPS(f16, uint16_t, jk_f16_to_f32, jk_f32_to_f16)
JK_NARROW_OPS(bf16, uint16_t, jk_bf16_to_f32, jk_f32_to_bf16)
JK_NARROW_OPS(e4m3, uint8_t, jk_e4m3_to_f32, jk_f32_to_e4m3)
JK_NARROW_OPS(e5m2, uint8_t, jk_e5m2_to_f32, jk_f32_to_e5m2)

#define JK_NARROW_TYPE(T, ST, S, ATTR)                                                             \
    JK_DEFINE(k_sum_##T##S, ATTR, ST, sum_##T)                                                     \
    JK_DEFINE(k_prod_##T##S, ATTR, ST, prod_##T)                                                   \
    JK_DEFINE(k_max_##T##S, ATTR, ST, max_##T)                                                     \
    JK_DEFINE(k_min_##T##S, ATTR, ST, min_##T)

#define JK_NARROW_KERNELS(S, ATTR)                                                                 \
    JK_NARROW_TYPE(f16, uint16_t, S, ATTR)                                                         \
    JK_NARROW_TYPE(bf16, uint16_t, S, ATTR)                                                        \
    JK_NARROW_TYPE(e4m3, uint8_t, S, ATTR)                                                         \
    JK_NARROW_TYPE(e5m2, uint8_t, S, ATTR)

#define JK_ROW(T, S) {k_sum_##T##S, k_prod_##T##S, k_max_##T##S, k_min_##T##S}
#define JK_NARROW_TABLE(S)                                                                         \
    {                                                                                              \
        [JD_F16] = JK_ROW(f16, S), [JD_BF16] = JK_ROW(bf16, S),                                    \
        [JD_F8E4M3] = JK_ROW(e4m3, S), [JD_F8E5M2] = JK_ROW(e5m2, S),                              \
    }

JK_NARROW_KERNELS(_base, )
#if defined(JK_AVX2_ATTR)
JK_NARROW_KERNELS(_avx2, JK_AVX2_ATTR)
#endif

static const jaccl_reduce_fn narrow_tab[JK_ISA_NUM][JD_NUM][JR_NUM] = {
        [JK_ISA_BASE] = JK_NARROW_TABLE(_base),
#if defined(JK_AVX2_ATTR)
        [JK_ISA_AVX2] = JK_NARROW_TABLE(_avx2),
#endif
};

jaccl_reduce_fn jaccl_kern_narrow_get(enum jaccl_dtype t, enum jaccl_redop op,
                                      enum jaccl_kern_isa isa)
{
    if ((unsigned)t >= JD_NUM || (unsigned)op >= JR_NUM || (unsigned)isa >= JK_ISA_NUM)
        return NULL;
    return narrow_tab[isa][t][op];
}

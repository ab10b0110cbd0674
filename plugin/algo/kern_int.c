/* SPDX-License-Identifier: BSD-3-Clause */
/* Integer reduction kernels (int8..uint64).
 *
 * Sum and prod wrap around. They run on the unsigned type of the same width:
 * two's complement makes the bits identical for signed inputs, and unsigned
 * overflow is defined where signed overflow is not. Max and min need signedness.
 */
#include "algo/kern_impl.h"

#define JK_ADD(x, y) ((x) + (y))
#define JK_MUL(x, y) ((x) * (y))
#define JK_MAX(x, y) ((x) > (y) ? (x) : (y))
#define JK_MIN(x, y) ((x) < (y) ? (x) : (y))

/* u8 * u8 promotes to int, and 255 * 255 fits, so no signed overflow there. */
#define JK_INT_KERNELS(S, ATTR)                    \
    JK_DEFINE(sum_u8##S, ATTR, uint8_t, JK_ADD)    \
    JK_DEFINE(prod_u8##S, ATTR, uint8_t, JK_MUL)   \
    JK_DEFINE(max_i8##S, ATTR, int8_t, JK_MAX)     \
    JK_DEFINE(min_i8##S, ATTR, int8_t, JK_MIN)     \
    JK_DEFINE(max_u8##S, ATTR, uint8_t, JK_MAX)    \
    JK_DEFINE(min_u8##S, ATTR, uint8_t, JK_MIN)    \
    JK_DEFINE(sum_u32##S, ATTR, uint32_t, JK_ADD)  \
    JK_DEFINE(prod_u32##S, ATTR, uint32_t, JK_MUL) \
    JK_DEFINE(max_i32##S, ATTR, int32_t, JK_MAX)   \
    JK_DEFINE(min_i32##S, ATTR, int32_t, JK_MIN)   \
    JK_DEFINE(max_u32##S, ATTR, uint32_t, JK_MAX)  \
    JK_DEFINE(min_u32##S, ATTR, uint32_t, JK_MIN)  \
    JK_DEFINE(sum_u64##S, ATTR, uint64_t, JK_ADD)  \
    JK_DEFINE(prod_u64##S, ATTR, uint64_t, JK_MUL) \
    JK_DEFINE(max_i64##S, ATTR, int64_t, JK_MAX)   \
    JK_DEFINE(min_i64##S, ATTR, int64_t, JK_MIN)   \
    JK_DEFINE(max_u64##S, ATTR, uint64_t, JK_MAX)  \
    JK_DEFINE(min_u64##S, ATTR, uint64_t, JK_MIN)

#define JK_INT_TABLE(S)                                               \
    {                                                                 \
        [JD_I8] = {sum_u8##S, prod_u8##S, max_i8##S, min_i8##S},      \
        [JD_U8] = {sum_u8##S, prod_u8##S, max_u8##S, min_u8##S},      \
        [JD_I32] = {sum_u32##S, prod_u32##S, max_i32##S, min_i32##S}, \
        [JD_U32] = {sum_u32##S, prod_u32##S, max_u32##S, min_u32##S}, \
        [JD_I64] = {sum_u64##S, prod_u64##S, max_i64##S, min_i64##S}, \
        [JD_U64] = {sum_u64##S, prod_u64##S, max_u64##S, min_u64##S}, \
    }

JK_INT_KERNELS(_base, )
#if defined(JK_AVX2_ATTR)
JK_INT_KERNELS(_avx2, JK_AVX2_ATTR)
#endif

static const jaccl_reduce_fn int_tab[JK_ISA_NUM][JD_NUM][JR_NUM] = {
        [JK_ISA_BASE] = JK_INT_TABLE(_base),
#if defined(JK_AVX2_ATTR)
        [JK_ISA_AVX2] = JK_INT_TABLE(_avx2),
#endif
};

jaccl_reduce_fn jaccl_kern_int_get(enum jaccl_dtype t, enum jaccl_redop op, enum jaccl_kern_isa isa)
{
    if ((unsigned)t >= JD_NUM || (unsigned)op >= JR_NUM || (unsigned)isa >= JK_ISA_NUM)
        return NULL;
    return int_tab[isa][t][op];
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* fp16, bf16 and fp8 (e4m3, e5m2) reduction kernels, portable build.
 *
 * Each element widens to float, is combined in float and rounds back once (see
 * kern_reduce.h for why that matches NCCL bit for bit). The conversions are
 * branch-free selects, so compilers vectorise them (SSE2, NEON); on x86-64 CPUs
 * with AVX2 kern_x86.c replaces these with F16C-based kernels.
 */
#include "algo/kern_impl.h"

#define JK_NARROW_TYPE(T, ST)                \
    JK_DEFINE(k_sum_##T, , ST, jk_sum_##T)   \
    JK_DEFINE(k_prod_##T, , ST, jk_prod_##T) \
    JK_DEFINE(k_max_##T, , ST, jk_max_##T)   \
    JK_DEFINE(k_min_##T, , ST, jk_min_##T)

JK_NARROW_TYPE(f16, uint16_t)
JK_NARROW_TYPE(bf16, uint16_t)
JK_NARROW_TYPE(e4m3, uint8_t)
JK_NARROW_TYPE(e5m2, uint8_t)

#define JK_ROW(T)                                   \
    {                                               \
        k_sum_##T, k_prod_##T, k_max_##T, k_min_##T \
    }

static const jaccl_reduce_fn narrow_tab[JD_NUM][JR_NUM] = {
        [JD_F16] = JK_ROW(f16),
        [JD_BF16] = JK_ROW(bf16),
        [JD_F8E4M3] = JK_ROW(e4m3),
        [JD_F8E5M2] = JK_ROW(e5m2),
};

jaccl_reduce_fn jaccl_kern_narrow_get(enum jaccl_dtype t, enum jaccl_redop op)
{
    if ((unsigned)t >= JD_NUM || (unsigned)op >= JR_NUM)
        return NULL;
    return narrow_tab[t][op];
}

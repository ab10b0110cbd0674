/* SPDX-License-Identifier: BSD-3-Clause */
/* float and double reduction kernels: plain IEEE sum/prod, NCCL-style max/min. */
#include "algo/kern_impl.h"

JK_INLINE uint64_t jk_d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

JK_INLINE double jk_u2d(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* Same rules as jk_maxf/jk_minf: NaN loses to a number, +0 > -0. */
JK_INLINE double jk_maxd(double x, double y)
{
    double r = (x > y || y != y) ? x : y;
    return x == y ? jk_u2d(jk_d2u(x) & jk_d2u(y)) : r;
}

JK_INLINE double jk_mind(double x, double y)
{
    double r = (x < y || y != y) ? x : y;
    return x == y ? jk_u2d(jk_d2u(x) | jk_d2u(y)) : r;
}

#define JK_ADD(x, y) ((x) + (y))
#define JK_MUL(x, y) ((x) * (y))

#define JK_IEEE_KERNELS(S, ATTR)                 \
    JK_DEFINE(sum_f32##S, ATTR, float, JK_ADD)   \
    JK_DEFINE(prod_f32##S, ATTR, float, JK_MUL)  \
    JK_DEFINE(max_f32##S, ATTR, float, jk_maxf)  \
    JK_DEFINE(min_f32##S, ATTR, float, jk_minf)  \
    JK_DEFINE(sum_f64##S, ATTR, double, JK_ADD)  \
    JK_DEFINE(prod_f64##S, ATTR, double, JK_MUL) \
    JK_DEFINE(max_f64##S, ATTR, double, jk_maxd) \
    JK_DEFINE(min_f64##S, ATTR, double, jk_mind)

#define JK_IEEE_TABLE(S)                                              \
    {                                                                 \
        [JD_F32] = {sum_f32##S, prod_f32##S, max_f32##S, min_f32##S}, \
        [JD_F64] = {sum_f64##S, prod_f64##S, max_f64##S, min_f64##S}, \
    }

JK_IEEE_KERNELS(_base, )
#if defined(JK_AVX2_ATTR)
JK_IEEE_KERNELS(_avx2, JK_AVX2_ATTR)
#endif

static const jaccl_reduce_fn ieee_tab[JK_ISA_NUM][JD_NUM][JR_NUM] = {
        [JK_ISA_BASE] = JK_IEEE_TABLE(_base),
#if defined(JK_AVX2_ATTR)
        [JK_ISA_AVX2] = JK_IEEE_TABLE(_avx2),
#endif
};

jaccl_reduce_fn jaccl_kern_ieee_get(enum jaccl_dtype t, enum jaccl_redop op,
                                    enum jaccl_kern_isa isa)
{
    if ((unsigned)t >= JD_NUM || (unsigned)op >= JR_NUM || (unsigned)isa >= JK_ISA_NUM)
        return NULL;
    return ieee_tab[isa][t][op];
}

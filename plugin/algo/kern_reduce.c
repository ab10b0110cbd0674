/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduction kernel dispatch: names, sizes, and the choice between the portable
 * and the AVX2 build of each kernel family. */
#include "algo/kern_impl.h"

#if defined(JK_AVX2_ATTR)
#include <cpuid.h>
#endif

static int force_scalar;

static const struct {
    const char *name;
    size_t size;
} dtypes[JD_NUM] = {
        [JD_I8] = {"int8", 1},       [JD_U8] = {"uint8", 1},      [JD_I32] = {"int32", 4},
        [JD_U32] = {"uint32", 4},    [JD_I64] = {"int64", 8},     [JD_U64] = {"uint64", 8},
        [JD_F16] = {"float16", 2},   [JD_F32] = {"float32", 4},   [JD_F64] = {"float64", 8},
        [JD_BF16] = {"bfloat16", 2}, [JD_F8E4M3] = {"f8e4m3", 1}, [JD_F8E5M2] = {"f8e5m2", 1},
};

static const char *const redops[JR_NUM] = {"sum", "prod", "max", "min"};

size_t jaccl_dtype_size(enum jaccl_dtype t)
{
    return (unsigned)t < JD_NUM ? dtypes[t].size : 0;
}

const char *jaccl_dtype_name(enum jaccl_dtype t)
{
    return (unsigned)t < JD_NUM ? dtypes[t].name : "invalid";
}

const char *jaccl_redop_name(enum jaccl_redop op)
{
    return (unsigned)op < JR_NUM ? redops[op] : "invalid";
}

void jaccl_kern_force_scalar(int on)
{
    __atomic_store_n(&force_scalar, on, __ATOMIC_RELAXED);
}

/* __builtin_cpu_supports("avx2") also checks that the OS saves YMM state; F16C
 * comes from CPUID directly because not every compiler knows the name. The answer
 * is cached: CPUID traps to the hypervisor in a VM, and lookups happen per call. */
int jaccl_kern_have_avx2(void)
{
#if defined(JK_AVX2_ATTR)
    static int cached = -1; /* racing first callers compute the same value */
    int have = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    unsigned int a, b, c, d;

    if (have < 0) {
        __builtin_cpu_init(); /* idempotent; needed if we run before libgcc's constructor */
        have = __builtin_cpu_supports("avx2") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
        __atomic_store_n(&cached, have, __ATOMIC_RELAXED);
    }
    return have;
#else
    return 0;
#endif
}

/* The AVX2 build is only a speed-up: the portable one gives the same bits. */
static enum jaccl_kern_isa pick_isa(void)
{
    if (__atomic_load_n(&force_scalar, __ATOMIC_RELAXED))
        return JK_ISA_BASE;
    return jaccl_kern_have_avx2() ? JK_ISA_AVX2 : JK_ISA_BASE;
}

jaccl_reduce_fn jaccl_reduce_fn_get(enum jaccl_dtype t, enum jaccl_redop op)
{
    enum jaccl_kern_isa isa = pick_isa();
    jaccl_reduce_fn fn = jaccl_kern_int_get(t, op, isa);

    if (!fn)
        fn = jaccl_kern_ieee_get(t, op, isa);
    if (!fn && isa == JK_ISA_AVX2)
        fn = jaccl_kern_x86_get(t, op);
    if (!fn)
        fn = jaccl_kern_narrow_get(t, op);
    return fn;
}

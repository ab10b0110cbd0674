/* Reduction kernel dispatch: names, sizes, and the choice between the portable
 * and the AVX2 build of each kernel family. */
#define JACCL_KERN_INTERNAL
#include "algo/kern_reduce.h"

static int force_scalar;

static const struct {
    const char *name;
    size_t size;
} dtypes[JD_NUM] = {
        [JD_I8] = {"int8", 1},       [JD_U8] = {"uint8", 1},     [JD_I32] = {"int32", 4},
        [JD_U32] = {"uint32", 4},    [JD_I64] = {"int64", 8},    [JD_U64] = {"uint64", 8},
        [JD_F16] = {"float16", 2},   [JD_F32] = {"float32", 4},  [JD_F64] = {"float64", 8},
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

/* The AVX2 build is only a speed-up: the portable one gives the same bits. */
static enum jaccl_kern_isa pick_isa(void)
{
    if (__atomic_load_n(&force_scalar, __ATOMIC_RELAXED))
        return JK_ISA_BASE;
#if defined(JK_AVX2_ATTR)
    __builtin_cpu_init(); /* idempotent; needed if we run before libgcc's constructor */
    if (__builtin_cpu_supports("avx2"))
        return JK_ISA_AVX2;
#endif
    return JK_ISA_BASE;
}

jaccl_reduce_fn jaccl_reduce_fn_get(enum jaccl_dtype t, enum jaccl_redop op)
{
    enum jaccl_kern_isa isa = pick_isa();
    jaccl_reduce_fn fn = jaccl_kern_int_get(t, op, isa);

    if (!fn)
        fn = jaccl_kern_ieee_get(t, op, isa);
    if (!fn)
        fn = jaccl_kern_narrow_get(t, op, isa);
    return fn;
}

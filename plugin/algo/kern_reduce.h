/* SPDX-License-Identifier: BSD-3-Clause */
/* Element-wise reduction kernels: dst[i] = a[i] OP b[i] on host buffers.
 *
 * The CollNet algorithms are written once and stay type-agnostic: they fetch one
 * jaccl_reduce_fn per (dtype, op) and call it on every received chunk.
 *
 * Semantics follow NCCL's device code, so a reduction done here gives the same bits
 * as the GPU would (NaN payloads of float/double aside):
 *  - integers wrap around (two's complement) for sum and prod;
 *  - float/double use plain IEEE sum/prod with round-to-nearest-even;
 *  - max/min for every floating type: a NaN operand loses to a number (like fmaxf),
 *    two NaNs give NaN, and +0 > -0 (like CUDA's __hmax), so max/min commute bitwise;
 *  - fp16, bf16, fp8 widen to float, compute, and round back to nearest-even once.
 *    That equals NCCL's native half/bf16 arithmetic and its fp8-via-half arithmetic,
 *    because float has >= 2p+2 bits for each of them (double rounding is innocuous);
 *  - fp16/bf16 overflow to inf; fp8 saturates like CUDA's __NV_SATFINITE, which
 *    NCCL's fp8 constructors use: anything beyond the largest finite value, inf
 *    included, becomes +-max (e4m3 448, e5m2 57344);
 *  - NaN results of fp16/bf16/fp8 are the GPU's canonical NaN: 0x7fff / 0x7f.
 * Buffers must be aligned to their element size. The kernels assume the default
 * floating-point environment (round to nearest, no flush-to-zero).
 */
#ifndef JACCL_ALGO_KERN_REDUCE_H
#define JACCL_ALGO_KERN_REDUCE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Same values as ncclDataType_t, so the caller casts instead of mapping. */
enum jaccl_dtype {
    JD_I8,
    JD_U8,
    JD_I32,
    JD_U32,
    JD_I64,
    JD_U64,
    JD_F16,
    JD_F32,
    JD_F64,
    JD_BF16,
    JD_F8E4M3,
    JD_F8E5M2,
    JD_NUM
};

/* Same values as ncclRedOp_t (Avg never reaches the network). */
enum jaccl_redop { JR_SUM, JR_PROD, JR_MAX, JR_MIN, JR_NUM };

/* dst[i] = a[i] OP b[i] for i < count. dst may be a or b exactly (or both), never a
 * partial overlap. Deterministic: the same inputs always give the same bits. */
typedef void (*jaccl_reduce_fn)(void *dst, const void *a, const void *b, size_t count);

size_t jaccl_dtype_size(enum jaccl_dtype t); /* 0 if invalid */
const char *jaccl_dtype_name(enum jaccl_dtype t);
const char *jaccl_redop_name(enum jaccl_redop op);

/* NULL for an invalid pair. Picks the AVX2 build on x86-64 CPUs that have it. */
jaccl_reduce_fn jaccl_reduce_fn_get(enum jaccl_dtype t, enum jaccl_redop op);

/* Test hook: nonzero makes later jaccl_reduce_fn_get calls return the portable build. */
void jaccl_kern_force_scalar(int on);

#endif /* JACCL_ALGO_KERN_REDUCE_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL's core enums and callback types, as a net plugin sees them (NCCL 2.28, x86-64).
 *
 * The names are NCCL's so that code reads like every other plugin; the numeric values are the
 * ABI and are pinned by tests/unit/test_abi_layout.c. Every enum here fits in an int, so each
 * is 4 bytes like NCCL's (nothing is built with -fshort-enums). */
#ifndef JACCL_NCCL_ABI_NCCL_TYPES_H
#define JACCL_NCCL_ABI_NCCL_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
    ncclNumResults = 8
} ncclResult_t;

/* The fp8 types (10, 11) exist since NCCL 2.24; NCCL queries reduceSupport for all 12. */
typedef enum {
    ncclInt8 = 0,
    ncclChar = 0,
    ncclUint8 = 1,
    ncclInt32 = 2,
    ncclInt = 2,
    ncclUint32 = 3,
    ncclInt64 = 4,
    ncclUint64 = 5,
    ncclFloat16 = 6,
    ncclHalf = 6,
    ncclFloat32 = 7,
    ncclFloat = 7,
    ncclFloat64 = 8,
    ncclDouble = 8,
    ncclBfloat16 = 9,
    ncclFloat8e4m3 = 10,
    ncclFloat8e5m2 = 11,
    ncclNumTypes = 12
} ncclDataType_t;

/* NCCL turns Avg (and PreMulSum) into Sum before the network sees them; ncclMaxRedOp only
 * forces the enum to be int-sized. */
typedef enum {
    ncclSum = 0,
    ncclProd = 1,
    ncclMax = 2,
    ncclMin = 3,
    ncclAvg = 4,
    ncclNumOps = 5,
    ncclMaxRedOp = 0x7fffffff
} ncclRedOp_t;

typedef enum {
    NCCL_LOG_NONE = 0,
    NCCL_LOG_VERSION = 1,
    NCCL_LOG_WARN = 2,
    NCCL_LOG_INFO = 3,
    NCCL_LOG_ABORT = 4,
    NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

/* Subsystem bits for the logger's flags argument. NCCL_ALL is -1 as an int and reaches the
 * logger as an all-ones unsigned long. */
typedef enum {
    NCCL_INIT = 0x1,
    NCCL_COLL = 0x2,
    NCCL_P2P = 0x4,
    NCCL_SHM = 0x8,
    NCCL_NET = 0x10,
    NCCL_GRAPH = 0x20,
    NCCL_TUNING = 0x40,
    NCCL_ENV = 0x80,
    NCCL_ALLOC = 0x100,
    NCCL_CALL = 0x200,
    NCCL_PROXY = 0x400,
    NCCL_NVLS = 0x800,
    NCCL_BOOTSTRAP = 0x1000,
    NCCL_REG = 0x2000,
    NCCL_PROFILE = 0x4000,
    NCCL_RAS = 0x8000,
    NCCL_ALL = ~0
} ncclDebugLogSubSys;

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                  int line, const char *fmt, ...);

/* Net profiler hook (v10+). On Start NCCL dereferences pHandle as its own proxy event, so a
 * plugin may only pass on the phandle NCCL gave to isend/irecv. Ignoring it is legal. */
typedef ncclResult_t (*ncclProfilerCallback_t)(void **eHandle, int type, void *pHandle,
                                               int64_t pluginId, void *extData);

/* Values of the callback's type argument. */
enum {
    ncclProfilerNetEventStart = 0,
    ncclProfilerNetEventStop = 1,
    ncclProfilerNetEventUpdate = 2,
    ncclProfilerNetEventUpdateAndStop = 3
};

/* High bits of pluginId: which transport's event layout extData has; low bits its version. */
#define NCCL_PROFILER_NET_TYPE_IB   (1U << 16)
#define NCCL_PROFILER_NET_TYPE_SOCK (2U << 16)

#ifdef __cplusplus
}
#endif

#endif

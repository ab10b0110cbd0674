/* SPDX-License-Identifier: BSD-3-Clause */
/* ncclTuner_v5_t: the tuner table NCCL 2.28 loads (symbol ncclTunerPlugin_v5; 2.30 takes it
 * when the library has no v6). */
#ifndef JACCL_NCCL_ABI_TUNER_V5_H
#define JACCL_NCCL_ABI_TUNER_V5_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_abi/tuner_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 4 slots, 32 bytes. getCollInfo's collCostTable is NOT an array of row pointers: it is the
 * address of NCCL's contiguous float[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], cast; entry
 * (a, p) is ((float *)collCostTable)[a * numProto + p]. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
                         ncclTunerConstants_v5_t *constants);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *context);
} ncclTuner_v5_t;

#ifdef __cplusplus
}
#endif

#endif

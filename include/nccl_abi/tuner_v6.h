/* SPDX-License-Identifier: BSD-3-Clause */
/* ncclTuner_v6_t (NCCL 2.30, symbol ncclTunerPlugin_v6): v5's slots, in v5's order, and an
 * optional getChunkSize after them. */
#ifndef JACCL_NCCL_ABI_TUNER_V6_H
#define JACCL_NCCL_ABI_TUNER_V6_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_abi/tuner_v5.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Unchanged layouts: aliases, so one init fits both tables. */
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v6_t;
typedef ncclTunerConstants_v5_t ncclTunerConstants_v6_t;

/* 5 slots, 40 bytes. getChunkSize may be NULL (NCCL keeps its own chunk size). */
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v6_t *nvlDomainInfo,
                         ncclTunerConstants_v6_t *constants);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *context);
    ncclResult_t (*getChunkSize)(void *context, ncclFunc_t collType, size_t nBytes, int algo,
                                 int proto, int nChannels, size_t *chunkSize);
} ncclTuner_v6_t;

#ifdef __cplusplus
}
#endif

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* The two tuner tables NCCL looks up by name in the net plugin's library: ncclTunerPlugin_v6
 * (NCCL 2.30 takes it first) and ncclTunerPlugin_v5 (2.28; 2.30 without v6). v5 and v6 share
 * their init, getCollInfo and finalize; v6's getChunkSize is NULL, which leaves the chunk size
 * to NCCL. The core (core/tuner.c) prices jaccl's CollNet; this file knows NCCL's cost table.
 *
 * The rules NCCL's cost table imposes (docs/tuner.md, "The table"):
 *   - collCostTable is the address of a contiguous float[numAlgo][numProto] cast to float **,
 *     not an array of row pointers: entry (a, p) is ((float *)collCostTable)[a * numProto + p];
 *   - an entry of -1 (or any negative) is one NCCL will not run: it stays as it is, since NCCL
 *     does not check availability again after the tuner;
 *   - only the CollNet entries NCCL priced are rewritten; NCCL's own min over the table then
 *     picks between jaccl and its ring and tree;
 *   - never an error (an error fails the user's collective), and nChannels stays as NCCL set
 *     it (0: NCCL decides; a CollNet value would be used unclamped). */
#include <stddef.h>

#include "core/api.h"
#include "nccl_abi/tuner.h"

#define JACCL_EXPORT __attribute__((visibility("default")))

/* What NCCL logs ("TUNER/Plugin: Using jaccl"). */
#define JACCL_TUNER_NAME "jaccl"

static ncclResult_t tuner_init(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                               ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
                               ncclTunerConstants_v5_t *constants)
{
    struct jaccl_tuner_comm c = {.comm_id = commId, .nranks = (int)nRanks, .nnodes = (int)nNodes};
    if (constants) {
        c.have_consts = 1;
        c.ring_base_us = constants->baseLatencies[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE];
        c.ring_net_us = constants->hwLatencies[NCCL_HW_NET][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE];
        c.tree_net_us = constants->hwLatencies[NCCL_HW_NET][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE];
        c.ring_nvl_us = constants->hwLatencies[NCCL_HW_NVLINK][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE];
    }
    return jaccl_tuner_init(ctx, &c, logFunction);
}

/* -1: a collective CollNet never runs (NCCL prices broadcast and reduce, never as CollNet). */
static int coll_of(ncclFunc_t f)
{
    return f == ncclFuncAllReduce       ? JACCL_TUNE_ALLREDUCE
           : f == ncclFuncReduceScatter ? JACCL_TUNE_REDUCESCATTER
           : f == ncclFuncAllGather     ? JACCL_TUNE_ALLGATHER
                                        : -1;
}

static float to_entry(double us)
{
    return us < 3.0e38 ? (float)us : 3.0e38f;
}

/* Only the protocols NCCL priced for CollNet (SIMPLE, in NCCL 2.28 and 2.30) reach the core. */
static void price(void *ctx, float *direct, float *chain, int coll, size_t nBytes, int numPipeOps)
{
    if (!(*direct >= 0) && !(*chain >= 0))
        return;
    double d = *direct >= 0 ? *direct : -1, c = *chain >= 0 ? *chain : -1;
    jaccl_tuner_collnet(ctx, (enum jaccl_tune_coll)coll, nBytes, numPipeOps, &d, &c);
    if (d >= 0)
        *direct = to_entry(d);
    if (c >= 0)
        *chain = to_entry(c);
}

static ncclResult_t tuner_coll_info(void *context, ncclFunc_t collType, size_t nBytes,
                                    int numPipeOps, float **collCostTable, int numAlgo,
                                    int numProto, int regBuff, int *nChannels)
{
    float *table = (float *)collCostTable;
    int coll = coll_of(collType);
    if (!context || !table || coll < 0 || numAlgo <= NCCL_ALGO_COLLNET_CHAIN || numProto <= 0)
        return ncclSuccess;
    for (int p = 0; p < numProto; p++)
        price(context, &table[NCCL_ALGO_COLLNET_DIRECT * numProto + p],
              &table[NCCL_ALGO_COLLNET_CHAIN * numProto + p], coll, nBytes, numPipeOps);
    return ncclSuccess;
}

JACCL_EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6 = {
        .name = JACCL_TUNER_NAME,
        .init = tuner_init,
        .getCollInfo = tuner_coll_info,
        .finalize = jaccl_tuner_finalize,
        .getChunkSize = NULL,
};

JACCL_EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {
        .name = JACCL_TUNER_NAME,
        .init = tuner_init,
        .getCollInfo = tuner_coll_info,
        .finalize = jaccl_tuner_finalize,
};

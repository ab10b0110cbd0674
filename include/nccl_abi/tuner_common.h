/* SPDX-License-Identifier: BSD-3-Clause */
/* What every version of NCCL's tuner table shares (NCCL 2.28 and 2.30, x86-64): the collective
 * kinds, the algorithm and protocol indices of the cost table, the hardware-link and scale
 * indices of the constants, and the two structs v5 and v6 pass to init. Written from the
 * documented ABI with NCCL's names; layouts pinned by tests/unit/test_abi_layout.c. */
#ifndef JACCL_NCCL_ABI_TUNER_COMMON_H
#define JACCL_NCCL_ABI_TUNER_COMMON_H

#include "nccl_abi/nccl_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tuner only ever sees 0..4 (NCCL_NUM_FUNCTIONS): the cost model covers no other kind.
 * ncclNumFuncs is 2.28's count; 2.30 appends AllGatherV, PutSignal, Signal and WaitSignal (15),
 * which a tuner never receives. */
typedef enum {
    ncclFuncBroadcast = 0,
    ncclFuncReduce = 1,
    ncclFuncAllGather = 2,
    ncclFuncReduceScatter = 3,
    ncclFuncAllReduce = 4,
    ncclFuncSendRecv = 5,
    ncclFuncSend = 6,
    ncclFuncRecv = 7,
    ncclFuncAlltoAll = 8,
    ncclFuncScatter = 9,
    ncclFuncGather = 10,
    ncclNumFuncs = 11
} ncclFunc_t;

#define NCCL_NUM_FUNCTIONS 5

/* Rows of the cost table. */
#define NCCL_NUM_ALGORITHMS      7
#define NCCL_ALGO_UNDEF          -1
#define NCCL_ALGO_TREE           0
#define NCCL_ALGO_RING           1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN  3
#define NCCL_ALGO_NVLS           4
#define NCCL_ALGO_NVLS_TREE      5
#define NCCL_ALGO_PAT            6

/* Columns, in index order (LL first, SIMPLE last). */
#define NCCL_NUM_PROTOCOLS 3
#define NCCL_PROTO_UNDEF   -1
#define NCCL_PROTO_LL      0
#define NCCL_PROTO_LL128   1
#define NCCL_PROTO_SIMPLE  2

/* A cost-table entry NCCL will not consider (unsupported, disabled or not modelled). NCCL
 * compares the float entries with this double literal. */
#define NCCL_ALGO_PROTO_IGNORE -1.0

/* Indices of ncclTunerConstants_v5_t's arrays. */
#define NCCL_HW_NVLINK    0
#define NCCL_HW_PCI       1
#define NCCL_HW_NET       2
#define NCCL_NUM_HW_LINKS 3

#define NCCL_VOLTA_COMPCAP_IDX     0
#define NCCL_AMPERE_COMPCAP_IDX    1
#define NCCL_HOPPER_COMPCAP_IDX    2
#define NCCL_BLACKWELL_COMPCAP_IDX 3
#define NCCL_NUM_COMPCAPS          4

#define NCCL_TUNING_SCALE_1NODE  0
#define NCCL_TUNING_SCALE_2NODES 1
#define NCCL_TUNING_SCALE_4NODES 2
#define NCCL_NUM_TUNING_SCALES   3

/* The counts v5's types are sized with (equal to the unsuffixed ones). */
#define NCCL_NUM_ALGORITHMS_V5 7
#define NCCL_NUM_PROTOCOLS_V5  3

/* 12 bytes: what NCCL's init passes about the NVLink domains, which are its nodes. */
typedef struct {
    int nNvlDomains;          /* the node count */
    int minRanksPerNvlDomain; /* ranks on the node with the fewest */
    int maxRanksPerNvlDomain; /* ranks on the node with the most */
} ncclNvlDomainInfo_v5_t;

/* 1152 bytes. This communicator's copy of the constants NCCL's cost model is built from right
 * after the tuner's init (in/out: what init writes there is what the model uses). Latencies in
 * microseconds; bandwidth caps in GB/s, per channel for the perCh* arrays. */
typedef struct {
    double baseLatencies[NCCL_NUM_ALGORITHMS_V5][NCCL_NUM_PROTOCOLS_V5];
    double hwLatencies[NCCL_NUM_HW_LINKS][NCCL_NUM_ALGORITHMS_V5][NCCL_NUM_PROTOCOLS_V5];
    double llMaxBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
    double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
    double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
    double perChMaxTreeBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
    double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
} ncclTunerConstants_v5_t;

#ifdef __cplusplus
}
#endif

#endif

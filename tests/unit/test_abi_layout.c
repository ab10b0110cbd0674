/* SPDX-License-Identifier: BSD-3-Clause */
/* Pins the headers in include/nccl_abi/ to NCCL 2.20 .. 2.30's x86-64 ABI (tables v8..v12, tuner
 * tables v5 and v6) as NCCL's plugin headers define it: enum values, struct sizes and member
 * offsets, and the position of every table slot (slot k at byte 8*k). A wrong layout would not fail
 * to compile; NCCL would just call the wrong slot. Header-only: builds without the rest of the
 * plugin. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nccl_abi/net.h"
#include "nccl_abi/tuner.h"

/* Each test counts every mismatch (printing what and by how much) before failing, so one run
 * shows the whole damage of a broken header. */
static int mismatches;

static void expect_eq(const char *what, long long got, long long want)
{
    if (got == want)
        return;
    print_error("%s = %lld, expected %lld\n", what, got, want);
    mismatches++;
}

#define EQ(expr, want)    expect_eq(#expr, (long long)(expr), (long long)(want))
#define OFF(T, m, want)   EQ(offsetof(T, m), want)
#define MSIZE(T, m, want) EQ(sizeof(((T *)0)->m), want)
#define SLOT(T, m, k)     OFF(T, m, 8 * (k))
#define BEGIN()           (mismatches = 0)
#define END()             assert_int_equal(mismatches, 0)

static void test_result_values(void **state)
{
    BEGIN();
    EQ(sizeof(ncclResult_t), 4);
    EQ(ncclSuccess, 0);
    EQ(ncclUnhandledCudaError, 1);
    EQ(ncclSystemError, 2);
    EQ(ncclInternalError, 3);
    EQ(ncclInvalidArgument, 4);
    EQ(ncclInvalidUsage, 5);
    EQ(ncclRemoteError, 6);
    EQ(ncclInProgress, 7);
    EQ(ncclNumResults, 8);
    END();
}

static void test_datatype_values(void **state)
{
    BEGIN();
    EQ(sizeof(ncclDataType_t), 4);
    EQ(ncclInt8, 0);
    EQ(ncclChar, 0);
    EQ(ncclUint8, 1);
    EQ(ncclInt32, 2);
    EQ(ncclInt, 2);
    EQ(ncclUint32, 3);
    EQ(ncclInt64, 4);
    EQ(ncclUint64, 5);
    EQ(ncclFloat16, 6);
    EQ(ncclHalf, 6);
    EQ(ncclFloat32, 7);
    EQ(ncclFloat, 7);
    EQ(ncclFloat64, 8);
    EQ(ncclDouble, 8);
    EQ(ncclBfloat16, 9);
    EQ(ncclFloat8e4m3, 10);
    EQ(ncclFloat8e5m2, 11);
    EQ(ncclNumTypes, 12);
    END();
}

static void test_redop_values(void **state)
{
    BEGIN();
    EQ(sizeof(ncclRedOp_t), 4);
    EQ(ncclSum, 0);
    EQ(ncclProd, 1);
    EQ(ncclMax, 2);
    EQ(ncclMin, 3);
    EQ(ncclAvg, 4);
    EQ(ncclNumOps, 5);
    EQ(ncclMaxRedOp, 0x7fffffff);
    END();
}

static void test_log_values(void **state)
{
    BEGIN();
    EQ(sizeof(ncclDebugLogLevel), 4);
    EQ(NCCL_LOG_NONE, 0);
    EQ(NCCL_LOG_VERSION, 1);
    EQ(NCCL_LOG_WARN, 2);
    EQ(NCCL_LOG_INFO, 3);
    EQ(NCCL_LOG_ABORT, 4);
    EQ(NCCL_LOG_TRACE, 5);
    EQ(NCCL_INIT, 0x1);
    EQ(NCCL_COLL, 0x2);
    EQ(NCCL_P2P, 0x4);
    EQ(NCCL_SHM, 0x8);
    EQ(NCCL_NET, 0x10);
    EQ(NCCL_GRAPH, 0x20);
    EQ(NCCL_TUNING, 0x40);
    EQ(NCCL_ENV, 0x80);
    EQ(NCCL_ALLOC, 0x100);
    EQ(NCCL_CALL, 0x200);
    EQ(NCCL_PROXY, 0x400);
    EQ(NCCL_NVLS, 0x800);
    EQ(NCCL_BOOTSTRAP, 0x1000);
    EQ(NCCL_REG, 0x2000);
    EQ(NCCL_PROFILE, 0x4000);
    EQ(NCCL_RAS, 0x8000);
    /* The logger's flags are unsigned long: NCCL_ALL must arrive with every bit set. */
    assert_true((unsigned long)NCCL_ALL == ULONG_MAX);
    EQ(ncclProfilerNetEventStart, 0);
    EQ(ncclProfilerNetEventStop, 1);
    EQ(ncclProfilerNetEventUpdate, 2);
    EQ(ncclProfilerNetEventUpdateAndStop, 3);
    EQ(NCCL_PROFILER_NET_TYPE_IB, 1 << 16);
    EQ(NCCL_PROFILER_NET_TYPE_SOCK, 2 << 16);
    END();
}

static void test_net_constants(void **state)
{
    BEGIN();
    EQ(NCCL_NET_HANDLE_MAXSIZE, 128);
    EQ(NCCL_PTR_HOST, 0x1);
    EQ(NCCL_PTR_CUDA, 0x2);
    EQ(NCCL_PTR_DMABUF, 0x4);
    EQ(NCCL_NET_MAX_REQUESTS, 32);
    EQ(NCCL_NET_MAX_DEVS_PER_NIC, 4);
    EQ(NCCL_NET_MAX_DEVS_PER_NIC_V12, 8);
    EQ(NCCL_NET_ID_UNDEF, -1);
    EQ(NCCL_MAX_NET_SIZE_BYTES, 1LL << 40);
    EQ(NCCL_NET_OPTIONAL_RECV_COMPLETION, 0x1);
    EQ(NCCL_NET_MULTI_REQUEST, 0x2);
    EQ(MAX_NET_SIZE, 1LL << 30);
    EQ(MAX_COLLNET_SIZE, 1LL << 29);
    EQ(NCCL_NET_TRAFFIC_CLASS_UNDEF, -1);
    EQ(NCCL_NET_ATTR_UNDEF, -1);
    EQ(NCCL_NET_DEVICE_INVALID_VERSION, 0);
    EQ(NCCL_NET_DEVICE_UNPACK_VERSION, 0x7);
    EQ(NCCL_NET_MTU_SIZE, 4096);
    EQ(sizeof(ncclNetDeviceType), 4);
    EQ(NCCL_NET_DEVICE_HOST, 0);
    EQ(NCCL_NET_DEVICE_UNPACK, 1);
    EQ(NCCL_NET_DEVICE_GIN_PROXY, 2);
    EQ(NCCL_NET_DEVICE_GIN_GDAKI, 3);
    END();
}

#define CHECK_DEVICE_HANDLE(T)          \
    do {                                \
        EQ(sizeof(T), 32);              \
        OFF(T, netDeviceType, 0);       \
        OFF(T, netDeviceVersion, 4);    \
        OFF(T, handle, 8);              \
        OFF(T, size, 16);               \
        OFF(T, needsProxyProgress, 24); \
    } while (0)

#define CHECK_VPROPS(T)     \
    do {                    \
        EQ(sizeof(T), 20);  \
        OFF(T, ndevs, 0);   \
        OFF(T, devs, 4);    \
        MSIZE(T, devs, 16); \
    } while (0)

static void test_device_handle_and_vprops(void **state)
{
    BEGIN();
    CHECK_DEVICE_HANDLE(ncclNetDeviceHandle_v8_t);
    CHECK_DEVICE_HANDLE(ncclNetDeviceHandle_v9_t);
    CHECK_DEVICE_HANDLE(ncclNetDeviceHandle_v10_t);
    CHECK_DEVICE_HANDLE(ncclNetDeviceHandle_v11_t);
    CHECK_DEVICE_HANDLE(ncclNetDeviceHandle_v12_t);
    CHECK_DEVICE_HANDLE(ncclNetDeviceHandle_t);
    CHECK_VPROPS(ncclNetVDeviceProps_v9_t);
    CHECK_VPROPS(ncclNetVDeviceProps_v10_t);
    CHECK_VPROPS(ncclNetVDeviceProps_v11_t);
    /* v12 (and so the unversioned name): twice the devices */
    EQ(sizeof(ncclNetVDeviceProps_v12_t), 36);
    OFF(ncclNetVDeviceProps_v12_t, ndevs, 0);
    OFF(ncclNetVDeviceProps_v12_t, devs, 4);
    MSIZE(ncclNetVDeviceProps_v12_t, devs, 32);
    EQ(sizeof(ncclNetVDeviceProps_t), 36);
    MSIZE(ncclNetVDeviceProps_t, devs, 32);
    END();
}

static void test_props_v8(void **state)
{
    BEGIN();
    EQ(sizeof(ncclNetProperties_v8_t), 64);
    OFF(ncclNetProperties_v8_t, name, 0);
    OFF(ncclNetProperties_v8_t, pciPath, 8);
    OFF(ncclNetProperties_v8_t, guid, 16);
    OFF(ncclNetProperties_v8_t, ptrSupport, 24);
    OFF(ncclNetProperties_v8_t, regIsGlobal, 28);
    OFF(ncclNetProperties_v8_t, speed, 32);
    OFF(ncclNetProperties_v8_t, port, 36);
    OFF(ncclNetProperties_v8_t, latency, 40);
    MSIZE(ncclNetProperties_v8_t, latency, 4);
    OFF(ncclNetProperties_v8_t, maxComms, 44);
    OFF(ncclNetProperties_v8_t, maxRecvs, 48);
    OFF(ncclNetProperties_v8_t, netDeviceType, 52);
    OFF(ncclNetProperties_v8_t, netDeviceVersion, 56);
    END();
}

/* v9, v10 and v11 share everything up to maxCollBytes. */
#define CHECK_PROPS_V9(T)             \
    do {                              \
        OFF(T, name, 0);              \
        OFF(T, pciPath, 8);           \
        OFF(T, guid, 16);             \
        OFF(T, ptrSupport, 24);       \
        OFF(T, regIsGlobal, 28);      \
        OFF(T, forceFlush, 32);       \
        OFF(T, speed, 36);            \
        OFF(T, port, 40);             \
        OFF(T, latency, 44);          \
        MSIZE(T, latency, 4);         \
        OFF(T, maxComms, 48);         \
        OFF(T, maxRecvs, 52);         \
        OFF(T, netDeviceType, 56);    \
        OFF(T, netDeviceVersion, 60); \
        OFF(T, vProps, 64);           \
        OFF(T, vProps.devs, 68);      \
        OFF(T, maxP2pBytes, 88);      \
        MSIZE(T, maxP2pBytes, 8);     \
        OFF(T, maxCollBytes, 96);     \
        MSIZE(T, maxCollBytes, 8);    \
    } while (0)

static void test_props_v9_v10(void **state)
{
    BEGIN();
    EQ(sizeof(ncclNetProperties_v9_t), 104);
    EQ(sizeof(ncclNetProperties_v10_t), 104);
    CHECK_PROPS_V9(ncclNetProperties_v9_t);
    CHECK_PROPS_V9(ncclNetProperties_v10_t);
    END();
}

static void test_props_v11(void **state)
{
    BEGIN();
    EQ(sizeof(ncclNetProperties_v11_t), 112);
    CHECK_PROPS_V9(ncclNetProperties_v11_t);
    OFF(ncclNetProperties_v11_t, maxMultiRequestSize, 104);
    END();
}

/* v12: v11's fields, shifted by the 16 extra bytes of vProps from maxP2pBytes on, then railId
 * and planeId packed into what was v11's 4 bytes of tail padding: 128 bytes in all. */
#define CHECK_PROPS_V12(T)                \
    do {                                  \
        EQ(sizeof(T), 128);               \
        OFF(T, name, 0);                  \
        OFF(T, pciPath, 8);               \
        OFF(T, guid, 16);                 \
        OFF(T, ptrSupport, 24);           \
        OFF(T, regIsGlobal, 28);          \
        OFF(T, forceFlush, 32);           \
        OFF(T, speed, 36);                \
        OFF(T, port, 40);                 \
        OFF(T, latency, 44);              \
        MSIZE(T, latency, 4);             \
        OFF(T, maxComms, 48);             \
        OFF(T, maxRecvs, 52);             \
        OFF(T, netDeviceType, 56);        \
        OFF(T, netDeviceVersion, 60);     \
        OFF(T, vProps, 64);               \
        OFF(T, vProps.devs, 68);          \
        MSIZE(T, vProps, 36);             \
        OFF(T, maxP2pBytes, 104);         \
        MSIZE(T, maxP2pBytes, 8);         \
        OFF(T, maxCollBytes, 112);        \
        MSIZE(T, maxCollBytes, 8);        \
        OFF(T, maxMultiRequestSize, 120); \
        OFF(T, railId, 124);              \
        MSIZE(T, railId, 2);              \
        OFF(T, planeId, 126);             \
        MSIZE(T, planeId, 2);             \
    } while (0)

static void test_props_v12(void **state)
{
    BEGIN();
    CHECK_PROPS_V12(ncclNetProperties_v12_t);
    CHECK_PROPS_V12(ncclNetProperties_t);
    END();
}

#define CHECK_SGE(T, size_bytes)    \
    do {                            \
        EQ(sizeof(T), 24);          \
        OFF(T, mhandle, 0);         \
        OFF(T, address, 8);         \
        OFF(T, size, 16);           \
        MSIZE(T, size, size_bytes); \
    } while (0)

static void test_sge(void **state)
{
    BEGIN();
    CHECK_SGE(ncclNetSGE_v8_t, 4);
    CHECK_SGE(ncclNetSGE_v9_t, 8);
    CHECK_SGE(ncclNetSGE_v10_t, 8);
    CHECK_SGE(ncclNetSGE_v11_t, 8);
    CHECK_SGE(ncclNetSGE_v12_t, 8);
    CHECK_SGE(ncclNetSGE_t, 8);
    END();
}

#define CHECK_COMM_ATTR(T)             \
    do {                               \
        EQ(sizeof(T), 16);             \
        OFF(T, maxConcurrentPeers, 0); \
        OFF(T, minConcurrentPeers, 4); \
        OFF(T, maxFlowsPerPeer, 8);    \
        OFF(T, minFlowsPerPeer, 12);   \
    } while (0)

static void test_config_and_attr(void **state)
{
    BEGIN();
    EQ(sizeof(ncclNetCommConfig_v10_t), 4);
    EQ(sizeof(ncclNetCommConfig_v11_t), 4);
    OFF(ncclNetCommConfig_v11_t, trafficClass, 0);
    CHECK_COMM_ATTR(ncclNetCommAttr_v11_t);
    EQ(sizeof(ncclNetAttr_v11_t), 44);
    OFF(ncclNetAttr_v11_t, sendCommAttr, 0);
    OFF(ncclNetAttr_v11_t, recvCommAttr, 16);
    OFF(ncclNetAttr_v11_t, op, 32);
    OFF(ncclNetAttr_v11_t, algo, 36);
    OFF(ncclNetAttr_v11_t, proto, 40);
    EQ(sizeof(ncclNetCommConfig_v12_t), 4);
    OFF(ncclNetCommConfig_v12_t, trafficClass, 0);
    CHECK_COMM_ATTR(ncclNetCommAttr_v12_t);
    EQ(sizeof(ncclNetAttr_v12_t), 44);
    OFF(ncclNetAttr_v12_t, sendCommAttr, 0);
    OFF(ncclNetAttr_v12_t, recvCommAttr, 16);
    OFF(ncclNetAttr_v12_t, op, 32);
    OFF(ncclNetAttr_v12_t, algo, 36);
    OFF(ncclNetAttr_v12_t, proto, 40);
    END();
}

static void test_attr_init(void **state)
{
    ncclNetAttr_v11_t a = NCCL_NET_ATTR_INIT;
    const ncclNetCommAttr_v11_t *sides[] = {&a.sendCommAttr, &a.recvCommAttr};

    for (int i = 0; i < 2; i++) {
        assert_int_equal(sides[i]->maxConcurrentPeers, -1);
        assert_int_equal(sides[i]->minConcurrentPeers, -1);
        assert_int_equal(sides[i]->maxFlowsPerPeer, -1);
        assert_int_equal(sides[i]->minFlowsPerPeer, -1);
    }
    assert_true(a.op == UINT32_MAX && a.algo == UINT32_MAX && a.proto == UINT32_MAX);
}

/* Slots 0..18 are common to every ncclNet version (v8 stops there). */
#define CHECK_NET_COMMON_SLOTS(T)   \
    do {                            \
        SLOT(T, name, 0);           \
        SLOT(T, init, 1);           \
        SLOT(T, devices, 2);        \
        SLOT(T, getProperties, 3);  \
        SLOT(T, listen, 4);         \
        SLOT(T, connect, 5);        \
        SLOT(T, accept, 6);         \
        SLOT(T, regMr, 7);          \
        SLOT(T, regMrDmaBuf, 8);    \
        SLOT(T, deregMr, 9);        \
        SLOT(T, isend, 10);         \
        SLOT(T, irecv, 11);         \
        SLOT(T, iflush, 12);        \
        SLOT(T, test, 13);          \
        SLOT(T, closeSend, 14);     \
        SLOT(T, closeRecv, 15);     \
        SLOT(T, closeListen, 16);   \
        SLOT(T, getDeviceMr, 17);   \
        SLOT(T, irecvConsumed, 18); \
    } while (0)

static void test_net_tables(void **state)
{
    BEGIN();
    EQ(sizeof(ncclNet_v8_t), 152);
    CHECK_NET_COMMON_SLOTS(ncclNet_v8_t);

    EQ(sizeof(ncclNet_v9_t), 160);
    CHECK_NET_COMMON_SLOTS(ncclNet_v9_t);
    SLOT(ncclNet_v9_t, makeVDevice, 19);

    EQ(sizeof(ncclNet_v10_t), 160);
    CHECK_NET_COMMON_SLOTS(ncclNet_v10_t);
    SLOT(ncclNet_v10_t, makeVDevice, 19);

    EQ(sizeof(ncclNet_v11_t), 176);
    CHECK_NET_COMMON_SLOTS(ncclNet_v11_t);
    SLOT(ncclNet_v11_t, makeVDevice, 19);
    SLOT(ncclNet_v11_t, finalize, 20);
    SLOT(ncclNet_v11_t, setNetAttr, 21);

    EQ(sizeof(ncclNet_v12_t), 176);
    EQ(sizeof(ncclNet_t), 176);
    CHECK_NET_COMMON_SLOTS(ncclNet_v12_t);
    SLOT(ncclNet_v12_t, makeVDevice, 19);
    SLOT(ncclNet_v12_t, finalize, 20);
    SLOT(ncclNet_v12_t, setNetAttr, 21);
    END();
}

/* Slots 0..16 are common to every ncclCollNet version (v8 stops there). */
#define CHECK_COLL_COMMON_SLOTS(T)   \
    do {                             \
        SLOT(T, name, 0);            \
        SLOT(T, init, 1);            \
        SLOT(T, devices, 2);         \
        SLOT(T, getProperties, 3);   \
        SLOT(T, listen, 4);          \
        SLOT(T, connect, 5);         \
        SLOT(T, reduceSupport, 6);   \
        SLOT(T, regMr, 7);           \
        SLOT(T, regMrDmaBuf, 8);     \
        SLOT(T, deregMr, 9);         \
        SLOT(T, iallreduce, 10);     \
        SLOT(T, iallgather, 11);     \
        SLOT(T, ireducescatter, 12); \
        SLOT(T, iflush, 13);         \
        SLOT(T, test, 14);           \
        SLOT(T, closeColl, 15);      \
        SLOT(T, closeListen, 16);    \
    } while (0)

static void test_collnet_tables(void **state)
{
    BEGIN();
    EQ(sizeof(ncclCollNet_v8_t), 17 * 8);
    CHECK_COLL_COMMON_SLOTS(ncclCollNet_v8_t);

    EQ(sizeof(ncclCollNet_v9_t), 18 * 8);
    CHECK_COLL_COMMON_SLOTS(ncclCollNet_v9_t);
    SLOT(ncclCollNet_v9_t, makeVDevice, 17);

    EQ(sizeof(ncclCollNet_v10_t), 18 * 8);
    CHECK_COLL_COMMON_SLOTS(ncclCollNet_v10_t);
    SLOT(ncclCollNet_v10_t, makeVDevice, 17);

    EQ(sizeof(ncclCollNet_v11_t), 19 * 8);
    CHECK_COLL_COMMON_SLOTS(ncclCollNet_v11_t);
    SLOT(ncclCollNet_v11_t, makeVDevice, 17);
    SLOT(ncclCollNet_v11_t, finalize, 18);

    EQ(sizeof(ncclCollNet_v12_t), 19 * 8);
    EQ(sizeof(ncclCollNet_t), 19 * 8);
    CHECK_COLL_COMMON_SLOTS(ncclCollNet_v12_t);
    SLOT(ncclCollNet_v12_t, makeVDevice, 17);
    SLOT(ncclCollNet_v12_t, finalize, 18);
    END();
}

static void test_tuner_constants(void **state)
{
    BEGIN();
    EQ(sizeof(ncclFunc_t), 4);
    EQ(ncclFuncBroadcast, 0);
    EQ(ncclFuncReduce, 1);
    EQ(ncclFuncAllGather, 2);
    EQ(ncclFuncReduceScatter, 3);
    EQ(ncclFuncAllReduce, 4);
    EQ(ncclFuncSendRecv, 5);
    EQ(ncclFuncSend, 6);
    EQ(ncclFuncRecv, 7);
    EQ(ncclFuncAlltoAll, 8);
    EQ(ncclFuncScatter, 9);
    EQ(ncclFuncGather, 10);
    EQ(ncclNumFuncs, 11);
    EQ(NCCL_NUM_FUNCTIONS, 5);
    EQ(NCCL_NUM_ALGORITHMS, 7);
    EQ(NCCL_ALGO_UNDEF, -1);
    EQ(NCCL_ALGO_TREE, 0);
    EQ(NCCL_ALGO_RING, 1);
    EQ(NCCL_ALGO_COLLNET_DIRECT, 2);
    EQ(NCCL_ALGO_COLLNET_CHAIN, 3);
    EQ(NCCL_ALGO_NVLS, 4);
    EQ(NCCL_ALGO_NVLS_TREE, 5);
    EQ(NCCL_ALGO_PAT, 6);
    EQ(NCCL_NUM_PROTOCOLS, 3);
    EQ(NCCL_PROTO_UNDEF, -1);
    EQ(NCCL_PROTO_LL, 0);
    EQ(NCCL_PROTO_LL128, 1);
    EQ(NCCL_PROTO_SIMPLE, 2);
    assert_true(NCCL_ALGO_PROTO_IGNORE == -1.0);
    EQ(NCCL_HW_NVLINK, 0);
    EQ(NCCL_HW_PCI, 1);
    EQ(NCCL_HW_NET, 2);
    EQ(NCCL_NUM_HW_LINKS, 3);
    EQ(NCCL_VOLTA_COMPCAP_IDX, 0);
    EQ(NCCL_AMPERE_COMPCAP_IDX, 1);
    EQ(NCCL_HOPPER_COMPCAP_IDX, 2);
    EQ(NCCL_BLACKWELL_COMPCAP_IDX, 3);
    EQ(NCCL_NUM_COMPCAPS, 4);
    EQ(NCCL_TUNING_SCALE_1NODE, 0);
    EQ(NCCL_TUNING_SCALE_2NODES, 1);
    EQ(NCCL_TUNING_SCALE_4NODES, 2);
    EQ(NCCL_NUM_TUNING_SCALES, 3);
    END();
}

/* Offsets of single elements too: the model NCCL builds reads these cells. */
#define CHECK_TUNER_INPUTS(D, K)                                                            \
    do {                                                                                    \
        EQ(sizeof(D), 12);                                                                  \
        OFF(D, nNvlDomains, 0);                                                             \
        OFF(D, minRanksPerNvlDomain, 4);                                                    \
        OFF(D, maxRanksPerNvlDomain, 8);                                                    \
        EQ(sizeof(K), 1152);                                                                \
        EQ(_Alignof(K), 8);                                                                 \
        OFF(K, baseLatencies, 0);                                                           \
        MSIZE(K, baseLatencies, 168);                                                       \
        OFF(K, hwLatencies, 168);                                                           \
        MSIZE(K, hwLatencies, 504);                                                         \
        OFF(K, llMaxBws, 672);                                                              \
        OFF(K, perChMaxRingLL128Bws, 768);                                                  \
        OFF(K, perChMaxTreeLL128Bws, 864);                                                  \
        OFF(K, perChMaxTreeBws, 960);                                                       \
        OFF(K, perChMaxNVLSTreeBws, 1056);                                                  \
        MSIZE(K, perChMaxNVLSTreeBws, 96);                                                  \
        OFF(K, baseLatencies[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 40);                       \
        OFF(K, hwLatencies[NCCL_HW_NET][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 520);           \
        OFF(K, hwLatencies[NCCL_HW_NET][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 544);           \
        OFF(K, hwLatencies[NCCL_HW_NET][NCCL_ALGO_COLLNET_DIRECT][NCCL_PROTO_SIMPLE], 568); \
        OFF(K, hwLatencies[NCCL_HW_NET][NCCL_ALGO_COLLNET_CHAIN][NCCL_PROTO_SIMPLE], 592);  \
        OFF(K, perChMaxTreeBws[NCCL_HOPPER_COMPCAP_IDX][NCCL_TUNING_SCALE_4NODES], 1024);   \
    } while (0)

static void test_tuner_inputs(void **state)
{
    BEGIN();
    CHECK_TUNER_INPUTS(ncclNvlDomainInfo_v5_t, ncclTunerConstants_v5_t);
    CHECK_TUNER_INPUTS(ncclNvlDomainInfo_v6_t, ncclTunerConstants_v6_t);
    CHECK_TUNER_INPUTS(ncclNvlDomainInfo_t, ncclTunerConstants_t);
    END();
}

/* v6 keeps v5's four slots where they were (one library serves both with the same functions)
 * and adds getChunkSize at the end. */
#define CHECK_TUNER_V5_SLOTS(T)  \
    do {                         \
        SLOT(T, name, 0);        \
        SLOT(T, init, 1);        \
        SLOT(T, getCollInfo, 2); \
        SLOT(T, finalize, 3);    \
    } while (0)

static void test_tuner_tables(void **state)
{
    BEGIN();
    EQ(sizeof(ncclTuner_v5_t), 4 * 8);
    CHECK_TUNER_V5_SLOTS(ncclTuner_v5_t);
    EQ(sizeof(ncclTuner_v6_t), 5 * 8);
    CHECK_TUNER_V5_SLOTS(ncclTuner_v6_t);
    SLOT(ncclTuner_v6_t, getChunkSize, 4);
    EQ(sizeof(ncclTuner_t), 5 * 8);
    EQ(__builtin_types_compatible_p(__typeof__(((ncclTuner_v5_t *)0)->init),
                                    __typeof__(((ncclTuner_v6_t *)0)->init)),
       1);
    EQ(__builtin_types_compatible_p(__typeof__(((ncclTuner_v5_t *)0)->getCollInfo),
                                    __typeof__(((ncclTuner_v6_t *)0)->getCollInfo)),
       1);
    END();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_result_values),
            cmocka_unit_test(test_datatype_values),
            cmocka_unit_test(test_redop_values),
            cmocka_unit_test(test_log_values),
            cmocka_unit_test(test_net_constants),
            cmocka_unit_test(test_device_handle_and_vprops),
            cmocka_unit_test(test_props_v8),
            cmocka_unit_test(test_props_v9_v10),
            cmocka_unit_test(test_props_v11),
            cmocka_unit_test(test_props_v12),
            cmocka_unit_test(test_sge),
            cmocka_unit_test(test_config_and_attr),
            cmocka_unit_test(test_attr_init),
            cmocka_unit_test(test_net_tables),
            cmocka_unit_test(test_collnet_tables),
            cmocka_unit_test(test_tuner_constants),
            cmocka_unit_test(test_tuner_inputs),
            cmocka_unit_test(test_tuner_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

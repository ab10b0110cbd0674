/* SPDX-License-Identifier: BSD-3-Clause */
/* The one internal API, in the newest ABI shape (v11). The exported tables in tables.c point
 * each slot at these functions or at a thin per-version shim over them; nothing else in the
 * plugin knows that older versions exist. */
#ifndef JACCL_ABI_API_H
#define JACCL_ABI_API_H

#include "nccl_abi/net.h"

/* ---- process-wide state (plugin/core/state.c) ---- */
/* Refcounted: every call takes a reference, finalize drops it; the last one tears down every
 * device, thread and registration. *ctx is written first thing (NULL on failure). */
ncclResult_t jaccl_init(void **ctx, uint64_t commId, ncclNetCommConfig_v11_t *config,
                        ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
ncclResult_t jaccl_finalize(void *ctx); /* NULL is fine */
ncclResult_t jaccl_devices(int *ndev);
ncclResult_t jaccl_get_properties(int dev, ncclNetProperties_v11_t *props);
ncclResult_t jaccl_set_net_attr(void *ctx, ncclNetAttr_v11_t *netAttr);

/* ---- point-to-point (plugin/core/p2p_*.c) ---- */
ncclResult_t jaccl_listen(void *ctx, int dev, void *handle, void **listenComm);
ncclResult_t jaccl_connect(void *ctx, int dev, void *handle, void **sendComm,
                           ncclNetDeviceHandle_v11_t **sendDevComm);
/* jaccl_connect with NCCL v10's per-connection trafficClass (>= 0 replaces the ctx's). */
ncclResult_t jaccl_connect_tclass(void *ctx, int trafficClass, int dev, void *handle,
                                  void **sendComm, ncclNetDeviceHandle_v11_t **sendDevComm);
ncclResult_t jaccl_accept(void *listenComm, void **recvComm,
                          ncclNetDeviceHandle_v11_t **recvDevComm);
ncclResult_t jaccl_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
ncclResult_t jaccl_dereg_mr(void *comm, void *mhandle);
ncclResult_t jaccl_isend(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                         void *phandle, void **request);
ncclResult_t jaccl_irecv(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                         void **mhandles, void **phandles, void **request);
ncclResult_t jaccl_iflush(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                          void **request);
ncclResult_t jaccl_test(void *request, int *done, int *sizes);
ncclResult_t jaccl_close_send(void *sendComm);
ncclResult_t jaccl_close_recv(void *recvComm);
ncclResult_t jaccl_close_listen(void *listenComm);

/* ---- CollNet (plugin/core/coll_*.c) ---- */
ncclResult_t jaccl_coll_init(void **ctx, uint64_t commId, ncclDebugLogger_t logFunction);
ncclResult_t jaccl_coll_devices(int *ndev);
ncclResult_t jaccl_coll_listen(void *ctx, int dev, void *handle, void **listenComm);
ncclResult_t jaccl_coll_connect(void *handles[], int nranks, int rank, void *listenComm,
                                void **collComm);
ncclResult_t jaccl_coll_reduce_support(ncclDataType_t dataType, ncclRedOp_t redOp, int *supported);
ncclResult_t jaccl_coll_iallreduce(void *collComm, void *sendData, void *recvData, size_t count,
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void *sendMhandle,
                                   void *recvMhandle, void **request);
ncclResult_t jaccl_coll_iallgather(void *collComm, void *sendData, int nRecvParts,
                                   ncclNetSGE_v11_t *recvParts, size_t bytesPerRank,
                                   size_t windowOffset, size_t windowBytes, void *sendMhandle,
                                   void **request);
ncclResult_t jaccl_coll_ireducescatter(void *collComm, int nSendParts, ncclNetSGE_v11_t *sendParts,
                                       void *recvData, size_t bytesPerRank, size_t windowOffset,
                                       size_t windowBytes, ncclDataType_t dataType,
                                       ncclRedOp_t redOp, void *recvMhandle, void **request);
ncclResult_t jaccl_coll_iflush(void *collComm, void *data, int size, void *mhandle, void **request);
ncclResult_t jaccl_coll_test(void *request, int *done, int *size);
ncclResult_t jaccl_coll_close(void *collComm);
ncclResult_t jaccl_coll_close_listen(void *listenComm);

#endif

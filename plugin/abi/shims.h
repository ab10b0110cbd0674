/* SPDX-License-Identifier: BSD-3-Clause */
/* Adapters from every table shape (v8..v12) onto jaccl's version-neutral internal API in
 * core/api.h: each converts NCCL's structs of its version to jaccl's (config, properties,
 * SGEs, device handles) and back. Each shim is named after the oldest version whose slot
 * signature it fits, and tables.c points every newer table with the same signature at it too
 * (v12's config, SGE, attributes and device handles alias v11's). Slots whose signature names
 * no versioned type point at the core function itself. */
#ifndef JACCL_ABI_SHIMS_H
#define JACCL_ABI_SHIMS_H

#include "nccl_abi/net.h"

/* ---- ncclNet ---- */
/* v11/v12: per-communicator init with a config; attribute hints; device handles. */
ncclResult_t jaccl_v11_init(void **ctx, uint64_t commId, ncclNetCommConfig_v11_t *config,
                            ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
ncclResult_t jaccl_v11_set_net_attr(void *ctx, ncclNetAttr_v11_t *netAttr);
ncclResult_t jaccl_v11_connect(void *ctx, int dev, void *handle, void **sendComm,
                               ncclNetDeviceHandle_v11_t **sendDevComm);
ncclResult_t jaccl_v8_accept(void *listenComm, void **recvComm,
                             ncclNetDeviceHandle_v8_t **recvDevComm);
ncclResult_t jaccl_v12_get_properties(int dev, ncclNetProperties_v12_t *props);
ncclResult_t jaccl_v11_get_properties(int dev, ncclNetProperties_v11_t *props);
/* NCCL before 2.28 calls init once per process and never calls finalize: these take one
 * process-wide ctx on the first successful call and keep it; later calls are no-ops. */
ncclResult_t jaccl_v10_init(ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
ncclResult_t jaccl_v8_init(ncclDebugLogger_t logFunction);
ncclResult_t jaccl_v9_get_properties(int dev, ncclNetProperties_v9_t *props);
ncclResult_t jaccl_v8_get_properties(int dev, ncclNetProperties_v8_t *props);
/* ctx-less listen/connect: use the process-wide ctx (ncclInvalidUsage before init). */
ncclResult_t jaccl_v8_listen(int dev, void *handle, void **listenComm);
ncclResult_t jaccl_v10_connect(int dev, ncclNetCommConfig_v10_t *config, void *handle,
                               void **sendComm, ncclNetDeviceHandle_v10_t **sendDevComm);
ncclResult_t jaccl_v8_connect(int dev, void *handle, void **sendComm,
                              ncclNetDeviceHandle_v8_t **sendDevComm);
/* No profiler handles before v10; int sizes before v9. */
ncclResult_t jaccl_v9_isend(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                            void **request);
ncclResult_t jaccl_v9_irecv(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                            void **mhandles, void **request);
ncclResult_t jaccl_v8_isend(void *sendComm, void *data, int size, int tag, void *mhandle,
                            void **request);
/* n must be 1, as for jaccl_irecv (maxRecvs = 1). */
ncclResult_t jaccl_v8_irecv(void *recvComm, int n, void **data, int *sizes, int *tags,
                            void **mhandles, void **request);

/* ---- ncclCollNet ---- */
/* Same once-per-process ctx rule as the net init, with a ctx of its own. */
ncclResult_t jaccl_coll_v8_init(ncclDebugLogger_t logFunction);
ncclResult_t jaccl_coll_v8_listen(int dev, void *handle, void **listenComm);
ncclResult_t jaccl_coll_v8_iallreduce(void *collComm, void *sendData, void *recvData, int count,
                                      ncclDataType_t dataType, ncclRedOp_t redOp, void *sendMhandle,
                                      void *recvMhandle, void **request);
/* v9..v12 SGEs: the part is copied into jaccl's struct (the core accepts exactly one). */
ncclResult_t jaccl_coll_v9_iallgather(void *collComm, void *sendData, int nRecvParts,
                                      ncclNetSGE_v9_t *recvParts, size_t bytesPerRank,
                                      size_t windowOffset, size_t windowBytes, void *sendMhandle,
                                      void **request);
ncclResult_t jaccl_coll_v9_ireducescatter(void *collComm, int nSendParts,
                                          ncclNetSGE_v9_t *sendParts, void *recvData,
                                          size_t bytesPerRank, size_t windowOffset,
                                          size_t windowBytes, ncclDataType_t dataType,
                                          ncclRedOp_t redOp, void *recvMhandle, void **request);
/* v8 SGEs carry a 32-bit size; only nParts == 1 is accepted (NCCL never passes more). */
ncclResult_t jaccl_coll_v8_iallgather(void *collComm, void *sendData, int nRecvParts,
                                      ncclNetSGE_v8_t *recvParts, size_t bytesPerRank,
                                      size_t windowOffset, size_t windowBytes, void *sendMhandle,
                                      void **request);
ncclResult_t jaccl_coll_v8_ireducescatter(void *collComm, int nSendParts,
                                          ncclNetSGE_v8_t *sendParts, void *recvData,
                                          size_t bytesPerRank, size_t windowOffset,
                                          size_t windowBytes, ncclDataType_t dataType,
                                          ncclRedOp_t redOp, void *recvMhandle, void **request);

/* ---- the exported tables (tables.c), for tests that drive the plugin as NCCL does ---- */
extern const ncclNet_v8_t ncclNetPlugin_v8;
extern const ncclNet_v9_t ncclNetPlugin_v9;
extern const ncclNet_v10_t ncclNetPlugin_v10;
extern const ncclNet_v11_t ncclNetPlugin_v11;
extern const ncclNet_v12_t ncclNetPlugin_v12;
extern const ncclCollNet_v8_t ncclCollNetPlugin_v8;
extern const ncclCollNet_v9_t ncclCollNetPlugin_v9;
extern const ncclCollNet_v10_t ncclCollNetPlugin_v10;
extern const ncclCollNet_v11_t ncclCollNetPlugin_v11;
extern const ncclCollNet_v12_t ncclCollNetPlugin_v12;

#endif

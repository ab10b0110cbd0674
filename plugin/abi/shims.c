/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-version adapters over the v11-shaped internal API; see shims.h for which is which.
 * Every shim is stateless except the once-per-process ctx of the pre-v11 init calls, which a
 * mutex guards, so all of them may be called from any NCCL thread. */
#include <pthread.h>
#include <stddef.h>

#include "abi/api.h"
#include "abi/shims.h"
#include "nccl_abi/net.h"
#include "util/log.h"

/* ---- the process-wide ctx of pre-v11 NCCL ---- */

/* NCCL before 2.28 never calls finalize, so the reference taken here is kept for the life of
 * the process. A failed init leaves ready == 0 so a later call may try again. */
struct legacy_ctx {
    pthread_mutex_t lock;
    int ready;
    void *ctx;
};

static struct legacy_ctx net_ctx = {PTHREAD_MUTEX_INITIALIZER, 0, NULL};
static struct legacy_ctx coll_ctx = {PTHREAD_MUTEX_INITIALIZER, 0, NULL};

/* jaccl_coll_init is jaccl_init without a profiler, so both kinds of ctx come from here. */
static ncclResult_t legacy_init(struct legacy_ctx *l, ncclDebugLogger_t logger,
                                ncclProfilerCallback_t prof)
{
    ncclResult_t res = ncclSuccess;

    pthread_mutex_lock(&l->lock);
    if (!l->ready) {
        res = jaccl_init(&l->ctx, 0, NULL, logger, prof);
        l->ready = res == ncclSuccess;
    }
    pthread_mutex_unlock(&l->lock);
    return res;
}

/* The ctx for a ctx-less listen/connect; ncclInvalidUsage if init has not succeeded yet. */
static ncclResult_t legacy_get(struct legacy_ctx *l, const char *what, void **ctx)
{
    int ready;

    pthread_mutex_lock(&l->lock);
    ready = l->ready;
    *ctx = l->ctx;
    pthread_mutex_unlock(&l->lock);
    if (ready)
        return ncclSuccess;
    JWARN("%s called before a successful init", what);
    return ncclInvalidUsage;
}

/* NCCL reads *request even after an error on some paths; never leave it undefined. */
static ncclResult_t reject(void **request, ncclResult_t res)
{
    if (request)
        *request = NULL;
    return res;
}

/* ---- ncclNet ---- */

ncclResult_t jaccl_v10_init(ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction)
{
    return legacy_init(&net_ctx, logFunction, profFunction);
}

ncclResult_t jaccl_v8_init(ncclDebugLogger_t logFunction)
{
    return legacy_init(&net_ctx, logFunction, NULL);
}

/* v9 and v10 properties are the v11 layout without maxMultiRequestSize; a whole v11 struct
 * must not be written into the caller's shorter one, hence the copy. */
ncclResult_t jaccl_v9_get_properties(int dev, ncclNetProperties_v9_t *props)
{
    ncclNetProperties_v11_t p;
    ncclResult_t res = jaccl_get_properties(dev, &p);

    if (res != ncclSuccess)
        return res;
    props->name = p.name;
    props->pciPath = p.pciPath;
    props->guid = p.guid;
    props->ptrSupport = p.ptrSupport;
    props->regIsGlobal = p.regIsGlobal;
    props->forceFlush = p.forceFlush;
    props->speed = p.speed;
    props->port = p.port;
    props->latency = p.latency;
    props->maxComms = p.maxComms;
    props->maxRecvs = p.maxRecvs;
    props->netDeviceType = p.netDeviceType;
    props->netDeviceVersion = p.netDeviceVersion;
    props->vProps = p.vProps;
    props->maxP2pBytes = p.maxP2pBytes;
    props->maxCollBytes = p.maxCollBytes;
    return ncclSuccess;
}

/* v8 has no forceFlush, vProps or size limits: NCCL's own v8 adapter supplies the limits. */
ncclResult_t jaccl_v8_get_properties(int dev, ncclNetProperties_v8_t *props)
{
    ncclNetProperties_v11_t p;
    ncclResult_t res = jaccl_get_properties(dev, &p);

    if (res != ncclSuccess)
        return res;
    props->name = p.name;
    props->pciPath = p.pciPath;
    props->guid = p.guid;
    props->ptrSupport = p.ptrSupport;
    props->regIsGlobal = p.regIsGlobal;
    props->speed = p.speed;
    props->port = p.port;
    props->latency = p.latency;
    props->maxComms = p.maxComms;
    props->maxRecvs = p.maxRecvs;
    props->netDeviceType = p.netDeviceType;
    props->netDeviceVersion = p.netDeviceVersion;
    return ncclSuccess;
}

ncclResult_t jaccl_v8_listen(int dev, void *handle, void **listenComm)
{
    void *ctx;
    ncclResult_t res = legacy_get(&net_ctx, "listen", &ctx);

    if (res != ncclSuccess)
        return reject(listenComm, res);
    return jaccl_listen(ctx, dev, handle, listenComm);
}

/* v10 passes trafficClass per connection (v11 moved it to init): it applies to this connect's
 * comm only. The accepting side has no config in v10, so it follows NCCL_JACCL_TC alone. */
ncclResult_t jaccl_v10_connect(int dev, ncclNetCommConfig_v10_t *config, void *handle,
                               void **sendComm, ncclNetDeviceHandle_v10_t **sendDevComm)
{
    void *ctx;
    ncclResult_t res = legacy_get(&net_ctx, "connect", &ctx);

    if (res != ncclSuccess)
        return reject(sendComm, res);
    return jaccl_connect_tclass(ctx, config ? config->trafficClass : -1, dev, handle, sendComm,
                                sendDevComm);
}

ncclResult_t jaccl_v8_connect(int dev, void *handle, void **sendComm,
                              ncclNetDeviceHandle_v8_t **sendDevComm)
{
    void *ctx;
    ncclResult_t res = legacy_get(&net_ctx, "connect", &ctx);

    if (res != ncclSuccess)
        return reject(sendComm, res);
    return jaccl_connect(ctx, dev, handle, sendComm, sendDevComm);
}

ncclResult_t jaccl_v9_isend(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                            void **request)
{
    return jaccl_isend(sendComm, data, size, tag, mhandle, NULL, request);
}

ncclResult_t jaccl_v9_irecv(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                            void **mhandles, void **request)
{
    return jaccl_irecv(recvComm, n, data, sizes, tags, mhandles, NULL, request);
}

ncclResult_t jaccl_v8_isend(void *sendComm, void *data, int size, int tag, void *mhandle,
                            void **request)
{
    if (size < 0) {
        JWARN("isend: negative size %d", size);
        return reject(request, ncclInvalidArgument);
    }
    return jaccl_isend(sendComm, data, (size_t)size, tag, mhandle, NULL, request);
}

/* The core takes exactly one receive (maxRecvs = 1), so only one size is widened; it lives on
 * this stack frame only: jaccl_irecv copies what it keeps. */
ncclResult_t jaccl_v8_irecv(void *recvComm, int n, void **data, int *sizes, int *tags,
                            void **mhandles, void **request)
{
    if (n != 1) {
        JWARN("irecv: %d buffers requested; jaccl reports maxRecvs = 1", n);
        return reject(request, ncclInvalidArgument);
    }
    if (sizes && sizes[0] < 0) {
        JWARN("irecv: negative size %d", sizes[0]);
        return reject(request, ncclInvalidArgument);
    }
    size_t wide = sizes ? (size_t)sizes[0] : 0;
    return jaccl_irecv(recvComm, 1, data, sizes ? &wide : NULL, tags, mhandles, NULL, request);
}

/* ---- ncclCollNet ---- */

ncclResult_t jaccl_coll_v8_init(ncclDebugLogger_t logFunction)
{
    return legacy_init(&coll_ctx, logFunction, NULL);
}

ncclResult_t jaccl_coll_v8_listen(int dev, void *handle, void **listenComm)
{
    void *ctx;
    ncclResult_t res = legacy_get(&coll_ctx, "collnet listen", &ctx);

    if (res != ncclSuccess)
        return reject(listenComm, res);
    return jaccl_coll_listen(ctx, dev, handle, listenComm);
}

ncclResult_t jaccl_coll_v8_iallreduce(void *collComm, void *sendData, void *recvData, int count,
                                      ncclDataType_t dataType, ncclRedOp_t redOp, void *sendMhandle,
                                      void *recvMhandle, void **request)
{
    if (count < 0) {
        JWARN("iallreduce: negative count %d", count);
        return reject(request, ncclInvalidArgument);
    }
    return jaccl_coll_iallreduce(collComm, sendData, recvData, (size_t)count, dataType, redOp,
                                 sendMhandle, recvMhandle, request);
}

/* NCCL always passes exactly one part; more would need an SGE array, which nothing sends. */
static ncclResult_t sge_from_v8(const char *op, int n, const ncclNetSGE_v8_t *in,
                                ncclNetSGE_v11_t *out)
{
    if (n != 1 || in == NULL) {
        JWARN("%s: %d parts given, only 1 is supported", op, n);
        return ncclInvalidArgument;
    }
    out->mhandle = in->mhandle;
    out->address = in->address;
    out->size = in->size;
    return ncclSuccess;
}

ncclResult_t jaccl_coll_v8_iallgather(void *collComm, void *sendData, int nRecvParts,
                                      ncclNetSGE_v8_t *recvParts, size_t bytesPerRank,
                                      size_t windowOffset, size_t windowBytes, void *sendMhandle,
                                      void **request)
{
    ncclNetSGE_v11_t part;
    ncclResult_t res = sge_from_v8("iallgather", nRecvParts, recvParts, &part);

    if (res != ncclSuccess)
        return reject(request, res);
    return jaccl_coll_iallgather(collComm, sendData, 1, &part, bytesPerRank, windowOffset,
                                 windowBytes, sendMhandle, request);
}

ncclResult_t jaccl_coll_v8_ireducescatter(void *collComm, int nSendParts,
                                          ncclNetSGE_v8_t *sendParts, void *recvData,
                                          size_t bytesPerRank, size_t windowOffset,
                                          size_t windowBytes, ncclDataType_t dataType,
                                          ncclRedOp_t redOp, void *recvMhandle, void **request)
{
    ncclNetSGE_v11_t part;
    ncclResult_t res = sge_from_v8("ireducescatter", nSendParts, sendParts, &part);

    if (res != ncclSuccess)
        return reject(request, res);
    return jaccl_coll_ireducescatter(collComm, 1, &part, recvData, bytesPerRank, windowOffset,
                                     windowBytes, dataType, redOp, recvMhandle, request);
}
